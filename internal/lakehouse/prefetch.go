package lakehouse

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/store"
)

// Prefetch is the latest metadata version read ahead of a publish: the
// version hint, the metadata file and its current manifest list, the three
// reads, one after another, that every publish begins with, and then the
// manifests of the groups the publish replaces (unless the version shows
// a burst in progress, lease.go: then it stops after the metadata file;
// with Options.LeaseFirst it reads nothing). They depend on
// nothing a commit does, so StartPrefetch can start them in the background
// when a commit begins, and Options.Prefetch hands what they read to the
// publish that follows the commit, which then starts from it instead of
// reading it again: three round trips fewer after the commit.
//
// A publish uses a prefetch for its first attempt only, and only if it
// read the metadata of the same table without an error and began at most
// Options.MaxElapsed/2 before (on the local clock of the context it was
// started with, internal/env; see Options.Prefetch for why that bound);
// otherwise the publish reads the metadata itself, as it would without
// one. A publish that starts from a prefetch that was overtaken by a newer
// version loses the race for the version it writes, reads again and
// rebases, as any publish that lost a race does.
type Prefetch struct {
	st       store.Store
	opts     Options  // with defaults
	env      *env.Env // the starting context's
	tableURI string
	at       time.Time // when its reads began, on env's clock
	done     chan struct{}
	cancel   context.CancelFunc

	// Set once done is closed.
	// burst: the latest version shows a burst in progress (inBurst: a
	// lease holder wrote it for others, lately): a publish then most
	// likely returns pending (lease.go), so the prefetch read no manifest
	// list, and the publish goes straight to its marker.
	burst  bool
	s      *state
	hinted int
	err    error
	parts  []string // the partitions whose groups it reads
	// groupsDone is closed once the group manifests are read (after
	// done): groups is set then.
	groupsDone chan struct{}
	groups     map[string]*groupContent // by location

	stopped atomic.Bool
}

// StartPrefetch starts reading the latest metadata version of st's table
// in the background, for a publish with opts (its age is judged by ctx's
// environment's clock), and then the manifests of the groups of parts (the
// partitions the publish will change), which the publish would otherwise
// read beside the pointer. Its reads are not retried: a failed prefetch
// leaves the publish to read for itself. Stop it if no publish follows, or
// let its reads end on their own.
func StartPrefetch(ctx context.Context, st store.Store, opts Options, parts ...string) *Prefetch {
	o := opts.withDefaults()
	ctx, cancel := context.WithCancel(ctx)
	f := &Prefetch{
		st: st, opts: o, env: env.From(ctx), tableURI: tableLocation(st),
		at: env.From(ctx).Now(), done: make(chan struct{}), groupsDone: make(chan struct{}), cancel: cancel, parts: parts,
	}
	overlap.Start(ctx, func() {
		defer close(f.groupsDone)
		defer cancel()
		if o.LeaseFirst && !o.WaitForView {
			// Nothing: of a burst of writers that start together, every
			// publish but the lease holder's returns pending after its
			// marker and the lease's GET, and reads nothing else; the holder reads for itself once it
			// holds the lease. Read ahead, the version, the hint and the
			// list were 3 requests in vain a pending commit (its lease's
			// GET first, 4: the lease is free when a burst starts), and a
			// lease found live saved none (its GET for the PUT).
			close(f.done)
			return
		}
		p := newLoader(ctx, st, o)
		// Under the lease (not WaitForView), a version that shows a burst
		// in progress ends the reads: its manifest list would be wasted
		// on a publish that returns pending.
		p.stopOnBurst = !o.WaitForView
		f.s, f.err = p.load(ctx, false)
		f.hinted = p.hinted
		if f.err == nil && f.s.burst {
			f.burst, f.s = true, nil
		}
		close(f.done)
		if f.s != nil {
			// No burst in progress: the publish most likely writes a
			// version, and needs the manifests of its groups.
			f.readGroups(ctx, p)
		}
	})
	return f
}

// Stop cancels the prefetch's reads if they are still running and waits
// for them to end. A stopped prefetch serves no publish.
func (f *Prefetch) Stop() {
	if f == nil {
		return
	}
	f.stopped.Store(true)
	f.cancel()
	<-f.groupsDone
}

// Age is the time since the prefetch's reads began, on the local clock of
// the context it was started with.
func (f *Prefetch) Age() time.Duration { return f.env.Now().Sub(f.at) }

// Renew returns f if its reads are still running, or ended without an
// error at most a quarter of its options' MaxElapsed ago (a publish uses
// a prefetch up to half); else it stops f and returns a new prefetch
// started as f was. A writer renews its prefetch before the commit's last
// requests, so that a long upload does not leave the publish with one too
// old to use.
func (f *Prefetch) Renew(ctx context.Context) *Prefetch {
	select {
	case <-f.done:
	default:
		return f // still reading: it began recently enough to finish first
	}
	if f.err == nil && f.Age() <= f.opts.MaxElapsed/4 {
		return f
	}
	f.Stop()
	return StartPrefetch(ctx, f.st, f.opts, f.parts...)
}

// state returns what the prefetch read, for the first attempt of a publish
// by p: nil when it cannot be used (another table, a failed read, older
// than half of p's MaxElapsed), in which case the publish reads for
// itself. It waits for reads still running; an error is ctx's.
func (f *Prefetch) state(ctx context.Context, p *publisher) (*state, error) {
	if f.tableURI != p.tableURI {
		return nil, nil
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.err != nil || f.s == nil || f.stopped.Load() {
		return nil, nil
	}
	if age := f.Age(); age < 0 || age > p.opts.MaxElapsed/2 {
		return nil, nil
	}
	p.hinted, p.oldRoot = f.hinted, f.s.oldRoot
	// The group manifests come later: the publish waits for them only
	// where it would read them itself, beside the pointer (pendingGroups),
	// so that a commit quicker than the prefetch's reads is not held up.
	p.prefetched = f
	return f.s, nil
}

// pendingGroups waits for the group manifests the prefetch a publish
// started from is reading, and hands them to the publisher.
func (p *publisher) pendingGroups(ctx context.Context) {
	f := p.prefetched
	if f == nil {
		return
	}
	select {
	case <-f.groupsDone:
	case <-ctx.Done():
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for loc, gc := range f.groups {
		if p.groups[loc] == nil {
			p.groups[loc] = gc
		}
	}
}

// readGroups reads the manifests of the groups of f.parts in s, at once;
// one that does not read is left to the publish.
func (f *Prefetch) readGroups(ctx context.Context, p *publisher) {
	p.readTries = -1 // a prefetch does not retry
	p.readGroupsFor(ctx, f.s, f.parts)
	f.groups = p.groups
}

// sawBurst reports whether the prefetch found a burst in progress (the
// latest version written for others by a lease holder, inBurst; seen).
func (f *Prefetch) sawBurst(ctx context.Context, p *publisher) bool {
	return f.seen(ctx, p, func() bool { return f.burst })
}

// seen reports whether what found says the prefetch found, for p's table,
// is still news: the prefetch ran, was not stopped, and began less than
// the lease's length ago. It waits for the prefetch's reads.
func (f *Prefetch) seen(ctx context.Context, p *publisher, found func() bool) bool {
	if f == nil || f.tableURI != p.tableURI {
		return false
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return false
	}
	age := f.Age()
	return found() && !f.stopped.Load() && age >= 0 && age < leaseLength
}
