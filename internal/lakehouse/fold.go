package lakehouse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
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
// The costs of a burst are requests to one store and CPU on the writers'
// machines, so a publisher of a burst does as little as it can: a loser's
// next attempt starts from the version it lost to, as read back; a
// publisher that announced decides whether it leads before any read of
// its own; and a follower reads the next version (a GET, which is its
// next read anyway) at waits that grow with the burst's live markers.
//
// A marker is only a hint. A lost one, or one that a folding publisher
// does not see yet, costs a rebase, as before; one left by a killed
// process is passed over once its partition is reflected, and deleted by
// the next leader that finds it older than foldStaleAge. A
// publish that never lost a race writes and lists no marker: one writer
// alone makes the same requests as without folding.

// maxFold bounds the partitions one version folds beside its own commit,
// so that a publish stays bounded by the writers at once, never by the
// table's size.
const maxFold = 128

// foldStaleAge is the age (on the store's clock: against the newest
// marker listed) after which a leader deletes a marker whose commit a
// version already reflects, or whose partition is gone: its owner was
// killed before deleting it.
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
	// listed, listedParts: the markers lead listed for this attempt.
	listed      map[string]*marker
	listedParts []string
	// timeouts counts the waits for a leader that ended without a version.
	timeouts int
	// ownListed: the listing had this commit's own marker.
	ownListed bool
	// exact is the version a wait saw appear, to read next (0: none),
	// and exactData its bytes when they were read already (nil: read
	// them).
	exact     int
	exactData []byte
	// storeNow is the newest marker's time in the latest listing (its
	// own among them): the store's clock, by which markers' ages are
	// judged.
	storeNow time.Time
	// live is how many commits the latest listing showed announced
	// within leaderWindow (its own among them): the burst's size, by
	// which a follower spaces its reads.
	live int
	// rounds: a lease holder's version for others (lease.go): pending
	// folds every listed marker, with no commit of its own, and collects
	// the markers its version settles in clear instead of deleting the
	// stale ones.
	rounds bool
	// holder: this publisher holds the lease for its own commit
	// (lease.go): its own version folds the markers it lists (one LIST,
	// even if it never lost a race: it took the lease because it expects
	// others), and its pending collects clear as in rounds, for the
	// markers of the commits pending on it that its own version folds
	// (their publishers returned: no one else deletes them).
	holder bool
	// skip is the markers list passes over: a lease holder's, settled by
	// its version before and being deleted (lease.go, leadRounds).
	skip map[string]bool
	// clear is, after pending in rounds or as the holder, the marker keys
	// the planned version settles (their commits reflected, folded, or
	// their partition gone): deleted once it is written.
	clear []string
}

// announce writes the commit's marker, once, after a lost race. A failure
// leaves the commit unannounced: the publish goes on without (it is only
// a hint).
func (f *folding) announce(ctx context.Context, p *publisher) {
	if f == nil || f.marked || f.part == "" {
		return // a holder's round (rounds) has no commit of its own to announce
	}
	if _, err := p.st.Put(ctx, layout.FoldKey(f.part, f.seq), nil, store.PutOptions{}); err == nil {
		f.marked = true
	}
}

// lost is announce after a race lost to version v: with the marker
// written, the next attempt reads v itself (loadExact), not the hint and
// the versions past it: it only needs to know whether v carries this
// commit, and who leads the burst.
func (f *folding) lost(ctx context.Context, p *publisher, v int) {
	if f == nil {
		return
	}
	f.announce(ctx, p)
	if f.marked && !f.off {
		f.exact, f.exactData = v, p.lostTo // read back by putVersion: no GET of it again
	}
	p.lostTo = nil
}

// reflected reports, for a publisher that announced its commit, whether
// s already carries it: read from its group's manifest before its pointer,
// which a follower (the most of a burst) then never needs.
func (f *folding) reflected(ctx context.Context, p *publisher, s *state) bool {
	if f == nil || !f.marked {
		return false
	}
	r, have, err := p.recorded(ctx, s, f.part)
	return err == nil && have && r.seq >= f.seq
}

// done deletes the commit's marker once a version reflects the commit.
func (f *folding) done(ctx context.Context, p *publisher) {
	if f == nil || !f.marked {
		return
	}
	_ = p.st.Delete(ctx, layout.FoldKey(f.part, f.seq)) // a leftover is passed over and deleted later
	f.marked = false
}

// marker is one listed commit's marker (the newest of its partition).
type marker struct {
	part string
	seq  int64
	key  string
	mod  time.Time
	keys []store.Attrs // every marker of the partition
}

// list reads the markers of the other partitions (one LIST): by partition,
// the newest sequence number, and the partitions in key order.
func (f *folding) list(ctx context.Context, p *publisher) (map[string]*marker, []string, bool) {
	byPart := map[string]*marker{}
	ownListed := false
	f.storeNow = time.Time{}
	var mods []time.Time
	for a, err := range p.st.List(ctx, layout.FoldPrefix) {
		if err != nil {
			return nil, nil, false
		}
		part, seq, ok := layout.ParseFoldKey(a.Key)
		if !ok || f.skip[a.Key] {
			continue
		}
		if a.ModTime.After(f.storeNow) {
			f.storeNow = a.ModTime
		}
		mods = append(mods, a.ModTime)
		if part == f.part {
			ownListed = true
			continue
		}
		m := byPart[part]
		if m == nil {
			m = &marker{part: part}
			byPart[part] = m
		}
		if seq > m.seq {
			m.seq, m.key, m.mod = seq, a.Key, a.ModTime
		}
		m.keys = append(m.keys, a)
	}
	f.live = 0
	for _, m := range mods {
		if m.IsZero() || f.storeNow.Sub(m) <= leaderWindow {
			f.live++
		}
	}
	parts := make([]string, 0, len(byPart))
	for part := range byPart {
		parts = append(parts, part)
	}
	slices.Sort(parts)
	return byPart, parts, ownListed
}

// errFollow: a new version appeared while this publisher waited for the
// leader of its burst: load it, and see whether it carries this commit.
var errFollow = errors.New("a newer version to read: it may carry this commit")

// lead decides, for an attempt of a publisher that announced its commit
// and found it not yet reflected by s, whether it writes the next version
// itself (true: it leads, or the leader it waited for wrote nothing in
// time) or waits for the leader's (errFollow once a version past s
// exists). The leader of a burst is the announced commit with the least
// marker key, among the markers written within leaderWindow of the newest
// one (a killed owner's marker stops leading) whose commits s does not
// reflect. One leader folds the burst; the others read the one version
// it writes instead of each folding every commit into versions of which
// all but one lose.
//
// It runs before the attempt's own reads (its pointer, its group's
// manifest): a follower makes none of them. The listing is kept for
// pending, when this publisher leads.
func (f *folding) lead(ctx context.Context, p *publisher, s *state) (bool, error) {
	byPart, parts, ownListed := f.list(ctx, p)
	f.listed, f.listedParts, f.ownListed = byPart, parts, ownListed
	if byPart == nil || !ownListed {
		return true, f.probe(ctx, p, s) // a failed listing, or our marker not there: fold what is known
	}
	var newest time.Time
	for _, m := range byPart {
		if m.mod.After(newest) {
			newest = m.mod
		}
	}
	own := layout.FoldKey(f.part, f.seq)
	for _, part := range parts {
		m := byPart[part]
		if m.key > own {
			break // ours is the least of the live markers: lead
		}
		if !m.mod.IsZero() && newest.Sub(m.mod) > leaderWindow {
			continue
		}
		if r, have, err := p.recorded(ctx, s, part); err != nil || (have && r.seq >= m.seq) {
			continue // reflected (its owner is done), or unknown: not a leader to wait for
		}
		if err := f.follow(ctx, p, s); err != nil {
			return false, err // errFollow: read the new version
		}
		return true, nil // the leader wrote nothing in time
	}
	return true, f.probe(ctx, p, s)
}

// probe checks, before a leader writes on a version read without the
// hint (loadExact), that no version past it exists (one GET, of which a
// 404 costs what a HEAD does): if one does, it is read next (errFollow)
// instead of losing the race again.
func (f *folding) probe(ctx context.Context, p *publisher, s *state) error {
	if !s.hintUnread {
		return nil
	}
	if f.next(ctx, p, s) == nil {
		return errFollow
	}
	return nil
}

// next reads the version after s (one GET): when it exists, the next
// attempt starts from it, with the bytes read here (f.exact, f.exactData).
// A GET rather than a HEAD: a follower reads the version it waited for
// anyway, and a 404 costs the store what a HEAD's does.
func (f *folding) next(ctx context.Context, p *publisher, s *state) error {
	data, _, err := store.ReadAll(ctx, p.st, MetadataKey(s.version+1))
	if err != nil {
		return err
	}
	p.floor = max(p.floor, s.version+1)
	f.exact, f.exactData = s.version+1, data
	return nil
}

// leaderWindow is how much older than the newest marker a marker may be
// and still lead its burst.
const leaderWindow = 30 * time.Second

// followLimit bounds how long a publisher waits for its burst's leader to
// write a version before it writes one itself.
const followLimit = 3 * time.Second

// followWaits is a follower's first wait and its longest, for a burst of
// live announced commits: 40 ms and 400 ms for a burst of up to 20 and
// 50, growing with it to 128 ms and 512 ms at 64, at most 500 ms and
// 1.5 s. Each wait longer than needed delays a follower that much; each
// read more costs the store that a burst's leader writes on. In-process
// on a store of 20 ms round trips (TestFoldBurst, 32 publishers), longer
// waits (128 ms, 384 ms) saved under one request a publish and cost 100
// ms; on MinIO at 64 writers, the waits of 40 ms up to 400 ms made 150
// reads a second while the leader wrote.
func followWaits(live int) (first, most time.Duration) {
	first = min(max(time.Duration(live)*2*time.Millisecond, 40*time.Millisecond), 500*time.Millisecond)
	most = min(max(time.Duration(live)*8*time.Millisecond, 400*time.Millisecond), 1500*time.Millisecond)
	return first, most
}

// follow waits until a version past s exists (errFollow) or followLimit
// has passed (nil: write one itself), checking with a GET (next) at
// growing intervals. The intervals grow with the burst (followWaits): its
// leader reads two objects a commit it folds, and every follower's reads
// while it works slow the store it works on.
func (f *folding) follow(ctx context.Context, p *publisher, s *state) error {
	start := p.env.Now()
	wait, most := followWaits(f.live)
	for p.env.Now().Sub(start) < followLimit {
		d := wait/2 + time.Duration(p.int64N(int64(wait)))
		if err := p.env.Sleep(ctx, d); err != nil {
			return err
		}
		wait = min(2*wait, most)
		err := f.next(ctx, p, s)
		if err == nil {
			return errFollow
		}
		if !errors.Is(err, store.ErrNotFound) && !store.IsRetryable(err) {
			return nil // write one ourselves
		}
	}
	f.timeouts++
	return nil
}

// pending returns the updates of the other partitions' commits that s
// does not reflect yet, for an attempt of a publisher that announced its
// own commit and leads (lead listed the markers): their pointers, read
// now (after the attempt's start), and their generations' manifests.
// Nothing of it fails the publish: a partition whose reads fail is left
// to its own publisher.
func (f *folding) pending(ctx context.Context, p *publisher, s *state) []partUpdate {
	if f == nil {
		return nil
	}
	f.folded, f.clear = 0, nil
	if !(f.marked || f.rounds || f.holder) || f.off {
		return nil
	}
	clears := f.rounds || f.holder // no owner left to delete a settled marker
	byPart, parts := f.listed, f.listedParts
	f.listed, f.listedParts = nil, nil
	if byPart == nil {
		if byPart, parts, _ = f.list(ctx, p); byPart == nil {
			return nil
		}
	}
	if len(parts) > maxFold {
		parts = parts[:maxFold]
	}
	// The group manifests the commits' records are in, each read once
	// before the reads below ask for them all at once.
	p.readGroupsFor(ctx, s, parts)
	var (
		mu  sync.Mutex
		ups []partUpdate
	)
	now := f.storeNow
	g, gctx := errgroup.WithContext(ctx)
	// Small reads, one pointer and one manifest a commit: all at once
	// (bounded by maxFold), unless the caller asked for one at a time.
	lim := p.opts.Concurrency
	if lim > 1 {
		lim = max(lim, maxFold)
	}
	g.SetLimit(lim)
	for _, part := range parts {
		mk := byPart[part]
		g.Go(func() error {
			r, have, err := p.recorded(gctx, s, part) // its group's manifest: needed to write it anyway
			if err != nil {
				return nil
			}
			settled := func(seq int64) {
				// A lease holder's version settles the markers up to seq
				// (the pointer's when folded): deleted once it is written.
				mu.Lock()
				defer mu.Unlock()
				for _, a := range mk.keys {
					if _, s, ok := layout.ParseFoldKey(a.Key); ok && s <= seq {
						f.clear = append(f.clear, a.Key)
					}
				}
			}
			stale := func() {
				if clears {
					settled(math.MaxInt64)
					return
				}
				// Its owner deletes it, or was killed before.
				for _, a := range mk.keys {
					if !a.ModTime.IsZero() && now.Sub(a.ModTime) > foldStaleAge {
						_ = p.st.Delete(gctx, a.Key)
					}
				}
			}
			if have && r.seq >= mk.seq {
				if clears {
					settled(r.seq)
					return nil
				}
				stale() // reflected
				return nil
			}
			var b swap.Base
			err = p.retryRead(gctx, func() (err error) {
				b, err = swap.ReadPointer(gctx, p.st, part)
				return err
			})
			if errors.Is(err, swap.ErrNoData) {
				stale() // the partition is gone
				return nil
			}
			if err == nil && have && r.seq >= b.Pointer.Seq && clears {
				settled(r.seq)
			}
			if err != nil || (have && r.seq >= b.Pointer.Seq) {
				return nil // unreadable (left to its publisher), gone, or reflected after all
			}
			var m *manifest.Manifest
			if m, err = p.manifest(gctx, part, b.Pointer.Generation, nil); err != nil {
				return nil
			}
			if len(m.Files) == 0 && !have {
				if clears {
					settled(b.Pointer.Seq) // nothing to show
				}
				return nil
			}
			if clears {
				settled(b.Pointer.Seq)
			}
			mu.Lock()
			ups = append(ups, partUpdate{part: part, seq: b.Pointer.Seq, m: m, folded: true})
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait() // every error is a partition left to its own publisher
	if ctx.Err() != nil {
		return nil
	}
	slices.SortFunc(ups, func(a, b partUpdate) int { return strings.Compare(a.part, b.part) })
	f.folded = len(ups)
	return ups
}

// readGroupsFor reads the group manifests of s that hold the records of
// parts (as recorded would, one by one), at once and each once: a fan-out
// over parts that asks each for its record then finds them read, where
// every one of its reads of a group would read the same manifest (a
// holder folding 30 commits of a month read its group 30 times). One
// that does not read is left to recorded, which reports its error.
func (p *publisher) readGroupsFor(ctx context.Context, s *state, parts []string) {
	if s == nil {
		return
	}
	seen := map[string]bool{}
	var mfs []iceberg.ManifestFile
	for _, part := range parts {
		ph := partHash(part)
		if _, ok := newestAppend(s, ph); ok {
			continue // its appends' records are in their names (appends.go)
		}
		holds := holder(s.refs, part)
		for i, r := range s.refs {
			if mf := s.list[i]; holds(r) && liveFiles(mf) > 0 && !seen[mf.FilePath()] {
				seen[mf.FilePath()] = true
				mfs = append(mfs, mf)
			}
		}
	}
	var g errgroup.Group
	g.SetLimit(max(p.opts.Concurrency, 1))
	for _, mf := range mfs {
		g.Go(func() error {
			_, _ = p.readGroup(ctx, mf)
			return nil
		})
	}
	_ = g.Wait()
}

// RecordedSeq returns the pointer sequence number at which version v of
// the table's Iceberg metadata records partition part, false when it has
// no files of it: whether the version a commit's publish reported holds
// that commit (at its sequence number or past it). It reads the version,
// its manifest list and the manifest of part's group.
func RecordedSeq(ctx context.Context, st store.Store, v int, part string) (int64, bool, error) {
	p := newLoader(ctx, st, Options{})
	s, err := p.readVersion(ctx, v, nil, nil)
	if err != nil {
		return 0, false, err
	}
	r, have, err := p.recorded(ctx, s, part)
	if err != nil || !have {
		return 0, false, err
	}
	return r.seq, true, nil
}

// readVersion reads version v, its metadata file (unless data holds its
// bytes already) and manifest list (unless listData does), as load reads
// the latest (without its repairs), but not the hint.
func (p *publisher) readVersion(ctx context.Context, v int, data, listData []byte) (*state, error) {
	key := MetadataKey(v)
	if data == nil {
		var err error
		if data, _, err = store.ReadAll(ctx, p.st, key); err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
	}
	meta, err := parseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.st.URI(key), err)
	}
	s := &state{version: v, meta: meta, loc: p.loc(key), hintUnread: true}
	s.oldRoot = p.relocatedFrom(meta)
	p.oldRoot = s.oldRoot
	cs := meta.currentSnapshot()
	if cs == nil {
		return s, nil
	}
	lk, err := p.keyOf(cs.ManifestList)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: manifest list: %w", s.loc, ErrCorrupt, err)
	}
	ld := listData
	if ld == nil {
		if ld, _, err = store.ReadAll(ctx, p.st, lk); err != nil {
			return nil, fmt.Errorf("read %s: %w", lk, err)
		}
	}
	if s.list, err = readManifestList(ld); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", cs.ManifestList, ErrCorrupt, err)
	}
	s.refs = make([]manifestRef, len(s.list))
	for i, mf := range s.list {
		var ours bool
		if s.refs[i], ours = parseManifestPath(mf.FilePath()); !ours {
			return nil, foreignSnapshot(s.loc, meta, cs, mf.FilePath())
		}
	}
	return s, nil
}

// loadExact reads the version a follower saw appear (exact), nil if that
// fails: the attempt then loads the latest as any other.
func (f *folding) loadExact(ctx context.Context, p *publisher) *state {
	v, data := f.exact, f.exactData
	f.exact, f.exactData = 0, nil
	s, err := p.readVersion(ctx, v, data, nil)
	if err != nil {
		return nil
	}
	return s
}
