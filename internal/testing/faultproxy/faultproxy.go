package faultproxy

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Action is what the proxy does with one request.
type Action int

const (
	Pass         Action = iota // forward normally
	DropReply                  // forward, let the server apply it, then drop the connection without a reply
	Reset                      // drop the connection without forwarding
	SlowDown                   // reply 503 SlowDown without forwarding
	Internal                   // reply 500 InternalError without forwarding
	Conflict                   // reply 409 ConditionalRequestConflict without forwarding
	Delay                      // forward after a delay; never forwarded if the client goes away first
	ReplyThen503               // forward (applied), then reply 503 instead of the real answer
	SlowReply                  // forward (applied), then hold the real answer for the delay before sending it
	Late                       // receive the whole request, hold it (SetHold, else the delay), then forward it even if the client has gone
	Throttle                   // reply 429 Too Many Requests without forwarding (GCS's throttling status)
)

var actionNames = [...]string{"pass", "drop-reply", "reset", "slowdown", "internal", "conflict", "delay", "applied-503", "slow-reply", "late", "throttle"}

func (a Action) String() string { return actionNames[a] }

// Request is what a rule sees of a request.
type Request struct {
	Method string
	Path   string // bucket/key path (path-style addressing)
	Query  url.Values
	Header http.Header
}

// IsPut reports a PUT of an object (not a multipart part).
func (r Request) IsPut() bool { return r.Method == http.MethodPut && !r.IsPart() }

// IsPart reports the upload of one part of a multipart upload (on Azure,
// a Put Block).
func (r Request) IsPart() bool {
	return r.Method == http.MethodPut && (r.Query.Get("partNumber") != "" || r.Query.Get("comp") == "block")
}

// IsDelete reports a DELETE of an object or a multi-object delete (POST
// ?delete; on Azure, a blob batch).
func (r Request) IsDelete() bool {
	return r.Method == http.MethodDelete || (r.Method == http.MethodPost && (r.Query.Has("delete") || r.Query.Get("comp") == "batch"))
}

// IsRead reports a GET or HEAD.
func (r Request) IsRead() bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// Proxy forwards to a target and asks Rule what to do with each request.
type Proxy struct {
	URL    string // the proxy's endpoint, e.g. http://127.0.0.1:PORT
	target *url.URL
	srv    *http.Server
	ln     net.Listener
	rp     *httputil.ReverseProxy

	mu      sync.Mutex
	rule    func(Request) Action
	applied func(Request, Action, int)
	hold    func(Request)
	delay   time.Duration // shortest delay of the Delay action
	delayHi time.Duration // longest (== delay: fixed)

	counts   [len(actionNames)]atomic.Int64
	inFlight atomic.Int64
	azure    atomic.Bool // answer faults as Azure Blob Storage does
}

// SetAzure makes the proxy answer its faults as Azure Blob Storage does
// (an x-ms-error-code header): SlowDown and ReplyThen503 become 503
// ServerBusy, Internal 500 InternalError; Conflict stays a 409.
func (p *Proxy) SetAzure() { p.azure.Store(true) }

// Start starts a proxy in front of target (e.g. the MinIO endpoint).
func Start(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), target: u, ln: ln, delay: 50 * time.Millisecond, delayHi: 50 * time.Millisecond}
	p.rp = httputil.NewSingleHostReverseProxy(u)
	p.rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	p.rp.ErrorLog = log.New(io.Discard, "", 0) // a cancelled client is the point, not news
	p.srv = &http.Server{Handler: p}
	go p.srv.Serve(ln)
	return p, nil
}

// SetRule replaces the rule (nil: pass everything).
func (p *Proxy) SetRule(rule func(Request) Action) {
	p.mu.Lock()
	p.rule = rule
	p.mu.Unlock()
}

// SetOnApplied sets a function called when a request that the proxy
// forwards and then mistreats (DropReply, ReplyThen503, SlowReply, Late)
// has been answered by the server, with the server's status, before the
// client hears anything: the moment the request is known to be applied.
func (p *Proxy) SetOnApplied(f func(r Request, a Action, status int)) {
	p.mu.Lock()
	p.applied = f
	p.mu.Unlock()
}

// SetHold sets a function that holds each Late request (it is called once
// the request's body has arrived, and the request is forwarded when it
// returns) instead of the delay: a test blocks in it to choose the moment a
// request lands, for instance after its client was killed and another
// process has acted. nil: Late waits for the delay.
func (p *Proxy) SetHold(f func(Request)) {
	p.mu.Lock()
	p.hold = f
	p.mu.Unlock()
}

// SetDelay sets the delay of the Delay action.
func (p *Proxy) SetDelay(d time.Duration) { p.SetDelayRange(d, d) }

// SetDelayRange makes the Delay action wait a uniformly random time in
// [lo, hi] (hi < lo is taken as lo).
func (p *Proxy) SetDelayRange(lo, hi time.Duration) {
	p.mu.Lock()
	p.delay, p.delayHi = lo, max(lo, hi)
	p.mu.Unlock()
}

// Count returns how many times an action was taken.
func (p *Proxy) Count(a Action) int64 { return p.counts[a].Load() }

// Injected returns the number of faults injected (every action but Pass).
func (p *Proxy) Injected() int64 {
	var n int64
	for a := range p.counts {
		if Action(a) != Pass {
			n += p.counts[a].Load()
		}
	}
	return n
}

// Requests returns the number of requests seen (every action, Pass included).
func (p *Proxy) Requests() int64 {
	var n int64
	for a := range p.counts {
		n += p.counts[a].Load()
	}
	return n
}

// Counts returns the number of times each action was taken, by name
// ("drop-reply", "slowdown", ...), omitting actions never taken.
func (p *Proxy) Counts() map[string]int64 {
	out := map[string]int64{}
	for a := range p.counts {
		if n := p.counts[a].Load(); n > 0 {
			out[Action(a).String()] = n
		}
	}
	return out
}

// ResetCounts sets every counter to zero.
func (p *Proxy) ResetCounts() {
	for a := range p.counts {
		p.counts[a].Store(0)
	}
}

// InFlight returns the number of requests being handled now.
func (p *Proxy) InFlight() int64 { return p.inFlight.Load() }

// WaitIdle waits until no request is being handled, or until timeout. It
// reports whether the proxy became idle. After a client is killed, its
// requests may still be on their way to the server (a DropReply forwards
// and waits for the answer): waiting for idleness settles them.
func (p *Proxy) WaitIdle(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for p.inFlight.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	p.mu.Lock()
	rule, delay, applied, hold := p.rule, p.delay, p.applied, p.hold
	if p.delayHi > p.delay {
		delay += rand.N(p.delayHi - p.delay + 1)
	}
	p.mu.Unlock()
	act := Pass
	req := Request{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/"), Query: r.URL.Query(), Header: r.Header}
	if g, ok := gcsRequest(r); ok {
		req = g
	}
	if rule != nil {
		act = rule(req)
	}
	forward := func() *recorder {
		rec := &recorder{header: http.Header{}}
		p.rp.ServeHTTP(rec, r)
		if applied != nil {
			applied(req, act, cmp.Or(rec.status, http.StatusOK))
		}
		return rec
	}
	p.counts[act].Add(1)
	switch act {
	case Pass:
		p.rp.ServeHTTP(w, r)
	case Delay:
		// Receive the body first: the server notices a client that hangs
		// up (and cancels the request's context) only once the body is
		// read. A client gone before the delay ends is never forwarded
		// to, as a request lost on the way would not be.
		if !receive(r) {
			return
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		p.rp.ServeHTTP(w, r)
	case SlowDown:
		p.errorReply(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
	case Throttle:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"code":429,"message":"The rate of change requests to the object is too high.","errors":[{"reason":"rateLimitExceeded"}]}}`)
	case Internal:
		p.errorReply(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
	case Conflict:
		p.errorReply(w, http.StatusConflict, "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress against this resource.")
	case Reset:
		io.Copy(io.Discard, r.Body)
		hangUp(w)
	case SlowReply:
		rec := forward()
		time.Sleep(delay)
		reply(w, rec)
	case Late:
		// What the network does to a request it delivers after its sender
		// died: the server applies it, and nobody hears the answer (the
		// client, if still there, does).
		if !receive(r) {
			return // an incomplete request is never applied
		}
		if hold != nil {
			hold(req)
		} else {
			time.Sleep(delay)
		}
		r = r.WithContext(context.WithoutCancel(r.Context()))
		reply(w, forward())
	case DropReply, ReplyThen503:
		// Forward and wait for the server's answer, so the request is applied.
		forward()
		if act == DropReply {
			hangUp(w)
			return
		}
		p.errorReply(w, http.StatusServiceUnavailable, "ServiceUnavailable", "Reduce your request rate.")
	}
}

// errorReply sends an error in S3's form, or in Azure's (SetAzure).
func (p *Proxy) errorReply(w http.ResponseWriter, status int, code, msg string) {
	if p.azure.Load() {
		if status == http.StatusServiceUnavailable {
			code, msg = "ServerBusy", "The server is currently unable to receive requests. Please retry your request."
		}
		w.Header().Set("x-ms-error-code", code)
	}
	s3Error(w, status, code, msg)
}

// receive reads r's whole body into memory, to forward later, and reports
// whether it arrived complete.
func receive(r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// reply sends the server's answer that rec recorded.
func reply(w http.ResponseWriter, rec *recorder) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(cmp.Or(rec.status, http.StatusOK))
	w.Write(rec.body.Bytes())
}

func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // RST, not FIN
			}
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(s int)           { r.status = s }
