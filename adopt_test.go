package pswap_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// parquetBytes encodes rows ids first..first+n-1 as a Parquet file.
func parquetBytes(t testing.TB, first, n int) []byte {
	t.Helper()
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{ID: int64(first + i), Name: fmt.Sprintf("name-%d", first+i)}
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func putObj(t testing.TB, st store.Store, key string, data []byte) {
	t.Helper()
	if _, err := st.Put(ctx, key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

const apart = "dt=2026-09-01"

func reserve(t testing.TB, table *pswap.Table) (*pswap.Partition, swap.Reservation) {
	t.Helper()
	p, err := table.Partition(apart)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Reserve(ctx, pswap.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p, res
}

// engineMarkers are what Spark, Hadoop committers and DuckDB leave beside data.
var engineMarkers = []string{"_SUCCESS", "_committed_123", "_started_123", ".part-00000.parquet.crc", "_temporary/0/part-9.parquet", "part-00000.parquet.crc"}

// TestAdoptRequestCount adopts 3 and 100 files written into a reservation
// and counts every request: one listing, at most two ranged GETs per file
// (one here: the footers fit in the 64 KiB tail), and the commit's own.
func TestAdoptRequestCount(t *testing.T) {
	for _, n := range []int{3, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			mem := memstore.New()
			cs := storetest.NewCounting(mem)
			table := pswap.NewTable(cs)
			firstCommit(t, table, mem)
			p, res := reserve(t, table)
			for i := range n {
				putObj(t, mem, fmt.Sprintf("%spart-%05d.parquet", res.Prefix, i), parquetBytes(t, i*10, 10))
			}
			for _, m := range engineMarkers {
				putObj(t, mem, res.Prefix+m, []byte("marker"))
			}
			cs.Reset()
			r, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
			if err != nil || !r.Changed || r.Rows != int64(10*n) || r.Files != n {
				t.Fatalf("adopt: %+v %v", r, err)
			}
			c := cs.Counts()
			want := map[string]int{"get": 2, "list": 1, "get-range": n, "put-if-none-match": 2, "delete": 1}
			for op, v := range want {
				if c[op] != v {
					t.Errorf("%s: %d requests, want %d (all: %v)", op, c[op], v, c)
				}
			}
			// list + n ranged GETs + GET record, GET table.json, PUT manifest,
			// PUT pointer, DELETE record.
			if cs.Total() != n+6 || c["writer"] != 0 || c["put"] != 0 {
				t.Fatalf("requests %v: total %d, want %d, and no data written", c, cs.Total(), n+6)
			}
			snap, err := p.Current(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range snap.Manifest.Files {
				if !strings.HasPrefix(f.Checksum, "etag:") || strings.Contains(f.Path, "_") && strings.HasPrefix(f.Path, "_") {
					t.Fatalf("adopted file %+v", f)
				}
			}
			if !strings.HasPrefix(snap.Manifest.ContentChecksum, pswap.AdoptedChecksumAlgo+":") || snap.Manifest.Schema == "" {
				t.Fatalf("manifest content %q schema %q", snap.Manifest.ContentChecksum, snap.Manifest.Schema)
			}
			// verify reads footers only.
			cs.Reset()
			rep, err := p.Verify(ctx)
			if err != nil || !rep.OK || rep.Rows != int64(10*n) {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			if c := cs.Counts(); c["get"] != 2 || c["get-range"] != n || c["stat"] != n {
				t.Fatalf("verify of adopted files: %v, want 2 gets (pointer, manifest), %d stats and ranged gets", c, n)
			}
		})
	}
}

// firstCommit adopts one file into another partition of the table, which
// creates the table's metadata (table.json): what follows is a steady-state
// commit.
func firstCommit(t testing.TB, table *pswap.Table, raw store.Store) {
	t.Helper()
	p, err := table.Partition("dt=2026-08-31")
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Reserve(ctx, pswap.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	putObj(t, raw, res.Prefix+"part-0.parquet", parquetBytes(t, 0, 10))
	if _, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tablemeta.Load(ctx, table.Store()); err != nil {
		t.Fatalf("the first adoption did not create the table's metadata: %v", err)
	}
}

// A footer larger than the first tail read costs a second ranged GET.
func TestAdoptLargeFooter(t *testing.T) {
	mem := memstore.New()
	cs := storetest.NewCounting(mem)
	table := pswap.NewTable(cs)
	p, res := reserve(t, table)
	putObj(t, mem, res.Prefix+"a.parquet", parquetBytes(t, 0, 5))
	cs.Reset()
	r, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{}, pswap.AdoptOptions{TailSize: 16})
	if err != nil || r.Rows != 5 {
		t.Fatalf("%+v %v", r, err)
	}
	if c := cs.Counts(); c["get-range"] != 2 {
		t.Fatalf("ranged GETs with a 16-byte tail: %v, want 2", c)
	}
}

func TestAdoptRefusesBadObjects(t *testing.T) {
	good := parquetBytes(t, 0, 10)
	other := func() []byte {
		type wide struct {
			ID    int64   `parquet:"id"`
			Score float64 `parquet:"score"`
		}
		var buf bytes.Buffer
		if err := parquet.Write(&buf, []wide{{1, 2}}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}()
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  string // in the error
		is    error
	}{
		{"empty", nil, "is empty", pswap.ErrBadInput},
		{"markers only", map[string][]byte{"_SUCCESS": nil, "_committed_1": []byte("x")}, "only 2 engine marker", pswap.ErrBadInput},
		{"csv", map[string][]byte{"a.parquet": good, "b.csv": []byte("id,name\n1,a\n2,b\n3,c\n")}, "b.csv", staging.ErrCorrupt},
		{"truncated", map[string][]byte{"a.parquet": good, "cut.parquet": good[:len(good)-100]}, "cut.parquet", staging.ErrCorrupt},
		{"cut tail", map[string][]byte{"cut.parquet": good[:len(good)-3]}, "cut.parquet", staging.ErrCorrupt},
		{"tiny", map[string][]byte{"tiny.parquet": []byte("PAR1")}, "tiny.parquet", staging.ErrCorrupt},
		{"schema", map[string][]byte{"a.parquet": good, "b.parquet": other}, "b.parquet", staging.ErrSchemaMismatch},
		{"zero rows", map[string][]byte{"a.parquet": parquetBytes(t, 0, 0)}, "no rows", pswap.ErrBadInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memstore.New()
			table := pswap.NewTable(mem)
			p, res := reserve(t, table)
			for name, b := range c.files {
				putObj(t, mem, res.Prefix+name, b)
			}
			_, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %v naming %q", err, c.is, c.want)
			}
			if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
				t.Fatalf("something was committed: %v", err)
			}
			if len(listKeys(t, mem, layout.ManifestsPrefix(apart))) != 0 {
				t.Fatal("a manifest was written")
			}
		})
	}
}

func listKeys(t testing.TB, st store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for a, err := range st.List(ctx, prefix) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

// verify catches an adopted file that was replaced (same size, other
// bytes) or removed, without downloading it.
func TestVerifyAdoptedFiles(t *testing.T) {
	mem := memstore.New()
	table := pswap.NewTable(mem)
	p, res := reserve(t, table)
	a, b := parquetBytes(t, 0, 10), parquetBytes(t, 100, 10)
	putObj(t, mem, res.Prefix+"a.parquet", a)
	putObj(t, mem, res.Prefix+"b.parquet", b)
	if _, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// Same size, other bytes (one flipped inside the data; the footer is intact).
	c := bytes.Clone(a)
	c[len(c)/3] ^= 0xff
	putObj(t, mem, res.Prefix+"a.parquet", c)
	rep, err := p.Verify(ctx)
	if !errors.Is(err, pswap.ErrMismatch) || rep.Problems[0].What != "checksum" || rep.Problems[0].File != "a.parquet" {
		t.Fatalf("verify a replaced file: %+v %v", rep, err)
	}
	mem.Delete(ctx, res.Prefix+"b.parquet")
	rep, err = p.Verify(ctx)
	if !errors.Is(err, pswap.ErrMismatch) || len(rep.Problems) < 2 || rep.Problems[1].What != "missing" {
		t.Fatalf("verify a removed file: %+v %v", rep, err)
	}
}

// Identical content: the same bytes adopted again (under other names) are
// a no-op; equal rows in other bytes are one only with VerifyRows, which
// compares rows like a commit from local files.
func TestAdoptIdenticalContent(t *testing.T) {
	dir := t.TempDir()
	st, err := filestore.New(filepath.Join(dir, "table"))
	if err != nil {
		t.Fatal(err)
	}
	table := pswap.NewTable(st)
	data := parquetBytes(t, 0, 20)
	p, res := reserve(t, table)
	putObj(t, st, res.Prefix+"part-0-aaa.parquet", data)
	first, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
	if err != nil || !first.Changed {
		t.Fatalf("%+v %v", first, err)
	}
	_, res2 := reserve(t, table)
	putObj(t, st, res2.Prefix+"part-0-bbb.parquet", data)
	r, err := p.CommitStaged(ctx, res2.Generation, pswap.CommitOptions{})
	if err != nil || r.Changed || r.Outcome != swap.Identical || r.Generation != first.Generation {
		t.Fatalf("the same bytes again: %+v %v", r, err)
	}

	// A local commit of the same rows, then an adoption with VerifyRows.
	local := filepath.Join(dir, "local.parquet")
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{Force: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddPath(ctx, local, pswap.FormatAuto); err != nil {
		t.Fatal(err)
	}
	lr, err := w.Commit(ctx)
	if err != nil || !lr.Changed {
		t.Fatalf("local commit: %+v %v", lr, err)
	}
	_, res3 := reserve(t, table)
	putObj(t, st, res3.Prefix+"x.parquet", parquetBytes(t, 0, 20))
	r, err = p.CommitStaged(ctx, res3.Generation, pswap.CommitOptions{}, pswap.AdoptOptions{VerifyRows: true})
	if err != nil || r.Changed || r.Outcome != swap.Identical {
		t.Fatalf("equal rows with VerifyRows: %+v %v", r, err)
	}
	_, res4 := reserve(t, table)
	putObj(t, st, res4.Prefix+"x.parquet", parquetBytes(t, 1, 20))
	r, err = p.CommitStaged(ctx, res4.Generation, pswap.CommitOptions{}, pswap.AdoptOptions{VerifyRows: true})
	if err != nil || !r.Changed {
		t.Fatalf("other rows with VerifyRows: %+v %v", r, err)
	}
	snap, err := p.Current(ctx)
	if err != nil || !strings.HasPrefix(snap.Manifest.ContentChecksum, "colsum128:") {
		t.Fatalf("VerifyRows content checksum: %v %v", snap, err)
	}
}

// A file replaced between the two ranged GETs of its footer fails the
// adoption as a store-side change (not bad input), and nothing is committed.
func TestAdoptFileChangedMidRead(t *testing.T) {
	mem := memstore.New()
	var p *pswap.Partition
	var res swap.Reservation
	faulty := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "get-range" && c.N == 1 {
			return storetest.Fault{Hook: func() { putObj(t, mem, res.Prefix+"a.parquet", parquetBytes(t, 5, 5)) }}
		}
		return storetest.Fault{}
	})
	p, res = reserve(t, pswap.NewTable(faulty))
	putObj(t, mem, res.Prefix+"a.parquet", parquetBytes(t, 0, 5))
	_, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{}, pswap.AdoptOptions{TailSize: 16})
	if err == nil || !strings.Contains(err.Error(), "changed while") || errors.Is(err, pswap.ErrBadInput) || errors.Is(err, staging.ErrCorrupt) || pswap.IsRetryable(err) {
		t.Fatalf("file replaced mid-adoption: %v", err)
	}
	if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("something was committed: %v", err)
	}
}

// Adopted files are checked against the table's schema like any input, but
// must match it as they are (they cannot be converted).
func TestAdoptCheckedAgainstTableSchema(t *testing.T) {
	mem := memstore.New()
	table := pswap.NewTable(mem)
	firstCommit(t, table, mem)
	p, res := reserve(t, table)
	type other struct {
		ID    int64   `parquet:"id"`
		Score float64 `parquet:"score"`
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []other{{1, 2}}); err != nil {
		t.Fatal(err)
	}
	putObj(t, mem, res.Prefix+"part-0.parquet", buf.Bytes())
	_, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
	if !errors.Is(err, pswap.ErrSchemaMismatch) {
		t.Fatalf("files of another schema: %v, want ErrSchemaMismatch", err)
	}
	if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("something was committed: %v", err)
	}
	_, res2 := reserve(t, table)
	putObj(t, mem, res2.Prefix+"part-0.parquet", parquetBytes(t, 0, 3))
	if r, err := p.CommitStaged(ctx, res2.Generation, pswap.CommitOptions{}); err != nil || !r.Changed {
		t.Fatalf("files of the table's schema: %+v %v", r, err)
	}
}
