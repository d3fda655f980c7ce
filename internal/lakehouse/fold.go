package lakehouse

import (
	"context"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Folding. Every publish of a commit competes for the same next
// vN.metadata.json; with many writers of distinct partitions at once, one
// wins each version and the others rebase, so the versions, not the
// pointers, bound the commits per second. A PublishCommit that loses the
// race announces its commit with a fold marker (layout.FoldKey: the
// partition and the pointer's sequence number in the key, no content), and
// every later attempt of any PublishCommit that has lost a race lists the
// markers (one LIST) and folds those partitions into the version it
// writes: it reads their pointers (the truth, read within the attempt like
// its own, so MaxElapsed holds for them too) and their generations'
// manifests, as a reconcile would for them. A publisher whose commit a
// version already reflects (at its sequence number or past it) is done:
// it reports that version (Result.Folded) and deletes its marker. So a
// burst of N publishers writes a few versions, not N.
//
// A marker is only a hint. A lost one, or one that a folding publisher
// does not see yet, costs a rebase, as before; one left by a killed
// process is passed over once its partition is reflected, and deleted by
// the next folding publisher that finds it older than foldStaleAge. A
// publish that never lost a race writes and lists no marker: one writer
// alone makes the same requests as without folding.

// maxFold bounds the partitions one version folds beside its own commit,
// so that a publish stays bounded by the writers at once, never by the
// table's size.
const maxFold = 128

// foldStaleAge is the age (the store's timestamp against the local
// clock) after which a folding publisher deletes a marker whose commit a
// version already reflects: its owner was killed before deleting it.
const foldStaleAge = 10 * time.Minute

// folding is a PublishCommit's part in folding.
type folding struct {
	part string
	seq  int64
	// marked: its marker is written (after the first lost race).
	marked bool
	// folded is how many other partitions the last planned attempt folded.
	folded int
	// off: fold nothing more (a version with folded commits failed).
	off bool
}

// announce writes the commit's marker, once, after a lost race. A failure
// leaves the commit unannounced: the publish goes on without (it is only
// a hint).
func (f *folding) announce(ctx context.Context, p *publisher) {
	if f == nil || f.marked {
		return
	}
	if _, err := p.st.Put(ctx, layout.FoldKey(f.part, f.seq), nil, store.PutOptions{}); err == nil {
		f.marked = true
	}
}

// done deletes the commit's marker once a version reflects the commit.
func (f *folding) done(ctx context.Context, p *publisher) {
	if f == nil || !f.marked {
		return
	}
	_ = p.st.Delete(ctx, layout.FoldKey(f.part, f.seq)) // a leftover is passed over and deleted later
	f.marked = false
}

// pending lists the markers of other partitions' commits that s does not
// reflect yet and returns their updates, for an attempt of a publisher
// that announced its own commit (so it is one of a burst): their pointers,
// read now (after the attempt's start), and their generations' manifests.
// Nothing of it fails the publish: a partition whose reads fail is left
// to its own publisher.
func (f *folding) pending(ctx context.Context, p *publisher, s *state) []partUpdate {
	if f == nil || !f.marked || f.off {
		return nil
	}
	f.folded = 0
	type marker struct {
		part string
		seq  int64
		keys []store.Attrs
	}
	byPart := map[string]*marker{}
	for a, err := range p.st.List(ctx, layout.FoldPrefix) {
		if err != nil {
			return nil
		}
		part, seq, ok := layout.ParseFoldKey(a.Key)
		if !ok || part == f.part {
			continue
		}
		m := byPart[part]
		if m == nil {
			m = &marker{part: part}
			byPart[part] = m
		}
		m.seq = max(m.seq, seq)
		m.keys = append(m.keys, a)
	}
	parts := make([]string, 0, len(byPart))
	for part := range byPart {
		parts = append(parts, part)
	}
	slices.Sort(parts)
	if len(parts) > maxFold {
		parts = parts[:maxFold]
	}
	var (
		mu  sync.Mutex
		ups []partUpdate
	)
	now := p.env.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	for _, part := range parts {
		mk := byPart[part]
		g.Go(func() error {
			r, have, err := p.recorded(gctx, s, part) // its group's manifest: needed to write it anyway
			if err != nil {
				return nil
			}
			if have && r.seq >= mk.seq {
				// Reflected: its owner deletes it, or was killed before.
				for _, a := range mk.keys {
					if !a.ModTime.IsZero() && now.Sub(a.ModTime) > foldStaleAge {
						_ = p.st.Delete(gctx, a.Key)
					}
				}
				return nil
			}
			var b swap.Base
			err = p.retryRead(gctx, func() (err error) {
				b, err = swap.ReadPointer(gctx, p.st, part)
				return err
			})
			if err != nil || (have && r.seq >= b.Pointer.Seq) {
				return nil // unreadable (left to its publisher), gone, or reflected after all
			}
			var m *manifest.Manifest
			if m, err = p.manifest(gctx, part, b.Pointer.Generation, nil); err != nil {
				return nil
			}
			if len(m.Files) == 0 && !have {
				return nil
			}
			mu.Lock()
			ups = append(ups, partUpdate{part: part, seq: b.Pointer.Seq, m: m})
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait() // every error is a partition left to its own publisher
	if ctx.Err() != nil {
		return nil
	}
	slices.SortFunc(ups, func(a, b partUpdate) int {
		switch {
		case a.part < b.part:
			return -1
		case a.part > b.part:
			return 1
		}
		return 0
	})
	f.folded = len(ups)
	return ups
}
