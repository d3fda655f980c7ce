package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A merge killed while it spools standard input leaves its spool folder
// behind; the next merge removes it, as it removes a killed merge's
// scratch folder, so that repeated kills do not fill the temp folder.
func TestMergeStdinSpoolOfAKilledMergeIsRemoved(t *testing.T) {
	t.Parallel()
	bin := pswapBinary(t)
	tmp := t.TempDir()
	table := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "sales"))
	env := append(cleanEnv(), "TMPDIR="+tmp)

	cmd := exec.Command(bin, "merge", "--table", table, "--partition", "dt=2026-11-29", "--key", "id",
		"--input-format", "csv", "-")
	cmd.Env = env
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("id,amount\n1,2.5\n")); err != nil {
		t.Fatal(err)
	}
	spools := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "pswap-merge-*"))
		return m
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(spools()) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the merge made no spool folder in 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no cleanup runs
	cmd.Wait()
	w.Close()
	if len(spools()) == 0 {
		t.Fatal("the killed merge left no spool folder: the test proves nothing")
	}

	next := exec.Command(bin, "merge", "--table", table, "--partition", "dt=2026-11-29", "--key", "id",
		"--input-format", "csv", "-")
	next.Env = env
	next.Stdin = strings.NewReader("id,amount\n1,3.5\n")
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("the next merge: %v: %s", err, out)
	}
	if left := spools(); len(left) != 0 {
		t.Errorf("after the next merge, %s is still in the temp folder", left)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		for _, e := range entries {
			t.Logf("left in the temp folder: %s", e.Name())
		}
	}
}
