package orchestrators

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
)

// The five logical dates every scenario runs, twice, and what happens on
// them the first time.
var days = []string{"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"}

const (
	flakyDay = "2026-11-02" // MinIO fails the first try's requests until pswap gives up (exit 1)
	killDay  = "2026-11-03" // the first try's pswap is killed with SIGKILL while it commits
	badDay   = "2026-11-04" // the extract holds an amount that is not a number (exit 2)
	// On MinIO only, once, after the five days: another run commits the
	// partition while the day's pswap uploads (exit 3).
	conflictDay = "2026-11-06"
)

// dayRows is the rows of each day in the source. The kill day is large, so
// that its pswap runs long enough to be killed midway.
var dayRows = map[string]int{days[0]: 3, days[1]: 5, days[2]: 100000, days[3]: 4, days[4]: 7, conflictDay: 6}

// interloper is what the other run commits to conflictDay.
var interloper = agg{Rows: 2, Sum: 300.5}

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

	outage atomic.Int64 // requests the proxy failed
	kills  atomic.Int64 // pswap processes killed

	mu       sync.Mutex // guards the errors of the faults, set on the proxy's and the killer's goroutines
	killErr  error
	conflict error // of the interloper's commit; nil once it committed
}

// setErr sets one of the faults' errors.
func (s *scenario) setErr(p *error, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*p = err
}

// A step is one run of a scenario's schedule.
type step struct {
	day   string
	again bool // the second pass: the run is run again
}

// schedule is the runs of a scenario in order: the five days (on MinIO,
// then conflictDay), then the five days again.
func (s *scenario) schedule() []step {
	var out []step
	for _, d := range s.firstPass() {
		out = append(out, step{day: d})
	}
	for _, d := range days {
		out = append(out, step{day: d, again: true})
	}
	return out
}

func (s *scenario) firstPass() []string {
	if s.store == "s3" {
		return append(slices.Clone(days), conflictDay)
	}
	return days
}

// forEachStore runs test on a fresh scenario of each store, file:// and
// MinIO, in parallel with each other and with the other orchestrator's
// test: the orchestrators mostly wait, on retry delays and their polling.
func forEachStore(t *testing.T, test func(*testing.T, *scenario)) {
	if testing.Short() {
		t.Skip("-short: the orchestrators take a minute or two")
	}
	t.Parallel()
	for _, store := range []string{"file", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			test(t, newScenario(t, store))
		})
	}
}

func newScenario(t *testing.T, store string) *scenario {
	s := &scenario{t: t, store: store, dir: t.TempDir(), want: map[string]agg{}, conflict: errors.New("no conflict made")}
	s.notify = filepath.Join(s.dir, "notifications.jsonl")
	source := filepath.Join(s.dir, "sales.csv")
	s.writeSource(source)
	s.env = append(os.Environ(),
		"PATH="+pswapDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SALES_SOURCE="+source, "SALES_NOTIFY_LOG="+s.notify, "SALES_RETRY_DELAY=1", "TZ=UTC",
		// The examples import the pswap package from its wheel; its binary is
		// the one the fault rules look for by its path.
		"PYTHONPATH="+pswapSite(t), "PSWAP_BINARY="+filepath.Join(pswapDir(t), "pswap"))
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
		p.SetRule(s.faultRule(s.outageRule(), s.conflictRule()))
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
	for _, day := range append(slices.Clone(days), conflictDay) {
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
		switch {
		case day == conflictDay && s.store == "s3":
			s.want["dt="+day] = interloper
		case day != badDay && day != conflictDay:
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

// faultRule applies the rules in turn: the first that does not pass a
// request decides its fate.
func (s *scenario) faultRule(rules ...func(faultproxy.Request) faultproxy.Action) func(faultproxy.Request) faultproxy.Action {
	return func(r faultproxy.Request) faultproxy.Action {
		for _, rule := range rules {
			if a := rule(r); a != faultproxy.Pass {
				return a
			}
		}
		return faultproxy.Pass
	}
}

// conflictRule holds the first upload of conflictDay's pswap while another
// run (straight to MinIO, not through the proxy) commits the partition:
// the held pswap read the pointer before, so its swap is a conflict.
func (s *scenario) conflictRule() func(faultproxy.Request) faultproxy.Action {
	var once sync.Once
	return func(r faultproxy.Request) faultproxy.Action {
		if r.IsPut() && strings.Contains(r.Path, "dt="+conflictDay) {
			once.Do(s.interlope)
		}
		return faultproxy.Pass
	}
}

// interlope commits the interloper's rows to conflictDay.
func (s *scenario) interlope() {
	csv := filepath.Join(s.dir, "interloper.csv")
	body := "ts,store,amount\n" + conflictDay + "T01:00:00+00:00,s1,100.25\n" + conflictDay + "T02:00:00+00:00,s2,200.25\n"
	if err := os.WriteFile(csv, []byte(body), 0o644); err != nil {
		s.setErr(&s.conflict, err)
		return
	}
	cmd := exec.Command(filepath.Join(pswapDir(s.t), "pswap"), "commit", "--table", s.table,
		"--partition", "dt="+conflictDay, "--run-id", "interloper/"+conflictDay, "-q", csv)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.setErr(&s.conflict, fmt.Errorf("the interloper's commit: %w: %s", err, out))
		return
	}
	s.setErr(&s.conflict, nil)
}

// killMidway kills, with SIGKILL, the first `pswap commit` of killDay that
// the orchestrator starts, as the OOM killer or a lost node would.
func (s *scenario) killMidway(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
		if pid := s.findCommit(killDay); pid > 0 {
			p, err := os.FindProcess(pid)
			if err == nil {
				err = p.Kill() // SIGKILL
			}
			if err != nil {
				s.setErr(&s.killErr, fmt.Errorf("kill pswap %d: %w", pid, err))
			}
			s.kills.Add(1)
			return
		}
	}
}

// findCommit returns the process id of a running `pswap commit` of day to
// the scenario's table (an argument, or a flag's value, is its partition or
// an interval that starts on it), 0 if there is none.
func (s *scenario) findCommit(day string) int {
	bin := filepath.Join(pswapDir(s.t), "pswap")
	// The kernel names a process's executable by its resolved path, and
	// pswapDir's binary may be a symlink to the CLI scripts/test.sh built.
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
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
			// "--interval=DAY..." and "--partition=dt=DAY", as the pswap package writes its flags
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
				a = v
			}
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

// wantExits is the failed pswap runs of the schedule, by command and exit
// status: the bad day twice (exit 2, no retry), the kill once (-9), on
// MinIO the outage (exit 1) and the conflict (exit 3) once, and gapChecks
// failed gap checks (exit 1).
func (s *scenario) wantExits(gapChecks int) map[string]int {
	want := map[string]int{"commit 2": 2, "commit -9": 1, "status 1": gapChecks}
	if s.store == "s3" {
		want["commit 1"] = 1
		want["commit 3"] = 1
	}
	return want
}

// checkFaults checks that the faults happened: one kill, and on MinIO an
// outage of at least maxAttempts refused requests (pswap's own retries).
func (s *scenario) checkFaults() {
	t := s.t
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killErr != nil || s.kills.Load() != 1 {
		t.Errorf("killed %d pswap processes of %s (%v), want 1", s.kills.Load(), killDay, s.killErr)
	}
	if s.store == "s3" && s.outage.Load() < maxAttempts {
		t.Errorf("the store refused %d requests, want at least %d", s.outage.Load(), maxAttempts)
	}
	if s.store == "s3" && s.conflict != nil {
		t.Errorf("no conflict on %s: %v", conflictDay, s.conflict)
	}
	t.Logf("faults: %d pswap killed, %d requests refused", s.kills.Load(), s.outage.Load())
}

// checkTable checks what the runs left: one notification per partition
// that the first pass changed (first: its commits), carrying the
// idempotency key of that commit; the rows of every partition exact in
// DuckDB, the interloper's on conflictDay; and pswap verify.
func (s *scenario) checkTable(first map[string]commitResult) {
	t := s.t
	notes := readNotifications(t, s.notify)
	changed := 0
	for _, c := range first {
		if c.Changed {
			changed++
		}
	}
	if want := len(days) - 1; len(notes) != want || changed != want {
		t.Errorf("%d notifications for %d commits that changed a partition, want %d of each: %+v", len(notes), changed, want, notes)
	}
	seen := map[string]bool{}
	for _, n := range notes {
		c, ok := first[n.Partition]
		switch {
		case seen[n.Partition]:
			t.Errorf("a second notification for %s: %+v", n.Partition, n)
		case !ok || !c.Changed || n.IdempotencyKey != c.IdempotencyKey || n.Rows != c.Rows:
			t.Errorf("notification %+v, want one of a commit that changed the partition, with its key and rows: %+v", n, c)
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
