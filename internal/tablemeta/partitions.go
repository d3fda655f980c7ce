package tablemeta

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pswap/pswap/partition"
)

// InferPartitionColumns derives a table's partition columns from the key of
// its first commit. With a layout (the one an interval was mapped with, as
// in `--interval ... --layout ...`), the columns are the layout's. Without
// one, each column's layout is guessed from its name and value: hr=13 is
// "15", dt=2026-11-29 "2006-01-02", month=2026-11 "2006-01",
// year=2026/month=11/day=29 "2006", "01", "02"; a value no time layout
// fits is free-form (layout "", type string). Ids are not assigned (0):
// New assigns them.
func InferPartitionColumns(key string, layout *partition.Layout) ([]PartitionColumn, error) {
	k, err := partition.Parse(key)
	if err != nil {
		return nil, err
	}
	cols := k.Columns()
	out := make([]PartitionColumn, len(cols))
	if layout != nil {
		n, err := layout.Normalize()
		if err != nil {
			return nil, err
		}
		if _, err := n.Interval(k); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPartitionMismatch, err)
		}
		for i, c := range n.Columns {
			out[i] = PartitionColumn{Name: c.Name, Layout: c.Format, Type: layoutType(c.Format)}
		}
		return out, nil
	}
	for i, c := range cols {
		l := guessLayout(c.Name, c.Value)
		out[i] = PartitionColumn{Name: c.Name, Layout: l, Type: layoutType(l)}
	}
	if l := timeLayout(out); l != nil {
		if _, err := l.Interval(k); err != nil {
			// Each value fits its layout, but together they are no time
			// (year 0000, February 31): keep the columns free-form, as a
			// single column that fits no layout is, rather than make a
			// table that refuses the key it was inferred from (found by
			// FuzzCheckKey).
			for i := range out {
				out[i].Layout, out[i].Type = "", StringType
			}
		}
	}
	return out, nil
}

// layoutType is the type of a partition column with layout l.
func layoutType(l string) Type {
	switch {
	case l == "":
		return StringType
	case isDateLayout(l):
		return DateType
	case isIntLayout(l):
		return IntType
	}
	return StringType
}

// guessLayout returns the time layout a value fits, by the column's name
// first, or "".
func guessLayout(name, value string) string {
	var candidates []string
	switch strings.ToLower(name) {
	case "hr", "hour", "hh", "h":
		candidates = []string{"15"}
	case "day", "dd", "d":
		candidates = []string{"02", "2006-01-02"}
	case "month", "mon", "mm", "m":
		candidates = []string{"01", "2006-01"}
	case "year", "yyyy", "yr", "y":
		candidates = []string{"2006"}
	case "dt", "date", "ds", "day_date":
		candidates = []string{"2006-01-02", "20060102", "2006-01-02T15"}
	default:
		candidates = []string{"2006-01-02", "2006-01-02T15", "2006-01"}
	}
	for _, l := range candidates {
		if fits(l, value) {
			return l
		}
	}
	return ""
}

// fits reports whether v is exactly what layout l formats some time to.
func fits(l, v string) bool {
	t, err := time.Parse(l, v)
	return err == nil && t.Format(l) == v
}

// timeLayout returns the partition.Layout of the columns when every column
// has a time layout and together they form a valid layout, or nil.
func timeLayout(cols []PartitionColumn) *partition.Layout {
	var l partition.Layout
	for _, c := range cols {
		if c.Layout == "" {
			return nil
		}
		l.Columns = append(l.Columns, partition.LayoutColumn{Name: c.Name, Format: c.Layout})
	}
	n, err := l.Normalize()
	if err != nil {
		return nil
	}
	return &n
}

// TimeLayout returns the partition.Layout of the table's keys when every
// partition column has a time layout (dt=2006-01-02, dt=2006-01-02/hr=15,
// month=2006-01, ...), or nil: the layout status and intervals map times
// with. Its Zone is the table's TimeZone.
func (t *Table) TimeLayout() *partition.Layout {
	l := timeLayout(t.PartitionColumns)
	if l == nil || t.TimeZone == "" {
		return l
	}
	l.Zone = t.TimeZone
	n, err := l.Normalize()
	if err != nil {
		return nil // not a valid table (Validate refuses it)
	}
	return &n
}

// PartitionLayout describes the partition columns the way a key looks:
// "dt=2006-01-02/hr=15" (a free-form column shows as name=*).
func (t *Table) PartitionLayout() string {
	parts := make([]string, len(t.PartitionColumns))
	for i, c := range t.PartitionColumns {
		l := c.Layout
		if l == "" {
			l = "*"
		}
		parts[i] = c.Name + "=" + l
	}
	return strings.Join(parts, "/")
}

// exampleKey is a key that fits the partition columns.
func (t *Table) exampleKey() string {
	parts := make([]string, len(t.PartitionColumns))
	for i, c := range t.PartitionColumns {
		v := "value"
		if c.Layout != "" {
			v = sampleTimes[0].Format(c.Layout)
		}
		parts[i] = c.Name + "=" + partition.Escape(v)
	}
	return strings.Join(parts, "/")
}

// CheckKey checks a partition key against the table's partition columns:
// the same columns in the same order, and every value exactly in its
// column's layout (2026-13-45 is no date, 20261127 is not 2006-01-02; an
// int column holds an integer). Errors match ErrPartitionMismatch and end
// with a hint showing a key that fits.
func (t *Table) CheckKey(key string) error {
	k, err := partition.Parse(key)
	if err != nil {
		return err
	}
	cols := k.Columns()
	fail := func(problem string, args ...any) error {
		return fmt.Errorf("%w: %s: %s (hint: the table's partitions are %s, e.g. %s)",
			ErrPartitionMismatch, key, fmt.Sprintf(problem, args...), t.PartitionLayout(), t.exampleKey())
	}
	names := func(cs []partition.Column) string {
		n := make([]string, len(cs))
		for i, c := range cs {
			n[i] = c.Name
		}
		return strings.Join(n, ", ")
	}
	want := make([]string, len(t.PartitionColumns))
	for i, c := range t.PartitionColumns {
		want[i] = c.Name
	}
	if len(cols) != len(want) {
		return fail("%d columns (%s), the table has %d (%s)", len(cols), names(cols), len(want), strings.Join(want, ", "))
	}
	for i, c := range cols {
		pc := t.PartitionColumns[i]
		if c.Name != pc.Name {
			if slices.Contains(want, c.Name) {
				return fail("column %d is %s, the table's column %d is %s", i+1, c.Name, i+1, pc.Name)
			}
			return fail("column %s is not a partition column of the table", c.Name)
		}
		if pc.Layout != "" && !fits(pc.Layout, c.Value) {
			why := ""
			if _, err := time.Parse(pc.Layout, c.Value); err != nil {
				if _, rest, ok := strings.Cut(err.Error(), ": "); ok && strings.Contains(err.Error(), "out of range") {
					why = " (" + rest + ")"
				}
			}
			return fail("%s value %q does not fit the layout %s%s", c.Name, c.Value, pc.Layout, why)
		}
		if pc.Type.Kind == Int {
			if _, err := strconv.ParseInt(c.Value, 10, 32); err != nil {
				return fail("%s value %q is not an integer", c.Name, c.Value)
			}
		}
	}
	if l := t.TimeLayout(); l != nil {
		if _, err := l.Interval(k); err != nil {
			return fail("not a valid time under the layout")
		}
	}
	return nil
}
