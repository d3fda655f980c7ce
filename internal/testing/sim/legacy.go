package sim

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Tables of the legacy layout (package layout): Config.LegacyGens seeds
// every partition with generations written as a pswap of that layout
// wrote them (data, manifest and pointer under <partition>/_pswap/), before
// any actor starts. The writers' Begin, GC and the migrators then move each
// partition (swap.Migrate) while the others run; the truth follows the
// pointer through the move: the moved record at the legacy key and the
// pointer created from it at the new key are the same version of the
// pointer, not swaps.

// seedLegacy commits Config.LegacyGens generations to every partition in
// the legacy layout, as setup (applied at once, observed as swaps).
func (w *World) seedLegacy() {
	ctx := context.Background()
	for _, part := range w.cfg.Partitions {
		var base *manifest.Pointer
		etag := ""
		for g := range w.cfg.LegacyGens {
			gen := w.newGenerationID()
			var c manifest.Content
			sums := sha256.New()
			for f := range 1 + g%2 {
				body := fmt.Appendf(nil, "legacy-%s-%d/file-%d", part, g, f)
				name := fmt.Sprintf("part-%05d.bin", f)
				if _, err := w.st.Put(ctx, layout.LegacyDataPrefix(part, gen)+name, body, store.PutOptions{IfNoneMatch: true}); err != nil {
					panic(err)
				}
				sum := sha256.Sum256(body)
				c.Add(manifest.File{Path: name, Size: int64(len(body)), Rows: int64(f + 1), Checksum: manifest.SHA256Checksum(sum[:])})
				sums.Write(body)
			}
			c.ContentChecksum = fmt.Sprintf("sim:%x", sums.Sum(nil)[:16])
			now := w.clock.UTC()
			m := &manifest.Manifest{Partition: part, Generation: gen, Content: c, CreatedAt: now, CommittedAt: now,
				Writer: "pswap/legacy", RunID: fmt.Sprintf("legacy-%d", g)}
			if base != nil {
				m.Parent = base.Generation
			}
			md, err := manifest.Encode(m)
			if err != nil {
				panic(err)
			}
			if _, err := w.st.Put(ctx, layout.LegacyManifestKey(part, gen), md, store.PutOptions{IfNoneMatch: true}); err != nil {
				panic(err)
			}
			p := m.PointerAfter(base)
			pd, err := manifest.EncodePointer(p)
			if err != nil {
				panic(err)
			}
			opts := store.PutOptions{IfNoneMatch: true}
			if base != nil {
				opts = store.PutOptions{IfMatch: etag}
			}
			a, err := w.st.Put(ctx, layout.LegacyPointerKey(part), pd, opts)
			if err != nil {
				panic(err)
			}
			base, etag = p, a.ETag
		}
	}
}

// migratorBody moves one partition to the table-level layout.
func (w *World) migratorBody(ms ActorSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		r, err := swap.Migrate(ctx, w.st, ms.Partition, swap.Options{GracePeriod: w.cfg.GracePeriod, MaxAttempts: 4, MaxElapsed: w.cfg.MaxElapsed})
		switch {
		case err != nil:
			return "failed: " + err.Error()
		case r.Migrated:
			return fmt.Sprintf("migrated %s (%d copies)", ms.Partition, r.Copied)
		case r.Base.Pointer == nil:
			return "nothing to migrate"
		}
		return "already migrated"
	}
}

// samePointerVersion reports whether a pointer PUT is the partition's
// current pointer moved, not a swap: the moved record at the legacy key,
// or the new key's pointer created from it (same sequence number and
// generation: a pointer's content never repeats).
func (w *World) samePointerVersion(key string, p *manifest.Pointer, pt *partTruth) bool {
	cur := pt.current()
	if cur == nil || p.Seq != int64(len(pt.hist)) || p.Generation != cur.gen {
		return false
	}
	return p.MovedTo != "" || key == layout.PointerKey(p.Partition)
}

// manifestObj is a generation's manifest on the store, at its key of
// either layout.
func (w *World) manifestObj(part, gen string) (object, bool) {
	if o, ok := w.objs[layout.ManifestKey(part, gen)]; ok {
		return o, true
	}
	o, ok := w.objs[layout.LegacyManifestKey(part, gen)]
	return o, ok
}

// pointerObj is a partition's pointer on the store: at its key, else at
// the legacy key (a partition not moved yet, or a move stopped after its
// fence, whose moved record holds the pointer's content).
func (w *World) pointerObj(part string) (object, bool) {
	if o, ok := w.objs[layout.PointerKey(part)]; ok {
		return o, true
	}
	o, ok := w.objs[layout.LegacyPointerKey(part)]
	return o, ok
}

// manifestData is manifestObj's bytes (nil when there is none).
func (w *World) manifestData(part, gen string) []byte {
	o, _ := w.manifestObj(part, gen)
	return o.data
}

// otherCopy reports whether the manifest at key has a copy at its key of
// the other layout (a migration copied it) that stays on the store.
func (w *World) otherCopy(key, part, gen string) bool {
	other := layout.ManifestKey(part, gen)
	if other == key {
		other = layout.LegacyManifestKey(part, gen)
	}
	_, ok := w.objs[other]
	return ok
}
