package lakehouse

import (
	"context"
	"encoding/binary"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// fileStats are a data file's column statistics for its manifest entry,
// keyed by Iceberg field id: what engines prune files by (a filter on a
// data column skips the files whose bounds exclude it).
type fileStats struct {
	sizes, values, nulls map[int]int64
	lower, upper         map[int][]byte
}

// statsOf is the column statistics of a Parquet footer for the table's
// schema sc (those of a file whose manifest predates them): what
// pqscan.ColumnStats derives from it, as statsFrom maps them.
func statsOf(md *metadata.FileMetaData, sc *iceberg.Schema) fileStats {
	return statsFrom(pqscan.ColumnStats(md), sc)
}

// statsFrom maps a file's column statistics (its manifest's, or its
// footer's: pqscan.ColumnStats) to the table's schema sc. Only top-level
// primitive columns that sc has (by name) are described; nested ones, and
// the partition columns (not in the files), have none, which readers take
// as "unknown", never as "empty". Bounds are written in Iceberg's
// single-value serialization where the column's bound type fits the
// field's type: boolean, int (an int field; a long field of 32-bit
// values), long, date, timestamp (micros: timestamp and timestamptz
// fields) and string (already truncated as Java Iceberg does).
func statsFrom(cols []manifest.ColumnStats, sc *iceberg.Schema) fileStats {
	st := fileStats{
		sizes: map[int]int64{}, values: map[int]int64{}, nulls: map[int]int64{},
		lower: map[int][]byte{}, upper: map[int][]byte{},
	}
	for _, c := range cols {
		i := slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.Name == c.Name })
		if i < 0 {
			continue
		}
		field := sc.Field(i)
		if _, primitive := field.Type.(iceberg.PrimitiveType); !primitive {
			continue
		}
		id := field.ID
		st.sizes[id], st.values[id] = c.Size, c.Values
		if c.Nulls >= 0 {
			st.nulls[id] = c.Nulls
		}
		conv := boundBytes(field.Type, c.Type)
		if conv == nil {
			continue
		}
		if b, ok := conv(c.Min); ok && c.Min != "" {
			st.lower[id] = b
		}
		if b, ok := conv(c.Max); ok && c.Max != "" {
			st.upper[id] = b
		}
	}
	return st
}

// boundBytes returns how to serialize a bound of bound type bt (a
// manifest's) for a field of Iceberg type t, or nil when the pair gets no
// bounds.
func boundBytes(t iceberg.Type, bt string) func(string) ([]byte, bool) {
	integer := func(bits, width int) func(string) ([]byte, bool) {
		return func(v string) ([]byte, bool) {
			n, err := strconv.ParseInt(v, 10, bits)
			if err != nil {
				return nil, false
			}
			b := make([]byte, width)
			if width == 4 {
				binary.LittleEndian.PutUint32(b, uint32(int32(n)))
			} else {
				binary.LittleEndian.PutUint64(b, uint64(n))
			}
			return b, true
		}
	}
	switch {
	case t.Equals(iceberg.PrimitiveTypes.Bool) && bt == manifest.BoundBoolean:
		return func(v string) ([]byte, bool) {
			switch v {
			case "true":
				return []byte{1}, true
			case "false":
				return []byte{0}, true
			}
			return nil, false
		}
	case t.Equals(iceberg.PrimitiveTypes.Int32) && bt == manifest.BoundInt:
		return integer(32, 4)
	case t.Equals(iceberg.PrimitiveTypes.Int64) && (bt == manifest.BoundInt || bt == manifest.BoundLong):
		return integer(64, 8)
	case t.Equals(iceberg.PrimitiveTypes.Date) && bt == manifest.BoundDate:
		return integer(32, 4)
	case (t.Equals(iceberg.PrimitiveTypes.Timestamp) || t.Equals(iceberg.PrimitiveTypes.TimestampTz)) && bt == manifest.BoundTimestamp:
		return integer(64, 8)
	case t.Equals(iceberg.PrimitiveTypes.String) && bt == manifest.BoundString:
		return func(v string) ([]byte, bool) { return []byte(v), utf8.ValidString(v) }
	}
	return nil
}

// columns returns a data file's column statistics: those its manifest
// records (written since manifest version 1.2, by the writer that had the
// footer in hand), else its footer's, read once per publish (its data
// never changes under its key), or nil when it cannot be read: the file's
// entry then has no statistics, which costs readers pruning, never rows.
// A transient failure is retried like the publish's other reads.
func (p *publisher) columns(ctx context.Context, f swap.FileRef) []manifest.ColumnStats {
	if f.Columns != nil {
		return f.Columns
	}
	p.mu.Lock()
	cols, ok := p.footers[f.Key]
	p.mu.Unlock()
	if ok {
		return cols
	}
	var md *metadata.FileMetaData
	_ = p.retryRead(ctx, func() (err error) {
		md, err = readFooter(ctx, p.st, f)
		return err
	})
	if md == nil && ctx.Err() != nil {
		return nil // cancelled (another read of the plan failed): read it again later
	}
	cols = pqscan.ColumnStats(md)
	p.mu.Lock()
	p.footers[f.Key] = cols
	p.mu.Unlock()
	return cols
}

// readFooters reads the footers of the files whose manifest records no
// column statistics, Concurrency at once (in order when 1), for the
// entries of a generation: none for a generation written since manifest
// version 1.2.
func (p *publisher) readFooters(ctx context.Context, g *errgroup.Group, files []swap.FileRef) {
	for _, f := range files {
		if f.Columns != nil {
			continue
		}
		g.Go(func() error {
			if ctx.Err() == nil { // not after another read of the group failed
				p.columns(ctx, f)
			}
			return nil
		})
	}
}

// withStats adds a file's column statistics to its entry's builder.
func withStats(db *iceberg.DataFileBuilder, cols []manifest.ColumnStats, sc *iceberg.Schema) {
	if cols == nil {
		return
	}
	st := statsFrom(cols, sc)
	db.ColumnSizes(st.sizes).ValueCounts(st.values).NullValueCounts(st.nulls).LowerBoundValues(st.lower).UpperBoundValues(st.upper)
}

// sortedStats puts a built data file's statistics maps in key order.
// iceberg-go keeps each as a slice filled by ranging over the Go map it was
// given, so the manifest's bytes would differ from run to run (Go's map
// order is random), and a publish with injected sources would not repeat
// byte for byte (TestInjectedSourcesAreDeterministic). The fields are
// exported slices of key/value records; anything else is left as it is.
func sortedStats(df iceberg.DataFile) iceberg.DataFile {
	v := reflect.ValueOf(df)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return df
	}
	for _, name := range []string{"ColSizes", "ValCounts", "NullCounts", "LowerBounds", "UpperBounds"} {
		f := v.Elem().FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.Slice {
			continue
		}
		s := f.Elem()
		if s.Type().Elem().Kind() != reflect.Struct {
			continue
		}
		key := func(i int) int64 {
			k := s.Index(i).FieldByName("Key")
			if !k.IsValid() || !k.CanInt() {
				return 0
			}
			return k.Int()
		}
		sort.SliceStable(s.Interface(), func(i, j int) bool { return key(i) < key(j) })
	}
	return df
}
