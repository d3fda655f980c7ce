package orchestrators

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// orchestrate runs NAME_runner.py of this folder on examples/NAME/pswap_sales.py
// and its target (the DAG or the job) for the steps' days, in one process
// of the orchestrators' environment with a fresh home folder in homeVar
// and env added, and returns the runs it recorded and its log.
func orchestrate[R any](s *scenario, name, homeVar, target string, steps []step, env ...string) ([]R, string) {
	t := s.t
	results := filepath.Join(s.dir, name+"-runs.jsonl")
	home := filepath.Join(s.dir, name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(repoRoot(), "integration", "orchestrators", name+"_runner.py"),
		results, filepath.Join(repoRoot(), "examples", name, "pswap_sales.py"), target}
	for _, st := range steps {
		args = append(args, st.day)
	}
	cmd := exec.Command(orchPython(t), args...)
	cmd.Env = append(append(s.env, homeVar+"="+home, "PYTHONDONTWRITEBYTECODE=1"), env...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s ran %d runs in %s", name, len(steps), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, tail(log.String(), 6000))
	}
	f, err := os.Open(results)
	if err != nil {
		t.Fatalf("%s recorded no run: %v\n%s", name, err, tail(log.String(), 6000))
	}
	defer f.Close()
	var runs []R
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r R
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", results, err)
		}
		runs = append(runs, r)
	}
	if len(runs) != len(steps) {
		t.Fatalf("%s recorded %d runs, want %d\n%s", name, len(runs), len(steps), tail(log.String(), 4000))
	}
	return runs, log.String()
}

// checkCommit checks the commit of a step's run: the first pass commits
// the day's rows, the second is a same-run no-op that uploads nothing.
func checkCommit(t *testing.T, st step, c *commitResult) {
	t.Helper()
	switch {
	case c == nil:
		t.Errorf("%s: no commit recorded", st.day)
	case c.Partition != "dt="+st.day || c.Rows != int64(dayRows[st.day]):
		t.Errorf("%s: commit %+v, want dt=%s with %d rows", st.day, c, st.day, dayRows[st.day])
	case !st.again && (!c.Changed || c.Outcome != "committed"):
		t.Errorf("%s: first commit %+v, want changed", st.day, c)
	case st.again && (c.Changed || c.Outcome != "same-run" || c.StagedGeneration != ""):
		t.Errorf("%s: the second run's commit %+v, want same-run, nothing uploaded", st.day, c)
	}
}

// tail is the end of a long log.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
