package tablemeta

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/partition"
)

func tableFor(t *testing.T, key string, layout *partition.Layout) *Table {
	t.Helper()
	cols, err := InferPartitionColumns(key, layout)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := New(cols, arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestInferPartitionColumns(t *testing.T) {
	for key, want := range map[string]string{
		"dt=2026-11-29":             "dt=2006-01-02:date",
		"dt=2026-11-29/hr=13":       "dt=2006-01-02:date/hr=15:int",
		"month=2026-11":             "month=2006-01:string",
		"year=2026/month=11/day=29": "year=2006:int/month=01:int/day=02:int",
		"dt=20261127":               "dt=20060102:date",
		"region=eu/dt=2026-11-29":   "region=*:string/dt=2006-01-02:date",
		"hr=99":                     "hr=*:string",
		"dt=2026-11-29T13":          "dt=2006-01-02T15:string",
		"ds=not-a-date":             "ds=*:string",
	} {
		tb := tableFor(t, key, nil)
		var got []string
		for _, c := range tb.PartitionColumns {
			l := c.Layout
			if l == "" {
				l = "*"
			}
			got = append(got, c.Name+"="+l+":"+c.Type.String())
		}
		if g := strings.Join(got, "/"); g != want {
			t.Errorf("%s: %s, want %s", key, g, want)
		}
		if err := tb.CheckKey(key); err != nil {
			t.Errorf("%s does not fit the table made from it: %v", key, err)
		}
	}
}

func TestInferWithLayout(t *testing.T) {
	l, err := partition.ParseLayout("y=2006/m=01/d=02")
	if err != nil {
		t.Fatal(err)
	}
	tb := tableFor(t, "y=2026/m=11/d=29", &l)
	if tb.PartitionLayout() != "y=2006/m=01/d=02" {
		t.Fatal(tb.PartitionLayout())
	}
	if _, err := InferPartitionColumns("y=2026/m=13/d=29", &l); !errors.Is(err, ErrPartitionMismatch) {
		t.Fatalf("a key outside its own layout: %v", err)
	}
}

func TestCheckKey(t *testing.T) {
	daily := tableFor(t, "dt=2026-11-29", nil)
	ymd := tableFor(t, "year=2026/month=11/day=29", nil)
	free := tableFor(t, "region=eu", nil)
	for _, c := range []struct {
		tb       *Table
		key, say string
	}{
		{daily, "dt=2026-13-45", `dt value "2026-13-45" does not fit the layout 2006-01-02 (month out of range)`},
		{daily, "dt=20261127", `dt value "20261127" does not fit the layout 2006-01-02`},
		{daily, "dt=2026-11-27/hr=13", "2 columns (dt, hr), the table has 1 (dt)"},
		{daily, "day=2026-11-27", "column day is not a partition column"},
		{daily, "dt=2026-2-03", "does not fit"},
		{ymd, "year=2026/month=02/day=31", "not a valid time under the layout"},
		{ymd, "month=11/year=2026/day=29", "column 1 is month, the table's column 1 is year"},
		{ymd, "year=2026/month=1/day=29", `month value "1" does not fit the layout 01`},
	} {
		err := c.tb.CheckKey(c.key)
		if !errors.Is(err, ErrPartitionMismatch) {
			t.Errorf("%s: %v", c.key, err)
			continue
		}
		if !strings.Contains(err.Error(), c.say) || !strings.Contains(err.Error(), "hint: the table's partitions are ") {
			t.Errorf("%s: %q does not say %q with a hint", c.key, err, c.say)
		}
	}
	if err := daily.CheckKey("dt=2026-11-27"); err != nil {
		t.Fatal(err)
	}
	if err := free.CheckKey("region=us-east"); err != nil {
		t.Fatal(err)
	}
	if err := daily.CheckKey("dt=../x"); !errors.Is(err, partition.ErrInvalidKey) {
		t.Fatalf("a malformed key: %v", err)
	}
	if got := daily.exampleKey(); got != "dt=2026-11-29" {
		t.Fatal(got)
	}
}

// Values that fit their layouts one by one but are no time together give
// free-form columns: the table accepts the key it was inferred from.
func TestInferImpossibleDateIsFreeForm(t *testing.T) {
	for key, timed := range map[string]bool{
		"year=2026/month=02/day=28": true,
		"year=2026/month=02/day=31": false,
		"y=0000/m=01/d=01/day=01":   false,
	} {
		cols, err := InferPartitionColumns(key, nil)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if got := cols[0].Layout != ""; got != timed {
			t.Errorf("%s: layouts %+v, want timed %v", key, cols, timed)
		}
		tb := &Table{PartitionColumns: cols}
		if err := tb.CheckKey(key); err != nil {
			t.Errorf("%s: the table refuses its own key: %v", key, err)
		}
	}
}
