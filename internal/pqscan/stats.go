package pqscan

import (
	"encoding/binary"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/pswap/pswap/manifest"
)

// ColumnStats returns the statistics of the flat top-level columns of a
// Parquet footer, as a manifest records them for the file
// (manifest.File.Columns): the one place they are derived, for the writer
// that has the footer in hand (staging, adopt) and for the publisher that
// reads the footer of a file whose manifest predates them.
//
// Sizes and value counts are sums over the row groups, null counts too
// when every row group has one: from the chunk's statistics, or for an
// INT96 column (whose statistics Arrow's reader ignores, INT96 having no
// defined order) from the null count the footer records all the same.
// Bounds are recorded only where they are exact and every row group with
// values has them: booleans, signed INT32 and INT64 integers, dates,
// timestamps in micro- or milliseconds (as microseconds) and UTF-8 strings
// (truncated to manifest.StringBoundRunes code points: the lower bound a
// prefix, the upper one a prefix with its last code point incremented).
// Floating point (NaN is not in Parquet's bounds), decimals, binaries,
// unsigned integers, nanosecond and INT96 timestamps get none: a missing
// bound costs pruning, a wrong one costs rows. A column whose statistics
// break the manifest's rules (a writer's bug) is left out, and a footer
// Arrow cannot decode gives nil (unknown), never a panic, and columns that
// share their name with another get none. The result is never nil
// otherwise.
func ColumnStats(md *metadata.FileMetaData) (cols []manifest.ColumnStats) {
	defer func() {
		if recover() != nil {
			cols = nil
		}
	}()
	cols = []manifest.ColumnStats{}
	if md == nil || md.Schema == nil {
		return nil
	}
	for c := 0; c < md.Schema.NumColumns(); c++ {
		col := md.Schema.Column(c)
		if len(col.ColumnPath()) != 1 || col.MaxRepetitionLevel() != 0 {
			continue
		}
		s, ok := columnStats(md, c, col)
		if ok && s.Validate() == nil {
			cols = append(cols, s)
		}
	}
	if len(cols) > manifest.MaxStatsColumns {
		return nil
	}
	// Two top-level columns of one name (which Parquet allows): a reader
	// maps statistics by name, so neither gets any.
	seen := make(map[string]int, len(cols))
	for _, c := range cols {
		seen[c.Name]++
	}
	return slices.DeleteFunc(cols, func(c manifest.ColumnStats) bool { return seen[c.Name] > 1 })
}

// columnStats sums column c's statistics over the row groups.
func columnStats(md *metadata.FileMetaData, c int, col *schema.Column) (manifest.ColumnStats, bool) {
	typ, conv := boundConverter(col)
	var (
		s           = manifest.ColumnStats{Name: col.Name()}
		nulls       int64
		nullsKnown  = true
		lo, hi      bound
		boundsKnown = conv != nil
	)
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		cc, err := md.RowGroup(rg).ColumnChunk(c)
		if err != nil {
			return s, false
		}
		s.Size += cc.TotalCompressedSize()
		s.Values += cc.NumValues()
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() {
			boundsKnown = false
			if n, ok := rawNullCount(md, rg, c, col); ok {
				nulls += n
			} else {
				nullsKnown = false
			}
			continue
		}
		nulls += st.NullCount()
		if !boundsKnown || st.NullCount() == cc.NumValues() {
			continue // no values: no bounds to add
		}
		if !st.HasMinMax() {
			boundsKnown = false
			continue
		}
		min, max, ok := conv(st)
		if !ok {
			boundsKnown = false
			continue
		}
		lo, hi = lo.lower(min), hi.upper(max)
	}
	s.Nulls = -1
	if nullsKnown {
		s.Nulls = nulls
	}
	if !boundsKnown || !lo.set {
		return s, true
	}
	s.Type = typ
	if typ != manifest.BoundString {
		s.Min, s.Max = lo.text(), hi.text()
		return s, true
	}
	s.Min = string(truncateLower(lo.s))
	if u, ok := truncateUpper(hi.s); ok {
		s.Max = string(u)
	}
	if s.Min == "" && s.Max == "" {
		s.Type = ""
	}
	return s, true
}

// rawNullCount is the null count the footer records for column c of row
// group rg when Arrow's reader does not take its statistics: for INT96,
// which has no defined sort order (so no usable bounds), but whose null
// count writers record all the same.
func rawNullCount(md *metadata.FileMetaData, rg, c int, col *schema.Column) (int64, bool) {
	if col.PhysicalType() != parquet.Types.Int96 || md.FileMetaData == nil {
		return 0, false
	}
	rgs := md.GetRowGroups()
	if rg >= len(rgs) || c >= len(rgs[rg].GetColumns()) {
		return 0, false
	}
	st := rgs[rg].GetColumns()[c].GetMetaData().GetStatistics()
	if st == nil || !st.IsSetNullCount() || st.GetNullCount() < 0 {
		return 0, false
	}
	return st.GetNullCount(), true
}

// bound is a running bound: a number or a string.
type bound struct {
	set bool
	n   int64
	s   []byte
	typ string
}

func (b bound) less(o bound) bool {
	if b.typ == manifest.BoundString {
		return string(b.s) < string(o.s)
	}
	return b.n < o.n
}

func (b bound) lower(o bound) bound {
	if !b.set || o.less(b) {
		return o
	}
	return b
}

func (b bound) upper(o bound) bound {
	if !b.set || b.less(o) {
		return o
	}
	return b
}

// text is the bound as the manifest writes it.
func (b bound) text() string {
	if b.typ == manifest.BoundBoolean {
		return strconv.FormatBool(b.n != 0)
	}
	return strconv.FormatInt(b.n, 10)
}

// boundConverter returns the bound type of a column and how to read a
// chunk's min and max, or nil when the column gets no bounds.
func boundConverter(col *schema.Column) (string, func(metadata.TypedStatistics) (min, max bound, ok bool)) {
	lt := col.LogicalType()
	num := func(typ string, n int64) bound { return bound{set: true, n: n, typ: typ} }
	switch phys := col.PhysicalType(); {
	case phys == parquet.Types.Boolean:
		return manifest.BoundBoolean, func(s metadata.TypedStatistics) (bound, bound, bool) {
			bs := s.(*metadata.BooleanStatistics)
			b := func(v bool) bound {
				if v {
					return num(manifest.BoundBoolean, 1)
				}
				return num(manifest.BoundBoolean, 0)
			}
			return b(bs.Min()), b(bs.Max()), true
		}
	case phys == parquet.Types.Int32 && (signedInt(lt) || isDate(lt)):
		typ := manifest.BoundInt
		if isDate(lt) {
			typ = manifest.BoundDate
		}
		return typ, func(s metadata.TypedStatistics) (bound, bound, bool) {
			is := s.(*metadata.Int32Statistics)
			return num(typ, int64(is.Min())), num(typ, int64(is.Max())), true
		}
	case phys == parquet.Types.Int64 && signedInt(lt):
		return manifest.BoundLong, int64Stats(manifest.BoundLong, 1)
	case phys == parquet.Types.Int64:
		ts, ok := lt.(schema.TimestampLogicalType)
		if !ok {
			return "", nil
		}
		switch ts.TimeUnit() {
		case schema.TimeUnitMicros:
			return manifest.BoundTimestamp, int64Stats(manifest.BoundTimestamp, 1)
		case schema.TimeUnitMillis:
			return manifest.BoundTimestamp, int64Stats(manifest.BoundTimestamp, 1000)
		}
	case phys == parquet.Types.ByteArray:
		if _, ok := lt.(schema.StringLogicalType); !ok {
			return "", nil
		}
		return manifest.BoundString, func(s metadata.TypedStatistics) (bound, bound, bool) {
			bs := s.(*metadata.ByteArrayStatistics)
			min, max := bs.Min(), bs.Max()
			if !utf8.Valid(min) || !utf8.Valid(max) {
				return bound{}, bound{}, false
			}
			str := func(v []byte) bound {
				return bound{set: true, s: append([]byte(nil), v...), typ: manifest.BoundString}
			}
			return str(min), str(max), true
		}
	}
	return "", nil
}

func isDate(lt schema.LogicalType) bool {
	_, ok := lt.(schema.DateLogicalType)
	return ok
}

// signedInt reports whether a column of an integer physical type holds
// signed integers with no other meaning.
func signedInt(lt schema.LogicalType) bool {
	switch l := lt.(type) {
	case schema.NoLogicalType, nil:
		return true
	case schema.IntLogicalType:
		return l.IsSigned()
	}
	return false
}

// int64Stats reads INT64 statistics scaled by scale (a millisecond
// timestamp read as microseconds), none when that overflows.
func int64Stats(typ string, scale int64) func(metadata.TypedStatistics) (bound, bound, bool) {
	return func(s metadata.TypedStatistics) (bound, bound, bool) {
		is := s.(*metadata.Int64Statistics)
		min, max := is.Min(), is.Max()
		const limit = int64(1) << 53 // far beyond any timestamp in milliseconds
		if scale != 1 && (min <= -limit || max >= limit) {
			return bound{}, bound{}, false
		}
		return bound{set: true, n: min * scale, typ: typ}, bound{set: true, n: max * scale, typ: typ}, true
	}
}

// truncateLower is the first StringBoundRunes code points of s: a prefix
// sorts at or before s.
func truncateLower(s []byte) []byte {
	return prefix(s, manifest.StringBoundRunes)
}

// truncateUpper is s itself when short enough, else its first
// StringBoundRunes code points with the last one that can be incremented
// incremented (and what follows it dropped), which sorts after every
// string with that prefix; false when no code point can be (all are the
// highest): then there is no upper bound.
func truncateUpper(s []byte) ([]byte, bool) {
	p := prefix(s, manifest.StringBoundRunes)
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

// ColumnStatsOfTail returns the column statistics (ColumnStats) of a
// Parquet file from its last bytes, tail, which hold its footer: what a
// writer whose encoder does not hand out its footer (parquet-go's) has
// in hand. Nil when tail does not hold a whole plain footer.
func ColumnStatsOfTail(tail []byte) (cols []manifest.ColumnStats) {
	defer func() {
		if recover() != nil {
			cols = nil // a footer Arrow's parser panics on: unknown
		}
	}()
	n := len(tail)
	if n < 12 || string(tail[n-4:]) != "PAR1" {
		return nil
	}
	size := int(binary.LittleEndian.Uint32(tail[n-8 : n-4]))
	if size <= 0 || size > n-8 {
		return nil
	}
	md, err := metadata.NewFileMetaData(tail[n-8-size:n-8], nil)
	if err != nil {
		return nil
	}
	return ColumnStats(md)
}
