package link

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/synctest"
	"time"
)

// TestProxyForwards: a request's body, method, path and Host header reach
// the upstream unchanged (the Host is signed by S3 clients), and the
// upstream's answer comes back.
func TestProxyForwards(t *testing.T) {
	var gotBody []byte
	var gotHost, gotPath, gotMethod string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		gotHost, gotPath, gotMethod = r.Host, r.URL.Path, r.Method
		w.Header().Set("ETag", `"e"`)
		w.WriteHeader(http.StatusOK)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	px := httptest.NewServer(Proxy(u, 1e9))
	defer px.Close()
	body := bytes.Repeat([]byte("0123456789"), 20_000) // 200 kB: several paced reads
	req, _ := http.NewRequest(http.MethodPut, px.URL+"/bucket/key", bytes.NewReader(body))
	req.Host = "s3.example:9000"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"e"` {
		t.Errorf("answer %d, ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
	if !bytes.Equal(gotBody, body) || gotHost != "s3.example:9000" || gotPath != "/bucket/key" || gotMethod != http.MethodPut {
		t.Errorf("upstream got %d bytes (equal %v), Host %q, %s %s", len(gotBody), bytes.Equal(gotBody, body), gotHost, gotMethod, gotPath)
	}
}

// TestLimiterPaces: bytes through the limiter take their time at its rate,
// shared between readers (in synctest's clock).
func TestLimiterPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(1e6) // 1 MB/s
		start := time.Now()
		done := make(chan struct{})
		for range 2 {
			go func() {
				for range 10 {
					l.Wait(50_000)
				}
				done <- struct{}{}
			}()
		}
		<-done
		<-done
		// 2 x 10 x 50 kB = 1 MB at 1 MB/s: one second, less the idle
		// credit (20 ms) the first wait may take.
		if d := time.Since(start); d < 980*time.Millisecond || d > time.Second {
			t.Errorf("1 MB at 1 MB/s took %v, want 0.98-1 s", d)
		}
	})
}
