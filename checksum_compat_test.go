package pswap_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

// commitWithChecksum commits rows as a generation whose manifest records
// the content checksum that pick chooses from what staging computed (the
// colsum128 one, and the rowsum128 one in Equivalent): a generation as a
// build before colsum128 committed it, or one with a wrong checksum.
func commitWithChecksum(t *testing.T, st store.Store, key string, rows []row, pick func(c manifest.Content) string) {
	t.Helper()
	txn, err := swap.Begin(ctx, st, key, swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := staging.New(ctx, st, txn.DataPrefix(), staging.Options{LegacyChecksum: true})
	if err := staging.Write(s, rows...); err != nil {
		t.Fatal(err)
	}
	c, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.ContentChecksum, c.Equivalent = pick(c), nil
	if res, err := txn.Commit(ctx, c); err != nil || !res.Changed {
		t.Fatalf("commit: %+v %v", res, err)
	}
}

func commitRows(t *testing.T, p *pswap.Partition, rows []row) swap.Result {
	t.Helper()
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, rows...); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRowsumGenerationCompatibility: a generation committed with a rowsum128
// content checksum (before colsum128) verifies, by recomputing rowsum128;
// committing the same rows onto it is still a no-op; other rows commit a
// generation that records colsum128, which verifies too. A wrong checksum
// of either algorithm fails verify.
func TestRowsumGenerationCompatibility(t *testing.T) {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	table := pswap.NewTable(st)
	const key = "dt=2026-11-29"
	p, _ := table.Partition(key)
	rows := make([]row, 3000)
	for i := range rows {
		rows[i] = row{int64(i), []string{"a", "b", "c"}[i%3]}
	}
	commitWithChecksum(t, st, key, rows, func(c manifest.Content) string { return c.Equivalent[0] })
	snap, err := p.Current(ctx)
	if err != nil || !strings.HasPrefix(snap.Manifest.ContentChecksum, checksum.RowSum+":") {
		t.Fatalf("v1 generation: %v %v", snap, err)
	}
	v1Gen := snap.Manifest.Generation
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify of a rowsum128 generation: %+v %v", rep, err)
	}

	// The same rows, in another order: a no-op on the rowsum128 base.
	rev := make([]row, len(rows))
	for i := range rows {
		rev[len(rows)-1-i] = rows[i]
	}
	if res := commitRows(t, p, rev); res.Changed || res.Outcome != swap.Identical || res.Generation != v1Gen {
		t.Fatalf("same rows on a rowsum128 base: %+v", res)
	}

	// Staged first, committed later: a no-op on the rowsum128 base too.
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, rows...); err != nil {
		t.Fatal(err)
	}
	gen, _, err := w.Stage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := p.CommitStaged(ctx, gen, pswap.CommitOptions{}); err != nil || res.Changed || res.Outcome != swap.Identical {
		t.Fatalf("staged same rows on a rowsum128 base: %+v %v", res, err)
	}

	// Other rows: a new generation recording colsum128.
	rows[7].Name = "z"
	if res := commitRows(t, p, rows); !res.Changed {
		t.Fatalf("other rows: %+v", res)
	}
	snap, err = p.Current(ctx)
	if err != nil || !strings.HasPrefix(snap.Manifest.ContentChecksum, checksum.ColSum+":") {
		t.Fatalf("new generation: %v %v", snap, err)
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify of a colsum128 generation: %+v %v", rep, err)
	}
	if res := commitRows(t, p, rows); res.Changed || res.Outcome != swap.Identical {
		t.Fatalf("same rows on a colsum128 base: %+v", res)
	}

	// Recorded checksums that the rows do not match, in either algorithm.
	for name, pick := range map[string]func(c manifest.Content) string{
		"colsum128": func(c manifest.Content) string { return checksum.ColSum + ":" + strings.Repeat("0", 32) },
		"rowsum128": func(c manifest.Content) string {
			return checksum.RowSum + ":" + strings.TrimPrefix(c.ContentChecksum, checksum.ColSum+":")
		},
	} {
		rows[8].Name = name
		commitWithChecksum(t, st, key, rows, pick)
		rep, err := p.Verify(ctx)
		if !errors.Is(err, pswap.ErrMismatch) || rep.OK || len(rep.Problems) != 1 || rep.Problems[0].What != "content checksum" {
			t.Errorf("verify of a wrong %s checksum: %+v %v", name, rep, err)
		}
	}
}

// Adoption with VerifyRows onto a generation that records a rowsum128
// checksum (committed before colsum128) compares rows in the base's
// algorithm too, as a commit from local files does: the same rows, written
// by another writer (other bytes), are a no-op; other rows commit a
// generation that records colsum128.
func TestAdoptVerifyRowsOnRowsumBase(t *testing.T) {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	table := pswap.NewTable(st)
	rows := make([]row, 20)
	for i := range rows {
		rows[i] = row{ID: int64(i), Name: fmt.Sprintf("name-%d", i)} // parquetBytes(t, 0, 20)'s rows
	}
	commitWithChecksum(t, st, apart, rows, func(c manifest.Content) string { return c.Equivalent[0] })
	p, err := table.Partition(apart)
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Current(ctx)
	if err != nil || checksum.Algo(base.Manifest.ContentChecksum) != checksum.RowSum {
		t.Fatalf("base: %v %v", base, err)
	}
	_, res := reserve(t, table)
	putObj(t, st, res.Prefix+"part-0.parquet", parquetBytes(t, 0, 20))
	r, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{}, pswap.AdoptOptions{VerifyRows: true})
	if err != nil || r.Changed || r.Outcome != swap.Identical || r.Generation != base.Manifest.Generation {
		t.Fatalf("the same rows adopted with VerifyRows onto a rowsum128 base: %+v %v", r, err)
	}
	if h, err := p.History(ctx, 0); err != nil || len(h) != 1 {
		t.Fatalf("history after a no-op: %+v %v", h, err)
	}
	_, res = reserve(t, table)
	putObj(t, st, res.Prefix+"part-0.parquet", parquetBytes(t, 1, 20))
	r, err = p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{}, pswap.AdoptOptions{VerifyRows: true})
	if err != nil || !r.Changed {
		t.Fatalf("other rows adopted with VerifyRows: %+v %v", r, err)
	}
	snap, err := p.Current(ctx)
	if err != nil || checksum.Algo(snap.Manifest.ContentChecksum) != checksum.ColSum {
		t.Fatalf("the new generation records %v, want colsum128 (%v)", snap, err)
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify the adopted generation: %+v %v", rep, err)
	}
}
