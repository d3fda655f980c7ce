package audit

import (
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

var tsType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// Columns are the audit's columns, in order: the JSON fields of Row.
var Columns = []string{"partition", "generation", "run_id", "kind", "state", "rows", "bytes", "files",
	"created_at", "committed_at", "superseded_by", "superseded_at", "parent", "data_generation", "rollback_of", "why",
	"status", "job", "task", "logical_date", "job_run_id", "started_at", "finished_at", "noop_of"}

// Schema is the Arrow schema of the audit's rows: strings are never null
// (empty when unknown), numbers and times are null when unknown; times
// are timestamptz in microseconds (Iceberg's unit).
func Schema() *arrow.Schema {
	fs := make([]arrow.Field, len(Columns))
	for i, c := range Columns {
		switch c {
		case "rows", "bytes", "files":
			fs[i] = arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
		case "created_at", "committed_at", "superseded_at", "started_at", "finished_at":
			fs[i] = arrow.Field{Name: c, Type: tsType, Nullable: true}
		default:
			fs[i] = arrow.Field{Name: c, Type: arrow.BinaryTypes.String}
		}
	}
	return arrow.NewSchema(fs, nil)
}

// Strings returns the string columns of r, by column name.
func (r Row) Strings() map[string]string {
	return map[string]string{"partition": r.Partition, "generation": r.Generation, "run_id": r.RunID,
		"kind": string(r.Kind), "state": string(r.State), "superseded_by": r.SupersededBy, "parent": r.Parent,
		"data_generation": r.DataGeneration, "rollback_of": r.RollbackOf, "why": r.Why,
		"status": r.Status, "job": r.Job, "task": r.Task, "logical_date": r.LogicalDate, "job_run_id": r.JobRunID, "noop_of": r.NoOpOf}
}

// Numbers returns the numeric columns of r (nil: unknown).
func (r Row) Numbers() map[string]*int64 {
	return map[string]*int64{"rows": r.Rows, "bytes": r.Bytes, "files": r.Files}
}

// Times returns the time columns of r (nil: unknown).
func (r Row) Times() map[string]*time.Time {
	return map[string]*time.Time{"created_at": r.CreatedAt, "committed_at": r.CommittedAt, "superseded_at": r.SupersededAt,
		"started_at": r.StartedAt, "finished_at": r.FinishedAt}
}

// Record returns rows as one Arrow record of Schema. The caller releases it.
func Record(rows []Row) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, Schema())
	defer b.Release()
	for _, r := range rows {
		strs, nums, times := r.Strings(), r.Numbers(), r.Times()
		for i, c := range Columns {
			switch fb := b.Field(i).(type) {
			case *array.StringBuilder:
				fb.Append(strs[c])
			case *array.Int64Builder:
				if v := nums[c]; v != nil {
					fb.Append(*v)
				} else {
					fb.AppendNull()
				}
			case *array.TimestampBuilder:
				if v := times[c]; v != nil {
					fb.Append(arrow.Timestamp(v.UnixMicro()))
				} else {
					fb.AppendNull()
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// WriteParquet writes rows as one Parquet file (zstd) to w.
func WriteParquet(w io.Writer, rows []Row) error {
	rec := Record(rows)
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	fw, err := pqarrow.NewFileWriter(rec.Schema(), w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("audit: parquet: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("audit: parquet: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("audit: parquet: %w", err)
	}
	return nil
}

// CSVRecords returns rows as CSV records, a header first: strings as they
// are, unknown numbers and times empty, times in RFC 3339 (UTC, with
// microseconds when not whole seconds).
func CSVRecords(rows []Row) [][]string {
	out := [][]string{Columns}
	for _, r := range rows {
		strs, nums, times := r.Strings(), r.Numbers(), r.Times()
		rec := make([]string, len(Columns))
		for i, c := range Columns {
			if v, ok := strs[c]; ok {
				rec[i] = v
			} else if v, ok := nums[c]; ok && v != nil {
				rec[i] = fmt.Sprint(*v)
			} else if v, ok := times[c]; ok && v != nil {
				rec[i] = v.UTC().Format(time.RFC3339Nano)
			}
		}
		out = append(out, rec)
	}
	return out
}
