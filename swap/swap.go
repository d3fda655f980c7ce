package swap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// DefaultGracePeriod is the default bound between Begin and the pointer
// swap. Garbage collection's default orphan age equals it: GC never deletes
// an uncommitted generation younger than that, and a writer never commits
// one older.
const DefaultGracePeriod = 24 * time.Hour

// WriterVersion is recorded in every manifest this package writes.
const WriterVersion = "pswap/0.1.0"

// Policy says what a commit does when another run committed a different
// generation since this attempt began.
type Policy int

const (
	// Fail (the default) reports ErrConflict and changes nothing: a stale
	// attempt (a zombie worker, a slow retry) can never overwrite newer data.
	Fail Policy = iota
	// Overwrite rebases on the newer generation and retries: last writer wins.
	Overwrite
)

func (p Policy) String() string {
	if p == Overwrite {
		return "overwrite"
	}
	return "fail"
}

// ParsePolicy parses "fail" or "overwrite"; anything else is bad input.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "fail":
		return Fail, nil
	case "overwrite":
		return Overwrite, nil
	}
	return Fail, errkind.Mark(fmt.Errorf("unknown conflict policy %q (want fail or overwrite)", s), errkind.ErrBadInput)
}

// Options tune a commit. The zero value works: fail on conflict, no run id,
// bounded retries, a 24-hour grace period.
type Options struct {
	// RunID identifies the orchestrator run (e.g. an Airflow run id). Two
	// attempts with the same run id are the same run: once one committed, the
	// others are idempotent no-ops (Outcome SameRun), even after other runs
	// committed since, as long as the commit is among the partition's last
	// manifest.MaxHistory (100) commits, which the pointer remembers.
	RunID string
	// OnConflict is the conflict policy (default Fail).
	OnConflict Policy
	// Force commits even when the content equals the current generation's,
	// or the run id already committed to the partition.
	Force bool
	// AllowEmpty lets a commit of no rows replace the partition (an empty
	// day on purpose). Without it such a commit fails with ErrEmptyCommit
	// and changes nothing: an empty extract is more often an upstream
	// failure than an empty interval.
	AllowEmpty bool
	// GracePeriod bounds the time between Begin and the pointer swap (default
	// 24h). It must not exceed the garbage collector's orphan age: a
	// generation older than that may be half-collected and is never committed.
	GracePeriod time.Duration
	// MaxAttempts bounds the attempts of one request and of the pointer
	// swap (default 10); rebases under Overwrite get ten times as many,
	// within MaxElapsed.
	MaxAttempts int
	// MaxElapsed bounds the time spent retrying one commit (default 2m).
	MaxElapsed time.Duration
	// BaseDelay and MaxDelay shape the exponential backoff with full jitter
	// (defaults 50ms and 5s).
	BaseDelay, MaxDelay time.Duration
	// Writer is recorded in the manifest (default WriterVersion).
	Writer string
	// Kind is recorded in the manifest of a commit (manifest.Kind, e.g.
	// manifest.KindMerge); "" for a replacing commit.
	Kind string
	// DeferLegacy makes Begin read only the pointer's key: when it has no
	// pointer, the partition's legacy key (a table of the legacy layout,
	// see package layout) is read only by Txn.SettleLegacy, which the
	// caller calls once it knows whether the table can have any (its
	// table.json records that it was created in the table-level layout),
	// or else by the commit. A table created in that layout so pays no
	// request for the legacy key.
	DeferLegacy bool
	// AssumeAbsent makes Begin read no pointer: the caller knows, from a
	// listing it made, that the partition has none (a backfill of new
	// partitions). The commit then creates the pointer only if it is still
	// absent (the conditional create of every first commit), so a
	// partition created since is a lost race like any other, and the run
	// id and no-op checks, which need a current generation, have none to
	// compare with. It takes effect only with DeferLegacy: the legacy key
	// is then read by SettleLegacy, as for a pointer found missing.
	AssumeAbsent bool
	// Append makes the commit add the staged files to the partition's
	// current files instead of replacing them (append.go): a new
	// generation fenced on the one Begin read, rebased on a lost swap.
	// It needs a RunID, which makes it exactly once: a re-run of the run
	// is a no-op (SameRun, RunGeneration naming the generation that took
	// its files) however many commits landed since. OnConflict does not
	// apply (an append always rebases: it adds, it never overwrites), and
	// neither does the identical-content no-op. DeferLegacy is ignored.
	Append bool
	// Generation, when set, is the new generation's id, which the caller
	// allocated (manifest.NewGenerationID) and must use for nothing else:
	// a backfill names its partitions' generations in its attempt record
	// before they begin; a rollback's attempt record names the rollback's
	// generation. Empty: Begin (or Rollback) allocates one.
	Generation string
}

// Stats counts what a commit did beyond the happy path (Result.Stats).
type Stats struct {
	Retries   int // requests repeated after a transient failure
	Conflicts int // pointer swaps that lost to another writer
	ReadBacks int // pointer reads to resolve an unknown or failed swap
	Rebases   int // rebases under the Overwrite policy
}

// WithDefaults returns o with every zero field set to its default, as
// Begin uses them (for callers that bound their own reads the way a
// commit bounds its reads).
func (o Options) WithDefaults() Options {
	o.defaults()
	return o
}

func (o *Options) defaults() {
	if o.GracePeriod <= 0 {
		o.GracePeriod = DefaultGracePeriod
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.MaxElapsed <= 0 {
		o.MaxElapsed = 2 * time.Minute
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 50 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 5 * time.Second
	}
	if o.Writer == "" {
		o.Writer = WriterVersion
	}
}

// Outcome says how a commit ended.
type Outcome string

const (
	// Committed: our generation was swapped in.
	Committed Outcome = "committed"
	// Superseded: our generation was swapped in and then replaced by a later
	// commit before we could read it back. Still our success (I3).
	Superseded Outcome = "superseded"
	// SameRun: another attempt of the same run id had already committed; ours
	// was discarded. changed=false.
	SameRun Outcome = "same-run"
	// Identical: the content equals the current generation's; nothing was
	// swapped. changed=false.
	Identical Outcome = "identical"
)

// Result is what a commit reports.
type Result struct {
	Partition  string
	Generation string // the generation current after the commit (ours, or the one that made ours a no-op)
	Staged     string // the generation this attempt staged (may differ from Generation)
	Changed    bool   // true when this call swapped in a new generation
	Outcome    Outcome
	RunID      string
	Seq        int64 // the pointer's sequence number after the commit
	Rows       int64
	Bytes      int64
	Files      int
	// CommittedBy is the run id that committed Generation ("" for none):
	// after a backfill, a retry of an earlier run is a SameRun no-op whose
	// Generation is the backfill's.
	CommittedBy string
	// RunGeneration, for SameRun, is the generation RunID committed (the
	// pointer's history names it); it is Generation unless other runs
	// committed since.
	RunGeneration string
	// IdempotencyKey identifies the committed generation for downstream side
	// effects (webhooks, notifications): "<partition>@<generation>". Fire a
	// side effect only when Changed, and let the receiver deduplicate on it.
	IdempotencyKey string
	// Stats counts what the commit did beyond the happy path; it is filled
	// in also when the commit returns an error.
	Stats Stats
	// Manifest is the manifest this call wrote and swapped in, of
	// Generation (nil when it changed nothing, and when it lists files by
	// reference: an append's head, see manifest.Segment). A publish of
	// the commit (lakehouse.Commit) takes it instead of reading it back.
	Manifest *manifest.Manifest
	// SwappedAt is when (the context's local clock, internal/env) this call
	// sent the pointer PUT that made Generation current, for Outcome
	// Committed; zero otherwise. Generation was current from before the
	// PUT landed, so it can have been replaced only after SwappedAt: a
	// publish of the commit (lakehouse.Commit.SwappedAt) times its
	// MaxElapsed bound from it instead of reading the pointer again.
	SwappedAt time.Time
}

// Base is a pointer as read from the store (ReadPointer): the decoded
// document and the object's attributes. It is the base of a transaction's
// swap, and what garbage collection plans from. The one name for "the
// pointer as read" in every package.
type Base struct {
	Pointer *manifest.Pointer // nil when the partition had no pointer
	ETag    string            // the object's version: the swap is conditional on it
	ModTime time.Time         // the store's timestamp of the pointer's last write
	Raw     []byte            // the bytes read
	// Legacy: the pointer was read at the partition's legacy key (a
	// partition not yet migrated to the table-level layout, see Migrate).
	// A writer migrates the partition before it swaps.
	Legacy bool
	// Moved: the pointer's content was read from the moved record at the
	// legacy key (a migration stopped before it created the new pointer);
	// ETag is empty. A writer finishes the move before it swaps.
	Moved bool
}

// Txn is one attempt to replace a partition: Begin, stage files under
// DataPrefix, then Commit (or Abort).
type Txn struct {
	st         store.Store
	partition  string
	generation string
	opts       Options
	base       Base
	began      time.Time
	done       bool
	// keepData: a staged generation (swap/staged.go), whose files outlive a
	// conflict so that the commit can be retried under Overwrite.
	keepData bool
	// restore: a rollback restores content on purpose, so content equal to
	// the current generation's is committed anyway (same-run still applies).
	restore bool
	// afterManifest, when set, runs once the manifest is written and before
	// the pointer swap (a rollback re-reads its target there).
	afterManifest func(ctx context.Context, m *manifest.Manifest, deadline time.Time) error
	// stats counts what this transaction did beyond the happy path.
	stats Stats
	// legacyPending: Begin found no pointer at the pointer's key and did
	// not read the legacy key (Options.DeferLegacy): SettleLegacy does.
	legacyPending bool
	// dataLayout is where the generation's data lies
	// (manifest.Manifest.DataLayout): the table-level layout for a new
	// generation, the recorded one for a staged generation.
	dataLayout int
	// app is the state of an append (Options.Append); nil otherwise.
	app *appendState
}

// Begin reads the partition's pointer (the base of the swap) and allocates a
// fresh generation. partition must be a canonical Hive-style key.
func Begin(ctx context.Context, st store.Store, part string, opts Options) (*Txn, error) {
	if err := partition.Validate(part); err != nil {
		return nil, err
	}
	if err := manifest.ValidateRunID(opts.RunID); err != nil {
		return nil, err
	}
	gen := opts.Generation
	if gen == "" {
		gen = env.From(ctx).NewGenerationID()
	} else if err := manifest.ValidateGenerationID(gen); err != nil {
		return nil, err
	}
	opts.defaults()
	t := &Txn{st: st, partition: part, generation: gen, opts: opts, dataLayout: manifest.DataLayoutTable}
	// The pointer first: its response sets an S3 store's clock, so reading
	// the clock after it costs no request of its own (3 requests a commit,
	// even in a fresh process). Nothing is staged before Begin returns, so
	// the generation's age still counts from before its first file.
	deadline := env.From(ctx).Now().Add(opts.MaxElapsed)
	var (
		b   Base
		err error
	)
	if opts.Append {
		// An append stages into its base's data generation: the base
		// must be known at Begin, legacy key included.
		opts.DeferLegacy, t.opts.DeferLegacy = false, false
	}
	if opts.AssumeAbsent && opts.DeferLegacy {
		t.legacyPending = true // as for a pointer read and found missing
	} else if opts.DeferLegacy {
		err = t.policy(deadline, 2).Do(ctx, store.IsRetryable, func(int) (err error) {
			b, err = readPointerAt(ctx, st, part, layout.PointerKey(part))
			if errors.Is(err, ErrNoData) {
				b, err = Base{}, nil
				t.legacyPending = true
			}
			return err
		})
	} else {
		b, err = t.readPointer(ctx, deadline)
	}
	if err != nil {
		return nil, err
	}
	if b.Legacy || b.Moved {
		// A partition of the legacy layout: every swap is of the pointer
		// at its new key, so move it there first (once per partition).
		mr, err := migrateFrom(ctx, st, part, b, &t.opts, deadline, &t.stats)
		if err != nil {
			return nil, err
		}
		b = mr.Base
	}
	t.base = b
	if t.began, err = storeNow(ctx, st); err != nil {
		return nil, err
	}
	if opts.Append {
		if err := t.beginAppend(ctx, deadline); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// SettleLegacy completes a Begin made with Options.DeferLegacy that found
// no pointer: unless noLegacy (the table records that it has no partition
// of the legacy layout), it reads the partition's legacy key, and migrates
// a partition found there (Migrate), whose pointer becomes the base. It
// is a no-op otherwise, and when called again.
func (t *Txn) SettleLegacy(ctx context.Context, noLegacy bool) error {
	if !t.legacyPending {
		return nil
	}
	t.legacyPending = false
	if noLegacy {
		return nil
	}
	deadline := env.From(ctx).Now().Add(t.opts.MaxElapsed)
	var b Base
	err := t.policy(deadline, 2).Do(ctx, store.IsRetryable, func(int) (err error) {
		b, err = readLegacyPointer(ctx, t.st, t.partition)
		if errors.Is(err, ErrNoData) {
			b, err = Base{}, nil
		}
		return err
	})
	if err != nil || b.Pointer == nil {
		return err
	}
	mr, err := migrateFrom(ctx, t.st, t.partition, b, &t.opts, deadline, &t.stats)
	if err != nil {
		return err
	}
	t.base = mr.Base
	return nil
}

// Partition returns the partition key.
func (t *Txn) Partition() string { return t.partition }

// Generation returns the id of the generation being staged.
func (t *Txn) Generation() string { return t.generation }

// DataPrefix is where the generation's files must be written.
func (t *Txn) DataPrefix() string {
	if t.app != nil {
		return t.app.prefix(t.partition)
	}
	return layout.DataPrefixIn(t.partition, t.generation, t.dataLayout)
}

// Store returns the store of the table.
func (t *Txn) Store() store.Store { return t.st }

// Base returns the pointer the transaction started from.
func (t *Txn) Base() Base { return t.base }

// Began returns when the transaction began, by the store's clock.
func (t *Txn) Began() time.Time { return t.began }

// AlreadyCommitted reports whether this run id already committed to the
// partition (the base pointer's recent history names it), so that staging
// can be skipped: Commit would be a no-op (SameRun). It costs no request.
func (t *Txn) AlreadyCommitted() bool {
	if t.app != nil && !t.opts.Force && t.app.took != "" {
		return true
	}
	return !t.opts.Force && t.sameRun(t.base)
}

// sameRun reports whether b's pointer remembers a commit of our run id.
func (t *Txn) sameRun(b Base) bool {
	if b.Pointer == nil {
		return false
	}
	_, ok := b.Pointer.FindRun(t.opts.RunID)
	return ok
}

// Abort deletes whatever was staged for this transaction. It must not be
// called once Commit may have swapped the pointer; Commit cleans up itself.
func (t *Txn) Abort(ctx context.Context) error {
	if t.done {
		return nil
	}
	t.done = true
	return t.discard(ctx, t.generation, "")
}

// discard deletes a generation's data files (when dataGen is not empty) and
// a manifest (when manifestGen is not empty): what an attempt that did not
// become current leaves behind. Best effort: GC removes what remains.
func (t *Txn) discard(ctx context.Context, dataGen, manifestGen string) error {
	var keys []string
	if dataGen != "" {
		prefix := layout.DataPrefixIn(t.partition, dataGen, t.dataLayout)
		if t.app != nil {
			prefix = t.app.prefix(t.partition) // our folder only, never the root's files
		}
		for a, err := range t.st.List(ctx, prefix) {
			if err != nil {
				return err
			}
			keys = append(keys, a.Key)
		}
	}
	if manifestGen != "" {
		keys = append(keys, layout.ManifestKey(t.partition, manifestGen))
	}
	return store.DeleteAll(ctx, t.st, keys)
}

// Commit writes the manifest of the staged content and swaps the pointer,
// resolving every outcome of the protocol in docs/design.md. On success the result says
// whether anything changed. A returned error means nothing visible changed,
// except ErrOutcomeUnknown, which means it cannot yet be told.
func (t *Txn) Commit(ctx context.Context, c manifest.Content) (Result, error) {
	if c.Rows == 0 && !t.opts.AllowEmpty && !t.done && !t.AlreadyCommitted() {
		t.done = true
		t.discard(context.WithoutCancel(ctx), t.generation, "")
		return Result{}, fmt.Errorf("commit %s: %w", t.partition, ErrEmptyCommit)
	}
	m := &manifest.Manifest{
		Partition:  t.partition,
		Generation: t.generation,
		RunID:      t.opts.RunID,
		Kind:       t.opts.Kind,
		Content:    c,
		DataLayout: t.dataLayout,
	}
	if t.app != nil {
		t.app.setOwn(c)
		m.Kind = KindAppend
	}
	return t.commit(ctx, m)
}

// commit is shared by Commit, Rollback and CommitStaged: m has Partition,
// Generation, Content and optionally DataGeneration/RollbackOf set. The
// result carries the attempt's statistics, also with an error.
func (t *Txn) commit(ctx context.Context, m *manifest.Manifest) (Result, error) {
	if t.done {
		return Result{}, errors.New("swap: transaction already finished")
	}
	if err := t.SettleLegacy(ctx, false); err != nil {
		return Result{}, err
	}
	t.done = true
	a := &attempt{t: t, m: m, staged: m.Generation, dataGen: m.DataGen(), deadline: env.From(ctx).Now().Add(t.opts.MaxElapsed)}
	// A generation whose data we own (not a rollback to another's data) is
	// deleted when our attempt turns out to be a no-op.
	a.ownData = a.dataGen == a.staged || t.app != nil
	r, err := a.run(ctx)
	r.Stats = t.stats
	return r, err
}

// attempt is the state of one commit's I/O loop: write the manifest, swap
// the pointer, resolve the outcome (decide, a pure function), rebase under
// Overwrite.
type attempt struct {
	t               *Txn
	m               *manifest.Manifest
	staged, dataGen string
	ownData         bool
	manifestWritten bool
	deadline        time.Time
}

// cleanup removes what this attempt wrote once it is known not to be current.
func (a *attempt) cleanup(ctx context.Context) {
	d, mg := "", ""
	if a.ownData && !a.t.keepData && a.m.FileCount() > 0 {
		// Nothing staged, nothing to list (a same-run no-op after
		// AlreadyCommitted costs no request beyond Begin's GET). A staged
		// generation's data is never ours alone: another CommitStaged of it
		// may have committed it (GC removes it once it is an orphan).
		d = a.dataGen
	}
	if a.manifestWritten {
		mg = a.m.Generation
	}
	a.t.discard(context.WithoutCancel(ctx), d, mg)
}

// noop ends the attempt without a change: p is current.
func (a *attempt) noop(ctx context.Context, outcome Outcome, p *manifest.Pointer) (Result, error) {
	a.cleanup(ctx)
	r := a.t.result(p, a.staged, false, outcome)
	if a.m.FileCount() == 0 {
		r.Staged = "" // nothing was staged (e.g. skipped after AlreadyCommitted)
	}
	a.t.noopFiles(ctx, &r, p, a.deadline)
	if s := a.t.app; s != nil && outcome == SameRun {
		a.t.appendSameRun(ctx, &r, a.deadline)
	}
	return r, nil
}

// won ends the attempt with our generation committed (current, or since
// replaced: p is then ours as we wrote it).
func (a *attempt) won(ctx context.Context, outcome Outcome, p *manifest.Pointer) (Result, error) {
	r := a.t.result(p, a.staged, true, outcome)
	r.Files = a.m.FileCount()
	r.Manifest = a.m
	if a.m.Segmented() {
		r.Manifest = nil // a head: a publish reads it back, expanded
	}
	if a.t.app != nil {
		// Best effort: an incomplete record is resolved from the
		// pointer's history (or the manifests') by the next attempt.
		a.t.writeRecord(context.WithoutCancel(ctx), a.m.Generation, a.deadline)
		r.RunGeneration = a.m.Generation
	}
	return r, nil
}

func (a *attempt) run(ctx context.Context) (Result, error) {
	t, o, base := a.t, &a.t.opts, a.t.base
	for rebase := 0; ; rebase++ {
		if t.app != nil {
			if out, err := a.appendSkip(ctx, base, rebase); err != nil || out != "" {
				if err != nil {
					a.cleanup(ctx)
					return Result{}, err
				}
				return a.noop(ctx, out, base.Pointer)
			}
		} else if out := skip(base.Pointer, a.m.Content, o.RunID, o.Force, t.restore); out != "" {
			return a.noop(ctx, out, base.Pointer)
		}
		p, err := a.write(ctx, base, rebase)
		if err != nil {
			return Result{}, err
		}
		swappedAt := env.From(ctx).Now()
		cur, err := t.swapPointer(ctx, p, base, a.deadline)
		if err != nil {
			return Result{}, err
		}
		switch decide(cur.Pointer, a.m.Generation, baseGen(base), o.RunID) {
		case decidedCommitted:
			r, err := a.won(ctx, Committed, cur.Pointer)
			r.SwappedAt = swappedAt
			return r, err
		case decidedSuperseded:
			return a.won(ctx, Superseded, p)
		case decidedSameRun:
			return a.noop(ctx, SameRun, cur.Pointer)
		case decidedWalk:
			// Someone else's generation is current and its history does not
			// reach back to our base (a 1.0 writer on the way, or more than
			// MaxHistory commits since): walk the parent chain back to it.
			found, err := t.inChain(ctx, cur.Pointer, a.m.Generation, base, a.deadline)
			if err != nil {
				return Result{}, err
			}
			if found {
				return a.won(ctx, Superseded, p)
			}
		}
		// decidedConflict, or a walk that did not find ours.
		t.stats.Conflicts++
		if cp := cur.Pointer; cp != nil && !o.Force && !t.restore && t.app == nil && a.m.Content.SameContent(cp.ContentChecksum, cp.Rows) {
			// Another run won the race with the very content we staged:
			// the partition already is what our commit would have made
			// it, so the fence has nothing to protect. The same no-op as
			// Identical before the swap (what a rebase would decide).
			return a.noop(ctx, Identical, cp)
		}
		if o.OnConflict != Overwrite && t.app == nil {
			a.ownData = a.ownData && !t.keepData
			a.cleanup(ctx)
			return Result{}, t.conflict(cur, base)
		}
		// Rebases are bounded by time first: under heavy contention a last
		// writer may lose many rounds before it wins.
		rebases := t.policy(a.deadline, 10)
		rebases.OnRetry = func(int, error) { t.stats.Rebases++ }
		if rebases.Exhausted(ctx, rebase) {
			a.cleanup(ctx)
			return Result{}, fmt.Errorf("commit %s: still losing to other writers after %d rebases: %w", t.partition, rebase+1, ErrConflict)
		}
		base = cur
		if err := rebases.Wait(ctx, rebase, ErrConflict); err != nil {
			return Result{}, err
		}
	}
}

// write prepares the manifest on base and writes it (write-once), and
// returns the pointer that would make it current.
func (a *attempt) write(ctx context.Context, base Base, rebase int) (*manifest.Pointer, error) {
	t, o, m := a.t, &a.t.opts, a.m
	m.Parent = baseGen(base)
	if rebase > 0 {
		// The manifest is write-once and names its parent: a rebase writes a
		// new manifest under a new generation id that reuses our data. The
		// old one was never current (the read-back proved it): remove it.
		if a.manifestWritten {
			t.st.Delete(context.WithoutCancel(ctx), layout.ManifestKey(t.partition, m.Generation))
		}
		m.Generation = env.From(ctx).NewGenerationID()
		m.DataGeneration = a.dataGen
		a.manifestWritten = false
	}
	if t.app != nil {
		if err := a.prepareAppend(ctx, base); err != nil {
			a.cleanup(ctx)
			return nil, err
		}
	}
	now, err := storeNow(ctx, t.st)
	if err != nil {
		return nil, err
	}
	if age := now.Sub(t.began); age > o.GracePeriod {
		a.cleanup(ctx)
		return nil, fmt.Errorf("commit %s generation %s: staged %s ago, grace period %s: %w",
			t.partition, a.staged, age.Round(time.Second), o.GracePeriod, ErrStaleGeneration)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = t.began.UTC()
	}
	m.CommittedAt = now.UTC()
	m.Format, m.Version, m.Writer = "", "", o.Writer
	if t.app != nil && (t.app.record == nil || len(t.app.pending) > 0) {
		// The run's record exists before the run's first pointer swap,
		// and the segments the manifest references before it is swapped
		// in: written beside the manifest, they cost no round trip.
		var recErr, segErr, manErr error
		overlap.Do(ctx,
			func() {
				if t.app.record == nil {
					recErr = t.writeRecord(ctx, "", a.deadline)
				}
			},
			func() { segErr = a.putSegments(ctx) },
			func() { manErr = t.putManifest(ctx, m, a.deadline) })
		if manErr == nil {
			a.manifestWritten = true
		}
		if err := errors.Join(manErr, recErr, segErr); err != nil {
			a.cleanup(ctx)
			return nil, err
		}
	} else if err := t.putManifest(ctx, m, a.deadline); err != nil {
		return nil, err
	}
	a.manifestWritten = true
	if t.afterManifest != nil {
		if err := t.afterManifest(ctx, m, a.deadline); err != nil {
			a.cleanup(ctx)
			return nil, err
		}
	}
	return m.PointerAfter(base.Pointer), nil
}

// conflict is the error of a commit fenced out by cur.
func (t *Txn) conflict(cur, base Base) error {
	cg, crun := "none", ""
	if cur.Pointer != nil {
		cg, crun = cur.Pointer.Generation, cur.Pointer.RunID
	}
	bg := baseGen(base)
	if bg == "" {
		bg = "(none)"
	}
	return fmt.Errorf("commit %s: generation %s (run %q) is current, not our base %s: %w",
		t.partition, cg, crun, bg, ErrConflict)
}

func baseGen(b Base) string {
	if b.Pointer == nil {
		return ""
	}
	return b.Pointer.Generation
}

// noopFiles completes a no-op result with the current generation's file
// count: from the pointer (version 1.1, no request), else, for a pointer
// written by an older version, from its manifest (best effort: one GET).
func (t *Txn) noopFiles(ctx context.Context, r *Result, p *manifest.Pointer, deadline time.Time) {
	if p == nil {
		return
	}
	if p.HasHistory() {
		r.Files = p.Files
		return
	}
	if m, err := t.readManifest(ctx, p.Generation, deadline); err == nil {
		r.Files = m.FileCount()
	}
}

func (t *Txn) result(p *manifest.Pointer, staged string, changed bool, outcome Outcome) Result {
	r := Result{Partition: t.partition, Staged: staged, Changed: changed, Outcome: outcome, RunID: t.opts.RunID}
	if p != nil {
		r.Generation = p.Generation
		r.CommittedBy = p.RunID
		if outcome == SameRun {
			if e, ok := p.FindRun(t.opts.RunID); ok {
				r.RunGeneration = e.Generation
			}
		}
		r.Seq = p.Seq
		r.Rows = p.Rows
		r.Bytes = p.Bytes
		r.IdempotencyKey = t.partition + "@" + p.Generation
	}
	return r
}

// putManifest writes the manifest create-if-absent, retrying transient
// failures. A 412 after a retry is our own earlier attempt if the stored
// bytes are ours.
func (t *Txn) putManifest(ctx context.Context, m *manifest.Manifest, deadline time.Time) error {
	data, err := manifest.Encode(m)
	if err != nil {
		return fmt.Errorf("commit %s: %w", t.partition, err)
	}
	key := layout.ManifestKey(t.partition, m.Generation)
	var corrupt error
	err = t.policy(deadline, 1).Do(ctx, store.IsRetryable, func(int) error {
		_, err := t.st.Put(ctx, key, data, store.PutOptions{IfNoneMatch: true, ContentType: "application/json"})
		if !errors.Is(err, store.ErrPrecondition) {
			return err
		}
		got, _, gerr := store.ReadAll(ctx, t.st, key)
		switch {
		case gerr == nil && bytes.Equal(got, data):
			return nil
		case gerr == nil:
			corrupt = fmt.Errorf("commit %s: manifest %s exists with other content: %w", t.partition, key, ErrCorrupt)
			return corrupt
		case errors.Is(gerr, store.ErrNotFound) || store.IsRetryable(gerr):
			// The read-back failed: as transient as any read (even a
			// missing object, just after a 412). Retry the PUT; its 412
			// leads back here.
			return fmt.Errorf("read back after %v: %v: %w", err, gerr, store.ErrTransient)
		}
		return fmt.Errorf("read back after %v: %w", err, gerr)
	})
	if err != nil && err == corrupt {
		return err
	}
	if err != nil {
		return fmt.Errorf("commit %s: write manifest: %w", t.partition, err)
	}
	return nil
}

// swapPointer PUTs the pointer conditionally on base and returns the pointer
// that is current afterwards: ours on a clean success; otherwise whatever a
// read-back finds. It retries only while the read-back proves that our PUT
// did not land (the pointer is still the base).
func (t *Txn) swapPointer(ctx context.Context, p *manifest.Pointer, base Base, deadline time.Time) (Base, error) {
	data, err := manifest.EncodePointer(p)
	if err != nil {
		return Base{}, fmt.Errorf("commit %s: %w", t.partition, err)
	}
	opts := store.PutOptions{IfMatch: base.ETag, ContentType: "application/json"}
	if base.Pointer == nil {
		opts = store.PutOptions{IfNoneMatch: true, ContentType: "application/json"}
	}
	key := layout.PointerKey(t.partition)
	var lastErr error
	pol := t.policy(deadline, 1)
	pol.OnRetry = nil // counted below: a 412 is not a retry
	for attempt := 0; ; attempt++ {
		a, err := t.st.Put(ctx, key, data, opts)
		if err == nil {
			return Base{Pointer: p, ETag: a.ETag}, nil
		}
		if ctx.Err() != nil {
			// Cancelled mid-flight: the PUT may have landed. Say so.
			return Base{}, fmt.Errorf("commit %s: %w (cancelled: %v)", t.partition, ErrOutcomeUnknown, ctx.Err())
		}
		if !errors.Is(err, store.ErrPrecondition) && !store.IsRetryable(err) {
			// A logic error (403, missing bucket): the request was refused.
			return Base{}, fmt.Errorf("commit %s: swap pointer: %w", t.partition, err)
		}
		if !errors.Is(err, store.ErrPrecondition) {
			t.stats.Retries++
		}
		lastErr = err
		// Precondition failed or outcome unknown: read back.
		t.stats.ReadBacks++
		cur, rerr := t.readPointer(ctx, deadline)
		if rerr != nil {
			return Base{}, fmt.Errorf("commit %s: %w (pointer PUT: %v; read back: %v)", t.partition, ErrOutcomeUnknown, lastErr, rerr)
		}
		stillBase := (cur.Pointer == nil && base.Pointer == nil) ||
			(cur.Pointer != nil && base.Pointer != nil && cur.ETag == base.ETag)
		if !stillBase {
			return cur, nil
		}
		// The pointer is still the base: our PUT did not land. Retry it.
		if pol.Exhausted(ctx, attempt) {
			return Base{}, fmt.Errorf("commit %s: pointer swap failed %d times, last: %v: %w", t.partition, attempt+1, lastErr, ErrOutcomeUnknown)
		}
		if err := pol.Wait(ctx, attempt, lastErr); err != nil {
			return Base{}, fmt.Errorf("commit %s: %w (%v)", t.partition, ErrOutcomeUnknown, err)
		}
	}
}

// readPointer reads and decodes the pointer, retrying transient failures
// (reads are safe to retry: twice as many attempts as a write).
func (t *Txn) readPointer(ctx context.Context, deadline time.Time) (Base, error) {
	var b Base
	err := t.policy(deadline, 2).Do(ctx, store.IsRetryable, func(int) error {
		var err error
		b, err = ReadPointer(ctx, t.st, t.partition)
		if errors.Is(err, ErrNoData) {
			b, err = Base{}, nil
		}
		return err
	})
	if err != nil {
		return Base{}, err
	}
	return b, nil
}

// inChain walks the parent chain from cur back to base looking for gen.
func (t *Txn) inChain(ctx context.Context, cur *manifest.Pointer, gen string, base Base, deadline time.Time) (bool, error) {
	next := cur.Parent
	stop := ""
	if base.Pointer != nil {
		stop = base.Pointer.Generation
	}
	if cur.Generation == stop {
		return false, nil
	}
	for depth := 0; next != "" && next != stop && depth < 10000; depth++ {
		if next == gen {
			return true, nil
		}
		m, err := t.readManifest(ctx, next, deadline)
		if errors.Is(err, ErrGenerationNotFound) {
			// Collected: GC keeps every generation retired less than its
			// min-age ago, so ours (just committed) would still be here.
			return false, nil
		}
		if err != nil {
			return false, err
		}
		next = m.Parent
	}
	return next == gen, nil
}

// readManifest reads a manifest as stored (ReadManifestHead: an append's
// head is not expanded; what a transaction reads a manifest for, its
// parent, data generation, run and counts, the head has).
func (t *Txn) readManifest(ctx context.Context, gen string, deadline time.Time) (*manifest.Manifest, error) {
	var m *manifest.Manifest
	// A missing manifest is an answer (collected), not a failure: it does
	// not come back by retrying (and NotFound is not retryable).
	err := t.policy(deadline, 1).Do(ctx, store.IsRetryable, func(int) error {
		var err error
		m, _, err = ReadManifestHead(ctx, t.st, t.partition, gen)
		return err
	})
	return m, err
}

// policy is the retry policy of one loop of this transaction: the
// options' bounds (attempts times MaxAttempts), the commit's deadline (on
// the context's clock, internal/env), and Stats.Retries counting the
// retries.
func (t *Txn) policy(deadline time.Time, attempts int) retry.Policy {
	return t.opts.policy(deadline, attempts, &t.stats)
}

// policy is the retry policy of a loop outside a transaction (or of one,
// see Txn.policy); retries count in stats.
func (o *Options) policy(deadline time.Time, attempts int, stats *Stats) retry.Policy {
	return retry.Policy{
		MaxAttempts: attempts * o.MaxAttempts, Deadline: deadline,
		BaseDelay: o.BaseDelay, MaxDelay: o.MaxDelay,
		OnRetry: func(int, error) { stats.Retries++ },
	}
}

// storeNow is store.Now.
func storeNow(ctx context.Context, st store.Store) (time.Time, error) { return store.Now(ctx, st) }
