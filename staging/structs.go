package staging

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"

	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	pq "github.com/parquet-go/parquet-go"
)

// structInfo caches what Write needs for one Go type.
type structInfo struct {
	schema *pq.Schema
	tags   []pq.WriterOption // struct tag replacements the schema was derived with (see retimed)
	canon  *pqscan.Schema
	encs   []checksum.ParquetEnc // by leaf column index
	fast   []fieldEnc            // direct field encoders, or nil
	fold   *checksum.RowFolder   // the content checksum of one row (one goroutine at a time)
}

// slowStructHash disables the direct field encoders (for tests).
var slowStructHash = false

func (s *Stager) structInfoFor(t reflect.Type, zero any) (si *structInfo, err error) {
	if si, ok := s.structs[t]; ok {
		return si, nil
	}
	si, err = s.newStructInfo(t, zero, nil)
	if err != nil {
		return nil, err
	}
	s.structs[t] = si
	return si, nil
}

// newStructInfo derives the schema of Go type t (zero is a zero value of
// it) with the struct tag replacements tags.
func (s *Stager) newStructInfo(t reflect.Type, zero any, tags []pq.StructTagOption) (si *structInfo, err error) {
	st := t
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: Write needs a struct type, got %s", ErrUnsupported, t)
	}
	defer func() {
		// parquet-go panics on struct tags it cannot map.
		if r := recover(); r != nil {
			si, err = nil, fmt.Errorf("%w: %s: %v", ErrUnsupported, t, r)
		}
	}()
	var sopts []pq.SchemaOption
	var wopts []pq.WriterOption
	for i := range tags {
		sopts, wopts = append(sopts, &tags[i]), append(wopts, &tags[i])
	}
	ps := pq.SchemaOf(zero, sopts...)
	canon, err := canonOfParquetGo(t, ps, append(wopts, s.pqOpts...))
	if err != nil {
		return nil, err
	}
	leaves := ps.Columns()
	if len(leaves) != canon.Arrow.NumFields() {
		return nil, fmt.Errorf("%w: %s has nested fields", ErrUnsupported, t)
	}
	si = &structInfo{schema: ps, tags: wopts, canon: canon, encs: make([]checksum.ParquetEnc, len(leaves)), fold: checksum.NewRowFolder(len(leaves), s.opts.LegacyChecksum)}
	for i, path := range leaves {
		leaf, ok := ps.Lookup(path...)
		if !ok || leaf.MaxRepetitionLevel > 0 || leaf.MaxDefinitionLevel > 1 {
			return nil, fmt.Errorf("%w: %s: column %v is repeated or nested", ErrUnsupported, t, path)
		}
		if si.encs[i], err = checksum.ParquetEncoder(leaf.Node.Type(), canon.Arrow.Field(i).Type); err != nil {
			return nil, fmt.Errorf("staging: %s column %v: %w", t, path, err)
		}
	}
	if err := probeKinds(st, ps, leaves); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsupported, t, err)
	}
	if !slowStructHash {
		si.fast = fastEncoders(t, ps, leaves, canon.Arrow)
	}
	return si, nil
}

// writerOptions are the options of a parquet-go writer of the type's rows:
// its schema and tag replacements, then opts.
func (si *structInfo) writerOptions(opts []pq.WriterOption) []pq.WriterOption {
	return append(append([]pq.WriterOption{si.schema}, si.tags...), opts...)
}

// retimed returns the type's struct info with its time.Time fields stored
// in the timestamp units of target (the schema the table stores the data
// in), or nil when that does not make the type's schema target's. A
// time.Time is a timestamp in nanoseconds by default (parquet-go's);
// Iceberg v2 tables hold microseconds, and a Go type cannot be converted
// after it is written, so its writer writes microseconds instead
// (time.Time.UnixMicro: the digits below the microsecond are dropped, as
// by t.Truncate(time.Microsecond) for times after 1970).
func (s *Stager) retimed(t reflect.Type, zero any, si *structInfo, target *pqscan.Schema) *structInfo {
	st := t
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	var tags []pq.StructTagOption
	var walk func(st reflect.Type)
	walk = func(st reflect.Type) {
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			if !f.IsExported() || (f.Type != timeType && f.Type != reflect.PointerTo(timeType)) {
				continue
			}
			v, _ := f.Tag.Lookup("parquet")
			name, opts := splitParquetTag(v)
			col := name
			if col == "" {
				col = f.Name
			}
			tf, ok := target.Arrow.FieldsByName(col)
			if !ok || len(tf) != 1 {
				continue
			}
			tt, ok := tf[0].Type.(*arrow.TimestampType)
			if !ok {
				continue
			}
			unit := map[arrow.TimeUnit]string{arrow.Millisecond: "millisecond", arrow.Microsecond: "microsecond", arrow.Nanosecond: "nanosecond"}[tt.Unit]
			if unit == "" {
				return
			}
			zone := "local"
			if tt.TimeZone != "" {
				zone = "utc"
			}
			kept := []string{name}
			for _, o := range opts {
				if !strings.HasPrefix(o, "timestamp") {
					kept = append(kept, o)
				}
			}
			tag := "parquet:" + strconv.Quote(strings.Join(append(kept, "timestamp("+unit+":"+zone+")"), ","))
			if raw := string(f.Tag); v != "" || strings.Contains(raw, "parquet:") {
				old := "parquet:" + strconv.Quote(v)
				if !strings.Contains(raw, old) {
					return // a tag written in a way this does not rewrite
				}
				tag = strings.Replace(raw, old, tag, 1)
			} else if raw != "" {
				tag += " " + raw
			}
			tags = append(tags, pq.StructTagOption{ColumnPath: []string{f.Name}, StructTag: reflect.StructTag(tag)})
		}
	}
	walk(st)
	if len(tags) == 0 {
		return nil
	}
	out, err := s.newStructInfo(t, zero, tags)
	if err != nil || !out.canon.Equal(target) {
		return nil
	}
	return out
}

// splitParquetTag splits a parquet struct tag into the column name and its
// options, at the commas outside parentheses ("x,decimal(9,2),optional").
func splitParquetTag(v string) (name string, opts []string) {
	depth, start := 0, 0
	var parts []string
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, v[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, v[start:])
	return parts[0], parts[1:]
}

// probeKinds deconstructs a sample value of struct type st, with every
// pointer field set, and checks that parquet-go produces values of each
// column's physical type. (parquet-go v0.32 deconstructs a time.Time with
// the date tag into an INT64 of nanoseconds for an INT32 column, which
// would write wrong dates.)
func probeKinds(st reflect.Type, ps *pq.Schema, leaves [][]string) error {
	probe := reflect.New(st)
	for i := 0; i < st.NumField(); i++ {
		f := probe.Elem().Field(i)
		if f.Kind() == reflect.Pointer && f.CanSet() {
			f.Set(reflect.New(f.Type().Elem()))
		}
	}
	for _, v := range ps.Deconstruct(nil, probe.Interface()) {
		if v.IsNull() {
			continue
		}
		leaf, _ := ps.Lookup(leaves[v.Column()]...)
		if want := leaf.Node.Type().Kind(); v.Kind() != want {
			return fmt.Errorf("column %v: parquet-go produces %s values for a %s column (for dates use an int32 of days since 1970-01-01 with the date tag)",
				leaves[v.Column()], v.Kind(), want)
		}
	}
	return nil
}

// structBatch is the number of rows hashed and written per step; the
// rollover and row group checks run between steps.
const structBatch = 1024

// parallelHash: hash the structs of a Write call on another goroutine while
// they are encoded, where there is more than one CPU to run them.
var parallelHash = runtime.GOMAXPROCS(0) > 1

// hashBeside runs hash, which adds the content checksum of an input's rows
// to the checksum.Sums it is given, on a second goroutine when beside is true, else
// at once. The returned wait waits for it, adds its checksum.Sums to the
// generation's (the checksum is a sum: which file a row lands in does not
// count) and returns its error; callers defer it, so that nothing reads the
// caller's rows after the call returns.
func (s *Stager) hashBeside(beside bool, hash func(*checksum.Sums) error) (wait func() error) {
	var hsum checksum.Sums
	if !beside {
		err := hash(&hsum)
		s.sum.Add(hsum)
		return func() error { return err }
	}
	done := make(chan error, 1)
	go func() { done <- hash(&hsum) }()
	return func() error {
		err := <-done
		s.sum.Add(hsum)
		return err
	}
}

// Write appends rows of a Go struct type, written through parquet-go's
// generic writer: fields map to columns as parquet-go's struct tags say
// (`parquet:"name,optional,snappy,..."`; pointer fields are optional,
// time.Time is a timestamp, `decimal(p,s)` tags are decimals). Columns must
// be flat (no slices, maps or nested structs).
//
// Write with no rows still establishes (or checks) the schema.
func Write[T any](s *Stager, rows ...T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if err := writeStructs(s, rows); err != nil {
		return s.fail(err)
	}
	return nil
}

func writeStructs[T any](s *Stager, rows []T) error {
	var zero T
	t := reflect.TypeFor[T]()
	si, err := s.structInfoFor(t, zero)
	if err != nil {
		return err
	}
	if err := s.setSchema("Go type "+t.String(), si.canon); err != nil {
		cv := asConversion(err)
		if cv == nil {
			return err
		}
		// Stored in other timestamp units (nanoseconds into a table's
		// microseconds): written in those units, or refused.
		re := s.retimed(t, zero, si, cv.canon)
		if re == nil {
			return err
		}
		if err := s.setSchema("Go type "+t.String(), re.canon); err != nil {
			return err
		}
		si = re
		s.structs[t] = si
	}
	if t.Kind() == reflect.Pointer {
		for i := range rows {
			if reflect.ValueOf(&rows[i]).Elem().IsNil() {
				return fmt.Errorf("%w: Write: nil %s", ErrBadInput, t)
			}
		}
	}
	// The row hash of all the call's rows runs on a second core while
	// parquet-go encodes them batch by batch (or copies them for the
	// encoders): both only read the rows. One hand-off per call, not one
	// per batch: per batch, the hasher and the encoder kept waiting on
	// each other and the second core did not pay.
	if all := rows; si.fast != nil {
		wait := s.hashBeside(parallelHash && len(all) >= 256, func(h *checksum.Sums) error {
			if si.fold.Legacy {
				hashFast(s, si, all, h)
			} else {
				hashCols(si, all, h)
			}
			return nil
		})
		defer wait()
	}
	var row pq.Row
	for len(rows) > 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		n := min(len(rows), structBatch)
		batch := rows[:n]
		rows = rows[n:]

		pp, err := structPipeFor[T](s, si)
		if err != nil {
			return err
		}
		for i := 0; si.fast == nil && i < len(batch); i++ {
			row = si.schema.Deconstruct(row[:0], &batch[i])
			b := s.buf[:0]
			si.fold.Begin()
			for _, v := range row {
				start := len(b)
				if v.IsNull() {
					b = append(b, checksum.TagNull)
				} else {
					b = si.encs[v.Column()](b, v)
				}
				si.fold.Value(b[start:])
				if !si.fold.Legacy {
					b = b[:0]
				}
			}
			s.buf = b
			si.fold.End(&s.cur.sum, b)
		}
		// Chunks of rows are encoded on their own goroutines (parallel.go).
		if err := pp.write(batch); err != nil {
			return err
		}
		if err := pp.commitReady(); err != nil {
			return err
		}
	}
	return nil
}
