package orchestrators

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/faultproxy"
	"github.com/pswap/pswap/internal/testenv"
)

// The five logical dates every scenario runs, twice, and what happens on
// them the first time.
var days = []string{"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"}

const (
	flakyDay = "2026-11-02" // MinIO fails the first try's requests until pswap gives up (exit 1)
	killDay  = "2026-11-03" // the first try's pswap is killed with SIGKILL while it commits
	badDay   = "2026-11-04" // the extract holds an amount that is not a number (exit 2)
)

// dayRows is the rows of each day in the source. The kill day is large, so
// that its pswap runs long enough to be killed midway.
var dayRows = map[string]int{days[0]: 3, days[1]: 5, days[2]: 100000, days[3]: 4, days[4]: 7}

// maxAttempts is pswap's default number of attempts at a store request.
const maxAttempts = 5

// A scenario is one store (file:// or MinIO) with the source, the
// notification log and the faults of one orchestrator's run.
type scenario struct {
	t      *testing.T
	store  string // "file" or "s3"
	dir    string
	table  string
	env    []string // the orchestrator's environment
	notify string
	want   map[string]agg // rows and sum of every day that commits, by partition

	proxy   *faultproxy.Proxy
	outage  atomic.Int64 // requests the proxy failed
	kills   atomic.Int64 // pswap processes killed
	killErr error
}

func newScenario(t *testing.T, store string) *scenario {
	s := &scenario{t: t, store: store, dir: t.TempDir(), want: map[string]agg{}}
	s.notify = filepath.Join(s.dir, "notifications.jsonl")
	source := filepath.Join(s.dir, "sales.csv")
	s.writeSource(source)
	s.env = append(os.Environ(),
		"PATH="+pswapDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SALES_SOURCE="+source, "SALES_NOTIFY_LOG="+s.notify, "SALES_RETRY_DELAY=1", "TZ=UTC")
	switch store {
	case "file":
		s.table = "file://" + filepath.Join(s.dir, "lake", "sales")
	case "s3":
		s.table = testenv.S3URL(t)
		p, err := faultproxy.Start(os.Getenv("AWS_ENDPOINT_URL"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		p.SetRule(s.outageRule())
		s.proxy = p
		s.env = append(s.env, "AWS_ENDPOINT_URL="+p.URL)
	}
	s.env = append(s.env, "SALES_TABLE="+s.table)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.killMidway(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// writeSource writes the CSV the examples extract from: dayRows rows a
// day, amounts that are exact in binary, one bad amount on badDay.
func (s *scenario) writeSource(path string) {
	var b strings.Builder
	b.WriteString("ts,store,amount\n")
	for _, day := range days {
		var a agg
		for i := range dayRows[day] {
			amount := float64(i%1000) + 0.25
			v := strconv.FormatFloat(amount, 'f', 2, 64)
			if day == badDay && i == 1 {
				v = "n/a"
			}
			fmt.Fprintf(&b, "%sT%02d:%02d:%02d+00:00,s%d,%s\n", day, i/3600%24, i/60%60, i%60, i%7, v)
			a.Rows++
			a.Sum += amount
		}
		if day != badDay {
			s.want["dt="+day] = a
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// outageRule fails every request with 503 SlowDown from the first request
// that names flakyDay's partition for as long as the pswap that sent it
// runs: that try gives up (exit 1) and the orchestrator's retry finds the
// store back.
func (s *scenario) outageRule() func(faultproxy.Request) faultproxy.Action {
	var mu sync.Mutex
	state, pid := 0, 0 // 0 before, 1 during, 2 after the outage
	return func(r faultproxy.Request) faultproxy.Action {
		mu.Lock()
		defer mu.Unlock()
		if state == 0 && strings.Contains(r.Path, "dt="+flakyDay) {
			state, pid = 1, s.findCommit(flakyDay)
		}
		if state == 1 {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); pid == 0 || err != nil {
				state = 2
			}
		}
		if state != 1 {
			return faultproxy.Pass
		}
		s.outage.Add(1)
		return faultproxy.SlowDown
	}
}

// killMidway kills, with SIGKILL, the first `pswap commit` of killDay that
// the orchestrator starts, as the OOM killer or a lost node would.
func (s *scenario) killMidway(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
		if pid := s.findCommit(killDay); pid > 0 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				s.killErr = fmt.Errorf("kill pswap %d: %w", pid, err)
			}
			s.kills.Add(1)
			return
		}
	}
}

// findCommit returns the process id of a running `pswap commit` of day to
// the scenario's table (an argument is its partition or an interval that
// starts on it), 0 if there is none.
func (s *scenario) findCommit(day string) int {
	bin := filepath.Join(pswapDir(s.t), "pswap")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); exe != bin {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) < 2 || args[1] != "commit" || !slices.Contains(args, s.table) {
			continue
		}
		for _, a := range args[2:] {
			if a == "dt="+day || strings.HasPrefix(a, day) {
				return pid
			}
		}
	}
	return 0
}

// commitResult is what the examples' load step returns: pswap commit --json.
type commitResult struct {
	Partition        string `json:"partition"`
	Generation       string `json:"generation"`
	Changed          bool   `json:"changed"`
	Outcome          string `json:"outcome"`
	Rows             int64  `json:"rows"`
	RunID            string `json:"run_id"`
	IdempotencyKey   string `json:"idempotency_key"`
	StagedGeneration string `json:"staged_generation"`
}

// loadTries is the number of tries the load of day takes the first time.
func (s *scenario) loadTries(day string) int {
	if day == killDay || (day == flakyDay && s.store == "s3") {
		return 2
	}
	return 1
}

// wantExits is the failed pswap runs of the two passes over days, by
// command and exit status: the bad day twice (exit 2, no retry), the kill
// once (-9), the outage once on MinIO (exit 1), and gapChecks failed gap
// checks (exit 1).
func (s *scenario) wantExits(gapChecks int) map[string]int {
	want := map[string]int{"commit 2": 2, "commit -9": 1, "status 1": gapChecks}
	if s.store == "s3" {
		want["commit 1"] = 1
	}
	return want
}

// checkFaults checks that the faults happened: one kill, and on MinIO an
// outage of at least maxAttempts refused requests (pswap's own retries).
func (s *scenario) checkFaults() {
	t := s.t
	if s.killErr != nil || s.kills.Load() != 1 {
		t.Errorf("killed %d pswap processes of %s (%v), want 1", s.kills.Load(), killDay, s.killErr)
	}
	if s.store == "s3" && s.outage.Load() < maxAttempts {
		t.Errorf("the store refused %d requests, want at least %d", s.outage.Load(), maxAttempts)
	}
	t.Logf("faults: %d pswap killed, %d requests refused", s.kills.Load(), s.outage.Load())
}

// checkTable checks what the runs left: one notification per partition
// that changed, carrying the idempotency key of its commit (first), the
// rows of every partition exact in DuckDB, and pswap verify.
func (s *scenario) checkTable(first map[string]commitResult) {
	t := s.t
	notes := readNotifications(t, s.notify)
	if len(notes) != len(s.want) {
		t.Errorf("%d notifications, want %d (one per partition that changed): %+v", len(notes), len(s.want), notes)
	}
	seen := map[string]bool{}
	for _, n := range notes {
		c, ok := first[n.Partition]
		switch {
		case seen[n.Partition]:
			t.Errorf("a second notification for %s: %+v", n.Partition, n)
		case !ok || n.IdempotencyKey != c.IdempotencyKey || n.Rows != s.want[n.Partition].Rows:
			t.Errorf("notification %+v, want the commit's key %q and %d rows", n, c.IdempotencyKey, s.want[n.Partition].Rows)
		}
		seen[n.Partition] = true
	}
	got := duckRows(t, s.env, s.table)
	if fmt.Sprint(got) != fmt.Sprint(s.want) {
		t.Errorf("DuckDB reads (rows, sum of amount by partition)\n%v\nwant\n%v", got, s.want)
	}
	pswapRun(t, s.env, "verify", "--table", s.table)
	t.Logf("%d notifications; DuckDB: %v", len(notes), got)
}
