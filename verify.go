package pswap

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/swap"
)

// ErrMismatch: verification found the store disagreeing with the manifest.
var ErrMismatch = errkind.New("verification found a mismatch", errkind.ErrPermanent)

// Problem is one disagreement between a manifest and the store.
type Problem struct {
	File string `json:"file"`
	What string `json:"what"` // "missing", "size", "checksum", "rows", "parquet", "page checksum", "pages", "content checksum", "totals"
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Partition  string    `json:"partition"`
	Generation string    `json:"generation"`
	Files      int       `json:"files"`
	Rows       int64     `json:"rows"`
	Bytes      int64     `json:"bytes"`
	OK         bool      `json:"ok"`
	Problems   []Problem `json:"problems"`
	// Checks are what was checked, in this order when done: "size" and
	// "sha256" of every file's bytes, "etag" (an adopted file's store
	// version, by HEAD: its bytes are not read), "footer-rows" (the Parquet
	// footer's row count), "page-crcs" (every page CRC present),
	// "rows-decoded" (every row decoded and hashed into the manifest's
	// content checksum) or "pages-decoded" (every page decoded, with
	// VerifyOptions.Deep, for a generation whose content checksum is over
	// its bytes, not its rows).
	Checks []string `json:"checks"`
}

// Checks of a VerifyReport.
const (
	CheckSize         = "size"
	CheckSHA256       = "sha256"
	CheckETag         = "etag"
	CheckFooterRows   = "footer-rows"
	CheckPageCRCs     = "page-crcs"
	CheckRowsDecoded  = "rows-decoded"
	CheckPagesDecoded = "pages-decoded"
)

// VerifyOptions tune Verify. The zero value works.
type VerifyOptions struct {
	// Deep also decodes every page of every file of a generation whose
	// content checksum is not over its rows (a Parquet input committed with
	// staging.CheckFooter: files-sha256), so that a damaged page without a
	// CRC, which the bytes' checksum recorded at commit cannot reveal, is
	// found (Problem "pages"). A generation with a row checksum is always
	// decoded; adopted files are checked by their ETags, never read.
	Deep bool
}

// Verify re-reads every file of the current generation and recomputes its
// size, SHA-256 and row count (from the Parquet footer) against the
// manifest, checks its page CRCs, and decodes every row to recompute the
// generation's content checksum in the algorithm the manifest names
// (checksum.ColSum, or checksum.RowSum for generations
// staged before it; adopted generations record no row checksum, nor do
// generations committed with staging.CheckFooter, whose pages are decoded
// only with VerifyOptions.Deep). It returns the report, which says what it
// checked (VerifyReport.Checks), and an error matching ErrMismatch when
// anything differs.
func (p *Partition) Verify(ctx context.Context, opts ...VerifyOptions) (*VerifyReport, error) {
	snap, err := p.Current(ctx)
	if err != nil {
		return nil, err
	}
	return verifySnapshot(ctx, p.t, snap, opts...)
}

// verifySnapshot verifies a resolved generation; see Partition.Verify.
func verifySnapshot(ctx context.Context, t *Table, snap *swap.Snapshot, opts ...VerifyOptions) (*VerifyReport, error) {
	var o VerifyOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	m := snap.Manifest
	r := &VerifyReport{Partition: m.Partition, Generation: m.Generation, Files: len(m.Files), Problems: []Problem{}, Checks: []string{}}
	var rows, bytes int64
	scan := rowScanFor(m.ContentChecksum)
	decodeOnly := false
	if scan == nil && o.Deep {
		// No row checksum to compare with: decode every page all the same
		// (the colsum128 scan decodes every value of every column), and
		// report what does not decode.
		scan, decodeOnly = &pqscan.RowScan{Algo: checksum.ColSum}, true
	}
	if len(snap.Files) == 0 {
		scan = nil // no rows: the checksum covers only the schema, which no file holds
	}
	adopted := false
	for _, f := range snap.Files {
		if strings.HasPrefix(f.Checksum, manifest.ETagChecksumPrefix) {
			scan, adopted = nil, true // adopted files are checked by their ETags, not read
		}
	}
	switch {
	case adopted:
		r.Checks = append(r.Checks, CheckETag, CheckSize, CheckFooterRows)
	default:
		r.Checks = append(r.Checks, CheckSize, CheckSHA256, CheckFooterRows, CheckPageCRCs)
		switch {
		case scan != nil && decodeOnly:
			r.Checks = append(r.Checks, CheckPagesDecoded)
		case scan != nil:
			r.Checks = append(r.Checks, CheckRowsDecoded)
		}
	}
	// A generation staged before INT96 timestamps were read in
	// microseconds (as Spark reads them) recorded them in Arrow's
	// nanoseconds: its content checksum is recomputed that way too.
	var int96 *pqscan.RowScan
	if scan != nil && !decodeOnly && strings.Contains(m.Schema, "timestamp[ns, tz=UTC]") {
		int96 = &pqscan.RowScan{Algo: scan.Algo, Int96Nanos: true}
	}
	for _, f := range snap.Files {
		got, probs, err := verifyFile(ctx, t, f, scan, int96, decodeOnly)
		if len(probs) > 0 && !decodeOnly {
			scan, int96 = nil, nil // the problem is reported; the content cannot match
		}
		if err != nil {
			return nil, err
		}
		r.Problems = append(r.Problems, probs...)
		rows += got.rows
		bytes += got.size
	}
	r.Rows, r.Bytes = rows, bytes
	if scan != nil && !decodeOnly {
		_, sum := scan.Checksum()
		if int96 != nil && sum != m.ContentChecksum {
			if _, old := int96.Checksum(); old == m.ContentChecksum {
				sum = old
			}
		}
		if sum != m.ContentChecksum {
			r.Problems = append(r.Problems, Problem{What: "content checksum", Want: m.ContentChecksum, Got: sum})
		}
	}
	if rows != m.Rows || bytes != m.Bytes {
		r.Problems = append(r.Problems, Problem{What: "totals",
			Want: fmt.Sprintf("%d rows, %d bytes", m.Rows, m.Bytes), Got: fmt.Sprintf("%d rows, %d bytes", rows, bytes)})
	}
	r.OK = len(r.Problems) == 0
	if !r.OK {
		return r, fmt.Errorf("verify %s generation %s: %d problem(s), first: %s %s: %w",
			m.Partition, m.Generation, len(r.Problems), r.Problems[0].File, r.Problems[0].What, ErrMismatch)
	}
	return r, nil
}

// rowScanFor returns the row scan that recomputes content checksum sum, or
// nil when its algorithm is not one of staging's row checksums.
func rowScanFor(sum string) *pqscan.RowScan {
	algo := checksum.Algo(sum)
	if algo != checksum.ColSum && algo != checksum.RowSum {
		return nil
	}
	return &pqscan.RowScan{Algo: algo}
}

type fileFacts struct{ size, rows int64 }

// verifyFile checks one file; scan, when not nil, also decodes its rows
// into the generation's content checksum (decodeOnly: only to find pages
// that do not decode), and int96, when not nil, into the one it had with
// INT96 timestamps read in nanoseconds (a file that fails that reading
// only leaves it without the file's rows).
func verifyFile(ctx context.Context, t *Table, f swap.FileRef, scan, int96 *pqscan.RowScan, decodeOnly bool) (fileFacts, []Problem, error) {
	if strings.HasPrefix(f.Checksum, manifest.ETagChecksumPrefix) {
		return verifyAdopted(ctx, t, f)
	}
	rc, _, err := t.st.Get(ctx, f.Key)
	if errors.Is(err, ErrNotFound) {
		return fileFacts{}, []Problem{{File: f.Path, What: "missing", Want: fmt.Sprintf("%d bytes", f.Size)}}, nil
	}
	if err != nil {
		return fileFacts{}, nil, err
	}
	defer rc.Close()
	// A local file is read in place; a remote object is spooled to a
	// temporary file while it is hashed, so memory stays bounded.
	ra, isRA := rc.(io.ReaderAt)
	var size int64
	h := sha256.New()
	if isRA {
		size, err = io.Copy(h, io.NewSectionReader(ra, 0, 1<<62))
	} else {
		tmp, terr := os.CreateTemp("", "pswap-verify-*.parquet")
		if terr != nil {
			return fileFacts{}, nil, terr
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		size, err = io.Copy(io.MultiWriter(h, tmp), rc)
		ra = tmp
	}
	if err != nil {
		return fileFacts{}, nil, fmt.Errorf("read %s: %w", f.URI, err)
	}
	var probs []Problem
	if size != f.Size {
		probs = append(probs, Problem{File: f.Path, What: "size", Want: fmt.Sprint(f.Size), Got: fmt.Sprint(size)})
	}
	if sum := manifest.SHA256Checksum(h.Sum(nil)); sum != f.Checksum {
		probs = append(probs, Problem{File: f.Path, What: "checksum", Want: f.Checksum, Got: sum})
	}
	pf, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		probs = append(probs, Problem{File: f.Path, What: "parquet", Want: "a readable Parquet footer", Got: err.Error()})
		return fileFacts{size: size}, probs, nil
	}
	rows := pf.NumRows()
	if rows != f.Rows {
		probs = append(probs, Problem{File: f.Path, What: "rows", Want: fmt.Sprint(f.Rows), Got: fmt.Sprint(rows)})
	}
	if _, err := pqscan.VerifyPageChecksums(ra, size); errors.Is(err, staging.ErrPageChecksum) {
		probs = append(probs, Problem{File: f.Path, What: "page checksum", Want: "pages matching their CRCs", Got: err.Error()})
	}
	if scan != nil && len(probs) == 0 {
		if err := scan.Add(ctx, io.NewSectionReader(ra, 0, size), size, f.Path); err != nil {
			if ctx.Err() != nil {
				return fileFacts{}, nil, err
			}
			what := "content checksum"
			if decodeOnly {
				what = "pages"
			}
			probs = append(probs, Problem{File: f.Path, What: what, Want: "rows that decode", Got: err.Error()})
		}
	}
	if int96 != nil && len(probs) == 0 {
		if err := int96.Add(ctx, io.NewSectionReader(ra, 0, size), size, f.Path); err != nil && ctx.Err() != nil {
			return fileFacts{}, nil, err
		}
	}
	return fileFacts{size: size, rows: rows}, probs, nil
}

// verifyAdopted checks a file recorded by its store checksum (adopted or
// copied without being read): its current version must be the recorded one
// (a replaced file has another ETag), its size the recorded size, and its
// footer's row count the recorded rows. It reads the footer with ranged
// GETs, never the whole file.
func verifyAdopted(ctx context.Context, t *Table, f swap.FileRef) (fileFacts, []Problem, error) {
	a, err := t.st.Stat(ctx, f.Key)
	if errors.Is(err, ErrNotFound) {
		return fileFacts{}, []Problem{{File: f.Path, What: "missing", Want: fmt.Sprintf("%d bytes", f.Size)}}, nil
	}
	if err != nil {
		return fileFacts{}, nil, err
	}
	var probs []Problem
	if a.Size != f.Size {
		probs = append(probs, Problem{File: f.Path, What: "size", Want: fmt.Sprint(f.Size), Got: fmt.Sprint(a.Size)})
	}
	if !manifest.SameETag(f.Checksum, a.ETag) {
		probs = append(probs, Problem{File: f.Path, What: "checksum", Want: f.Checksum, Got: manifest.ETagChecksumPrefix + strings.Trim(a.ETag, `"`)})
	}
	r := adoptFile(ctx, t.st, strings.TrimSuffix(f.Key, f.Path), a, AdoptOptions{}.defaults())
	if r.err != nil {
		if !errors.Is(r.err, staging.ErrCorrupt) && !errors.Is(r.err, staging.ErrUnsupported) {
			return fileFacts{}, nil, r.err
		}
		probs = append(probs, Problem{File: f.Path, What: "parquet", Want: "a readable Parquet footer", Got: r.err.Error()})
		return fileFacts{size: a.Size}, probs, nil
	}
	if r.file.Rows != f.Rows {
		probs = append(probs, Problem{File: f.Path, What: "rows", Want: fmt.Sprint(f.Rows), Got: fmt.Sprint(r.file.Rows)})
	}
	return fileFacts{size: a.Size, rows: r.file.Rows}, probs, nil
}
