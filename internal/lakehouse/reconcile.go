package lakehouse

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/swap"
)

// reconcile is a Publish of every partition: the pointers it plans from,
// read by the listing that finds the partitions and again when an attempt
// is planned anew.
type reconcile struct {
	p        *publisher
	mu       sync.Mutex
	parts    []string
	pointers map[string]*manifest.Pointer
	// reread: the last reading of the pointers failed, so pointers is
	// older than the attempt's start: read them again.
	reread bool
	// unreadable: partitions whose pointer does not read (corrupt), by
	// partHash: their manifests stay as they are, and errs says why.
	unreadable map[string]bool
	errs       []error
	// orphans are the partition hashes of append manifests whose
	// partition has neither a pointer nor a group member: dropped.
	orphans []string
}

// list finds the partitions and reads their pointers: those reads are the
// first attempt's (its MaxElapsed runs from here). The listing retries a
// pointer read that failed transiently on its own; a failed listing page,
// or a pointer that stays unreadable, lists again. A corrupt pointer
// leaves its partition as the metadata has it (what is current there is
// unknown), and every other partition still publishes.
func (rc *reconcile) list(ctx context.Context) error {
	p := rc.p
	// The caller's own commits' pointers, as they swapped them: no GET.
	known := map[string]*manifest.Pointer{}
	var earliest time.Time
	for _, c := range p.opts.Commits {
		if partition.Validate(c.Partition) != nil || !ownSwap(p, c) {
			continue
		}
		known[c.Partition] = &manifest.Pointer{Partition: c.Partition, Generation: c.Generation, Seq: c.Seq}
		if earliest.IsZero() || c.SwappedAt.Before(earliest) {
			earliest = c.SwappedAt
		}
	}
	var listed []swap.Listed
	if err := p.retryRead(ctx, func() (err error) {
		p.startAttempt()
		if !earliest.IsZero() && earliest.Before(p.started) {
			p.started = earliest // the known pointers' "read" (ownSwap)
		}
		listed, err = swap.ListPointersWith(ctx, p.st, "", swap.ListOptions{Known: known})
		return err
	}); err != nil {
		return err
	}
	rc.parts = make([]string, 0, len(listed))
	rc.pointers = make(map[string]*manifest.Pointer, len(listed))
	rc.unreadable = map[string]bool{}
	for _, l := range listed {
		if l.Err != nil {
			rc.unreadable[partHash(l.Partition)] = true
			rc.errs = append(rc.errs, l.Err)
			continue
		}
		rc.parts = append(rc.parts, l.Partition)
		rc.pointers[l.Partition] = l.Pointer
	}
	return nil
}

// readPointers reads the pointers again, for an attempt planned anew
// because the last one was too slow: its version must land within
// MaxElapsed of the reads it plans from. It replaces them only when every
// read succeeded: a plan from a partial set would drop the partitions
// whose read failed.
func (rc *reconcile) readPointers(ctx context.Context) error {
	p := rc.p
	p.startAttempt()
	rc.reread = true
	fresh := map[string]*manifest.Pointer{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	for _, part := range rc.parts {
		g.Go(func() error {
			b, err := swap.ReadPointer(gctx, p.st, part)
			if errors.Is(err, swap.ErrNoData) {
				return nil
			}
			if err != nil {
				return err
			}
			rc.mu.Lock()
			fresh[part] = b.Pointer
			rc.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	rc.pointers, rc.reread = fresh, false
	return nil
}

// readUnlisted reads the pointers of the partitions that a version
// records but the listing did not find: a rival publish of a partition
// created after the listing (a lost race) recorded them. One with a
// pointer joins the plan, so that a reconcile never drops a partition
// that exists; one without is dropped.
func (rc *reconcile) readUnlisted(ctx context.Context, members map[string]member) error {
	p := rc.p
	var unlisted []string
	for _, part := range slices.Sorted(maps.Keys(members)) {
		if _, ok := rc.pointers[part]; !ok && !rc.unreadable[partHash(part)] {
			unlisted = append(unlisted, part)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	for _, part := range unlisted {
		g.Go(func() error {
			var b swap.Base
			err := p.retryRead(gctx, func() (err error) {
				b, err = swap.ReadPointer(gctx, p.st, part)
				return err
			})
			if errors.Is(err, swap.ErrNoData) {
				return nil
			}
			if err != nil {
				return err
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			rc.pointers[part] = b.Pointer
			rc.parts = append(rc.parts, part)
			return nil
		})
	}
	return g.Wait()
}

// members reads what every group manifest of s records (one GET per
// group, at once), except the damaged ones, which are written anew from
// the pointers.
func (rc *reconcile) members(ctx context.Context, s *state) (map[string]member, error) {
	p := rc.p
	var (
		mu  sync.Mutex
		out = map[string]member{}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	for i, r := range s.refs {
		mf := s.list[i]
		if r.group == "" || s.damaged[r.id()] || liveFiles(mf) == 0 {
			continue
		}
		g.Go(func() error {
			gc, err := p.readGroup(gctx, mf)
			if errors.Is(err, ErrCorrupt) {
				// Written anew from the pointers, as a missing one.
				mu.Lock()
				s.damaged[r.id()] = true
				mu.Unlock()
				return nil
			}
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range gc.members {
				if o, ok := out[m.part]; !ok || m.seq > o.seq {
					out[m.part] = m
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// A partition's append manifests (appends.go) record it past its
	// group's member: their names say so, no read. One whose partition
	// is in no group manifest is dropped (orphans).
	byHash := map[string]string{}
	for part := range out {
		byHash[partHash(part)] = part
	}
	for part := range rc.pointers {
		byHash[partHash(part)] = part
	}
	for _, r := range s.refs {
		if r.app == "" {
			continue
		}
		part, ok := byHash[r.app]
		if !ok {
			rc.orphans = append(rc.orphans, r.app)
			continue
		}
		if o, ok := out[part]; ok && r.seq > o.seq {
			out[part] = member{part: part, seq: r.seq, gen: r.gen}
		}
	}
	return out, nil
}

// plan is the updates that bring s up to date with the pointers: each
// partition whose manifest is older than its pointer, or damaged (written
// anew), and each manifest of a partition that no longer has a pointer.
func (rc *reconcile) plan(ctx context.Context, s *state) ([]partUpdate, error) {
	p := rc.p
	if rc.reread || p.stale() {
		// An attempt thrown away for its age (or whose reading of the
		// pointers failed): read the pointers again.
		if err := rc.readPointers(ctx); err != nil {
			return nil, err
		}
	}
	byHash := map[string]manifestRef{}
	for _, r := range s.refs {
		if r.part != "" {
			byHash[r.part] = r
		}
	}
	damaged, err := p.damagedManifests(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(damaged) > 0 {
		// A damaged manifest is written anew from the pointers, and what
		// it recorded is lost with it: list them again, after this
		// version was read, so that a partition a publish recorded in it
		// after our listing (created since) is not dropped from the view.
		rc.errs = nil
		if err := rc.list(ctx); err != nil {
			return nil, err
		}
	}
	s.damaged = damaged
	rc.orphans = nil
	members, err := rc.members(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := rc.readUnlisted(ctx, members); err != nil {
		return nil, err
	}
	var (
		ups   []partUpdate
		upsMu sync.Mutex
		live  = maps.Clone(rc.unreadable)
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	// In key order: the manifests' reads are requests, and their order
	// must not depend on a map's.
	for _, part := range slices.Sorted(maps.Keys(rc.pointers)) {
		ptr := rc.pointers[part]
		ph := partHash(part)
		live[ph] = true
		r, own := byHash[ph]
		m, grouped := members[part]
		if own && !damaged[ph] && (r.seq > ptr.Seq || r.seq == ptr.Seq && r.gen == ptr.Generation) ||
			grouped && !damaged[unitID(s, part)] && !appendsDamaged(s, ph) && m.newer(ptr.Seq, ptr.Generation) {
			// Already this generation, or a newer one that a publish of a
			// later commit wrote after we read the pointer: a reconcile
			// never brings back older data either.
			continue
		}
		g.Go(func() error {
			m, err := p.manifest(gctx, part, ptr.Generation, nil)
			if err != nil {
				return err
			}
			if len(m.Files) == 0 && !own && !grouped {
				return nil
			}
			upsMu.Lock()
			ups = append(ups, partUpdate{part: part, seq: ptr.Seq, m: m})
			upsMu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Manifests of partitions that no longer have a pointer. A manifest of
	// deletions only (liveFiles 0) has nothing to drop: the next version
	// leaves it out anyway, unless it is damaged and readers would fail
	// on it before then.
	for i, r := range s.refs {
		if r.part != "" && !live[r.part] && (liveFiles(s.list[i]) > 0 || damaged[r.part]) {
			live[r.part] = true // one update for the partition's manifests
			ups = append(ups, partUpdate{drop: r.part})
		}
	}
	for _, part := range slices.Sorted(maps.Keys(members)) {
		if !live[partHash(part)] {
			ups = append(ups, partUpdate{part: part}) // dropped from its group
		}
	}
	for _, ph := range rc.orphans {
		if !live[ph] {
			live[ph] = true
			ups = append(ups, partUpdate{drop: ph})
		}
	}
	// A damaged group none of whose members has a pointer any more: drop it.
	for _, r := range s.refs {
		if r.group != "" && damaged[r.id()] && !slices.ContainsFunc(ups, func(u partUpdate) bool {
			return u.hash() == r.id() || u.part != "" && unitID(s, u.part) == r.id()
		}) {
			ups = append(ups, partUpdate{drop: r.id()})
		}
	}
	slices.SortFunc(ups, func(a, b partUpdate) int { return strings.Compare(a.part, b.part) })
	if len(ups) == 0 && len(s.repairs) == 0 {
		// Up to date, but with groups a merge would fold into the cold
		// manifest (a table published before cold manifests): `pswap
		// publish` writes the version that merges them.
		into, err := p.mergeCold(ctx, s, map[string]*groupUnit{})
		if err != nil {
			return nil, err
		}
		if len(into) > 0 {
			s.repairs = append(s.repairs, fmt.Sprintf("%d group manifests merged into the cold manifest of the groups before the newest", len(into)))
		}
	}
	return ups, nil
}
