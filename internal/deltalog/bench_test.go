package deltalog_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
)

// counting counts a store's requests (a listing counts once per call)
// and the bytes its GETs returned and its PUTs sent.
type counting struct {
	store.Store
	gets, puts, lists atomic.Int64
	read, written     atomic.Int64
	// logBytes are the bytes of read and written under _delta_log/ and
	// of table.json: the Delta log's own, beside the manifests'.
	logBytes atomic.Int64
}

// logKey reports whether key is the Delta log's or table.json.
func logKey(key string) bool {
	return strings.HasPrefix(key, deltalog.LogDir) || key == "_pswap/table.json"
}

func (c *counting) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	c.gets.Add(1)
	rc, a, err := c.Store.Get(ctx, key)
	if err != nil {
		return rc, a, err
	}
	r := &countingReader{ReadCloser: rc, n: &c.read}
	if logKey(key) {
		r.also = &c.logBytes
	}
	return r, a, nil
}

// countingReader adds the bytes read to n.
type countingReader struct {
	io.ReadCloser
	n, also *atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	if r.also != nil {
		r.also.Add(int64(n))
	}
	return n, err
}

func (c *counting) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	c.puts.Add(1)
	c.written.Add(int64(len(data)))
	if logKey(key) {
		c.logBytes.Add(int64(len(data)))
	}
	return c.Store.Put(ctx, key, data, opts)
}

func (c *counting) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	c.lists.Add(1)
	return c.Store.List(ctx, prefix)
}

func (c *counting) reset() {
	c.gets.Store(0)
	c.puts.Store(0)
	c.lists.Store(0)
	c.read.Store(0)
	c.written.Store(0)
	c.logBytes.Store(0)
}

// total is the number of requests since the last reset.
func (c *counting) total() int64 { return c.gets.Load() + c.puts.Load() + c.lists.Load() }

func (c *counting) String() string {
	return fmt.Sprintf("%d requests (%d GET, %d PUT, %d LIST)", c.gets.Load()+c.puts.Load()+c.lists.Load(), c.gets.Load(), c.puts.Load(), c.lists.Load())
}

// commitOnly commits without publishing.
func commitOnly(tb testing.TB, tbl *pswap.Table, part, run string, rows ...sale) (pswap.Result, *pswap.Writer) {
	tb.Helper()
	ctx := context.Background()
	p, err := tbl.Partition(part)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := pswap.Write(w, rows...); err != nil {
		tb.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return res, w
}

// TestPublishRequests: the requests a Delta publish adds to a commit, in
// the steady state (a log with a checkpoint and entries after it), beside
// those of the Iceberg publish of the same commit.
func TestPublishRequests(t *testing.T) {
	ctx := context.Background()
	c := &counting{Store: memstore.New()}
	tbl := pswap.NewTable(c)
	for i := range 25 {
		res, w := commitOnly(t, tbl, fmt.Sprintf("dt=2026-11-%02d", 1+i%5), fmt.Sprintf("r%d", i), sale{int64(i), "x", 1})
		if pub := w.Publish(ctx, pswap.PublishOptions{}); pub.Err != nil {
			t.Fatal(pub.Err)
		}
		if pub := publishDelta(ctx, c, res, deltalog.Options{}); pub.Err != nil {
			t.Fatal(pub.Err)
		}
	}
	for _, due := range []bool{false, true} {
		// Version 25 (4 entries after the checkpoint of 20), then 29,
		// 30 (a checkpoint is due).
		n := 1
		if due {
			n = 5
		}
		var ice, delta string
		for range n {
			res, w := commitOnly(t, tbl, "dt=2026-11-01", fmt.Sprint(time.Now().UnixNano()), sale{time.Now().UnixNano(), "y", 2})
			c.reset()
			if pub := w.Publish(ctx, pswap.PublishOptions{}); pub.Err != nil {
				t.Fatal(pub.Err)
			}
			ice = c.String()
			c.reset()
			pub := publishDelta(ctx, c, res, deltalog.Options{})
			if pub.Err != nil || pub.Checkpoint != (due && pub.Version%10 == 0) {
				t.Fatalf("%+v", pub)
			}
			delta = fmt.Sprintf("%s at version %d", c, pub.Version)
		}
		t.Logf("checkpoint due %v: Iceberg publish %s; Delta publish %s", due, ice, delta)
		if !due && c.gets.Load()+c.puts.Load()+c.lists.Load() > 10 {
			t.Errorf("a Delta publish took %s, more than 10", c)
		}
	}
}

// BenchmarkPublish1000Partitions: the publish of one commit on a table of
// 1,000 partitions (a local directory), Iceberg and Delta, and the
// reconcile of the whole table when nothing changed:
//
//	go test ./internal/deltalog -run '^$' -bench Publish1000Partitions -benchtime 20x
func BenchmarkPublish1000Partitions(b *testing.B) {
	ctx := context.Background()
	st, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tbl := pswap.NewTable(st)
	for i := range 1000 {
		commitOnly(b, tbl, fmt.Sprintf("dt=%04d-01-01", 1000+i), "r", sale{int64(i), "x", 1})
	}
	if _, err := lakehouse.Publish(ctx, st, lakehouse.Options{}); err != nil {
		b.Fatal(err)
	}
	if _, err := deltalog.Publish(ctx, st, deltalog.Options{}); err != nil {
		b.Fatal(err)
	}
	b.Run("iceberg-commit", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			_, w := commitOnly(b, tbl, "dt=1000-01-01", fmt.Sprint(time.Now().UnixNano()), sale{time.Now().UnixNano(), "y", 2})
			b.StartTimer()
			if pub := w.Publish(ctx, pswap.PublishOptions{}); pub.Err != nil {
				b.Fatal(pub.Err)
			}
		}
	})
	b.Run("delta-commit", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			res, _ := commitOnly(b, tbl, "dt=1000-01-01", fmt.Sprint(time.Now().UnixNano()), sale{time.Now().UnixNano(), "y", 2})
			b.StartTimer()
			if pub := publishDelta(ctx, st, res, deltalog.Options{}); pub.Err != nil {
				b.Fatal(pub.Err)
			}
		}
	})
	b.Run("iceberg-noop", func(b *testing.B) {
		// The delta-commit runs published no Iceberg metadata.
		if _, err := lakehouse.Publish(ctx, st, lakehouse.Options{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if r, err := lakehouse.Publish(ctx, st, lakehouse.Options{}); err != nil || r.Changed {
				b.Fatal(r, err)
			}
		}
	})
	b.Run("delta-noop", func(b *testing.B) {
		for b.Loop() {
			if r, err := deltalog.Publish(ctx, st, deltalog.Options{}); err != nil || r.Changed {
				b.Fatal(r, err)
			}
		}
	})
}

// BenchmarkPublishAfter1000Versions: the Delta publish of one commit on a
// log of 1,000 versions, with checkpoints every 10 versions (the default)
// and without any (every version replayed from version 0).
//
//	go test ./internal/deltalog -run '^$' -bench PublishAfter1000Versions -benchtime 20x
func BenchmarkPublishAfter1000Versions(b *testing.B) {
	for _, interval := range []int{10, 1 << 30} {
		name := "checkpoint-every-10"
		if interval > 10 {
			name = "no-checkpoint"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st, err := filestore.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			tbl := pswap.NewTable(st)
			opts := deltalog.Options{CheckpointInterval: interval}
			var res pswap.Result
			for i := range 1000 {
				res, _ = commitOnly(b, tbl, fmt.Sprintf("dt=2026-01-%02d", 1+i%28), fmt.Sprint(i), sale{int64(i), "x", 1})
				if pub := publishDelta(ctx, st, res, opts); pub.Err != nil {
					b.Fatal(pub.Err)
				}
			}
			if s, err := deltalog.Load(ctx, st); err != nil || s.Version != 999 {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				res, _ = commitOnly(b, tbl, "dt=2026-01-01", fmt.Sprint(time.Now().UnixNano()), sale{time.Now().UnixNano(), "y", 2})
				b.StartTimer()
				if pub := publishDelta(ctx, st, res, opts); pub.Err != nil {
					b.Fatal(pub.Err)
				}
			}
		})
	}
}
