package gc

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// deleteBatch is the number of keys deleted per request (S3 DeleteObjects'
// limit), and so the number of keys deleted per pointer re-check.
const deleteBatch = 1000

type collector struct {
	st        store.Store
	o         Options
	protected map[string]map[string]bool // partition -> data generations that Options.Protect names
	// protectedAt is the store's time just before Protect was asked: a
	// generation retired after it may be referenced without being in
	// protected, so the run keeps it as if MinAge covered it.
	protectedAt time.Time
	// gens, in a Table run, records what each partition holds after it,
	// for the batch records (batches.go); nil otherwise.
	gens *generations
}

// newCollector calls Options.Protect once for the run.
func newCollector(ctx context.Context, st store.Store, o Options) (*collector, error) {
	c := &collector{st: st, o: o}
	if o.Protect == nil {
		return c, nil
	}
	at, err := c.now(ctx)
	if err != nil {
		return nil, err
	}
	c.protectedAt = at
	keys, err := o.Protect(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: files to protect: %w", err)
	}
	c.protected = map[string]map[string]bool{}
	for _, k := range keys {
		if part, ok := layout.PartitionOf(k); ok {
			if kd, gen := layout.Classify(part, k); kd == layout.KindData {
				if c.protected[part] == nil {
					c.protected[part] = map[string]bool{}
				}
				c.protected[part][gen] = true
			}
		}
	}
	return c, nil
}

// Partition collects one partition: one listing of its _pswap folder, one
// GET of the pointer (whose history names the generation chain; a manifest
// beyond it costs a GET), one DeleteObjects for the manifests, one more
// listing of the manifests, one DeleteObjects per 1,000 other keys and,
// before each batch after the first, one more GET of the pointer.
func Partition(ctx context.Context, st store.Store, part string, opts Options) (Report, error) {
	r := Report{Partition: part, DryRun: opts.DryRun}
	if err := partition.Validate(part); err != nil {
		return r, err
	}
	o, err := opts.withDefaults()
	if err != nil {
		return r, err
	}
	c, err := newCollector(ctx, st, o)
	if err != nil {
		return r, err
	}
	uploads, uerr := c.listUploads(ctx, layout.MetaPrefixes(part)...)
	r, err = c.collect(ctx, part, nil, time.Time{}, uploads[part])
	err = errors.Join(err, uerr)
	if err != nil && r.Error == "" {
		r.Error = err.Error()
	}
	if o.OnPartition != nil {
		o.OnPartition(r)
	}
	return r, err
}

// Table collects every partition under a key prefix of the table ("" for
// all), Options.Concurrency partitions at a time. It lists the store once
// (plus once for multipart uploads where the store has them); each
// partition then costs what Partition costs, minus its listing. Partitions
// are found by their _pswap folders, so the orphans of a partition that was
// never committed are collected too. A partition that fails does not stop
// the others: its error is in its report and joined into the returned error.
func Table(ctx context.Context, st store.Store, prefix string, opts Options) (TableReport, error) {
	tr := TableReport{DryRun: opts.DryRun, Partitions: []Report{}}
	o, err := opts.withDefaults()
	if err != nil {
		return tr, err
	}
	if err := ValidatePrefix(prefix); err != nil {
		return tr, err
	}
	c, err := newCollector(ctx, st, o)
	if err != nil {
		return tr, err
	}
	uploads, uerr := c.listUploads(ctx, layout.PartitionsRoot+prefix, prefix)
	run := &tableRun{tr: &tr, errs: []error{uerr}, on: o.OnPartition}
	listedAt, err := c.now(ctx)
	if err != nil {
		return tr, err
	}
	c.gens = newGenerations() // for the batch records (batches.go)
	jobs := make(chan partJob)
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Go(func() {
			for j := range jobs {
				r, err := c.collect(ctx, j.part, j.objs, listedAt, uploads[j.part])
				if err != nil {
					c.gens.note(&r, nil, nil, err) // what it holds is unknown
				}
				run.finish(r, err)
			}
		})
	}
	seen := map[string]bool{}
	listErr := sendPartitions(ctx, st, prefix, jobs, seen)
	wg.Wait()
	run.errs = append(run.errs, listErr)
	// Abandoned uploads of partitions that have no object at all.
	if listErr == nil {
		for _, part := range slices.Sorted(maps.Keys(uploads)) {
			if !seen[part] {
				r := Report{Partition: part, DryRun: o.DryRun, Kept: []string{}, KeptReasons: map[string]string{}, Collected: []string{}, Orphans: []string{}, OrphansKept: []string{}}
				err := c.abortUploads(ctx, &r, uploads[part])
				c.gens.note(&r, nil, uploads[part], err)
				run.finish(r, err)
			}
		}
	}
	// The backfills' batch records, once every partition is judged: only
	// after a listing and an uploads' listing that both succeeded.
	if listErr == nil && uerr == nil {
		run.errs = append(run.errs, c.collectBatches(ctx, prefix, listedAt, c.gens, &tr))
	}
	slices.SortFunc(tr.Partitions, func(a, b Report) int { return strings.Compare(a.Partition, b.Partition) })
	for i := range tr.Partitions {
		tr.Totals.Add(&tr.Partitions[i])
	}
	tr.Totals.AddBatches(&tr)
	return tr, errors.Join(run.errs...)
}

// partJob is one partition's objects, as the listing found them.
type partJob struct {
	part string
	objs []store.Attrs
}

// tableRun gathers a Table run's partition reports and errors from its
// workers.
type tableRun struct {
	mu   sync.Mutex
	tr   *TableReport
	errs []error
	on   func(Report) // Options.OnPartition
}

// finish records a partition's report and its error, if any.
func (t *tableRun) finish(r Report, err error) {
	if err != nil {
		r.Error = err.Error()
	}
	if t.on != nil {
		t.on(r)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.Partitions = append(t.tr.Partitions, r)
	if err != nil {
		t.errs = append(t.errs, fmt.Errorf("gc %s: %w", r.Partition, err))
	}
}

// sendPartitions lists prefix and sends each partition's objects to jobs,
// then closes it. A partition's objects lie in two contiguous runs of
// keys, one per layout (package layout): _pswap/p/<partition>/... in the
// listing of the table's _pswap/p/ folder, <partition>/_pswap/... in the
// listing of the legacy partition folders (the root's key=value folders,
// which a delimited listing finds: one request on a table without any).
// Both listings order partitions alike, so their runs are merged as they
// come; each partition is sent as soon as both its runs ended, and marked
// in seen. A run cut short by an error is dropped, never collected.
func sendPartitions(ctx context.Context, st store.Store, prefix string, jobs chan<- partJob, seen map[string]bool) error {
	defer close(jobs)
	send := func(j partJob) error {
		seen[j.part] = true
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	nextNew, stopNew := iter.Pull2(partitionRuns(ctx, st, func(yield func(string, error) bool) {
		yield(layout.PartitionsRoot+prefix, nil)
	}))
	defer stopNew()
	nextOld, stopOld := iter.Pull2(partitionRuns(ctx, st, legacyFolders(ctx, st, prefix)))
	defer stopOld()
	a, aerr, aok := nextNew()
	b, berr, bok := nextOld()
	for {
		switch {
		case aerr != nil:
			return aerr
		case berr != nil:
			return berr
		case !aok && !bok:
			return nil
		case aok && bok && a.part == b.part:
			a.objs = append(a.objs, b.objs...)
			if err := send(a); err != nil {
				return err
			}
			a, aerr, aok = nextNew()
			b, berr, bok = nextOld()
		case aok && (!bok || a.part+"/" < b.part+"/"):
			if err := send(a); err != nil {
				return err
			}
			a, aerr, aok = nextNew()
		default:
			if err := send(b); err != nil {
				return err
			}
			b, berr, bok = nextOld()
		}
	}
}

// legacyFolders yields the folders under prefix that can hold partitions
// of the legacy layout: those whose first segment is a key=value one (not
// the table's _pswap/, metadata/ or _delta_log/), in lexical order.
func legacyFolders(ctx context.Context, st store.Store, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for e, err := range store.ListDelimited(ctx, st, prefix, "/") {
			if err != nil {
				yield("", fmt.Errorf("gc: list %s: %w", st.URI(prefix), err))
				return
			}
			first, _, _ := strings.Cut(e.Key, "/")
			if !e.IsPrefix || !strings.Contains(first, "=") {
				continue
			}
			if !yield(e.Key, nil) {
				return
			}
		}
	}
}

// partitionRuns lists each prefix that prefixes yields, in turn, and
// yields each partition's run of objects (of one layout) when it ends.
func partitionRuns(ctx context.Context, st store.Store, prefixes iter.Seq2[string, error]) iter.Seq2[partJob, error] {
	return func(yield func(partJob, error) bool) {
		var cur partJob
		for prefix, err := range prefixes {
			if err != nil {
				yield(partJob{}, err)
				return
			}
			for a, err := range st.List(ctx, prefix) {
				if err != nil {
					yield(partJob{}, fmt.Errorf("gc: list %s: %w", st.URI(prefix), err))
					return
				}
				part, ok := layout.PartitionOf(a.Key)
				if !ok {
					continue
				}
				if part != cur.part {
					if cur.part != "" && !yield(cur, nil) {
						return
					}
					cur = partJob{part: part}
				}
				cur.objs = append(cur.objs, a)
			}
		}
		if cur.part != "" {
			yield(cur, nil)
		}
	}
}

// ValidatePrefix checks a key prefix for Table: a valid store prefix that
// selects whole partitions. A prefix reaching inside a partition's _pswap
// folder would show GC only part of that partition, and is refused with
// ErrInvalidOptions.
func ValidatePrefix(prefix string) error {
	if err := store.ValidatePrefix(prefix); err != nil {
		return err
	}
	if layout.InsideMeta(prefix) {
		return fmt.Errorf("%w: prefix %q reaches inside a partition's %s folder; select whole partitions",
			ErrInvalidOptions, prefix, layout.MetaDir)
	}
	return nil
}

// now is the store's clock (store.Now).
func (c *collector) now(ctx context.Context) (time.Time, error) { return store.Now(ctx, c.st) }

// orphanCutoff: an uncommitted object whose timestamp is before it is old
// enough that no writer can still commit it.
func (c *collector) orphanCutoff(now time.Time) time.Time {
	return now.Add(-c.o.OrphanAge - c.o.CommitWindow - clockSlack)
}

// collect runs one partition. objs is its listing, begun at listedAt by
// the store's clock, or nil to list it now.
func (c *collector) collect(ctx context.Context, part string, objs []store.Attrs, listedAt time.Time, uploads []store.Upload) (Report, error) {
	r := Report{Partition: part, DryRun: c.o.DryRun, Kept: []string{}, KeptReasons: map[string]string{}, Collected: []string{}, Orphans: []string{}, OrphansKept: []string{}}
	if objs != nil && !c.o.DryRun && legacyOnly(part, objs) {
		// A partition of the legacy layout: move it first (swap.Migrate),
		// then list it again, copies included.
		if _, err := swap.Migrate(ctx, c.st, part, swap.Options{}); err != nil {
			return r, fmt.Errorf("migrate: %w", err)
		}
		objs = nil
	}
	if objs == nil {
		var err error
		if listedAt, err = c.now(ctx); err != nil {
			return r, err
		}
		if objs, err = c.list(ctx, part); err != nil {
			return r, err
		}
		if !c.o.DryRun && legacyOnly(part, objs) {
			if _, err := swap.Migrate(ctx, c.st, part, swap.Options{}); err != nil {
				return r, fmt.Errorf("migrate: %w", err)
			}
			if objs, err = c.list(ctx, part); err != nil {
				return r, err
			}
		}
	}
	// Manifests written before listedAt were there for the whole listing.
	err := c.collectListed(ctx, &r, objs, listedAt.Add(-clockSlack))
	if err == nil {
		err = c.dropLegacyCopies(ctx, &r, objs)
	}
	err = errors.Join(err, c.abortUploads(ctx, &r, uploads), c.pruneFolders(ctx, &r))
	c.gens.note(&r, objs, uploads, err)
	return r, err
}

// dropLegacyCopies deletes, in a migrated partition (its pointer at the
// new key), the legacy keys of the manifests and staged records whose copy
// at the new key was listed with the same size: the migration's copies
// make them redundant (every reader tries the new key first), and what
// remains of pswap's state outside the table's _pswap folder is then the
// moved record alone.
func (c *collector) dropLegacyCopies(ctx context.Context, r *Report, objs []store.Attrs) error {
	part := r.Partition
	size := map[string]int64{}
	for _, a := range objs {
		size[a.Key] = a.Size
	}
	if _, moved := size[layout.PointerKey(part)]; !moved {
		return nil
	}
	deleted := map[string]bool{}
	for _, k := range r.Keys {
		deleted[k] = true
	}
	var keys []string
	for _, a := range objs {
		if !layout.IsLegacy(a.Key) || deleted[a.Key] {
			continue
		}
		var copyKey string
		switch kd, gen := layout.Classify(part, a.Key); kd {
		case layout.KindManifest:
			copyKey = layout.ManifestKey(part, gen)
		case layout.KindStaged:
			copyKey = layout.StagedKey(part, gen)
		default:
			continue
		}
		if n, ok := size[copyKey]; ok && n == a.Size && !deleted[copyKey] {
			keys = append(keys, a.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if err := checkKeys(part, keys); err != nil {
		return err
	}
	if !c.o.DryRun {
		if err := store.DeleteAll(ctx, c.st, keys); err != nil {
			return fmt.Errorf("delete legacy copies: %w", err)
		}
	}
	for _, k := range keys {
		r.Keys = append(r.Keys, k)
		r.Objects++
		r.Bytes += size[k]
	}
	return nil
}

// list lists a partition's objects, in both layouts.
func (c *collector) list(ctx context.Context, part string) ([]store.Attrs, error) {
	var objs []store.Attrs
	for _, prefix := range layout.MetaPrefixes(part) {
		for a, err := range c.st.List(ctx, prefix) {
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", c.st.URI(prefix), err)
			}
			objs = append(objs, a)
		}
	}
	return objs, nil
}

// legacyOnly reports whether a partition's listing has its pointer at the
// legacy key only (a partition GC migrates before it collects it).
func legacyOnly(part string, objs []store.Attrs) bool {
	legacy, moved := false, false
	for _, a := range objs {
		switch a.Key {
		case layout.LegacyPointerKey(part):
			legacy = true
		case layout.PointerKey(part):
			moved = true
		}
	}
	return legacy && !moved
}

// pruneFolders removes the partition's empty generation folders older
// than the orphan cutoff, on a store that has folders of their own
// (store.FolderPruner): an interrupted local write leaves one, which no
// listing shows.
func (c *collector) pruneFolders(ctx context.Context, r *Report) error {
	fp, ok := c.st.(store.FolderPruner)
	if !ok {
		return nil
	}
	now, err := c.now(ctx)
	if err != nil {
		return err
	}
	for _, prefix := range []string{layout.GenerationsPrefix(r.Partition), layout.LegacyGenerationsPrefix(r.Partition)} {
		folders, err := fp.PruneEmptyFolders(ctx, prefix, c.orphanCutoff(now), c.o.DryRun)
		r.EmptyFolders = append(r.EmptyFolders, folders...)
		if err != nil {
			return fmt.Errorf("remove empty folders: %w", err)
		}
	}
	return nil
}

func (c *collector) collectListed(ctx context.Context, r *Report, objs []store.Attrs, listedAt time.Time) error {
	l := &listedRun{c: c, r: r, part: r.Partition, objs: objs, listedAt: listedAt,
		listed: map[string]store.Attrs{}, size: map[string]int64{}, cache: map[string]link{},
		youngs: map[string]string{}, deleted: map[string]bool{}, collected: map[string]bool{}, orphans: map[string]bool{}}
	for _, a := range objs {
		l.size[a.Key] = a.Size
		if k, gen := layout.Classify(l.part, a.Key); k == layout.KindManifest {
			l.listed[gen] = a
		}
	}
	defer func() {
		r.Collected = appendSorted(r.Collected, l.collected)
		r.Orphans = appendSorted(r.Orphans, l.orphans)
	}()
	for attempt := 0; ; attempt++ {
		a, err := l.plan(ctx)
		if err != nil {
			return err
		}
		if err := l.apply(ctx, a); err != nil || !a.changed {
			return err
		}
		r.Recomputed++
		if attempt+1 >= c.o.MaxAttempts {
			return fmt.Errorf("%s: pointer changed %d times while planning: %w", l.part, r.Recomputed, ErrBusy)
		}
	}
}

// listedRun is the collection of one listed partition, over its attempts
// (a new plan each time the pointer changed under the previous one).
type listedRun struct {
	c        *collector
	r        *Report
	part     string
	objs     []store.Attrs // the listing of the partition's _pswap folder
	listedAt time.Time

	listed    map[string]store.Attrs // manifests in the listing, by generation
	size      map[string]int64       // of every listed key
	cache     map[string]link        // manifests read (write-once: valid across attempts)
	youngs    map[string]string      // uncommitted manifests read: generation -> DataGen
	deleted   map[string]bool        // keys deleted so far
	collected map[string]bool        // generations collected so far
	orphans   map[string]bool        // orphan generations deleted so far
}

// attemptPlan is one attempt's plan and what it was made from.
type attemptPlan struct {
	*plan
	ptr     *swap.Base // the pointer the plan was made from
	chain   []link
	changed bool // the pointer changed before the plan was carried out
}

// plan makes an attempt's plan from the clock, then the pointer, then the
// chain it leads to, and records it in the report.
func (l *listedRun) plan(ctx context.Context) (*attemptPlan, error) {
	c, part := l.c, l.part
	// The clock first, then the pointer: a swap that landed before now
	// is in the pointer the plan is made from (see the package
	// documentation), so the plan needs no second look at it before
	// its first deletions.
	now, err := c.now(ctx)
	if err != nil {
		return nil, err
	}
	ptr, err := c.readPointer(ctx, part)
	if err != nil {
		return nil, err
	}
	chain, err := c.walk(ctx, part, ptr, l.cache, l.listed, l.listedAt)
	if err != nil {
		return nil, err
	}
	young, err := c.young(ctx, part, l.objs, chain, now, l.youngs)
	if err != nil {
		return nil, err
	}
	remaining := l.objs
	if len(l.deleted) > 0 {
		remaining = slices.DeleteFunc(slices.Clone(l.objs), func(a store.Attrs) bool { return l.deleted[a.Key] })
	}
	var window time.Duration
	if !c.protectedAt.IsZero() {
		// Keep what was retired since Protect looked, and up to
		// CommitWindow before: a publisher may be writing a snapshot
		// that names it (lakehouse.Options.MaxElapsed).
		window = now.Sub(c.protectedAt) + c.o.CommitWindow + clockSlack
	}
	p, err := makePlan(&planInput{part: part, objects: remaining, ptr: ptr, chain: chain, young: young,
		referenced: c.protected[part], now: now, opts: c.o, window: window})
	if err != nil {
		return nil, err
	}
	r := l.r
	r.Current = ""
	if ptr != nil {
		r.Current = ptr.Pointer.Generation
	}
	r.Kept = append(r.Kept[:0], p.kept...)
	r.KeptReasons = p.keptWhy
	r.OrphansKept = append(r.OrphansKept[:0], p.orphansKept...)
	return &attemptPlan{plan: p, ptr: ptr, chain: chain}, nil
}

// apply carries out a plan (or, with DryRun, reports it), setting
// a.changed when the pointer changed first.
func (l *listedRun) apply(ctx context.Context, a *attemptPlan) error {
	c, part := l.c, l.part
	var manifestKeys, rest []string
	for _, k := range a.keys {
		if kd, _ := layout.Classify(part, k); kd == layout.KindManifest {
			manifestKeys = append(manifestKeys, k)
		} else {
			rest = append(rest, k)
		}
	}
	switch {
	case len(a.keys) == 0:
	case c.o.DryRun:
		cur, err := c.readPointer(ctx, part)
		if err != nil {
			return err
		}
		if a.changed = !samePointer(a.ptr, cur); !a.changed {
			l.record(a.plan, a.keys)
		}
	default:
		// Manifests first. Then the manifests are listed again, and the
		// data that any manifest written since the listing names is
		// spared: a rollback to a generation being collected either
		// finds its target's manifest gone (swap.Rollback reads it again
		// after writing its own) or has its manifest seen here.
		if err := l.del(ctx, a, manifestKeys); err != nil {
			return err
		}
		if !a.changed && len(rest) > 0 {
			rest, err := c.spareNew(ctx, part, rest, l.listed, a.chain, l.youngs)
			if err != nil {
				return err
			}
			if err := l.del(ctx, a, rest); err != nil {
				return err
			}
		}
	}
	return nil
}

// del deletes keys in batches. The first batch of manifests follows the
// pointer read after the clock, the first batch of other keys the re-list
// of manifests (done by apply); before every later batch the pointer is
// read again, and must still be the one the plan was made from (else
// a.changed, and nothing more is deleted).
func (l *listedRun) del(ctx context.Context, a *attemptPlan, keys []string) error {
	for i := 0; len(keys) > 0; i++ {
		if i > 0 {
			cur, err := l.c.readPointer(ctx, l.part)
			if err != nil {
				return err
			}
			if !samePointer(a.ptr, cur) {
				a.changed = true
				return nil
			}
		}
		n := min(len(keys), deleteBatch)
		if err := store.DeleteAll(ctx, l.c.st, keys[:n]); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		for _, k := range keys[:n] {
			l.deleted[k] = true
		}
		l.record(a.plan, keys[:n])
		keys = keys[n:]
	}
	return nil
}

// record adds deleted (or, in a dry run, deletable) keys and the plan's
// generations to the report.
func (l *listedRun) record(p *plan, keys []string) {
	addAll(l.collected, p.collected)
	addAll(l.orphans, p.orphans)
	r := l.r
	for _, k := range keys {
		r.Keys = append(r.Keys, k)
		r.Objects++
		r.Bytes += l.size[k]
	}
}

func addAll(set map[string]bool, xs []string) {
	for _, x := range xs {
		set[x] = true
	}
}

func appendSorted(dst []string, set map[string]bool) []string {
	return append(dst, slices.Sorted(maps.Keys(set))...)
}

func samePointer(a, b *swap.Base) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return swap.SamePointer(*a, *b)
}

// readPointer reads the pointer with its attributes; nil when there is none.
func (c *collector) readPointer(ctx context.Context, part string) (*swap.Base, error) {
	b, err := swap.ReadPointer(ctx, c.st, part)
	if errors.Is(err, swap.ErrNoData) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// readManifest reads a manifest with its timestamp. A missing one matches
// swap.ErrGenerationNotFound.
func (c *collector) readManifest(ctx context.Context, part, gen string) (link, error) {
	m, a, err := swap.ReadManifestHead(ctx, c.st, part, gen) // the chain and data generation, not the files
	if err != nil {
		return link{}, err
	}
	return link{gen: gen, m: m, mod: a.ModTime}, nil
}

// walk follows the generation chain from the pointer back through the
// parents until a manifest is missing (collected earlier) or the first
// generation. A manifest that was listed and written before the listing
// began proves that its parent, written earlier still, would have been
// listed too: an unlisted parent is then known to be gone without a GET.
func (c *collector) walk(ctx context.Context, part string, ptr *swap.Base, cache map[string]link, listed map[string]store.Attrs, listedAt time.Time) ([]link, error) {
	if ptr == nil {
		return nil, nil
	}
	var chain []link
	seen := map[string]bool{}
	// The pointer's history (format 1.1) names the chain's recent
	// generations, their parents and their data generations: a listed
	// manifest of a generation it names needs no GET.
	hist := map[string]link{}
	for i, e := range ptr.Pointer.History {
		a, ok := listed[e.Generation]
		if !ok {
			continue
		}
		parent := ""
		if i+1 < len(ptr.Pointer.History) {
			parent = ptr.Pointer.History[i+1].Generation
		} else if ptr.Pointer.HistoryTruncated {
			continue // its parent is known only to its manifest
		}
		hist[e.Generation] = link{gen: e.Generation, mod: a.ModTime, m: &manifest.Manifest{
			Partition: part, Generation: e.Generation, DataGeneration: e.DataGen(), Parent: parent, RunID: e.RunID}}
	}
	for gen := ptr.Pointer.Generation; gen != ""; {
		if seen[gen] {
			return nil, fmt.Errorf("%w: generation %s appears twice in the chain", swap.ErrCorrupt, gen)
		}
		seen[gen] = true
		l, ok := cache[gen]
		if !ok {
			l, ok = hist[gen]
		}
		if !ok {
			if n := len(chain); n > 0 {
				child, childListed := listed[chain[n-1].gen]
				if _, listedToo := listed[gen]; childListed && !listedToo && child.ModTime.Before(listedAt) {
					break
				}
			}
			var err error
			l, err = c.readManifest(ctx, part, gen)
			if errors.Is(err, swap.ErrGenerationNotFound) {
				if len(chain) == 0 {
					return nil, fmt.Errorf("%w: the pointer names generation %s whose manifest is missing", swap.ErrCorrupt, gen)
				}
				break
			}
			if err != nil {
				return nil, err
			}
			cache[gen] = l
		}
		chain = append(chain, l)
		gen = l.m.Parent
	}
	return chain, nil
}

// spareNew lists the partition's manifests again and removes from keys the
// data of every generation that a manifest missing from the first listing
// names (a commit or a rollback that wrote its manifest meanwhile).
func (c *collector) spareNew(ctx context.Context, part string, keys []string, listed map[string]store.Attrs, chain []link, cache map[string]string) ([]string, error) {
	inChain := map[string]bool{}
	for _, l := range chain {
		inChain[l.gen] = true
	}
	spare := map[string]bool{}
	for a, err := range c.st.List(ctx, layout.ManifestsPrefix(part)) {
		if err != nil {
			return nil, fmt.Errorf("list %s again: %w", c.st.URI(layout.ManifestsPrefix(part)), err)
		}
		k, gen := layout.Classify(part, a.Key)
		if _, wasListed := listed[gen]; k != layout.KindManifest || wasListed || inChain[gen] {
			continue
		}
		dg, ok := cache[gen]
		if !ok {
			l, err := c.readManifest(ctx, part, gen)
			if errors.Is(err, swap.ErrGenerationNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			dg = l.m.DataGen()
			cache[gen] = dg
		}
		spare[dg] = true
	}
	if len(spare) == 0 {
		return keys, nil
	}
	return slices.DeleteFunc(keys, func(k string) bool {
		kd, gen := layout.Classify(part, k)
		return kd == layout.KindData && spare[gen]
	}), nil
}

// young reads the manifests outside the chain that are not old yet (a
// commit or a rollback that may be in flight) and returns the data
// generation each one names, so that the plan keeps that data.
func (c *collector) young(ctx context.Context, part string, objs []store.Attrs, chain []link, now time.Time, cache map[string]string) (map[string]string, error) {
	inChain := map[string]bool{}
	for _, l := range chain {
		inChain[l.gen] = true
	}
	cutoff := c.orphanCutoff(now)
	out := map[string]string{}
	for _, a := range objs {
		k, gen := layout.Classify(part, a.Key)
		if k != layout.KindManifest || inChain[gen] || (!a.ModTime.IsZero() && a.ModTime.Before(cutoff)) {
			continue
		}
		dg, ok := cache[gen]
		if !ok {
			l, err := c.readManifest(ctx, part, gen)
			if errors.Is(err, swap.ErrGenerationNotFound) {
				continue // deleted meanwhile by its writer's clean-up
			}
			if err != nil {
				return nil, err
			}
			dg = l.m.DataGen()
			cache[gen] = dg
		}
		out[gen] = dg
	}
	return out, nil
}

// listUploads lists the multipart uploads under each prefix, by
// partition. A store without multipart uploads has none.
func (c *collector) listUploads(ctx context.Context, prefixes ...string) (map[string][]store.Upload, error) {
	ul, ok := c.st.(store.UploadLister)
	out := map[string][]store.Upload{}
	if !ok {
		return out, nil
	}
	for i, prefix := range prefixes {
		for u, err := range ul.ListUploads(ctx, prefix) {
			if err != nil {
				return out, fmt.Errorf("gc: list multipart uploads: %w", err)
			}
			if i > 0 && strings.HasPrefix(u.Key, layout.PartitionsRoot) {
				continue // listed under the first prefix already
			}
			if part, ok := layout.PartitionOf(u.Key); ok {
				out[part] = append(out[part], u)
			}
		}
	}
	return out, nil
}

// abortUploads aborts the uploads initiated before the orphan cutoff: no
// writer may still commit a generation staged that long ago.
func (c *collector) abortUploads(ctx context.Context, r *Report, uploads []store.Upload) error {
	if len(uploads) == 0 {
		return nil
	}
	ul, ok := c.st.(store.UploadLister)
	if !ok {
		return nil
	}
	now, err := c.now(ctx)
	if err != nil {
		return err
	}
	cutoff := c.orphanCutoff(now)
	var errs []error
	for _, u := range uploads {
		if u.Initiated.IsZero() || !u.Initiated.Before(cutoff) ||
			!(strings.HasPrefix(u.Key, layout.MetaPrefix(r.Partition)) || strings.HasPrefix(u.Key, layout.LegacyMetaPrefix(r.Partition))) {
			continue
		}
		if !c.o.DryRun {
			if err := ul.AbortUpload(ctx, u); err != nil {
				errs = append(errs, fmt.Errorf("abort upload of %s: %w", u.Key, err))
				continue
			}
		}
		r.Uploads++
		r.UploadKeys = append(r.UploadKeys, u.Key)
		r.UploadBytes += u.Size
		if u.TempFile {
			r.UploadKind = UploadTempFile
		} else if r.UploadKind == "" {
			r.UploadKind = UploadMultipart
		}
	}
	return errors.Join(errs...)
}
