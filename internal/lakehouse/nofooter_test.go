package lakehouse_test

import (
	"encoding/binary"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// commitFiles commits n data files of 2 rows each as the next generation of part, and returns the commit as the
// facade hands it to the publish (with its manifest). Without stats, the
// manifest is written as a writer before version 1.2 wrote it: without
// column statistics.
func commitFiles(t testing.TB, st store.Store, part string, n int, stats bool) lakehouse.Commit {
	t.Helper()
	txn, err := swap.Begin(ctx, st, part, swap.Options{OnConflict: swap.Overwrite})
	if err != nil {
		t.Fatal(err)
	}
	s := staging.New(ctx, st, txn.DataPrefix(), staging.Options{TargetFileSize: 1})
	// One Arrow record per file (a record rolls the file over at this
	// target size), of the columns of row.
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64}}, nil)
	for i := range n {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{int64(10 * i), int64(10*i + 7)}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{fmt.Sprintf("a%03d", i), fmt.Sprintf("b%03d", i)}, nil)
		b.Field(2).(*array.Float64Builder).AppendValues([]float64{1, 2}, nil)
		rec := b.NewRecordBatch()
		err := s.WriteRecord(rec)
		rec.Release()
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != n {
		t.Fatalf("%d files staged, want %d", len(c.Files), n)
	}
	if !stats {
		for i := range c.Files {
			c.Files[i].Columns = nil
		}
	}
	res, err := txn.Commit(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := swap.ReadManifest(ctx, st, res.Partition, res.Generation)
	if err != nil {
		t.Fatal(err)
	}
	if m.HasStats() != stats {
		t.Fatalf("manifest version %s records statistics: %v, want %v", m.Version, m.HasStats(), stats)
	}
	return lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: m}
}

// dataReads records in calls the requests that touch a data file (a key
// under a generation's data prefix); calls is read once the publish
// returned.
func dataReads(c *storetest.Counting, calls *[]string) store.Store {
	var mu sync.Mutex
	return storetest.NewFaulty(c, func(call storetest.Call) storetest.Fault {
		part, ok := layout.PartitionOf(call.Key)
		if kind, _ := layout.Classify(part, call.Key); ok && kind == layout.KindData {
			mu.Lock()
			*calls = append(*calls, call.Op+" "+call.Key)
			mu.Unlock()
		}
		return storetest.Fault{}
	})
}

// TestPublishReadsNoDataFile: the publish after a commit of 1, 3, 10 or
// 100 files reads no data file (the column statistics travel in the
// commit's manifest) and makes the same 9 requests whatever the number of
// files: the hint, the version, its manifest list, the pointer and the
// replaced manifest, then the manifest, the manifest list, the version and
// the hint. It made 9 + one ranged GET per file before (each file's
// footer). Its entries still carry the statistics. The commit's own
// publish (with the commit's SwappedAt) reads no pointer: the same 8
// whatever the number of files.
func TestPublishReadsNoDataFile(t *testing.T) {
	for _, tc := range []struct {
		n   int
		own bool
	}{{1, false}, {3, false}, {10, false}, {100, false}, {1, true}, {100, true}} {
		n := tc.n
		mem := publishedTable(t, 3)
		before := time.Now()
		c := commitFiles(t, mem, "dt=2026-01-01", n, true)
		wantGets := 5
		if tc.own {
			c.SwappedAt, wantGets = before, 4 // earlier than the commit's own: the bound only tightens
		}
		cs := storetest.NewCounting(mem)
		var data []string
		r, err := lakehouse.PublishCommit(ctx, dataReads(cs, &data), c, lakehouse.Options{WaitForView: true})
		if err != nil || !r.Changed {
			t.Fatalf("%d files: publish %+v %v", n, r, err)
		}
		t.Logf("%d files: %d requests %v", n, cs.Total(), cs.Counts())
		if len(data) > 0 {
			t.Errorf("%d files: the publish read %d data file(s): %v", n, len(data), data[:min(3, len(data))])
		}
		want := map[string]int{"get": wantGets, "put-if-none-match": 3, "put-if-match": 1}
		if got := cs.Counts(); !maps.Equal(got, want) {
			t.Errorf("%d files (own %v): requests %v, want %v", n, tc.own, got, want)
		}
		checkStats(t, mem, c.Partition, n)
	}
}

// TestPublishReadsFootersOfOlderManifests: a generation whose manifest
// predates column statistics (version 1.0) is published as before: one
// ranged GET per file for its footer, and the same statistics.
func TestPublishReadsFootersOfOlderManifests(t *testing.T) {
	const n = 3
	var entries [2][]iceberg.DataFile
	for i, stats := range []bool{true, false} {
		mem := publishedTable(t, 3)
		c := commitFiles(t, mem, "dt=2026-01-01", n, stats)
		cs := storetest.NewCounting(mem)
		var data []string
		if _, err := lakehouse.PublishCommit(ctx, dataReads(cs, &data), c, lakehouse.Options{WaitForView: true}); err != nil {
			t.Fatal(err)
		}
		reads := 0
		if !stats {
			reads = n
		}
		if len(data) != reads || cs.Counts()["get-range"] != reads {
			t.Errorf("statistics in the manifest %v: %d data file requests %v (%v), want %d footer reads", stats, len(data), data, cs.Counts(), reads)
		}
		entries[i] = checkStats(t, mem, c.Partition, n)
	}
	for k := range entries[0] {
		a, b := entries[0][k], entries[1][k]
		if !reflect.DeepEqual(a.NullValueCounts(), b.NullValueCounts()) || !reflect.DeepEqual(a.LowerBoundValues(), b.LowerBoundValues()) ||
			!reflect.DeepEqual(a.UpperBoundValues(), b.UpperBoundValues()) || !reflect.DeepEqual(a.ValueCounts(), b.ValueCounts()) ||
			!reflect.DeepEqual(a.ColumnSizes(), b.ColumnSizes()) {
			t.Errorf("file %d: statistics from the manifest differ from the footer's", k)
		}
	}
}

// checkStats reads the published entries of part back with iceberg-go and
// checks each file's statistics against the rows commitFiles wrote: 2
// values and no null in id and name, id's bounds 10i..10i+7, name's
// "a00i".."b00i". It returns the entries in file order.
func checkStats(t *testing.T, st store.Store, part string, n int) []iceberg.DataFile {
	t.Helper()
	tbl, entries := liveFiles(t, st, part)
	if len(entries) != n {
		t.Fatalf("%d files published for %s, want %d", len(entries), part, n)
	}
	id := tbl.Schema().FindFieldByName
	idField, _ := id("id")
	nameField, _ := id("name")
	a, b := idField.ID, nameField.ID
	for i, df := range entries {
		if df.ValueCounts()[a] != 2 || df.NullValueCounts()[a] != 0 || df.ValueCounts()[b] != 2 || df.NullValueCounts()[b] != 0 {
			t.Errorf("file %d: value counts %v, null counts %v", i, df.ValueCounts(), df.NullValueCounts())
		}
		lo, hi := df.LowerBoundValues(), df.UpperBoundValues()
		if len(lo[a]) != 8 || len(hi[a]) != 8 || int64(binary.LittleEndian.Uint64(lo[a])) != int64(10*i) || int64(binary.LittleEndian.Uint64(hi[a])) != int64(10*i+7) ||
			string(lo[b]) != fmt.Sprintf("a%03d", i) || string(hi[b]) != fmt.Sprintf("b%03d", i) {
			t.Errorf("file %d: bounds %v..%v", i, lo, hi)
		}
	}
	return entries
}

// liveFiles reads the current snapshot's live entries of part's files with
// iceberg-go, sorted by path (the order staging wrote them).
func liveFiles(t *testing.T, st store.Store, part string) (*table.Table, []iceberg.DataFile) {
	t.Helper()
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, icebergIO(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	for _, mf := range mfs {
		for e, err := range mf.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(e.DataFile().FilePath(), "/"+part+"/") {
				out = append(out, e.DataFile())
			}
		}
	}
	slices.SortFunc(out, func(x, y iceberg.DataFile) int { return strings.Compare(x.FilePath(), y.FilePath()) })
	return tbl, out
}

// BenchmarkPublishFiles measures the publish after a commit of n files on
// a store whose every request is a round trip of rtt (20 ms):
// requests/op and round-trips/op (the wall time in round trips) against
// the number of files.
//
//	go test -run '^$' -bench PublishFiles -benchtime 5x ./internal/lakehouse/
func BenchmarkPublishFiles(b *testing.B) {
	for _, n := range []int{1, 3, 10, 100} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			var reqs, trips float64
			k := 0
			for b.Loop() {
				b.StopTimer()
				mem := publishedTable(b, 3)
				c := commitFiles(b, mem, "dt=2026-01-01", n, true)
				cs := storetest.NewCounting(storetest.NewLatency(mem, rtt))
				b.StartTimer()
				start := time.Now()
				if _, err := lakehouse.PublishCommit(ctx, cs, c, lakehouse.Options{}); err != nil {
					b.Fatal(err)
				}
				trips += float64(time.Since(start)) / float64(rtt)
				reqs += float64(cs.Total())
				k++
			}
			b.ReportMetric(reqs/float64(k), "requests/op")
			b.ReportMetric(trips/float64(k), "round-trips/op")
		})
	}
}
