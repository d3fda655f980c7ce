package pswap_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/lakehouse"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/tablemeta"
)

// Inputs that engines write (issue 24): files whose types or layout the
// engines users run produce, taken end to end: staged, committed, checked
// against the table's schema, and published as Iceberg metadata.

// publishedTable opens the current Iceberg metadata of a file:// table
// with iceberg-go and returns its schema and the rows its data files
// record (planned from the manifests: no data file is read).
func publishedTable(t *testing.T, loc string) (*iceberg.Schema, int64) {
	t.Helper()
	fs := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, fs, nil)
	if err != nil {
		t.Fatalf("iceberg-go: open %s: %v", loc, err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatalf("iceberg-go: plan: %v", err)
	}
	var rows int64
	for _, task := range tasks {
		rows += task.File.Count()
	}
	return tbl.Schema(), rows
}

// A Parquet file with a logical type Arrow does not know (parquet-testing's
// unknown-logical-type.parquet: a column annotated with a type from a
// newer format version) is staged with that column read as its physical
// type (binary), the commit lands, and the publish after it, and every
// later one, reads the footer the same way: the Iceberg schema has the
// column as binary and the files' rows. Before, the publish panicked in
// Arrow's schema reader under lakehouse.FooterSchema.
func TestUnknownLogicalTypePublishes(t *testing.T) {
	src := filepath.Join("staging", "testdata", "parquet-testing", "unknown-logical-type.parquet")
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	res, err := commitPath(t, tb, "dt=2026-11-29", src, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Rows == 0 {
		t.Fatalf("commit: %+v", res)
	}
	meta, err := tb.TableMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	col, ok := meta.Schema.Field("column with unknown type")
	if !ok || !col.Type.Equal(tablemeta.BinaryType) {
		t.Fatalf("table.json column: %+v (found %v), want binary", col, ok)
	}
	p, _ := tb.Partition("dt=2026-11-29")
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The footer schema the metadata derives, straight.
	s, err := lakehouse.FooterSchema(ctx, st, snap.Files[:1])
	if err != nil {
		t.Fatalf("FooterSchema: %v", err)
	}
	if f, ok := s.FieldsByName("column with unknown type"); !ok || f[0].Type.ID().String() != "BINARY" {
		t.Fatalf("FooterSchema: %v", s)
	}
	// The publish after the commit, then a full one (`pswap publish`).
	pub := p.Publish(ctx, res, lakehouse.Options{})
	if !pub.Published {
		t.Fatalf("publish after the commit: %v", pub.Err)
	}
	full, err := tb.Publish(ctx, lakehouse.Options{})
	if err != nil {
		t.Fatalf("pswap publish: %v", err)
	}
	if full.MetadataLocation != pub.MetadataLocation {
		t.Fatalf("pswap publish moved the metadata to %s from %s with nothing to do", full.MetadataLocation, pub.MetadataLocation)
	}
	sc, rows := publishedTable(t, pub.MetadataLocation)
	f, ok := sc.FindFieldByName("column with unknown type")
	if !ok || !f.Type.Equals(iceberg.PrimitiveTypes.Binary) {
		t.Fatalf("Iceberg schema: %v", sc)
	}
	if rows != res.Rows {
		t.Fatalf("Iceberg data files record %d rows, the commit %d", rows, res.Rows)
	}
	if !strings.HasPrefix(pub.MetadataLocation, "file://") {
		t.Fatalf("metadata location %s", pub.MetadataLocation)
	}
}
