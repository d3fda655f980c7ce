package merge

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
)

// ErrRoute: an input row that cannot be routed to a partition (no
// partition value, a value that does not fit the table's layout, a row
// outside the partition a merge is restricted to). It matches
// errkind.ErrBadInput.
var ErrRoute = errkind.New("cannot route row to a partition", errkind.ErrBadInput)

// RouteOptions say how rows find their partition.
type RouteOptions struct {
	// Table is the table's metadata (nil: the table has none yet; then
	// Partition must be set).
	Table *tablemeta.Table
	// Partition restricts the merge to one partition: every row must
	// route there (a row that routes elsewhere is ErrRoute); an input
	// without partition or time column goes there as a whole.
	Partition string
	// TimeColumn routes rows by this timestamp (or date) column through the
	// table's time layout (dt=2006-01-02 puts 2026-11-29T13:05:00Z in
	// dt=2026-11-29), instead of by partition columns.
	TimeColumn string
}

// Router gives each row of record batches of one schema its partition.
type Router struct {
	opts    RouteOptions
	names   []string // partition column names, key order
	formats []string // their layouts ("" free-form)
	cols    []int    // input indexes of the partition columns; nil: none
	time    int      // input index of TimeColumn, or -1
	layout  *partition.Layout
	drop    []string
	checked map[string]error
}

// NewRouter prepares routing for inputs of schema sc.
func NewRouter(sc *arrow.Schema, o RouteOptions) (*Router, error) {
	r := &Router{opts: o, time: -1, checked: map[string]error{}}
	switch {
	case o.Table != nil:
		for _, c := range o.Table.PartitionColumns {
			r.names = append(r.names, c.Name)
			r.formats = append(r.formats, c.Layout)
		}
	case o.Partition != "":
		k, err := partition.Parse(o.Partition)
		if err != nil {
			return nil, err
		}
		for _, c := range k.Columns() {
			r.names = append(r.names, c.Name)
			r.formats = append(r.formats, "")
		}
	default:
		return nil, fmt.Errorf("%w: the table has no metadata (_pswap/table.json) yet, so its partition columns are unknown: give the partition to merge into", ErrRoute)
	}
	if o.TimeColumn != "" {
		i := sc.FieldIndices(o.TimeColumn)
		if len(i) == 0 {
			return nil, fmt.Errorf("%w: the input has no time column %q", ErrRoute, o.TimeColumn)
		}
		switch sc.Field(i[0]).Type.ID() {
		case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.STRING, arrow.LARGE_STRING:
		default:
			return nil, fmt.Errorf("%w: time column %q is %s, not a timestamp or date", ErrRoute, o.TimeColumn, sc.Field(i[0]).Type)
		}
		if o.Table == nil || o.Table.TimeLayout() == nil {
			return nil, fmt.Errorf("%w: routing by time column %q needs a table whose partitions are times (dt=2006-01-02, ...)", ErrRoute, o.TimeColumn)
		}
		r.time, r.layout = i[0], o.Table.TimeLayout()
	}
	var found, missing []string
	cols := make([]int, len(r.names))
	for j, n := range r.names {
		i := sc.FieldIndices(n)
		if len(i) == 0 {
			missing = append(missing, n)
			continue
		}
		found = append(found, n)
		cols[j] = i[0]
		if o.Table == nil {
			r.drop = append(r.drop, n)
		} else if _, data := o.Table.Schema.Field(n); !data {
			r.drop = append(r.drop, n) // a routing column, not a data column
		}
	}
	switch {
	case r.time >= 0:
	case len(missing) == 0:
		r.cols = cols
	case len(found) > 0:
		return nil, fmt.Errorf("%w: the input has partition column(s) %s but not %s", ErrRoute, strings.Join(found, ", "), strings.Join(missing, ", "))
	case o.Partition == "":
		return nil, fmt.Errorf("%w: the input has no partition column (%s) and no time column is given: merge into one partition, or route by a timestamp column", ErrRoute, strings.Join(r.names, ", "))
	}
	return r, nil
}

// Drop returns the input's routing columns that are not data columns of
// the table: they are not written.
func (r *Router) Drop() []string { return r.drop }

// Routed reports whether rows are routed one by one (false: the whole
// input goes to RouteOptions.Partition).
func (r *Router) Routed() bool { return r.cols != nil || r.time >= 0 }

// Key returns the partition of row i of rec (row is its number in the
// input, for messages).
func (r *Router) Key(rec arrow.RecordBatch, i int, row int64) (string, error) {
	if !r.Routed() {
		return r.opts.Partition, nil
	}
	var key string
	if r.time >= 0 {
		t, err := timeOf(rec.Column(r.time), i)
		if err != nil {
			return "", fmt.Errorf("%w: row %d: time column %s: %v", ErrRoute, row, r.opts.TimeColumn, err)
		}
		parts := make([]string, len(r.layout.Columns))
		for j, c := range r.layout.Columns {
			parts[j] = c.Name + "=" + partition.Escape(t.UTC().Format(c.Format))
		}
		key = strings.Join(parts, "/")
	} else {
		cols := make([]partition.Column, len(r.cols))
		for j, c := range r.cols {
			v, err := valueOf(rec.Column(c), i, r.formats[j])
			if err != nil {
				return "", fmt.Errorf("%w: row %d: partition column %s: %v", ErrRoute, row, r.names[j], err)
			}
			cols[j] = partition.Column{Name: r.names[j], Value: v}
		}
		k, err := partition.New(cols...)
		if err != nil {
			return "", fmt.Errorf("%w: row %d: %w", ErrRoute, row, err)
		}
		key = k.String()
	}
	err, seen := r.checked[key]
	if !seen {
		if r.opts.Table != nil {
			err = r.opts.Table.CheckKey(key)
		} else {
			err = partition.Validate(key)
		}
		if err != nil {
			err = fmt.Errorf("%w: row %d: %w", ErrRoute, row, err)
		}
		r.checked[key] = err
	}
	if err != nil {
		return "", err
	}
	if r.opts.Partition != "" && key != r.opts.Partition {
		return "", fmt.Errorf("%w: row %d belongs to %s, outside the partition %s this merge is restricted to", ErrRoute, row, key, r.opts.Partition)
	}
	return key, nil
}

func valueOf(arr arrow.Array, i int, layout string) (string, error) {
	if arr.IsNull(i) {
		return "", fmt.Errorf("null (a row needs its partition value)")
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Int8, *array.Int16, *array.Int32, *array.Int64:
		return arr.ValueStr(i), nil
	case *array.Date32, *array.Date64, *array.Timestamp:
		t, err := timeOf(arr, i)
		if err != nil {
			return "", err
		}
		if layout == "" {
			layout = time.DateOnly
		}
		return t.UTC().Format(layout), nil
	}
	return arr.ValueStr(i), nil
}

func timeOf(arr arrow.Array, i int) (time.Time, error) {
	if arr.IsNull(i) {
		return time.Time{}, fmt.Errorf("null (a row needs its time)")
	}
	switch a := arr.(type) {
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit), nil
	case *array.Date32:
		return a.Value(i).ToTime(), nil
	case *array.Date64:
		return a.Value(i).ToTime(), nil
	case *array.String, *array.LargeString:
		s := arr.ValueStr(i)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			if t, err2 := time.Parse(time.DateOnly, s); err2 == nil {
				return t, nil
			}
			return time.Time{}, fmt.Errorf("%q is no RFC 3339 time", clip(s))
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s is not a time", arr.DataType())
}
