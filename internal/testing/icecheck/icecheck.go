package icecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"

	"github.com/pswap/pswap/internal/testing/nodeenv"
	"github.com/pswap/pswap/store"
)

// ErrUnavailable: node is missing, or icebird is not installed here.
var ErrUnavailable = errors.New("icecheck: icebird cannot run")

// icebird is icebird's npm package, installed in this folder.
var icebird = nodeenv.NewReader("icebird", ErrUnavailable, "icebird")

// Available reports whether Read can run; the error says what is missing.
func Available() error { return icebird.Available() }

// TB is the subset of testing.TB that Require uses.
type TB = nodeenv.TB

// Require skips the test when node is missing and fails it when node is
// there but icebird is not installed (in CI it must run).
func Require(t TB) {
	t.Helper()
	icebird.Require(t)
}

// Usable reports whether icebird can run: false (logged) when node is
// missing; a fatal test error when node is there but icebird is not installed.
func Usable(t interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}) bool {
	t.Helper()
	return icebird.Usable(t)
}

// File is one data file of the current snapshot, as icebird read it.
type File struct {
	Path      string            `json:"path"`
	Partition map[string]string `json:"partition"` // from the manifest
	Rows      int64             `json:"rows"`      // rows icebird read from the file
	Nulls     int64             `json:"nulls"`     // partition-column values that came back NULL
}

// Result is what icebird read from the current snapshot.
type Result struct {
	PartitionColumns []string `json:"partitionColumns"`
	Files            []File   `json:"files"`
	Total            int64    `json:"total"` // rows of one read of the whole table
}

// RowsPerPartition sums the rows icebird read by partition key
// ("dt=2026-11-29/hr=13", in the spec's column order).
func (r Result) RowsPerPartition() map[string]int64 {
	out := map[string]int64{}
	for _, f := range r.Files {
		var parts []string
		for _, c := range r.PartitionColumns {
			parts = append(parts, c+"="+f.Partition[c])
		}
		out[strings.Join(parts, "/")] += f.Rows
	}
	return out
}

// Nulls is the number of partition-column values that came back NULL.
func (r Result) Nulls() int64 {
	var n int64
	for _, f := range r.Files {
		n += f.Nulls
	}
	return n
}

// Read reads the table at st with icebird: metadataFile names the version
// ("v3.metadata.json"); "" lets icebird follow version-hint.text.
func Read(ctx context.Context, st store.Store, metadataFile string) (Result, error) {
	if err := Available(); err != nil {
		return Result{}, err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/")
		data, a, err := store.ReadAll(r.Context(), st, key)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidKey) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		http.ServeContent(w, r, key, a.ModTime, bytes.NewReader(data))
	}))
	defer srv.Close()
	args := []string{"--import", "./register.mjs", "read.mjs", strings.TrimSuffix(st.URI(""), "/"), srv.URL}
	if metadataFile != "" {
		args = append(args, metadataFile)
	}
	cmd := icebird.Command(ctx, args...)
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("icebird: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return Result{}, fmt.Errorf("icebird: decode output: %w", err)
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
	return r, nil
}
