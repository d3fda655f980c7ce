package filestore

import (
	"net/url"
	"strings"
	"testing"
)

// TestFileURLWindows checks the Windows spelling of file URLs on any OS:
// C:\data\sales is file:///C:/data/sales, whose parsed path (/C:/data/sales)
// is C:\data\sales again; on Unix both directions are the path itself.
func TestFileURLWindows(t *testing.T) {
	for _, c := range []struct {
		path, urlPath string
		windows       bool
	}{
		{`C:\data\sales`, "/C:/data/sales", true},
		{`d:\lake\dt=2026-11-29\_pswap\pointer.json`, "/d:/lake/dt=2026-11-29/_pswap/pointer.json", true},
		{"/data/sales", "/data/sales", false},
		{`/data/a\b`, `/data/a\b`, false}, // a backslash is a name's byte on Unix
	} {
		if got := urlPathOf(c.path, c.windows); got != c.urlPath {
			t.Errorf("urlPathOf(%q, windows=%v) = %q, want %q", c.path, c.windows, got, c.urlPath)
		}
		if got := pathFromURL(c.urlPath, c.windows); got != c.path {
			t.Errorf("pathFromURL(%q, windows=%v) = %q, want %q", c.urlPath, c.windows, got, c.path)
		}
	}
	// The URL a Windows store prints parses back to its path.
	raw := (&url.URL{Scheme: "file", Path: urlPathOf(`C:\data\sales`, true)}).String()
	if raw != "file:///C:/data/sales" {
		t.Fatalf("URL %q, want file:///C:/data/sales", raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host != "" || pathFromURL(u.Path, true) != `C:\data\sales` {
		t.Fatalf("url.Parse(%q) = %+v, %v", raw, u, err)
	}
}

// FuzzFileURL: a Windows absolute path survives the trip through its
// file URL (printed, parsed, turned back into a path).
func FuzzFileURL(f *testing.F) {
	for _, s := range []string{`C:\data\sales`, `z:\a b\%41\#x?y`, `C:\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !hasDrive(p) || len(p) < 3 || p[2] != '\\' || strings.ContainsAny(p, "/\x00") {
			return
		}
		raw := (&url.URL{Scheme: "file", Path: urlPathOf(p, true)}).String()
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("url.Parse(%q) of %q: %v", raw, p, err)
		}
		if u.Host != "" || pathFromURL(u.Path, true) != p {
			t.Fatalf("%q -> %q -> host %q path %q", p, raw, u.Host, pathFromURL(u.Path, true))
		}
	})
}
