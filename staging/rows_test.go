package staging

import (
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// row is the struct used by most tests: one column of each supported kind.
type row struct {
	ID    int64     `parquet:"id"`
	Small int8      `parquet:"small"`
	U     uint32    `parquet:"u"`
	F32   float32   `parquet:"f32"`
	Score *float64  `parquet:"score,optional"`
	Name  *string   `parquet:"name,optional"`
	Flag  bool      `parquet:"flag"`
	At    time.Time `parquet:"at,timestamp(microsecond)"`
	Day   int32     `parquet:"day,date"`
	Price int64     `parquet:"price,decimal(2:18)"`
	Blob  []byte    `parquet:"blob"`
}

var names = []string{"ant", "bee", "cat", "dog", "", "émeu"}

// makeRows returns n deterministic rows; every 7th has a null score and
// every 5th a null name.
func makeRows(n int, seed uint64) []row {
	r := rand.New(rand.NewPCG(seed, 1))
	rows := make([]row, n)
	base := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		x := row{
			ID:    int64(i),
			Small: int8(r.IntN(256) - 128),
			U:     r.Uint32(),
			F32:   float32(r.NormFloat64()),
			Flag:  r.IntN(2) == 1,
			At:    base.Add(time.Duration(r.Int64N(int64(48*time.Hour))) / time.Microsecond * time.Microsecond),
			Day:   20000 + int32(r.IntN(1000)),
			Price: r.Int64N(2_000_000) - 1_000_000,
			Blob:  []byte{byte(i), byte(i >> 8), 0xff},
		}
		if i%7 != 0 {
			s := float64(r.IntN(10000)) / 100
			x.Score = &s
		}
		if i%5 != 0 {
			n := names[r.IntN(len(names))]
			x.Name = &n
		}
		rows[i] = x
	}
	return rows
}

// rowSchema is the Arrow schema equivalent to row.
var rowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "small", Type: arrow.PrimitiveTypes.Int8},
	{Name: "u", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	{Name: "price", Type: &arrow.Decimal128Type{Precision: 18, Scale: 2}},
	{Name: "blob", Type: arrow.BinaryTypes.Binary},
}, nil)

// toRecord converts rows to an Arrow record of rowSchema.
func toRecord(rows []row) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, rowSchema)
	defer b.Release()
	for _, x := range rows {
		b.Field(0).(*array.Int64Builder).Append(x.ID)
		b.Field(1).(*array.Int8Builder).Append(x.Small)
		b.Field(2).(*array.Uint32Builder).Append(x.U)
		b.Field(3).(*array.Float32Builder).Append(x.F32)
		if x.Score == nil {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Float64Builder).Append(*x.Score)
		}
		if x.Name == nil {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.StringBuilder).Append(*x.Name)
		}
		b.Field(6).(*array.BooleanBuilder).Append(x.Flag)
		b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(x.At.UnixMicro()))
		b.Field(8).(*array.Date32Builder).Append(arrow.Date32(x.Day))
		b.Field(9).(*array.Decimal128Builder).Append(decimal128.FromI64(x.Price))
		b.Field(10).(*array.BinaryBuilder).Append(x.Blob)
	}
	return b.NewRecordBatch()
}

// totals are aggregates that tests compare between writer and readers.
type totals struct {
	rows, nullScores, nullNames int64
	sumID, sumSmall, sumPrice   int64
	sumU                        uint64
	sumScore                    float64
	minAt, maxAt                int64
}

func totalsOf(rows []row) totals {
	t := totals{minAt: 1 << 62, maxAt: -1 << 62}
	for _, x := range rows {
		t.rows++
		t.sumID += x.ID
		t.sumSmall += int64(x.Small)
		t.sumU += uint64(x.U)
		t.sumPrice += x.Price
		if x.Score == nil {
			t.nullScores++
		} else {
			t.sumScore += *x.Score
		}
		if x.Name == nil {
			t.nullNames++
		}
		t.minAt = min(t.minAt, x.At.UnixMicro())
		t.maxAt = max(t.maxAt, x.At.UnixMicro())
	}
	return t
}

// totalsOfTable computes the same aggregates from an Arrow table read back.
func totalsOfTable(tbl arrow.Table) totals {
	t := totals{minAt: 1 << 62, maxAt: -1 << 62, rows: tbl.NumRows()}
	col := func(name string) []arrow.Array {
		idx := tbl.Schema().FieldIndices(name)
		return tbl.Column(idx[0]).Data().Chunks()
	}
	for _, c := range col("id") {
		for _, v := range c.(*array.Int64).Int64Values() {
			t.sumID += v
		}
	}
	for _, c := range col("small") {
		for _, v := range c.(*array.Int8).Int8Values() {
			t.sumSmall += int64(v)
		}
	}
	for _, c := range col("u") {
		for _, v := range c.(*array.Uint32).Uint32Values() {
			t.sumU += uint64(v)
		}
	}
	for _, c := range col("price") {
		a := c.(*array.Decimal128)
		for i := 0; i < a.Len(); i++ {
			t.sumPrice += int64(a.Value(i).LowBits())
		}
	}
	for _, c := range col("score") {
		a := c.(*array.Float64)
		t.nullScores += int64(a.NullN())
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				t.sumScore += a.Value(i)
			}
		}
	}
	for _, c := range col("name") {
		t.nullNames += int64(c.NullN())
	}
	for _, c := range col("at") {
		for _, v := range c.(*array.Timestamp).TimestampValues() {
			t.minAt = min(t.minAt, int64(v))
			t.maxAt = max(t.maxAt, int64(v))
		}
	}
	return t
}
