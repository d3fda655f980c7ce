package lakehouse

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/store"
)

// oldManifest is a manifest of the current snapshot that a publish
// replaces, with what its name says.
type oldManifest struct {
	mf  iceberg.ManifestFile
	ref manifestRef
}

// liveFiles is the number of data files a manifest holds for readers (its
// deleted entries excluded).
func liveFiles(mf iceberg.ManifestFile) int64 {
	return int64(mf.AddedDataFiles() + mf.ExistingDataFiles())
}

// deletedEntries are the live entries of a replaced manifest, as deleted by
// this publish's snapshot: they keep the data and file sequence numbers
// they were added with (the spec's rule for entries that are not added).
func (p *publisher) deletedEntries(ctx context.Context, mf iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	var live []iceberg.ManifestEntry
	err := p.retryRead(ctx, func() (err error) {
		live, err = p.liveEntries(ctx, mf)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p.deleted(live), nil
}

// liveEntries reads a manifest's live entries once per publish (a
// manifest never changes under its name). A manifest that is missing or
// unreadable (which a reconcile replaces because it is damaged), or that
// lies under another root (a moved table's), has none to record: the
// snapshot still says how many files it deleted, and nothing reads its
// deletions for the table's rows.
func (p *publisher) liveEntries(ctx context.Context, mf iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	if liveFiles(mf) == 0 {
		return nil, nil
	}
	p.mu.Lock()
	live, ok := p.live[mf.FilePath()]
	p.mu.Unlock()
	if ok {
		return live, nil
	}
	if k, err := p.keyOf(mf.FilePath()); err == nil {
		data, _, err := store.ReadAll(ctx, p.st, k)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("read manifest %s: %w", mf.FilePath(), err)
		}
		if err == nil {
			live, _ = readEntries(mf, data)
		}
	}
	p.mu.Lock()
	p.live[mf.FilePath()] = live
	p.mu.Unlock()
	return live, nil
}

// readReplaced starts reading the manifests that a publish of part
// replaces (its group's, and its own written before grouping), beside the
// reads its plan makes, so that they add no round trip. A failed read is
// read again when the manifest is written.
func (p *publisher) readReplaced(ctx context.Context, g *errgroup.Group, s *state, part string) {
	ph, holds := partHash(part), holder(s.refs, part)
	// A partition with append manifests: the ones its next append merges
	// (appends.go); its group's manifest only if the publish needs it.
	apps := p.readMergeable(ctx, g, s, part)
	for i, r := range s.refs {
		mf := s.list[i]
		switch {
		case r.part == ph:
			g.Go(func() error {
				if ctx.Err() == nil { // not after another read of the group failed
					_, _ = p.liveEntries(ctx, mf)
				}
				return nil
			})
		case holds(r) && liveFiles(mf) > 0 && !apps:
			g.Go(func() error {
				if ctx.Err() == nil {
					_, _ = p.readGroup(ctx, mf)
				}
				return nil
			})
		}
	}
}

// readEntries parses a manifest's live entries (sequence numbers
// inherited from mf); the Avro decoder panics on some malformed input,
// which is corruption, not a crash.
func readEntries(mf iceberg.ManifestFile, data []byte) (entries []iceberg.ManifestEntry, err error) {
	defer func() {
		if r := recover(); r != nil {
			entries, err = nil, fmt.Errorf("%s: %w: %v", mf.FilePath(), ErrCorrupt, r)
		}
	}()
	entries, err = iceberg.ReadManifest(mf, bytes.NewReader(data), true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", mf.FilePath(), ErrCorrupt, err)
	}
	return entries, nil
}
