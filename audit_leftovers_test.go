package pswap_test

import (
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// A local write killed while it wrote its first file leaves only a
// temporary file, which listings hide: the audit shows the attempt anyway,
// as an uncommitted one with one unfinished upload of its real size
// (issue 40, item 7).
func TestAuditShowsUnfinishedUploads(t *testing.T) {
	tb, err := pswap.Open(ctx, t.TempDir(), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	const part = "dt=2026-11-28"
	auditCommit(t, tb, part, "", 3, "a")
	gen := manifest.NewGenerationID()
	w, err := tb.Store().NewWriter(ctx, layout.DataPrefix(part, gen)+"part-00000.parquet", store.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	// (never committed nor aborted: the process was killed)
	rows, err := tb.Audit(ctx, pswap.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found *pswap.AuditRow
	for i, r := range rows {
		if r.Generation == gen {
			found = &rows[i]
		}
	}
	if found == nil {
		t.Fatalf("the killed attempt %s is not in the audit: %+v", gen, rows)
	}
	if found.State != "uncommitted" || found.Files == nil || *found.Files != 1 || found.Bytes == nil || *found.Bytes != 4096 ||
		!strings.HasPrefix(found.Why, "1 unfinished upload, no manifest") {
		t.Fatalf("the killed attempt's row: state %s, files %v, bytes %v, why %q", found.State, deref(found.Files), deref(found.Bytes), found.Why)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
