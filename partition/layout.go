package partition

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/errkind"
)

var (
	// ErrUnaligned: an interval does not match a layout's grain: it is not
	// exactly one grain long, or does not start or end on a grain boundary.
	ErrUnaligned = errkind.New("interval not aligned to the partition grain", errkind.ErrBadInput)
	// ErrInvalidLayout is wrapped by every error about a malformed layout.
	ErrInvalidLayout = errkind.New("invalid partition layout", errkind.ErrBadInput)
)

// MaxKeys is the largest number of keys Layout.Keys returns for one interval.
const MaxKeys = 200_000

// Grain is the length of time one partition covers.
type Grain int

// The grains. The zero Grain means "unset"; see Layout.
const (
	Hour Grain = iota + 1
	Day
	Month
)

var grainNames = [...]string{Hour: "hour", Day: "day", Month: "month"}

// String returns "hour", "day" or "month".
func (g Grain) String() string {
	if g.valid() {
		return grainNames[g]
	}
	return fmt.Sprintf("Grain(%d)", int(g))
}

func (g Grain) valid() bool { return g >= Hour && g <= Month }

// ParseGrain parses "hour", "day" or "month".
func ParseGrain(s string) (Grain, error) {
	for g := Hour; g <= Month; g++ {
		if s == grainNames[g] {
			return g, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown grain %q (want hour, day or month)", ErrInvalidLayout, s)
}

// Truncate returns the start of the grain that contains t, in UTC.
func (g Grain) Truncate(t time.Time) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	switch g {
	case Hour:
		return time.Date(y, m, d, t.Hour(), 0, 0, 0, time.UTC)
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
	panic("partition: Truncate of invalid " + g.String())
}

// Add returns t plus n grains, in UTC.
func (g Grain) Add(t time.Time, n int) time.Time {
	t = t.UTC()
	switch g {
	case Hour:
		return t.Add(time.Duration(n) * time.Hour)
	case Day:
		return t.AddDate(0, 0, n)
	case Month:
		return t.AddDate(0, n, 0)
	}
	panic("partition: Add of invalid " + g.String())
}

// count returns the number of whole grains from start to end, both aligned.
func (g Grain) count(start, end time.Time) int64 {
	switch g {
	// In seconds, not time.Duration: a Duration saturates at about 292
	// years, which would let a longer interval pass for fewer partitions.
	case Hour:
		return (end.Unix() - start.Unix()) / 3600
	case Day:
		return (end.Unix() - start.Unix()) / 86400 // UTC has no DST
	default:
		return int64(end.Year()-start.Year())*12 + int64(end.Month()-start.Month())
	}
}

// LayoutColumn is one column of a Layout: its name and a Go time format
// (see time.Layout) applied to the start of the interval, in the layout's
// zone (UTC by default).
type LayoutColumn struct {
	Name, Format string
}

// Layout maps intervals to partition keys. The zero value is the daily
// layout dt=2006-01-02.
//
// With no Columns, the default columns of Grain are used (Grain 0 means
// Day): dt=2006-01-02 for Day, dt=2006-01-02/hr=15 for Hour and
// month=2006-01 for Month. With Columns, each column's value is the start
// of the interval formatted with its Format, for example
// year=2006/month=01/day=02. The formats must encode nothing finer than an
// hour, and together they must identify the grain uniquely, so that a key
// parses back to its interval; the grain is inferred from them and Grain,
// if set, must agree.
//
// Zone is the IANA time zone the partitions begin in ("Europe/Berlin"; ""
// is UTC, see ParseZone). In a zone, a day is the local calendar day: it
// begins at local midnight, lasts 23 or 25 hours on the days daylight
// saving time begins or ends, and its key is the local date; a month begins
// at local midnight of its first day. Hourly partitions in a zone are
// local hours and need a zone whose UTC offset has not changed since 1970
// (Asia/Kolkata, Asia/Tokyo): in a zone with daylight saving time a local
// hour repeats once a year, and its two partitions would have the same
// key, so such a layout is refused; an hourly table keeps UTC hours.
type Layout struct {
	Grain   Grain
	Columns []LayoutColumn
	Zone    string
}

// ParseLayout parses a layout flag: a grain name ("hour", "day", "month")
// for its default columns, or name=format columns separated by "/", such as
// "dt=2006-01-02/hr=15". Errors wrap ErrInvalidLayout.
func ParseLayout(s string) (Layout, error) {
	if g, err := ParseGrain(s); err == nil {
		return Layout{Grain: g}, nil
	}
	if s == "" {
		return Layout{}, fmt.Errorf("%w: empty layout", ErrInvalidLayout)
	}
	if len(s) > MaxLen {
		return Layout{}, fmt.Errorf("%w %q: %d bytes, longer than the limit of %d", ErrInvalidLayout, clip(s), len(s), MaxLen)
	}
	var l Layout
	for seg := range strings.SplitSeq(s, "/") {
		name, format, ok := strings.Cut(seg, "=")
		if !ok {
			return Layout{}, fmt.Errorf("%w %q: segment %q is not name=format (or give hour, day or month)", ErrInvalidLayout, s, seg)
		}
		l.Columns = append(l.Columns, LayoutColumn{Name: name, Format: format})
		if len(l.Columns) > MaxColumns {
			break // reported by Normalize
		}
	}
	if _, err := l.Normalize(); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// String returns the layout's columns as name=format separated by "/"
// (defaults filled in), the form ParseLayout reads. The zone is not part
// of it.
func (l Layout) String() string {
	n, err := l.Normalize()
	if err != nil {
		n = l
	}
	var b strings.Builder
	for i, c := range n.Columns {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(c.Name + "=" + c.Format)
	}
	return b.String()
}

// MarshalText returns the String form (without the zone).
func (l Layout) MarshalText() ([]byte, error) {
	if _, err := l.Normalize(); err != nil {
		return nil, err
	}
	return []byte(l.String()), nil
}

// UnmarshalText parses with ParseLayout.
func (l *Layout) UnmarshalText(b []byte) error {
	v, err := ParseLayout(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Normalize validates the layout and returns it with its Grain and Columns
// filled in. Errors wrap ErrInvalidLayout.
func (l Layout) Normalize() (Layout, error) {
	zone, err := ParseZone(l.Zone)
	if err != nil {
		return Layout{}, err
	}
	n, err := l.normalizeColumns()
	if err != nil {
		return Layout{}, err
	}
	if zone == "" {
		return n, nil
	}
	n.Zone = zone
	if n.Grain == Hour {
		loc, _ := loadZone(zone)
		if _, err := hourZone(zone, loc); err != nil {
			return Layout{}, err
		}
	}
	if err := n.checkRoundTrip(); err != nil {
		return Layout{}, err
	}
	return n, nil
}

// normalizeColumns is Normalize without the zone: the columns and grain in
// UTC.
func (l Layout) normalizeColumns() (Layout, error) {
	if len(l.Columns) == 0 {
		g := l.Grain
		switch g {
		case 0, Day:
			return Layout{Grain: Day, Columns: []LayoutColumn{{"dt", time.DateOnly}}}, nil
		case Hour:
			return Layout{Grain: Hour, Columns: []LayoutColumn{{"dt", time.DateOnly}, {"hr", "15"}}}, nil
		case Month:
			return Layout{Grain: Month, Columns: []LayoutColumn{{"month", "2006-01"}}}, nil
		}
		return Layout{}, fmt.Errorf("%w: unknown %v", ErrInvalidLayout, g)
	}
	if l.Grain != 0 && !l.Grain.valid() {
		return Layout{}, fmt.Errorf("%w: unknown %v", ErrInvalidLayout, l.Grain)
	}
	if len(l.Columns) > MaxColumns {
		return Layout{}, fmt.Errorf("%w: %d columns, more than the limit of %d", ErrInvalidLayout, len(l.Columns), MaxColumns)
	}
	for i, c := range l.Columns {
		if p := nameProblem(c.Name); p != "" {
			return Layout{}, fmt.Errorf("%w: column name %q: %s", ErrInvalidLayout, c.Name, p)
		}
		for _, d := range l.Columns[:i] {
			if d.Name == c.Name {
				return Layout{}, fmt.Errorf("%w: duplicate column name %q", ErrInvalidLayout, c.Name)
			}
		}
		switch {
		case c.Format == "":
			return Layout{}, fmt.Errorf("%w: column %s has an empty format", ErrInvalidLayout, c.Name)
		case !utf8.ValidString(c.Format):
			return Layout{}, fmt.Errorf("%w: column %s format %q is not valid UTF-8", ErrInvalidLayout, c.Name, c.Format)
		case strings.IndexFunc(c.Format, unicode.IsControl) >= 0:
			return Layout{}, fmt.Errorf("%w: column %s format %q contains a control character", ErrInvalidLayout, c.Name, c.Format)
		case len(c.Format) > MaxLen:
			return Layout{}, fmt.Errorf("%w: column %s format is longer than %d bytes", ErrInvalidLayout, c.Name, MaxLen)
		}
	}
	n := Layout{Columns: append([]LayoutColumn(nil), l.Columns...)}
	// Infer the grain: the coarsest grain whose every partition formats
	// to a single key.
	for g := Month; g >= Hour && n.Grain == 0; g-- {
		constant := true
		for _, t := range samples {
			if n.format(t) != n.format(g.Truncate(t)) {
				constant = false
				break
			}
		}
		if constant {
			n.Grain = g
		}
	}
	if n.Grain == 0 {
		return Layout{}, fmt.Errorf("%w: %s: the formats encode minutes or seconds (the finest grain is an hour)", ErrInvalidLayout, n.describe())
	}
	if l.Grain != 0 && l.Grain != n.Grain {
		return Layout{}, fmt.Errorf("%w: %s: the formats make %v partitions, but the grain is %v", ErrInvalidLayout, n.describe(), n.Grain, l.Grain)
	}
	if err := n.checkRoundTrip(); err != nil {
		return Layout{}, err
	}
	return n, nil
}

// checkRoundTrip checks that every partition has a valid key that parses
// back to it (in the layout's zone).
func (n Layout) checkRoundTrip() error {
	for _, t := range samples {
		iv := Interval{Start: n.truncate(t)}
		iv.End = n.add(iv.Start, 1)
		if iv.check() != nil || n.outOfYears(iv) {
			continue // a zone's offset moves the sample out of the years 0001 to 9999
		}
		k, err := n.key(iv.Start)
		if err != nil {
			return fmt.Errorf("%w: %s: the partition %v has no valid key: %w", ErrInvalidLayout, n.describe(), iv, err)
		}
		back, err := n.parse(k)
		if err != nil || !back.Equal(iv) {
			return fmt.Errorf("%w: %s: the key %q does not identify the %v partition %v (the formats must determine the year, month%s)",
				ErrInvalidLayout, n.describe(), k, n.Grain, iv, map[Grain]string{Hour: ", day and hour", Day: " and day", Month: ""}[n.Grain])
		}
	}
	return nil
}

// samples are times used to check a layout: every field differs from its
// truncation, hours span AM and PM, and the dates include a leap day and
// turns of year and month.
var samples = []time.Time{
	time.Date(2001, 2, 3, 4, 5, 6, 7008009, time.UTC),
	time.Date(2026, 11, 29, 13, 59, 59, 999999999, time.UTC),
	time.Date(2024, 2, 29, 23, 30, 0, 500000000, time.UTC),
	time.Date(1999, 12, 31, 12, 0, 1, 0, time.UTC),
	time.Date(2026, 7, 4, 0, 0, 0, 100000000, time.UTC),
	time.Date(1970, 1, 1, 0, 1, 0, 1000, time.UTC),
	time.Date(9999, 12, 31, 22, 0, 0, 1000000, time.UTC),
	time.Date(1, 1, 1, 11, 0, 0, 10000000, time.UTC),
}

func (l Layout) describe() string {
	var b strings.Builder
	for i, c := range l.Columns {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(c.Name + "=" + c.Format)
	}
	return fmt.Sprintf("%q", b.String())
}

// format returns the raw column values for t joined by a unit separator
// (formats and values contain no control characters).
func (l Layout) format(t time.Time) string {
	var b strings.Builder
	for i, c := range l.Columns {
		if i > 0 {
			b.WriteByte('\x1f')
		}
		b.WriteString(t.UTC().Format(c.Format))
	}
	return b.String()
}

// outOfYears reports whether a partition's local start or end lies outside
// the years 0001 to 9999 (near the ends of the range, in a zone).
func (l Layout) outOfYears(iv Interval) bool {
	loc := l.loc()
	for _, t := range []time.Time{iv.Start.In(loc), iv.End.Add(-time.Nanosecond).In(loc)} {
		if y := t.Year(); y < 1 || y > 9999 {
			return true
		}
	}
	return false
}

// key returns the key of the partition starting at start (normalized
// layout): the start formatted in the layout's zone.
func (l Layout) key(start time.Time) (Key, error) {
	local := start.In(l.loc())
	cols := make([]Column, len(l.Columns))
	for i, c := range l.Columns {
		cols[i] = Column{Name: c.Name, Value: local.Format(c.Format)}
	}
	return New(cols...)
}

// parse returns the interval a key denotes under a normalized layout,
// without checking that it is the canonical key of that interval.
func (l Layout) parse(k Key) (Interval, error) {
	cols := k.Columns()
	if len(cols) != len(l.Columns) {
		return Interval{}, fmt.Errorf("%w %q: %d columns, the layout %s has %d", ErrInvalidKey, k, len(cols), l.describe(), len(l.Columns))
	}
	formats := make([]string, len(cols))
	values := make([]string, len(cols))
	for i, c := range cols {
		if c.Name != l.Columns[i].Name {
			return Interval{}, fmt.Errorf("%w %q: column %d is %q, the layout %s wants %q", ErrInvalidKey, k, i+1, c.Name, l.describe(), l.Columns[i].Name)
		}
		formats[i], values[i] = l.Columns[i].Format, c.Value
	}
	t, err := time.Parse(strings.Join(formats, "\x1f"), strings.Join(values, "\x1f"))
	if err != nil {
		return Interval{}, fmt.Errorf("%w %q: does not match the layout %s", ErrInvalidKey, k, l.describe())
	}
	if loc := l.loc(); loc != time.UTC {
		// The values are the local wall clock: the partition begins at
		// its local start.
		y, m, d := t.Date()
		switch l.Grain {
		case Hour:
			t = time.Date(y, m, d, t.Hour(), 0, 0, 0, loc)
		case Day:
			t = midnight(y, m, d, loc)
		default:
			t = midnight(y, m, 1, loc)
		}
	}
	t = t.UTC()
	return Interval{Start: t, End: l.add(t, 1)}, nil
}

// ParseInterval parses an interval as ParseIntervalIn does in the layout's
// zone: "2026-03-29/P1D" is the local day 2026-03-29 of a layout in
// Europe/Berlin. Errors wrap ErrInvalidInterval, or ErrInvalidLayout for an
// unknown zone.
func (l Layout) ParseInterval(s string) (Interval, error) {
	loc, err := loadZone(l.Zone)
	if err != nil {
		return Interval{}, err
	}
	return ParseIntervalIn(s, loc)
}

// Key returns the key of the partition iv covers. iv must be exactly one
// grain long and start on a grain boundary (in the layout's zone: local
// midnight for a day in Europe/Berlin, midnight UTC without a zone; a day
// in a zone may last 23 or 25 hours), otherwise the error
// wraps ErrUnaligned (or ErrInvalidInterval for an empty or reversed
// interval, ErrInvalidLayout for a bad layout).
func (l Layout) Key(iv Interval) (Key, error) {
	n, err := l.Normalize()
	if err != nil {
		return Key{}, err
	}
	iv, err = n.alignedInterval(iv)
	if err != nil {
		return Key{}, err
	}
	if want := n.add(iv.Start, 1); !iv.End.Equal(want) {
		return Key{}, fmt.Errorf("%w: interval %v spans %s; a key covers exactly one %v (use Keys to split it)",
			ErrUnaligned, iv, n.span(iv), n.Grain)
	}
	return n.key(iv.Start)
}

// Keys returns the keys of the partitions iv covers, in time order. Both
// ends of iv must be on grain boundaries (in the layout's zone), otherwise the error
// wraps ErrUnaligned. At most MaxKeys keys are returned; a longer interval
// is an error wrapping ErrInvalidInterval.
func (l Layout) Keys(iv Interval) ([]Key, error) {
	n, err := l.Normalize()
	if err != nil {
		return nil, err
	}
	iv, err = n.alignedInterval(iv)
	if err != nil {
		return nil, err
	}
	count := n.count(iv.Start, iv.End)
	if count > MaxKeys {
		return nil, fmt.Errorf("%w: interval %v has %d %v partitions, more than the limit of %d", ErrInvalidInterval, iv, count, n.Grain, MaxKeys)
	}
	keys := make([]Key, 0, count)
	for t := iv.Start; t.Before(iv.End); {
		k, err := n.key(t)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
		next := n.add(t, 1)
		if !next.After(t) || len(keys) > MaxKeys {
			// Cannot happen in a zone of the IANA database; guards the loop.
			return nil, fmt.Errorf("%w: the %v partition after %s%s does not begin later", ErrInvalidLayout, n.Grain, formatTime(t), n.zoneNote())
		}
		t = next
	}
	return keys, nil
}

// Interval returns the interval the key k denotes under the layout: the
// inverse of Key. k must have the layout's columns in order and be exactly
// the key Key returns for that interval (so "hr=5" is rejected where the
// format makes "hr=05"); errors wrap ErrInvalidKey.
func (l Layout) Interval(k Key) (Interval, error) {
	n, err := l.Normalize()
	if err != nil {
		return Interval{}, err
	}
	if k.IsZero() {
		return Interval{}, fmt.Errorf("%w: zero key", ErrInvalidKey)
	}
	iv, err := n.parse(k)
	if err != nil {
		return Interval{}, err
	}
	if iv.check() != nil {
		return Interval{}, fmt.Errorf("%w %q: outside the years 0001 to 9999", ErrInvalidKey, k)
	}
	if want, err := n.key(iv.Start); err != nil || want != k {
		return Interval{}, fmt.Errorf("%w %q: not the canonical key of %v under the layout %s (want %q)", ErrInvalidKey, k, iv, n.describe(), want)
	}
	return iv, nil
}

// alignedInterval checks that iv is valid and both ends are on grain
// boundaries in the layout's zone, and returns it in UTC.
func (l Layout) alignedInterval(iv Interval) (Interval, error) {
	iv = Interval{Start: iv.Start.UTC(), End: iv.End.UTC()}
	if err := iv.check(); err != nil {
		return Interval{}, err
	}
	for _, e := range []struct {
		name string
		t    time.Time
	}{{"start", iv.Start}, {"end", iv.End}} {
		if !l.truncate(e.t).Equal(e.t) {
			return Interval{}, fmt.Errorf("%w: %s %s of interval %v is not on %s boundary%s%s",
				ErrUnaligned, e.name, formatTime(e.t), iv, map[Grain]string{Hour: "an hour", Day: "a day", Month: "a month"}[l.Grain],
				l.zoneNote(), l.zoneRemedy(iv, e.t))
		}
	}
	return iv, nil
}

// zoneRemedy explains, for a UTC layout of days or months and an interval
// that looks like local days (whole hours, about a whole number of days
// long, as a local midnight schedule renders), that a table whose
// partitions begin at local midnight needs its zone.
func (l Layout) zoneRemedy(iv Interval, t time.Time) string {
	d := iv.Duration()
	if l.Zone != "" || l.Grain == Hour || t.Minute()%15 != 0 || t.Second() != 0 || t.Nanosecond() != 0 ||
		d < 23*time.Hour || d%(15*time.Minute) != 0 {
		return ""
	}
	if h := d % (24 * time.Hour); h > time.Hour && h < 23*time.Hour {
		return ""
	}
	return fmt.Sprintf(" (a table's %ss begin at midnight UTC unless it has a time zone: for %ss that begin at local midnight, "+
		"give the table's zone, e.g. --time-zone Europe/Berlin (Layout.Zone in the library); "+
		"the commit that creates a table records its zone)", l.Grain, l.Grain)
}

// span describes the length of an aligned interval in grains.
func (l Layout) span(iv Interval) string {
	n := l.count(iv.Start, iv.End)
	if n == 1 {
		return "1 " + l.Grain.String()
	}
	return fmt.Sprintf("%d %vs", n, l.Grain)
}
