package staging

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

type timedEvent struct {
	ID   int64      `parquet:"id"`
	At   time.Time  // parquet-go: TIMESTAMP(NANOS), UTC
	Seen *time.Time `parquet:"seen,optional,timestamp(nanosecond)"`
	Loc  time.Time  `parquet:"loc,timestamp(nanosecond:local)"`
}

// microConform stores every timestamp in microseconds, as a table does
// (tablemeta records nanosecond timestamps as timestamp/timestamptz).
func microConform(_ Input, s *arrow.Schema) (*arrow.Schema, error) {
	fs := s.Fields()
	for i, f := range fs {
		if ts, ok := f.Type.(*arrow.TimestampType); ok {
			fs[i].Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: ts.TimeZone}
		}
	}
	return arrow.NewSchema(fs, nil), nil
}

// A Go type's time.Time fields go into microsecond columns written in
// microseconds (UnixMicro), tagged or not, with a zone or without: the
// file holds microseconds, and the content checksum is that of the same
// values as an Arrow record in microseconds (hashed directly and through
// parquet-go's rows alike). Before, a Go type could not be stored in
// microsecond columns at all (it cannot be converted after it is written).
func TestGoTimeRetimedToTableUnits(t *testing.T) {
	base := time.Date(2026, 11, 29, 10, 0, 0, 123_456_789, time.UTC)
	old := time.Date(1901, 3, 4, 5, 6, 7, 999, time.UTC)
	rows := []timedEvent{{1, base, &old, old}, {2, old, nil, base}}
	// The same rows as an Arrow record in microseconds.
	mem := memory.DefaultAllocator
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	local := &arrow.TimestampType{Unit: arrow.Microsecond}
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "At", Type: utc}, {Name: "seen", Type: utc, Nullable: true}, {Name: "loc", Type: local}}, nil)
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	for _, r := range rows {
		rb.Field(0).(*array.Int64Builder).Append(r.ID)
		rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.At.UnixMicro()))
		if r.Seen == nil {
			rb.Field(2).AppendNull()
		} else {
			rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Seen.UnixMicro()))
		}
		rb.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Loc.UnixMicro()))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	_, rs := newMem(t, Options{})
	if err := rs.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	want, err := rs.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, slow := range []bool{false, true} {
		slowStructHash = slow
		st, s := newMem(t, Options{Conform: microConform})
		err := Write(s, rows...)
		slowStructHash = false
		if err != nil {
			t.Fatalf("slow %v: %v", slow, err)
		}
		c, err := s.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.ContentChecksum != want.ContentChecksum || c.Schema != want.Schema {
			t.Fatalf("slow %v: content %s\n%s\nwant the record's %s\n%s", slow, c.ContentChecksum, c.Schema, want.ContentChecksum, want.Schema)
		}
		tbl := readArrow(t, fileBytes(t, st, c.Files[0]))
		for i, f := range tbl.Schema().Fields() {
			if ts, ok := f.Type.(*arrow.TimestampType); ok && ts.Unit != arrow.Microsecond {
				t.Fatalf("column %d stored as %s", i, f.Type)
			}
		}
		at := tbl.Column(1).Data().Chunk(0).(*array.Timestamp)
		if int64(at.Value(0)) != base.UnixMicro() || int64(at.Value(1)) != old.UnixMicro() || old.UnixMicro() == math.MinInt64 {
			t.Fatalf("slow %v: At stored %v", slow, at)
		}
		tbl.Release()
	}
}
