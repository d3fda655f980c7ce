package lakehouse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Errors a publish reports, checked with errors.Is. ErrCorrupt also
// matches pswap.ErrCorrupt; none but ErrContention is worth a retry.
var (
	// ErrCorrupt: a metadata file, manifest list or version hint that does
	// not parse or names something outside the table (tampered, truncated).
	ErrCorrupt = errkind.New("corrupt Iceberg metadata", errkind.ErrCorrupt)
	// ErrSchema: the data's schema has no Iceberg form, or changes a
	// column's type in a way Iceberg cannot read.
	ErrSchema = errkind.New("schema not publishable as Iceberg", errkind.ErrPermanent)
	// ErrLayout: a partition key whose columns differ from the table's
	// partition columns.
	ErrLayout = errkind.New("partition does not fit the Iceberg partition spec", errkind.ErrPermanent)
	// ErrForeign: the current Iceberg snapshot was written by another
	// writer (a user's Spark INSERT or DELETE on the table): a publish
	// would drop its changes or carry data the pointers do not know, so it
	// refuses and writes nothing.
	ErrForeign = errkind.New("the Iceberg table was changed by another writer", errkind.ErrPermanent)
	// ErrContention: the publish lost the race for the next version more
	// often than Options.MaxAttempts allows. Publishing again converges.
	ErrContention = errors.New("publish kept losing the race for the next metadata version")
)

// Options tune a publish. The zero value works.
type Options struct {
	// Concurrency bounds the requests a publish runs at once (default 16).
	Concurrency int
	// MaxAttempts bounds how often a publish rebases after losing the race
	// for the next version (default 100).
	MaxAttempts int
	// Schema derives a generation's Arrow schema for a table without
	// table.json (default FooterSchema); a table with one is published with
	// its schema.
	Schema SchemaFunc
	// MaxElapsed bounds, on the local clock, the time from reading the
	// pointers of what an attempt publishes to the PUT of its version
	// (default DefaultMaxElapsed): an attempt past it is planned again from
	// fresh pointer reads. Garbage collection relies on it: it keeps what
	// was retired less than its CommitWindow before it asked what the
	// snapshots name (gc.Options.Protect), which must exceed MaxElapsed
	// plus a request's flight, so that a version never names a generation
	// GC may already have collected.
	MaxElapsed time.Duration
	// Prefetch, when not nil, is the latest version read ahead of this
	// publish (StartPrefetch, e.g. while the commit it follows uploaded its
	// data): the first attempt starts from it instead of reading the
	// version hint, the metadata file and its manifest list again, if it
	// read this table without an error at most MaxElapsed/2 ago. An older
	// one is read again: a version names the manifests of the version it
	// follows, and the expiry deletes an unnamed version or manifest
	// older than its MinAge, so the time from the reads an attempt starts
	// from to the PUT of its version stays within MaxElapsed/2 plus
	// MaxElapsed (the attempt's own bound) plus a request's flight, less
	// than the twice MaxElapsed that the expiry's MinAge must exceed
	// (DefaultMetadataMinAge). Everything else is as without a prefetch:
	// the pointer is read right before writing (unless the commit's
	// SwappedAt stands for it), and a version overtaken since the
	// prefetch is a lost race, read again and rebased on. A prefetch that
	// found a burst in progress (lease.go, inBurst) read no manifest list:
	// the publish goes to the lease's path at once. Nil: every attempt
	// reads for itself.
	Prefetch *Prefetch
	// Catalog, when not nil, is the table's entry in an Iceberg catalog:
	// the publish points it at the version it wrote or found latest (see
	// catalog.Catalog). Its failure is a catalog.ErrCatalog error that
	// comes with the Result of the published files.
	Catalog catalog.Catalog
	// Manifests are generations' manifests the caller has (those its
	// commits just wrote): a publish that needs one of them takes it from
	// here instead of a GET. A manifest is written once under its
	// generation's id, so it is what the GET would return; the pointers
	// are still read, and decide which generation is published.
	Manifests []*manifest.Manifest
	// Commits are commits the caller made itself, each with its
	// SwappedAt (a backfill's, before its reconcile): Publish takes their
	// pointers from here instead of a GET each, when each was swapped at
	// most MaxElapsed/2 before (ownSwap), and times its first attempt from
	// the earliest of them (see Commit.SwappedAt for why that keeps GC's
	// bound and never brings older data back). Others are read.
	Commits []Commit
	// LeaseFirst makes PublishCommit take the publish lease's path
	// before its first attempt (lease.go), as a writer that expects a
	// burst of writers at once should: it announces its commit (its
	// marker) and reads the lease; the first of a burst finds none and
	// holds it (its PUT), the others' commits are pending after those
	// two requests (three for the few that find none but lose the PUT),
	// where an optimistic writer of a burst that starts all at once
	// writes a manifest, a list and a version in vain first. Its
	// prefetch reads nothing (the holder reads for itself). A writer
	// alone pays seven requests more (its marker, the lease's GET, PUT
	// and DELETE with the marker's, and three LISTs: in its attempt,
	// after its version, after the release). False (the default):
	// optimistic, the lease's path only after a lost race or when the
	// version it starts from shows a burst in progress.
	LeaseFirst bool
	// WaitForView makes PublishCommit return only once a version holds
	// its commit, even while another publisher holds the publish lease
	// (lease.go): it publishes in line, folding with the others as they
	// race. False (the default): under a live lease holder the commit is
	// announced and the publish returns at once, Result.Pending.
	WaitForView bool
}

// DefaultMaxElapsed is Options.MaxElapsed's default: a third of GC's
// default commit window.
const DefaultMaxElapsed = 5 * time.Minute

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 100
	}
	if o.Schema == nil {
		o.Schema = FooterSchema
	}
	if o.MaxElapsed <= 0 {
		o.MaxElapsed = DefaultMaxElapsed
	}
	return o
}

// Result is what a publish did.
type Result struct {
	// MetadataLocation is the URI of the current vN.metadata.json ("" when
	// the table has no published metadata and nothing to publish).
	MetadataLocation string
	Version          int   // N of MetadataLocation
	SnapshotID       int64 // the current snapshot (0: none)
	// Changed: this publish wrote a new version (false: the metadata already
	// reflected the pointers, an idempotent no-op).
	Changed bool
	// Rebases counts the versions this publish lost to another publisher
	// and rebased on.
	Rebases int
	// Partitions is the number of partitions with files in the metadata.
	Partitions int
	// Repairs says what a reconcile found damaged and rebuilt from the
	// pointers (a version that does not parse, a lost manifest list).
	Repairs []string
	// HintFixed: the metadata was up to date but version-hint.text lagged
	// (it named HintWas, 0 for a missing or unreadable hint), and this
	// publish pointed it at Version.
	HintFixed bool
	HintWas   int
	// Folded: a PublishCommit whose commit another publisher's version
	// (Version) carried, after this one lost the race for a version
	// (see fold.go): it wrote nothing of its own.
	Folded bool
	// FoldedOthers is how many other partitions' commits the version this
	// PublishCommit wrote carried besides its own (with the publish lease:
	// the versions it wrote for others after its own, too).
	FoldedOthers int
	// Pending: a PublishCommit that found the publish lease held by a live
	// publisher (lease.go), after it lost the race for a version or saw a
	// burst in progress: its commit is announced (its fold marker
	// written), and the holder's next version (after Version, the latest
	// the holder had written when it last wrote the lease; 0: none known)
	// holds it, within about the lease's length while the holder lives,
	// else at the next publish that takes the lease's path, or a
	// reconcile. Nothing of its own is in a version (rarely, a version PUT
	// refused at once was its own after all: then the commit is in it).
	Pending bool
	// LeaseHolder is the lease holder's id (Pending).
	LeaseHolder string
}

// Commit describes a committed generation to publish.
type Commit struct {
	Partition  string
	Generation string // the generation the pointer names after the commit
	Seq        int64  // the pointer's sequence number (0: read the pointer)
	// Manifest is the generation's manifest when the caller has it (nil: it
	// is read, one GET, only if the metadata does not already reflect it).
	Manifest *manifest.Manifest
	// Table is the table's table.json as the commit checked its data
	// against it (or wrote it), when the caller has it: the schema this
	// generation is published with (nil: read, one GET, only if the
	// metadata has not seen the generation's schema).
	Table *tablemeta.Table
	// SwappedAt is when the commit sent the pointer PUT that made
	// Generation (of Seq) current, on the local clock of the publish's
	// context (swap.Result.SwappedAt; zero: unknown). A publish that
	// starts within MaxElapsed/2 of it does not read the pointer again:
	// Generation cannot have been replaced before SwappedAt, so an
	// attempt timed from it keeps Options.MaxElapsed's bound for garbage
	// collection, and the version it writes on already says whether a
	// newer commit of the partition was published (then it writes
	// nothing). Zero: the pointer is read, as it must be when the commit
	// is not the caller's own.
	SwappedAt time.Time
}

// PublishCommit brings the metadata up to date with one committed
// generation: it replaces that partition's manifest and keeps every other
// one. It writes nothing when the metadata already has this generation or a
// newer one of the partition.
func PublishCommit(ctx context.Context, st store.Store, c Commit, opts Options) (Result, error) {
	if err := partition.Validate(c.Partition); err != nil {
		return Result{}, err
	}
	p := newPublisher(ctx, st, opts)
	p.doc.given = c.Table
	if c.Seq <= 0 || c.Generation == "" {
		// A caller without the commit's details: the pointer says what is
		// current.
		b, err := swap.ReadPointer(ctx, st, c.Partition)
		if err != nil {
			return Result{}, err
		}
		c.Seq, c.Generation = b.Pointer.Seq, b.Pointer.Generation
		c.SwappedAt = time.Time{} // read now: the attempt reads it again
	}
	if c.Manifest != nil && (c.Manifest.Generation != c.Generation || c.Manifest.Partition != c.Partition) {
		c.Manifest = nil
	}
	p.fold = &folding{part: c.Partition, seq: c.Seq}
	// The publish lease (lease.go), under contention only: a publish
	// writes its version optimistically, as without the lease, and takes
	// the lease's path (enter) once it lost the race for a version, or
	// when the version it starts from shows a burst in progress
	// (inBurst): there it holds the lease and publishes, or announces its
	// commit to the live holder and returns pending.
	var (
		l       *lease // held by this publish
		leasing = !opts.WaitForView
		holder  leaseBody // the live holder's, when pending
	)
	p.optimistic = leasing
	enter := func(ctx context.Context, known bool) error {
		leasing, p.optimistic = false, false
		cand := &lease{holder: p.newUUID().String(), length: leaseLength, part: c.Partition, seq: c.Seq}
		switch out, b := p.acquire(ctx, cand, known); out {
		case leasePending:
			holder = b
			return errPending
		case leaseHeld:
			l = cand
			p.holding = l.holder // a version that folds others shows the burst (inBurst)
			p.fold.holder = true // it deletes the markers its version settles
			p.keepGroups = true  // for its next round (leadRounds)
			if p.opts.Concurrency > 1 {
				p.hinting = new(errgroup.Group) // beside its next listing
			}
		}
		return nil // held, or in line (folding as without the lease)
	}
	pending := func() (Result, error) {
		r := Result{Pending: true, LeaseHolder: holder.Holder, Version: holder.Version, Rebases: p.rebases}
		if holder.Version > 0 {
			r.MetadataLocation = p.loc(MetadataKey(holder.Version))
		}
		return r, nil
	}
	// A lost race enters the lease's path before the next attempt's
	// reads: a pending publish makes none.
	p.afterLost = func(ctx context.Context) error {
		if !leasing {
			return nil
		}
		// Its marker is written (the lost race): the lease's GET next,
		// its PUT only if there is none. A race lost shows a burst, whose
		// lease is most likely held already: pending after the marker and
		// the GET, where the PUT first made it three requests.
		return enter(ctx, true)
	}
	if leasing && (opts.LeaseFirst || opts.Prefetch.sawBurst(ctx, p)) {
		// The marker first, then the lease's GET (no PUT of the lease
		// first): a burst shown, or expected (LeaseFirst), is most
		// likely held.
		if err := enter(ctx, true); err != nil {
			return pending()
		}
	}
	folded := false // reflected by a version another publisher wrote after we lost a race
	plan := func(ctx context.Context, s *state) ([]partUpdate, error) {
		folded = p.rebases > 0
		p.fold.clear = nil // what this attempt's version settles (pending), none yet
		if r, have := p.recordedByName(s, c.Partition); have && r.seq >= c.Seq {
			return nil, nil // already this generation, or a newer one
		}
		if leasing && p.inBurst(s) {
			if err := enter(ctx, true); err != nil {
				return nil, err
			}
		} else if leasing && p.afterBurst(s) {
			// The first commit after a burst sweeps what it left.
			if err := enter(ctx, false); err != nil {
				return nil, err
			}
		}
		l.renewDue(ctx, p)
		if p.fold.reflected(ctx, p, s) {
			return nil, nil // one of a burst, carried by another's version (fold.go)
		}
		if p.fold.marked && !p.fold.off && l == nil {
			// One of a burst: write the next version if this publisher
			// leads it, else wait for the leader's (fold.go), before its
			// own reads: a follower reads nothing it would not use.
			if lead, err := p.fold.lead(ctx, p, s); err != nil || !lead {
				return nil, err
			}
		}
		// About to write: the pointer says what is current now, so that a
		// slow publisher never brings older data back, and an attempt's
		// version lands within MaxElapsed of this read (see
		// Options.MaxElapsed). A commit's own publish knows both from the
		// commit (ownSwap): its generation was current from before
		// SwappedAt, and the version it writes on says whether a newer
		// commit of the partition is published already (recorded, below).
		p.startAttempt()
		own := ownSwap(p, c)
		if own {
			p.started = c.SwappedAt
		}
		var (
			b   swap.Base
			err error
		)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(p.opts.Concurrency) // 1: the pointer, then the manifest
		if !own {
			g.Go(func() error {
				return p.retryRead(gctx, func() (err error) {
					b, err = swap.ReadPointer(gctx, st, c.Partition)
					return err
				})
			})
		}
		p.readReplaced(gctx, g, s, c.Partition)
		if c.Manifest != nil {
			// The footers of its files whose manifest does not record
			// their statistics (one written before manifest version
			// 1.2) too, unless the pointer has moved on from it.
			p.readFooters(gctx, g, swap.Files(st, c.Manifest))
		}
		if err = g.Wait(); err != nil {
			return nil, err
		}
		if !own && b.Pointer.Seq > c.Seq {
			c = Commit{Partition: c.Partition, Generation: b.Pointer.Generation, Seq: b.Pointer.Seq}
			p.doc.given = nil // a later commit's, perhaps of an evolved schema
		}
		r, have, err := p.recorded(ctx, s, c.Partition)
		if err != nil {
			return nil, err
		}
		if have && r.seq >= c.Seq {
			return nil, nil
		}
		m, err := p.commitManifest(ctx, c.Partition, c.Generation, c.Manifest, r, have) // an append's head unexpanded (appends.go)
		if err != nil {
			return nil, err
		}
		c.Manifest = m
		if len(m.Files) == 0 && !have {
			folded = false
			return nil, nil
		}
		folded = false
		ups := []partUpdate{{part: c.Partition, seq: c.Seq, m: m}}
		if more := p.fold.pending(ctx, p, s); len(more) > 0 {
			// Other commits' generations, perhaps of an evolved schema:
			// this attempt reads table.json (after their pointers).
			p.doc.given = nil
			ups = append(ups, more...)
		}
		return ups, nil
	}
	r, err := p.run(ctx, plan)
	if errors.Is(err, errPending) {
		return pending()
	}
	if err != nil && p.fold.folded > 0 && ctx.Err() == nil && !errors.Is(err, ErrContention) {
		// Perhaps another commit's generation failed the version (its
		// schema, its manifest): publish this commit on its own, as
		// without folding, so that it never fails for another's.
		p.fold.off, p.fold.folded = true, 0
		r, err = p.run(ctx, plan)
	}
	var settled []string // the markers the holder's version settles
	if err == nil {
		if l != nil && r.Changed {
			// The holder deletes its own marker (after a lost race) with
			// the markers its version settles, in one batch beside its
			// release (leadRounds).
			settled = p.fold.clear
			if p.fold.marked {
				settled = append(settled, layout.FoldKey(p.fold.part, p.fold.seq))
				p.fold.marked = false
			}
		}
		p.fold.done(ctx, p)
		r.Folded = folded && !r.Changed
		if r.Changed {
			r.FoldedOthers = p.fold.folded
		}
	}
	if l != nil {
		// The holder, done or failed with its own: the others' commits
		// announced to it are folded (lease.go).
		r = p.leadRounds(ctx, l, r, err, settled)
	}
	return r, err
}

// ownSwap reports whether an attempt of p may publish c as its commit
// reported it, without reading its pointer: c comes with the time of the
// pointer PUT that made its generation current (Commit.SwappedAt), at most
// MaxElapsed/2 ago on p's clock, so the attempt, timed from it (stale),
// has at least half of MaxElapsed left to write its version.
//
// Why that keeps a publish's two guarantees without the pointer's GET:
//   - Garbage collection: c's generation became current when the PUT
//     landed, after SwappedAt, so it was retired (replaced by a later
//     commit) after SwappedAt too. A version that names it lands within
//     MaxElapsed of SwappedAt (stale), hence within MaxElapsed of its
//     retirement: GC, which keeps what was retired less than its
//     CommitWindow (more than MaxElapsed) before it asks what the
//     snapshots name, still has it, as after a pointer read (which could
//     only be later than SwappedAt).
//   - A slow publisher never brings older data back: the attempt writes
//     nothing when the version it writes on already records the
//     partition at c.Seq or past it (recorded, the comparison the pointer
//     read fed before), and the version is created if absent, on exactly
//     that base. A newer commit of the partition that is not published
//     yet is published by its own publisher, whose version comes after
//     this one (or finds this one's base newer and writes nothing).
func ownSwap(p *publisher, c Commit) bool {
	if c.SwappedAt.IsZero() || c.Seq <= 0 || c.Generation == "" {
		return false
	}
	age := p.env.Now().Sub(c.SwappedAt)
	return age >= 0 && age <= p.opts.MaxElapsed/2
}

// recordedByName is recorded without reading a group's manifest: what a
// partition's own manifest's name says (written before grouping), or
// what the group's manifest says if this publish has read it already.
func (p *publisher) recordedByName(s *state, part string) (m member, have bool) {
	if f := p.prefetched; f != nil {
		select {
		case <-f.groupsDone:
			p.pendingGroups(context.Background()) // read: it does not wait
		default:
		}
	}
	m, have, _ = p.recordedIn(context.Background(), s, part, false) // reads nothing: no error
	return m, have
}

// Publish reconciles the metadata with every partition's pointer: one GET
// per partition, in the listing that finds them (swap.ListPointers), and one
// per partition whose generation changed, no listing of data. It is
// idempotent: when every partition is already reflected it writes nothing.
// A transient failure of a read is retried (bounded) like the reads of
// PublishCommit. A partition whose pointer does not read (corrupt) keeps
// the manifest the metadata has for it while every other partition is
// published; the error then names it, with the Result of what was
// published. It deletes the fold markers of the commits it reflects
// (pending under a publish lease whose holder was killed: lease.go).
func Publish(ctx context.Context, st store.Store, opts Options) (Result, error) {
	p := newPublisher(ctx, st, opts)
	p.repair = true
	// The fold markers of pending commits (lease.go), listed before the
	// pointers are: the version this reconcile writes or finds reflects
	// every one of them, so they are deleted after it.
	var markers []string
	for a, err := range st.List(ctx, layout.FoldPrefix) {
		if err != nil {
			markers = nil
			break
		}
		if _, _, ok := layout.ParseFoldKey(a.Key); ok {
			markers = append(markers, a.Key)
		}
	}
	rc := &reconcile{p: p}
	if err := rc.list(ctx); err != nil {
		return Result{}, err
	}
	r, err := p.run(ctx, rc.plan)
	if err == nil && len(rc.errs) == 0 && len(markers) > 0 {
		_ = store.DeleteAll(ctx, st, markers) // a marker left is passed over
	}
	if err == nil && len(rc.errs) > 0 {
		err = fmt.Errorf("%d partition(s) kept as the metadata had them, their pointer unreadable (the others are published): %w", len(rc.errs), errors.Join(rc.errs...))
	}
	return r, err
}

// damagedManifests returns the manifests (manifestRef.id: the partition's
// or the group's hash) of the current snapshot that are missing or not the
// length the manifest list records: a reconcile writes them anew from their pointers instead of
// carrying them into the next version, where every reader would fail on
// them. One listing of the metadata folder's manifests, not one request
// per partition.
func (p *publisher) damagedManifests(ctx context.Context, s *state) (map[string]bool, error) {
	if len(s.list) == 0 {
		return nil, nil
	}
	sizes := map[string]int64{}
	for a, err := range p.st.List(ctx, MetadataPrefix+"pswap-") {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", MetadataPrefix, err)
		}
		sizes[a.Key] = a.Size
	}
	damaged := map[string]bool{}
	for i, mf := range s.list {
		key, err := p.keyOf(mf.FilePath())
		if err != nil {
			return nil, fmt.Errorf("%s: %w: manifest: %w", s.loc, ErrCorrupt, err)
		}
		if size, ok := sizes[key]; !ok || size != mf.Length() || !strings.HasPrefix(mf.FilePath(), p.tableURI+"/") {
			// Missing, truncated, or (a moved table) under another root.
			damaged[s.refs[i].id()] = true
		}
	}
	return damaged, nil
}

// partUpdate replaces one partition's manifest.
type partUpdate struct {
	part string             // the partition key ("" with drop)
	seq  int64              // its pointer's sequence number
	m    *manifest.Manifest // its current generation (no files: drop its manifest)
	drop string             // partHash of a manifest to drop without replacement
	// folded: another publisher's commit this one carries (fold.go).
	folded bool
}

func (u partUpdate) hash() string {
	if u.drop != "" {
		return u.drop
	}
	return partHash(u.part)
}

// state is one published version as read from the store.
type state struct {
	version   int
	hintETag  string
	hintFound bool
	meta      *tableMetadata // nil: nothing published yet
	loc       string
	list      []iceberg.ManifestFile // the current snapshot's manifests
	refs      []manifestRef          // what each manifest's name says (zero: not ours)
	// repairs says what a reconcile found damaged and rebuilds (a version
	// that does not parse, a lost manifest list): such a state is written
	// anew even if every partition is up to date.
	repairs []string
	// oldRoot is the root the version records when it is not the
	// table's (a moved table: relocatedFrom), "" when it is.
	oldRoot string
	// damaged is the manifests (manifestRef.id) a reconcile found missing
	// or truncated: written anew from the pointers, never read.
	damaged map[string]bool
	// hintUnread: read without the version hint (a follower's, fold.go),
	// which it leaves to the leader.
	hintUnread bool
	// burst: load stopped after the metadata file, which shows a burst in
	// progress (publisher.stopOnBurst): no manifest list was read, and
	// the state serves no attempt.
	burst bool
	// data and listData are the bytes of the version and its manifest
	// list, in a state this publisher wrote (write; nil otherwise): a
	// lease holder's next round starts from them (lease.go, lastWritten).
	data, listData []byte
}

type publisher struct {
	st       store.Store
	opts     Options
	env      *env.Env // the context's (internal/env): clock, timer, random source
	tableURI string   // tableLocation: the root as written
	// escapedURI is the root as store.Store.URI gives it (percent-encoded
	// for file://), the root of older publishes' locations.
	escapedURI string
	snapshot   int64 // kept across rebases, so that written manifests stay valid

	mu        sync.Mutex
	written   map[string]iceberg.ManifestFile    // by manifest key
	manifests map[string]*manifest.Manifest      // by generation
	live      map[string][]iceberg.ManifestEntry // by manifest location: liveEntries
	groups    map[string]*groupContent           // by manifest location: readGroup
	// prefetched is the prefetch the publish started from, whose group
	// manifests it takes once they are read (pendingGroups).
	prefetched *Prefetch
	footers    map[string][]manifest.ColumnStats // by data file key: the statistics of a footer read (columns)
	rebases    int
	floor      int // a version known to exist (the one we lost to)
	// firstWrite is when (env's clock) the first manifest under the current
	// snapshot id was written (zero: none yet).
	firstWrite time.Time
	// hinted is the version the hint named at the latest read (0: none).
	hinted int
	// readTries is the retries of retryRead (0: maxReadTries; negative:
	// none), set by an expiry's MaxAttempts.
	readTries int
	// oldRoot is the state's oldRoot of the latest load: keysOf reads
	// locations under it as the table's.
	oldRoot string
	// fold: a PublishCommit's folding (fold.go); nil for the others.
	fold *folding
	// holding is the lease holder's id when this publisher writes
	// versions for others as the holder (leadRounds): its snapshots name
	// it (leaseSummaryKey).
	holding string
	// afterLost, when set, runs after a lost race, before the next
	// attempt: a PublishCommit's entry into the publish lease's path
	// (errPending ends the publish).
	afterLost func(context.Context) error
	// optimistic: a PublishCommit under the publish lease that has not
	// taken its path yet: a version PUT refused at once is a lost race,
	// without the read-back (putVersion).
	optimistic bool
	// stopOnBurst: load stops after the metadata file when it shows a
	// burst in progress (inBurst), its state marked burst (a prefetch's:
	// the publish most likely returns pending).
	stopOnBurst bool
	// lostTo is the bytes of the version the latest lost race was lost
	// to, as putVersion read them back (nil: none).
	lostTo []byte
	// repair: a reconcile (Publish), which rebuilds from the pointers what
	// it cannot read of the latest version instead of failing on it.
	repair bool
	// from, when set, is the state the first attempt starts from instead
	// of a load: the version a lease holder wrote in its round before
	// (lease.go, lastWritten). A newer version, written meanwhile by a
	// publisher outside the lease, makes that attempt lose its race and
	// rebase, as a prefetch overtaken does.
	from *state
	// last is the version this publisher's latest attempt wrote (nil:
	// none), with the hint's ETag after it when its hint PUT succeeded.
	last *state
	// keepGroups: a lease holder's publisher keeps the bytes of the
	// manifests it writes (putManifest) in kept, by location, for its
	// next round (lease.go, lastWritten).
	keepGroups bool
	kept       map[string][]byte
	// hinting, when set, writes the hint after a version in the
	// background: a lease holder's (lease.go, leadRounds) with
	// Options.Concurrency above 1, which waits for it before its next
	// round starts from that version, and before it returns.
	hinting *errgroup.Group
	// started is when (env's clock) the attempt began reading the pointers
	// of what it publishes (zero: an expiry, which adds nothing).
	started time.Time
	doc     docState // table.json (tableDoc)
}

// startAttempt notes that the attempt reads its pointers now (and
// table.json after them, when it needs it).
func (p *publisher) startAttempt() {
	p.started = p.env.Now()
	p.doc.t, p.doc.read = nil, false
}

// stale reports whether the attempt's pointer reads are older than
// MaxElapsed: its version must not be written.
func (p *publisher) stale() bool {
	return !p.started.IsZero() && p.env.Now().Sub(p.started) > p.opts.MaxElapsed
}

var errStale = errors.New("the pointers read for this attempt are older than MaxElapsed")

func newPublisher(ctx context.Context, st store.Store, opts Options) *publisher {
	p := newLoader(ctx, st, opts)
	p.snapshot = p.int64N(math.MaxInt64-1) + 1
	return p
}

// newLoader is a publisher that only reads (a Prefetch's, an expiry's): it
// draws no snapshot id.
func newLoader(ctx context.Context, st store.Store, opts Options) *publisher {
	p := &publisher{
		st: st, opts: opts.withDefaults(), env: env.From(ctx),
		tableURI:   tableLocation(st),
		escapedURI: strings.TrimSuffix(st.URI(""), "/"),
		written:    map[string]iceberg.ManifestFile{},
		manifests:  map[string]*manifest.Manifest{},
		live:       map[string][]iceberg.ManifestEntry{},
		groups:     map[string]*groupContent{},
		footers:    map[string][]manifest.ColumnStats{},
	}
	for _, m := range opts.Manifests {
		if m != nil && m.Generation != "" {
			p.manifests[m.Generation] = m
		}
	}
	return p
}

// int64N draws from the environment's source.
func (p *publisher) int64N(n int64) int64 { return p.env.Int64N(n) }

// newUUID is a random (version 4) UUID from the environment's injected
// source, or uuid.New.
func (p *publisher) newUUID() uuid.UUID {
	if !p.env.Seeded() {
		return uuid.New()
	}
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[:8], p.env.Uint64())
	binary.BigEndian.PutUint64(u[8:], p.env.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

// deterministic gives an Avro file written by iceberg-go a sync marker
// drawn from the environment's injected source (with one only: iceberg-go
// draws a random one).
func (p *publisher) deterministic(avro []byte) []byte {
	if !p.env.Seeded() {
		return avro
	}
	var m [16]byte
	binary.BigEndian.PutUint64(m[:8], uint64(p.int64N(math.MaxInt64)))
	binary.BigEndian.PutUint64(m[8:], uint64(p.int64N(math.MaxInt64)))
	return canonicalAvro(avro, m)
}

// policy is the retry policy of a publish's requests (the project's one
// retry helper, internal/retry): attempts at most (0: its default),
// exponential from 50 ms, each wait between a half and one and a half of
// it, drawn and slept by the context's environment (so a publish with
// injected sources repeats its waits).
func (p *publisher) policy(attempts int) retry.Policy {
	return retry.Policy{MaxAttempts: attempts, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Hour, Centered: true}
}

// backoff waits before attempt try+1 of a request.
func (p *publisher) backoff(ctx context.Context, try int) error {
	return p.policy(0).Wait(ctx, try, nil)
}

// manifest returns a generation's manifest: m when given, else one GET.
func (p *publisher) manifest(ctx context.Context, part, gen string, m *manifest.Manifest) (*manifest.Manifest, error) {
	if m != nil {
		return m, nil
	}
	p.mu.Lock()
	m = p.manifests[gen]
	p.mu.Unlock()
	if m != nil {
		return m, nil
	}
	err := p.retryRead(ctx, func() (err error) {
		m, err = swap.ReadManifest(ctx, p.st, part, gen)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.manifests[gen] = m
	p.mu.Unlock()
	return m, nil
}

var errLostRace = errors.New("lost the race for the next metadata version")

// errPending ends a PublishCommit's attempts: its commit is announced to
// the live holder of the publish lease (lease.go).
var errPending = errors.New("announced to the publish lease's holder")

// run loads the latest version, asks plan what to change, and writes the
// next version; it rebases when another publisher wrote that version first.
// maxReadTries bounds the repeats of an attempt whose reads failed
// transiently.
const maxReadTries = 4

func (p *publisher) run(ctx context.Context, plan func(context.Context, *state) ([]partUpdate, error)) (Result, error) {
	probe := false
	readTries := 0
	pre := p.opts.Prefetch
	for attempt := 1; ; attempt++ {
		if !p.firstWrite.IsZero() && p.env.Now().Sub(p.firstWrite) > p.opts.MaxElapsed {
			// The manifests written by earlier attempts are older than
			// MaxElapsed: the expiry may delete them (nothing names them
			// yet) before this attempt's version would. Write new ones,
			// under a new snapshot id.
			p.mu.Lock()
			p.written = map[string]iceberg.ManifestFile{}
			p.mu.Unlock()
			p.snapshot = p.int64N(math.MaxInt64-1) + 1
			p.firstWrite = time.Time{}
		}
		var s *state
		var err error
		if pre != nil {
			// The first attempt starts from the prefetch, if it may
			// (Prefetch.state); later ones read for themselves.
			s, err = pre.state(ctx, p)
			pre = nil
		}
		if s == nil && err == nil && p.from != nil {
			s, p.from = p.from, nil // a holder's round: the version it wrote before
		}
		if s == nil && err == nil && p.fold != nil && p.fold.exact > 0 {
			// A follower saw the version it waited for: read that one,
			// without the hint and the probe (fold.go).
			s = p.fold.loadExact(ctx, p)
		}
		if s == nil && err == nil {
			s, err = p.load(ctx, probe)
		}
		if err == nil && s.oldRoot != "" && !p.repair {
			err = fmt.Errorf("%s: %w: the table's metadata names the location %s, not this table's %s (a moved or copied table): run pswap publish to rewrite it here",
				s.loc, ErrCorrupt, s.oldRoot, p.tableURI)
		}
		var ups []partUpdate
		if err == nil {
			ups, err = plan(ctx, s)
		}
		if errors.Is(err, errFollow) {
			probe = true // a newer version exists (fold.go): read it
			continue
		}
		if errors.Is(err, errPending) {
			return Result{Rebases: p.rebases}, err // announced to the lease's holder: done
		}
		if err != nil {
			// The reads of an attempt (the hint, the metadata, the
			// manifest lists, the pointers) write nothing: a transient
			// failure repeats the attempt, as the writes retry theirs
			// (the CLI runs the SDK at one attempt).
			if store.IsRetryable(err) && readTries < maxReadTries {
				if werr := p.backoff(ctx, readTries); werr != nil {
					return Result{Rebases: p.rebases}, werr
				}
				readTries++
				continue
			}
			return Result{Rebases: p.rebases}, err
		}
		if s.oldRoot != "" {
			s.repairs = append(s.repairs, fmt.Sprintf("the metadata named the location %s (a moved or copied table): every manifest written anew under %s, the older snapshots (there) dropped", s.oldRoot, p.tableURI))
		}
		if len(ups) == 0 && len(s.repairs) == 0 {
			r := p.result(s, false)
			if s.version > 0 && !s.hintUnread && (!s.hintFound || p.hinted != s.version) {
				// Up to date, but the hint lags (a lost hint PUT, a
				// publisher killed after its version): readers that trust
				// it see an older version. Point it at the latest.
				r.HintWas = p.hinted
				_, r.HintFixed = p.writeHint(ctx, s, s.version)
			}
			p.writeBackIDs(ctx, s.meta)
			return p.withCatalog(ctx, r, s.meta)
		}
		next, err := p.write(ctx, s, ups, attempt)
		if errors.Is(err, errStale) {
			// Too slow to write what it planned: plan again from fresh
			// pointer reads (counted as a rebase).
			p.rebases++
			if attempt >= p.opts.MaxAttempts {
				return Result{Rebases: p.rebases}, fmt.Errorf("%w (%d attempts, each slower than %s)", ErrContention, attempt, p.opts.MaxElapsed)
			}
			continue
		}
		if errors.Is(err, errLostRace) {
			p.fold.lost(ctx, p, s.version+1) // the next version's writer may carry this commit
			p.rebases++
			if p.afterLost != nil {
				if err := p.afterLost(ctx); err != nil {
					return Result{Rebases: p.rebases}, err // errPending (lease.go)
				}
			}
			p.floor = s.version + 1 // exists now: probe on from there
			if attempt >= p.opts.MaxAttempts {
				return Result{Rebases: p.rebases}, fmt.Errorf("%w (%d attempts)", ErrContention, attempt)
			}
			probe = true
			// A little jitter spreads a burst of publishers apart.
			if werr := p.env.Sleep(ctx, time.Duration(p.int64N(int64(5*min(attempt, 8)))+1)*time.Millisecond); werr != nil {
				return Result{Rebases: p.rebases}, werr
			}
			continue
		}
		if err != nil {
			return Result{Rebases: p.rebases}, err
		}
		hint := func() error {
			if etag, ok := p.writeHint(ctx, s, next.version); ok {
				next.hintETag, next.hintFound = etag, true
			}
			return nil
		}
		if p.hinting != nil {
			// A lease holder's: beside its next listing (lease.go),
			// which waits for it before it starts from next.
			p.hinting.Go(hint)
		} else {
			_ = hint()
		}
		p.last = next
		p.writeBackIDs(ctx, next.meta)
		r := p.result(next, true)
		r.Repairs = s.repairs
		return p.withCatalog(ctx, r, next.meta)
	}
}

func (p *publisher) result(s *state, changed bool) Result {
	r := Result{Version: s.version, Changed: changed, Rebases: p.rebases}
	if s.version > 0 {
		r.MetadataLocation = p.loc(MetadataKey(s.version))
	}
	if s.meta != nil {
		if cs := s.meta.currentSnapshot(); cs != nil {
			r.SnapshotID = cs.SnapshotID
		}
	}
	for i, mf := range s.list {
		switch {
		case i < len(s.refs) && s.refs[i].group != "":
			r.Partitions += s.refs[i].members
		case i < len(s.refs) && s.refs[i].app != "":
			// A partition's appends (appends.go): its group counts it.
		case liveFiles(mf) > 0:
			r.Partitions++
		}
	}
	return r
}

// Latest returns the location of the latest published metadata file ("" if
// none) and its version, the way a publish finds it: the version hint, then
// a probe for newer versions.
func Latest(ctx context.Context, st store.Store) (string, int, error) {
	p := newLoader(ctx, st, Options{})
	v, _, _, err := p.latestVersion(ctx, true)
	if err != nil || v == 0 {
		return "", 0, err
	}
	return p.loc(MetadataKey(v)), v, nil
}

func (p *publisher) latestVersion(ctx context.Context, probe bool) (v int, etag string, found bool, err error) {
	data, a, err := store.ReadAll(ctx, p.st, VersionHintKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// No hint: a new table, or a hint lost after the expiry deleted
		// v1 and the versions after it. Probing from v1 would find
		// nothing and start the history again at v1, behind the versions
		// that exist: list the metadata folder instead (one LIST).
		if v, err = p.listVersions(ctx); err != nil {
			return 0, "", false, err
		}
		probe = true
	case err != nil:
		return 0, "", false, fmt.Errorf("read %s: %w", VersionHintKey, err)
	default:
		found, etag = true, a.ETag
		n, perr := strconv.Atoi(strings.TrimSpace(string(data)))
		if perr != nil || n <= 0 {
			// A tampered hint: find the versions by listing the metadata folder.
			if v, err = p.listVersions(ctx); err != nil {
				return 0, "", false, err
			}
			return v, etag, found, nil
		}
		v = n
		p.hinted = n
	}
	if v < p.floor {
		v, probe = p.floor, true
	}
	if probe {
		for {
			_, err := p.st.Stat(ctx, MetadataKey(v+1))
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if err != nil {
				return 0, "", false, fmt.Errorf("probe %s: %w", MetadataKey(v+1), err)
			}
			v++
		}
	}
	return v, etag, found, nil
}

func (p *publisher) listVersions(ctx context.Context) (int, error) {
	v := 0
	for a, err := range p.st.List(ctx, MetadataPrefix+"v") {
		if err != nil {
			return 0, fmt.Errorf("list %s: %w", MetadataPrefix, err)
		}
		if n, ok := VersionOfKey(a.Key); ok && n > v {
			v = n
		}
	}
	return v, nil
}

// load reads the latest version: the hint (GET), the metadata file (GET)
// and its current manifest list (GET). With probe, or without a hint, it
// also probes for versions past the hint.
func (p *publisher) load(ctx context.Context, probe bool) (*state, error) {
	v, etag, found, err := p.latestVersion(ctx, probe)
	if err != nil {
		return nil, err
	}
	s := &state{version: v, hintETag: etag, hintFound: found}
	if v == 0 {
		return s, nil
	}
	key := MetadataKey(v)
	data, _, err := store.ReadAll(ctx, p.st, key)
	if errors.Is(err, store.ErrNotFound) {
		// The hint names a version that does not exist (deleted, or the
		// hint was written by hand): the latest is the highest version
		// the metadata folder holds, and the next publish writes the one
		// after it.
		lv, lerr := p.listVersions(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if lv >= v {
			return nil, fmt.Errorf("read %s: %w", key, store.ErrTransient)
		}
		s.version, key = lv, MetadataKey(lv)
		if lv == 0 {
			return s, nil
		}
		data, _, err = store.ReadAll(ctx, p.st, key)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	meta, err := parseMetadata(data)
	if err != nil {
		if !p.repair || errors.Is(err, strictjson.ErrNewerFormat) {
			return nil, fmt.Errorf("%s: %w", p.st.URI(key), err)
		}
		if meta, key, err = p.readableBefore(ctx, s, err); err != nil || meta == nil {
			return s, err
		}
	}
	s.meta, s.loc = meta, p.loc(key)
	s.oldRoot = p.relocatedFrom(meta)
	p.oldRoot = s.oldRoot
	cs := meta.currentSnapshot()
	if cs == nil {
		return s, nil
	}
	if p.stopOnBurst && p.inBurst(s) {
		s.burst = true
		return s, nil
	}
	lk, err := p.keyOf(cs.ManifestList)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: manifest list: %w", s.loc, ErrCorrupt, err)
	}
	ld, _, err := store.ReadAll(ctx, p.st, lk)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read %s: %w", lk, err)
	}
	var list []iceberg.ManifestFile
	if err != nil {
		err = fmt.Errorf("%s: %w: its manifest list %s is missing", s.loc, ErrCorrupt, cs.ManifestList)
	} else if list, err = readManifestList(ld); err != nil {
		err = fmt.Errorf("%s: %w: %v", cs.ManifestList, ErrCorrupt, err)
	}
	if err != nil {
		if !p.repair {
			return nil, err
		}
		// A reconcile rebuilds every partition's manifest from its
		// pointer: it needs nothing of the lost list.
		s.repairs = append(s.repairs, fmt.Sprintf("%v: every partition's manifest written anew from its pointer", err))
		return s, nil
	}
	s.list = list
	s.refs = make([]manifestRef, len(list))
	for i, mf := range list {
		var ours bool
		if s.refs[i], ours = parseManifestPath(mf.FilePath()); !ours {
			return nil, foreignSnapshot(s.loc, meta, cs, mf.FilePath())
		}
	}
	return s, nil
}

// maxRepairBack bounds how many versions a repairing reconcile reads back
// to find one it can parse.
const maxRepairBack = 10

// readableBefore finds, for a reconcile, the newest version before
// s.version that parses, after s.version failed to (bad). The table's
// history continues from it: the next version is still s.version+1, never
// one below a version that exists, and readers that trust the hint move
// past the damaged one. Without one (nil meta), history starts anew.
func (p *publisher) readableBefore(ctx context.Context, s *state, bad error) (*tableMetadata, string, error) {
	for w := s.version - 1; w >= 1 && w >= s.version-maxRepairBack; w-- {
		data, _, err := store.ReadAll(ctx, p.st, MetadataKey(w))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", MetadataKey(w), err)
		}
		if meta, err := parseMetadata(data); err == nil {
			s.repairs = append(s.repairs, fmt.Sprintf("%s is unreadable (%v): rebuilt from v%d and the pointers", MetadataKey(s.version), bad, w))
			return meta, MetadataKey(w), nil
		}
	}
	s.repairs = append(s.repairs, fmt.Sprintf("%s is unreadable (%v) and no version of the %d before it reads: the history starts anew from the pointers", MetadataKey(s.version), bad, maxRepairBack))
	return nil, "", nil
}

// readManifestList parses an Avro manifest list; the Avro decoder panics on
// some malformed input, which is corruption, not a crash.
func readManifestList(data []byte) (list []iceberg.ManifestFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			list, err = nil, fmt.Errorf("unreadable manifest list: %v", r)
		}
	}()
	return iceberg.ReadManifestList(bytes.NewReader(data))
}

func fingerprintHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// manifestPut is a partition's manifest to write (encodeManifest).
type manifestPut struct {
	key  string
	data []byte
	mf   iceberg.ManifestFile
}

// addedEntries are the entries of a partition's generation's files.
func (p *publisher) addedEntries(ctx context.Context, sc *iceberg.Schema, spec *iceberg.PartitionSpec, u partUpdate) ([]iceberg.ManifestEntry, error) {
	if u.m == nil || len(u.m.Files) == 0 {
		return nil, nil
	}
	pk, err := partition.Parse(u.part)
	if err != nil {
		return nil, err
	}
	vals, err := partitionValues(sc, spec, pk)
	if err != nil {
		return nil, err
	}
	files := swap.Files(p.st, u.m)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	p.readFooters(gctx, g, files) // those of files without statistics in the manifest
	_ = g.Wait()                  // a footer that does not read leaves its file without statistics
	entries := make([]iceberg.ManifestEntry, 0, len(u.m.Files))
	for _, f := range files {
		db, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentData, p.loc(f.Key), iceberg.ParquetFile, vals, nil, nil, f.Rows, f.Size)
		if err != nil {
			return nil, fmt.Errorf("%s: data file %s: %w", u.part, f.URI, err)
		}
		withStats(db, p.columns(ctx, f), sc)
		snap := p.snapshot
		entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snap, nil, nil, sortedStats(db.Build())))
	}
	return entries, nil
}

// putManifest writes a manifest encodeManifest made, and remembers it for
// the later attempts of this publish.
func (p *publisher) putManifest(ctx context.Context, mp *manifestPut) error {
	p.mu.Lock()
	if p.firstWrite.IsZero() {
		p.firstWrite = p.env.Now()
	}
	p.mu.Unlock()
	if err := p.putOnce(ctx, mp.key, mp.data); err != nil {
		return err
	}
	p.mu.Lock()
	p.written[mp.key] = mp.mf
	if p.keepGroups {
		if p.kept == nil {
			p.kept = map[string][]byte{}
		}
		p.kept[mp.mf.FilePath()] = mp.data
	}
	p.mu.Unlock()
	return nil
}

// putOnce writes a new object under a name unique to this publish. A
// precondition failure means an earlier attempt of ours already wrote it.
func (p *publisher) putOnce(ctx context.Context, key string, data []byte) error {
	var err error
	for try := 0; try < 5; try++ {
		_, err = p.st.Put(ctx, key, data, store.PutOptions{IfNoneMatch: true})
		if err == nil || errors.Is(err, store.ErrPrecondition) {
			return nil
		}
		if !store.IsRetryable(err) {
			break
		}
		if werr := p.backoff(ctx, try); werr != nil {
			return werr
		}
	}
	return fmt.Errorf("write %s: %w", key, err)
}

// putVersion is the commit point: a create-if-absent PUT of the next
// version. An unknown outcome is settled by reading the version back.
func (p *publisher) putVersion(ctx context.Context, v int, data []byte) error {
	key := MetadataKey(v)
	var err error
	for try := 0; try < 5; try++ {
		if p.stale() {
			return errStale
		}
		_, err = p.st.Put(ctx, key, data, store.PutOptions{IfNoneMatch: true, ContentType: "application/json"})
		if err == nil {
			return nil
		}
		if try == 0 && errors.Is(err, store.ErrPrecondition) && p.optimistic {
			// An optimistic attempt under the publish lease lost (or,
			// rarely, the SDK's retry of our own write was refused): it
			// goes to the lease's path, which reads the version only if
			// it leads (lease.go). Ours after all, the commit is in it,
			// and its marker is passed over.
			p.lostTo = nil
			return errLostRace
		}
		if errors.Is(err, store.ErrPrecondition) || store.IsRetryable(err) {
			got, rerr := p.readBack(ctx, key)
			switch {
			case rerr == nil && bytes.Equal(got, data):
				return nil // our own write, whose reply was lost
			case rerr == nil:
				p.lostTo = got // the version we lost to: a folding publisher reads it next (fold.go)
				return errLostRace
			case errors.Is(rerr, store.ErrNotFound) && store.IsRetryable(err):
				// not written: try again
			case errors.Is(rerr, store.ErrNotFound):
				return errLostRace // 412 but gone: let the probe settle it
			default:
				// Whether our version landed is unknown: fail (the
				// metadata lags; the next publish finds what is there)
				// rather than write it again or rebase past it.
				return fmt.Errorf("write %s: %v, then read it back: %w", key, err, rerr)
			}
		}
		if !store.IsRetryable(err) {
			break
		}
		if werr := p.backoff(ctx, try); werr != nil {
			return werr
		}
	}
	return fmt.Errorf("write %s: %w", key, err)
}

// readBack reads a version after an unclear reply to its PUT. A transient
// failure is retried like the reads of an attempt (maxReadTries): one 503
// must not fail a publish whose version may well have landed.
func (p *publisher) readBack(ctx context.Context, key string) (got []byte, err error) {
	err = p.retryRead(ctx, func() (err error) {
		got, _, err = store.ReadAll(ctx, p.st, key)
		return err
	})
	return got, err
}

// writeHint points the version hint at v unless it already names v or a
// later version, and reports whether it names v now, with its ETag. The
// hint is only a hint (readers probe past it), so a failure here does not
// fail the publish.
func (p *publisher) writeHint(ctx context.Context, s *state, v int) (string, bool) {
	if p.stale() {
		// Too late to be sure the expiry keeps version v's predecessors
		// until the hint moves past them: leave the hint to the next
		// publish (readers probe past it).
		return "", false
	}
	etag, found := s.hintETag, s.hintFound
	for try := 0; try < 5; try++ {
		opts := store.PutOptions{IfMatch: etag}
		if !found {
			opts = store.PutOptions{IfNoneMatch: true}
		}
		a, err := p.st.Put(ctx, VersionHintKey, []byte(strconv.Itoa(v)), opts)
		switch {
		case err == nil:
			return a.ETag, true
		case store.IsRetryable(err):
			// A lost or refused hint PUT leaves readers that trust the
			// hint on an older version: worth a few retries.
			if p.backoff(ctx, try) != nil {
				return "", false
			}
			continue
		case !errors.Is(err, store.ErrPrecondition):
			return "", false
		}
		data, a, err := store.ReadAll(ctx, p.st, VersionHintKey)
		if errors.Is(err, store.ErrNotFound) {
			etag, found = "", false
			continue
		}
		if err != nil {
			return "", false
		}
		if n, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil && n >= v {
			return a.ETag, n == v
		}
		etag, found = a.ETag, true
	}
	return "", false
}

// foreignSnapshot is the error of a current snapshot that another writer
// made (its manifest mf is not one of pswap's): it names the snapshot, the
// operation, and the latest snapshot of pswap's own in its ancestry, to
// make current again once that writer's data is committed with pswap.
func foreignSnapshot(loc string, meta *tableMetadata, cs *Snapshot, mf string) error {
	byID := map[int64]*Snapshot{}
	for i := range meta.Snapshots {
		byID[meta.Snapshots[i].SnapshotID] = &meta.Snapshots[i]
	}
	ours := int64(0)
	for s := cs; s != nil; {
		if _, ok := s.Summary["pswap.generation"]; ok {
			ours = s.SnapshotID
			break
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = byID[*s.ParentSnapshotID]
	}
	hint := "no snapshot of pswap's is left in its history: move the table aside and publish anew"
	if ours != 0 {
		hint = fmt.Sprintf("commit that data with pswap, then make pswap's latest snapshot current again "+
			"(Spark: CALL <catalog>.system.rollback_to_snapshot('<table>', %d)) and run pswap publish", ours)
	}
	return fmt.Errorf("%s: %w: its current snapshot %d (%s) is not pswap's (manifest %s); "+
		"pswap's pointers are the table's truth and a publish would drop that change, so nothing was published: %s",
		loc, ErrForeign, cs.SnapshotID, cs.Summary["operation"], mf, hint)
}

// relocate turns the next version of a moved table into one of its new
// root: every manifest was written anew under it (damagedManifests), and
// the older snapshots and versions, whose manifest lists and files the
// metadata names under the old root, are dropped (no reader could open
// them there); the new snapshot starts the history again.
func (p *publisher) relocate(md *tableMetadata, snap Snapshot) (*tableMetadata, error) {
	var drop []int64
	for _, s := range md.Snapshots {
		if s.SnapshotID != snap.SnapshotID {
			drop = append(drop, s.SnapshotID)
		}
	}
	next, err := md.withoutSnapshots("", drop, md.LastUpdatedMS)
	if err != nil {
		return nil, err
	}
	next.Location, next.MetadataLog = p.tableURI, nil
	return next, nil
}
