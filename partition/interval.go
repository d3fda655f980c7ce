package partition

import (
	"fmt"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrInvalidInterval is wrapped by every error about a malformed interval.
var ErrInvalidInterval = errkind.New("invalid interval", errkind.ErrBadInput)

// The range of times an interval may use: four-digit years, so that every
// interval has an ISO 8601 form that parses back.
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// Interval is the half-open range of time [Start, End) that a task run
// owns. Intervals made by this package are in UTC.
type Interval struct {
	Start, End time.Time
}

// NewInterval returns the interval [start, end) converted to UTC. End must
// be after start, and both must lie in the years 0001 to 9999.
// Errors wrap ErrInvalidInterval.
func NewInterval(start, end time.Time) (Interval, error) {
	iv := Interval{Start: start.UTC().Round(0), End: end.UTC().Round(0)}
	if err := iv.check(); err != nil {
		return Interval{}, err
	}
	return iv, nil
}

func (iv Interval) check() error {
	if !iv.End.After(iv.Start) {
		return fmt.Errorf("%w: end %s is not after start %s", ErrInvalidInterval, formatTime(iv.End), formatTime(iv.Start))
	}
	for _, t := range []time.Time{iv.Start, iv.End} {
		if t.Before(minTime) || t.After(maxTime) {
			return fmt.Errorf("%w: %s is outside the years 0001 to 9999", ErrInvalidInterval, t.UTC().Format(time.RFC3339Nano))
		}
	}
	return nil
}

// ParseInterval parses an ISO 8601 time interval in one of the forms
//
//	start/end       2026-11-29/2026-11-30, 2026-11-29T13:00:00Z/2026-11-29T14:00:00Z
//	start/duration  2026-11-29/P1D, 2026-11-29T13:00:00Z/PT1H
//	duration/end    PT1H/2026-11-29T14:00:00Z
//
// A time is a date (YYYY-MM-DD, meaning midnight UTC) or a date and time
// with seconds optional, fractional seconds allowed, and a required UTC
// offset ("Z" or "+01:00"); times with an offset are converted to UTC. A
// time without an offset is rejected: it would depend on the machine's time
// zone. A duration is P[nY][nM][nW][nD][T[nH][nM][nS]] with whole numbers;
// years, months, weeks and days are calendar units added in UTC. End must be
// after start. Errors wrap ErrInvalidInterval and quote the input.
func ParseInterval(s string) (Interval, error) { return ParseIntervalIn(s, time.UTC) }

// ParseIntervalIn is ParseInterval in the time zone loc (nil is UTC), the
// zone of a table whose partitions begin at local midnight: a date or
// month without an offset means its local midnight in loc, and a
// duration's years, months, weeks and days are calendar units of loc's
// wall clock (as ISO 8601 nominal durations, and as Airflow and Dagster
// add them), so "2026-03-29/P1D" in Europe/Berlin is the 23 hours from
// 2026-03-29T00:00:00+01:00 to 2026-03-30T00:00:00+02:00. Hours, minutes
// and seconds are elapsed time. Times with an offset mean the same instant
// in every zone. The interval is returned in UTC.
func ParseIntervalIn(s string, loc *time.Location) (Interval, error) {
	if loc == nil {
		loc = time.UTC
	}
	bad := func(problem string) (Interval, error) {
		return Interval{}, fmt.Errorf("%w %q: %s", ErrInvalidInterval, clip(s), problem)
	}
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return bad("want START/END or START/DURATION")
	}
	if strings.Contains(b, "/") {
		return bad("more than one /")
	}
	var iv Interval
	switch aDur, bDur := isDuration(a), isDuration(b); {
	case aDur && bDur:
		return bad("both sides are durations")
	case bDur:
		start, err := parseTime(a, loc)
		if err != nil {
			return bad(err.Error())
		}
		d, err := parseDuration(b)
		if err != nil {
			return bad(err.Error())
		}
		iv = Interval{Start: start, End: d.addTo(start, 1, loc)}
	case aDur:
		end, err := parseTime(b, loc)
		if err != nil {
			return bad(err.Error())
		}
		d, err := parseDuration(a)
		if err != nil {
			return bad(err.Error())
		}
		iv = Interval{Start: d.addTo(end, -1, loc), End: end}
	default:
		start, err := parseTime(a, loc)
		if err != nil {
			return bad(err.Error())
		}
		end, err := parseTime(b, loc)
		if err != nil {
			return bad(err.Error())
		}
		iv = Interval{Start: start, End: end}
	}
	if err := iv.check(); err != nil {
		return bad(strings.TrimPrefix(err.Error(), ErrInvalidInterval.Error()+": "))
	}
	return iv, nil
}

// String returns the interval in ISO 8601 start/end form, using dates when
// both ends are at midnight UTC ("2026-11-29/2026-11-30") and RFC 3339 UTC
// times otherwise ("2026-11-29T13:00:00Z/2026-11-29T14:00:00Z").
// ParseInterval(iv.String()) returns iv for every valid interval.
func (iv Interval) String() string {
	s, e := iv.Start.UTC(), iv.End.UTC()
	if isMidnight(s) && isMidnight(e) {
		return s.Format(time.DateOnly) + "/" + e.Format(time.DateOnly)
	}
	return formatTime(s) + "/" + formatTime(e)
}

// Duration returns End - Start.
func (iv Interval) Duration() time.Duration { return iv.End.Sub(iv.Start) }

// Contains reports whether t lies in [Start, End).
func (iv Interval) Contains(t time.Time) bool {
	return !t.Before(iv.Start) && t.Before(iv.End)
}

// IsZero reports whether iv is the zero Interval.
func (iv Interval) IsZero() bool { return iv.Start.IsZero() && iv.End.IsZero() }

// Equal reports whether iv and o denote the same range of time.
func (iv Interval) Equal(o Interval) bool {
	return iv.Start.Equal(o.Start) && iv.End.Equal(o.End)
}

// MarshalText returns the String form.
func (iv Interval) MarshalText() ([]byte, error) { return []byte(iv.String()), nil }

// UnmarshalText parses with ParseInterval.
func (iv *Interval) UnmarshalText(b []byte) error {
	v, err := ParseInterval(string(b))
	if err != nil {
		return err
	}
	*iv = v
	return nil
}

func isMidnight(t time.Time) bool {
	return t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// parseTime parses a date (midnight in loc) or a date-time with a UTC
// offset and returns it in UTC.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	if len(s) == len("2006-01") && !strings.ContainsAny(s, "PT") {
		// A month (ISO 8601's reduced precision): its first day, midnight in loc.
		t, err := time.Parse("2006-01", s)
		if err != nil {
			return time.Time{}, fmt.Errorf("bad month %q: want YYYY-MM", s)
		}
		return midnight(t.Year(), t.Month(), 1, loc).UTC(), nil
	}
	if len(s) == len(time.DateOnly) {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("bad date %q: want YYYY-MM-DD", s)
		}
		return midnight(t.Year(), t.Month(), t.Day(), loc).UTC(), nil
	}
	date, clock, ok := strings.Cut(s, "T")
	if !ok || len(date) != len(time.DateOnly) {
		return time.Time{}, fmt.Errorf("bad time %q: want YYYY-MM-DD, YYYY-MM-DDThh:mm[:ss[.f]]Z or a month YYYY-MM", s)
	}
	if !strings.ContainsAny(clock, "Z+-") {
		return time.Time{}, fmt.Errorf("time %q has no UTC offset: add Z or +hh:mm", s)
	}
	// The forms with and without seconds; fractional seconds are accepted
	// after the seconds by time.Parse.
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q: want YYYY-MM-DDThh:mm[:ss[.f]]Z or an offset like +01:00", s)
}

// isDuration reports whether s looks like an ISO 8601 duration.
func isDuration(s string) bool { return strings.HasPrefix(s, "P") }

// isoDuration is a parsed ISO 8601 duration.
type isoDuration struct {
	years, months, days int   // weeks are folded into days
	seconds             int64 // hours, minutes and seconds
}

// maxDurationNumber bounds each number of a duration so that nothing
// overflows; the result is range-checked afterwards anyway.
const maxDurationNumber = 99_999_999

// maxClockSeconds bounds the time part of a duration well below the range
// of time.Duration (about 292 years).
const maxClockSeconds = 100 * 366 * 24 * 3600

func parseDuration(s string) (isoDuration, error) {
	var d isoDuration
	bad := func(problem string) (isoDuration, error) {
		return isoDuration{}, fmt.Errorf("bad duration %q: %s", s, problem)
	}
	rest := s[1:] // after "P"
	if rest == "" {
		return bad("no components")
	}
	inTime, seen := false, false
	const datePos, timePos = "YMWD", "HMS"
	last := -1 // index of the last unit within datePos or timePos, to enforce order
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return bad("T appears twice")
			}
			inTime, last = true, -1
			rest = rest[1:]
			if rest == "" {
				return bad("T without time components")
			}
			continue
		}
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return bad(fmt.Sprintf("want a whole number at %q", rest))
		}
		if i > 8 {
			return bad(fmt.Sprintf("number %q is too large", rest[:i]))
		}
		n := 0
		for _, c := range rest[:i] {
			n = n*10 + int(c-'0')
		}
		if n > maxDurationNumber {
			return bad(fmt.Sprintf("number %q is too large", rest[:i]))
		}
		if i == len(rest) {
			return bad(fmt.Sprintf("number %q has no unit", rest[:i]))
		}
		unit := rest[i]
		units := datePos
		if inTime {
			units = timePos
		}
		pos := strings.IndexByte(units, unit)
		if pos < 0 {
			if unit == '.' || unit == ',' {
				return bad("fractions are not supported")
			}
			return bad(fmt.Sprintf("unknown unit %q", unit))
		}
		if pos <= last {
			return bad(fmt.Sprintf("unit %q repeated or out of order", unit))
		}
		last = pos
		switch {
		case !inTime && unit == 'Y':
			d.years = n
		case !inTime && unit == 'M':
			d.months = n
		case !inTime && unit == 'W':
			d.days += 7 * n
		case !inTime && unit == 'D':
			d.days += n
		case unit == 'H':
			d.seconds += int64(n) * 3600
		case unit == 'M':
			d.seconds += int64(n) * 60
		case unit == 'S':
			d.seconds += int64(n)
		}
		seen = true
		rest = rest[i+1:]
	}
	if !seen {
		return bad("no components")
	}
	if d.seconds > maxClockSeconds {
		return bad("hours, minutes and seconds add up to more than 100 years")
	}
	return d, nil
}

// addTo adds the duration to t (sign 1) or subtracts it (sign -1), calendar
// units first (on the wall clock of loc), and returns the result in UTC.
func (d isoDuration) addTo(t time.Time, sign int, loc *time.Location) time.Time {
	clock := time.Duration(d.seconds) * time.Second
	if sign < 0 {
		return t.Add(-clock).In(loc).AddDate(-d.years, -d.months, -d.days).UTC()
	}
	return t.In(loc).AddDate(d.years, d.months, d.days).Add(clock).UTC()
}
