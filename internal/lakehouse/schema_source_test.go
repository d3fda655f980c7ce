package lakehouse_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// nestedFields are columns of list, struct and map types.
func nestedFields() []arrow.Field {
	return []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "info", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
	}
}

// evolvedFields are nestedFields and a column added by evolution.
func evolvedFields() []arrow.Field {
	return append(nestedFields(), arrow.Field{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true})
}

const evolvedJSON = `[{"id": 5, "tags": ["c"], "info": {"x": 6}, "attrs": [], "extra": "e"}]`

const nestedJSON = `[{"id": 1, "tags": ["a"], "info": {"x": 2, "y": "b"}, "attrs": [{"key": "k", "value": 3}]}]`

// footerOf is the Arrow schema of a committed generation's files.
func footerOf(t *testing.T, st store.Store, res swap.Result) *arrow.Schema {
	t.Helper()
	snap, err := swap.ReadManifest(ctx, st, res.Partition, res.Generation)
	if err != nil {
		t.Fatal(err)
	}
	as, err := lakehouse.FooterSchema(ctx, st, swap.Files(st, snap))
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// newTableDoc is the table.json a facade commit of data would create.
func newTableDoc(t *testing.T, part string, data *arrow.Schema) *tablemeta.Table {
	t.Helper()
	var tj *tablemeta.Table
	cols, err := tablemeta.InferPartitionColumns(part, nil)
	if err == nil {
		tj, err = tablemeta.New(cols, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tj
}

func storeTableDoc(t *testing.T, st store.Store, tj *tablemeta.Table) {
	t.Helper()
	if _, _, created, err := tablemeta.Create(ctx, st, tj); err != nil || !created {
		t.Fatalf("create table.json: created %v, %v", created, err)
	}
}

// publishedSchema is the current Iceberg schema of the latest version,
// and its last-column-id.
func publishedSchema(t *testing.T, st store.Store) (*iceberg.Schema, int) {
	t.Helper()
	_, v, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	md := lakehouse.Model(readMeta(t, st, v))
	for _, sc := range md.Schemas {
		if sc.ID == md.CurrentSchemaID {
			return sc, md.LastColumnID
		}
	}
	t.Fatalf("version %d has no current schema", v)
	return nil, 0
}

// icebergIDs maps every field path of an Iceberg schema ("info.x",
// "tags.element", "attrs.key") to its id.
func icebergIDs(sc *iceberg.Schema) map[string]int {
	out := map[string]int{}
	var walk func(path string, id int, t iceberg.Type)
	walk = func(path string, id int, t iceberg.Type) {
		out[path] = id
		switch t := t.(type) {
		case *iceberg.StructType:
			for _, f := range t.FieldList {
				walk(path+"."+f.Name, f.ID, f.Type)
			}
		case *iceberg.ListType:
			walk(path+".element", t.ElementID, t.Element)
		case *iceberg.MapType:
			walk(path+".key", t.KeyID, t.KeyType)
			walk(path+".value", t.ValueID, t.ValueType)
		}
	}
	for _, f := range sc.Fields() {
		walk(f.Name, f.ID, f.Type)
	}
	return out
}

// tableIDs is icebergIDs of a table.json, partition columns included.
func tableIDs(tj *tablemeta.Table) map[string]int {
	out := map[string]int{}
	var walk func(path string, f tablemeta.Field)
	walk = func(path string, f tablemeta.Field) {
		out[path] = f.ID
		for _, g := range f.Type.Fields {
			walk(path+"."+g.Name, g)
		}
		for _, g := range []*tablemeta.Field{f.Type.Element, f.Type.Key, f.Type.Value} {
			if g != nil {
				walk(path+"."+g.Name, *g)
			}
		}
	}
	for _, f := range tj.Schema.Fields {
		walk(f.Name, f)
	}
	for _, c := range tj.PartitionColumns {
		out[c.Name] = c.ID
	}
	return out
}

// countingSchema is FooterSchema, counting its calls.
func countingSchema(n *int) lakehouse.SchemaFunc {
	return func(ctx context.Context, st store.Store, files []swap.FileRef) (*arrow.Schema, error) {
		*n++
		return lakehouse.FooterSchema(ctx, st, files)
	}
}

// TestTableSchemaIDsForNewTable: a table with table.json is published with
// its schema, every id (nested ones and the partition column's) table.json's,
// its types (the partition column a date), without reading a footer: one
// GET of table.json, or none when the commit hands it over (Commit.Table).
// The table.json is marked (published_ids) here, as after its first
// publish: that one marks it, a conditional PUT once (and a GET when the
// commit handed the document over: TestFirstPublishMarksTableDoc).
func TestTableSchemaIDsForNewTable(t *testing.T) {
	for _, given := range []bool{false, true} {
		mem := memstore.New()
		res := commitJSON(t, mem, "dt=2026-11-01", nestedFields(), nestedJSON)
		tj := newTableDoc(t, res.Partition, footerOf(t, mem, res))
		tj.PublishedIDs = true
		storeTableDoc(t, mem, tj)
		c := lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}
		if given {
			c.Table = tj
		}
		cs := storetest.NewCounting(mem)
		docReads := 0
		st := storetest.NewFaulty(cs, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" && c.Key == tablemeta.Key {
				docReads++
			}
			return storetest.Fault{}
		})
		calls := 0
		if _, err := lakehouse.PublishCommit(ctx, st, c, lakehouse.Options{Schema: countingSchema(&calls)}); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 0}[given]; docReads != want || calls != 0 {
			t.Errorf("given %v: %d reads of table.json (want %d), %d footer schemas (want 0): %v", given, docReads, want, calls, cs.Counts())
		}
		sc, last := publishedSchema(t, mem)
		got, want := icebergIDs(sc), tableIDs(tj)
		if len(got) != len(want) || len(want) != 10 {
			t.Fatalf("given %v: ids %v, table.json's %v", given, got, want)
		}
		for path, id := range want {
			if got[path] != id {
				t.Errorf("given %v: %s has id %d, table.json's is %d", given, path, got[path], id)
			}
		}
		if last != tj.LastColumnID {
			t.Errorf("given %v: last-column-id %d, table.json's %d", given, last, tj.LastColumnID)
		}
		if f, _ := sc.FindFieldByName("dt"); !f.Type.Equals(iceberg.PrimitiveTypes.Date) || f.Required {
			t.Errorf("given %v: partition column %v", given, f)
		}
	}
}

// TestFirstPublishMarksTableDoc: a new table's first publish publishes
// table.json's ids and marks it (published_ids) without changing anything
// else: a conditional PUT, plus a GET when the commit handed the document
// over (its version tag is needed); the next publish writes nothing to it.
func TestFirstPublishMarksTableDoc(t *testing.T) {
	for _, given := range []bool{false, true} {
		mem := memstore.New()
		res := commitJSON(t, mem, "dt=2026-11-01", nestedFields(), nestedJSON)
		tj := newTableDoc(t, res.Partition, footerOf(t, mem, res))
		storeTableDoc(t, mem, tj)
		c := lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}
		if given {
			c.Table = tj
		}
		docReads, docPuts := 0, 0
		st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			switch {
			case c.Op == "get" && c.Key == tablemeta.Key:
				docReads++
			case c.Op == "put" && c.Key == tablemeta.Key:
				docPuts++
			}
			return storetest.Fault{}
		})
		if _, err := lakehouse.PublishCommit(ctx, st, c, lakehouse.Options{}); err != nil {
			t.Fatal(err)
		}
		if docReads != 1 || docPuts != 1 {
			t.Errorf("given %v: %d reads and %d writes of table.json, want 1 and 1", given, docReads, docPuts)
		}
		got, err := tablemeta.Load(ctx, mem)
		if err != nil {
			t.Fatal(err)
		}
		want := tj.Clone()
		want.PublishedIDs = true
		if a, b := mustEncode(t, got), mustEncode(t, want); !bytes.Equal(a, b) {
			t.Fatalf("given %v: table.json after the first publish\n%s\nwant\n%s", given, a, b)
		}
		next := commitJSON(t, mem, "dt=2026-11-02", nestedFields(), nestedJSON)
		docReads, docPuts = 0, 0
		c = lakehouse.Commit{Partition: next.Partition, Generation: next.Generation, Seq: next.Seq}
		if given {
			c.Table = got
		}
		if _, err := lakehouse.PublishCommit(ctx, st, c, lakehouse.Options{}); err != nil {
			t.Fatal(err)
		}
		if docPuts != 0 || docReads > map[bool]int{false: 1, true: 0}[given] {
			t.Errorf("given %v: the next publish read table.json %d times, wrote it %d times", given, docReads, docPuts)
		}
	}
}

func mustEncode(t *testing.T, tj *tablemeta.Table) []byte {
	t.Helper()
	b, err := tablemeta.Encode(tj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTableSchemaKeepsPublishedIDs: a table published before it had
// table.json (its footer's schema, ids the publish assigned: nested
// fields before their column) keeps every id it published when table.json
// appears with other ids: the published id wins for every field it has,
// by name path. A column table.json adds takes table.json's id unless a
// version may have used it (not above the published last-column-id): then
// the next id. A published column table.json lacks becomes optional (the
// files committed with table.json lack it).
func TestTableSchemaKeepsPublishedIDs(t *testing.T) {
	mem := memstore.New()
	res := commitJSON(t, mem, "dt=2026-11-01", append([]arrow.Field{nestedFields()[0], {Name: "legacy", Type: arrow.BinaryTypes.String}}, nestedFields()[1:]...),
		`[{"id": 1, "legacy": "l", "tags": ["a"], "info": {"x": 2, "y": "b"}, "attrs": [{"key": "k", "value": 3}]}]`)
	publish(t, mem, res)
	before, lastBefore := publishedSchema(t, mem)
	old := icebergIDs(before)
	if f, _ := before.FindFieldByName("legacy"); !f.Required {
		t.Fatalf("legacy column %v, want required", f)
	}

	// table.json as the next commit creates it (without legacy), then
	// evolved with extra: its ids differ from the published ones.
	base := commitJSON(t, mem, "dt=2026-11-02", nestedFields(), nestedJSON)
	tj := newTableDoc(t, base.Partition, footerOf(t, mem, base))
	evolvedRes := commitJSON(t, mem, "dt=2026-11-03", evolvedFields(), evolvedJSON)
	tj, added, err := tj.Evolve(footerOf(t, mem, evolvedRes), tablemeta.PlanOptions{})
	if err != nil || len(added) != 1 {
		t.Fatalf("evolve: %v %v", added, err)
	}
	storeTableDoc(t, mem, tj)
	tjIDs := tableIDs(tj)
	differ := 0
	for path, id := range old {
		if tjIDs[path] != 0 && tjIDs[path] != id {
			differ++
		}
	}
	if differ == 0 || tjIDs["extra"] > lastBefore {
		t.Fatalf("the test needs ids that differ (%d do) and table.json's extra (%d) not above the published last-column-id %d", differ, tjIDs["extra"], lastBefore)
	}

	calls := 0
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{Schema: countingSchema(&calls)}); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Errorf("%d footer schemas read for a table with table.json", calls)
	}
	after, lastAfter := publishedSchema(t, mem)
	got := icebergIDs(after)
	for path, id := range old {
		if got[path] != id {
			t.Errorf("%s: id %d, published %d before", path, got[path], id)
		}
	}
	if got["extra"] != lastBefore+1 || lastAfter != lastBefore+1 {
		t.Errorf("extra: id %d, last-column-id %d; want %d for both (table.json's %d was the published legacy's)", got["extra"], lastAfter, lastBefore+1, tjIDs["extra"])
	}
	if f, _ := after.FindFieldByName("legacy"); f.Required {
		t.Errorf("legacy stays required, but files committed with table.json lack it")
	}
	if f, _ := after.FindFieldByName("extra"); f.Required {
		t.Errorf("extra is required")
	}
	if len(got) != len(old)+1 {
		t.Errorf("fields %v, want those of before and extra", got)
	}
	checkReaders(t, mem)

	// A table first published after table.json existed takes table.json's
	// id for a column it adds (above the published last-column-id).
	mem = memstore.New()
	res = commitJSON(t, mem, "dt=2026-11-01", nestedFields(), nestedJSON)
	tj = newTableDoc(t, res.Partition, footerOf(t, mem, res))
	storeTableDoc(t, mem, tj)
	publish(t, mem, res)
	res = commitJSON(t, mem, "dt=2026-11-02", evolvedFields(), evolvedJSON)
	_, etag, err := tablemeta.Read(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	evolved, _, err := tj.Evolve(footerOf(t, mem, res), tablemeta.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tablemeta.Update(ctx, mem, evolved, etag); err != nil {
		t.Fatal(err)
	}
	publish(t, mem, res)
	sc, _ := publishedSchema(t, mem)
	got, want := icebergIDs(sc), tableIDs(evolved)
	for path, id := range want {
		if got[path] != id {
			t.Errorf("evolved new table: %s has id %d, table.json's is %d", path, got[path], id)
		}
	}
}

// TestFooterSchemaFallback: a table without table.json (committed to only
// before pswap kept it) is published with its footer's schema
// (Options.Schema), after one GET that finds no table.json.
func TestFooterSchemaFallback(t *testing.T) {
	mem := memstore.New()
	res := commitJSON(t, mem, "dt=2026-11-01", nestedFields(), nestedJSON)
	calls := 0
	if _, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
		lakehouse.Options{Schema: countingSchema(&calls)}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("%d footer schemas read, want 1", calls)
	}
	sc, _ := publishedSchema(t, mem)
	// The footer path's ids: a column's nested fields before the column.
	ids := icebergIDs(sc)
	if ids["tags.element"] >= ids["tags"] || ids["attrs.key"] >= ids["attrs"] {
		t.Errorf("ids %v", ids)
	}
	if f, _ := sc.FindFieldByName("dt"); !f.Type.Equals(iceberg.PrimitiveTypes.String) {
		t.Errorf("partition column %v, want a string (no table.json declares it)", f)
	}
}

// A corrupt table.json fails the publish that needs the schema (as it
// fails commits), naming it; it is never read past.
func TestCorruptTableSchemaFailsPublish(t *testing.T) {
	mem := memstore.New()
	res := commitJSON(t, mem, "dt=2026-11-01", nestedFields(), nestedJSON)
	if _, err := mem.Put(ctx, tablemeta.Key, []byte(`{"format":"pswap-table"`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
	if !errors.Is(err, tablemeta.ErrInvalid) || !strings.Contains(err.Error(), "table.json") {
		t.Fatalf("publish: %v, want ErrInvalid naming table.json", err)
	}
}

// TestUnknownLogicalTypeFooter: a Parquet file whose footer carries a
// logical type Arrow does not know (parquet-testing's
// unknown-logical-type.parquet) is accepted by staging as it is, with that
// column read as its physical type; the publish of a table without
// table.json reads its footer the same way (FooterSchema through
// pqscan.Open), for the schema and the statistics: the column is
// binary. Arrow's reader alone refuses the footer, so the publish would
// fail on every attempt if either bypassed pqscan.Open (staging's reader).
func TestUnknownLogicalTypeFooter(t *testing.T) {
	mem := memstore.New()
	src := filepath.Join("..", "..", "staging", "testdata", "parquet-testing", "unknown-logical-type.parquet")
	res := commitStaged(t, mem, "dt=2026-11-29", func(s *staging.Stager) error { return s.AddParquetFile(ctx, src) })
	calls := 0
	if _, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
		lakehouse.Options{Schema: countingSchema(&calls)}); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if calls != 1 {
		t.Fatalf("%d footer schemas read, want 1", calls)
	}
	sc, _ := publishedSchema(t, mem)
	if f, ok := sc.FindFieldByName("column with unknown type"); !ok || !f.Type.Equals(iceberg.PrimitiveTypes.Binary) {
		t.Fatalf("Iceberg schema %v", sc)
	}
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

// A manifest an attempt wrote is reused by the next attempt only when that
// one publishes the same shape. Here the table's first publish reads no
// table.json (dt a string) and writes its manifest; then a facade commit
// creates table.json (dt a date) and the attempt runs past MaxElapsed, so
// the next one plans again, reads table.json and publishes dt as a date.
// Its manifest must carry dt's values as dates too: readers, and the next
// publish (which carries that manifest's entries on), read them with the
// version's spec. The simulation found it (seed 3967): the first attempt's
// manifest was reused, and every later publish failed with "dt: expected
// type iceberg.Date, got string".
func TestAttemptAfterTableDocAppearsWritesItsShape(t *testing.T) {
	mem := memstore.New()
	res := commitJSON(t, mem, "dt=2026-11-01", nestedFields(), nestedJSON)
	tj := newTableDoc(t, "dt=2026-11-01", footerOf(t, mem, res))
	clock := newTestClock()
	var docReads, listPuts int
	flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		switch {
		case c.Op == "get" && c.Key == tablemeta.Key:
			// The attempt's read of table.json (none yet), before it
			// writes its manifest: it is 50s into its minute.
			if docReads++; docReads == 1 {
				return storetest.Fault{Hook: func() { clock.Add(50 * time.Second) }}
			}
		case c.Op == "put" && strings.HasPrefix(c.Key, lakehouse.MetadataPrefix+"snap-"):
			// Its manifest list: table.json appears, and the attempt
			// is past its minute (its manifest, 15s old, is not).
			if listPuts++; listPuts == 1 {
				return storetest.Fault{Hook: func() {
					storeTableDoc(t, mem, tj)
					clock.Add(15 * time.Second)
				}}
			}
		}
		return storetest.Fault{}
	})
	r, err := lakehouse.PublishCommit(clocked(clock.Now), flaky, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
		lakehouse.Options{MaxElapsed: time.Minute})
	if err != nil || r.Rebases != 1 || docReads != 2 {
		t.Fatalf("publish: %+v %v (table.json read %d times), want one rebase that reads it", r, err, docReads)
	}
	sc, _ := publishedSchema(t, mem)
	if f, _ := sc.FindFieldByName("dt"); !f.Type.Equals(iceberg.PrimitiveTypes.Date) {
		t.Fatalf("partition column %v, want the date table.json declares", f)
	}
	// The next publish carries dt=2026-11-01's entries into its manifest.
	next := commitJSON(t, mem, "dt=2026-11-02", nestedFields(), nestedJSON)
	publish(t, mem, next)
	if got := checkReaders(t, mem); got["dt=2026-11-01"] != 1 || got["dt=2026-11-02"] != 1 {
		t.Fatalf("readers see %v", got)
	}
}
