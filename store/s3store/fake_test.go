package s3store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/pswap/pswap/store"
)

func staticCreds(id, secret string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(id, secret, "")
}

// request is what the fake S3 server saw of one request.
type request struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         []byte
}

// kind names the S3 operation of a request to the fake.
func (r request) kind() string {
	q := r.Query
	switch {
	case r.Method == http.MethodPost && q.Has("uploads"):
		return "CreateMultipartUpload"
	case r.Method == http.MethodPut && q.Has("partNumber"):
		return "UploadPart"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "CompleteMultipartUpload"
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		return "AbortMultipartUpload"
	case r.Method == http.MethodPost && q.Has("delete"):
		return "DeleteObjects"
	case r.Method == http.MethodGet && q.Has("uploads"):
		return "ListMultipartUploads"
	case r.Method == http.MethodGet && q.Get("list-type") == "2":
		return "ListObjectsV2"
	case r.Method == http.MethodHead && strings.Count(strings.Trim(r.Path, "/"), "/") == 0:
		return "HeadBucket"
	case r.Method == http.MethodPut:
		return "PutObject"
	case r.Method == http.MethodGet:
		return "GetObject"
	case r.Method == http.MethodHead:
		return "HeadObject"
	case r.Method == http.MethodDelete:
		return "DeleteObject"
	}
	return "unknown"
}

// fakeS3 is a scripted S3 endpoint: handle answers each request, and every
// request is recorded. Handlers default to plausible success responses.
type fakeS3 struct {
	mu       sync.Mutex
	reqs     []request
	handle   func(w http.ResponseWriter, r request) bool // true: handled
	inflight atomic.Int32
	maxParts atomic.Int32 // most UploadParts in flight at once
	date     string       // Date header to send, if set
	srv      *httptest.Server
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r request) bool) *fakeS3 {
	t.Helper()
	f := &fakeS3{handle: handle}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeS3) store(t *testing.T, opts Options) *Store {
	t.Helper()
	opts.Endpoint = f.srv.URL
	opts.Region = "us-east-1"
	if opts.Credentials == nil {
		opts.Credentials = staticCreds("AKIDFAKE", "fake-secret-value")
	}
	if opts.RetryMaxAttempts == 0 {
		opts.RetryMaxAttempts = 1
	}
	s, err := New(context.Background(), "bkt", "root/pre", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fakeS3) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	r := request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.Query(), Header: hr.Header.Clone(), Body: body}
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.mu.Unlock()
	if f.date != "" {
		w.Header().Set("Date", f.date)
	}
	if r.kind() == "UploadPart" {
		n := f.inflight.Add(1)
		defer f.inflight.Add(-1)
		for {
			m := f.maxParts.Load()
			if n <= m || f.maxParts.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond) // let uploads overlap
	}
	if f.handle != nil && f.handle(w, r) {
		return
	}
	defaultResponse(w, r)
}

func defaultResponse(w http.ResponseWriter, r request) {
	switch r.kind() {
	case "CreateMultipartUpload":
		fmt.Fprint(w, `<InitiateMultipartUploadResult><Bucket>bkt</Bucket><Key>k</Key><UploadId>upload-1</UploadId></InitiateMultipartUploadResult>`)
	case "UploadPart":
		if c := r.Header.Get("X-Amz-Checksum-Crc32"); c != "" {
			w.Header().Set("X-Amz-Checksum-Crc32", c)
		}
		w.Header().Set("ETag", `"part-`+r.Query.Get("partNumber")+`"`)
	case "CompleteMultipartUpload":
		fmt.Fprint(w, `<CompleteMultipartUploadResult><Bucket>bkt</Bucket><Key>k</Key><ETag>"final-etag"</ETag></CompleteMultipartUploadResult>`)
	case "AbortMultipartUpload", "DeleteObject":
		w.WriteHeader(http.StatusNoContent)
	case "PutObject":
		w.Header().Set("ETag", `"put-etag"`)
	case "DeleteObjects":
		fmt.Fprint(w, `<DeleteResult></DeleteResult>`)
	case "HeadBucket":
	default:
		s3Error(w, http.StatusNotImplemented, "NotImplemented")
	}
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>fake %s</Message><RequestId>r1</RequestId></Error>`, code, code)
}

func (f *fakeS3) requests(kind string) []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []request
	for _, r := range f.reqs {
		if kind == "" || r.kind() == kind {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeS3) kinds() []string {
	var out []string
	for _, r := range f.requests("") {
		out = append(out, r.kind())
	}
	return out
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestWriterSmallObjectIsOnePut(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1000, MinPartSize} { // exactly one part still fits
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			f := newFake(t, nil)
			s := f.store(t, Options{})
			w, err := s.NewWriter(context.Background(), "gen/a.bin", store.WriterOptions{
				PartSize: MinPartSize, PutOptions: store.PutOptions{IfNoneMatch: true, ContentType: "application/octet-stream"},
			})
			if err != nil {
				t.Fatal(err)
			}
			data := randomBytes(size)
			if n, err := w.Write(data); err != nil || n != size {
				t.Fatalf("Write = %d, %v", n, err)
			}
			if got := f.kinds(); len(got) != 0 {
				t.Fatalf("requests before Commit: %v", got)
			}
			a, err := w.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if got := f.kinds(); len(got) != 1 || got[0] != "PutObject" {
				t.Fatalf("requests = %v, want one PutObject", got)
			}
			put := f.requests("PutObject")[0]
			if put.Path != "/bkt/root/pre/gen/a.bin" {
				t.Errorf("path %q: want path-style /bkt/root/pre/gen/a.bin", put.Path)
			}
			if put.Header.Get("If-None-Match") != "*" || put.Header.Get("If-Match") != "" {
				t.Errorf("conditions: If-None-Match %q If-Match %q", put.Header.Get("If-None-Match"), put.Header.Get("If-Match"))
			}
			if put.Header.Get("Content-Type") != "application/octet-stream" {
				t.Errorf("Content-Type %q", put.Header.Get("Content-Type"))
			}
			if !bytes.Equal(put.Body, data) {
				t.Errorf("body: %d bytes sent, want %d", len(put.Body), size)
			}
			if a.ETag != `"put-etag"` || a.Size != int64(size) || a.Key != "gen/a.bin" {
				t.Errorf("attrs %+v", a)
			}
		})
	}
}

type completeBody struct {
	Parts []struct {
		PartNumber int
		ETag       string
	} `xml:"Part"`
}

func TestWriterMultipart(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	s := f.store(t, Options{})
	const conc = 2
	size := 3*MinPartSize + MinPartSize/2
	data := randomBytes(size)
	w, err := s.NewWriter(context.Background(), "gen/big.bin", store.WriterOptions{
		PartSize: MinPartSize, Concurrency: conc, PutOptions: store.PutOptions{IfMatch: `"abc"`},
	})
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < size; off += 777777 {
		if _, err := w.Write(data[off:min(off+777777, size)]); err != nil {
			t.Fatal(err)
		}
	}
	a, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if a.ETag != `"final-etag"` || a.Size != int64(size) {
		t.Errorf("attrs %+v", a)
	}
	if n := len(f.requests("CreateMultipartUpload")); n != 1 {
		t.Fatalf("%d CreateMultipartUpload", n)
	}
	if n := len(f.requests("PutObject")); n != 0 {
		t.Fatalf("%d PutObject for a multipart object", n)
	}
	parts := f.requests("UploadPart")
	if len(parts) != 4 {
		t.Fatalf("%d parts, want 4", len(parts))
	}
	got := make([][]byte, 5)
	for _, p := range parts {
		n, _ := strconv.Atoi(p.Query.Get("partNumber"))
		if n < 1 || n > 4 || got[n] != nil {
			t.Fatalf("bad or repeated part number %q", p.Query.Get("partNumber"))
		}
		if p.Query.Get("uploadId") != "upload-1" {
			t.Errorf("part %d upload id %q", n, p.Query.Get("uploadId"))
		}
		got[n] = p.Body
	}
	if joined := bytes.Join(got[1:], nil); !bytes.Equal(joined, data) {
		t.Fatalf("parts joined differ from the data (%d vs %d bytes)", len(joined), len(data))
	}
	if m := f.maxParts.Load(); m > conc {
		t.Errorf("%d parts in flight at once, Concurrency is %d", m, conc)
	}
	comp := f.requests("CompleteMultipartUpload")
	if len(comp) != 1 {
		t.Fatalf("%d CompleteMultipartUpload", len(comp))
	}
	if h := comp[0].Header.Get("If-Match"); h != `"abc"` {
		t.Errorf("Complete If-Match = %q, want the ETag exactly as given", h)
	}
	var cb completeBody
	if err := xml.Unmarshal(comp[0].Body, &cb); err != nil {
		t.Fatal(err)
	}
	for i, p := range cb.Parts {
		if p.PartNumber != i+1 || p.ETag != fmt.Sprintf(`"part-%d"`, i+1) {
			t.Errorf("complete part %d = %+v", i, p)
		}
	}
	if len(f.requests("AbortMultipartUpload")) != 0 {
		t.Error("a committed upload was aborted")
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Commit succeeded")
	}
	if _, err := w.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
	if len(f.requests("AbortMultipartUpload")) != 0 {
		t.Error("Abort after Commit sent an abort")
	}
}

func TestWriterFailuresAbortTheUpload(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handle  func(w http.ResponseWriter, r request) bool
		want    error
		compete bool // whether CompleteMultipartUpload is reached
	}{
		{"part fails", func(w http.ResponseWriter, r request) bool {
			if r.kind() == "UploadPart" && r.Query.Get("partNumber") == "2" {
				s3Error(w, 500, "InternalError")
				return true
			}
			return false
		}, store.ErrTransient, false},
		{"complete precondition", func(w http.ResponseWriter, r request) bool {
			if r.kind() == "CompleteMultipartUpload" {
				s3Error(w, 412, "PreconditionFailed")
				return true
			}
			return false
		}, store.ErrPrecondition, true},
		{"complete conflict", func(w http.ResponseWriter, r request) bool {
			if r.kind() == "CompleteMultipartUpload" {
				s3Error(w, 409, "ConditionalRequestConflict")
				return true
			}
			return false
		}, store.ErrTransient, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.handle)
			s := f.store(t, Options{})
			w, err := s.NewWriter(context.Background(), "k", store.WriterOptions{PartSize: MinPartSize, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			var werr error
			for range 4 {
				if _, werr = w.Write(randomBytes(MinPartSize)); werr != nil {
					break
				}
			}
			_, err = w.Commit()
			if !errors.Is(err, tc.want) {
				t.Fatalf("Commit: got %v, want %v", err, tc.want)
			}
			if werr != nil && !errors.Is(werr, tc.want) {
				t.Fatalf("Write: got %v, want %v", werr, tc.want)
			}
			aborts := f.requests("AbortMultipartUpload")
			if len(aborts) == 0 || aborts[0].Query.Get("uploadId") != "upload-1" {
				t.Fatalf("upload not aborted: requests %v", f.kinds())
			}
			if got := len(f.requests("CompleteMultipartUpload")) > 0; got != tc.compete {
				t.Errorf("Complete reached = %v, want %v", got, tc.compete)
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after a failed Commit: %v", err)
			}
		})
	}
}

func TestWriterContextCancelAborts(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	s := f.store(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	w, err := s.NewWriter(ctx, "k", store.WriterOptions{PartSize: MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(MinPartSize + 1)); err != nil {
		t.Fatal(err)
	}
	// The upload is created in the background: once its first part is on
	// the way, it exists and the writer knows its id.
	deadline := time.Now().Add(10 * time.Second)
	for len(f.requests("UploadPart")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no part uploaded: requests %v", f.kinds())
		}
		time.Sleep(time.Millisecond)
	}
	cancel() // and never call Abort: the writer must clean up by itself
	for len(f.requests("AbortMultipartUpload")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no abort after cancel: requests %v", f.kinds())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := w.Commit(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit after cancel: %v, want context.Canceled", err)
	}
	if len(f.requests("CompleteMultipartUpload")) != 0 {
		t.Fatal("a cancelled write completed")
	}
}

func TestWriterAbortBeforeAnyPart(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	s := f.store(t, Options{})
	w, err := s.NewWriter(context.Background(), "k", store.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := f.kinds(); len(got) != 0 {
		t.Fatalf("an abort of a small write made requests %v", got)
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
}

func TestChecksumModes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         Options
		env          string
		whenRequired bool
	}{
		{"default", Options{}, "", false},
		{"option", Options{ChecksumWhenRequired: true}, "", true},
		{"env", Options{}, "when_required", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", tc.env)
			t.Setenv("AWS_RESPONSE_CHECKSUM_VALIDATION", tc.env)
			f := newFake(t, nil)
			s := f.store(t, tc.opts)
			if s.whenRequired != tc.whenRequired {
				t.Fatalf("whenRequired = %v, want %v", s.whenRequired, tc.whenRequired)
			}
			ctx := context.Background()
			if _, err := s.Put(ctx, "small", []byte("data"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			w, _ := s.NewWriter(ctx, "big", store.WriterOptions{PartSize: MinPartSize})
			w.Write(randomBytes(MinPartSize + 10))
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			for _, r := range append(f.requests("PutObject"), f.requests("UploadPart")...) {
				crc := r.Header.Get("X-Amz-Checksum-Crc32")
				md5 := r.Header.Get("Content-Md5")
				if tc.whenRequired && (crc != "" || md5 == "") {
					t.Errorf("%s in when_required mode: crc32 %q, Content-MD5 %q; want only Content-MD5", r.kind(), crc, md5)
				}
				if !tc.whenRequired && crc == "" {
					t.Errorf("%s in default mode has no CRC32 checksum", r.kind())
				}
			}
			create := f.requests("CreateMultipartUpload")[0]
			if alg := create.Header.Get("X-Amz-Checksum-Algorithm"); (alg != "") == tc.whenRequired {
				t.Errorf("CreateMultipartUpload checksum algorithm %q in when_required=%v", alg, tc.whenRequired)
			}
		})
	}
}

func TestClockUsesServerDate(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	f.date = "Sat, 03 Feb 2001 04:05:06 GMT"
	s := f.store(t, Options{})
	want := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	ctx := context.Background()
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if now.Before(want) || now.After(want.Add(time.Minute)) {
		t.Fatalf("Now = %v, want the server's %v plus a little", now, want)
	}
	if got := f.kinds(); len(got) != 1 || got[0] != "HeadBucket" {
		t.Fatalf("first Now made %v, want one HeadBucket", got)
	}
	// A recent response is reused: no new request.
	if _, err := s.Now(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(f.kinds()); n != 1 {
		t.Fatalf("second Now made a request (%d in all)", n)
	}
	// Any response, an error response too, refreshes the clock.
	f.date = "Sun, 04 Mar 2035 00:00:00 GMT"
	if _, err := s.Stat(ctx, "missing"); err == nil {
		t.Fatal("Stat of a missing object succeeded on the fake")
	}
	now, _ = s.Now(ctx)
	if later := time.Date(2035, 3, 4, 0, 0, 0, 0, time.UTC); now.Before(later) {
		t.Fatalf("Now = %v after a response dated %v", now, later)
	}
}

func TestGetTruncatedBodyIsTransient(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(w http.ResponseWriter, r request) bool {
		if r.kind() != "GetObject" {
			return false
		}
		w.Header().Set("Content-Length", "100")
		w.Header().Set("ETag", `"e"`)
		w.WriteHeader(200)
		w.Write(make([]byte, 50))
		return true
	})
	s := f.store(t, Options{})
	rc, a, err := s.Get(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if a.Size != 100 || a.ETag != `"e"` {
		t.Errorf("attrs %+v", a)
	}
	_, err = io.ReadAll(rc)
	if !errors.Is(err, store.ErrTransient) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated read: %v, want ErrTransient wrapping io.ErrUnexpectedEOF", err)
	}
	if !strings.Contains(err.Error(), "s3://bkt/root/pre/k") {
		t.Errorf("read error %q does not name the object", err)
	}
}

func TestErrorResponsesMapped(t *testing.T) {
	t.Parallel()
	codes := map[string]struct {
		status int
		code   string
	}{
		"denied": {403, "SignatureDoesNotMatch"},
		"nobkt":  {404, "NoSuchBucket"},
		"busy":   {503, "SlowDown"},
		"stale":  {412, "PreconditionFailed"},
		"gone":   {404, "NoSuchKey"},
	}
	f := newFake(t, func(w http.ResponseWriter, r request) bool {
		key := strings.TrimPrefix(r.Path, "/bkt/root/pre/")
		if c, ok := codes[key]; ok {
			s3Error(w, c.status, c.code)
			return true
		}
		return false
	})
	s := f.store(t, Options{})
	ctx := context.Background()
	put := func(key string, opts store.PutOptions) error {
		_, err := s.Put(ctx, key, []byte("x"), opts)
		return err
	}
	for _, tc := range []struct {
		key  string
		err  error
		want []error
	}{
		{"denied", put("denied", store.PutOptions{}), []error{store.ErrAccessDenied}},
		{"nobkt", put("nobkt", store.PutOptions{}), []error{store.ErrBucketNotFound}},
		{"busy", put("busy", store.PutOptions{}), []error{store.ErrTransient}},
		{"stale", put("stale", store.PutOptions{IfMatch: `"v1"`}), []error{store.ErrPrecondition}},
		{"gone", put("gone", store.PutOptions{IfMatch: `"v1"`}), []error{store.ErrPrecondition, store.ErrNotFound}},
	} {
		for _, w := range tc.want {
			if !errors.Is(tc.err, w) {
				t.Errorf("%s: %v; want it to match %v", tc.key, tc.err, w)
			}
		}
		if tc.err != nil && strings.Contains(tc.err.Error(), "fake-secret-value") {
			t.Errorf("%s: error contains the secret: %v", tc.key, tc.err)
		}
	}
	if r := f.requests("PutObject"); len(r) == 0 || r[len(r)-1].Header.Get("If-Match") != `"v1"` {
		t.Error("If-Match not sent exactly as given")
	}
}

func TestDeleteMany(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(w http.ResponseWriter, r request) bool {
		if r.kind() != "DeleteObjects" {
			return false
		}
		if bytes.Contains(r.Body, []byte("<Key>root/pre/k0007</Key>")) {
			fmt.Fprint(w, `<DeleteResult><Error><Key>root/pre/k0007</Key><Code>AccessDenied</Code><Message>no</Message></Error></DeleteResult>`)
			return true
		}
		return false
	})
	s := f.store(t, Options{})
	keys := make([]string, 1001)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%04d", i)
	}
	err := s.DeleteMany(context.Background(), keys)
	if !errors.Is(err, store.ErrAccessDenied) || !strings.Contains(err.Error(), "s3://bkt/root/pre/k0007") {
		t.Fatalf("DeleteMany = %v, want ErrAccessDenied naming k0007", err)
	}
	reqs := f.requests("DeleteObjects")
	if len(reqs) != 2 {
		t.Fatalf("%d DeleteObjects requests for 1001 keys, want 2", len(reqs))
	}
	if n := bytes.Count(reqs[0].Body, []byte("<Key>")); n != 1000 {
		t.Errorf("first batch has %d keys", n)
	}
	if err := s.DeleteMany(context.Background(), []string{"ok", "../bad"}); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("DeleteMany with a bad key: %v", err)
	}
	if n := len(f.requests("DeleteObjects")); n != 2 {
		t.Errorf("a batch with an invalid key was sent (%d requests)", n)
	}
}

func TestListUploads(t *testing.T) {
	t.Parallel()
	const upload = `<Upload><Key>%s</Key><UploadId>%s</UploadId><Initiated>2026-01-02T03:04:0%d.000Z</Initiated></Upload>`
	all := [][2]string{{"root/pre/gen/a", "u1"}, {"root/pre/gen/b", "u2"}, {"root/pre/other/c", "u3"}, {"elsewhere/gen/d", "u4"}}
	respond := func(w http.ResponseWriter, prefix string, exactOnly bool) {
		fmt.Fprint(w, `<ListMultipartUploadsResult><Bucket>bkt</Bucket><IsTruncated>false</IsTruncated>`)
		for i, u := range all {
			match := strings.HasPrefix(u[0], prefix)
			if exactOnly && prefix != "" {
				match = u[0] == prefix
			}
			if match {
				fmt.Fprintf(w, upload, u[0], u[1], i)
			}
		}
		fmt.Fprint(w, `</ListMultipartUploadsResult>`)
	}
	for _, tc := range []struct {
		name      string
		exactOnly bool // MinIO: only "" or an exact key work as a prefix
		requests  int
	}{{"aws", false, 1}, {"minio", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r request) bool {
				if r.kind() != "ListMultipartUploads" {
					return false
				}
				respond(w, r.Query.Get("prefix"), tc.exactOnly)
				return true
			})
			s := f.store(t, Options{})
			var got []store.Upload
			for u, err := range s.ListUploads(context.Background(), "gen/") {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, u)
			}
			if len(got) != 2 || got[0].Key != "gen/a" || got[0].ID != "u1" || got[1].Key != "gen/b" ||
				!got[0].Initiated.Equal(time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)) {
				t.Fatalf("uploads %+v", got)
			}
			if n := len(f.requests("ListMultipartUploads")); n != tc.requests {
				t.Errorf("%d list requests, want %d", n, tc.requests)
			}
			if err := s.AbortUpload(context.Background(), got[0]); err != nil {
				t.Fatal(err)
			}
			a := f.requests("AbortMultipartUpload")
			if len(a) != 1 || a[0].Path != "/bkt/root/pre/gen/a" || a[0].Query.Get("uploadId") != "u1" {
				t.Fatalf("abort request %+v", a)
			}
		})
	}
}

// TestWriterCreatesUploadInBackground: the caller goes on filling parts
// while the multipart upload is being created, and the parts wait for it.
func TestWriterCreatesUploadInBackground(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r request) bool {
		if r.kind() == "CreateMultipartUpload" {
			<-release
		}
		return false
	})
	s := f.store(t, Options{})
	w, err := s.NewWriter(context.Background(), "k", store.WriterOptions{PartSize: MinPartSize, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(2*MinPartSize + 10)
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Write(data)
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Write of two parts and some waited for CreateMultipartUpload")
	}
	if n := len(f.requests("UploadPart")); n != 0 {
		t.Fatalf("%d parts sent before the upload existed", n)
	}
	close(release)
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := f.requests("UploadPart"); len(got) != 3 {
		t.Fatalf("%d parts uploaded, want 3", len(got))
	}
	if len(f.requests("CompleteMultipartUpload")) != 1 {
		t.Fatal("not completed")
	}
}

// TestWriterCreateFailure: a multipart upload that cannot be created fails
// the write (at the next Write or at Commit) with the store's error, and
// nothing is uploaded or completed.
func TestWriterCreateFailure(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(w http.ResponseWriter, r request) bool {
		if r.kind() == "CreateMultipartUpload" {
			s3Error(w, 403, "AccessDenied")
			return true
		}
		return false
	})
	s := f.store(t, Options{})
	w, err := s.NewWriter(context.Background(), "k", store.WriterOptions{PartSize: MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	_, werr := w.Write(randomBytes(MinPartSize + 10))
	_, cerr := w.Commit()
	if err := errors.Join(werr, cerr); !errors.Is(err, store.ErrAccessDenied) {
		t.Fatalf("write %v, commit %v: want ErrAccessDenied", werr, cerr)
	}
	for _, k := range []string{"UploadPart", "CompleteMultipartUpload", "PutObject"} {
		if n := len(f.requests(k)); n != 0 {
			t.Errorf("%d %s after a failed creation", n, k)
		}
	}
}

// heldCreateWrite starts a write of one part and a byte on a fake that
// holds the CreateMultipartUpload until release is closed, and returns once
// that request has reached the fake, with the write's cancel.
func heldCreateWrite(t *testing.T) (f *fakeS3, w store.Writer, cancel context.CancelFunc, release chan struct{}) {
	t.Helper()
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f = newFake(t, func(w http.ResponseWriter, r request) bool {
		if r.kind() == "CreateMultipartUpload" {
			once.Do(func() { close(arrived) })
			<-release
		}
		return false
	})
	s := f.store(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := s.NewWriter(ctx, "k", store.WriterOptions{PartSize: MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(MinPartSize + 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("no CreateMultipartUpload")
	}
	return f, w, cancel, release
}

// TestWriterCancelDuringCreateAborts: a write cancelled while its
// multipart upload is being created leaves no upload behind: the creation
// is not cut off (the server may already have made the upload), and the
// upload it made is aborted.
func TestWriterCancelDuringCreateAborts(t *testing.T) {
	t.Parallel()
	f, w, cancel, release := heldCreateWrite(t)
	cancel() // while the server is making the upload
	time.Sleep(50 * time.Millisecond)
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for len(f.requests("AbortMultipartUpload")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the upload created during the cancellation was never aborted: requests %v", f.kinds())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := w.Commit(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit after cancel: %v, want context.Canceled", err)
	}
	if n := len(f.requests("CompleteMultipartUpload")); n != 0 {
		t.Fatalf("%d completions of a cancelled write", n)
	}
}

// TestWriterCancelDuringStuckCreate: when the store does not answer the
// creation, a cancelled write still ends (the creation's grace runs out)
// with the cancellation.
func TestWriterCancelDuringStuckCreate(t *testing.T) {
	t.Parallel()
	_, w, cancel, release := heldCreateWrite(t)
	defer close(release)
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := w.Commit()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Commit: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled write waits for a creation the store never answers")
	}
}
