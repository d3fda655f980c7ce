package partition

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func mustInterval(t *testing.T, s string) Interval {
	t.Helper()
	iv, err := ParseInterval(s)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

func TestLayoutKey(t *testing.T) {
	tests := []struct {
		layout   Layout
		interval string
		key      string
	}{
		{Layout{}, "2026-11-29/P1D", "dt=2026-11-29"},
		{Layout{Grain: Day}, "2026-11-29/2026-11-30", "dt=2026-11-29"},
		{Layout{Grain: Hour}, "2026-11-29T13:00:00Z/PT1H", "dt=2026-11-29/hr=13"},
		{Layout{Grain: Hour}, "2026-11-29T00:00:00Z/PT1H", "dt=2026-11-29/hr=00"},
		{Layout{Grain: Hour}, "2026-11-29T14:00:00+01:00/PT1H", "dt=2026-11-29/hr=13"},
		{Layout{Grain: Hour}, "2026-11-30T05:30:00+05:30/PT1H", "dt=2026-11-30/hr=00"},
		{Layout{Grain: Month}, "2026-11-01/P1M", "month=2026-11"},
		{Layout{Grain: Month}, "2024-02-01/2024-03-01", "month=2024-02"},
		{Layout{Columns: []LayoutColumn{{"year", "2006"}, {"month", "01"}, {"day", "02"}}}, "2026-11-29/P1D", "year=2026/month=11/day=29"},
		{Layout{Grain: Day, Columns: []LayoutColumn{{"date", "20060102"}}}, "2026-11-29/P1D", "date=20261129"},
		{Layout{Columns: []LayoutColumn{{"ts", "2006-01-02T15:00"}}}, "2026-11-29T13:00:00Z/PT1H", "ts=2026-11-29T13%3A00"},
		{Layout{Columns: []LayoutColumn{{"d", "2006.002"}}}, "2026-11-29/P1D", "d=2026.333"},
		{Layout{Columns: []LayoutColumn{{"m", "Jan 2006"}}}, "2026-11-01/P1M", "m=Nov 2026"},
	}
	for _, tt := range tests {
		t.Run(tt.layout.String()+" "+tt.interval, func(t *testing.T) {
			iv := mustInterval(t, tt.interval)
			k, err := tt.layout.Key(iv)
			if err != nil {
				t.Fatal(err)
			}
			if k.String() != tt.key {
				t.Errorf("Key = %q, want %q", k, tt.key)
			}
			back, err := tt.layout.Interval(k)
			if err != nil || !back.Equal(iv) {
				t.Errorf("Interval(%q) = %v, %v; want %v", k, back, err, iv)
			}
			keys, err := tt.layout.Keys(iv)
			if err != nil || len(keys) != 1 || keys[0] != k {
				t.Errorf("Keys of one grain = %q, %v; want [%q]", keys, err, k)
			}
			// The layout's String parses back to an equivalent layout.
			l2, err := ParseLayout(tt.layout.String())
			if err != nil {
				t.Fatalf("ParseLayout(%q): %v", tt.layout.String(), err)
			}
			if k2, err := l2.Key(iv); err != nil || k2 != k {
				t.Errorf("ParseLayout(String()).Key = %q, %v; want %q", k2, err, k)
			}
		})
	}
}

func TestLayoutKeyUnaligned(t *testing.T) {
	tests := []struct {
		layout   Layout
		interval string
		problem  string
	}{
		{Layout{}, "2026-11-29/P2D", "spans 2 days"},
		{Layout{}, "2026-11-29T13:00:00Z/P1D", "start 2026-11-29T13:00:00Z of interval"},
		{Layout{}, "2026-11-29/PT1H", "end 2026-11-29T01:00:00Z of interval"},
		{Layout{}, "2026-11-29T14:00:00+01:00/P1D", "not on a day boundary"},
		{Layout{Grain: Hour}, "2026-11-29T13:30:00Z/PT1H", "not on an hour boundary"},
		{Layout{Grain: Hour}, "2026-11-29T13:00:00.5Z/PT1H", "not on an hour boundary"},
		{Layout{Grain: Hour}, "2026-11-29/P1D", "spans 24 hours"},
		{Layout{Grain: Month}, "2026-11-01/P1D", "not on a month boundary"},
		{Layout{Grain: Month}, "2026-11-02/P1M", "not on a month boundary"},
		{Layout{Grain: Month}, "2026-11-01/P2M", "spans 2 months"},
	}
	for _, tt := range tests {
		t.Run(tt.layout.String()+" "+tt.interval, func(t *testing.T) {
			k, err := tt.layout.Key(mustInterval(t, tt.interval))
			if !errors.Is(err, ErrUnaligned) {
				t.Fatalf("Key = %q, %v; want ErrUnaligned", k, err)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not mention %q", err, tt.problem)
			}
		})
	}
	// An empty or reversed interval built by hand.
	var l Layout
	start := utc(2026, 11, 29, 0, 0, 0, 0)
	for _, iv := range []Interval{{}, {start, start}, {start.AddDate(0, 0, 1), start}} {
		if _, err := l.Key(iv); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("Key(%v) = %v, want ErrInvalidInterval", iv, err)
		}
		if _, err := l.Keys(iv); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("Keys(%v) = %v, want ErrInvalidInterval", iv, err)
		}
	}
	// A non-UTC interval built by hand is converted.
	cet := time.FixedZone("CET", 3600)
	k, err := Layout{Grain: Hour}.Key(Interval{time.Date(2026, 11, 29, 14, 0, 0, 0, cet), time.Date(2026, 11, 29, 15, 0, 0, 0, cet)})
	if err != nil || k.String() != "dt=2026-11-29/hr=13" {
		t.Errorf("Key of a CET interval = %q, %v", k, err)
	}
}

func TestLayoutKeys(t *testing.T) {
	tests := []struct {
		layout   Layout
		interval string
		first    string
		last     string
		n        int
	}{
		{Layout{}, "2026-11-29/2026-12-02", "dt=2026-11-29", "dt=2026-12-01", 3},
		{Layout{}, "2024-01-01/2025-01-01", "dt=2024-01-01", "dt=2024-12-31", 366},
		{Layout{Grain: Hour}, "2026-11-29/P2D", "dt=2026-11-29/hr=00", "dt=2026-11-30/hr=23", 48},
		{Layout{Grain: Hour}, "2026-11-29T22:00:00Z/PT3H", "dt=2026-11-29/hr=22", "dt=2026-11-30/hr=00", 3},
		{Layout{Grain: Month}, "2025-11-01/2027-02-01", "month=2025-11", "month=2027-01", 15},
	}
	for _, tt := range tests {
		t.Run(tt.layout.String()+" "+tt.interval, func(t *testing.T) {
			iv := mustInterval(t, tt.interval)
			keys, err := tt.layout.Keys(iv)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != tt.n || keys[0].String() != tt.first || keys[len(keys)-1].String() != tt.last {
				t.Fatalf("Keys = %d keys %q..%q, want %d keys %q..%q", len(keys), keys[0], keys[len(keys)-1], tt.n, tt.first, tt.last)
			}
			// The partitions tile the interval without gaps or overlaps.
			at := iv.Start
			seen := map[Key]bool{}
			for _, k := range keys {
				p, err := tt.layout.Interval(k)
				if err != nil {
					t.Fatal(err)
				}
				if !p.Start.Equal(at) {
					t.Fatalf("partition %q starts at %v, want %v", k, p.Start, at)
				}
				if seen[k] {
					t.Fatalf("duplicate key %q", k)
				}
				seen[k] = true
				at = p.End
			}
			if !at.Equal(iv.End) {
				t.Errorf("partitions end at %v, want %v", at, iv.End)
			}
		})
	}
	if _, err := (Layout{}).Keys(mustInterval(t, "2026-11-29T13:00:00Z/P1D")); !errors.Is(err, ErrUnaligned) {
		t.Errorf("Keys of an unaligned range: %v, want ErrUnaligned", err)
	}
	if _, err := (Layout{Grain: Hour}).Keys(mustInterval(t, "0001-01-01/9999-01-01")); !errors.Is(err, ErrInvalidInterval) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("Keys of a huge range: %v, want a limit error", err)
	}
}

func TestLayoutInterval(t *testing.T) {
	hour := Layout{Grain: Hour}
	iv, err := hour.Interval(MustParse("dt=2026-11-29/hr=13"))
	if err != nil || !iv.Equal(mustInterval(t, "2026-11-29T13:00:00Z/PT1H")) {
		t.Errorf("Interval = %v, %v", iv, err)
	}
	bad := []struct {
		layout Layout
		key    string
	}{
		{hour, "dt=2026-11-29"},
		{hour, "dt=2026-11-29/hr=13/x=1"},
		{hour, "hr=13/dt=2026-11-29"},
		{hour, "dt=2026-11-29/hr=5"},
		{hour, "dt=2026-11-29/hr=24"},
		{hour, "dt=2026-11-29/hour=13"},
		{Layout{}, "dt=2026-02-30"},
		{Layout{}, "dt=2026-1-02"},
		{Layout{}, "dt=0000-01-01"},
		{Layout{}, "dt=yesterday"},
		{Layout{Grain: Month}, "month=2026-13"},
	}
	for _, b := range bad {
		if iv, err := b.layout.Interval(MustParse(b.key)); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%v.Interval(%q) = %v, %v; want ErrInvalidKey", b.layout, b.key, iv, err)
		}
	}
	if _, err := hour.Interval(Key{}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Interval(zero key) = %v", err)
	}
}

func TestParseLayout(t *testing.T) {
	valid := []struct {
		in    string
		grain Grain
		str   string
	}{
		{"day", Day, "dt=2006-01-02"},
		{"hour", Hour, "dt=2006-01-02/hr=15"},
		{"month", Month, "month=2006-01"},
		{"dt=2006-01-02", Day, ""},
		{"dt=2006-01-02/hr=15", Hour, ""},
		{"year=2006/month=01/day=02", Day, ""},
		{"year=2006/month=01/day=02/hour=15", Hour, ""},
		{"year=2006/month=01", Month, ""},
		{"dt=2006-01-02/hr=03PM", Hour, ""},
		{"dt=2006-01-02T15Z07:00", Hour, ""},
		{"dt=2006-01-02/wd=Mon", Day, ""},
	}
	for _, tt := range valid {
		l, err := ParseLayout(tt.in)
		if err != nil {
			t.Errorf("ParseLayout(%q): %v", tt.in, err)
			continue
		}
		n, err := l.Normalize()
		if err != nil || n.Grain != tt.grain {
			t.Errorf("ParseLayout(%q).Normalize() = %v, %v; want grain %v", tt.in, n.Grain, err, tt.grain)
		}
		want := tt.str
		if want == "" {
			want = tt.in
		}
		if l.String() != want {
			t.Errorf("ParseLayout(%q).String() = %q, want %q", tt.in, l.String(), want)
		}
	}
	invalid := []struct{ in, problem string }{
		{"", "empty"},
		{"week", "not name=format"},
		{"dt", "not name=format"},
		{"dt=", "empty format"},
		{"=2006", "column name"},
		{"DT=2006-01-02", "lowercase"},
		{"_dt=2006-01-02", "leading _"},
		{"_psw=2006-01-02", `column name "_psw": a leading _ is reserved, and "_psw" is a prefix of _pswap`},
		{"dt=2006-01-02/dt=15", "duplicate"},
		{"dt=2006-01-02/hr=15/", "not name=format"},
		{"dt=2006-01-02T15:04", "minutes or seconds"},
		{"dt=2006-01-02/s=05", "minutes or seconds"},
		{"dt=2006-01-02/ms=.000", "minutes or seconds"},
		{"dt=01-02", "must determine the year, month and day"},
		{"hr=15", "must determine the year, month, day and hour"},
		{"dt=2006-01-02/hr=03", "must determine"},
		{"dt=06-01-02", "must determine"},
		{"dt=Monday", "must determine"},
		{"dt=static", "must determine"},
		{"dt=2006-01-02.pswap-tmp", "no valid key"},
		{"dt=2006-01-02\t", "control character"},
		{"a=2006/b=01/c=02/d=15/e=x/f=y/g=z/h=w/i=v", "more than the limit"},
	}
	for _, tt := range invalid {
		l, err := ParseLayout(tt.in)
		if !errors.Is(err, ErrInvalidLayout) {
			t.Errorf("ParseLayout(%q) = %v, %v; want ErrInvalidLayout", tt.in, l, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("ParseLayout(%q) error %q does not mention %q", tt.in, err, tt.problem)
		}
	}
}

func TestLayoutGrainMismatch(t *testing.T) {
	for _, l := range []Layout{
		{Grain: Day, Columns: []LayoutColumn{{"dt", "2006-01-02"}, {"hr", "15"}}},
		{Grain: Hour, Columns: []LayoutColumn{{"dt", "2006-01-02"}}},
		{Grain: Month, Columns: []LayoutColumn{{"dt", "2006-01-02"}}},
		{Grain: 7},
		{Grain: -1, Columns: []LayoutColumn{{"dt", "2006-01-02"}}},
	} {
		if _, err := l.Key(mustInterval(t, "2026-11-01/P1D")); !errors.Is(err, ErrInvalidLayout) {
			t.Errorf("%+v.Key = %v, want ErrInvalidLayout", l, err)
		}
		if _, err := l.Keys(mustInterval(t, "2026-11-01/P1D")); !errors.Is(err, ErrInvalidLayout) {
			t.Errorf("%+v.Keys = %v, want ErrInvalidLayout", l, err)
		}
		if _, err := l.Interval(MustParse("dt=2026-11-01")); !errors.Is(err, ErrInvalidLayout) {
			t.Errorf("%+v.Interval = %v, want ErrInvalidLayout", l, err)
		}
		if _, err := l.MarshalText(); !errors.Is(err, ErrInvalidLayout) {
			t.Errorf("%+v.MarshalText = %v, want ErrInvalidLayout", l, err)
		}
	}
}

func TestLayoutJSON(t *testing.T) {
	type cfg struct {
		Layout Layout `json:"layout"`
	}
	b, err := json.Marshal(cfg{Layout{Grain: Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"layout":"dt=2006-01-02/hr=15"}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
	var c cfg
	if err := json.Unmarshal([]byte(`{"layout":"year=2006/month=01"}`), &c); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Layout.Normalize(); n.Grain != Month {
		t.Errorf("unmarshalled grain = %v", n.Grain)
	}
	if err := json.Unmarshal([]byte(`{"layout":"hr=15"}`), &c); !errors.Is(err, ErrInvalidLayout) {
		t.Errorf("Unmarshal of a bad layout: %v", err)
	}
}

func TestGrain(t *testing.T) {
	at := utc(2024, 2, 29, 13, 45, 6, 7)
	tests := []struct {
		g          Grain
		name       string
		trunc, add time.Time
	}{
		{Hour, "hour", utc(2024, 2, 29, 13, 0, 0, 0), utc(2024, 2, 29, 14, 0, 0, 0)},
		{Day, "day", utc(2024, 2, 29, 0, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0, 0)},
		{Month, "month", utc(2024, 2, 1, 0, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		if tt.g.String() != tt.name {
			t.Errorf("String() = %q, want %q", tt.g, tt.name)
		}
		if g, err := ParseGrain(tt.name); err != nil || g != tt.g {
			t.Errorf("ParseGrain(%q) = %v, %v", tt.name, g, err)
		}
		tr := tt.g.Truncate(at)
		if !tr.Equal(tt.trunc) {
			t.Errorf("%v.Truncate = %v, want %v", tt.g, tr, tt.trunc)
		}
		if got := tt.g.Add(tr, 1); !got.Equal(tt.add) {
			t.Errorf("%v.Add(1) = %v, want %v", tt.g, got, tt.add)
		}
		if got := tt.g.Add(tt.g.Add(tr, 5), -5); !got.Equal(tr) {
			t.Errorf("%v.Add(5) then Add(-5) = %v, want %v", tt.g, got, tr)
		}
	}
	if _, err := ParseGrain("week"); !errors.Is(err, ErrInvalidLayout) {
		t.Errorf("ParseGrain(week) = %v", err)
	}
	if s := Grain(0).String(); s != "Grain(0)" {
		t.Errorf("Grain(0).String() = %q", s)
	}
}

// An interval longer than a time.Duration holds (about 292 years) is still
// counted in full, and refused past MaxKeys.
func TestLayoutKeysCountsCenturies(t *testing.T) {
	iv, err := ParseInterval("2026-11-29/6026-12-01")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Layout{{}, {Grain: Hour}} {
		if ks, err := l.Keys(iv); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("%v: %d keys, %v; want ErrInvalidInterval", l.Grain, len(ks), err)
		}
	}
}
