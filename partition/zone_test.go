package partition

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var berlinDay = Layout{Zone: "Europe/Berlin"}

// The intervals Airflow and Dagster render for a local day, in each form
// they render it, map to the local date.
func TestZoneDayKeys(t *testing.T) {
	for _, tc := range []struct {
		interval string
		want     string
		hours    int
	}{
		// The Airflow interval: data_interval_start in the DAG's zone, /P1D.
		{"2026-12-06T00:00:00+01:00/P1D", "dt=2026-12-06", 24},
		// Dagster's partition_time_window (start and end in the zone).
		{"2026-12-06T00:00:00+01:00/2026-12-07T00:00:00+01:00", "dt=2026-12-06", 24},
		// Airflow's data_interval_start/end as stored, in UTC.
		{"2026-12-05T23:00:00+00:00/2026-12-06T23:00:00+00:00", "dt=2026-12-06", 24},
		{"2026-12-05T23:00:00Z/P1D", "dt=2026-12-06", 24},
		// A date alone is the local day.
		{"2026-12-06/P1D", "dt=2026-12-06", 24},
		{"2026-12-06/2026-12-07", "dt=2026-12-06", 24},
		// DST begins: a day of 23 hours, in every rendering.
		{"2026-03-29T00:00:00+01:00/P1D", "dt=2026-03-29", 23},
		{"2026-03-29T00:00:00+01:00/2026-03-30T00:00:00+02:00", "dt=2026-03-29", 23},
		{"2026-03-28T23:00:00+00:00/2026-03-29T22:00:00+00:00", "dt=2026-03-29", 23},
		{"2026-03-29T00:00:00+01:00/PT23H", "dt=2026-03-29", 23},
		{"P1D/2026-03-30T00:00:00+02:00", "dt=2026-03-29", 23},
		{"2026-03-29/P1D", "dt=2026-03-29", 23},
		// DST ends: 25 hours.
		{"2026-10-25T00:00:00+02:00/P1D", "dt=2026-10-25", 25},
		{"2026-10-25T00:00:00+02:00/2026-10-26T00:00:00+01:00", "dt=2026-10-25", 25},
		{"2026-10-24T22:00:00Z/2026-10-25T23:00:00Z", "dt=2026-10-25", 25},
		{"2026-10-25/2026-10-26", "dt=2026-10-25", 25},
	} {
		iv, err := berlinDay.ParseInterval(tc.interval)
		if err != nil {
			t.Errorf("ParseInterval(%q): %v", tc.interval, err)
			continue
		}
		if got := iv.Duration(); got != time.Duration(tc.hours)*time.Hour {
			t.Errorf("%q lasts %v, want %dh", tc.interval, got, tc.hours)
		}
		k, err := berlinDay.Key(iv)
		if err != nil || k.String() != tc.want {
			t.Errorf("Key(%q) = %q, %v; want %q", tc.interval, k, err, tc.want)
			continue
		}
		back, err := berlinDay.Interval(k)
		if err != nil || !back.Equal(iv) {
			t.Errorf("Interval(%q) = %v, %v; want %v", k, back, err, iv)
		}
	}
}

func TestZoneDayKeysAcrossDST(t *testing.T) {
	iv, err := berlinDay.ParseInterval("2026-03-28/2026-03-31")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := berlinDay.Keys(iv)
	if err != nil {
		t.Fatal(err)
	}
	if got := keyStrings(ks); got != "dt=2026-03-28 dt=2026-03-29 dt=2026-03-30" {
		t.Fatalf("Keys = %s", got)
	}
	if iv.Duration() != 71*time.Hour {
		t.Fatalf("three local days around the change last %v, want 71h", iv.Duration())
	}
	// The local day as Dagster renders it for a monthly partition.
	mon := Layout{Grain: Month, Zone: "Europe/Berlin"}
	miv, err := mon.ParseInterval("2026-10-01T00:00:00+02:00/P1M")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := mon.Key(miv); err != nil || k.String() != "month=2026-10" || miv.Duration() != (31*24+1)*time.Hour {
		t.Fatalf("October in Berlin: %q, %v, %v long", k, err, miv.Duration())
	}
}

// A UTC layout refuses a local-midnight interval and names the remedy; a
// zoned layout refuses a UTC-midnight one and names its zone.
func TestZoneUnalignedMessages(t *testing.T) {
	iv, err := ParseInterval("2026-12-06T00:00:00+01:00/P1D")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Layout{}.Key(iv)
	if !errors.Is(err, ErrUnaligned) || !strings.Contains(err.Error(), "--time-zone") || !strings.Contains(err.Error(), "in UTC") {
		t.Fatalf("UTC layout, local interval: %v", err)
	}
	iv, err = ParseInterval("2026-12-06/P1D")
	if err != nil {
		t.Fatal(err)
	}
	_, err = berlinDay.Key(iv)
	if !errors.Is(err, ErrUnaligned) || !strings.Contains(err.Error(), "in Europe/Berlin") || strings.Contains(err.Error(), "--time-zone") {
		t.Fatalf("Berlin layout, UTC interval: %v", err)
	}
	// An hour is not a day in any zone, and gets no zone hint.
	iv, _ = ParseInterval("2026-12-06T13:00:00Z/PT1H")
	if _, err = (Layout{}).Key(iv); err == nil || strings.Contains(err.Error(), "--time-zone") {
		t.Fatalf("UTC layout, an hour: %v", err)
	}
}

// Hourly layouts: refused in a zone with DST (a local hour repeats: its
// two partitions would share a key), local hours in a zone of fixed offset.
func TestZoneHours(t *testing.T) {
	for _, z := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe"} {
		_, err := Layout{Grain: Hour, Zone: z}.Normalize()
		if !errors.Is(err, ErrInvalidLayout) || !strings.Contains(err.Error(), "daylight saving") {
			t.Errorf("hourly in %s: %v", z, err)
		}
	}
	kol := Layout{Grain: Hour, Zone: "Asia/Kolkata"}
	iv, err := kol.ParseInterval("2026-12-06T10:00:00+05:30/PT1H")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := kol.Key(iv); err != nil || k.String() != "dt=2026-12-06/hr=10" {
		t.Fatalf("Kolkata 10:00: %q, %v", k, err)
	}
	iv, _ = ParseInterval("2026-12-06T10:00:00Z/PT1H")
	if _, err := kol.Key(iv); !errors.Is(err, ErrUnaligned) {
		t.Fatalf("a UTC hour is not a Kolkata hour: %v", err)
	}
	day, _ := kol.ParseInterval("2026-12-06/P1D")
	ks, err := kol.Keys(day)
	if err != nil || len(ks) != 24 || ks[0].String() != "dt=2026-12-06/hr=00" || ks[23].String() != "dt=2026-12-06/hr=23" {
		t.Fatalf("a Kolkata day in hours: %s, %v", keyStrings(ks), err)
	}
}

func TestParseZone(t *testing.T) {
	for _, ok := range []struct{ in, want string }{
		{"", ""}, {"UTC", ""}, {"Etc/UTC", ""}, {"Europe/Berlin", "Europe/Berlin"}, {"America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"},
		{"Etc/GMT-5", "Etc/GMT-5"},
	} {
		if got, err := ParseZone(ok.in); err != nil || got != ok.want {
			t.Errorf("ParseZone(%q) = %q, %v; want %q", ok.in, got, err, ok.want)
		}
	}
	for _, bad := range []string{"Local", "Mars/Phobos", "../../etc/passwd", "/etc/localtime", "Europe/", "Europe//Berlin", "Europe/Berlin\x00", "CET CEST", strings.Repeat("A", 100)} {
		if _, err := ParseZone(bad); !errors.Is(err, ErrInvalidLayout) {
			t.Errorf("ParseZone(%q): %v, want ErrInvalidLayout", bad, err)
		}
	}
	if _, err := (Layout{Zone: "Mars/Phobos"}).Normalize(); !errors.Is(err, ErrInvalidLayout) {
		t.Errorf("a layout in an unknown zone: %v", err)
	}
	if n, err := (Layout{Zone: "UTC"}).Normalize(); err != nil || n.Zone != "" {
		t.Errorf("UTC normalizes to no zone: %+v, %v", n, err)
	}
}

// Every daily key of two years in zones with odd transitions (DST at
// midnight, a skipped day, half-hour DST, a change of standard time) maps
// to one interval and back, the intervals tile the time without gaps or
// overlaps, and their dates are strictly increasing.
func TestZoneDaysTile(t *testing.T) {
	for _, z := range []string{"Europe/Berlin", "America/Santiago", "America/Havana", "Pacific/Apia", "Australia/Lord_Howe", "Asia/Kathmandu", "Europe/Moscow", "America/Sao_Paulo"} {
		for _, g := range []Grain{Day, Month} {
			l := Layout{Grain: g, Zone: z}
			iv, err := l.ParseInterval("2025-01-01/2027-01-01")
			if err != nil {
				t.Fatal(err)
			}
			ks, err := l.Keys(iv)
			if err != nil {
				t.Fatalf("%s %v: %v", z, g, err)
			}
			next := iv.Start
			for i, k := range ks {
				kiv, err := l.Interval(k)
				if err != nil {
					t.Fatalf("%s: Interval(%s): %v", z, k, err)
				}
				if !kiv.Start.Equal(next) {
					t.Fatalf("%s: %s starts at %v, the previous partition ended at %v", z, k, kiv.Start, next)
				}
				if d := kiv.Duration(); d < 20*time.Hour || g == Day && d > 28*time.Hour {
					t.Fatalf("%s: %s lasts %v", z, k, d)
				}
				if k2, err := l.Key(kiv); err != nil || k2 != k {
					t.Fatalf("%s: Key(Interval(%s)) = %s, %v", z, k, k2, err)
				}
				if i > 0 && ks[i-1].String() >= k.String() {
					t.Fatalf("%s: %s after %s", z, k, ks[i-1])
				}
				next = kiv.End
			}
			if !next.Equal(iv.End) {
				t.Fatalf("%s: the partitions end at %v, the interval at %v", z, next, iv.End)
			}
		}
	}
	// Samoa skipped 2011-12-30: no key, and its key is refused.
	apia := Layout{Zone: "Pacific/Apia"}
	iv, _ := apia.ParseInterval("2011-12-29/2012-01-01")
	ks, _ := apia.Keys(iv)
	if got := keyStrings(ks); got != "dt=2011-12-29 dt=2011-12-31" {
		t.Fatalf("Apia's end of 2011: %s", got)
	}
	if _, err := apia.Interval(MustParse("dt=2011-12-30")); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Apia's skipped day: %v", err)
	}
}

func keyStrings(ks []Key) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, " ")
}

func FuzzParseIntervalInZone(f *testing.F) {
	for _, s := range [][2]string{
		{"2026-12-06T00:00:00+01:00/P1D", "Europe/Berlin"},
		{"2026-03-29/P1D", "Europe/Berlin"},
		{"P1D/2026-10-26T00:00:00+01:00", "Europe/Berlin"},
		{"2026-09-06/P1W", "America/Santiago"},
		{"2011-12-29/P3D", "Pacific/Apia"},
		{"2026-03/P1M", "Australia/Lord_Howe"},
		{"0001-01-01/P1D", "Asia/Tokyo"},
		{"9999-12-31/P1D", "Pacific/Kiritimati"},
		{"2026-12-06T10:00:00+05:30/PT1H", "Asia/Kolkata"},
		{"2026-12-06/P1D", "Local"},
		{"2026-12-06/P1D", "../x"},
	} {
		f.Add(s[0], s[1], uint8(Day))
	}
	f.Fuzz(func(t *testing.T, s, zone string, grain uint8) {
		z, err := ParseZone(zone)
		if err != nil {
			if !errors.Is(err, ErrInvalidLayout) {
				t.Fatalf("ParseZone(%q): %v does not wrap ErrInvalidLayout", zone, err)
			}
			return
		}
		if z2, err := ParseZone(z); err != nil || z2 != z {
			t.Fatalf("ParseZone(ParseZone(%q)) = %q, %v", zone, z2, err)
		}
		l, err := Layout{Grain: Grain(grain%3 + 1), Zone: z}.Normalize()
		if err != nil {
			if !errors.Is(err, ErrInvalidLayout) {
				t.Fatalf("Normalize in %q: %v", z, err)
			}
			return
		}
		iv, err := l.ParseInterval(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidInterval) {
				t.Fatalf("ParseInterval(%q) in %q: %v does not wrap ErrInvalidInterval", s, z, err)
			}
			return
		}
		if iv.Start.Location() != time.UTC || !iv.End.After(iv.Start) {
			t.Fatalf("ParseInterval(%q) in %q = %v", s, z, iv)
		}
		ks, err := l.Keys(iv)
		if err != nil {
			if !errors.Is(err, ErrUnaligned) && !errors.Is(err, ErrInvalidInterval) && !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("Keys(%v) in %q: %v", iv, z, err)
			}
			return
		}
		next := iv.Start
		for _, k := range ks {
			kiv, err := l.Interval(k)
			if err != nil || !kiv.Start.Equal(next) {
				t.Fatalf("%q in %q: Interval(%s) = %v, %v; want it to start at %v", s, z, k, kiv, err, next)
			}
			next = kiv.End
		}
		if !next.Equal(iv.End) {
			t.Fatalf("%q in %q: keys %v end at %v, not %v", s, z, ks, next, iv.End)
		}
		if len(ks) == 1 {
			if k, err := l.Key(iv); err != nil || k != ks[0] {
				t.Fatalf("%q in %q: Key = %s, %v; Keys = %v", s, z, k, err, ks)
			}
		}
	})
}

// Where DST begins at midnight (America/Santiago, 2025-09-07 00:00 is
// 01:00), the day begins when the clocks jump, and a date in an interval
// means that instant.
func TestZoneMidnightGap(t *testing.T) {
	l := Layout{Zone: "America/Santiago"}
	iv, err := l.ParseInterval("2025-09-07/2025-09-08")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2025, 9, 7, 4, 0, 0, 0, time.UTC); !iv.Start.Equal(want) || iv.Duration() != 23*time.Hour {
		t.Fatalf("2025-09-07 in Santiago = %v, want from %v for 23h", iv, want)
	}
	if k, err := l.Key(iv); err != nil || k.String() != "dt=2025-09-07" {
		t.Fatalf("Key = %q, %v", k, err)
	}
}
