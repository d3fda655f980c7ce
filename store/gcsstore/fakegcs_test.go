package gcsstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/gcsstore"
)

// fakeGCS is a test server for what fake-gcs-server cannot show: the
// rewrite API's preconditions as GCS documents them
// (https://cloud.google.com/storage/docs/json_api/v1/objects/rewrite):
// ifGenerationMatch on the destination (0: it must not exist) and
// ifSourceGenerationMatch on the source, either failing with 412 and
// changing nothing. It is a fake beside the real emulator, not an
// emulator: it serves the rewrite, an object's metadata, an empty listing,
// and (status set) one fixed answer to every request.
type fakeGCS struct {
	t  *testing.T
	mu sync.Mutex
	// objects: name -> generation; gen is the last generation handed out.
	objects map[string]int64
	gen     int64
	// status, when set, answers every request with it (and a JSON error).
	status int
	// requests counts requests by method and path; rewrites records the
	// query of every rewrite.
	requests map[string]int
	rewrites []url.Values
	// rewritePaths records the escaped path of every rewrite (its source
	// and destination buckets and objects).
	rewritePaths []string
	// listsMet, when not nil, holds each listing until a second one
	// arrives (then closes it) or a second has passed.
	listsMet chan struct{}
	lists    atomic.Int32
}

func newFakeGCS(t *testing.T) (*fakeGCS, *httptest.Server) {
	f := &fakeGCS{t: t, objects: map[string]int64{}, gen: 1_700_000_000_000_000, requests: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// put creates or replaces an object behind the store's back and returns
// its generation.
func (f *fakeGCS) put(name string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	f.objects[name] = f.gen
	return f.gen
}

func (f *fakeGCS) object(name string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.objects[name]
	return g, ok
}

func (f *fakeGCS) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[key]
}

func (f *fakeGCS) fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"errors":[{"message":%q}]}}`, code, msg, msg)
}

func (f *fakeGCS) resource(bucket, name string, gen int64) map[string]any {
	return map[string]any{"kind": "storage#object", "bucket": bucket, "name": name, "generation": strconv.FormatInt(gen, 10),
		"size": "3", "updated": time.Unix(0, gen*1000).UTC().Format(time.RFC3339Nano)}
}

func (f *fakeGCS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.listsMet != nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/o") {
		if f.lists.Add(1) == 2 {
			close(f.listsMet)
		}
		select {
		case <-f.listsMet:
		case <-time.After(time.Second):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	path := r.URL.Path
	kind := r.Method + " " + path
	if strings.HasPrefix(path, "/upload/") {
		kind = r.Method + " upload"
	}
	f.requests[kind]++
	if f.status != 0 {
		f.fail(w, f.status, http.StatusText(f.status))
		return
	}
	rest, ok := strings.CutPrefix(path, "/storage/v1/b/")
	if !ok {
		f.fail(w, http.StatusNotImplemented, "not in the fake: "+kind)
		return
	}
	bucket, rest, _ := strings.Cut(rest, "/")
	switch {
	case rest == "o" && r.Method == http.MethodGet: // a listing: empty (the bucket exists)
		json.NewEncoder(w).Encode(map[string]any{"kind": "storage#objects"})
	case strings.Contains(rest, "/rewriteTo/") && r.Method == http.MethodPost:
		src, dst, _ := strings.Cut(strings.TrimPrefix(rest, "o/"), "/rewriteTo/b/")
		_, dst, _ = strings.Cut(dst, "/o/")
		q := r.URL.Query()
		f.rewrites = append(f.rewrites, q)
		f.rewritePaths = append(f.rewritePaths, r.URL.EscapedPath())
		sg, ok := f.objects[src]
		if !ok {
			f.fail(w, http.StatusNotFound, "No such object: "+bucket+"/"+src)
			return
		}
		if v := q.Get("ifSourceGenerationMatch"); v != "" && v != strconv.FormatInt(sg, 10) {
			f.fail(w, http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold.")
			return
		}
		dg, exists := f.objects[dst]
		if v := q.Get("ifGenerationMatch"); v != "" {
			want, _ := strconv.ParseInt(v, 10, 64)
			if (want == 0 && exists) || (want != 0 && want != dg) {
				f.fail(w, http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold.")
				return
			}
		}
		f.gen++
		f.objects[dst] = f.gen
		json.NewEncoder(w).Encode(map[string]any{"kind": "storage#rewriteResponse", "totalBytesRewritten": "3", "objectSize": "3",
			"done": true, "resource": f.resource(bucket, dst, f.gen)})
	case strings.HasPrefix(rest, "o/") && r.Method == http.MethodGet:
		name := strings.TrimPrefix(rest, "o/")
		g, ok := f.objects[name]
		if !ok {
			f.fail(w, http.StatusNotFound, "No such object: "+bucket+"/"+name)
			return
		}
		json.NewEncoder(w).Encode(f.resource(bucket, name, g))
	default:
		f.fail(w, http.StatusNotImplemented, "not in the fake: "+kind)
	}
}

// realPathStore is a store on bucket "bkt", root "tbl", of a fake GCS
// server, taking the copy path real GCS takes (AsRealGCS), one attempt a
// request; the fake and the store are closed with the test.
func realPathStore(t *testing.T) (*fakeGCS, *gcsstore.Store) {
	t.Helper()
	f, srv := newFakeGCS(t)
	s, err := gcsstore.New(context.Background(), "bkt", "tbl", gcsstore.Options{Endpoint: srv.URL, RetryMaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	gcsstore.AsRealGCS(s)
	return f, s
}

// TestCopyPreconditionsOnRealPath covers the copy path that runs on real
// GCS (fake-gcs-server's rewrite ignores preconditions, so the emulator
// runs emulatorCopy instead): the rewrite must carry ifGenerationMatch=0
// for IfNoneMatch and ifSourceGenerationMatch for SourceIfMatch, and a 412
// must come back as store.ErrPrecondition with nothing written.
func TestCopyPreconditionsOnRealPath(t *testing.T) {
	t.Parallel()
	f, s := realPathStore(t)
	ctx := context.Background()
	srcGen := f.put("tbl/in/a.parquet")
	src := gcsstore.Generation(srcGen)

	// A fresh destination, the source at the generation read: copied.
	a, err := s.Copy(ctx, "gen/1/a.parquet", "in/a.parquet", store.CopyOptions{IfNoneMatch: true, SourceIfMatch: src})
	if err != nil {
		t.Fatalf("copy to a fresh key: %v", err)
	}
	dstGen, ok := f.object("tbl/gen/1/a.parquet")
	if !ok || a.ETag != gcsstore.Generation(dstGen) {
		t.Fatalf("copy returned version %q; the server holds %d (exists %v)", a.ETag, dstGen, ok)
	}
	if q := f.rewrites[0]; q.Get("ifGenerationMatch") != "0" || q.Get("ifSourceGenerationMatch") != src {
		t.Fatalf("the rewrite carried ifGenerationMatch=%q ifSourceGenerationMatch=%q, want 0 and %s",
			q.Get("ifGenerationMatch"), q.Get("ifSourceGenerationMatch"), src)
	}

	// The destination exists: refused, the destination unchanged.
	_, err = s.Copy(ctx, "gen/1/a.parquet", "in/a.parquet", store.CopyOptions{IfNoneMatch: true, SourceIfMatch: src})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy over an existing key with IfNoneMatch: %v, want ErrPrecondition", err)
	}
	if g, _ := f.object("tbl/gen/1/a.parquet"); g != dstGen {
		t.Fatalf("a refused copy replaced the destination: generation %d, was %d", g, dstGen)
	}

	// The source was replaced after it was read: refused, nothing written.
	f.put("tbl/in/a.parquet")
	_, err = s.Copy(ctx, "gen/2/a.parquet", "in/a.parquet", store.CopyOptions{IfNoneMatch: true, SourceIfMatch: src})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy of a replaced source: %v, want ErrPrecondition", err)
	}
	if _, ok := f.object("tbl/gen/2/a.parquet"); ok {
		t.Fatal("a copy refused for its source's generation wrote the destination")
	}

	// No preconditions: none sent, and the copy replaces.
	if _, err := s.Copy(ctx, "gen/1/a.parquet", "in/a.parquet", store.CopyOptions{}); err != nil {
		t.Fatalf("unconditional copy: %v", err)
	}
	if q := f.rewrites[len(f.rewrites)-1]; q.Has("ifGenerationMatch") || q.Has("ifSourceGenerationMatch") {
		t.Fatalf("an unconditional copy sent preconditions: %v", q)
	}

	// A missing source: not found (not a precondition).
	_, err = s.Copy(ctx, "gen/3/a.parquet", "in/missing.parquet", store.CopyOptions{IfNoneMatch: true})
	if !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy of a missing source: %v, want ErrNotFound", err)
	}
}

// TestCopyFromOnRealPath: CopyFrom on the path real GCS takes is one
// rewrite from the other bucket's object to this store's key, carrying
// both preconditions; a source replaced since it was read is
// store.ErrPrecondition naming the source, with nothing written. (The
// fake keeps one namespace of objects for every bucket.)
func TestCopyFromOnRealPath(t *testing.T) {
	t.Parallel()
	f, s := realPathStore(t)
	ctx := context.Background()
	src := gcsstore.Generation(f.put("out/dt=1/a.parquet"))
	if _, err := s.CopyFrom(ctx, "gen/1/a.parquet", "staging", "out/dt=1/a.parquet", store.CopyOptions{IfNoneMatch: true, SourceIfMatch: src}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.object("tbl/gen/1/a.parquet"); !ok || len(f.rewritePaths) != 1 {
		t.Fatalf("copy not written (%d rewrites)", len(f.rewritePaths))
	}
	if p, want := f.rewritePaths[0], "/storage/v1/b/staging/o/out%2Fdt%3D1%2Fa.parquet/rewriteTo/b/bkt/o/tbl%2Fgen%2F1%2Fa.parquet"; p != want {
		t.Fatalf("rewrite %s, want %s", p, want)
	}
	if q := f.rewrites[0]; q.Get("ifGenerationMatch") != "0" || q.Get("ifSourceGenerationMatch") != src {
		t.Fatalf("the rewrite carried ifGenerationMatch=%q ifSourceGenerationMatch=%q, want 0 and %s",
			q.Get("ifGenerationMatch"), q.Get("ifSourceGenerationMatch"), src)
	}
	f.put("out/dt=1/a.parquet")
	_, err := s.CopyFrom(ctx, "gen/2/a.parquet", "staging", "out/dt=1/a.parquet", store.CopyOptions{IfNoneMatch: true, SourceIfMatch: src})
	if !errors.Is(err, store.ErrPrecondition) || !strings.Contains(err.Error(), "gs://staging/out/dt=1/a.parquet") {
		t.Fatalf("copy of a replaced source: %v, want ErrPrecondition naming it", err)
	}
	if _, ok := f.object("tbl/gen/2/a.parquet"); ok {
		t.Fatal("a copy refused for its source's generation wrote the destination")
	}
}

// Regression (found by TestOutcomeUnknownResolvedByRerun on
// fake-gcs-server): the SDK bounds every call's attempts by
// WithMaxAttempts except an upload's, which it retried until the context
// ended: with RetryMaxAttempts 1 and a store answering 503, a Put (the
// pointer swap) never returned. Each upload request now makes at most
// RetryMaxAttempts attempts.
func TestUploadAttemptsBounded(t *testing.T) {
	t.Parallel()
	for _, attempts := range []int{1, 2} {
		for _, how := range []string{"put", "writer"} {
			t.Run(fmt.Sprintf("%s/%d", how, attempts), func(t *testing.T) {
				t.Parallel()
				f, srv := newFakeGCS(t)
				f.status = http.StatusServiceUnavailable
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				s, err := gcsstore.New(ctx, "bkt", "tbl", gcsstore.Options{Endpoint: srv.URL, RetryMaxAttempts: attempts, RetryMaxBackoff: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				opts := store.PutOptions{IfNoneMatch: true}
				switch how {
				case "put":
					_, err = s.Put(ctx, "p/pointer.json", []byte("{}"), opts)
				case "writer":
					var w store.Writer
					w, err = s.NewWriter(ctx, "p/data.parquet", store.WriterOptions{PutOptions: opts})
					if err == nil {
						if _, err = w.Write([]byte("abc")); err == nil {
							_, err = w.Commit()
						}
					}
				}
				if ctx.Err() != nil {
					t.Fatalf("the upload was still retrying after 30s (%d requests)", f.count("POST upload"))
				}
				if !errors.Is(err, store.ErrTransient) {
					t.Fatalf("upload against 503s: %v, want ErrTransient", err)
				}
				if n := f.count("POST upload"); n != attempts {
					t.Fatalf("%d upload requests, want %d (RetryMaxAttempts)", n, attempts)
				}
			})
		}
	}
}

// Regression (found by TestRequestsPerCommitByStore on fake-gcs-server):
// a commit reads its pointer and table.json at once, and on a new store
// both miss; each miss probed the bucket with its own listing (GCS answers
// a missing bucket's reads like a missing object's), two listings where
// one tells. Misses at once now share one probe.
func TestConcurrentMissesProbeOnce(t *testing.T) {
	t.Parallel()
	f, srv := newFakeGCS(t)
	f.listsMet = make(chan struct{})
	ctx := context.Background()
	s, err := gcsstore.New(ctx, "bkt", "tbl", gcsstore.Options{Endpoint: srv.URL, RetryMaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for _, key := range []string{"p/pointer.json", "table.json", "x/other.json"} {
		wg.Go(func() {
			if _, _, err := store.ReadAll(ctx, s, key); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrBucketNotFound) {
				t.Errorf("read of missing %s: %v, want ErrNotFound (the bucket exists)", key, err)
			}
		})
	}
	wg.Wait()
	if n := f.count("GET /storage/v1/b/bkt/o"); n != 1 {
		t.Fatalf("%d listings probed the bucket for three misses at once, want 1", n)
	}
	// Once the bucket was seen, a miss costs no listing.
	if _, _, err := store.ReadAll(ctx, s, "later.json"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if n := f.count("GET /storage/v1/b/bkt/o"); n != 1 {
		t.Fatalf("a miss after the bucket was seen listed again (%d listings)", n)
	}
}
