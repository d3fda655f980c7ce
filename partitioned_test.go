package pswap_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// keyLog records the key of every GET and PUT (a request log by key,
// where storetest.Counting counts by operation), and calls onPut before
// a PUT or a writer's creation when set.
type keyLog struct {
	store.Store
	mu    sync.Mutex
	gets  []string
	puts  []string
	other int // stats and listings
	onPut func(key string)
}

func (l *keyLog) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	l.mu.Lock()
	l.gets = append(l.gets, key)
	l.mu.Unlock()
	return l.Store.Get(ctx, key)
}

func (l *keyLog) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	l.mu.Lock()
	l.gets = append(l.gets, key)
	l.mu.Unlock()
	return store.GetRange(ctx, l.Store, key, off, n)
}

func (l *keyLog) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	l.mu.Lock()
	l.puts = append(l.puts, key)
	hook := l.onPut
	l.mu.Unlock()
	if hook != nil {
		hook(key)
	}
	return l.Store.Put(ctx, key, data, opts)
}

func (l *keyLog) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	l.mu.Lock()
	l.puts = append(l.puts, key)
	hook := l.onPut
	l.mu.Unlock()
	if hook != nil {
		hook(key)
	}
	return l.Store.NewWriter(ctx, key, opts)
}

func (l *keyLog) Stat(ctx context.Context, key string) (store.Attrs, error) {
	l.mu.Lock()
	l.other++
	l.mu.Unlock()
	return l.Store.Stat(ctx, key)
}

func (l *keyLog) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	l.mu.Lock()
	l.other++
	l.mu.Unlock()
	return l.Store.List(ctx, prefix)
}

func (l *keyLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gets, l.puts, l.other = nil, nil, 0
}

func (l *keyLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.gets) + len(l.puts) + l.other
}

// count returns how many of keys end with suffix.
func count(keys []string, suffix string) int {
	n := 0
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			n++
		}
	}
	return n
}

// hiveFolder writes n partition folders dt=2026-09-DD/data.parquet of 10
// rows each (ids from first+10*i) and returns the root.
func hiveFolder(t testing.TB, n, first int) string {
	t.Helper()
	root := t.TempDir()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("dt=2026-09-%02d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data.parquet"), parquetBytes(t, first+10*i, 10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An engine's marker is skipped.
	if err := os.WriteFile(filepath.Join(root, "_SUCCESS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// checkPartitions reads every partition back: n partitions of 10 rows
// each, ids from first+10*i.
func checkPartitions(t testing.TB, table *pswap.Table, n, first int) {
	t.Helper()
	for i := range n {
		p, err := table.Partition(fmt.Sprintf("dt=2026-09-%02d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := p.Current(ctx)
		if err != nil {
			t.Fatalf("partition %d: %v", i, err)
		}
		var rows []row
		for _, f := range snap.Files {
			rc, _, err := table.Store().Get(ctx, f.Key)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, err := parquet.Read[row](bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, got...)
		}
		if len(rows) != 10 || rows[0].ID != int64(first+10*i) {
			t.Fatalf("partition %d: %d rows, first %+v; want 10 from id %d", i, len(rows), rows, first+10*i)
		}
	}
}

// TestCommitPartitionedRequests: a backfill of new partitions into a new
// table costs, per partition, its data PUT, manifest PUT and pointer PUT:
// no pointer read before the commit (the listing shows it absent), none
// by the publish (the commits' results say what they made current, and
// when: swap.Result.SwappedAt), no table.json read per partition, no
// manifest read back by the publish. The fixed part does not grow with
// the partitions.
func TestCommitPartitionedRequests(t *testing.T) {
	totals := map[int]int{}
	for _, n := range []int{6, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			log := &keyLog{Store: memstore.New()}
			table := pswap.NewTable(log)
			root := hiveFolder(t, n, 0)
			res, err := table.CommitPartitioned(ctx, root, pswap.PartitionedOptions{Publish: &pswap.PublishOptions{}, Parallel: 3})
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed != n || res.Failed != 0 || len(res.Partitions) != n || res.Published == nil || res.PublishErr != nil || res.Published.Partitions != n {
				t.Fatalf("result %+v", res)
			}
			for _, p := range res.Partitions {
				if p.Err != nil || !p.Result.Changed || p.Result.Rows != 10 {
					t.Fatalf("partition %+v", p)
				}
			}
			totals[n] = log.total()
			if g := count(log.gets, "/pointer.json"); g != 0 {
				t.Errorf("%d GETs of pointers, want none: %v", g, log.gets)
			}
			if g := count(log.gets, ".json") - count(log.gets, "/pointer.json") - count(log.gets, "_pswap/table.json"); g != 0 {
				t.Errorf("%d GETs of manifests, want none: %v", g, log.gets)
			}
			if g := count(log.gets, "_pswap/table.json"); g > 3 {
				t.Errorf("%d GETs of table.json, want at most 3 whatever the partitions: %v", g, log.gets)
			}
			if p := count(log.puts, "/pointer.json"); p != n {
				t.Errorf("%d PUTs of pointers, want %d", p, n)
			}
			if p := len(slices.DeleteFunc(slices.Clone(log.puts), func(k string) bool { return !strings.Contains(k, "/attempts/") })); p != 0 {
				t.Errorf("%d PUTs of partitions' attempt records, want none (the run's batch record stands for them)", p)
			}
			if p := len(slices.DeleteFunc(slices.Clone(log.puts), func(k string) bool { return !strings.HasPrefix(k, "_pswap/batches/") })); p != 1 {
				t.Errorf("%d PUTs of batch attempt records, want 1 (whatever the partitions, none rewritten): %v", p, log.puts)
			}
			checkPartitions(t, table, n, 0)
		})
	}
	// Per partition: its data, manifest and pointer PUTs (the publish's
	// read of its pointer made it 4). The audit's attempt record is the
	// run's one batch record (it was one PUT per partition, 5 in all,
	// before the batch record).
	if d := totals[12] - totals[6]; d != 3*6 {
		t.Fatalf("requests: %d for 6 partitions, %d for 12: %.1f per partition more, want 3", totals[6], totals[12], float64(d)/6)
	}
}

// TestCommitPartitionedAgain: a second backfill over a table with
// table.json and some of the partitions replaces those (read, not assumed
// absent) and creates the new ones; the same run again is a no-op.
func TestCommitPartitionedAgain(t *testing.T) {
	log := &keyLog{Store: memstore.New()}
	table := pswap.NewTable(log)
	if _, err := table.CommitPartitioned(ctx, hiveFolder(t, 3, 0), pswap.PartitionedOptions{}); err != nil {
		t.Fatal(err)
	}
	root := hiveFolder(t, 5, 1000)
	opts := pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "backfill-2"}}}
	log.reset()
	res, err := table.CommitPartitioned(ctx, root, opts)
	if err != nil || res.Committed != 5 || res.Failed != 0 {
		t.Fatalf("second backfill: %+v %v", res, err)
	}
	if g := count(log.gets, "/pointer.json"); g != 3 {
		t.Errorf("%d GETs of pointers, want 3 (the partitions that existed): %v", g, log.gets)
	}
	for _, p := range res.Partitions {
		if p.RunID != "backfill-2/"+p.Partition {
			t.Errorf("%s: run id %q", p.Partition, p.RunID)
		}
	}
	checkPartitions(t, table, 5, 1000)
	log.reset()
	res, err = table.CommitPartitioned(ctx, root, opts)
	if err != nil || res.Unchanged != 5 || res.Committed != 0 {
		t.Fatalf("the same run again: %+v %v", res, err)
	}
	if count(log.puts, ".parquet") != 0 {
		t.Fatalf("the same run again wrote data: %v", log.puts)
	}
	// Its only writes: the run's batch attempt record, at its start and
	// with the no-ops at its end (it was a PUT per partition).
	if len(log.puts) != 2 || !strings.HasPrefix(log.puts[0], "_pswap/batches/") || log.puts[1] != log.puts[0] {
		t.Fatalf("the same run again wrote %v, want its batch record twice", log.puts)
	}
}

// TestCommitPartitionedLostCreate: a partition the listing showed absent
// but another writer created before this run's commit of it: the
// conditional create loses (ErrConflict under the default policy), the
// other writer's generation stays, and the other partitions commit.
func TestCommitPartitionedLostCreate(t *testing.T) {
	mem := memstore.New()
	log := &keyLog{Store: mem}
	table := pswap.NewTable(log)
	if _, err := table.CommitPartitioned(ctx, hiveFolder(t, 1, 0), pswap.PartitionedOptions{}); err != nil {
		t.Fatal(err)
	}
	const raced = "dt=2026-09-03"
	var once sync.Once
	log.onPut = func(key string) {
		if !strings.Contains(key, raced+"/gen/") {
			return
		}
		once.Do(func() {
			other, err := pswap.NewTable(mem).Partition(raced)
			if err != nil {
				t.Error(err)
				return
			}
			w, err := other.Begin(ctx, pswap.WriteOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			if err := pswap.Write(w, row{ID: 7, Name: "other"}); err != nil {
				t.Error(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	log.reset()
	res, err := table.CommitPartitioned(ctx, hiveFolder(t, 4, 0), pswap.PartitionedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if count(log.gets, raced+"/pointer.json") == 0 {
		// The race is read back after the lost create.
		t.Errorf("the lost create was not read back: %v", log.gets)
	}
	for _, p := range res.Partitions {
		switch {
		case p.Partition == raced:
			if !errors.Is(p.Err, pswap.ErrConflict) {
				t.Errorf("%s: %+v, want ErrConflict", raced, p)
			}
		case p.Err != nil:
			t.Errorf("%s: %v", p.Partition, p.Err)
		}
	}
	p, _ := table.Partition(raced)
	snap, err := p.Current(ctx)
	if err != nil || snap.Manifest.Rows != 1 {
		t.Fatalf("%s after the race: %+v %v, want the other writer's 1 row", raced, snap, err)
	}
}

// TestCommitPartitionedRefuses: folders that are not partitions are
// refused before anything is committed.
func TestCommitPartitionedRefuses(t *testing.T) {
	for name, dirs := range map[string][]string{
		"not key=value":  {"dt=2026-09-01", "junk"},
		"null partition": {"dt=2026-09-01", "dt=__HIVE_DEFAULT_PARTITION__"},
		"two spellings":  {"k=a%3Ab", "k=a%3ab"},
		"other columns":  {"dt=2026-09-01", "day=2026-09-02"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for i, d := range dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, d, "f.parquet"), parquetBytes(t, i, 1), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			log := &keyLog{Store: memstore.New()}
			_, err := pswap.NewTable(log).CommitPartitioned(ctx, root, pswap.PartitionedOptions{})
			if !errors.Is(err, pswap.ErrBadInput) {
				t.Fatalf("%v, want ErrBadInput", err)
			}
			if len(log.puts) != 0 {
				t.Fatalf("wrote %v", log.puts)
			}
		})
	}
}
