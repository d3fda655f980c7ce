package integration

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// checkOpts tune one invariant check.
type checkOpts struct {
	// duck also counts every current generation's rows with DuckDB (an
	// independent Parquet reader) over exactly the manifest's files, when
	// node and @duckdb/node-api are installed.
	duck bool
	// expect are partitions that must be committed.
	expect []string
}

// partState is what the checker saw of one partition.
type partState struct {
	snap *swap.Snapshot
	hist []swap.Entry
}

// gen is the current generation.
func (p *partState) gen() string { return p.snap.Pointer.Generation }

// runCount is the number of generations in the history carrying run id.
func (p *partState) runCount(runID string) int {
	n := 0
	for _, h := range p.hist {
		if h.RunID == runID && !h.Collected {
			n++
		}
	}
	return n
}

// inHistory reports whether gen is current or retired in the history.
func (p *partState) inHistory(gen string) bool {
	for _, h := range p.hist {
		if h.Generation == gen {
			return true
		}
	}
	return false
}

// tableState maps partition keys to what the checker saw.
type tableState map[string]*partState

// violation reports a broken invariant and counts it.
func violation(t testing.TB, inv, format string, args ...any) {
	t.Helper()
	totals.violations.Add(1)
	t.Errorf("INVARIANT %s VIOLATED: %s", inv, fmt.Sprintf(format, args...))
}

// check verifies the invariants of docs/design.md on the whole table, looking at it
// both through pswap's reader API and from outside (the raw directory or
// bucket), and returns what it saw. Every problem is reported with t.Errorf
// and counted as a violation.
//
//   - I1: every partition's pointer resolves to exactly one manifest, and the
//     generation's data prefix holds exactly the manifest's files: a reader
//     sees one complete generation, never a mix.
//   - I2: every file the current manifest names exists with its recorded
//     size and SHA-256, the totals add up, and DuckDB counts exactly the
//     manifest's rows, file by file.
//   - I3/I4: the history is one chain (parents link up, no generation twice,
//     one entry per pointer swap while nothing is collected).
//   - I5: every generation still in the history keeps all its files (GC
//     deletes manifests before data), so rollback to it works.
//   - I6: nothing outside the table root was written or changed (sentinels
//     of a sibling table "sales-x" and files next to the root are intact),
//     and everything under the root follows pswap's layout.
func (e *tableEnv) check(t testing.TB, o checkOpts) tableState {
	t.Helper()
	totals.checks.Add(1)
	parts, err := swap.ListPartitions(ctx, e.st, "")
	if err != nil {
		t.Fatalf("list partitions: %v", err)
	}
	for _, p := range o.expect {
		if !slices.Contains(parts, p) {
			violation(t, "I3", "partition %s has no pointer (committed partitions: %v)", p, parts)
		}
	}
	state := tableState{}
	for _, p := range parts {
		if ps := e.checkPartition(t, p); ps != nil {
			state[p] = ps
		}
	}
	e.checkLayout(t)
	if o.duck && duckAvailable() {
		e.checkDuck(t, state)
	}
	return state
}

func (e *tableEnv) checkPartition(t testing.TB, part string) *partState {
	t.Helper()
	snap, err := e.table().Partition(part)
	if err != nil {
		violation(t, "I6", "listed partition %q is not a valid key: %v", part, err)
		return nil
	}
	s, err := snap.Current(ctx)
	if err != nil {
		violation(t, "I1", "%s: pointer does not resolve to one manifest: %v", part, err)
		return nil
	}
	m := s.Manifest
	ps := &partState{snap: s}
	if s.Pointer.Generation != m.Generation || m.Partition != part {
		violation(t, "I1", "%s: pointer names %s, manifest is %s of %s", part, s.Pointer.Generation, m.Generation, m.Partition)
	}

	// I1 + I2: the data prefix holds exactly the manifest's files.
	prefix := layout.DataPrefix(part, m.DataGen())
	listed := map[string]int64{}
	for a, err := range e.st.List(ctx, prefix) {
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		listed[a.Key] = a.Size
	}
	var rows, size int64
	for _, f := range s.Files {
		rows += f.Rows
		size += f.Size
		if !strings.HasPrefix(f.Key, prefix) || manifest.ValidateFilePath(f.Path) != nil {
			violation(t, "I6", "%s: file %q resolves to %q, outside the generation prefix %s", part, f.Path, f.Key, prefix)
			continue
		}
		got, ok := listed[f.Key]
		delete(listed, f.Key)
		if !ok {
			violation(t, "I2", "%s generation %s: file %s is missing", part, m.Generation, f.Path)
			continue
		}
		if got != f.Size {
			violation(t, "I2", "%s generation %s: file %s has %d bytes, manifest says %d", part, m.Generation, f.Path, got, f.Size)
		}
		if strings.HasPrefix(f.Checksum, manifest.ETagChecksumPrefix) {
			// An adopted object (remote stores): the version it had when
			// adopted, which any change to it replaces.
			if a, err := e.st.Stat(ctx, f.Key); err != nil {
				violation(t, "I2", "%s generation %s: stat %s: %v", part, m.Generation, f.Path, err)
			} else if !manifest.SameETag(f.Checksum, a.ETag) {
				violation(t, "I2", "%s generation %s: file %s is version %s, manifest says %s", part, m.Generation, f.Path, a.ETag, f.Checksum)
			}
		} else if sum, err := e.sha256(f.Key); err != nil {
			violation(t, "I2", "%s generation %s: read %s: %v", part, m.Generation, f.Path, err)
		} else if sum != f.Checksum {
			violation(t, "I2", "%s generation %s: file %s has checksum %s, manifest says %s", part, m.Generation, f.Path, sum, f.Checksum)
		}
	}
	for k := range listed {
		if strings.HasPrefix(k, prefix+manifest.SegmentsFolder) {
			continue // an append head's segments: file lists, hidden from readers ("_")
		}
		violation(t, "I1", "%s generation %s: its prefix holds %s, which the manifest does not name (a reader listing the prefix would see a mix)", part, m.Generation, k)
	}
	if rows != m.Rows || size != m.Bytes {
		violation(t, "I2", "%s generation %s: files add up to %d rows %d bytes, manifest totals %d rows %d bytes", part, m.Generation, rows, size, m.Rows, m.Bytes)
	}

	// I3/I4: one chain.
	h, err := swap.History(ctx, e.st, part, 0)
	if err != nil {
		violation(t, "I3", "%s: history: %v", part, err)
		return ps
	}
	ps.hist = h
	if len(h) == 0 || h[0].Generation != m.Generation || !h[0].Current {
		violation(t, "I3", "%s: history does not start at the current generation %s", part, m.Generation)
		return ps
	}
	collected := false
	for i, x := range h {
		if x.Collected {
			collected = true
			if i != len(h)-1 {
				violation(t, "I3", "%s: history continues past collected generation %s", part, x.Generation)
			}
			continue
		}
		if i+1 < len(h) && x.Parent != h[i+1].Generation {
			violation(t, "I3", "%s: generation %s names parent %s, next in history is %s", part, x.Generation, x.Parent, h[i+1].Generation)
		}
		if i > 0 {
			e.checkRetained(t, part, x.Generation)
		}
	}
	if !collected {
		if last := h[len(h)-1]; last.Parent != "" {
			violation(t, "I3", "%s: history ends at %s whose parent %s is neither there nor collected", part, last.Generation, last.Parent)
		}
		if int64(len(h)) != s.Pointer.Seq {
			violation(t, "I3", "%s: %d generations in the history, but the pointer's seq is %d (a lost or extra swap)", part, len(h), s.Pointer.Seq)
		}
	} else if int64(len(h)) > s.Pointer.Seq {
		violation(t, "I3", "%s: %d generations in the history, more than the pointer's seq %d", part, len(h), s.Pointer.Seq)
	}
	return ps
}

// checkRetained: a retired generation whose manifest is still there keeps
// all its files (rollback depends on it; GC deletes the manifest first).
func (e *tableEnv) checkRetained(t testing.TB, part, gen string) {
	t.Helper()
	m, err := swap.ReadManifest(ctx, e.st, part, gen)
	if errors.Is(err, swap.ErrGenerationNotFound) {
		return // collected since History read it
	}
	if err != nil {
		violation(t, "I5", "%s: retired generation %s: %v", part, gen, err)
		return
	}
	have := map[string]int64{}
	for a, err := range e.st.List(ctx, layout.DataPrefix(part, m.DataGen())) {
		if err != nil {
			t.Fatal(err)
		}
		have[a.Key] = a.Size
	}
	if _, err := swap.ReadManifest(ctx, e.st, part, gen); errors.Is(err, swap.ErrGenerationNotFound) {
		return // collected while we listed
	}
	for _, f := range swap.Files(e.st, m) {
		if size, ok := have[f.Key]; !ok || size != f.Size {
			violation(t, "I5", "%s: retired generation %s still has its manifest but lost file %s", part, gen, f.Path)
		}
	}
}

func (e *tableEnv) sha256(key string) (string, error) {
	rc, _, err := e.st.Get(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", err
	}
	return manifest.SHA256Checksum(h.Sum(nil)), nil
}

// checkLayout looks at the table from outside: everything under the root is
// pswap's layout, nothing else around it changed.
func (e *tableEnv) checkLayout(t testing.TB) {
	t.Helper()
	seen := map[string]bool{}
	for _, o := range e.rawList(t) {
		if body, ok := e.sentinels[o.key]; ok {
			seen[o.key] = true
			if got, err := e.rawRead(o.key); err != nil || string(got) != string(body) {
				violation(t, "I6", "sentinel %s outside the table root changed: %q %v", o.key, got, err)
			}
			continue
		}
		rel, ok := strings.CutPrefix(o.key, "sales/")
		if !ok {
			violation(t, "I6", "%s was written outside the table root", o.key)
			continue
		}
		if !e.layoutKey(rel) {
			violation(t, "I6", "%s under the table root is not pswap's layout", rel)
		}
	}
	for k := range e.sentinels {
		if !seen[k] {
			violation(t, "I6", "sentinel %s outside the table root was deleted", k)
		}
	}
	// Unfinished multipart uploads are writes too.
	if e.kind == "minio" {
		pg := s3.NewListMultipartUploadsPaginator(e.s3c, &s3.ListMultipartUploadsInput{Bucket: &e.bucket})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range page.Uploads {
				k := aws.ToString(u.Key)
				if rel, ok := strings.CutPrefix(k, e.root+"/"); !ok || !e.layoutKey(rel) {
					violation(t, "I6", "multipart upload of %s, outside the table's layout", k)
				}
			}
		}
	}
}

// layoutKey reports whether key (relative to the table root) is something
// pswap may write: a partition's pointer.json, manifests/<gen>.json,
// gen/<gen>/<file>, staged/<gen>.json, attempts/<gen>.json in either
// layout (package layout), an append's runs/<hash>.json, a fold marker, a
// backfill's batch attempt record,
// plus the file store's temporary and lock files.
func (e *tableEnv) layoutKey(key string) bool {
	if e.allowKey != nil && e.allowKey(key) {
		return true
	}
	if key == tablemeta.Key { // the table's metadata (table.json)
		return true
	}
	if base := path.Base(key); e.kind == "file" && path.Dir(key) == path.Dir(tablemeta.Key) &&
		strings.HasPrefix(base, ".") && (strings.HasSuffix(base, ".pswap-tmp") || strings.HasSuffix(base, ".pswap-lock")) {
		return true // the file backend's temporary and lock files of table.json
	}
	if lakehouse.IsMetadataKey(key) { // the published Iceberg metadata
		return true
	}
	if d, base := path.Split(key); e.kind == "file" && d == lakehouse.MetadataPrefix && strings.HasPrefix(base, ".") &&
		(strings.HasSuffix(base, ".pswap-tmp") || strings.HasSuffix(base, ".pswap-lock")) {
		return true
	}
	if _, _, ok := layout.ParseFoldKey(key); ok { // an Iceberg publish's fold marker
		return true
	}
	if base := path.Base(key); e.kind == "file" && strings.HasPrefix(key, layout.FoldPrefix) && strings.HasPrefix(base, ".") &&
		(strings.HasSuffix(base, ".pswap-tmp") || strings.HasSuffix(base, ".pswap-lock")) {
		return true // the file backend's temporary and lock files of a fold marker
	}
	if key == layout.LeaseKey { // the Iceberg publish lease
		return true
	}
	if _, ok := layout.ParseBatchKey(key); ok { // a backfill's batch attempt record
		return true
	}
	part, ok := layout.PartitionOf(key)
	if !ok {
		return false
	}
	if r, ok := strings.CutPrefix(key, layout.RunsPrefix(part)); ok { // an append's run record
		return strings.HasSuffix(r, ".json") && !strings.Contains(r, "/")
	}
	if base := path.Base(key); e.kind == "file" && strings.HasPrefix(base, ".") &&
		(strings.HasSuffix(base, ".pswap-tmp") || strings.HasSuffix(base, ".pswap-lock")) {
		return store.ValidateKey(path.Dir(key)) == nil
	}
	switch k, g := layout.Classify(part, key); k {
	case layout.KindPointer, layout.KindManifest, layout.KindStaged, layout.KindAttempt:
		return true
	case layout.KindData:
		f := strings.TrimPrefix(key, layout.DataPrefix(part, g))
		if layout.IsLegacy(key) {
			f = strings.TrimPrefix(key, layout.LegacyDataPrefix(part, g))
		}
		return manifest.ValidateFilePath(f) == nil && store.ValidateKey(key) == nil
	}
	return false
}

// checkDuck counts each current generation's rows with DuckDB, file by
// file, over exactly the manifest's files.
func (e *tableEnv) checkDuck(t testing.TB, state tableState) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pswap-duck-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for part, ps := range state {
		files := ps.snap.Files
		if len(files) == 0 {
			continue
		}
		want := map[string]int64{}
		var list []string
		for _, f := range files {
			p, err := e.localCopy(ctx, f.Key, dir)
			if err != nil {
				violation(t, "I2", "%s: fetch %s for DuckDB: %v", part, f.Path, err)
				return
			}
			want[p] = f.Rows
			list = append(list, duckcheck.Quote(p))
		}
		rows, err := duckQuery("SELECT filename AS f, count(*)::BIGINT AS n FROM read_parquet([" + strings.Join(list, ", ") +
			"], filename = true, hive_partitioning = false) GROUP BY filename")
		if err != nil {
			violation(t, "I2", "%s generation %s: DuckDB cannot read the files: %v", part, ps.gen(), err)
			continue
		}
		totals.duckChecks.Add(1)
		got := map[string]int64{}
		for _, r := range rows {
			var n int64
			fmt.Sscan(fmt.Sprint(r["n"]), &n)
			got[fmt.Sprint(r["f"])] = n
		}
		for p, n := range want {
			if got[p] != n {
				violation(t, "I2", "%s generation %s: DuckDB counts %d rows in %s, manifest says %d", part, ps.gen(), got[p], path.Base(p), n)
			}
			delete(got, p)
		}
		for p := range got {
			violation(t, "I1", "%s: DuckDB read rows from %s, which is not a file of generation %s", part, p, ps.gen())
		}
	}
}
