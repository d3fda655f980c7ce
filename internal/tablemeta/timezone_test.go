package tablemeta

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap/partition"
)

// A table's time zone round-trips through table.json, gives its
// TimeLayout the zone, and makes CheckKey and the layout agree on local
// dates; a document without one is UTC and encodes as before.
func TestTimeZoneRoundTrip(t *testing.T) {
	g := string(golden(t))
	zoned := strings.Replace(g, `"schema_id"`, `"time_zone": "Europe/Berlin",
  "schema_id"`, 1)
	tb, err := Decode([]byte(zoned))
	if err != nil {
		t.Fatal(err)
	}
	if tb.TimeZone != "Europe/Berlin" {
		t.Fatalf("TimeZone = %q", tb.TimeZone)
	}
	enc, err := Encode(tb)
	if err != nil {
		t.Fatal(err)
	}
	if string(enc) != zoned {
		t.Fatalf("re-encoded:\n%s\nwant\n%s", enc, zoned)
	}
	l := tb.TimeLayout()
	if l == nil || l.Zone != "Europe/Berlin" {
		t.Fatalf("TimeLayout = %+v", l)
	}
	iv, err := l.ParseInterval("2026-03-29T00:00:00+01:00/2026-03-30T00:00:00+02:00")
	if err != nil {
		t.Fatal(err)
	}
	k, err := l.Key(iv)
	if err != nil || k.String() != "dt=2026-03-29" {
		t.Fatalf("Key = %q, %v", k, err)
	}
	if err := tb.CheckKey(k.String()); err != nil {
		t.Fatal(err)
	}
	utc, err := Decode([]byte(g))
	if err != nil || utc.TimeZone != "" || utc.TimeLayout().Zone != "" {
		t.Fatalf("a document without time_zone: %+v, %v", utc, err)
	}
	if enc, _ := Encode(utc); strings.Contains(string(enc), "time_zone") {
		t.Fatal("a UTC table's document names a time zone")
	}
}

func TestTimeZoneInvalid(t *testing.T) {
	g := string(golden(t))
	for _, tc := range []struct{ zone, want string }{
		{`"Mars/Phobos"`, "unknown zone"},
		{`"UTC"`, "UTC is written as no time_zone"},
		{`"Local"`, "machine's own zone"},
		{`""`, ""}, // empty is UTC
	} {
		doc := strings.Replace(g, `"schema_id"`, `"time_zone": `+tc.zone+`, "schema_id"`, 1)
		_, err := Decode([]byte(doc))
		if tc.want == "" {
			if err != nil {
				t.Errorf("time_zone %s: %v", tc.zone, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "time_zone") {
			t.Errorf("time_zone %s: %v, want ErrInvalid naming %q", tc.zone, err, tc.want)
		}
	}
	// Hourly partitions in a zone with daylight saving time, and a zone
	// without time columns, are refused.
	tb, err := Decode(golden(t))
	if err != nil {
		t.Fatal(err)
	}
	hourly := tb.Clone()
	hourly.LastColumnID++
	hourly.PartitionColumns = append(hourly.PartitionColumns, PartitionColumn{ID: hourly.LastColumnID, Name: "hr", Type: IntType, Layout: "15"})
	if err := hourly.Validate(); err != nil {
		t.Fatal(err)
	}
	hourly.TimeZone = "Europe/Berlin"
	if err := hourly.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "daylight saving") {
		t.Fatalf("hourly in Berlin: %v", err)
	}
	hourly.TimeZone = "Asia/Kolkata"
	if err := hourly.Validate(); err != nil {
		t.Fatalf("hourly in Kolkata: %v", err)
	}
	free := tb.Clone()
	free.PartitionColumns[0] = PartitionColumn{ID: free.PartitionColumns[0].ID, Name: "region", Type: StringType}
	free.TimeZone = "Europe/Berlin"
	if err := free.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "time layout") {
		t.Fatalf("a zone on free-form partitions: %v", err)
	}
}

// InferPartitionColumns maps a key with a zoned layout, whose date is the
// local one (a UTC layout would refuse the interval).
func TestInferPartitionColumnsZoned(t *testing.T) {
	l := partition.Layout{Zone: "America/New_York"}
	cols, err := InferPartitionColumns("dt=2026-11-01", &l)
	if err != nil || len(cols) != 1 || cols[0].Layout != "2006-01-02" {
		t.Fatalf("%+v, %v", cols, err)
	}
}
