package lakehouse_test

import (
	"fmt"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

// BenchmarkPublish1000: publishing a table of 1,000 partitions (one small
// file each) on a local directory. The baseline is what any reconcile must
// do at least: read the 1,000 pointers (same concurrency). Compare:
//
//	go test ./internal/lakehouse -run '^$' -bench Publish1000 -benchtime 3x
//
// pointers: the baseline; first: a publish that writes 1,000 manifests;
// noop: a reconcile with nothing to change; commit: the publish after one
// commit on the 1,000-partition table (independent of the table's size).
func BenchmarkPublish1000(b *testing.B) {
	const n = 1000
	st, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf("dt=%04d-01-01", 1000+i))
	}
	g := errgroup.Group{}
	g.SetLimit(8)
	for _, p := range parts {
		g.Go(func() error { _, _, err := commitErr(st, p, 5, "b", swap.Options{}); return err })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	b.Run("pointers", func(b *testing.B) {
		for b.Loop() {
			readPointers(b, st, parts)
		}
	})
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			clearMetadata(b, st)
			b.StartTimer()
			r, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
			if err != nil || r.Partitions != n {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
	b.Run("noop", func(b *testing.B) {
		for b.Loop() {
			r, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
			if err != nil || r.Changed {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
	b.Run("commit", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			res := commit(b, st, parts[0], 7, "c", swap.Options{OnConflict: swap.Overwrite, Force: true})
			b.StartTimer()
			r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
			if err != nil || !r.Changed {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
}

func readPointers(b *testing.B, st store.Store, parts []string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, p := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := swap.ReadPointer(ctx, st, p); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := swap.ListPartitions(ctx, st, ""); err != nil {
		b.Fatal(err)
	}
}

func clearMetadata(b *testing.B, st store.Store) {
	var keys []string
	for a, err := range st.List(ctx, lakehouse.MetadataPrefix) {
		if err != nil {
			b.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	if err := store.DeleteAll(ctx, st, keys); err != nil {
		b.Fatal(err)
	}
}
