package partition

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zones resolve the same on every machine, with or without a zoneinfo database
)

// MaxZoneLen bounds a time zone name.
const MaxZoneLen = 64

// zones caches loaded locations by name: a layout resolves its zone on
// every key it maps.
var zones sync.Map // string -> zoneEntry

type zoneEntry struct {
	loc *time.Location
	err error
}

// ParseZone checks an IANA time zone name ("Europe/Berlin",
// "America/New_York") and returns its canonical form for a Layout's Zone:
// "" for UTC (given as "", "UTC", "Etc/UTC" or "Z"). "Local" and names of
// the machine's own files are refused: a table's partitions must not
// depend on where pswap runs. Errors wrap ErrInvalidLayout.
func ParseZone(name string) (string, error) {
	if _, err := loadZone(name); err != nil {
		return "", err
	}
	switch name {
	case "", "UTC", "Etc/UTC", "Z":
		return "", nil
	}
	return name, nil
}

// loadZone returns the location of a zone name (nil for UTC).
func loadZone(name string) (*time.Location, error) {
	switch name {
	case "", "UTC", "Etc/UTC", "Z":
		return nil, nil
	}
	if e, ok := zones.Load(name); ok {
		return e.(zoneEntry).loc, e.(zoneEntry).err
	}
	loc, err := loadZoneUncached(name)
	if err == nil || len(name) <= MaxZoneLen {
		// Only names of bounded length are cached, so that fuzzing or a
		// stream of bad names cannot grow the cache without bound.
		zones.Store(name, zoneEntry{loc, err})
	}
	return loc, err
}

func loadZoneUncached(name string) (*time.Location, error) {
	bad := func(problem string) (*time.Location, error) {
		return nil, fmt.Errorf("%w: time zone %q: %s (want an IANA name such as Europe/Berlin or America/New_York, or UTC)",
			ErrInvalidLayout, clip(name), problem)
	}
	switch {
	case len(name) > MaxZoneLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxZoneLen))
	case name == "Local":
		return bad("the machine's own zone would make partitions depend on where pswap runs")
	}
	// An IANA name is ASCII letters, digits and "/_-+"; checking that
	// first keeps paths ("../x", "/etc/localtime") away from LoadLocation.
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/_-+", c) >= 0) {
			return bad(fmt.Sprintf("the character %q is not in a zone name", c))
		}
	}
	if name[0] == '/' || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		return bad("not a zone name")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return bad("unknown zone")
	}
	return loc, nil
}

// fixedSince is the first instant from which an hourly layout in a zone
// needs the zone's UTC offset to stay the same.
var fixedSince = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// hourZone returns the fixed-offset zone hourly partitions of loc use, or
// an error when loc's offset changes after 1970 (daylight saving time, or
// a change of standard time): a local hour is then repeated or skipped, and
// hourly keys of local hours would collide or be missing.
func hourZone(name string, loc *time.Location) (*time.Location, error) {
	t := fixedSince.In(loc)
	zname, off := t.Zone()
	if _, end := t.ZoneBounds(); !end.IsZero() {
		return nil, fmt.Errorf("%w: hourly partitions in the time zone %s: its UTC offset changes (daylight saving time, first after 1970 on %s), "+
			"so a local hour repeats or is skipped and hourly keys would collide; "+
			"an hourly table keeps UTC hours (no time zone), or use a daily layout in %s",
			ErrInvalidLayout, name, end.In(loc).Format(time.DateOnly), name)
	}
	return time.FixedZone(zname, off), nil
}

// zoneNote describes the zone of a layout for messages: " in Europe/Berlin"
// or " in UTC".
func (l Layout) zoneNote() string {
	if l.Zone == "" {
		return " in UTC"
	}
	return " in " + l.Zone
}

// loc returns the location partitions begin in: nil for UTC, the zone's
// location for days and months, a fixed offset for hours. The layout must
// be normalized (its zone loads, an hourly zone has a fixed offset).
func (l Layout) loc() *time.Location {
	loc, err := loadZone(l.Zone)
	if err != nil || loc == nil {
		return time.UTC
	}
	if l.Grain == Hour {
		if h, err := hourZone(l.Zone, loc); err == nil {
			return h
		}
	}
	return loc
}

// truncate returns the start of the partition that contains t: the grain's
// start in the layout's zone. Days begin at local midnight (where a DST
// gap skips midnight, when the clocks jump: Go's time.Date normalization),
// months on the first local midnight of the month, hours on local hours.
func (l Layout) truncate(t time.Time) time.Time {
	loc := l.loc()
	if loc == time.UTC {
		return l.Grain.Truncate(t)
	}
	lt := t.In(loc)
	y, m, d := lt.Date()
	var s time.Time
	switch l.Grain {
	case Hour:
		s = time.Date(y, m, d, lt.Hour(), 0, 0, 0, loc)
	case Day:
		s = midnight(y, m, d, loc)
		if s.After(t) { // a midnight repeated by a DST change: Go may pick the later one
			s = midnight(y, m, d-1, loc)
		}
	case Month:
		s = midnight(y, m, 1, loc)
		if s.After(t) {
			s = midnight(y, m-1, 1, loc)
		}
	default:
		panic("partition: truncate of invalid " + l.Grain.String())
	}
	return s.UTC()
}

// add returns the start of the partition n grains after the one starting
// at start (a partition start), in UTC.
func (l Layout) add(start time.Time, n int) time.Time {
	loc := l.loc()
	if loc == time.UTC || l.Grain == Hour {
		return l.Grain.Add(start, n)
	}
	y, m, d := start.In(loc).Date()
	if l.Grain == Day {
		return midnight(y, m, d+n, loc).UTC()
	}
	return midnight(y, m+time.Month(n), 1, loc).UTC()
}

// midnight returns the first instant of the local date y-m-d (normalized
// as time.Date does) in loc: its midnight, or, where a change of offset
// skips midnight, the instant the clocks jump to (01:00 in
// America/Santiago on the day DST begins). time.Date alone may return an
// instant of the day before there.
func midnight(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // normalized: February 30 is March 2
	for range 4 {
		ly, lm, ld := t.Date()
		if !time.Date(ly, lm, ld, 0, 0, 0, 0, time.UTC).Before(want) {
			break
		}
		_, end := t.ZoneBounds()
		if end.IsZero() {
			break
		}
		t = end
	}
	return t
}

// count returns the number of partitions from start to end, both
// partition starts (an upper bound where a zone skipped a whole day).
func (l Layout) count(start, end time.Time) int64 {
	loc := l.loc()
	if loc == time.UTC || l.Grain != Day {
		return l.Grain.count(start.In(loc), end.In(loc))
	}
	// Calendar days between the local dates.
	civil := func(t time.Time) int64 {
		y, m, d := t.In(loc).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	return civil(end) - civil(start)
}
