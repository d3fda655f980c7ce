package audit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// benchTable fills a memory store with parts partitions of gens committed
// generations each (one data file each), through swap's own commit.
func benchTable(b *testing.B, parts, gens int) store.Store {
	b.Helper()
	ctx := context.Background()
	st := memstore.New()
	for p := range parts {
		key := fmt.Sprintf("dt=2026-%02d-%02d", 1+p/28%12, 1+p%28)
		if p >= 28*12 {
			b.Fatal("too many partitions")
		}
		for g := range gens {
			txn, err := swap.Begin(ctx, st, key, swap.Options{RunID: fmt.Sprint("run-", g)})
			if err != nil {
				b.Fatal(err)
			}
			data := []byte(fmt.Sprint("rows of ", key, g))
			if _, err := st.Put(ctx, txn.DataPrefix()+"part-00000.parquet", data, store.PutOptions{IfNoneMatch: true}); err != nil {
				b.Fatal(err)
			}
			c := manifest.Content{ContentChecksum: fmt.Sprintf("colsum128:%032x", p*1000+g)}
			c.Add(manifest.File{Path: "part-00000.parquet", Size: int64(len(data)), Rows: 1, Checksum: fmt.Sprintf("sha256:%064x", p*1000+g)})
			if _, err := txn.Commit(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	return st
}

// BenchmarkAudit measures the audit of a table of 100 partitions of 5
// generations each on a store with a 20 ms round trip (S3's order), against
// the baseline of listing the same partitions' pointers (`pswap ls`). It
// reports the requests and the round trips one after another (the wall
// time over the delay).
func BenchmarkAudit(b *testing.B) {
	const delay = 20 * time.Millisecond
	base := benchTable(b, 100, 5)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func(st store.Store) error
	}{
		{"ls-baseline", func(st store.Store) error { _, err := swap.ListPointers(ctx, st, ""); return err }},
		{"audit", func(st store.Store) error {
			rows, err := Table(ctx, st, nil, CollectOptions{}, Options{})
			if err == nil && len(rows) != 500 {
				err = fmt.Errorf("%d rows, want 500", len(rows))
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := storetest.NewLatency(base, delay)
			for b.Loop() {
				lat.Reset()
				if err := c.run(lat); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(lat.Spans())), "requests")
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(delay), "round-trips")
		})
	}
}
