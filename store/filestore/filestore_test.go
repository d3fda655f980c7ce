package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/storetest"
)

func newStore(t *testing.T) store.Store {
	s, err := filestore.New(filepath.Join(t.TempDir(), "root"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore, storetest.Options{PartSize: 1 << 20})
}

func TestNoTempFilesLeft(t *testing.T) {
	dir := t.TempDir()
	s, _ := filestore.New(dir)
	ctx := context.Background()
	a, _ := s.Put(ctx, "p/ptr", []byte("1"), store.PutOptions{IfNoneMatch: true})
	s.Put(ctx, "p/ptr", []byte("2"), store.PutOptions{IfNoneMatch: true}) // fails
	s.Put(ctx, "p/ptr", []byte("3"), store.PutOptions{IfMatch: "stale"})  // fails
	s.Put(ctx, "p/ptr", []byte("4"), store.PutOptions{IfMatch: a.ETag})   // wins
	w, _ := s.NewWriter(ctx, "p/aborted", store.WriterOptions{})
	w.Write([]byte("x"))
	w.Abort()
	entries, _ := os.ReadDir(filepath.Join(dir, "p"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".pswap-tmp") {
			t.Fatalf("temporary file left behind: %q", names)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "p", "ptr")); string(b) != "4" {
		t.Fatalf("ptr = %q, want 4", b)
	}
}

func TestDeletePrunesEmptyDirs(t *testing.T) {
	dir := t.TempDir()
	s, _ := filestore.New(dir)
	ctx := context.Background()
	s.Put(ctx, "t/dt=1/_pswap/gen/g1/part-0.parquet", []byte("x"), store.PutOptions{})
	s.Put(ctx, "t/dt=1/_pswap/pointer.json", []byte("x"), store.PutOptions{})
	if err := s.Delete(ctx, "t/dt=1/_pswap/gen/g1/part-0.parquet"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t/dt=1/_pswap/gen")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty generation folders not pruned: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t/dt=1/_pswap/pointer.json")); err != nil {
		t.Fatalf("pruning removed a sibling: %v", err)
	}
}

// The helper process body: run by TestMultiProcess in child processes.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("PSWAP_FILESTORE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	s, _ := filestore.New(dir)
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv("PSWAP_FILESTORE_HELPER_N"))
	me := os.Getenv("PSWAP_FILESTORE_HELPER_ID")
	for i := range n {
		if err := storetest.Increment(ctx, s, "counter", nil); err != nil {
			t.Fatal(err)
		}
		// Race a create-if-absent per round: the parent counts the winners.
		if _, err := s.Put(ctx, fmt.Sprintf("claims/%04d", i), []byte(me), store.PutOptions{IfNoneMatch: true}); err == nil {
			s.Put(ctx, fmt.Sprintf("wins/%04d-%s", i, me), nil, store.PutOptions{IfNoneMatch: true})
		} else if !errors.Is(err, store.ErrPrecondition) {
			t.Fatal(err)
		}
	}
}

// TestMultiProcess races OS processes (not goroutines) on one counter and on
// create-if-absent claims: flock and link(2) must make them behave like S3.
func TestMultiProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	s, _ := filestore.New(dir)
	ctx := context.Background()
	if _, err := s.Put(ctx, "counter", []byte("0"), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	const procs, n = 4, 100
	cmds := make([]*exec.Cmd, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PSWAP_FILESTORE_HELPER_DIR="+dir,
			"PSWAP_FILESTORE_HELPER_N="+strconv.Itoa(n), "PSWAP_FILESTORE_HELPER_ID="+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	b, _, err := store.ReadAll(ctx, s, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != strconv.Itoa(procs*n) {
		t.Fatalf("counter = %s after %d processes x %d increments, want %d", b, procs, n, procs*n)
	}
	wins := 0
	for _, err := range s.List(ctx, "wins/") {
		if err != nil {
			t.Fatal(err)
		}
		wins++
	}
	if wins != n {
		t.Fatalf("%d create-if-absent winners over %d rounds, want exactly %d", wins, n, n)
	}
	t.Logf("%d processes x %d increments = %s; %d claims, one winner each", procs, n, b, n)
}
