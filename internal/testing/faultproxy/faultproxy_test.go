package faultproxy

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// backend is a tiny object server: PUT stores the body, GET returns it.
type backend struct {
	mu   sync.Mutex
	objs map[string]string
	puts atomic.Int64
}

func newBackend(t *testing.T) (*backend, *Proxy) {
	t.Helper()
	b := &backend{objs: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch r.Method {
		case http.MethodPut:
			body, _ := io.ReadAll(r.Body)
			b.objs[r.URL.Path] = string(body)
			b.puts.Add(1)
		case http.MethodGet:
			v, ok := b.objs[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, v)
		}
	}))
	t.Cleanup(srv.Close)
	p, err := Start(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return b, p
}

func do(t *testing.T, method, url, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Each action does what it says: whether the request reached the server,
// and what the client saw.
func TestActions(t *testing.T) {
	for _, tc := range []struct {
		act     Action
		applied bool
		status  int    // 0: transport error
		code    string // S3 error code in the body
	}{
		{Pass, true, 200, ""},
		{Delay, true, 200, ""},
		{SlowReply, true, 200, ""},
		{Late, true, 200, ""},
		{DropReply, true, 0, ""},
		{ReplyThen503, true, 503, "ServiceUnavailable"},
		{Reset, false, 0, ""},
		{SlowDown, false, 503, "SlowDown"},
		{Internal, false, 500, "InternalError"},
		{Conflict, false, 409, "ConditionalRequestConflict"},
	} {
		t.Run(tc.act.String(), func(t *testing.T) {
			b, p := newBackend(t)
			p.SetDelay(time.Millisecond)
			var appliedSeen atomic.Int64
			p.SetOnApplied(func(r Request, a Action, status int) {
				if a == tc.act && status == 200 && r.IsPut() && b.puts.Load() == 1 {
					appliedSeen.Add(1)
				}
			})
			p.SetRule(func(r Request) Action {
				if r.IsPut() {
					return tc.act
				}
				return Pass
			})
			status, body, err := do(t, http.MethodPut, p.URL+"/bucket/key", "hello")
			if tc.status == 0 {
				if err == nil {
					t.Fatalf("want a transport error, got status %d", status)
				}
			} else if err != nil || status != tc.status || !strings.Contains(body, tc.code) {
				t.Fatalf("got %d %q %v, want %d %s", status, body, err, tc.status, tc.code)
			}
			if !p.WaitIdle(5 * time.Second) {
				t.Fatal("proxy never became idle")
			}
			if got := b.puts.Load() == 1; got != tc.applied {
				t.Fatalf("applied = %v, want %v", got, tc.applied)
			}
			wantApplied := int64(0)
			if tc.act == DropReply || tc.act == ReplyThen503 || tc.act == SlowReply || tc.act == Late {
				wantApplied = 1
			}
			if appliedSeen.Load() != wantApplied {
				t.Fatalf("OnApplied saw %d applied requests, want %d", appliedSeen.Load(), wantApplied)
			}
			if p.Count(tc.act) != 1 || p.Requests() != 1 {
				t.Fatalf("counts %v, requests %d", p.Counts(), p.Requests())
			}
			wantInjected := int64(1)
			if tc.act == Pass {
				wantInjected = 0
			}
			if p.Injected() != wantInjected {
				t.Fatalf("injected %d, want %d", p.Injected(), wantInjected)
			}
			// Reads pass: the rule only matched the PUT.
			status, body, err = do(t, http.MethodGet, p.URL+"/bucket/key", "")
			if tc.applied && (err != nil || status != 200 || body != "hello") {
				t.Fatalf("read back %d %q %v", status, body, err)
			}
			p.ResetCounts()
			if p.Requests() != 0 || len(p.Counts()) != 0 {
				t.Fatalf("after reset: %v", p.Counts())
			}
		})
	}
}

func TestRequestKinds(t *testing.T) {
	q := func(s string) Request {
		method, rest, _ := strings.Cut(s, " ")
		req := httptest.NewRequest(method, "http://x/"+rest, nil)
		return Request{Method: method, Path: strings.TrimPrefix(req.URL.Path, "/"), Query: req.URL.Query()}
	}
	for _, tc := range []struct {
		req                            string
		put, part, del, read, anyMatch bool
	}{
		{req: "PUT b/k", put: true},
		{req: "PUT b/k?partNumber=2&uploadId=x", part: true},
		{req: "DELETE b/k", del: true},
		{req: "POST b?delete", del: true},
		{req: "POST b/k?uploads"},
		{req: "GET b/k", read: true},
		{req: "HEAD b/k", read: true},
	} {
		r := q(tc.req)
		if r.IsPut() != tc.put || r.IsPart() != tc.part || r.IsDelete() != tc.del || r.IsRead() != tc.read {
			t.Errorf("%s: put %v part %v delete %v read %v", tc.req, r.IsPut(), r.IsPart(), r.IsDelete(), r.IsRead())
		}
	}
}

// A mix injects faults at about its rate, only among matching requests,
// only of the weighted kinds, and the same seed gives the same draws.
func TestMix(t *testing.T) {
	const n = 20000
	m := Mix{Rate: 0.3, Weights: map[Action]float64{SlowDown: 1, Conflict: 3}, Seed: 7,
		Match: func(r Request) bool { return r.Method == http.MethodPut }}
	rule := m.Rule()
	counts := map[Action]int{}
	for range n {
		counts[rule(Request{Method: http.MethodPut})]++
		if a := rule(Request{Method: http.MethodGet}); a != Pass {
			t.Fatalf("unmatched request got %s", a)
		}
	}
	faults := counts[SlowDown] + counts[Conflict]
	if len(counts) != 3 || faults+counts[Pass] != n {
		t.Fatalf("counts %v: want only pass, slowdown and conflict", counts)
	}
	if rate := float64(faults) / n; math.Abs(rate-0.3) > 0.03 {
		t.Errorf("fault rate %.3f, want about 0.3", rate)
	}
	if ratio := float64(counts[Conflict]) / float64(counts[SlowDown]); ratio < 2.4 || ratio > 3.6 {
		t.Errorf("conflict/slowdown = %.2f, want about 3", ratio)
	}
	a, b := m.Rule(), m.Rule()
	for i := range 1000 {
		if x, y := a(Request{Method: http.MethodPut}), b(Request{Method: http.MethodPut}); x != y {
			t.Fatalf("draw %d differs with the same seed: %s vs %s", i, x, y)
		}
	}
	if (Mix{}).Rule()(Request{}) != Pass {
		t.Fatal("the zero Mix must pass everything")
	}
	all := Mix{Rate: 1, Seed: 1}.Rule()
	seen := map[Action]bool{}
	for range 2000 {
		seen[all(Request{})] = true
	}
	for _, f := range Faults {
		if !seen[f] {
			t.Errorf("default weights never drew %s", f)
		}
	}
	if seen[Pass] {
		t.Error("rate 1 passed a request")
	}
}

// A delay range waits within its bounds (checked loosely: only the lower
// bound, never an upper bound on time).
func TestDelayRange(t *testing.T) {
	_, p := newBackend(t)
	p.SetDelayRange(20*time.Millisecond, 30*time.Millisecond)
	p.SetRule(func(Request) Action { return Delay })
	start := time.Now()
	if status, _, err := do(t, http.MethodPut, p.URL+"/b/k", "x"); err != nil || status != 200 {
		t.Fatalf("%d %v", status, err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("delayed %s, want at least 20ms", d)
	}
	if !p.WaitIdle(5 * time.Second) {
		t.Fatalf("in flight %d long after the reply", p.InFlight())
	}
}

// A delayed request whose client goes away before the delay ends never
// reaches the server (a test that holds a PUT and then interrupts its
// client relies on that to say "not applied"), and the proxy lets it go at
// once rather than at the end of the delay.
func TestDelayDroppedWhenClientLeaves(t *testing.T) {
	for _, size := range []int{5, 1 << 20} {
		b, p := newBackend(t)
		p.SetDelay(time.Hour)
		arrived := make(chan struct{}, 1)
		p.SetRule(func(r Request) Action {
			if r.IsPut() {
				arrived <- struct{}{}
				return Delay
			}
			return Pass
		})
		cancel, done := putInBackground(t, p.URL+"/b/k", strings.Repeat("x", size))
		<-arrived
		// Let the body reach the proxy before the client hangs up.
		for p.InFlight() == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
		if err := <-done; err == nil {
			t.Fatalf("size %d: the client got an answer to a request it cancelled", size)
		}
		if !p.WaitIdle(10 * time.Second) {
			t.Fatalf("size %d: the held request outlived its client (in flight %d)", size, p.InFlight())
		}
		if n := b.puts.Load(); n != 0 {
			t.Fatalf("size %d: the server received %d PUTs of a client that had left", size, n)
		}
	}
}

// A Late request is held until its hold returns and then applied, even
// though its client had gone meanwhile; the server's answer reaches
// OnApplied.
func TestLateAppliedAfterClientLeft(t *testing.T) {
	b, p := newBackend(t)
	held, release := make(chan struct{}), make(chan struct{})
	p.SetHold(func(Request) {
		close(held)
		<-release
	})
	applied := make(chan int, 1)
	p.SetOnApplied(func(r Request, a Action, status int) { applied <- status })
	p.SetRule(func(r Request) Action {
		if r.IsPut() {
			return Late
		}
		return Pass
	})
	cancel, done := putInBackground(t, p.URL+"/b/k", "late body")
	<-held
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the client got an answer to a request it cancelled")
	}
	if n := b.puts.Load(); n != 0 {
		t.Fatalf("the held request reached the server before its release (%d PUTs)", n)
	}
	close(release)
	if status := <-applied; status != http.StatusOK {
		t.Fatalf("applied with status %d", status)
	}
	if !p.WaitIdle(5 * time.Second) {
		t.Fatal("proxy never became idle")
	}
	if status, body, err := do(t, http.MethodGet, p.URL+"/b/k", ""); err != nil || status != 200 || body != "late body" {
		t.Fatalf("after the late PUT the object reads %d %q %v", status, body, err)
	}
	if p.Count(Late) != 1 {
		t.Fatalf("counts %v", p.Counts())
	}
}

// putInBackground starts a PUT of body to url that the returned cancel
// abandons; done receives the client's error (nil: it got an answer).
func putInBackground(t *testing.T, url, body string) (cancel func(), done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		ch <- err
	}()
	return cancel, ch
}
