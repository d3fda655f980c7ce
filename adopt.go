package pswap

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/inputfiles"
	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/tablemeta"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Adopting files that an engine (Spark, Trino, DuckDB, Polars) wrote into
// a reserved generation: Reserve prints where to write, CommitStaged lists
// that prefix and commits what it finds without downloading it.

// AdoptOptions tune the adoption of a reservation's files. The zero value works.
type AdoptOptions struct {
	// TailSize is how many bytes of each file's end the first ranged GET
	// reads (default 64 KiB): a footer that fits costs one request, a
	// larger one a second.
	TailSize int64
	// Concurrency bounds the files read at once (default 16).
	Concurrency int
	// VerifyRows reads every file in full and records the row-level content
	// checksum that a commit of the same files from disk would, so that
	// "identical content is a no-op" compares rows, as for local inputs
	// (see AdoptedChecksumAlgo for the default). Onto a current generation
	// that records a rowsum128 checksum (staged before colsum128) it
	// computes that one too, as such a commit does
	// (staging.Options.LegacyChecksum): one more GET, of the pointer, and a
	// second scan of each file.
	VerifyRows bool
	// AllowEmpty accepts files that hold no rows at all (the partition
	// becomes empty); an empty prefix is refused all the same. CommitStaged
	// also takes it from swap.Options.AllowEmpty.
	AllowEmpty bool
}

// AdoptedChecksumAlgo names the content checksum of adopted files when the
// rows are not read: SHA-256 over the sorted list of the files' sizes and
// store checksums, paths left out: the MD5 of the bytes where the store
// keeps one beside the version (GCS's md5Hash, Azure's Content-MD5), else
// the ETag (S3's single-part ETag is the MD5 of the bytes, file://'s a
// content hash). Content is then "identical" (a no-op commit) when the
// same bytes were written again: the same files under any names, e.g. an
// engine job re-run on the same input.
// Equal rows in other bytes (another engine, other row groups) are a new
// generation; AdoptOptions.VerifyRows compares rows instead.
const AdoptedChecksumAlgo = checksum.Adopted

// Reserve reserves a new generation of the partition for an external
// engine: it returns the generation id and the data prefix to write into
// (Prefix is a store key; Table.Store().URI(Prefix) is its URI). The
// reservation is fenced on the current pointer, like Stage.
//
// A reservation that would start a table where none can be (inside another
// table, above tables: ErrNestedTable) is withdrawn. That check costs the
// first reservation of a partition one HEAD of the table's table.json, and
// of a new table the guard's listing (tableguard.go); a partition with
// commits none.
func (p *Partition) Reserve(ctx context.Context, opts CommitOptions) (swap.Reservation, error) {
	if err := partition.Validate(p.key); err != nil {
		return swap.Reservation{}, err
	}
	// The attempt's record (run id, identity, start), sent beside the
	// reservation's requests: the audit then names the run of a
	// reservation that was never committed (the engine died).
	so := opts.swap()
	so.Generation = env.From(ctx).NewGenerationID()
	att := newAttemptRecord(p, so.Generation, WriteOptions{Commit: opts})
	att.start(ctx)
	r, err := p.reserve(ctx, so)
	if err != nil {
		att.remove(ctx) // nothing was reserved
		return r, err
	}
	att.finish()
	return r, nil
}

func (p *Partition) reserve(ctx context.Context, so swap.Options) (swap.Reservation, error) {
	r, err := swap.Reserve(ctx, p.t.st, p.key, so)
	if err != nil || r.Base.Pointer != nil {
		return r, err
	}
	_, err = p.t.st.Stat(ctx, tablemeta.Key)
	if errors.Is(err, store.ErrNotFound) {
		err = checkNewTable(ctx, p.t.st, false)
	}
	if err != nil {
		_ = p.t.st.Delete(context.WithoutCancel(ctx), layout.StagedKey(p.key, r.Generation))
		return swap.Reservation{}, err
	}
	return r, nil
}

// adopter returns the swap.AdoptFunc that describes a reservation's files
// of partition key and checks them against the table's schema.
func adopter(o AdoptOptions, key string, opts CommitOptions) swap.AdoptFunc {
	o = o.defaults()
	return func(ctx context.Context, st store.Store, prefix string) (manifest.Content, time.Time, error) {
		legacy := false
		if o.VerifyRows {
			// As Begin does for a commit from local files: a current
			// generation staged before colsum128 is compared in its own
			// algorithm too (one GET; the rows are read in full anyway).
			b, err := swap.ReadPointer(ctx, st, key)
			switch {
			case err == nil:
				legacy = checksum.Algo(b.Pointer.ContentChecksum) == checksum.RowSum
			case !errors.Is(err, swap.ErrNoData):
				return manifest.Content{}, time.Time{}, err
			}
		}
		c, oldest, s, err := adopt(ctx, st, prefix, o, legacy)
		if err == nil {
			err = checkAsIs(ctx, st, key, opts, s)
		}
		return c, oldest, err
	}
}

// asIs is what the footers of files committed as they are (adopted or
// copied) say about their data: its schema, and the columns that every
// file's footer proves null-free (pqscan.Footer.NullFree).
type asIs struct {
	schema   *arrow.Schema
	nullFree map[string]bool
	withIDs  []staging.Input // a file of each set of Parquet field ids the files carry
}

// asIsOf is the asIs of files whose footers were read (out, all of one
// schema).
func asIsOf(out []adopted) asIs {
	a := asIs{schema: out[0].arrow, nullFree: map[string]bool{}}
	for _, n := range out[0].nullFree {
		a.nullFree[n] = true
	}
	for _, r := range out[1:] {
		for n := range a.nullFree {
			if !slices.Contains(r.nullFree, n) {
				delete(a.nullFree, n)
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range out {
		if k := r.ids.Key(); r.ids.Any && !seen[k] {
			seen[k] = true
			a.withIDs = append(a.withIDs, staging.Input{Name: "Parquet file " + r.file.Path, FieldIDs: r.ids.Top, NestedFieldIDs: r.ids.Nested})
		}
	}
	return a
}

// checkAsIs checks files committed as they are (adopted or copied: they
// cannot be converted) against the table's metadata: the partition key must
// fit, and the files must hold exactly the table's columns and stored
// types; an optional column fits a NOT NULL one when the footers prove it
// has no null, as the same data from a local file (read and converted)
// does. A table without metadata gets it from these files (before the
// swap), as a first commit from local files would, and they must then
// hold what it records (nanosecond timestamps, say, are recorded in
// microseconds and cannot be adopted).
func checkAsIs(ctx context.Context, st store.Store, key string, opts CommitOptions, a asIs) error {
	s := a.schema
	if s == nil {
		return nil
	}
	g, err := beginSchema(readTable(ctx, st, opts.swap()), st, key, WriteOptions{Commit: opts}, &staging.Options{})
	if err == nil && g.create {
		err = checkNewTable(ctx, st, false) // tableguard.go: never inside another table
	}
	if err != nil {
		return err
	}
	if g.table != nil {
		if err := fitsAsIs(g.table, key, s, a.nullFree, "does not match files committed as they are (they cannot be converted)"); err != nil {
			return err
		}
		return idsAsIs(ctx, st, g.table, s, a.withIDs)
	}
	if _, err := g.conform(staging.Input{Name: "adopted files"}, s); err != nil {
		return err
	}
	if err := fitsAsIs(g.table, key, s, a.nullFree, "these files would create does not match them (files committed as they are cannot be converted)"); err != nil {
		return err
	}
	if err := idsAsIs(ctx, st, g.table, s, a.withIDs); err != nil {
		return err
	}
	return g.commit(ctx, s)
}

// idsAsIs checks the Parquet field ids of files committed as they are (an
// Iceberg engine's data files carry them) as a commit checks a staged
// file's: against table.json, then the published schema unless table.json
// holds the published ids (publishedIDsAgree).
func idsAsIs(ctx context.Context, st store.Store, t *tablemeta.Table, s *arrow.Schema, ins []staging.Input) error {
	for _, in := range ins {
		if err := fieldIDsAgree(t, s, in); err != nil {
			return err
		}
	}
	return publishedIDsAgree(ctx, st, t, ins)
}

type adopted struct {
	file     manifest.File
	md5      string // the bytes' MD5 as the store keeps it (store.Attrs.ContentMD5), or ""
	schema   string
	arrow    *arrow.Schema
	nullFree []string
	ids      pqscan.FieldIDs
	mod      time.Time
	err      error
}

// adopt lists prefix (one request per 1,000 objects) and reads each data
// file's footer with at most two ranged GETs. With o.VerifyRows it reads
// every file in full for the row checksum, and with legacy computes the
// rowsum128 one as well (Content.Equivalent).
func adopt(ctx context.Context, st store.Store, prefix string, o AdoptOptions, legacy bool) (manifest.Content, time.Time, asIs, error) {
	var objs []store.Attrs
	markers := 0
	for a, err := range st.List(ctx, prefix) {
		if err != nil {
			return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("adopt: list %s: %w", st.URI(prefix), err)
		}
		rel := strings.TrimPrefix(a.Key, prefix)
		if inputfiles.IsEngineMarker(rel) {
			markers++
			continue
		}
		if err := manifest.ValidateFilePath(rel); err != nil {
			return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("%w: adopt %s: %v", ErrBadInput, st.URI(a.Key), err)
		}
		objs = append(objs, a)
	}
	if len(objs) == 0 {
		what := "is empty"
		if markers > 0 {
			what = fmt.Sprintf("holds only %d engine marker(s), no data file", markers)
		}
		return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("%w: nothing to adopt: %s %s (did the engine write there?)", ErrBadInput, st.URI(prefix), what)
	}
	if len(objs) > manifest.MaxFiles {
		return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("%w: %s holds %d files, at most %d per generation", ErrBadInput, st.URI(prefix), len(objs), manifest.MaxFiles)
	}
	out := make([]adopted, len(objs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.Concurrency)
	for i, a := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = adoptFile(ctx, st, prefix, a, o)
		}()
	}
	wg.Wait()
	var c manifest.Content
	var oldest time.Time
	schema := ""
	for i, r := range out {
		if r.err != nil {
			return manifest.Content{}, time.Time{}, asIs{}, r.err
		}
		if i == 0 {
			schema = r.schema
		} else if r.schema != schema {
			return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("%w: %s has\n%s\nbut %s has\n%s", staging.ErrSchemaMismatch,
				st.URI(prefix+r.file.Path), r.schema, st.URI(prefix+out[0].file.Path), schema)
		}
		c.Add(r.file)
		if oldest.IsZero() || r.mod.Before(oldest) {
			oldest = r.mod
		}
	}
	c.Schema = schema
	c.LimitStats(manifest.StatsBudget)
	if c.Rows == 0 && !o.AllowEmpty {
		return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("%w: %w: the %d file(s) under %s hold no rows", ErrBadInput, ErrEmptyCommit, len(c.Files), st.URI(prefix))
	}
	if o.VerifyRows {
		rows, sum, equiv, err := scanRows(ctx, st, prefix, c.Files, legacy)
		if err != nil {
			return manifest.Content{}, time.Time{}, asIs{}, err
		}
		if rows != c.Rows {
			return manifest.Content{}, time.Time{}, asIs{}, fmt.Errorf("%w: %s: the files hold %d rows, their footers say %d", staging.ErrCorrupt, st.URI(prefix), rows, c.Rows)
		}
		c.ContentChecksum, c.Equivalent = sum, equiv
	} else {
		c.ContentChecksum = adoptedChecksum(out)
	}
	return c, oldest, asIsOf(out), nil
}

// minParquetSize is the smallest Parquet file: magic, footer length, magic.
const minParquetSize = 12

// adoptFile reads one file's footer through pqscan.ReadFooter, over ranged
// GETs: the first read takes the last TailSize bytes (Arrow's reader asks
// for the last 64 KiB); a footer longer than that costs one more GET.
func adoptFile(ctx context.Context, st store.Store, prefix string, a store.Attrs, o AdoptOptions) adopted {
	rel := strings.TrimPrefix(a.Key, prefix)
	uri := st.URI(a.Key)
	bad := func(err error) adopted {
		if !errors.Is(err, staging.ErrCorrupt) && !errors.Is(err, staging.ErrUnsupported) {
			err = fmt.Errorf("%w: %w", staging.ErrCorrupt, err)
		}
		return adopted{err: fmt.Errorf("adopt %s: %w", uri, err)}
	}
	if a.Size < minParquetSize {
		return bad(fmt.Errorf("%d bytes: too small for a Parquet file", a.Size))
	}
	r := store.NewTailReader(ctx, st, a.Key, a, o.TailSize)
	// The last 8 bytes (the first GET reads the whole tail window).
	var end [8]byte
	if _, err := r.ReadAt(end[:], a.Size-8); err != nil {
		return adopted{err: fmt.Errorf("adopt %s: %w", uri, changed(err))}
	}
	switch string(end[4:]) {
	case "PAR1":
	case "PARE":
		return bad(fmt.Errorf("%w: encrypted Parquet footer", staging.ErrUnsupported))
	default:
		return bad(errors.New("not a Parquet file (it does not end in PAR1: truncated, or another format)"))
	}
	f, err := pqscan.ReadFooter(r, a.Size)
	start, window := r.Window()
	switch {
	case r.Err() != nil:
		// A store failure (or a file that changed) is not bad input.
		return adopted{err: fmt.Errorf("adopt %s: %w", uri, changed(r.Err()))}
	case err != nil:
		return bad(err)
	case start == 0 && string(window[:4]) != "PAR1":
		return bad(errors.New("not a Parquet file (it does not start with PAR1)"))
	}
	sum, err := manifest.ETagChecksum(r.ETag())
	if err != nil {
		return adopted{err: fmt.Errorf("adopt %s: the store's ETag cannot serve as its checksum: %w", uri, err)}
	}
	mod := a.ModTime
	if mod.IsZero() {
		mod = r.ModTime()
	}
	return adopted{file: manifest.File{Path: rel, Size: a.Size, Rows: f.Rows, Checksum: sum, Columns: f.Columns}, md5: a.ContentMD5, schema: f.Schema, arrow: f.Arrow, nullFree: f.NullFree, ids: f.IDs, mod: mod}
}

// adoptedChecksum is the content checksum of adopted (or copied) files
// whose rows were not read: checksum.OfAdopted over each file's size and
// the token that names its bytes, "md5:<hex>" where the store keeps the
// bytes' MD5 apart from their version (GCS, Azure: a generation or an
// ETag is new with every write, even of the same bytes), else the file's
// "etag:" checksum (S3's ETag and file://'s are derived from the bytes,
// and this is the checksum such a generation has always recorded). The
// same bytes written again, under any names, are then identical content
// on every store.
func adoptedChecksum(out []adopted) string {
	files := make([]manifest.File, len(out))
	for i, r := range out {
		files[i] = manifest.File{Size: r.file.Size, Checksum: r.file.Checksum}
		if r.md5 != "" {
			files[i].Checksum = "md5:" + r.md5
		}
	}
	return checksum.OfAdopted(files)
}

// errChanged: an object changed between two reads of one adoption. It is
// not retried: an engine still writing may be halfway through its files,
// and adopting them again a moment later could commit an incomplete set.
var errChanged = errkind.New("changed while it was being adopted (is the engine still writing?)", errkind.ErrPermanent)

// changed names store.ErrChanged of a ranged read as errChanged.
func changed(err error) error {
	if errors.Is(err, store.ErrChanged) {
		return errChanged
	}
	return err
}

// scanRows reads the files in full (spooled to temporary files) and returns
// their rows and row-level content checksum, and with legacy their
// rowsum128 checksum as its equivalent (a second scan of each spooled file,
// only onto a generation that records one).
func scanRows(ctx context.Context, st store.Store, prefix string, files []manifest.File, legacy bool) (int64, string, []string, error) {
	scans := []*pqscan.RowScan{{}}
	if legacy {
		scans = append(scans, &pqscan.RowScan{Algo: checksum.RowSum})
	}
	for _, f := range files {
		if err := scanOne(ctx, st, prefix+f.Path, f, scans); err != nil {
			return 0, "", nil, err
		}
	}
	rows, sum := scans[0].Checksum()
	var equiv []string
	for _, s := range scans[1:] {
		_, e := s.Checksum()
		equiv = append(equiv, e)
	}
	return rows, sum, equiv, nil
}

func scanOne(ctx context.Context, st store.Store, key string, f manifest.File, scans []*pqscan.RowScan) error {
	rc, a, err := st.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("verify rows of %s: %w", st.URI(key), err)
	}
	defer rc.Close()
	if !manifest.SameETag(f.Checksum, a.ETag) || a.Size != f.Size {
		return fmt.Errorf("verify rows of %s: %w", st.URI(key), errChanged)
	}
	tmp, err := os.CreateTemp("", "pswap-adopt-*.parquet")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, rc)
	if err != nil {
		return fmt.Errorf("verify rows of %s: %w", st.URI(key), err)
	}
	for _, scan := range scans {
		if err := scan.Add(ctx, tmp, n, st.URI(key)); err != nil {
			return err
		}
	}
	return nil
}
