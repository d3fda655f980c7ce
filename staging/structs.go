package staging

import (
	"fmt"
	"reflect"
	"runtime"

	pq "github.com/parquet-go/parquet-go"
)

// structInfo caches what Write needs for one Go type.
type structInfo struct {
	schema *pq.Schema
	canon  *canonSchema
	encs   []pqEnc    // by leaf column index
	fast   []fieldEnc // direct field encoders, or nil
	fold   *rowFolder // the content checksum of one row (one goroutine at a time)
}

// slowStructHash disables the direct field encoders (for tests).
var slowStructHash = false

func (s *Stager) structInfoFor(t reflect.Type, zero any) (si *structInfo, err error) {
	if si, ok := s.structs[t]; ok {
		return si, nil
	}
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
	ps := pq.SchemaOf(zero)
	canon, err := canonOfParquetGo(t, ps, s.pqOpts)
	if err != nil {
		return nil, err
	}
	leaves := ps.Columns()
	if len(leaves) != canon.arrow.NumFields() {
		return nil, fmt.Errorf("%w: %s has nested fields", ErrUnsupported, t)
	}
	si = &structInfo{schema: ps, canon: canon, encs: make([]pqEnc, len(leaves)), fold: newRowFolder(len(leaves), s.opts.LegacyChecksum)}
	for i, path := range leaves {
		leaf, ok := ps.Lookup(path...)
		if !ok || leaf.MaxRepetitionLevel > 0 || leaf.MaxDefinitionLevel > 1 {
			return nil, fmt.Errorf("%w: %s: column %v is repeated or nested", ErrUnsupported, t, path)
		}
		if si.encs[i], err = parquetEncoder(leaf.Node.Type(), canon.arrow.Field(i).Type); err != nil {
			return nil, fmt.Errorf("staging: %s column %v: %w", t, path, err)
		}
	}
	if err := probeKinds(st, ps, leaves); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsupported, t, err)
	}
	if !slowStructHash {
		si.fast = fastEncoders(t, ps, leaves, canon.arrow)
	}
	s.structs[t] = si
	return si, nil
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
// to the sums it is given, on a second goroutine when beside is true, else
// at once. The returned wait waits for it, adds its sums to the
// generation's (the checksum is a sum: which file a row lands in does not
// count) and returns its error; callers defer it, so that nothing reads the
// caller's rows after the call returns.
func (s *Stager) hashBeside(beside bool, hash func(*sums) error) (wait func() error) {
	var hsum sums
	if !beside {
		err := hash(&hsum)
		s.sum.add(hsum)
		return func() error { return err }
	}
	done := make(chan error, 1)
	go func() { done <- hash(&hsum) }()
	return func() error {
		err := <-done
		s.sum.add(hsum)
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
		return err
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
		wait := s.hashBeside(parallelHash && len(all) >= 256, func(h *sums) error {
			if si.fold.legacy {
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
			si.fold.begin()
			for _, v := range row {
				start := len(b)
				if v.IsNull() {
					b = append(b, tagNull)
				} else {
					b = si.encs[v.Column()](b, v)
				}
				si.fold.value(b[start:])
				if !si.fold.legacy {
					b = b[:0]
				}
			}
			s.buf = b
			si.fold.end(&s.cur.sum, b)
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
