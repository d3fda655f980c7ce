package pswap_test

import (
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/swap"
)

// The GCS (fake-gcs-server) and Azure (Azurite) variants of the tests of
// objects already in the store as inputs (TestCommitObjectsServerSide,
// TestAuditPartitionedFromS3).

// cloudWire counts a GCS or Azure store's requests on the wire: server-side
// copies, and uploads of data objects (which a server-side commit never
// sends). onCopy, when set, runs before each copy request is sent. Every
// request whose path has the segment deny, when set, is answered 403
// (credentials that cannot read that bucket or container), unsent.
type cloudWire struct {
	mu      sync.Mutex
	copies  int
	uploads []string
	onCopy  func()
	deny    string
	inner   http.RoundTripper
}

func (w *cloudWire) RoundTrip(r *http.Request) (*http.Response, error) {
	w.note(r)
	w.mu.Lock()
	deny := w.deny
	w.mu.Unlock()
	if deny != "" && slices.Contains(strings.Split(r.URL.Path, "/"), deny) {
		body := `{"error":{"code":403,"message":"permission denied"}}`
		return &http.Response{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}, "X-Ms-Error-Code": {"AuthorizationPermissionMismatch"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	}
	return w.inner.RoundTrip(r)
}

// Do is the Azure SDK's transporter.
func (w *cloudWire) Do(r *http.Request) (*http.Response, error) { return w.RoundTrip(r) }

func (w *cloudWire) note(r *http.Request) {
	p := r.URL.Path
	isCopy := strings.Contains(p, "/rewriteTo/") || strings.Contains(p, "/copyTo/") || hasHeader(r.Header, "x-ms-copy-source")
	// A data object's upload: GCS's upload endpoint naming a .parquet
	// object, or an Azure PUT of a .parquet blob (or a block of it).
	isUpload := !isCopy && ((strings.HasPrefix(p, "/upload/") && strings.HasSuffix(r.URL.Query().Get("name"), ".parquet")) ||
		(r.Method == http.MethodPut && strings.HasSuffix(p, ".parquet")))
	w.mu.Lock()
	f := w.onCopy
	if isCopy {
		w.copies++
	}
	if isUpload {
		w.uploads = append(w.uploads, r.Method+" "+p)
	}
	w.mu.Unlock()
	if isCopy && f != nil {
		f()
	}
}

// hasHeader reports whether h has name in any case (the Azure SDK sets its
// x-ms- headers in lower case, past http.Header's canonical form).
func hasHeader(h http.Header, name string) bool {
	for k, v := range h {
		if strings.EqualFold(k, name) && len(v) > 0 && v[0] != "" {
			return true
		}
	}
	return false
}

func (w *cloudWire) take() (copies int, uploads []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	copies, uploads = w.copies, w.uploads
	w.copies, w.uploads = 0, nil
	return copies, uploads
}

// cloudTable is a table store on an emulator whose requests w counts, the
// store on its whole bucket (container), and the input URI of a key in it.
type cloudTable struct {
	st    store.Store
	outer store.Store
	uri   func(key string) string
	// sibling makes another bucket (container, of the same account) on
	// the emulator and returns a store on it whose requests w counts too,
	// the input URI of a key in it, and its name.
	sibling func(t *testing.T) (src store.Store, uri func(key string) string, name string)
	// missing is an input URI in a bucket (container) that does not exist.
	missing string
	// foreign is an input URI in another Azure storage account, which the
	// table's credential cannot copy from ("" on GCS).
	foreign string
	// wrong is an input URI of another store's scheme.
	wrong string
}

// cloudTables returns the GCS and Azure tables, each skipped when its
// emulator is not configured.
func cloudTables() map[string]func(t *testing.T, w *cloudWire) cloudTable {
	return map[string]func(t *testing.T, w *cloudWire) cloudTable{
		"gcs": func(t *testing.T, w *cloudWire) cloudTable {
			opts := testenv.GCSOptions(t)
			bucket, _ := testenv.GCSBucket(t)
			w.inner = http.DefaultTransport.(*http.Transport).Clone()
			opts.Transport = w
			st, err := gcsstore.New(ctx, bucket, "table", opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			outer, _ := st.Outer()
			sibling := func(t *testing.T) (store.Store, func(string) string, string) {
				other, _ := testenv.GCSBucket(t)
				src, err := st.Sibling(other, "")
				if err != nil {
					t.Fatal(err)
				}
				return src, func(k string) string { return "gs://" + other + "/" + k }, other
			}
			return cloudTable{st: st, outer: outer, uri: func(k string) string { return "gs://" + bucket + "/" + k },
				sibling: sibling, missing: "gs://missing-" + bucket + "/out/", wrong: "s3://" + bucket + "/out/"}
		},
		"azure": func(t *testing.T, w *cloudWire) cloudTable {
			opts := testenv.AzureOptions(t)
			name := testenv.AzureContainer(t)
			w.inner = http.DefaultTransport.(*http.Transport).Clone()
			opts.Transport = w
			st, err := azstore.New(ctx, name, "table", opts)
			if err != nil {
				t.Fatal(err)
			}
			outer, _ := st.Outer()
			uriOf := func(container string) func(string) string {
				if st.Account() == "" {
					return func(k string) string { return "az://" + container + "/" + k }
				}
				// The form Spark and Iceberg write: what a job hands over.
				return func(k string) string {
					return "abfss://" + container + "@" + st.Account() + ".dfs.core.windows.net/" + k
				}
			}
			sibling := func(t *testing.T) (store.Store, func(string) string, string) {
				other := testenv.AzureContainer(t)
				src, err := st.Sibling(other, "")
				if err != nil {
					t.Fatal(err)
				}
				return src, uriOf(other), other
			}
			return cloudTable{st: st, outer: outer, uri: uriOf(name), sibling: sibling, missing: uriOf("missing-" + name)("out/"),
				foreign: "abfss://" + name + "@other" + st.Account() + ".dfs.core.windows.net/out/", wrong: "gs://" + name + "/out/"}
		},
	}
}

// TestCommitObjectsOnCloud: objects of the table's bucket (container), and
// of another bucket (another container of the table's account), are
// committed by server-side copies (one per object, no data uploaded),
// byte-exact and verified; the same objects again are a no-op, and the
// same run id the same-run no-op with nothing copied; a source replaced
// during its copy fails the commit and leaves nothing.
func TestCommitObjectsOnCloud(t *testing.T) {
	for kind, open := range cloudTables() {
		for _, where := range []string{"table-bucket", "other-bucket"} {
			t.Run(kind+"/"+where, func(t *testing.T) {
				w := &cloudWire{}
				ct := open(t, w)
				src, uri := ct.outer, ct.uri
				if where == "other-bucket" {
					src, uri, _ = ct.sibling(t)
				}
				commitObjectsOnCloud(t, w, ct, src, uri)
			})
		}
	}
}

// commitObjectsOnCloud is TestCommitObjectsOnCloud for inputs in src,
// whose keys uri names.
func commitObjectsOnCloud(t *testing.T, w *cloudWire, ct cloudTable, src store.Store, uri func(string) string) {
	table := pswap.NewTable(ct.st)
	for i := range 3 {
		putObj(t, src, fmt.Sprintf("spark-out/dt=2026-09-01/part-%05d.snappy.parquet", i), parquetBytes(t, i*50, 50))
	}
	putObj(t, src, "spark-out/dt=2026-09-01/_SUCCESS", nil)
	p, err := table.Partition("dt=2026-09-01")
	if err != nil {
		t.Fatal(err)
	}
	w.take()
	r, err := p.CommitObjects(ctx, []string{uri("spark-out/dt=2026-09-01/")}, pswap.WriteOptions{})
	if err != nil || !r.Changed || r.Rows != 150 || r.Files != 3 {
		t.Fatalf("commit objects: %+v %v", r, err)
	}
	if copies, uploads := w.take(); copies != 3 || len(uploads) != 0 {
		t.Fatalf("server-side commit: %d copies, data uploads %q; want 3 copies and no upload", copies, uploads)
	}
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(0)
	for i, f := range snap.Files {
		want := parquetBytes(t, i*50, 50)
		got, a, err := store.ReadAll(ctx, ct.st, f.Key)
		if err != nil || string(got) != string(want) || f.Size != int64(len(want)) || f.Rows != 50 {
			t.Fatalf("copied %s: %d bytes (%d recorded, %d rows), %v", f.Path, len(got), f.Size, f.Rows, err)
		}
		// The recorded checksum names the copy's version, and the copy's
		// MD5 is the source bytes'.
		st, err := ct.st.Stat(ctx, f.Key)
		if err != nil || !manifest.SameETag(f.Checksum, a.ETag) || st.ContentMD5 != fmt.Sprintf("%x", md5.Sum(want)) {
			t.Fatalf("copied %s: checksum %s, version %s, MD5 %s (%v); want the copy's version and the source's MD5", f.Path, f.Checksum, a.ETag, st.ContentMD5, err)
		}
		rows += f.Rows
	}
	if rows != 150 || len(snap.Files) != 3 {
		t.Fatalf("the committed partition holds %d rows in %d files, want 150 in 3", rows, len(snap.Files))
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// The same objects again: identical content, a no-op, as on S3,
	// though a copy's version (a GCS generation, an Azure ETag) is
	// new with every write: the content checksum is over the
	// bytes' MD5s (GCS md5Hash, Azure Content-MD5).
	r, err = p.CommitObjects(ctx, []string{uri("spark-out/dt=2026-09-01/")}, pswap.WriteOptions{})
	if err != nil || r.Changed || r.Outcome != swap.Identical || r.Generation != snap.Pointer.Generation {
		t.Fatalf("same objects again: %+v %v, want the identical no-op on %s", r, err, snap.Pointer.Generation)
	}
	// The same bytes written again (an engine re-run: new versions
	// of the objects) are identical content too, in whichever bucket.
	for i := range 3 {
		putObj(t, ct.outer, fmt.Sprintf("rerun/dt=2026-09-01/part-%05d.snappy.parquet", i), parquetBytes(t, i*50, 50))
	}
	r, err = p.CommitObjects(ctx, []string{ct.uri("rerun/dt=2026-09-01/")}, pswap.WriteOptions{})
	if err != nil || r.Changed || r.Outcome != swap.Identical {
		t.Fatalf("same bytes rewritten: %+v %v, want the identical no-op", r, err)
	}
	// One object changed (other rows): a new generation.
	putObj(t, src, "spark-out/dt=2026-09-01/part-00002.snappy.parquet", parquetBytes(t, 1000, 50))
	r, err = p.CommitObjects(ctx, []string{uri("spark-out/dt=2026-09-01/")}, pswap.WriteOptions{})
	if err != nil || !r.Changed || r.Outcome != swap.Committed || r.Rows != 150 {
		t.Fatalf("one object changed: %+v %v, want a new generation", r, err)
	}

	rerun := pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "job-7"}}
	first, err := p.CommitObjects(ctx, []string{uri("spark-out/dt=2026-09-01/part-00000.snappy.parquet")}, rerun)
	if err != nil || !first.Changed || first.Rows != 50 {
		t.Fatalf("one object as job-7: %+v %v", first, err)
	}
	w.take()
	again, err := p.CommitObjects(ctx, []string{uri("spark-out/dt=2026-09-01/part-00001.snappy.parquet")}, rerun)
	if copies, _ := w.take(); err != nil || again.Changed || again.Outcome != swap.SameRun || again.Generation != first.Generation || copies != 0 {
		t.Fatalf("job-7 again: %+v %v (%d copies), want the same-run no-op of %+v", again, err, copies, first)
	}

	// A source replaced while it is being copied.
	q, _ := table.Partition("dt=2026-09-02")
	putObj(t, src, "in/a.parquet", parquetBytes(t, 0, 10))
	var replaced atomic.Bool
	w.mu.Lock()
	w.onCopy = func() {
		if replaced.CompareAndSwap(false, true) {
			putObj(t, src, "in/a.parquet", parquetBytes(t, 5, 10))
		}
	}
	w.mu.Unlock()
	_, err = q.CommitObjects(ctx, []string{uri("in/a.parquet")}, pswap.WriteOptions{})
	if !errors.Is(err, store.ErrPrecondition) || !replaced.Load() {
		t.Fatalf("source replaced during the copy: %v (replaced %v)", err, replaced.Load())
	}
	if _, err := q.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("a failed copy made something visible: %v", err)
	}
	if keys := listKeys(t, ct.st, q.Key()+"/"); len(keys) != 0 {
		t.Fatalf("a failed copy left %q", keys)
	}
}

// TestCommitObjectsRefusedOnCloud: an input of another store's scheme, or
// of another Azure storage account, is refused (ErrBadInput) naming the
// table and what it takes; one in a missing bucket (container), or in one
// the credentials cannot read, fails naming the input. Nothing is copied and nothing written: no pointer, no
// generation, no attempt left visible.
func TestCommitObjectsRefusedOnCloud(t *testing.T) {
	for kind, open := range cloudTables() {
		t.Run(kind, func(t *testing.T) {
			w := &cloudWire{}
			ct := open(t, w)
			table := pswap.NewTable(ct.st)
			p, err := table.Partition("dt=2026-09-02")
			if err != nil {
				t.Fatal(err)
			}
			type bad struct {
				uri  string
				is   error
				says []string
			}
			cases := []bad{
				{ct.wrong, pswap.ErrBadInput, []string{ct.wrong, ct.st.URI(""), "inputs"}},
				{ct.missing, store.ErrBucketNotFound, []string{ct.missing}},
			}
			// Another bucket (container) that the credentials cannot read.
			src, uri, deny := ct.sibling(t)
			putObj(t, src, "out/part-0.parquet", parquetBytes(t, 0, 10))
			cases = append(cases, bad{uri("out/"), store.ErrAccessDenied, []string{uri("out/")}})
			if ct.foreign != "" {
				cases = append(cases, bad{ct.foreign, pswap.ErrBadInput, []string{ct.foreign, ct.st.URI(""), "account other", "SAS"}})
			}
			for _, c := range cases {
				w.mu.Lock()
				w.deny = ""
				if c.is == store.ErrAccessDenied {
					w.deny = deny
				}
				w.mu.Unlock()
				w.take()
				_, err := p.CommitObjects(ctx, []string{c.uri}, pswap.WriteOptions{})
				t.Logf("input %s: %v", c.uri, err)
				if !errors.Is(err, c.is) {
					t.Errorf("input %s: %v, want %v", c.uri, err, c.is)
				}
				for _, say := range c.says {
					if err != nil && !strings.Contains(err.Error(), say) {
						t.Errorf("input %s: %q does not say %q", c.uri, err, say)
					}
				}
				if copies, uploads := w.take(); copies != 0 || len(uploads) != 0 {
					t.Errorf("input %s: %d copies, uploads %q", c.uri, copies, uploads)
				}
				if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
					t.Errorf("input %s: a refused commit made something visible: %v", c.uri, err)
				}
				if keys := listKeys(t, ct.st, ""); len(keys) != 0 {
					t.Errorf("input %s: a refused commit left %q", c.uri, keys)
				}
			}
		})
	}
}

// TestAuditPartitionedFromCloud: a backfill from a prefix of the table's
// bucket (container) where one partition's objects are not Parquet: the
// others commit by server-side copies, that one fails; the audit shows
// each attempt with its run id and identity, the failed one with its
// error. The same run again: no-op rows, nothing copied. A backfill in
// another bucket (container) is copied server-side too.
func TestAuditPartitionedFromCloud(t *testing.T) {
	for kind, open := range cloudTables() {
		t.Run(kind, func(t *testing.T) {
			w := &cloudWire{}
			ct := open(t, w)
			for i := range 3 {
				putObj(t, ct.outer, fmt.Sprintf("out/dt=2026-09-%02d/part-0.parquet", i+1), parquetBytes(t, i*10, 10))
			}
			putObj(t, ct.outer, "out/dt=2026-09-04/part-0.parquet", []byte("not parquet"))
			putObj(t, ct.outer, "out/_SUCCESS", nil)
			table := pswap.NewTable(ct.st)
			id := pswap.Identity{Job: "spark_backfill", Task: "copy", JobRunID: "scheduled__9"}
			opts := pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "bf", Identity: id}}}
			w.take()
			res, err := table.CommitPartitioned(ctx, ct.uri("out"), opts)
			if err != nil || res.Committed != 3 || res.Failed != 1 || res.AttemptErr != nil {
				t.Fatalf("the backfill: %+v, %v", res, err)
			}
			if copies, uploads := w.take(); copies != 3 || len(uploads) != 0 {
				t.Fatalf("the backfill: %d copies, data uploads %q; want 3 copies and no upload", copies, uploads)
			}
			for _, o := range res.Partitions {
				if o.Partition != "dt=2026-09-04" && (o.Err != nil || o.Result.Rows != 10 || o.Source != ct.uri("out/"+o.Partition)) {
					t.Errorf("%s: %+v", o.Partition, o)
				}
			}
			by, err := auditBy(t, table)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				p := fmt.Sprintf("dt=2026-09-%02d", i+1)
				if r := by[p]; len(r) != 1 || r[0].Status != "succeeded" || r[0].RunID != "bf/"+p || r[0].Job != id.Job || r[0].JobRunID != id.JobRunID {
					t.Errorf("%s: %+v, want one succeeded row with the run's identity", p, r)
				}
			}
			if r := by["dt=2026-09-04"]; len(r) != 1 || r[0].Status != "failed" || r[0].RunID != "bf/dt=2026-09-04" || r[0].Why == "" {
				t.Errorf("the failed partition: %+v, want one failed row with its error", r)
			}
			res, err = table.CommitPartitioned(ctx, ct.uri("out"), opts)
			if err != nil || res.Unchanged != 3 || res.Failed != 1 {
				t.Fatalf("the same run again: %+v, %v", res, err)
			}
			if copies, _ := w.take(); copies != 0 {
				t.Errorf("the same run again copied %d objects", copies)
			}
			if _, err := table.CommitPartitioned(ctx, ct.wrong, opts); !errors.Is(err, pswap.ErrBadInput) {
				t.Errorf("partitioned source %s: %v, want ErrBadInput", ct.wrong, err)
			}
			if _, err := table.CommitPartitioned(ctx, ct.missing, opts); !errors.Is(err, store.ErrBucketNotFound) || !strings.Contains(err.Error(), strings.TrimSuffix(ct.missing, "/")) {
				t.Errorf("partitioned source %s: %v, want ErrBucketNotFound naming it", ct.missing, err)
			}

			// A backfill written to another bucket (container of the
			// account): copied server-side the same way.
			src, uri, _ := ct.sibling(t)
			for i := range 2 {
				putObj(t, src, fmt.Sprintf("staged/dt=2026-10-%02d/part-0.parquet", i+1), parquetBytes(t, i*10, 10))
			}
			putObj(t, src, "staged/_SUCCESS", nil)
			w.take()
			res, err = table.CommitPartitioned(ctx, uri("staged"), pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "staged"}}})
			if err != nil || res.Committed != 2 || res.Failed != 0 {
				t.Fatalf("the backfill from another bucket: %+v, %v", res, err)
			}
			if copies, uploads := w.take(); copies != 2 || len(uploads) != 0 {
				t.Fatalf("the backfill from another bucket: %d copies, data uploads %q; want 2 copies and no upload", copies, uploads)
			}
			for _, o := range res.Partitions {
				if o.Err != nil || o.Result.Rows != 10 || o.Source != uri("staged/"+o.Partition) {
					t.Errorf("%s: %+v", o.Partition, o)
				}
			}
		})
	}
}

// TestAdoptIdenticalOnCloud: files an engine wrote into a reservation, the
// same bytes written again into another (an engine job re-run: new GCS
// generations, new Azure ETags) are identical content, a no-op, as on S3
// (TestAdoptIdenticalContent); other bytes are a new generation.
func TestAdoptIdenticalOnCloud(t *testing.T) {
	for kind, open := range cloudTables() {
		t.Run(kind, func(t *testing.T) {
			ct := open(t, &cloudWire{})
			table := pswap.NewTable(ct.st)
			write := func(first int) (*pswap.Partition, string) {
				p, res := reserve(t, table)
				for i := range 2 {
					putObj(t, ct.st, fmt.Sprintf("%spart-%05d-%s.parquet", res.Prefix, i, res.Generation), parquetBytes(t, first+i*20, 20))
				}
				return p, res.Generation
			}
			p, g := write(0)
			first, err := p.CommitStaged(ctx, g, pswap.CommitOptions{})
			if err != nil || !first.Changed || first.Rows != 40 {
				t.Fatalf("adopt: %+v %v", first, err)
			}
			p, g = write(0)
			r, err := p.CommitStaged(ctx, g, pswap.CommitOptions{})
			if err != nil || r.Changed || r.Outcome != swap.Identical || r.Generation != first.Generation {
				t.Fatalf("the same bytes again: %+v %v, want the identical no-op on %s", r, err, first.Generation)
			}
			p, g = write(1)
			r, err = p.CommitStaged(ctx, g, pswap.CommitOptions{})
			if err != nil || !r.Changed || r.Outcome != swap.Committed || r.Generation == first.Generation {
				t.Fatalf("other bytes: %+v %v, want a new generation", r, err)
			}
			if rep, err := p.Verify(ctx); err != nil || !rep.OK {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
}
