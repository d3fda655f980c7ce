package swaptest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// Tables of the legacy layout (everything under each partition's own
// _pswap folder), written as a pswap of that layout writes them: for tests
// of the migration to the table-level layout (package layout).

// OldDecodePointer is an older pswap's strict parse of a pointer (format 1.1):
// a field its version does not know is an error. It is what an older
// binary does with the moved record a migration leaves at the legacy key.
func OldDecodePointer(data []byte) error {
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: manifest.MaxDocumentBytes})
	if p != nil {
		return fmt.Errorf("%v", p)
	}
	r := strictjson.NewReader(top, "1.1")
	if v := r.Str("version", true); v != "1.0" && v != "1.1" {
		return fmt.Errorf("version %s: a newer minor version would be read leniently", v)
	}
	r.Known("format", "version", "partition", "generation", "seq", "parent", "run_id",
		"rows", "bytes", "content_checksum", "committed_at", "files", "history", "history_truncated")
	if p := r.Err(); p != nil {
		return fmt.Errorf("a pointer was damaged outside pswap: %v", p)
	}
	return nil
}

// LegacyCommit commits one generation the way a pswap of the legacy layout
// does (an older binary): data, manifest and pointer under the partition's
// own _pswap folder, the pointer swapped If-Match the one it read. It
// fails, as that binary does, on a pointer it cannot parse (a moved
// record), and returns the store's error of a lost swap.
func LegacyCommit(t testing.TB, st store.Store, part, seed string) (*manifest.Manifest, error) {
	t.Helper()
	data, a, err := store.ReadAll(context.Background(), st, layout.LegacyPointerKey(part))
	var base *manifest.Pointer
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if err := OldDecodePointer(data); err != nil {
			return nil, err
		}
		if base, err = manifest.DecodePointer(data); err != nil {
			return nil, err
		}
	}
	return LegacyCommitOn(t, st, part, seed, base, a.ETag)
}

// LegacyCommitOn is LegacyCommit on a base read earlier (etag "" for none).
func LegacyCommitOn(t testing.TB, st store.Store, part, seed string, base *manifest.Pointer, etag string) (*manifest.Manifest, error) {
	t.Helper()
	gen := manifest.NewGenerationID()
	c := Stage(t, st, layout.LegacyDataPrefix(part, gen), 2, seed)
	now := time.Now().UTC()
	m := &manifest.Manifest{Partition: part, Generation: gen, Content: c, CreatedAt: now, CommittedAt: now, Writer: "pswap/0.0.9", RunID: "run-" + seed}
	if base != nil {
		m.Parent = base.Generation
	}
	md, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), layout.LegacyManifestKey(part, gen), md, store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	pd, err := manifest.EncodePointer(m.PointerAfter(base))
	if err != nil {
		t.Fatal(err)
	}
	opts := store.PutOptions{IfNoneMatch: true}
	if base != nil {
		opts = store.PutOptions{IfMatch: etag}
	}
	_, err = st.Put(context.Background(), layout.LegacyPointerKey(part), pd, opts)
	return m, err
}

// LegacyPartition commits n generations in the legacy layout.
func LegacyPartition(t testing.TB, st store.Store, part string, n int) []*manifest.Manifest {
	t.Helper()
	var ms []*manifest.Manifest
	for i := range n {
		m, err := LegacyCommit(t, st, part, fmt.Sprintf("%s-%d", part, i))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}
