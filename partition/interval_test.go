package partition

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func utc(y int, m time.Month, d, h, min, s, ns int) time.Time {
	return time.Date(y, m, d, h, min, s, ns, time.UTC)
}

func TestParseIntervalValid(t *testing.T) {
	tests := []struct {
		in         string
		start, end time.Time
		str        string // String(); "" means the input
	}{
		{"2026-11-29/2026-11-30", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 11, 30, 0, 0, 0, 0), ""},
		{"2026-11-29/2026-12-01", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0, 0), ""},
		{"2026-11-29T13:00:00Z/2026-11-29T14:00:00Z", utc(2026, 11, 29, 13, 0, 0, 0), utc(2026, 11, 29, 14, 0, 0, 0), ""},
		{"2026-11-29T13:00:00Z/PT1H", utc(2026, 11, 29, 13, 0, 0, 0), utc(2026, 11, 29, 14, 0, 0, 0), "2026-11-29T13:00:00Z/2026-11-29T14:00:00Z"},
		{"2026-11-29/P1D", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 11, 30, 0, 0, 0, 0), "2026-11-29/2026-11-30"},
		{"2026-11-29/P1W", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 12, 6, 0, 0, 0, 0), "2026-11-29/2026-12-06"},
		{"2026-11-01/P1M", utc(2026, 11, 1, 0, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0, 0), "2026-11-01/2026-12-01"},
		{"2026-01-01/P1Y", utc(2026, 1, 1, 0, 0, 0, 0), utc(2027, 1, 1, 0, 0, 0, 0), "2026-01-01/2027-01-01"},
		{"2026-11-29/P1DT12H30M15S", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 11, 30, 12, 30, 15, 0), "2026-11-29T00:00:00Z/2026-11-30T12:30:15Z"},
		{"2026-11-29/PT24H", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 11, 30, 0, 0, 0, 0), "2026-11-29/2026-11-30"},
		{"PT1H/2026-11-29T14:00:00Z", utc(2026, 11, 29, 13, 0, 0, 0), utc(2026, 11, 29, 14, 0, 0, 0), "2026-11-29T13:00:00Z/2026-11-29T14:00:00Z"},
		{"P1D/2026-11-30", utc(2026, 11, 29, 0, 0, 0, 0), utc(2026, 11, 30, 0, 0, 0, 0), "2026-11-29/2026-11-30"},
		// Offsets are converted to UTC.
		{"2026-11-29T14:00:00+01:00/2026-11-29T15:00:00+01:00", utc(2026, 11, 29, 13, 0, 0, 0), utc(2026, 11, 29, 14, 0, 0, 0), "2026-11-29T13:00:00Z/2026-11-29T14:00:00Z"},
		{"2026-11-29T08:00:00-05:00/PT1H", utc(2026, 11, 29, 13, 0, 0, 0), utc(2026, 11, 29, 14, 0, 0, 0), "2026-11-29T13:00:00Z/2026-11-29T14:00:00Z"},
		{"2026-11-30T01:00:00+01:00/P1D", utc(2026, 11, 30, 0, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0, 0), "2026-11-30/2026-12-01"},
		{"2026-11-29T13:00Z/PT30M", utc(2026, 11, 29, 13, 0, 0, 0), utc(2026, 11, 29, 13, 30, 0, 0), "2026-11-29T13:00:00Z/2026-11-29T13:30:00Z"},
		{"2026-11-29T13:00:00.25Z/PT1S", utc(2026, 11, 29, 13, 0, 0, 250e6), utc(2026, 11, 29, 13, 0, 1, 250e6), "2026-11-29T13:00:00.25Z/2026-11-29T13:00:01.25Z"},
		{"2024-02-29/P1Y", utc(2024, 2, 29, 0, 0, 0, 0), utc(2025, 3, 1, 0, 0, 0, 0), "2024-02-29/2025-03-01"},
		{"0001-01-01/9999-12-31", utc(1, 1, 1, 0, 0, 0, 0), utc(9999, 12, 31, 0, 0, 0, 0), ""},
		// A month (ISO 8601's reduced precision) is its first day.
		{"2026-11/2026-12", utc(2026, 11, 1, 0, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0, 0), "2026-11-01/2026-12-01"},
		{"2026-11/P1M", utc(2026, 11, 1, 0, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0, 0), "2026-11-01/2026-12-01"},
		{"2026-11-15/2027-01", utc(2026, 11, 15, 0, 0, 0, 0), utc(2027, 1, 1, 0, 0, 0, 0), "2026-11-15/2027-01-01"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			iv, err := ParseInterval(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !iv.Start.Equal(tt.start) || !iv.End.Equal(tt.end) {
				t.Errorf("got [%v, %v), want [%v, %v)", iv.Start, iv.End, tt.start, tt.end)
			}
			if iv.Start.Location() != time.UTC || iv.End.Location() != time.UTC {
				t.Errorf("not in UTC: %v %v", iv.Start.Location(), iv.End.Location())
			}
			want := tt.str
			if want == "" {
				want = tt.in
			}
			if got := iv.String(); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			back, err := ParseInterval(iv.String())
			if err != nil || back != iv {
				t.Errorf("ParseInterval(String()) = %v, %v; want %v", back, err, iv)
			}
			if iv.Duration() != tt.end.Sub(tt.start) {
				t.Errorf("Duration() = %v", iv.Duration())
			}
			if !iv.Contains(tt.start) || iv.Contains(tt.end) || iv.Contains(tt.start.Add(-1)) || !iv.Contains(tt.end.Add(-1)) {
				t.Error("Contains is not half-open [Start, End)")
			}
		})
	}
}

func TestParseIntervalInvalid(t *testing.T) {
	tests := []struct{ in, problem string }{
		{"", "want START/END"},
		{"2026-11-29", "want START/END"},
		{"2026-11-29/2026-11-30/2026-12-01", "more than one /"},
		{"2026-11-29/2026-11-29", "not after start"},
		{"2026-11-30/2026-11-29", "not after start"},
		{"2026-11-29T13:00:00/PT1H", "no UTC offset"},
		{"2026-11-29T13:00:00Z/2026-11-29T14:00:00", "no UTC offset"},
		{"2026-11-29T14:00:00+01:00/2026-11-29T13:00:00Z", "not after start"},
		{"P1D/PT1H", "both sides are durations"},
		{"2026-11-29/P", "no components"},
		{"2026-11-29/PT", "T without time components"},
		{"2026-11-29/P1H", "unknown unit"},
		{"2026-11-29/PT1D", "unknown unit"},
		{"2026-11-29/P1.5D", "fractions"},
		{"2026-11-29/P1D1M", "out of order"},
		{"2026-11-29/P1D1D", "out of order"},
		{"2026-11-29/PT1HT1M", "T appears twice"},
		{"2026-11-29/P1", "no unit"},
		{"2026-11-29/PD", "whole number"},
		{"2026-11-29/P-1D", "whole number"},
		{"2026-11-29/P0D", "not after start"},
		{"2026-11-29/P123456789D", "too large"},
		{"2026-11-29/PT99999999H", "100 years"},
		{"2026-11-29/P99999999Y", "outside the years"},
		{"P99999999Y/2026-11-29", "outside the years"},
		{"2026-13-01/P1D", "bad date"},
		{"2026-13/P1M", "bad month"},
		{"2026-1/P1M", "bad time"},
		{"2026-02-30/P1D", "bad date"},
		{"26-11-29/P1D", "bad time"},
		{"2026-11-29 13:00:00Z/PT1H", "bad time"},
		{"2026-11-29T25:00:00Z/PT1H", "bad time"},
		{"2026-11-29T13Z/PT1H", "bad time"},
		{"2026-11-29T13:00:00+1/PT1H", "bad time"},
		{"2026-11-29/p1d", "bad time"},
		{"9999-12-31/P1D", "outside the years"},
		{"9999-12-31T00:00:00Z/10000-01-01T00:00:00Z", "bad time"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			iv, err := ParseInterval(tt.in)
			if err == nil {
				t.Fatalf("ParseInterval(%q) = %v, want error", tt.in, iv)
			}
			if !errors.Is(err, ErrInvalidInterval) {
				t.Errorf("error %v does not wrap ErrInvalidInterval", err)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not mention %q", err, tt.problem)
			}
			if q := strings.TrimSuffix(strings.TrimPrefix(quote(tt.in), `"`), `"`); !strings.Contains(err.Error(), q) {
				t.Errorf("error %q does not quote the input", err)
			}
			if !iv.IsZero() {
				t.Errorf("non-zero interval %v with an error", iv)
			}
		})
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestNewInterval(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	iv, err := NewInterval(time.Date(2026, 11, 29, 14, 0, 0, 0, cet), time.Date(2026, 11, 29, 15, 0, 0, 0, cet))
	if err != nil {
		t.Fatal(err)
	}
	if iv.Start != utc(2026, 11, 29, 13, 0, 0, 0) || iv.End != utc(2026, 11, 29, 14, 0, 0, 0) {
		t.Errorf("NewInterval = %v, not converted to UTC", iv)
	}
	for _, c := range [][2]time.Time{
		{utc(2026, 1, 2, 0, 0, 0, 0), utc(2026, 1, 1, 0, 0, 0, 0)},
		{utc(2026, 1, 1, 0, 0, 0, 0), utc(2026, 1, 1, 0, 0, 0, 0)},
		{time.Time{}.Add(-time.Hour), utc(2026, 1, 1, 0, 0, 0, 0)},
		{utc(2026, 1, 1, 0, 0, 0, 0), utc(10000, 1, 1, 0, 0, 0, 0)},
	} {
		if iv, err := NewInterval(c[0], c[1]); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("NewInterval(%v, %v) = %v, %v; want ErrInvalidInterval", c[0], c[1], iv, err)
		}
	}
}

func TestIntervalJSON(t *testing.T) {
	iv, _ := ParseInterval("2026-11-29T13:00:00Z/PT1H")
	b, err := json.Marshal(map[string]Interval{"iv": iv})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"iv":"2026-11-29T13:00:00Z/2026-11-29T14:00:00Z"}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
	var m map[string]Interval
	if err := json.Unmarshal(b, &m); err != nil || m["iv"] != iv {
		t.Errorf("Unmarshal = %v, %v", m, err)
	}
	if err := json.Unmarshal([]byte(`{"iv":"2026-11-29"}`), &m); !errors.Is(err, ErrInvalidInterval) {
		t.Errorf("Unmarshal of a bad interval: %v", err)
	}
}
