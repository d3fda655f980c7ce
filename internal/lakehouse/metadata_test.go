package lakehouse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// pswap's metadata model replaced iceberg-go's table.MetadataBuilder and
// table.ParseMetadataBytes (whose package initialisation cost every CLI
// invocation a tenth of a second). These tests hold it to them: each
// version pswap writes is what the builder writes for the same change,
// byte for byte, and reads back in iceberg-go the same; metadata the
// builder wrote (the tables published before) reads in pswap the same.

// The old code path (publish.go and expire.go as they were), one function
// per kind of version.

func oldFirst(t *testing.T, id uuid.UUID, loc string, sc *iceberg.Schema, spec iceberg.PartitionSpec, props iceberg.Properties, snap table.Snapshot) []byte {
	t.Helper()
	b, err := table.NewMetadataBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	unsorted := table.UnsortedSortOrder
	err = errors.Join(b.SetUUID(id), b.SetLoc(loc), b.AddSchema(sc), b.SetCurrentSchemaID(-1),
		b.AddSortOrder(&unsorted), b.SetDefaultSortOrderID(-1),
		b.AddPartitionSpec(&spec, true), b.SetDefaultSpecID(-1),
		b.SetProperties(props), b.AddSnapshot(&snap), b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef))
	if err != nil {
		t.Fatal(err)
	}
	return oldEncode(t, b)
}

func oldNext(t *testing.T, base []byte, baseLoc string, sc *iceberg.Schema, props iceberg.Properties, snap table.Snapshot) []byte {
	t.Helper()
	b := oldBuilder(t, base, baseLoc)
	var err error
	if sc != nil {
		err = errors.Join(b.AddSchema(sc), b.SetCurrentSchemaID(-1))
	}
	err = errors.Join(err, b.SetProperties(props), b.AddSnapshot(&snap), b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef))
	if err != nil {
		t.Fatal(err)
	}
	return oldEncode(t, b)
}

var lastUpdatedRE = regexp.MustCompile(`"last-updated-ms":-?\d+`)

// oldExpire is the version iceberg-go's builder writes for an expiry,
// with the metadata log pswap keeps readable: without the versions whose
// current snapshot the expiry removed (read from the versions themselves,
// which version returns by location), which iceberg-go keeps.
func oldExpire(t *testing.T, base []byte, baseLoc string, drop []int64, nowMs int64, version func(loc string) []byte) []byte {
	t.Helper()
	b := oldBuilder(t, base, baseLoc)
	if err := b.RemoveSnapshots(drop, false); err != nil {
		t.Fatal(err)
	}
	data := oldEncode(t, b)
	// The builder stamped the version with the local clock; expire.go
	// replaced it with its own.
	data = lastUpdatedRE.ReplaceAll(data, fmt.Appendf(nil, `"last-updated-ms":%d`, max(nowMs, oldParse(t, base).LastUpdatedMillis())))
	return metadataLogRE.ReplaceAllFunc(data, func(log []byte) []byte {
		var entries []struct {
			File string `json:"metadata-file"`
			Ms   int64  `json:"timestamp-ms"`
		}
		if err := json.Unmarshal(log[len(`"metadata-log":`):], &entries); err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, e := range entries {
			if cur := oldParse(t, version(e.File)).CurrentSnapshot(); cur != nil && !slices.Contains(drop, cur.SnapshotID) {
				kept = append(kept, fmt.Sprintf(`{"metadata-file":%q,"timestamp-ms":%d}`, e.File, e.Ms))
			}
		}
		return []byte(`"metadata-log":[` + strings.Join(kept, ",") + `]`)
	})
}

var metadataLogRE = regexp.MustCompile(`"metadata-log":\[[^\]]*\]`)

func oldBuilder(t *testing.T, base []byte, baseLoc string) *table.MetadataBuilder {
	t.Helper()
	b, err := table.MetadataBuilderFromBase(oldParse(t, base), baseLoc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func oldEncode(t *testing.T, b *table.MetadataBuilder) []byte {
	t.Helper()
	md, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func oldParse(t *testing.T, data []byte) table.Metadata {
	t.Helper()
	m, err := table.ParseMetadataBytes(data)
	if err != nil {
		t.Fatalf("iceberg-go: %v\n%s", err, data)
	}
	return m
}

// newParse parses with pswap's model and checks that it encodes what it
// read back to the same bytes.
func newParse(t *testing.T, data []byte) *lakehouse.Metadata {
	t.Helper()
	m, err := lakehouse.ParseMetadata(data)
	if err != nil {
		t.Fatalf("pswap: %v\n%s", err, data)
	}
	again, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("pswap's model encodes what it read differently:\nread    %s\nencoded %s", data, again)
	}
	return m
}

// sameContent checks that the two readers see the same metadata.
func sameContent(t *testing.T, data []byte) {
	t.Helper()
	old, m := oldParse(t, data), lakehouse.Model(newParse(t, data))
	eq := func(what string, a, b any) {
		t.Helper()
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: iceberg-go reads %v, pswap %v", what, a, b)
		}
	}
	eq("format version", old.Version(), m.FormatVersion)
	eq("uuid", old.TableUUID(), m.TableUUID)
	eq("location", old.Location(), m.Location)
	eq("last-updated-ms", old.LastUpdatedMillis(), m.LastUpdatedMS)
	eq("last-column-id", old.LastColumnID(), m.LastColumnID)
	eq("last-sequence-number", old.LastSequenceNumber(), m.LastSequenceNumber)
	eq("last-partition-id", *old.LastPartitionSpecID(), m.LastPartitionID)
	eq("current schema id", old.CurrentSchema().ID, m.CurrentSchemaID)
	if len(old.Schemas()) != len(m.Schemas) {
		t.Fatalf("%d schemas in iceberg-go, %d in pswap", len(old.Schemas()), len(m.Schemas))
	}
	for i, s := range old.Schemas() {
		if !s.Equals(m.Schemas[i]) || s.ID != m.Schemas[i].ID {
			t.Fatalf("schema %d: iceberg-go %v, pswap %v", i, s, m.Schemas[i])
		}
	}
	eq("default spec id", old.DefaultPartitionSpec(), m.DefaultSpecID)
	if len(old.PartitionSpecs()) != len(m.PartitionSpecs) {
		t.Fatalf("%d specs in iceberg-go, %d in pswap", len(old.PartitionSpecs()), len(m.PartitionSpecs))
	}
	for i, s := range old.PartitionSpecs() {
		if !s.Equals(m.PartitionSpecs[i]) {
			t.Fatalf("spec %d: iceberg-go %v, pswap %v", i, s, m.PartitionSpecs[i])
		}
	}
	eq("default sort order", old.DefaultSortOrder(), m.DefaultSortOrderID)
	eq("sort orders", len(old.SortOrders()), len(m.SortOrders))
	if !maps.Equal(old.Properties(), iceberg.Properties(m.Properties)) {
		t.Fatalf("properties: iceberg-go %v, pswap %v", old.Properties(), m.Properties)
	}
	oldCur, newCur := int64(-1), int64(-1)
	if cs := old.CurrentSnapshot(); cs != nil {
		oldCur = cs.SnapshotID
	}
	if m.CurrentSnapshotID != nil {
		newCur = *m.CurrentSnapshotID
	}
	eq("current snapshot", oldCur, newCur)
	if len(old.Snapshots()) != len(m.Snapshots) {
		t.Fatalf("%d snapshots in iceberg-go, %d in pswap", len(old.Snapshots()), len(m.Snapshots))
	}
	for i, s := range old.Snapshots() {
		n := m.Snapshots[i]
		sum := maps.Clone(s.Summary.Properties)
		sum["operation"] = string(s.Summary.Operation)
		ptr := func(p *int64) string {
			if p == nil {
				return "none"
			}
			return fmt.Sprint(*p)
		}
		if s.SnapshotID != n.SnapshotID || ptr(s.ParentSnapshotID) != ptr(n.ParentSnapshotID) || s.SequenceNumber != n.SequenceNumber ||
			s.TimestampMs != n.TimestampMs || s.ManifestList != n.ManifestList || !maps.Equal(sum, n.Summary) ||
			fmt.Sprint(*s.SchemaID) != fmt.Sprint(*n.SchemaID) {
			t.Fatalf("snapshot %d: iceberg-go %+v %v, pswap %+v", i, s, sum, n)
		}
	}
	oldRefs := maps.Collect(old.Refs())
	if len(oldRefs) != len(m.Refs) {
		t.Fatalf("refs: iceberg-go %v, pswap %v", oldRefs, m.Refs)
	}
	for name, r := range oldRefs {
		n, ok := m.Refs[name]
		a, _ := json.Marshal(r)
		b, _ := json.Marshal(n)
		if !ok || !bytes.Equal(a, b) {
			t.Fatalf("ref %s: iceberg-go %s, pswap %s", name, a, b)
		}
	}
	var oldLog, newLog []string
	for e := range old.SnapshotLogs() {
		oldLog = append(oldLog, fmt.Sprint(e.SnapshotID, "@", e.TimestampMs))
	}
	for _, e := range m.SnapshotLog {
		newLog = append(newLog, fmt.Sprint(e.SnapshotID, "@", e.TimestampMs))
	}
	eq("snapshot log", oldLog, newLog)
	oldLog, newLog = nil, nil
	for e := range old.PreviousFiles() {
		oldLog = append(oldLog, fmt.Sprint(e.MetadataFile, "@", e.TimestampMs))
	}
	for _, e := range m.MetadataLog {
		newLog = append(newLog, fmt.Sprint(e.MetadataFile, "@", e.TimestampMs))
	}
	eq("metadata log", oldLog, newLog)
}

// snapshotPair is a snapshot as both models spell it: pswap's has no
// schema-id (its builder stamps the current schema's), iceberg-go's has
// the one publish.go gave it.
func snapshotPair(id, parent, seq, ts int64, schemaID int, op string, props map[string]string) (lakehouse.Snapshot, table.Snapshot) {
	var p *int64
	if parent != 0 {
		p = &parent
	}
	list := fmt.Sprintf("s3://b/t/metadata/snap-%d-1-abcdef01.avro", id)
	sum := maps.Clone(props)
	sum["operation"] = op
	return lakehouse.Snapshot{SnapshotID: id, ParentSnapshotID: p, SequenceNumber: seq, TimestampMs: ts, ManifestList: list, Summary: sum},
		table.Snapshot{SnapshotID: id, ParentSnapshotID: p, SequenceNumber: seq, TimestampMs: ts, ManifestList: list,
			Summary: &table.Summary{Operation: table.Operation(op), Properties: maps.Clone(props)}, SchemaID: &schemaID}
}

// TestMetadataModelMatchesIcebergGo builds a chain of versions with every
// change pswap makes (first version, snapshots, a schema change, expiries
// that remove snapshots at the start and in the middle of the log, a tag,
// the metadata log's cap), each from the same base with iceberg-go's
// builder and with pswap's: the two must write the same bytes, and each
// version must read the same in both.
func TestMetadataModelMatchesIcebergGo(t *testing.T) {
	const loc = "s3://b/t"
	vloc := func(v int) string { return fmt.Sprintf("%s/metadata/v%d.metadata.json", loc, v) }
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() // in the past: the builder compares with the local clock
	id := uuid.MustParse("0b5f4c3e-1d2a-4e8f-9a7b-6c5d4e3f2a1b")
	sc := func(extra bool) *iceberg.Schema { // a fresh one each time: the builder renumbers what it gets
		fields := []iceberg.NestedField{
			{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
			{ID: 3, Name: "dt", Type: iceberg.PrimitiveTypes.String},
		}
		if !extra {
			return iceberg.NewSchema(0, fields...)
		}
		// Under an id in use: both builders take the next free one.
		return iceberg.NewSchema(0, append(fields, iceberg.NestedField{ID: 4, Name: "extra", Type: iceberg.PrimitiveTypes.Int32})...)
	}
	pid := 1000
	spec, err := iceberg.NewPartitionSpecOpts(iceberg.AddPartitionFieldByName("dt", "dt", iceberg.IdentityTransform{}, sc(false), &pid))
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{"pswap.format": "pswap/1", "write.metadata.previous-versions-max": "3", "schema.name-mapping.default": `[{"names":["id"],"field-id":1}]`}
	sum := map[string]string{"added-records": "5", "pswap.partition": "dt=2026-11-01"}

	var versions [][]byte // versions[v-1] is vN, as iceberg-go wrote it
	check := func(what string, old, got []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: pswap: %v", what, err)
		}
		if !bytes.Equal(old, got) {
			t.Fatalf("%s: iceberg-go's builder wrote\n%s\npswap's\n%s", what, old, got)
		}
		sameContent(t, got)
		versions = append(versions, old)
	}
	last := func() []byte { return versions[len(versions)-1] }

	n1, o1 := snapshotPair(11, 0, 1, t0, 0, "append", sum)
	got, err := lakehouse.BuildFirstMetadata(id, loc, sc(false), spec, props, n1)
	check("v1", oldFirst(t, id, loc, sc(false), spec, props, o1), got, err)

	n2, o2 := snapshotPair(12, 11, 2, t0+1000, 0, "overwrite", sum)
	got, err = lakehouse.BuildNextMetadata(last(), vloc(1), nil, props, n2)
	check("v2", oldNext(t, last(), vloc(1), nil, props, o2), got, err)

	// A tag on snapshot 12 (pswap writes none; another writer might): the
	// expiry that removes 12 must drop it.
	b := oldBuilder(t, last(), vloc(2))
	if err := b.SetSnapshotRef("audit", 12, table.TagRef, table.WithMaxRefAgeMs(86_400_000)); err != nil {
		t.Fatal(err)
	}
	// The builder stamps a version that adds no snapshot with the local
	// clock, which would put it after the next snapshot.
	tagged := lastUpdatedRE.ReplaceAll(oldEncode(t, b), fmt.Appendf(nil, `"last-updated-ms":%d`, t0+1500))
	sameContent(t, tagged)
	versions = append(versions, tagged) // v3

	// A schema change with a new property.
	props["k"] = "v"
	n4, o4 := snapshotPair(13, 12, 3, t0+2000, 1, "append", sum)
	got, err = lakehouse.BuildNextMetadata(last(), vloc(3), sc(true), props, n4)
	check("v4 (schema change)", oldNext(t, last(), vloc(3), sc(true), props, o4), got, err)
	if m := lakehouse.Model(newParse(t, got)); m.CurrentSchemaID != 1 || m.LastColumnID != 4 || *m.Snapshots[2].SchemaID != 1 {
		t.Fatalf("after the schema change: current schema %d, last column %d, snapshot schema %d", m.CurrentSchemaID, m.LastColumnID, *m.Snapshots[2].SchemaID)
	}

	n5, o5 := snapshotPair(14, 13, 4, t0+3000, 1, "append", sum)
	got, err = lakehouse.BuildNextMetadata(last(), vloc(4), nil, props, n5)
	check("v5", oldNext(t, last(), vloc(4), nil, props, o5), got, err)

	got, err = lakehouse.BuildExpiredMetadata(last(), vloc(5), []int64{11, 12}, t0+10_000)
	byLoc := func(loc string) []byte {
		for v := range versions {
			if vloc(v+1) == loc {
				return versions[v]
			}
		}
		t.Fatalf("no version at %s", loc)
		return nil
	}
	// Expire the first two: the tag goes, the snapshot log keeps 13, 14,
	// the metadata log loses v3 (whose current snapshot was 12).
	check("v6 (expiry)", oldExpire(t, last(), vloc(5), []int64{11, 12}, t0+10_000, byLoc), got, err)
	m := lakehouse.Model(newParse(t, got))
	if len(m.Refs) != 1 || len(m.SnapshotLog) != 2 || len(m.MetadataLog) != 2 || m.LastUpdatedMS != t0+10_000 {
		t.Fatalf("after the expiry: refs %v, snapshot log %v, metadata log %v (capped at 3, less v3), last updated %d", m.Refs, m.SnapshotLog, m.MetadataLog, m.LastUpdatedMS)
	}

	n7, o7 := snapshotPair(15, 14, 5, t0+11_000, 1, "overwrite", sum)
	got, err = lakehouse.BuildNextMetadata(last(), vloc(6), nil, props, n7)
	check("v7", oldNext(t, last(), vloc(6), nil, props, o7), got, err)

	// Expire 14, in the middle of the log [13 14 15], which then keeps
	// only what follows it, with a clock behind the last version's.
	got, err = lakehouse.BuildExpiredMetadata(last(), vloc(7), []int64{14}, t0+5000)
	check("v8 (expiry in the middle)", oldExpire(t, last(), vloc(7), []int64{14}, t0+5000, byLoc), got, err)
	m = lakehouse.Model(newParse(t, got))
	if len(m.SnapshotLog) != 1 || m.SnapshotLog[0].SnapshotID != 15 || len(m.Snapshots) != 2 || m.LastUpdatedMS != t0+11_000 {
		t.Fatalf("after the second expiry: snapshot log %v, %d snapshots, last updated %d", m.SnapshotLog, len(m.Snapshots), m.LastUpdatedMS)
	}

	// A cap of 0 keeps one entry.
	props["write.metadata.previous-versions-max"] = "0"
	n9, o9 := snapshotPair(16, 15, 6, t0+12_000, 1, "append", sum)
	got, err = lakehouse.BuildNextMetadata(last(), vloc(8), nil, props, n9)
	check("v9", oldNext(t, last(), vloc(8), nil, props, o9), got, err)
	if m := lakehouse.Model(newParse(t, got)); len(m.MetadataLog) != 1 || m.MetadataLog[0].MetadataFile != vloc(8) {
		t.Fatalf("metadata log %v, want v8 alone", m.MetadataLog)
	}

	// The builders refuse what iceberg-go's refused.
	if _, err := lakehouse.BuildExpiredMetadata(last(), vloc(9), []int64{16}, t0+20_000); err == nil {
		t.Fatal("the current snapshot was expired")
	}
	if _, err := lakehouse.BuildNextMetadata(last(), vloc(9), nil, props, n9); err == nil {
		t.Fatal("a snapshot id was added twice")
	}
	stale, _ := snapshotPair(17, 16, 6, t0+13_000, 1, "append", sum)
	if _, err := lakehouse.BuildNextMetadata(last(), vloc(9), nil, props, stale); err == nil {
		t.Fatal("a snapshot reused the last sequence number")
	}
}

// commitRows commits rows of any type as a new generation of part, under
// ctx.
func commitRows[T any](t *testing.T, ctx context.Context, st store.Store, part string, rows ...T) swap.Result {
	t.Helper()
	res, _, err := commitIn(ctx, st, part, swap.Options{OnConflict: swap.Overwrite}, rows...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPublishedMetadataMatchesIcebergGo: every version that publishes and
// expiries write (appends, replaces, a reconcile, two schema changes, an
// expiry) reads in iceberg-go as in pswap, and is what iceberg-go's builder
// writes from the version before, as publish.go and expire.go used it.
func TestPublishedMetadataMatchesIcebergGo(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	n := 0
	ids := env.With(ctx, &env.Env{GenerationIDs: func() string { n++; return fmt.Sprintf("01a2321e-ffff-7000-8000-%012d", n) }})
	commit := func(part string, rs int, seed string, opts swap.Options) swap.Result {
		t.Helper()
		res, _, err := commitIn(ids, mem, part, opts, rows(rs, seed)...)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	pctx := env.With(ctx, &env.Env{Clock: func() time.Time { clock = clock.Add(1500 * time.Millisecond); return clock },
		Rand: rand.New(rand.NewPCG(3, 9))})
	opts := lakehouse.Options{Concurrency: 1}
	pub := func(res swap.Result) {
		t.Helper()
		if _, err := lakehouse.PublishCommit(pctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, opts); err != nil {
			t.Fatal(err)
		}
	}
	pub(commit("dt=2026-11-01", 5, "a", swap.Options{RunID: "r1"}))
	pub(commit("dt=2026-11-02", 4, "b", swap.Options{RunID: "r2"}))
	commit("dt=2026-11-03", 3, "c", swap.Options{})
	commit("dt=2026-11-01", 2, "d", swap.Options{OnConflict: swap.Overwrite})
	if _, err := lakehouse.Publish(pctx, mem, opts); err != nil { // a reconcile of two partitions
		t.Fatal(err)
	}
	type extra struct {
		row
		Extra *int32 `parquet:"extra,optional"`
	}
	type wider struct {
		row
		Extra *int64 `parquet:"extra,optional"`
	}
	x, y := int32(1), int64(2)
	pub(commitRows(t, ids, mem, "dt=2026-11-04", extra{row{1, "x", 0.5}, &x}, extra{row{2, "y", 1}, nil})) // a new column
	pub(commitRows(t, ids, mem, "dt=2026-11-02", wider{row{3, "z", 2}, &y}))                               // int -> long
	expire := lakehouse.ExpireOptions{Retention: 5 * time.Second, MinAge: time.Nanosecond, Now: func() time.Time { return clock }}
	if r, err := lakehouse.Expire(ctx, mem, expire); err != nil || len(r.Expired) == 0 {
		t.Fatalf("expire: %+v %v", r, err)
	}
	pub(commit("dt=2026-11-03", 6, "e", swap.Options{OnConflict: swap.Overwrite}))

	_, latest, err := lakehouse.Latest(ctx, mem)
	if err != nil || latest != 7 {
		t.Fatalf("latest version %d, %v; want 7", latest, err)
	}
	var prev []byte
	schemaChanges, expiries := 0, 0
	for v := 1; v <= latest; v++ {
		data, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(v))
		if err != nil {
			t.Fatal(err)
		}
		sameContent(t, data)
		if again, _ := json.Marshal(oldParse(t, data)); !bytes.Equal(again, data) {
			t.Fatalf("v%d: iceberg-go encodes what it read differently:\n%s\n%s", v, data, again)
		}
		cur := oldParse(t, data)
		var want []byte
		if v == 1 {
			props := cur.Properties()
			s := cur.Snapshots()[0]
			want = oldFirst(t, cur.TableUUID(), cur.Location(), cur.CurrentSchema(), cur.PartitionSpec(), props, s)
		} else {
			before := oldParse(t, prev)
			var added []table.Snapshot
			for _, s := range cur.Snapshots() {
				if before.SnapshotByID(s.SnapshotID) == nil {
					added = append(added, s)
				}
			}
			switch len(added) {
			case 1:
				var sc *iceberg.Schema
				if cur.CurrentSchema().ID != before.CurrentSchema().ID {
					sc = cur.CurrentSchema()
					schemaChanges++
				}
				want = oldNext(t, prev, mem.URI(lakehouse.MetadataKey(v-1)), sc, cur.Properties(), added[0])
			case 0:
				var drop []int64
				for _, s := range before.Snapshots() {
					if cur.SnapshotByID(s.SnapshotID) == nil {
						drop = append(drop, s.SnapshotID)
					}
				}
				want = oldExpire(t, prev, mem.URI(lakehouse.MetadataKey(v-1)), drop, cur.LastUpdatedMillis(), func(loc string) []byte {
					data, _, err := store.ReadAll(ctx, mem, strings.TrimPrefix(loc, mem.URI("")))
					if err != nil {
						t.Fatal(err)
					}
					return data
				})
				expiries++
			default:
				t.Fatalf("v%d adds %d snapshots", v, len(added))
			}
		}
		if !bytes.Equal(want, data) {
			t.Fatalf("v%d: pswap wrote\n%s\niceberg-go's builder writes\n%s", v, data, want)
		}
		prev = data
	}
	if schemaChanges != 2 || expiries != 1 {
		t.Fatalf("%d schema changes and %d expiries, want 2 and 1", schemaChanges, expiries)
	}
	checkReaders(t, mem)
}

// A valid version to tamper with: two snapshots, a schema change.
func goodMetadata(t testing.TB) map[string]any {
	t.Helper()
	data := []byte(`{"last-sequence-number":2,"format-version":2,"table-uuid":"0b5f4c3e-1d2a-4e8f-9a7b-6c5d4e3f2a1b","location":"s3://b/t",
"last-updated-ms":1735689601000,"last-column-id":3,
"schemas":[{"type":"struct","fields":[{"type":"long","id":1,"name":"id","required":true},{"type":"string","id":2,"name":"dt","required":false}],"schema-id":0,"identifier-field-ids":[]},
 {"type":"struct","fields":[{"type":"long","id":1,"name":"id","required":true},{"type":"string","id":2,"name":"dt","required":false},{"type":"int","id":3,"name":"x","required":false}],"schema-id":1,"identifier-field-ids":[]}],
"current-schema-id":1,"partition-specs":[{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"dt","transform":"identity"}]}],
"default-spec-id":0,"last-partition-id":1000,"properties":{"pswap.format":"pswap/1"},"current-snapshot-id":12,
"snapshot-log":[{"snapshot-id":11,"timestamp-ms":1735689600000},{"snapshot-id":12,"timestamp-ms":1735689601000}],
"metadata-log":[{"metadata-file":"s3://b/t/metadata/v1.metadata.json","timestamp-ms":1735689600000}],
"sort-orders":[{"order-id":0,"fields":[]}],"default-sort-order-id":0,"refs":{"main":{"snapshot-id":12,"type":"branch"}},
"snapshots":[{"snapshot-id":11,"sequence-number":1,"timestamp-ms":1735689600000,"manifest-list":"s3://b/t/metadata/snap-11-1-abcdef01.avro","summary":{"operation":"append"},"schema-id":0},
 {"snapshot-id":12,"parent-snapshot-id":11,"sequence-number":2,"timestamp-ms":1735689601000,"manifest-list":"s3://b/t/metadata/snap-12-1-abcdef01.avro","summary":{"operation":"overwrite"},"schema-id":1}]}`)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encodeJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseMetadataRefuses: a version with a field missing, of the wrong
// type, or with ids that disagree is ErrCorrupt with what is wrong, never a
// panic; so is every truncation of a good one.
func TestParseMetadataRefuses(t *testing.T) {
	parsed, err := lakehouse.ParseMetadata(encodeJSON(t, goodMetadata(t)))
	if err != nil {
		t.Fatal(err)
	}
	good := encodeJSON(t, parsed) // in the order of a metadata file's keys
	sameContent(t, good)
	snap := func(m map[string]any, i int) map[string]any { return m["snapshots"].([]any)[i].(map[string]any) }
	cases := []struct {
		name, want string
		edit       func(m map[string]any)
	}{
		{"format 1", "format version 1", func(m map[string]any) { m["format-version"] = 1 }},
		{"format 3", "format version 3", func(m map[string]any) { m["format-version"] = 3 }},
		{"no format", "format-version is missing", func(m map[string]any) { delete(m, "format-version") }},
		{"v3 field", "format version 3", func(m map[string]any) { m["next-row-id"] = 5 }},
		{"no uuid", "table-uuid is missing", func(m map[string]any) { delete(m, "table-uuid") }},
		{"bad uuid", "table-uuid", func(m map[string]any) { m["table-uuid"] = "not-a-uuid" }},
		{"nil uuid", "nil UUID", func(m map[string]any) { m["table-uuid"] = uuid.Nil.String() }},
		{"no location", "location is missing", func(m map[string]any) { delete(m, "location") }},
		{"empty location", "location is empty", func(m map[string]any) { m["location"] = "" }},
		{"null last-updated", "last-updated-ms is missing", func(m map[string]any) { m["last-updated-ms"] = nil }},
		{"string last-updated", "last-updated-ms", func(m map[string]any) { m["last-updated-ms"] = "soon" }},
		{"no last-sequence-number", "last-sequence-number is missing", func(m map[string]any) { delete(m, "last-sequence-number") }},
		{"low last-sequence-number", "outside 0..last-sequence-number 1", func(m map[string]any) { m["last-sequence-number"] = 1 }},
		{"low last-column-id", "past last-column-id 2", func(m map[string]any) { m["last-column-id"] = 2 }},
		{"no schemas", "schemas is missing", func(m map[string]any) { delete(m, "schemas") }},
		{"empty schemas", "no schemas", func(m map[string]any) { m["schemas"] = []any{} }},
		{"null schema", "schemas[1] is null", func(m map[string]any) { m["schemas"].([]any)[1] = nil }},
		{"duplicate schema", "schema id 0 is used twice", func(m map[string]any) {
			m["schemas"].([]any)[1].(map[string]any)["schema-id"] = 0
		}},
		{"unknown current schema", "current-schema-id 7", func(m map[string]any) { m["current-schema-id"] = 7 }},
		{"no specs", "partition-specs is missing", func(m map[string]any) { delete(m, "partition-specs") }},
		{"spec without id", "no spec-id", func(m map[string]any) { delete(m["partition-specs"].([]any)[0].(map[string]any), "spec-id") }},
		{"spec field without id", "has no field-id", func(m map[string]any) {
			delete(m["partition-specs"].([]any)[0].(map[string]any)["fields"].([]any)[0].(map[string]any), "field-id")
		}},
		{"unknown default spec", "default-spec-id 3", func(m map[string]any) { m["default-spec-id"] = 3 }},
		{"low last-partition-id", "past last-partition-id 999", func(m map[string]any) { m["last-partition-id"] = 999 }},
		{"spec of an unknown column", "source column 9", func(m map[string]any) {
			m["partition-specs"].([]any)[0].(map[string]any)["fields"].([]any)[0].(map[string]any)["source-id"] = 9
		}},
		{"no sort orders", "sort-orders is missing", func(m map[string]any) { delete(m, "sort-orders") }},
		{"unknown sort order", "default-sort-order-id 4", func(m map[string]any) { m["default-sort-order-id"] = 4 }},
		{"sorted order 0", "sort order 0 (unsorted) has fields", func(m map[string]any) {
			m["sort-orders"] = []any{map[string]any{"order-id": 0, "fields": []any{map[string]any{"source-id": 1}}}}
		}},
		{"snapshot without id", "snapshots[0] has no snapshot-id", func(m map[string]any) { delete(snap(m, 0), "snapshot-id") }},
		{"snapshot without timestamp", "snapshot 11 has no timestamp-ms", func(m map[string]any) { delete(snap(m, 0), "timestamp-ms") }},
		{"snapshot without sequence number", "snapshot 11 has no sequence-number", func(m map[string]any) { delete(snap(m, 0), "sequence-number") }},
		{"snapshot without manifest list", "snapshot 12 has no manifest-list", func(m map[string]any) { delete(snap(m, 1), "manifest-list") }},
		{"snapshot without summary", "snapshot 12 has no summary", func(m map[string]any) { delete(snap(m, 1), "summary") }},
		{"snapshot without operation", `snapshot 12 has operation ""`, func(m map[string]any) { snap(m, 1)["summary"] = map[string]any{"x": "1"} }},
		{"negative snapshot id", "snapshot id -3 is not positive", func(m map[string]any) { snap(m, 0)["snapshot-id"] = -3 }},
		{"duplicate snapshot id", "snapshot id 11 is used twice", func(m map[string]any) { snap(m, 1)["snapshot-id"] = 11 }},
		{"own parent", "snapshot 12 is its own parent", func(m map[string]any) { snap(m, 1)["parent-snapshot-id"] = 12 }},
		{"parent not older", "its parent 11 has 2", func(m map[string]any) { snap(m, 0)["sequence-number"] = 2 }},
		{"snapshot of an unknown schema", "schema-id 5", func(m map[string]any) { snap(m, 1)["schema-id"] = 5 }},
		{"unknown current snapshot", "current-snapshot-id 99", func(m map[string]any) {
			m["current-snapshot-id"] = 99
			delete(m, "refs")
		}},
		{"main elsewhere", "the main branch names snapshot 11, the current snapshot is 12", func(m map[string]any) {
			m["refs"].(map[string]any)["main"].(map[string]any)["snapshot-id"] = 11
		}},
		{"main without current", "no current snapshot", func(m map[string]any) { delete(m, "current-snapshot-id") }},
		{"main a tag", "main is a tag", func(m map[string]any) { m["refs"].(map[string]any)["main"].(map[string]any)["type"] = "tag" }},
		{"ref to nothing", `ref "old" names snapshot 5`, func(m map[string]any) {
			m["refs"].(map[string]any)["old"] = map[string]any{"snapshot-id": 5, "type": "tag"}
		}},
		{"ref of no type", `ref "x" has type "leaf"`, func(m map[string]any) {
			m["refs"].(map[string]any)["x"] = map[string]any{"snapshot-id": 11, "type": "leaf"}
		}},
		{"ref without id", `ref "y" lacks snapshot-id`, func(m map[string]any) { m["refs"].(map[string]any)["y"] = map[string]any{"type": "tag"} }},
		{"snapshot log backwards", "snapshot-log[1]", func(m map[string]any) {
			m["snapshot-log"].([]any)[1].(map[string]any)["timestamp-ms"] = 1735689600000 - 120_000
		}},
		{"metadata log after the version", "before the last metadata-log entry", func(m map[string]any) {
			m["metadata-log"].([]any)[0].(map[string]any)["timestamp-ms"] = 1735689601000 + 120_000
		}},
		{"statistics without snapshot", "statistics[0] has no snapshot-id", func(m map[string]any) { m["statistics"] = []any{map[string]any{}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := goodMetadata(t)
			c.edit(m)
			_, err := lakehouse.ParseMetadata(encodeJSON(t, m))
			if !errors.Is(err, lakehouse.ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrCorrupt saying %q", err, c.want)
			}
		})
	}
	for _, data := range []string{"", "null", "[]", "{}", `{"format-version":"2"}`, "{\"format-version\":2,"} {
		if _, err := lakehouse.ParseMetadata([]byte(data)); !errors.Is(err, lakehouse.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", data, err)
		}
	}
	for i := range len(good) - 1 {
		if _, err := lakehouse.ParseMetadata(good[:i]); !errors.Is(err, lakehouse.ErrCorrupt) {
			t.Fatalf("truncated at %d: %v, want ErrCorrupt", i, err)
		}
	}

	// What iceberg-go reads too: current-snapshot-id -1 without
	// snapshots, and a current snapshot without refs (main is implied).
	m := goodMetadata(t)
	m["current-snapshot-id"] = -1
	delete(m, "refs")
	delete(m, "snapshots")
	delete(m, "snapshot-log")
	md, err := lakehouse.ParseMetadata(encodeJSON(t, m))
	if err != nil || md.CurrentSnapshot() != nil {
		t.Fatalf("no snapshot: %v", err)
	}
	m = goodMetadata(t)
	delete(m, "refs")
	md, err = lakehouse.ParseMetadata(encodeJSON(t, m))
	if err != nil || md.CurrentSnapshot() == nil || md.CurrentSnapshot().SnapshotID != 12 || lakehouse.Model(md).Refs["main"].SnapshotID != 12 {
		t.Fatalf("no refs: %v", err)
	}
	if _, err := table.ParseMetadataBytes(encodeJSON(t, m)); err != nil {
		t.Fatalf("iceberg-go: %v", err)
	}
}
