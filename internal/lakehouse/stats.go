package lakehouse

import (
	"context"
	"encoding/binary"
	"reflect"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/swap"
)

// fileStats are a data file's column statistics for its manifest entry,
// keyed by Iceberg field id: what engines prune files by (a filter on a
// data column skips the files whose bounds exclude it).
type fileStats struct {
	sizes, values, nulls map[int]int64
	lower, upper         map[int][]byte
}

// statsOf reads the column statistics of a Parquet footer for the table's
// schema sc. Only top-level primitive columns that sc has (by name) are
// described; nested ones, and the partition columns (not in the files),
// have none, which readers take as "unknown", never as "empty".
//
// Counts are sums over the row groups, and null counts only when every
// row group has one. Bounds are written only where they are exact in
// Iceberg's terms and every row group with values has them: int, long,
// date, timestamp (micros, or millis scaled), boolean and string (UTF-8
// in Parquet's byte order, truncated to 16 code points as Java Iceberg
// does: the lower bound a prefix, the upper one a prefix with its last
// code point incremented). Floating-point columns get none (NaN is not
// in Parquet's bounds), nor do decimals, binaries, unsigned integers and
// timestamps in nanoseconds or INT96: a missing bound costs pruning, a
// wrong one costs rows.
func statsOf(md *metadata.FileMetaData, sc *iceberg.Schema) fileStats {
	st := fileStats{
		sizes: map[int]int64{}, values: map[int]int64{}, nulls: map[int]int64{},
		lower: map[int][]byte{}, upper: map[int][]byte{},
	}
	for c := 0; c < md.Schema.NumColumns(); c++ {
		col := md.Schema.Column(c)
		path := col.ColumnPath()
		if len(path) != 1 || col.MaxRepetitionLevel() != 0 {
			continue
		}
		i := slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.Name == path[0] })
		if i < 0 {
			continue
		}
		field := sc.Field(i)
		if _, primitive := field.Type.(iceberg.PrimitiveType); !primitive {
			continue
		}
		columnStats(md, c, col, field, &st)
	}
	return st
}

// columnStats adds column c's statistics (field) to st.
func columnStats(md *metadata.FileMetaData, c int, col *schema.Column, field iceberg.NestedField, st *fileStats) {
	conv := boundConverter(field.Type, col)
	var (
		size, values, nulls int64
		nullsKnown          = true
		lo, hi              bound
		boundsKnown         = conv != nil
	)
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		cc, err := md.RowGroup(rg).ColumnChunk(c)
		if err != nil {
			return
		}
		size += cc.TotalCompressedSize()
		values += cc.NumValues()
		s, err := cc.Statistics()
		if err != nil || s == nil || !s.HasNullCount() {
			nullsKnown, boundsKnown = false, false
			continue
		}
		nulls += s.NullCount()
		if !boundsKnown || s.NullCount() == cc.NumValues() {
			continue // no values: no bounds to add
		}
		if !s.HasMinMax() {
			boundsKnown = false
			continue
		}
		min, max, ok := conv(s)
		if !ok {
			boundsKnown = false
			continue
		}
		lo, hi = lo.lower(min), hi.upper(max)
	}
	id := field.ID
	st.sizes[id], st.values[id] = size, values
	if nullsKnown {
		st.nulls[id] = nulls
	}
	if !boundsKnown || lo.v == nil {
		return
	}
	if field.Type.Equals(iceberg.PrimitiveTypes.String) {
		l, lok := truncateLower(lo.v)
		u, uok := truncateUpper(hi.v)
		if lok {
			st.lower[id] = l
		}
		if uok {
			st.upper[id] = u
		}
		return
	}
	st.lower[id], st.upper[id] = lo.v, hi.v
}

// bound is a running bound in Iceberg's single-value serialization, with
// the key it compares by.
type bound struct {
	v   []byte // nil: none yet
	key boundKey
}

// boundKey orders values of one column: n for numbers, s for strings
// (bytewise, UTF-8's code point order).
type boundKey struct {
	n int64
	s string
}

func (k boundKey) less(o boundKey) bool {
	if k.s != o.s {
		return k.s < o.s
	}
	return k.n < o.n
}

func (b bound) lower(o bound) bound {
	if b.v == nil || o.key.less(b.key) {
		return o
	}
	return b
}

func (b bound) upper(o bound) bound {
	if b.v == nil || b.key.less(o.key) {
		return o
	}
	return b
}

// boundConverter returns how to read a column chunk's min and max as
// Iceberg bounds of type t, or nil when this pairing of Iceberg type and
// Parquet column gets no bounds.
func boundConverter(t iceberg.Type, col *schema.Column) func(metadata.TypedStatistics) (min, max bound, ok bool) {
	lt := col.LogicalType()
	switch {
	case t.Equals(iceberg.PrimitiveTypes.Bool) && col.PhysicalType() == parquet.Types.Boolean:
		return func(s metadata.TypedStatistics) (bound, bound, bool) {
			bs := s.(*metadata.BooleanStatistics)
			return boolBound(bs.Min()), boolBound(bs.Max()), true
		}
	case t.Equals(iceberg.PrimitiveTypes.Int32) && signedInt(lt, col.PhysicalType(), 32):
		return int32Stats(4, 1)
	case t.Equals(iceberg.PrimitiveTypes.Int64) && signedInt(lt, col.PhysicalType(), 32):
		return int32Stats(8, 1)
	case t.Equals(iceberg.PrimitiveTypes.Int64) && signedInt(lt, col.PhysicalType(), 64):
		return int64Stats(1)
	case t.Equals(iceberg.PrimitiveTypes.Date) && col.PhysicalType() == parquet.Types.Int32 && isDate(lt):
		return int32Stats(4, 1)
	case (t.Equals(iceberg.PrimitiveTypes.Timestamp) || t.Equals(iceberg.PrimitiveTypes.TimestampTz)) && col.PhysicalType() == parquet.Types.Int64:
		ts, ok := lt.(schema.TimestampLogicalType)
		if !ok {
			return nil
		}
		switch ts.TimeUnit() {
		case schema.TimeUnitMicros:
			return int64Stats(1)
		case schema.TimeUnitMillis:
			return int64Stats(1000)
		}
	case t.Equals(iceberg.PrimitiveTypes.String) && col.PhysicalType() == parquet.Types.ByteArray && isString(lt):
		return func(s metadata.TypedStatistics) (bound, bound, bool) {
			bs := s.(*metadata.ByteArrayStatistics)
			min, max := string(bs.Min()), string(bs.Max())
			if !utf8.ValidString(min) || !utf8.ValidString(max) {
				return bound{}, bound{}, false
			}
			return bound{[]byte(min), boundKey{s: min}}, bound{[]byte(max), boundKey{s: max}}, true
		}
	}
	return nil
}

func isDate(lt schema.LogicalType) bool {
	_, ok := lt.(schema.DateLogicalType)
	return ok
}

func isString(lt schema.LogicalType) bool {
	_, ok := lt.(schema.StringLogicalType)
	return ok
}

// signedInt reports whether a column holds signed integers of the
// physical width bits (INT32 or INT64) with no other meaning.
func signedInt(lt schema.LogicalType, phys parquet.Type, bits int) bool {
	want := parquet.Types.Int32
	if bits == 64 {
		want = parquet.Types.Int64
	}
	if phys != want {
		return false
	}
	switch l := lt.(type) {
	case schema.NoLogicalType, nil:
		return true
	case schema.IntLogicalType:
		return l.IsSigned()
	}
	return false
}

func boolBound(v bool) bound {
	if v {
		return bound{[]byte{1}, boundKey{n: 1}}
	}
	return bound{[]byte{0}, boundKey{}}
}

// int32Stats reads INT32 statistics as bounds of width bytes (4: int,
// date; 8: a long column stored as INT32), scaled by scale.
func int32Stats(width int, scale int64) func(metadata.TypedStatistics) (bound, bound, bool) {
	return func(s metadata.TypedStatistics) (bound, bound, bool) {
		is := s.(*metadata.Int32Statistics)
		return intBound(int64(is.Min())*scale, width), intBound(int64(is.Max())*scale, width), true
	}
}

// int64Stats reads INT64 statistics as 8-byte bounds scaled by scale (a
// millisecond timestamp read as microseconds), none when that overflows.
func int64Stats(scale int64) func(metadata.TypedStatistics) (bound, bound, bool) {
	return func(s metadata.TypedStatistics) (bound, bound, bool) {
		is := s.(*metadata.Int64Statistics)
		min, max := is.Min(), is.Max()
		const limit = int64(1) << 53 // far beyond any timestamp in milliseconds
		if scale != 1 && (min <= -limit || max >= limit) {
			return bound{}, bound{}, false
		}
		return intBound(min*scale, 8), intBound(max*scale, 8), true
	}
}

// intBound is v in Iceberg's little-endian serialization of width bytes.
func intBound(v int64, width int) bound {
	b := make([]byte, width)
	if width == 4 {
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
	} else {
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
	return bound{b, boundKey{n: v}}
}

// truncateLength is how many code points of a string bound are kept
// (Java Iceberg's default metrics mode, truncate(16)).
const truncateLength = 16

// truncateLower is the first truncateLength code points of s: a prefix
// sorts at or before s.
func truncateLower(s []byte) ([]byte, bool) {
	return prefix(s, truncateLength), true
}

// truncateUpper is s itself when short enough, else its first
// truncateLength code points with the last one that can be incremented
// incremented (and what follows it dropped), which sorts after every
// string with that prefix; false when no code point can be (all are the
// highest): then there is no upper bound.
func truncateUpper(s []byte) ([]byte, bool) {
	p := prefix(s, truncateLength)
	if len(p) == len(s) {
		return s, true
	}
	runes := []rune(string(p))
	for i := len(runes) - 1; i >= 0; i-- {
		next := runes[i] + 1
		if next == 0xD800 { // surrogates are not characters
			next = 0xE000
		}
		if next <= utf8.MaxRune {
			return []byte(string(append(runes[:i:i], next))), true
		}
	}
	return nil, false
}

// prefix is the first n code points of s (s is valid UTF-8).
func prefix(s []byte, n int) []byte {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRune(s[i:])
		i += size
	}
	return s[:i]
}

// footer returns a data file's footer, read once per publish (its data
// never changes under its key), or nil when it cannot be read: the file's
// entry then has no statistics, which costs readers pruning, never rows.
// A transient failure is retried like the publish's other reads.
func (p *publisher) footer(ctx context.Context, f swap.FileRef) *metadata.FileMetaData {
	p.mu.Lock()
	md, ok := p.footers[f.Key]
	p.mu.Unlock()
	if ok {
		return md
	}
	_ = p.retryRead(ctx, func() (err error) {
		md, err = readFooter(ctx, p.st, f)
		return err
	})
	if md == nil && ctx.Err() != nil {
		return nil // cancelled (another read of the plan failed): read it again later
	}
	p.mu.Lock()
	p.footers[f.Key] = md
	p.mu.Unlock()
	return md
}

// readFooters reads the footers of files, Concurrency at once (in order
// when 1), for the entries of a generation.
func (p *publisher) readFooters(ctx context.Context, g *errgroup.Group, files []swap.FileRef) {
	for _, f := range files {
		g.Go(func() error {
			if ctx.Err() == nil { // not after another read of the group failed
				p.footer(ctx, f)
			}
			return nil
		})
	}
}

// withStats adds a file's column statistics to its entry's builder.
func withStats(db *iceberg.DataFileBuilder, md *metadata.FileMetaData, sc *iceberg.Schema) {
	if md == nil {
		return
	}
	st := statsOf(md, sc)
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
