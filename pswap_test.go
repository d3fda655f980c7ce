package pswap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

var ctx = context.Background()

func TestOpenStoreURLs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		url     string
		wantURI string // URI of key "k", or "" when an error is expected
	}{
		{dir + "/t", "file://" + dir + "/t/k"},
		{"file://" + dir + "/t", "file://" + dir + "/t/k"},
		{"file://localhost" + dir + "/t", "file://" + dir + "/t/k"},
		{"mem://x", "mem://x/k"},
		{"", ""},
		{"file://host/path", ""},
		{"file://relative", ""},
		{"s3://", ""},
		{"s3:///prefix", ""},
		{"s3://bucket/../x", ""},
		{"gs://Bucket/x", ""},
		{"gs://bucket/../x", ""},
		{"bad\nurl", ""},
		{"s3:/bucket/sales", ""},
		{"s3:bucket/sales", ""},
		{"s3//bucket/sales", ""},
		{"S3//bucket/sales", ""},
		{"s3a//bucket/sales", ""},
		{"file///data/sales", ""},
		{"file:relative", ""},
		{"file:/abs/x", ""},
		{"S3:/bucket", ""},
		{"gs:bucket/x", ""},
		{"s3://AKIAFAKE:TopSecretPw@mybucket/sales", ""},
		{"./s3:/bucket/sales", "file://" + mustAbs(t, "s3:/bucket/sales") + "/k"},
		{"./s3//bucket/sales", "file://" + mustAbs(t, "s3/bucket/sales") + "/k"},
		{"sales//2026", "file://" + mustAbs(t, "sales/2026") + "/k"},
		{dir + "/a:b", "file://" + dir + "/a:b/k"},
	} {
		st, err := pswap.OpenStore(ctx, tc.url, pswap.Options{})
		if tc.wantURI == "" {
			if err == nil {
				t.Errorf("OpenStore(%q) succeeded, want an error", tc.url)
			} else if !errors.Is(err, pswap.ErrBadURL) {
				t.Errorf("OpenStore(%q): %v, want ErrBadURL", tc.url, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("OpenStore(%q): %v", tc.url, err)
			continue
		}
		if got := st.URI("k"); got != tc.wantURI {
			t.Errorf("OpenStore(%q).URI(k) = %q, want %q", tc.url, got, tc.wantURI)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A mistyped scheme is refused with the URL it probably meant, and
// userinfo is refused without being echoed.
func TestOpenStoreHints(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"s3:/bucket/sales", `did you mean "s3://bucket/sales"?`},
		{"s3:bucket/sales", `did you mean "s3://bucket/sales"?`},
		{"file:/data/x", `did you mean "file:///data/x"?`},
		{"file:relative", `did you mean "relative" (a relative path)?`},
		{"s4://bucket/x", `did you mean "s3://bucket/x"?`},
		{"s3a:/bucket/x", `did you mean "s3://bucket/x"?`},
		{"gs:bucket", `did you mean "gs://bucket"?`},
		{"gcs://bucket/x", `did you mean "gs://bucket/x"?`},
		{"s3:/bucket/sales", `written "./s3:/bucket/sales"`},
		{"s3//bucket/sales", `did you mean "s3://bucket/sales"?`},
		{"s3//bucket/sales", `written "./s3/bucket/sales"`},
		{"s4//bucket/x", `did you mean "s3://bucket/x"?`},
		{"file///data/sales", `did you mean "file:///data/sales"?`},
	} {
		_, err := pswap.OpenStore(ctx, tc.url, pswap.Options{})
		if err == nil || !errors.Is(err, pswap.ErrBadURL) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenStore(%q) = %v, want ErrBadURL saying %s", tc.url, err, tc.want)
		}
	}
	for _, u := range []string{"s3://AKIAFAKE:TopSecretPw@mybucket/sales", "s3:/AKIAFAKE:TopSecretPw@mybucket/sales", "s3:AKIAFAKE:TopSecretPw@b/x", "file://user:TopSecretPw@localhost/x", "s3://TopSecretPw@b/x"} {
		_, err := pswap.OpenStore(ctx, u, pswap.Options{})
		if err == nil || !errors.Is(err, pswap.ErrBadURL) {
			t.Errorf("OpenStore(%q) = %v, want ErrBadURL", u, err)
			continue
		}
		if strings.Contains(err.Error(), "TopSecretPw") || strings.Contains(err.Error(), "AKIAFAKE") || strings.Contains(err.Error(), "user") {
			t.Errorf("OpenStore(%q) error echoes the userinfo: %v", u, err)
		}
	}
}

func FuzzOpenStore(f *testing.F) {
	for _, s := range []string{"s3://b/p", "file:///tmp/x", "rel/path", "mem://a", "s3://b/../x", "file://h/x", "://", "s3://b//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		if strings.HasPrefix(strings.ToLower(url), "s3://") {
			return // would dial the network
		}
		if !strings.Contains(url, "://") || strings.HasPrefix(strings.ToLower(url), "file://") {
			return // would create local directories only on write; opening is enough to check
		}
		st, err := pswap.OpenStore(context.Background(), url, pswap.Options{})
		if err == nil {
			st.Close()
		} else if !errors.Is(err, pswap.ErrBadURL) {
			t.Fatalf("OpenStore(%q): error %v does not match ErrBadURL", url, err)
		}
	})
}

type row struct {
	ID   int64  `parquet:"id"`
	Name string `parquet:"name"`
}

func TestWriteCommitVerifyAndTamper(t *testing.T) {
	dir := t.TempDir()
	table, err := pswap.Open(ctx, dir, pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := table.Partition("dt=2026-11-29")
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]row, 1000)
	for i := range rows {
		rows[i] = row{int64(i), "n"}
	}
	if err := pswap.Write(w, rows...); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil || !res.Changed || res.Rows != 1000 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	rep, err := p.Verify(ctx)
	if err != nil || !rep.OK || rep.Rows != 1000 {
		t.Fatalf("verify clean: %+v %v", rep, err)
	}
	// Tamper: flip one byte of the data file (same size).
	snap, _ := p.Current(ctx)
	path := filepath.Join(dir, filepath.FromSlash(snap.Files[0].Key))
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 0xff
	os.WriteFile(path, b, 0o644)
	rep, err = p.Verify(ctx)
	if !errors.Is(err, pswap.ErrMismatch) || rep.OK || rep.Problems[0].What != "checksum" {
		t.Fatalf("verify tampered: %+v %v", rep, err)
	}
	// A flipped bit inside a page: its CRC names the column.
	b[len(b)/2] ^= 0xff
	b[len(b)/4] ^= 0x01
	os.WriteFile(path, b, 0o644)
	rep, err = p.Verify(ctx)
	if !errors.Is(err, pswap.ErrMismatch) || len(rep.Problems) != 2 || rep.Problems[1].What != "page checksum" ||
		!strings.Contains(rep.Problems[1].Got, "in column ") {
		t.Fatalf("verify page tampered: %+v %v", rep, err)
	}
	// Truncate: size and footer both wrong.
	os.WriteFile(path, b[:len(b)/2], 0o644)
	rep, err = p.Verify(ctx)
	if !errors.Is(err, pswap.ErrMismatch) || len(rep.Problems) < 2 {
		t.Fatalf("verify truncated: %+v %v", rep, err)
	}
	os.Remove(path)
	rep, err = p.Verify(ctx)
	if !errors.Is(err, pswap.ErrMismatch) || rep.Problems[0].What != "missing" {
		t.Fatalf("verify missing: %+v %v", rep, err)
	}
}

func TestStageThenCommitStaged(t *testing.T) {
	st, _ := filestore.New(t.TempDir())
	table := pswap.NewTable(st)
	p, _ := table.Partition("dt=2026-11-29")
	w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	pswap.Write(w, row{1, "a"}, row{2, "b"})
	gen, content, err := w.Stage(ctx)
	if err != nil || content.Rows != 2 {
		t.Fatalf("stage: %v %+v", err, content)
	}
	if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("a staged generation is visible before commit: %v", err)
	}
	res, err := p.CommitStaged(ctx, gen, pswap.CommitOptions{RunID: "r1"})
	if err != nil || !res.Changed || res.Generation != gen {
		t.Fatalf("commit staged: %+v %v", res, err)
	}
	// Running the same commit again is a no-op, not "not found".
	again, err := p.CommitStaged(ctx, gen, pswap.CommitOptions{})
	if err != nil || again.Changed || again.Outcome != swap.AlreadyCommitted || again.Generation != gen {
		t.Fatalf("second commit of the same staged generation: %+v %v", again, err)
	}
	var left []string
	for a, err := range st.List(ctx, layout.MetaPrefix("dt=2026-11-29")+"staged/") {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, a.Key)
	}
	if len(left) != 0 {
		t.Fatalf("staged record left after commit: %q", left)
	}
	// The column statistics staging computed reach the manifest through
	// the staged record, so that the publish after it reads no footer.
	if !content.HasStats() {
		t.Fatal("staging computed no column statistics")
	}
	m, err := swap.ReadManifest(ctx, st, "dt=2026-11-29", gen)
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasStats() || !reflect.DeepEqual(m.Files[0].Columns, content.Files[0].Columns) {
		t.Fatalf("manifest of a staged commit: columns %+v, staged %+v", m.Files[0].Columns, content.Files[0].Columns)
	}
}

// The library refuses to replace a partition with nothing unless asked
// (issue 12): Begin then Commit without rows is ErrEmptyCommit, for Commit
// and for Stage, and changes nothing; AllowEmpty commits an empty partition.
func TestEmptyCommitThroughFacade(t *testing.T) {
	table := pswap.NewTable(mustFileStore(t))
	p, err := table.Partition("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID int64 `parquet:"id"`
	}
	if err := pswap.Write(w, row{1}, row{2}); err != nil {
		t.Fatal(err)
	}
	if w.Rows() != 2 {
		t.Fatalf("Rows() = %d, want 2", w.Rows())
	}
	first, err := w.Commit(ctx)
	if err != nil || first.Rows != 2 {
		t.Fatalf("%+v %v", first, err)
	}
	for _, stage := range []bool{false, true} {
		w, err := p.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if stage {
			_, _, err = w.Stage(ctx)
		} else {
			_, err = w.Commit(ctx)
		}
		if !errors.Is(err, pswap.ErrEmptyCommit) {
			t.Fatalf("empty (stage %v): %v, want ErrEmptyCommit", stage, err)
		}
		if snap, err := p.Current(ctx); err != nil || snap.Pointer.Generation != first.Generation || snap.Manifest.Rows != 2 {
			t.Fatalf("a refused empty commit changed the partition: %v", err)
		}
	}
	w, err = p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{AllowEmpty: true}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Commit(ctx)
	if err != nil || !r.Changed || r.Rows != 0 {
		t.Fatalf("allowed empty commit: %+v %v", r, err)
	}
}

func mustFileStore(t *testing.T) *filestore.Store {
	t.Helper()
	st, err := filestore.New(filepath.Join(t.TempDir(), "table"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
