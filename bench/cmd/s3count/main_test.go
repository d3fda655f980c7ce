package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestProxyCounts: requests pass through with their Host header unchanged
// (a signature covers it) and are counted by S3 operation, with the bytes
// of the bodies both ways. The upstream here is a stand-in that echoes the
// Host it saw; peers.sh runs the proxy in front of a real MinIO.
func TestProxyCounts(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen-Host", r.Host)
		if r.Method == http.MethodGet {
			io.WriteString(w, "0123456789")
		}
		_ = body
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	px := httptest.NewServer(newProxy(u))
	defer px.Close()

	req, _ := http.NewRequest(http.MethodPut, px.URL+"/bucket/key", strings.NewReader("hello"))
	req.Host = "signed.example:9000"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Seen-Host"); got != "signed.example:9000" {
		t.Errorf("upstream saw Host %q, want the client's", got)
	}
	for _, p := range []string{"/bucket/key", "/bucket?list-type=2&prefix=k"} {
		resp, err := http.Get(px.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err = http.Get(px.URL + "/-/counts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c counts
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Requests != 3 || c.Ops["PutObject"] != 1 || c.Ops["GetObject"] != 1 || c.Ops["ListObjects"] != 1 {
		t.Errorf("counts = %+v, want 1 PutObject, 1 GetObject, 1 ListObjects", c)
	}
	if c.BytesUp != 5 || c.BytesDown != 20 {
		t.Errorf("bytes up %d, down %d; want 5 and 20", c.BytesUp, c.BytesDown)
	}
}

func TestParseUpstream(t *testing.T) {
	for in, ok := range map[string]bool{
		"http://127.0.0.1:9000": true, "https://s3.example": true, "http://h:1/": true,
		"": false, "127.0.0.1:9000": false, "ftp://h": false, "http://h/bucket": false, "http://": false,
	} {
		_, err := parseUpstream(in)
		if (err == nil) != ok || (err != nil && !errors.Is(err, errUsage)) {
			t.Errorf("parseUpstream(%q) = %v, want ok=%v", in, err, ok)
		}
	}
}

// FuzzParseUpstream: any string is accepted as an http(s) URL with a host
// and no path, or refused with errUsage; never a panic.
func FuzzParseUpstream(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:9000", "https://h/", "h:1", "http://h/p", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parseUpstream(s)
		if err != nil {
			if !errors.Is(err, errUsage) {
				t.Fatalf("error %v is not errUsage", err)
			}
			return
		}
		if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			t.Fatalf("accepted %q as %v", s, u)
		}
	})
}
