package gc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
)

// Batch attempt records (audit.Batch, at layout.BatchKey: one per
// backfill, naming each partition's attempt) are collected by the rule of
// the attempt records they stand for, one per entry: the record of a
// committed generation goes with its manifest, any other with its
// generation's uncommitted objects once they are all old. So a batch
// record goes once no entry's partition holds any object of the entry's
// generation (manifest, data, staged or attempt record, unfinished
// upload) after the run's deletions, and the record itself was last
// written before the orphan cutoff of the partitions' listing, less
// audit.BatchRefresh: a running backfill writes its record again before
// it begins a partition once the record is that old, so an attempt a
// record's entry may still stand for began within BatchRefresh of the
// record's last write, and one that began before the orphan cutoff has
// either landed before the listing (its manifest is listed: the entry
// lives) or can never commit. A record that cannot be read is never
// deleted (the audit names it); a run with a prefix judges only the
// records whose every partition it covers.

// generations records, for a Table run, which generations each partition
// still holds after the run's deletions, and which partitions failed.
type generations struct {
	mu     sync.Mutex
	left   map[string]map[string]bool // partition -> generation -> some object left
	failed map[string]bool
}

func newGenerations() *generations {
	return &generations{left: map[string]map[string]bool{}, failed: map[string]bool{}}
}

// note records what partition r.Partition holds after the run: its
// listed objects (objs) and unfinished uploads, less what r deleted (in a
// dry run: would delete). err marks it failed: its generations unknown.
func (g *generations) note(r *Report, objs []store.Attrs, uploads []store.Upload, err error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.failed[r.Partition] = true
		return
	}
	gone := map[string]bool{}
	for _, k := range r.Keys {
		gone[k] = true
	}
	for _, k := range r.UploadKeys {
		gone[k] = true
	}
	left := g.left[r.Partition]
	if left == nil {
		left = map[string]bool{}
		g.left[r.Partition] = left
	}
	add := func(key string) {
		switch kind, gen := layout.Classify(r.Partition, key); kind {
		case layout.KindManifest, layout.KindStaged, layout.KindData, layout.KindAttempt:
			if !gone[key] {
				left[gen] = true
			}
		}
	}
	for _, a := range objs {
		add(a.Key)
	}
	for _, u := range uploads {
		add(u.Key)
	}
}

// holds reports whether partition part may still hold an object of gen
// (it failed, or the run did not cover it).
func (g *generations) holds(prefix, part, gen string) bool {
	if !strings.HasPrefix(part, prefix) || g.failed[part] {
		return true
	}
	return g.left[part][gen]
}

// collectBatches deletes (in a dry run: reports) the batch records that
// no entry keeps, by the rule above: one listing of layout.BatchesPrefix,
// one GET per record old enough, and one DeleteObjects per 1,000 records
// deleted. listedAt is the store's time before the partitions' listing.
func (c *collector) collectBatches(ctx context.Context, prefix string, listedAt time.Time, g *generations, tr *TableReport) error {
	cutoff := c.orphanCutoff(listedAt).Add(-audit.BatchRefresh)
	var old []store.Attrs
	for a, err := range c.st.List(ctx, layout.BatchesPrefix) {
		if err != nil {
			return fmt.Errorf("gc: list %s: %w", c.st.URI(layout.BatchesPrefix), err)
		}
		if _, ok := layout.ParseBatchKey(a.Key); ok && !a.ModTime.IsZero() && a.ModTime.Before(cutoff) {
			old = append(old, a)
		}
	}
	var (
		doomed []store.Attrs
		errs   []error
	)
	for _, a := range old {
		data, attrs, err := store.ReadAll(ctx, c.st, a.Key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue // removed since the listing
		case err != nil:
			errs = append(errs, fmt.Errorf("gc: read %s: %w", c.st.URI(a.Key), err))
			continue
		case !attrs.ModTime.IsZero() && !attrs.ModTime.Before(cutoff):
			continue // written again since the listing: its run goes on
		}
		b, err := audit.ParseBatch(data)
		if err != nil || layout.BatchKey(b.ID) != a.Key {
			continue // unreadable: kept, and named by the audit
		}
		live := false
		for _, e := range b.Partitions {
			if g.holds(prefix, e.Partition, e.Generation) {
				live = true
				break
			}
		}
		if !live {
			doomed = append(doomed, a)
		}
	}
	slices.SortFunc(doomed, func(a, b store.Attrs) int { return strings.Compare(a.Key, b.Key) })
	for len(doomed) > 0 {
		n := min(len(doomed), deleteBatch)
		keys := make([]string, n)
		for i, a := range doomed[:n] {
			keys[i] = a.Key
		}
		if !c.o.DryRun {
			if err := store.DeleteAll(ctx, c.st, keys); err != nil {
				errs = append(errs, fmt.Errorf("gc: delete batch records: %w", err))
				break
			}
		}
		for _, a := range doomed[:n] {
			tr.BatchKeys = append(tr.BatchKeys, a.Key)
			tr.batchBytes += a.Size
		}
		doomed = doomed[n:]
	}
	return errors.Join(errs...)
}
