package resolvefuzz

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

const part = "dt=2026-11-29"

// commit stages one small file and commits it.
func commit(tb testing.TB, st store.Store, seed string) swap.Result {
	tb.Helper()
	ctx := context.Background()
	txn, err := swap.Begin(ctx, st, part, swap.Options{RunID: seed})
	if err != nil {
		tb.Fatal(err)
	}
	body := []byte("data of " + seed)
	if _, err := st.Put(ctx, txn.DataPrefix()+"part-00000.parquet", body, store.PutOptions{IfNoneMatch: true}); err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(body)
	var c manifest.Content
	c.Add(manifest.File{Path: "part-00000.parquet", Size: int64(len(body)), Rows: 1, Checksum: manifest.SHA256Checksum(sum[:])})
	c.ContentChecksum = fmt.Sprintf("test-sum:%x", sum[:16])
	res, err := txn.Commit(ctx, c)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// FuzzResolveConfined stores arbitrary bytes as a partition's pointer and
// as the manifest it names, and resolves them the way every reader does.
// Whatever the bytes, a reader is never led outside the generation's data
// prefix (docs/design.md I6): Resolve either fails or returns files whose keys
// are valid, clean, and under the prefix of a valid generation of that
// partition; and History terminates.
func FuzzResolveConfined(f *testing.F) {
	ctx := context.Background()
	st := memstore.New()
	first := commit(f, st, "r1")
	commit(f, st, "r2")
	ptr, _, err := store.ReadAll(ctx, st, layout.PointerKey(part))
	if err != nil {
		f.Fatal(err)
	}
	snap, err := swap.Resolve(ctx, st, part)
	if err != nil {
		f.Fatal(err)
	}
	man, _, err := store.ReadAll(ctx, st, layout.ManifestKey(part, snap.Pointer.Generation))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ptr, man)
	cur := snap.Pointer.Generation
	for _, repl := range [][2]string{
		{`"part-00000.parquet"`, `"../../../../etc/passwd"`},
		{`"part-00000.parquet"`, `"/etc/passwd"`},
		{`"part-00000.parquet"`, `"../` + first.Generation + `/part-00000.parquet"`},
		{`"part-00000.parquet"`, `"a/./b.parquet"`},
		{`"part-00000.parquet"`, `"a\\b.parquet"`},
		{`"part-00000.parquet"`, `"a\u0000b.parquet"`},
		{`"generation": "` + cur + `"`, `"generation": "../` + cur + `"`},
		{`"partition": "` + part + `"`, `"partition": "dt=2026-11-29/../x"`},
		{`"version": "1.0"`, `"version": "1.9"`},
		{`"version": "1.0"`, `"version": "2.0"`},
		// The manifest (1.2 since it carries column statistics and its
		// data layout); the two above reach the pointer (1.0).
		{`"version": "1.2"`, `"version": "1.9"`},
		{`"version": "1.2"`, `"version": "2.0"`},
		{`"format": "pswap-manifest",`, `"format": "pswap-manifest", "data_generation": "../../x",`},
		{`"format": "pswap-manifest",`, `"format": "pswap-manifest", "data_generation": "` + first.Generation + `",`},
		{`"format": "pswap-manifest",`, `"format": "pswap-manifest", "parent": "` + cur + `",`},
	} {
		f.Add(ptr, []byte(strings.Replace(string(man), repl[0], repl[1], 1)))
		f.Add([]byte(strings.Replace(string(ptr), repl[0], repl[1], 1)), man)
	}
	f.Add(ptr[:len(ptr)/2], man)
	f.Add(ptr, man[:len(man)-3])
	f.Add([]byte("{}"), []byte("{}"))

	fixed := manifest.NewGenerationID()
	f.Fuzz(func(t *testing.T, pointer, man []byte) {
		st := memstore.New()
		if _, err := st.Put(ctx, layout.PointerKey(part), pointer, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		gen := fixed
		if p, err := manifest.DecodePointer(pointer); err == nil {
			gen = p.Generation
		}
		if manifest.ValidateGenerationID(gen) == nil {
			if _, err := st.Put(ctx, layout.ManifestKey(part, gen), man, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := swap.Resolve(ctx, st, part)
		if err == nil {
			if snap.Pointer.Partition != part || snap.Manifest.Partition != part {
				t.Fatalf("resolved partition %q / %q", snap.Pointer.Partition, snap.Manifest.Partition)
			}
			dg := snap.Manifest.DataGen()
			if manifest.ValidateGenerationID(dg) != nil {
				t.Fatalf("resolved to data generation %q", dg)
			}
			prefix := layout.DataPrefix(part, dg)
			for _, f := range snap.Files {
				if !strings.HasPrefix(f.Key, prefix) || store.ValidateKey(f.Key) != nil || path.Clean(f.Key) != f.Key {
					t.Fatalf("file %q resolves to %q, outside %s", f.Path, f.Key, prefix)
				}
			}
		}
		// One manifest stored: a history longer than that loops or invents.
		if h, err := swap.History(ctx, st, part, 0); err == nil && len(h) > 2 {
			t.Fatalf("history of one stored manifest has %d entries", len(h))
		}
	})
}
