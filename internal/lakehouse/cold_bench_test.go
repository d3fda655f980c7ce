package lakehouse_test

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// byteCounting counts the bytes read (Get, GetRange) and written (Put) of
// a store.
type byteCounting struct {
	store.Store
	read, written atomic.Int64
}

type countedReader struct {
	io.ReadCloser
	n *atomic.Int64
}

func (r countedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

func (c *byteCounting) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	rc, a, err := c.Store.Get(ctx, key)
	if err != nil {
		return rc, a, err
	}
	return countedReader{rc, &c.read}, a, nil
}

func (c *byteCounting) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	rc, a, err := store.GetRange(ctx, c.Store, key, off, n)
	if err != nil {
		return rc, a, err
	}
	return countedReader{rc, &c.read}, a, nil
}

func (c *byteCounting) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	c.written.Add(int64(len(data)))
	return c.Store.Put(ctx, key, data, opts)
}

// BenchmarkColdPublish: the publish of one commit to a table of n daily
// partitions (a file each, the newest 2026-11-29) on a memory store, as
// `pswap commit` makes it (the commit's manifest handed over): of a cold
// partition (the middle day), of the newest month (hot), and the first
// commit of a new month (which merges the month before into the cold
// manifests). Besides the time, per publish: requests, bytes read and
// written, and the process's CPU time (user and system: on a loaded
// machine, steadier than the time). Compare:
//
//	go test ./internal/lakehouse -run '^$' -bench ColdPublish -benchtime 5x
func BenchmarkColdPublish(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			mem := memstore.New(memstore.Options{})
			last := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
			day := func(back int) string { return "dt=" + last.AddDate(0, 0, -back).Format("2006-01-02") }
			g := errgroup.Group{}
			g.SetLimit(8)
			for i := range n {
				g.Go(func() error { _, _, err := commitErr(mem, day(i), 2, "b", swap.Options{}); return err })
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Partitions != n {
				b.Fatalf("%+v %v", r, err)
			}
			month := 0
			for _, c := range []struct {
				name string
				part func(i int) string
			}{
				{"cold", func(int) string { return day(n / 2) }},
				{"hot", func(int) string { return day(1) }},
				{"month", func(int) string { month++; return fmt.Sprintf("dt=%04d-%02d-01", 2027+month/12, month%12+1) }},
			} {
				b.Run(c.name, func(b *testing.B) {
					var reqs, read, written int64
					var cpu time.Duration
					for b.Loop() {
						b.StopTimer()
						res := commit(b, mem, c.part(0), 3, "c", swap.Options{OnConflict: swap.Overwrite, Force: true})
						m, err := swap.ReadManifest(ctx, mem, res.Partition, res.Generation)
						if err != nil {
							b.Fatal(err)
						}
						bc := &byteCounting{Store: mem}
						st := storetest.NewCounting(bc)
						c0 := cpuTime(b)
						b.StartTimer()
						r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: m}, lakehouse.Options{})
						if err != nil || !r.Changed {
							b.Fatalf("%+v %v", r, err)
						}
						b.StopTimer()
						cpu += cpuTime(b) - c0
						b.StartTimer()
						reqs += int64(st.Total())
						read += bc.read.Load()
						written += bc.written.Load()
					}
					b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
					b.ReportMetric(float64(read)/float64(b.N), "read-B/op")
					b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
					b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
				})
			}
		})
	}
}

// cpuTime is the process's CPU time so far (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
