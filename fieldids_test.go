package pswap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// idColumns are the columns of the field-id tests: a list first, so that a
// table published from its footers (nested fields numbered first) and its
// table.json number the top-level columns differently.
func idColumns(ids map[string]int) []arrow.Field {
	field := func(name string, t arrow.DataType) arrow.Field {
		f := arrow.Field{Name: name, Type: t, Nullable: true}
		if id, ok := ids[name]; ok {
			f.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
		}
		return f
	}
	return []arrow.Field{
		field("tags", arrow.ListOf(arrow.BinaryTypes.String)),
		field("id", arrow.PrimitiveTypes.Int64),
		field("amount", arrow.PrimitiveTypes.Float64),
	}
}

const idRows = `[{"tags": ["a"], "id": 1, "amount": 1.5}, {"tags": [], "id": 2, "amount": 2.5}]`

func idRecord(t *testing.T, ids map[string]int) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, arrow.NewSchema(idColumns(ids), nil), strings.NewReader(idRows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// idParquet is a Parquet file of idRows whose footer gives the top-level
// columns the field ids ids, as an Iceberg engine writes its data files.
func idParquet(t *testing.T, ids map[string]int) []byte {
	t.Helper()
	rec := idRecord(t, ids)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, nil, pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tableIDs are table.json's top-level ids.
func tableIDs(t *testing.T, st store.Store) map[string]int {
	t.Helper()
	tj, err := tablemeta.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range tj.Schema.Fields {
		out[f.Name] = f.ID
	}
	return out
}

func publishedIDs(t *testing.T, st store.Store) map[string]int {
	t.Helper()
	pub, err := lakehouse.ReadPublishedIDs(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return pub.Top
}

// commitIDFile stages a Parquet file carrying ids into part.
func commitIDFile(t *testing.T, tb *pswap.Table, part string, ids map[string]int) (pswap.Result, error) {
	t.Helper()
	p, err := tb.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddReader(ctx, bytes.NewReader(idParquet(t, ids)), "engine.parquet", pswap.FormatParquet); err != nil {
		w.Abort(ctx)
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

// adoptIDFile adopts a Parquet file carrying ids as the next generation of
// apart, without copying it.
func adoptIDFile(t *testing.T, tb *pswap.Table, ids map[string]int) (pswap.Result, error) {
	t.Helper()
	p, res := reserve(t, tb)
	putObj(t, tb.Store(), res.Prefix+"part-0.parquet", idParquet(t, ids))
	return p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
}

// legacyIDTable is a table published before table.json held ids: its
// first generation published from its footer (nested fields numbered
// first), then a facade commit that created table.json and a publish by an
// older pswap, which left table.json's ids as they were. It returns
// table.json's top-level ids and the published ones, which differ.
func legacyIDTable(t *testing.T) (*memstore.Store, *pswap.Table, map[string]int, map[string]int) {
	t.Helper()
	mem := memstore.New()
	// The table's first generation and publish, before table.json.
	txn, err := swap.Begin(ctx, mem, "dt=2026-11-01", swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := staging.New(ctx, mem, txn.DataPrefix(), staging.Options{})
	rec := idRecord(t, nil)
	defer rec.Release()
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	c, err := s.Finish(ctx)
	if err == nil {
		_, err = txn.Commit(ctx, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(mem)
	publishTable(t, tb)
	// A facade commit creates table.json; the publish keeps the ids.
	if _, err := commitRecord(t, tb, "dt=2026-11-02", idRecord(t, nil), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A publish by a pswap from before the write-back of published ids
	// (writeBackIDs) left table.json as it was.
	doc, _, err := store.ReadAll(ctx, mem, tablemeta.Key)
	if err != nil {
		t.Fatal(err)
	}
	publishTable(t, tb)
	if _, err := mem.Put(ctx, tablemeta.Key, doc, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	tj, pub := tableIDs(t, mem), publishedIDs(t, mem)
	if tj["amount"] == pub["amount"] {
		t.Fatalf("table.json's ids %v and the published %v agree: the test needs a table where they differ", tj, pub)
	}
	return mem, tb, tj, pub
}

// A table published before table.json held ids (its footer's schema, nested
// fields numbered first) has other published ids than table.json's. Iceberg
// readers resolve a data file's Parquet field ids with the published ones,
// so a file carrying table.json's ids would be read with another column's
// values: it is refused at commit, staged or adopted, naming the column
// and what its id is to readers, and nothing is committed. (Before, a
// staged file was checked against table.json only, and an adopted file
// not at all.)
func TestFieldIDsCheckedAgainstThePublishedSchema(t *testing.T) {
	mem, tb, tj, pub := legacyIDTable(t)
	before := pointers(t, mem)

	_, err := commitIDFile(t, tb, "dt=2026-11-03", tj)
	if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), `column "amount" has Parquet field id `+strconv.Itoa(tj["amount"])) {
		t.Fatalf("a staged file with table.json's ids: %v, want a refusal naming amount", err)
	}
	_, err = adoptIDFile(t, tb, tj)
	if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), `column "amount"`) {
		t.Fatalf("an adopted file with table.json's ids: %v, want a refusal naming amount", err)
	}
	// A file with the published ids disagrees with table.json: refused too
	// (either would be read wrong somewhere); without ids, by name, it fits.
	if _, err := commitIDFile(t, tb, "dt=2026-11-03", pub); !errors.Is(err, pswap.ErrSchemaMismatch) {
		t.Fatalf("a staged file with the published ids: %v, want a refusal", err)
	}
	if after := pointers(t, mem); !maps.Equal(before, after) {
		t.Fatalf("the refusals changed the table: %v, then %v", before, after)
	}
	if r, err := commitIDFile(t, tb, "dt=2026-11-03", nil); err != nil || !r.Changed {
		t.Fatalf("the same file without ids: %+v %v", r, err)
	}
}

// On a table whose published ids are table.json's (every table created
// since table.json held ids), a file carrying them is committed, staged
// or adopted, and published with exactly those ids; an adopted file whose
// ids disagree with table.json's is refused as a staged one is.
func TestFieldIDsAgreeingAreCommitted(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	if _, err := commitRecord(t, tb, "dt=2026-11-01", idRecord(t, nil), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	publishTable(t, tb)
	tj := tableIDs(t, mem)
	if pub := publishedIDs(t, mem); !sameIDs(tj, pub) {
		t.Fatalf("a new table published ids %v, table.json has %v", pub, tj)
	}
	if r, err := commitIDFile(t, tb, "dt=2026-11-02", tj); err != nil || !r.Changed {
		t.Fatalf("a staged file with the table's ids: %+v %v", r, err)
	}
	if r, err := adoptIDFile(t, tb, tj); err != nil || !r.Changed {
		t.Fatalf("an adopted file with the table's ids: %+v %v", r, err)
	}
	swapped := map[string]int{"tags": tj["tags"], "id": tj["amount"], "amount": tj["id"]}
	if _, err := adoptIDFile(t, tb, swapped); !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "field id") {
		t.Fatalf("an adopted file with swapped ids: %v, want a refusal naming the field id", err)
	}
	publishTable(t, tb)
	if pub := publishedIDs(t, mem); !sameIDs(tj, pub) {
		t.Fatalf("published ids %v, table.json's %v", pub, tj)
	}
}

func publishTable(t *testing.T, tb *pswap.Table) {
	t.Helper()
	if _, err := tb.Publish(ctx, pswap.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
}

// sameIDs reports whether the published ids give table.json's columns
// table.json's ids (the published schema has the partition columns too).
func sameIDs(tj, pub map[string]int) bool {
	for k, v := range tj {
		if id, ok := pub[k]; !ok || id != v {
			return false
		}
	}
	return len(tj) > 0
}

// metadataReads counts the requests a store serves under metadata/ (the
// published Iceberg metadata: the version hint, the probe, the metadata
// files). It hides the store's optional interfaces (ranged reads,
// delimited listings), so that every read goes through Get, Stat or List.
type metadataReads struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (m *metadataReads) count(key string) {
	if strings.HasPrefix(key, "metadata/") {
		m.mu.Lock()
		m.n++
		m.mu.Unlock()
	}
}

func (m *metadataReads) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func (m *metadataReads) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	m.count(key)
	return m.Store.Get(ctx, key)
}

func (m *metadataReads) Stat(ctx context.Context, key string) (store.Attrs, error) {
	m.count(key)
	return m.Store.Stat(ctx, key)
}

func (m *metadataReads) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	m.count(prefix)
	return m.Store.List(ctx, prefix)
}

// The next publish of a table whose published ids differ from table.json's
// writes the published ids back into table.json, once, and marks it; a
// commit of files carrying field ids then checks them against table.json
// alone, reading nothing under metadata/, and is refused or accepted as
// before: table.json's old ids are refused, the published ones accepted.
// (Before, table.json kept its ids and every such commit read the
// published schema.)
func TestPublishWritesThePublishedIDsBack(t *testing.T) {
	mem, tb, oldIDs, pub := legacyIDTable(t)
	mr := &metadataReads{Store: mem}
	counted := pswap.NewTable(mr)
	// Unmarked, the commit reads the published schema to check ids.
	if _, err := commitIDFile(t, counted, "dt=2026-11-03", oldIDs); !errors.Is(err, pswap.ErrSchemaMismatch) {
		t.Fatalf("a staged file with table.json's ids: %v, want a refusal", err)
	}
	if mr.requests() == 0 {
		t.Fatal("an unmarked table.json: the commit read nothing under metadata/")
	}
	t.Logf("unmarked: a commit with ids made %d requests under metadata/", mr.requests())

	// The next publish (a commit's, of a new generation without ids)
	// writes back.
	commitIDRowsAndPublish(t, tb, "dt=2026-11-03")
	doc, err := tablemeta.Load(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	tj := tableIDs(t, mem)
	if !doc.PublishedIDs || !sameIDs(tj, pub) {
		t.Fatalf("after a publish table.json has ids %v (marked %v), the published are %v", tj, doc.PublishedIDs, pub)
	}
	md := publishedMetadata(t, mem)
	if doc.LastColumnID < md.lastColumnID {
		t.Fatalf("table.json's last_column_id %d is below the published %d", doc.LastColumnID, md.lastColumnID)
	}
	for name, id := range md.ids {
		if got := docIDs(doc)[name]; got != id {
			t.Errorf("%s: table.json's id %d, published %d", name, got, id)
		}
	}
	// Once: a further publish leaves table.json as it is.
	data, attrs, err := store.ReadAll(ctx, mem, tablemeta.Key)
	if err != nil {
		t.Fatal(err)
	}
	commitIDRowsAndPublish(t, tb, "dt=2026-11-04")
	publishTable(t, tb)
	if again, a2, err := store.ReadAll(ctx, mem, tablemeta.Key); err != nil || !bytes.Equal(again, data) || a2.ETag != attrs.ETag {
		t.Fatalf("a second publish rewrote table.json (%v):\n%s\nthen\n%s", err, data, again)
	}

	mr.mu.Lock()
	mr.n = 0
	mr.mu.Unlock()
	before := pointers(t, mem)
	if _, err := commitIDFile(t, counted, "dt=2026-11-05", oldIDs); !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "the table's is") {
		t.Fatalf("a staged file with table.json's former ids: %v, want a refusal naming a column and its id", err)
	}
	if _, err := adoptIDFile(t, counted, oldIDs); !errors.Is(err, pswap.ErrSchemaMismatch) {
		t.Fatalf("an adopted file with table.json's former ids: %v, want a refusal", err)
	}
	if after := pointers(t, mem); !maps.Equal(before, after) {
		t.Fatalf("the refusals changed the table: %v, then %v", before, after)
	}
	if r, err := commitIDFile(t, counted, "dt=2026-11-05", pub); err != nil || !r.Changed {
		t.Fatalf("a staged file with the published ids: %+v %v", r, err)
	}
	if r, err := adoptIDFile(t, counted, pub); err != nil || !r.Changed {
		t.Fatalf("an adopted file with the published ids: %+v %v", r, err)
	}
	if n := mr.requests(); n != 0 {
		t.Fatalf("with table.json marked, the commits made %d requests under metadata/, want 0", n)
	}
	// Published, the files carry the ids readers resolve.
	publishTable(t, tb)
	if got := publishedIDs(t, mem); !sameIDs(pub, got) {
		t.Fatalf("published ids %v, want %v unchanged", got, pub)
	}
}

// commitIDRowsAndPublish commits idRows without ids to part and publishes the
// commit (Writer.Publish: it has table.json at hand).
func commitIDRowsAndPublish(t *testing.T, tb *pswap.Table, part string) {
	t.Helper()
	p, err := tb.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := idRecord(t, nil)
	defer rec.Release()
	if err := w.WriteRecord(rec); err != nil {
		w.Abort(ctx)
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if pub := w.Publish(ctx, pswap.PublishOptions{}); pub.Err != nil {
		t.Fatal(pub.Err)
	}
}

// publishedSchema is the latest published schema's ids by name path, and
// its last-column-id.
type publishedSchema struct {
	ids          map[string]int
	lastColumnID int
}

func publishedMetadata(t *testing.T, st store.Store) publishedSchema {
	t.Helper()
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil || loc == "" {
		t.Fatalf("latest metadata: %q %v", loc, err)
	}
	key := loc[strings.Index(loc, "metadata/"):]
	data, _, err := store.ReadAll(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		LastColumnID    int `json:"last-column-id"`
		CurrentSchemaID int `json:"current-schema-id"`
		Schemas         []json.RawMessage
	}
	if err := json.Unmarshal(data, &md); err != nil {
		t.Fatal(err)
	}
	out := publishedSchema{ids: map[string]int{}, lastColumnID: md.LastColumnID}
	for _, raw := range md.Schemas {
		var sc iceberg.Schema
		if err := json.Unmarshal(raw, &sc); err != nil {
			t.Fatal(err)
		}
		if sc.ID != md.CurrentSchemaID {
			continue
		}
		byName, err := iceberg.IndexByName(&sc)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(out.ids, byName)
	}
	if len(out.ids) == 0 {
		t.Fatalf("%s: no current schema", key)
	}
	return out
}

// docIDs are table.json's ids by name path (as iceberg.IndexByName names
// them), partition columns included.
func docIDs(doc *tablemeta.Table) map[string]int {
	out := map[string]int{}
	var walk func(prefix string, f tablemeta.Field)
	walk = func(prefix string, f tablemeta.Field) {
		path := prefix + f.Name
		out[path] = f.ID
		switch f.Type.Kind {
		case tablemeta.Struct:
			for _, g := range f.Type.Fields {
				walk(path+".", g)
			}
		case tablemeta.List:
			walk(path+".", tablemeta.Field{ID: f.Type.Element.ID, Name: "element", Type: f.Type.Element.Type})
		case tablemeta.Map:
			walk(path+".", tablemeta.Field{ID: f.Type.Key.ID, Name: "key", Type: f.Type.Key.Type})
			walk(path+".", tablemeta.Field{ID: f.Type.Value.ID, Name: "value", Type: f.Type.Value.Type})
		}
	}
	for _, f := range doc.Schema.Fields {
		walk("", f)
	}
	for _, c := range doc.PartitionColumns {
		out[c.Name] = c.ID
	}
	return out
}

// writeBackFirst is a store whose first conditional update of table.json
// is preceded by another writer's commit and publish of part (through the
// store underneath), whose publish writes the published ids back into
// table.json: the update then finds table.json changed since its read.
type writeBackFirst struct {
	store.Store
	t    *testing.T
	part string
	once sync.Once
}

func (s *writeBackFirst) Put(ctx context.Context, key string, data []byte, o store.PutOptions) (store.Attrs, error) {
	if key == tablemeta.Key && o.IfMatch != "" {
		s.once.Do(func() { commitIDRowsAndPublish(s.t, pswap.NewTable(s.Store), s.part) })
	}
	return s.Store.Put(ctx, key, data, o)
}

// An evolving commit whose table.json gets the published ids written back
// (another writer's publish) between its read and its update adds its
// column over the written-back document, as it does over a views switch:
// the column takes an id above every published one, the other columns keep
// the published ids and table.json stays marked, and the next publish
// publishes the new column with table.json's id. (Before, the evolving
// commit failed: "the table's metadata was changed by another writer at
// the same time", re-run.)
func TestEvolvingCommitOverAnIDWriteBack(t *testing.T) {
	mem, tb, _, pub := legacyIDTable(t)
	hooked := pswap.NewTable(&writeBackFirst{Store: mem, t: t, part: "dt=2026-11-03"})

	rows := `[{"tags": ["a"], "id": 1, "amount": 1.5, "note": "x"}]`
	s := arrow.NewSchema(append(idColumns(nil), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, s, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	evolve := pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}}
	if _, err := commitRecord(t, hooked, "dt=2026-11-04", rec, evolve); err != nil {
		t.Fatalf("the evolving commit: %v", err)
	}
	doc, err := tablemeta.Load(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	ids := docIDs(doc)
	note, ok := ids["note"]
	if !ok || !doc.PublishedIDs {
		t.Fatalf("table.json after the evolving commit has ids %v (marked %v): want note, marked", ids, doc.PublishedIDs)
	}
	for name, id := range pub {
		if ids[name] != id {
			t.Errorf("%s: table.json's id %d, published %d", name, ids[name], id)
		}
		if id >= note {
			t.Errorf("note's id %d is not above the published %s's %d", note, name, id)
		}
	}
	if doc.LastColumnID != note {
		t.Errorf("last_column_id %d, want note's %d", doc.LastColumnID, note)
	}
	publishTable(t, tb)
	if got := publishedIDs(t, mem); got["note"] != note {
		t.Fatalf("published ids %v: note's is not table.json's %d", got, note)
	}
}
