package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ipcStream encodes batches of the given row counts (id int64, amount
// double) as an Arrow IPC stream; ids count up from first.
func ipcStream(t *testing.T, first int64, batches ...int) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sc))
	for _, n := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range n {
			b.Field(0).(*array.Int64Builder).Append(first)
			b.Field(1).(*array.Float64Builder).Append(float64(first) / 2)
			first++
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCommitArrowStdin: `--input-format arrow -` commits an Arrow IPC
// stream from standard input (what the Python package sends), every batch
// of it; a stream that is cut or not Arrow at all is bad input (exit 2)
// and leaves the partition as it was.
func TestCommitArrowStdin(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{envTable: "file://" + filepath.ToSlash(filepath.Join(dir, "t"))}
	commit := func(stdin []byte, extra ...string) (int, string, string) {
		args := append([]string{"commit", "--json", "--partition", "dt=2026-11-29", "--input-format", "arrow"}, extra...)
		return invoke(t, env, string(stdin), append(args, "-")...)
	}
	var res resultJSON
	code, out, stderr := commit(ipcStream(t, 0, 1000, 0, 2500), "--run-id", "r1")
	if code != 0 {
		t.Fatalf("commit: exit %d, %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Rows != 3500 || !res.Changed {
		t.Fatalf("commit: %+v, %v", res, err)
	}
	gen := res.Generation

	// The same stream again with the same run id: a no-op.
	code, out, _ = commit(ipcStream(t, 0, 1000, 0, 2500), "--run-id", "r1")
	if code != 0 || !strings.Contains(out, `"outcome": "same-run"`) {
		t.Fatalf("re-run: exit %d, %s", code, out)
	}

	full := ipcStream(t, 10_000, 100, 200)
	bad := map[string][]byte{
		"no end-of-stream marker": full[:len(full)-8], // a producer killed between batches
		"cut in a batch":          full[:len(full)-40],
		"CSV":                     []byte("id,amount\n1,2.5\n"),
		"nothing":                 nil,
	}
	for name, stdin := range bad {
		code, out, stderr := commit(stdin, "--run-id", "r2")
		if code != exitUsage || out != "" || !strings.Contains(stderr, `"code": "bad_input"`) ||
			!strings.Contains(stderr, "Arrow IPC stream") {
			t.Errorf("%s: exit %d, stdout %q, stderr %s", name, code, out, stderr)
		}
	}
	// Nothing of them was committed: the partition still shows r1's generation.
	code, out, _ = invoke(t, env, "", "show", "--json", "--partition", "dt=2026-11-29")
	if code != 0 || !strings.Contains(out, `"generation": "`+gen+`"`) || !strings.Contains(out, `"rows": 3500`) {
		t.Fatalf("show after the bad streams: exit %d, %s", code, out)
	}

	// A stream of a schema and no batch is an empty input: refused unless
	// --allow-empty.
	if code, _, stderr := commit(ipcStream(t, 0), "--run-id", "r3"); code != exitUsage || !strings.Contains(stderr, "empty input") {
		t.Fatalf("empty stream: exit %d, %s", code, stderr)
	}
	if code, out, stderr := commit(ipcStream(t, 0), "--run-id", "r4", "--allow-empty"); code != 0 || !strings.Contains(out, `"rows": 0`) {
		t.Fatalf("empty stream, --allow-empty: exit %d, %s %s", code, out, stderr)
	}

	// merge reads its input more than once: arrow is refused up front.
	code, _, stderr = invoke(t, env, string(full), "merge", "--key", "id", "--partition", "dt=2026-11-29", "--input-format", "arrow", "-")
	if code != exitUsage || !strings.Contains(stderr, "not --input-format arrow") {
		t.Fatalf("merge arrow: exit %d, %s", code, stderr)
	}
}
