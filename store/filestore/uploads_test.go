package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
)

// The temporary files of writes that never finished (a writer that died
// before Commit or Abort) are listed as uploads and can be aborted;
// finished, aborted and foreign files are not.
func TestUploads(t *testing.T) {
	dir := t.TempDir()
	s, _ := filestore.New(dir)
	ctx := context.Background()
	open := func(key string) store.Writer {
		w, err := s.NewWriter(ctx, key, store.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("partial"))
		return w
	}
	open("p/_pswap/gen/a/part-00000.parquet") // dies: never finished
	open("p/_pswap/gen/b/part-00001.parquet") // dies too
	open("q/x")                               // another prefix
	done := open("p/_pswap/gen/a/part-00002.parquet")
	if _, err := done.Commit(); err != nil {
		t.Fatal(err)
	}
	open("p/_pswap/gen/c/y").Abort()
	// Look-alikes that are not temporary files of the store.
	os.WriteFile(filepath.Join(dir, "p", "_pswap", ".notes.pswap-tmp"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "p", "_pswap", ".z.0123.pswap-tmp"), []byte("x"), 0o644)

	list := func(prefix string) []store.Upload {
		var out []store.Upload
		for u, err := range s.ListUploads(ctx, prefix) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u)
		}
		return out
	}
	keys := func(us []store.Upload) []string {
		var out []string
		for _, u := range us {
			out = append(out, u.Key)
			if u.Initiated.IsZero() || !strings.HasSuffix(u.ID, ".pswap-tmp") {
				t.Errorf("upload %+v", u)
			}
		}
		return out
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"p/_pswap/gen/a/part-00000.parquet", "p/_pswap/gen/b/part-00001.parquet", "q/x"}},
		{"p/", []string{"p/_pswap/gen/a/part-00000.parquet", "p/_pswap/gen/b/part-00001.parquet"}},
		{"p/_pswap/gen/b", []string{"p/_pswap/gen/b/part-00001.parquet"}},
		{"p/_pswap/gen/a/part-00000", []string{"p/_pswap/gen/a/part-00000.parquet"}},
		{"r/", nil},
	} {
		if got := keys(list(tc.prefix)); !slices.Equal(got, tc.want) {
			t.Errorf("ListUploads(%q) = %v, want %v", tc.prefix, got, tc.want)
		}
	}

	ups := list("p/_pswap/gen/b/")
	var ul store.UploadLister = s
	// An upload whose ID is not a temporary file of its key is refused.
	for _, bad := range []store.Upload{
		{Key: "p/_pswap/gen/a/part-00002.parquet", ID: "p/_pswap/gen/a/part-00002.parquet"},
		{Key: "q/x", ID: ups[0].ID},
		{Key: "../x", ID: "../.x.0123456789abcdef.pswap-tmp"},
		{Key: "/etc/x", ID: "/etc/.x.0123456789abcdef.pswap-tmp"},
	} {
		if err := ul.AbortUpload(ctx, bad); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("AbortUpload(%+v) = %v, want ErrInvalidKey", bad, err)
		}
	}
	if err := ul.AbortUpload(ctx, ups[0]); err != nil {
		t.Fatal(err)
	}
	if err := ul.AbortUpload(ctx, ups[0]); err != nil {
		t.Fatalf("aborting twice: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "_pswap", "gen", "b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the emptied folder is left: %v", err)
	}
	if got := keys(list("p/")); !slices.Equal(got, []string{"p/_pswap/gen/a/part-00000.parquet"}) {
		t.Errorf("after abort: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "p", "_pswap", "gen", "a", "part-00002.parquet")); err != nil || string(b) != "partial" {
		t.Errorf("the finished file changed: %q %v", b, err)
	}
	for u, err := range ul.ListUploads(ctx, "../x") {
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ListUploads(../x) = %+v, %v", u, err)
		}
	}
}
