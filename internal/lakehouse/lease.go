package lakehouse

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
)

// The publish lease (group commit). Folding in line (fold.go) keeps every
// commit in the view when its publish returns, and so costs every commit
// of a burst the reads of the version that holds it, its marker and the
// waits for the burst's leader: more requests than the commit itself. With
// the lease, one publisher (the holder) writes the versions of a burst and
// the others return as soon as their commit is announced. The lease is for
// contention only: a publisher alone never touches it.
//
//   - A PublishCommit first writes its version optimistically, as without
//     the lease. It takes the lease's path (acquire) only once it lost the
//     race for that version (its version PUT refused: no read-back), or
//     when the version it starts from shows a burst in progress (inBurst:
//     its snapshot names a holder that folded others, lately; the
//     prefetch then stops before the manifest list), or before its first
//     attempt with Options.LeaseFirst.
//   - The path, after a lost race (its marker written by the loss), with
//     LeaseFirst or a burst shown: it writes its fold marker
//     (layout.FoldKey), then reads the lease. A live one (written within
//     its length on the store's clock) makes the commit pending: the
//     publish returns Result.Pending, naming the holder and the version
//     it last wrote; the holder's next version holds the commit. A
//     missing one is created (PUT If-None-Match), an expired one taken
//     over (PUT If-Match its ETag): the publisher holds it, and leads (in
//     the view on return). A take refused is another's take after our
//     marker: pending too. (The first commit after a burst, afterBurst,
//     tries to create the lease first: it most likely finds none.)
//   - The holder's own version (done or failed) folds the markers it
//     lists in its attempt (fold.pending; it took the lease because it
//     expects others). Then it lists the markers (one LIST) while it
//     still holds the lease, beside the deletion of the markers its
//     version settled (its own among them), and while a listing finds
//     any, writes one version that folds them all (fold.pending: their
//     pointers and manifests), starting from the version it wrote last
//     (lastWritten: its bytes, not the store's), and deletes their
//     markers and writes the hint beside its next listing. When a listing
//     is empty it releases the lease (DELETE) and lists once more; if
//     that listing is not empty it takes the lease again (If-None-Match:
//     if another publisher took it in between, that one leads and this
//     one is done). A holder thus works as long as commits keep coming.
//     Its versions that fold others name it (leaseSummaryKey): the
//     burst's later publishers see it.
//
// Why no pending commit is left behind while its holder lives: a pending
// publisher wrote its marker before the read that found the lease live. So
// the marker exists before that lease object went away, whoever removed
// it (its holder's release, a take-over, another's DELETE): a holder's
// release or a take-over is followed by a LIST of its holder (or of the
// taker, after the taker's own release), which therefore sees the marker,
// and folds it or hands it to the publisher that took the lease after it
// (who lists after its own release, later still). A take refused after
// our marker is the same: the object that refused it was written after
// the marker. (TestLeaseFinalList plays the interleaving.)
//
// A holder renews the lease (PUT If-Match) at the start of an attempt once
// a third of its length has passed since it wrote it, so that a slow store
// does not let it expire under it. A holder killed mid-lease leaves it to
// expire (leaseLength after its last write): the markers stay, and the
// next publisher that takes the lease's path takes the expired lease and
// folds them, or `pswap publish` (Publish) reflects them and deletes their
// markers. An optimistic publisher alone takes the path once after a
// burst (afterBurst: the version it starts from names a holder, older than
// the lease), so a holder killed mid-burst has its markers folded by the
// next commit after its lease expired; one killed before its first
// version that folds others leaves no such sign. A commit is thus in the
// view within about the lease's length while its holder lives (the
// holder's next version), else at the next commit after the expiry, or
// the next publish in contention or reconcile; `pswap status` shows the
// view behind its pointer meanwhile.
//
// A lone writer pays nothing for this (seven requests with LeaseFirst:
// its marker, the lease's GET, PUT and DELETE with the marker's, a LIST in
// its attempt, one while it holds the lease and one after). A pending
// commit pays two (its marker, the GET of the lease; three when it finds
// no lease and loses the PUT for it); its holder reads its pointer and
// manifest and deletes its marker (in a batch where the store has one).

// leaseLength is how long a lease lives after its holder's last write of
// it (on the store's clock: the lease's Last-Modified against the store's
// time). A holder renews it every third of it.
const leaseLength = 20 * time.Second

// leaseBody is the lease object's content.
type leaseBody struct {
	// Holder is the holding publisher's random id.
	Holder string `json:"holder"`
	// Version is the latest version the holder wrote or found when it
	// wrote the lease (0: none yet).
	Version int `json:"version"`
	// Seconds is the lease's length.
	Seconds int `json:"seconds"`
	// Partition and Seq are the holder's own commit (empty, 0: none
	// named, a lease of an older pswap). The holder announces no marker
	// for it, so a publisher that takes over the lease after the holder
	// was killed announces it in the holder's stead (announceHolder).
	Partition string `json:"partition,omitempty"`
	Seq       int64  `json:"seq,omitempty"`
}

// parseLease reads a lease object's content: a lease that does not parse
// is one nobody can renew, so it counts as expired.
func parseLease(data []byte) (leaseBody, bool) {
	var b leaseBody
	if err := json.Unmarshal(data, &b); err != nil || b.Holder == "" || b.Seconds <= 0 || b.Seconds > 3600 || b.Version < 0 {
		return leaseBody{}, false
	}
	return b, true
}

// lease is a PublishCommit's part in the lease.
type lease struct {
	mu      sync.Mutex
	holder  string
	etag    string // the ETag of our latest write of it, while held
	held    bool
	lost    bool      // a renewal found it taken over
	wrote   time.Time // when (local clock) this holder last wrote it
	version int       // the latest version this holder wrote or found
	length  time.Duration
	part    string // the holder's own commit (leaseBody.Partition, Seq)
	seq     int64
}

// body is the lease's content as this holder writes it now.
func (l *lease) body() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, _ := json.Marshal(leaseBody{Holder: l.holder, Version: l.version, Seconds: int(l.length / time.Second), Partition: l.part, Seq: l.seq})
	return data
}

// take writes the lease: create it (ifMatch ""), or take over the expired
// one of that ETag. false, nil: another publisher's write came first.
func (l *lease) take(ctx context.Context, p *publisher, ifMatch string) (bool, error) {
	at := p.env.Now()
	a, err := p.st.Put(ctx, layout.LeaseKey, l.body(), store.PutOptions{IfNoneMatch: ifMatch == "", IfMatch: ifMatch})
	if errors.Is(err, store.ErrPrecondition) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	l.etag, l.held, l.lost, l.wrote = a.ETag, true, false, at
	l.mu.Unlock()
	return true, nil
}

// renew rewrites the lease if it is still ours (If-Match our ETag); a
// refused renewal means another publisher took it over: stop renewing.
func (l *lease) renew(ctx context.Context, p *publisher) {
	l.mu.Lock()
	etag, held := l.etag, l.held && !l.lost
	l.mu.Unlock()
	if !held || etag == "" {
		return
	}
	at := p.env.Now()
	a, err := p.st.Put(ctx, layout.LeaseKey, l.body(), store.PutOptions{IfMatch: etag})
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.etag, l.wrote = a.ETag, at
	case errors.Is(err, store.ErrPrecondition):
		l.lost = true
	}
}

// renewDue renews the lease when a third of its length has passed (on
// the local clock) since this holder last wrote it. The holder calls it at
// the start of every attempt: an attempt's reads and writes are bounded by
// the store's round trips, a few seconds under load, well within the
// remaining two thirds.
func (l *lease) renewDue(ctx context.Context, p *publisher) {
	if l == nil {
		return
	}
	l.mu.Lock()
	due := l.held && !l.lost && p.env.Now().Sub(l.wrote) >= l.length/3
	l.mu.Unlock()
	if due {
		l.renew(ctx, p)
	}
}

// release deletes the lease if this publisher still holds it. A delete
// that fails (after retries) leaves the lease to expire: a publisher that
// reads it live meanwhile is pending until the next write or publish, as
// under a killed holder.
func (l *lease) release(ctx context.Context, p *publisher) {
	l.mu.Lock()
	held := l.held && !l.lost
	l.held = false
	l.mu.Unlock()
	if !held {
		return
	}
	_ = p.policy(3).Do(ctx, store.IsRetryable, func(int) error {
		return p.st.Delete(ctx, layout.LeaseKey)
	})
}

// live reports whether a lease read with attrs a is within its length on
// the store's clock. A clock that cannot be read counts it expired: the
// reader then leads (its commit in the view on return) rather than wait on
// a holder it cannot judge.
func (p *publisher) leaseLive(ctx context.Context, b leaseBody, a store.Attrs) bool {
	if a.ModTime.IsZero() {
		return false
	}
	now, err := store.Now(ctx, p.st)
	if err != nil {
		return false
	}
	return now.Sub(a.ModTime) <= time.Duration(b.Seconds)*time.Second
}

// leaseOutcome is what acquire decided.
type leaseOutcome int

const (
	leaseInLine  leaseOutcome = iota // publish in line, as without the lease
	leaseHeld                        // this publisher holds the lease: lead
	leasePending                     // a live holder folds this commit
)

// readLease reads and judges the lease: its content, its attributes, and
// whether it is live (leaseLive). An error is the read's
// (store.ErrNotFound: no lease).
func (p *publisher) readLease(ctx context.Context) (leaseBody, store.Attrs, bool, error) {
	data, a, err := store.ReadAll(ctx, p.st, layout.LeaseKey)
	if err != nil {
		return leaseBody{}, a, false, err
	}
	b, ok := parseLease(data)
	return b, a, ok && p.leaseLive(ctx, b, a), nil
}

// leaseSummaryKey is the snapshot summary property that names the lease
// holder whose version folded other commits announced to it (in its own
// version or in leadRounds): a burst in progress, which a publisher reads
// in the version it starts from (inBurst). A holder's version that folds
// nothing does not name it: a trickle of commits with a lost race now and
// then stays on the optimistic path.
const leaseSummaryKey = "pswap.lease"

// inBurst reports whether s's current snapshot was written for others by
// a lease holder (leaseSummaryKey) less than the lease's length ago, on
// p's clock against the holder's (the snapshot's timestamp; a skew of up to
// the lease's length either way is taken as now): a burst is most likely
// in progress, and a publish of a commit goes to the lease's path
// (acquire, known) before an attempt of its own. Misjudged (skewed
// clocks), it costs requests, never correctness: a commit is still
// pending only under a live lease, or published.
func (p *publisher) inBurst(s *state) bool {
	signal, recent := p.burstSignal(s)
	return signal && recent
}

// afterBurst reports whether s's current snapshot was written for others
// by a lease holder longer than the lease's length ago: the last version
// of a burst that has ended, or whose holder was killed. A publish of a
// commit that starts from it takes the lease's path (acquire, not known)
// once, so that the markers a killed holder left are folded by the next
// commit after its lease expired, not only by the next contended one or
// `pswap publish`. It costs that one publish the lease's three requests;
// its own version folds nothing unless markers were left, so it does not
// name the lease, and the writers after it are optimistic again.
func (p *publisher) afterBurst(s *state) bool {
	signal, recent := p.burstSignal(s)
	return signal && !recent
}

// burstSignal reports whether s's current snapshot names a lease holder
// (leaseSummaryKey), and whether it was written less than the lease's
// length ago (a skew of up to that length either way taken as now).
func (p *publisher) burstSignal(s *state) (signal, recent bool) {
	if s == nil || s.meta == nil {
		return false, false
	}
	cs := s.meta.currentSnapshot()
	if cs == nil || cs.Summary[leaseSummaryKey] == "" {
		return false, false
	}
	age := p.env.Now().Sub(time.UnixMilli(cs.TimestampMs))
	return true, age >= -leaseLength && age <= leaseLength
}

// acquire is a PublishCommit's step into the lease (see the top of this
// file), after it lost the race for a version, or when known (the version
// it starts from shows a burst in progress: inBurst) before its first
// attempt. With leasePending, holder is the live lease's content. Any
// failure to reach the lease is leaseInLine: the publish goes on in line,
// folding as without the lease (fold.go).
func (p *publisher) acquire(ctx context.Context, l *lease, known bool) (leaseOutcome, leaseBody) {
	if !known {
		// Not known held: try to create it.
		if ok, err := l.take(ctx, p, ""); err != nil {
			return leaseInLine, leaseBody{}
		} else if ok {
			return leaseHeld, leaseBody{}
		}
	}
	p.fold.announce(ctx, p)
	if !p.fold.marked {
		return leaseInLine, leaseBody{}
	}
	b, a, live, err := p.readLease(ctx)
	var ifMatch string
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Released since: create it.
	case err != nil:
		return leaseInLine, leaseBody{}
	case live:
		return leasePending, b
	case a.ETag == "":
		return leaseInLine, leaseBody{}
	default:
		ifMatch = a.ETag // expired (its holder killed), or unreadable: take it over
	}
	ok, err := l.take(ctx, p, ifMatch)
	switch {
	case err != nil:
		return leaseInLine, leaseBody{}
	case ok:
		if ifMatch != "" {
			p.announceHolder(ctx, b)
		}
		return leaseHeld, leaseBody{}
	}
	// Another publisher wrote the lease after our marker: it lists after
	// its release, so it folds this commit. Read who, for the result.
	b, _, _, _ = p.readLease(ctx)
	return leasePending, b
}

// announceHolder writes the fold marker of the commit an expired lease
// names as its holder's own (a killed holder's: it announced none, since
// it held the lease), so that the publisher that took the lease over folds
// it with the commits that were pending on that holder, instead of leaving
// it out of the view until the next reconcile or its partition's next
// commit. It costs the take-over one PUT; a marker of a commit already in
// the view is passed over and deleted as any other. A name that is not a
// partition key (a damaged lease) is ignored: the reconcile still
// reflects that commit. A holder's commit of the taker's own partition is
// announced only when it is newer than the taker's (it replaced the
// taker's generation): the taker's own version, written from its commit
// without reading the pointer, would otherwise show the older one.
func (p *publisher) announceHolder(ctx context.Context, b leaseBody) {
	if b.Partition == "" || b.Seq <= 0 || (p.fold != nil && b.Partition == p.fold.part && b.Seq <= p.fold.seq) {
		return
	}
	key := layout.FoldKey(b.Partition, b.Seq)
	if part, seq, ok := layout.ParseFoldKey(key); !ok || part != b.Partition || seq != b.Seq {
		return
	}
	_, _ = p.st.Put(ctx, key, nil, store.PutOptions{})
}

// leadRounds is the holder's work after its own publish (r, err): release
// the lease, list the markers, and while any is left take the lease again
// and write a version that folds them (see the top of this file). settled
// is the markers its own version settled (the commits pending on it that
// it folded, and its own marker). It returns r with the latest version
// written, and the count of commits folded in FoldedOthers.
//
// What a round costs the burst's last commits, after their markers: the
// holder deletes the markers a version settled while it lists again (the
// listing passes over them), and starts each round from the version it
// wrote in the round before (lastWritten: no GET of the hint, the version,
// its manifest list and the group manifests it wrote).
func (p *publisher) leadRounds(ctx context.Context, l *lease, r Result, rerr error, settled []string) Result {
	if rerr == nil {
		l.mu.Lock()
		l.version = max(l.version, r.Version)
		l.mu.Unlock()
	}
	var (
		deleting errgroup.Group // the settled markers' deletion
		skip     map[string]bool
		hinting  = p.hinting // the hint after the version written last
	)
	defer func() {
		_ = deleting.Wait()
		if hinting != nil {
			_ = hinting.Wait()
		}
	}()
	settle := func(keys []string) {
		if len(keys) == 0 {
			return
		}
		skip = make(map[string]bool, len(keys))
		for _, k := range keys {
			skip[k] = true
		}
		// A failure leaves markers, passed over once their commits are
		// reflected.
		if p.opts.Concurrency <= 1 {
			_ = store.DeleteAll(ctx, p.st, keys) // one request at a time
			return
		}
		deleting.Go(func() error { return store.DeleteAll(ctx, p.st, keys) })
	}
	released := false
	release := func() {
		_ = deleting.Wait() // the listing after the release would find them
		l.release(ctx, p)
		released = true
	}
	settle(settled)
	// After its own version, and between the versions it writes for
	// others, the holder lists while it holds the lease; when a listing
	// finds no marker, it releases and lists once more. Released after its
	// own version instead, a burst's lease passed to a newcomer's PUT
	// between the release and the holder's take again: that one's own
	// publish then came first, from a state read before the holder's
	// version (a lost race), before any round for the others.
	prev := p // the publisher of the version written last
	for round := 0; ; round++ {
		if !released && ctx.Err() != nil {
			release()
		}
		if ctx.Err() != nil {
			return r
		}
		q := newPublisher(ctx, p.st, p.opts)
		q.opts.Prefetch = nil
		q.fold = &folding{rounds: true, skip: skip}
		q.holding = l.holder // its versions show the burst (inBurst)
		q.keepGroups = true
		byPart, parts, _ := q.fold.list(ctx, q)
		if len(parts) == 0 {
			if released {
				return r // none left, or the listing failed (the next publish's listing finds them)
			}
			release()
			continue // the listing after the release decides
		}
		if released {
			ok, err := l.take(ctx, p, "")
			if err == nil && !ok {
				return r // another publisher holds it now: it lists after its release
			}
			released = false
		}
		// Taken (or unreachable: fold all the same, no one else may).
		q.fold.listed, q.fold.listedParts = byPart, parts
		if hinting != nil {
			_ = hinting.Wait() // its ETag, for the next hint's PUT
		}
		q.from = prev.lastWritten(ctx, q)
		if p.opts.Concurrency > 1 {
			q.hinting = new(errgroup.Group)
		}
		hinting = q.hinting
		qr, err := q.run(ctx, func(ctx context.Context, s *state) ([]partUpdate, error) {
			l.renewDue(ctx, p)
			q.startAttempt()
			return q.fold.pending(ctx, q, s), nil
		})
		if err != nil {
			release()
			return r // the markers stay: the next publish folds them
		}
		prev = q
		cleared := q.fold.clear
		settle(cleared)
		if qr.Changed {
			r.Version, r.MetadataLocation, r.SnapshotID, r.Partitions = qr.Version, qr.MetadataLocation, qr.SnapshotID, qr.Partitions
			r.Changed = true
			r.Rebases += qr.Rebases
			r.FoldedOthers += q.fold.folded
			l.mu.Lock()
			l.version = max(l.version, qr.Version)
			l.mu.Unlock()
		}
		if len(cleared) == 0 {
			release()
			return r // no progress (unreadable pointers): leave them to the next publish
		}
	}
}

// lastWritten is the state of the version p's latest attempt wrote, made
// from the bytes it wrote as q's load would read them (its groups too: the
// manifests p read or wrote), for q's first attempt: a holder's next round
// reads neither the hint, nor the version, nor its manifest list. nil when
// p wrote none (q loads).
func (p *publisher) lastWritten(ctx context.Context, q *publisher) *state {
	w := p.last
	if w == nil || w.data == nil || w.listData == nil {
		return nil
	}
	s, err := q.readVersion(ctx, w.version, w.data, w.listData)
	if err != nil {
		return nil
	}
	s.hintETag, s.hintFound, s.hintUnread = w.hintETag, w.hintFound, false
	if s.hintFound {
		q.hinted = s.version
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	maps.Copy(q.groups, p.groups)
	for i, mf := range s.list {
		// Parsed with its entry in the list as written (its sequence
		// number assigned there), as readGroup would.
		if data := p.kept[mf.FilePath()]; data != nil && s.refs[i].group != "" && q.groups[mf.FilePath()] == nil {
			if gc, err := parseGroup(mf, data); err == nil {
				q.groups[mf.FilePath()] = gc
			}
		}
	}
	return s
}
