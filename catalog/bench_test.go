package catalog_test

import (
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/testing/testenv"
)

// BenchmarkPublish1000: the publish of one commit on a table of 1,000
// partitions (file://), without a catalog (the baseline) and with a SQLite
// or PostgreSQL catalog, which adds one SELECT and one UPDATE; and a
// reconcile of the whole table (pswap publish) with nothing to change.
//
//	go test ./catalog -run '^$' -bench Publish1000 -benchtime 20x
func BenchmarkPublish1000(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	tb := openTable(b, dir)
	commitPartitions(b, tb, n, 8)
	if _, err := tb.Publish(ctx, pswap.PublishOptions{}); err != nil {
		b.Fatal(err)
	}
	cats := map[string]catalog.Catalog{"none": nil}
	for _, kind := range []string{"sqlite", "postgres"} {
		var be backend
		if kind == "sqlite" {
			be = sqliteBackend(b)
		} else {
			be = postgresBackend(b)
		}
		c := openCatalog(b, be.url("&create-namespace=true"))
		if _, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: c}); err != nil {
			b.Fatal(err)
		}
		cats[kind] = c
	}
	for _, kind := range []string{"none", "sqlite", "postgres"} {
		opts := pswap.PublishOptions{Catalog: cats[kind]}
		b.Run("commit/"+kind, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				p, _ := tb.Partition("dt=1000-01-01")
				w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{Force: true}})
				if err != nil {
					b.Fatal(err)
				}
				if err := pswap.Write(w, sale{ID: 1}); err != nil {
					b.Fatal(err)
				}
				res, err := w.Commit(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if pub := p.Publish(ctx, res, opts); !pub.Published {
					b.Fatal(pub.Err)
				}
			}
		})
		b.Run("reconcile/"+kind, func(b *testing.B) {
			for b.Loop() {
				if r, err := tb.Publish(ctx, opts); err != nil || r.Partitions != n {
					b.Fatalf("%+v %v", r, err)
				}
			}
		})
	}
}

// commitPartitions commits one row to each of n partitions of tb,
// parallel at once.
func commitPartitions(b *testing.B, tb *pswap.Table, n, parallel int) {
	b.Helper()
	g := errgroup.Group{}
	g.SetLimit(parallel)
	for i := range n {
		g.Go(func() error {
			p, err := tb.Partition(fmt.Sprintf("dt=%04d-01-01", 1000+i))
			if err != nil {
				return err
			}
			w, err := p.Begin(ctx, pswap.WriteOptions{})
			if err != nil {
				return err
			}
			if err := pswap.Write(w, sale{ID: int64(i)}); err != nil {
				return err
			}
			_, err = w.Commit(ctx)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCatalogCommit: what a catalog adds to a publish, alone: the
// SELECT of the table's row and the compare-and-swap UPDATE, on an open
// connection (a pswap process also opens one: TCP and authentication for
// PostgreSQL, the file for SQLite).
func BenchmarkCatalogCommit(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			be := sqliteBackend(b)
			if kind == "postgres" {
				be = postgresBackend(b)
			}
			c := openCatalog(b, be.url("&create-namespace=true"))
			loc := func(v int) string { return fmt.Sprintf("file:///t/metadata/v%d.metadata.json", v) }
			if err := c.Register(ctx, loc(1)); err != nil {
				b.Fatal(err)
			}
			v := 1
			for b.Loop() {
				cur, err := c.Current(ctx)
				if err != nil || cur != loc(v) {
					b.Fatalf("%q %v", cur, err)
				}
				if err := c.Swap(ctx, cur, loc(v+1)); err != nil {
					b.Fatal(err)
				}
				v++
			}
		})
	}
}

// BenchmarkPublish1000REST: the publish of one commit on a table of 1,000
// partitions on MinIO, without a catalog (the baseline) and with the REST
// catalog of scripts/restcatalog.sh, which adds one LoadTable, one GET of
// the version's document from the store and one commit of the difference.
//
//	go test ./catalog -run '^$' -bench Publish1000REST -benchtime 10x
func BenchmarkPublish1000REST(b *testing.B) {
	const n = 1000
	srv := testenv.RESTCatalog(b)
	tb := pswap.NewTable(testenv.S3(b))
	commitPartitions(b, tb, n, 16)
	cat, cnt := openREST(b, srv, restNamespace(), "&create-namespace=true", catalog.Options{})
	if _, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: cat}); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"none", "rest"} {
		opts := pswap.PublishOptions{}
		if kind == "rest" {
			opts.Catalog = cat
		}
		b.Run("commit/"+kind, func(b *testing.B) {
			cnt.take()
			for b.Loop() {
				b.StopTimer()
				p, _ := tb.Partition("dt=1000-01-01")
				w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{Force: true}})
				if err != nil {
					b.Fatal(err)
				}
				if err := pswap.Write(w, sale{ID: 1}); err != nil {
					b.Fatal(err)
				}
				res, err := w.Commit(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if pub := p.Publish(ctx, res, opts); !pub.Published {
					b.Fatal(pub.Err)
				}
			}
			requests, _ := cnt.take()
			b.ReportMetric(float64(requests)/float64(b.N), "catalog-req/op")
		})
	}
}
