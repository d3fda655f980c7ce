package integration

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// mergeRow is a row of the merge tests' table, read with parquet-go (not
// the merge's Arrow reader).
type mergeRow struct {
	OrderID int64   `parquet:"order_id"`
	Store   string  `parquet:"store"`
	Amount  float64 `parquet:"amount"`
}

var mergeParts = []string{"dt=2026-11-01", "dt=2026-11-02"}

// mergeInput is one run's input: rows per partition (a row whose store is
// "D" deletes its key).
type mergeInput map[string][]mergeRow

func (in mergeInput) csv() string {
	var b strings.Builder
	b.WriteString("dt,order_id,store,amount,op\n")
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for k := range in {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, r := range in[p] {
			op := "U"
			if r.Store == "D" {
				op = "D"
			}
			fmt.Fprintf(&b, "%s,%d,%s,%g,%s\n", strings.TrimPrefix(p, "dt="), r.OrderID, r.Store, r.Amount, op)
		}
	}
	return b.String()
}

// mergeInputOf is run k's input: updates of seeded keys (strided by k),
// inserts of keys of its own, a few deletes.
func mergeInputOf(k int) mergeInput {
	in := mergeInput{}
	for pi, p := range mergeParts {
		var rows []mergeRow
		for i := range 400 {
			id := int64(pi*1_000_000 + (k*37+i*13)%20_000)
			if slices.ContainsFunc(rows, func(r mergeRow) bool { return r.OrderID == id }) {
				continue
			}
			st := fmt.Sprintf("m%d", k)
			if i%50 == 0 {
				st = "D"
			}
			rows = append(rows, mergeRow{OrderID: id, Store: st, Amount: float64(k*1000+i) + 0.5})
		}
		for i := range 50 {
			rows = append(rows, mergeRow{OrderID: int64(pi*1_000_000 + 500_000 + k*1000 + i), Store: fmt.Sprintf("new%d", k), Amount: float64(i)})
		}
		in[p] = rows
	}
	return in
}

func seedRows(pi int) []mergeRow {
	rows := make([]mergeRow, 20_000)
	for i := range rows {
		rows[i] = mergeRow{OrderID: int64(pi*1_000_000 + i), Store: fmt.Sprintf("s%d", i%23), Amount: float64(i) + 0.25}
	}
	return rows
}

func rowsCSV(rows []mergeRow) string {
	var b strings.Builder
	b.WriteString("order_id,store,amount\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,%s,%g\n", r.OrderID, r.Store, r.Amount)
	}
	return b.String()
}

// TestMergeKillAndRace kills real `pswap merge` processes at random
// moments and re-runs them, then races merges and replacing commits on the
// same partitions in separate processes. Afterwards every merge generation
// in each partition's history is checked against its parent: its rows are
// exactly the parent's whose key its run's input does not hold plus the
// input's (read back with parquet-go): no lost update, nothing half-merged.
func TestMergeKillAndRace(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		dir := t.TempDir()
		inputs := map[string]mergeInput{} // by run id
		replaces := map[string][]mergeRow{}
		for pi, p := range mergeParts {
			path := filepath.Join(dir, fmt.Sprintf("seed-%d.csv", pi))
			os.WriteFile(path, []byte(rowsCSV(seedRows(pi))), 0o644)
			if r := e.runCLI(t, "commit", "--table", e.url, "--partition", p, "--run-id", "seed", "--schema", "amount=double", path); r.code != 0 {
				t.Fatalf("seed: %d %s", r.code, r.stderr)
			}
		}
		mergeArgs := func(run string, k int) []string {
			inputs[run] = mergeInputOf(k)
			path := filepath.Join(dir, run+".csv")
			os.WriteFile(path, []byte(inputs[run].csv()), 0o644)
			return []string{"merge", "--table", e.url, "--key", "order_id", "--delete-when", "op=D", "--run-id", run, "--max-rebases", "30", "--json", path}
		}
		// Calibrate: one merge to completion.
		r := e.runCLI(t, mergeArgs("merge-000", 0)...)
		if r.code != 0 {
			t.Fatalf("merge: %d %s", r.code, r.stderr)
		}
		full := r.elapsed
		rng := newRand(t)
		kills := scale(6, 40)
		landed := 0
		for i := 1; i <= kills; i++ {
			run := fmt.Sprintf("merge-%03d", i)
			args := mergeArgs(run, i)
			p := startProc(t, e.cli(t, args...))
			time.Sleep(time.Duration(rng.Float64() * float64(full)))
			p.kill()
			if k := p.wait(); k.code == 0 {
				landed++
			}
			// The orchestrator's retry: the same command converges.
			if r := e.runCLI(t, args...); r.code != 0 {
				t.Fatalf("re-run of killed %s: exit %d: %s", run, r.code, r.stderr)
			}
		}
		// Race: merges and replacing commits at once, each its own process.
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[string]int{}
		for k := range 4 {
			run := fmt.Sprintf("race-merge-%d", k)
			args := mergeArgs(run, 100+k)
			wg.Go(func() {
				r := e.runCLI(t, args...)
				mu.Lock()
				codes[run] = r.code
				mu.Unlock()
				if r.code != 0 {
					t.Errorf("%s: exit %d: %s", run, r.code, r.stderr)
				}
			})
		}
		for k := range 2 {
			pi := k % len(mergeParts)
			run := fmt.Sprintf("race-replace-%d", k)
			rows := seedRows(pi)[:1000+k]
			replaces[run+"/"] = rows
			path := filepath.Join(dir, run+".csv")
			os.WriteFile(path, []byte(rowsCSV(rows)), 0o644)
			wg.Go(func() {
				r := e.runCLI(t, "commit", "--table", e.url, "--partition", mergeParts[pi], "--run-id", run, path)
				mu.Lock()
				codes[run] = r.code
				mu.Unlock()
				if r.code != 0 && r.code != 3 { // a replace that lost its race fails (exit 3) and changes nothing
					t.Errorf("%s: exit %d: %s", run, r.code, r.stderr)
				}
			})
		}
		wg.Wait()
		merges := checkMergeChains(t, e.st, inputs, replaces)
		t.Logf("%s: %d kills (%d had landed), the re-runs converged; race exits %v; %d merge generations checked against their parents (calibrated merge %s)",
			e.kind, kills, landed, codes, merges, full.Round(time.Millisecond))
	})
}

// checkMergeChains walks each partition's history and checks every merge
// generation against its parent; it returns how many it checked.
func checkMergeChains(t *testing.T, st store.Store, inputs map[string]mergeInput, replaces map[string][]mergeRow) int {
	t.Helper()
	ctx := context.Background()
	checked := 0
	for _, part := range mergeParts {
		hist, err := swap.History(ctx, st, part, 0)
		if errors.Is(err, swap.ErrNoData) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		runs := map[string]int{}
		for _, h := range hist {
			runs[h.RunID]++
			if runs[h.RunID] > 1 {
				t.Errorf("%s: run %s committed twice", part, h.RunID)
			}
			m, err := swap.ReadManifest(ctx, st, part, h.Generation)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != manifest.KindMerge {
				continue
			}
			run := strings.TrimSuffix(h.RunID, "/"+part)
			in, ok := inputs[run]
			if !ok {
				t.Fatalf("%s: merge generation %s of unknown run %q", part, h.Generation, h.RunID)
			}
			parent := genRows(t, st, part, m.Parent)
			keys := map[int64]bool{}
			for _, r := range in[part] {
				keys[r.OrderID] = true
			}
			var want []mergeRow
			for _, r := range parent {
				if !keys[r.OrderID] {
					want = append(want, r)
				}
			}
			for _, r := range in[part] {
				if r.Store != "D" {
					want = append(want, r)
				}
			}
			got := genRows(t, st, part, h.Generation)
			sortMergeRows(want)
			sortMergeRows(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: merge %s (run %s) over %s holds %d rows, want %d", part, h.Generation, h.RunID, m.Parent, len(got), len(want))
			}
			checked++
		}
		if want := 1 + 1 + len(inputs); len(hist) > want+len(replaces) {
			t.Errorf("%s: %d generations, at most %d expected", part, len(hist), want+len(replaces))
		}
	}
	return checked
}

func sortMergeRows(rs []mergeRow) {
	slices.SortFunc(rs, func(a, b mergeRow) int {
		return cmp.Or(cmp.Compare(a.OrderID, b.OrderID), cmp.Compare(a.Store, b.Store), cmp.Compare(a.Amount, b.Amount))
	})
}

func genRows(t *testing.T, st store.Store, part, gen string) []mergeRow {
	t.Helper()
	ctx := context.Background()
	m, err := swap.ReadManifest(ctx, st, part, gen)
	if err != nil {
		t.Fatal(err)
	}
	var rows []mergeRow
	for _, f := range swap.Files(st, m) {
		data, _, err := store.ReadAll(ctx, st, f.Key)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := parquet.Read[mergeRow](bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", f.Key, err)
		}
		rows = append(rows, rs...)
	}
	return rows
}
