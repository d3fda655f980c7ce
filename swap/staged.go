package swap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// Staged commits: a generation is staged (or reserved for an external
// engine) by one process and committed by another, later.
//
// The staged record, <partition>/_pswap/staged/<generation>.json, holds what
// the commit needs: the pointer the generation was staged against (the
// fence) and, for a generation pswap staged itself, its content. A
// reservation has no content: the commit adopts whatever files an engine
// wrote under the generation's data prefix (see AdoptFunc).
//
// The fence starts at staging: the commit swaps the pointer conditionally on
// the recorded base, so if another run committed in between, the commit is
// a conflict (ErrConflict, nothing changed, the staged files and record kept
// for a retry) unless the policy is Overwrite. A commit that succeeded once
// is a no-op when it runs again (Outcome AlreadyCommitted). A record never
// committed is an orphan that garbage collection removes, with its files,
// once all of them are older than its orphan age.

const (
	// formatStaged is the "format" field of a staged record.
	formatStaged = "pswap-staged"
	// maxStagedBytes bounds a staged record (it may hold 100,000 files).
	maxStagedBytes = manifest.MaxDocumentBytes
)

// AlreadyCommitted: a staged generation that an earlier run of the same
// commit already swapped in (it may since have been replaced). changed=false.
const AlreadyCommitted Outcome = "already-committed"

// StagedRecord is what Stage and Reserve write and CommitStaged reads.
type StagedRecord struct {
	Format     string `json:"format"`  // formatStaged
	Version    string `json:"version"` // manifest.Version
	Partition  string `json:"partition"`
	Generation string `json:"generation"`
	// Reserved: the files are written by an external engine and adopted at
	// commit time; Content is empty.
	Reserved bool `json:"reserved,omitempty"`
	// Base is the pointer current when the generation was staged (nil: the
	// partition had none), BaseETag its version: the commit is fenced on it.
	Base     *manifest.Pointer `json:"base,omitempty"`
	BaseETag string            `json:"base_etag,omitempty"`
	// Content is what pswap staged (not for reservations).
	Content *manifest.Content `json:"content,omitempty"`
	// Equivalent is Content's Equivalent checksums (not part of a
	// manifest), kept so that the commit compares them with its base too.
	Equivalent []string `json:"equivalent,omitempty"`
	// StagedAt is when staging began, by the store's clock.
	StagedAt time.Time `json:"staged_at"`
	// DataLayout is where the generation's data lies
	// (manifest.Manifest.DataLayout); omitted in a record of the legacy
	// layout.
	DataLayout int `json:"data_layout,omitempty"`

	legacy bool // decoded from an earlier version's record: no fence
	// atLegacyKey: read at the partition's legacy key (layout.LegacyStagedKey).
	atLegacyKey bool
}

// Validate reports the first problem of a staged record.
func (r *StagedRecord) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("staged record %s/%s: %s: %w", r.Partition, r.Generation, fmt.Sprintf(format, a...), manifest.ErrInvalid)
	}
	switch {
	case r.Format != formatStaged:
		return bad("format %q, want %q", r.Format, formatStaged)
	case !strings.HasPrefix(r.Version, "1."):
		return bad("version %q, want 1.x", r.Version)
	case manifest.ValidateGenerationID(r.Generation) != nil:
		return bad("generation: %v", manifest.ValidateGenerationID(r.Generation))
	case r.Reserved == (r.Content != nil):
		return bad("a reservation has no content, a staged generation has one")
	case (r.Base == nil) != (r.BaseETag == ""):
		return bad("base and base_etag go together")
	case len(r.BaseETag) > 1024 || strings.ContainsFunc(r.BaseETag, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return bad("base_etag is not a printable token of at most 1024 bytes")
	case r.StagedAt.IsZero():
		return bad("staged_at missing")
	case len(r.Equivalent) > 4 || (len(r.Equivalent) > 0 && r.Content == nil):
		return bad("at most 4 equivalent checksums, and only with content")
	case r.DataLayout != 0 && r.DataLayout != manifest.DataLayoutTable:
		return bad("data_layout %d, want %d or none", r.DataLayout, manifest.DataLayoutTable)
	}
	for _, e := range r.Equivalent {
		if err := manifest.ValidateContentChecksum(e); err != nil {
			return bad("equivalent: %v", err)
		}
	}
	if err := partition.Validate(r.Partition); err != nil {
		return fmt.Errorf("staged record: %w: %w", manifest.ErrInvalid, err)
	}
	if r.Base != nil {
		if err := r.Base.Validate(); err != nil {
			return fmt.Errorf("staged record %s/%s: base: %w", r.Partition, r.Generation, err)
		}
		if r.Base.Partition != r.Partition {
			return bad("base pointer is of partition %s", r.Base.Partition)
		}
	}
	if r.Content != nil {
		if err := r.Content.Validate(); err != nil {
			return fmt.Errorf("staged record %s/%s: %w", r.Partition, r.Generation, err)
		}
	}
	return nil
}

// Stage records the transaction's generation, with content c, as staged
// against the transaction's base: a later CommitStaged (perhaps in another
// process) commits it. The transaction is finished.
func (t *Txn) Stage(ctx context.Context, c manifest.Content) error {
	if t.done {
		return errors.New("swap: transaction already finished")
	}
	if err := t.SettleLegacy(ctx, false); err != nil {
		return err
	}
	t.done = true
	return t.putStaged(ctx, &c)
}

func (t *Txn) putStaged(ctx context.Context, c *manifest.Content) error {
	r := &StagedRecord{Format: formatStaged, Version: manifest.Version, Partition: t.partition,
		Generation: t.generation, Reserved: c == nil, Base: t.base.Pointer, StagedAt: t.began.UTC(), Content: c,
		DataLayout: t.dataLayout}
	if r.Base != nil {
		r.BaseETag = t.base.ETag
	}
	if c != nil {
		r.Equivalent = c.Equivalent
	}
	data, err := encodeStaged(r)
	if err != nil {
		return err
	}
	key := layout.StagedKey(t.partition, t.generation)
	err = t.policy(env.From(ctx).Now().Add(t.opts.MaxElapsed), 1).Do(ctx, store.IsRetryable, func(int) error {
		_, err := t.st.Put(ctx, key, data, store.PutOptions{IfNoneMatch: true, ContentType: "application/json"})
		if errors.Is(err, store.ErrPrecondition) {
			// Our own earlier attempt, if the stored bytes are ours.
			if got, _, gerr := store.ReadAll(ctx, t.st, key); gerr == nil && bytes.Equal(got, data) {
				return nil
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("record staged generation %s/%s: %w", t.partition, t.generation, err)
	}
	return nil
}

// Reservation is a generation reserved for an external writer.
type Reservation struct {
	Partition  string
	Generation string
	// Prefix is the data prefix (a store key ending in "/") the engine
	// writes its files under.
	Prefix string
	// Base is the pointer the reservation was made against.
	Base Base
	// ReservedAt is when the reservation was made, by the store's clock.
	ReservedAt time.Time
}

// Reserve allocates a generation for an external engine to write into and
// records it, fenced on the current pointer: two requests (GET pointer, PUT
// record). CommitStaged adopts the files found under Prefix.
func Reserve(ctx context.Context, st store.Store, part string, opts Options) (Reservation, error) {
	t, err := Begin(ctx, st, part, opts)
	if err != nil {
		return Reservation{}, err
	}
	t.done = true
	if err := t.putStaged(ctx, nil); err != nil {
		return Reservation{}, err
	}
	return Reservation{Partition: part, Generation: t.generation, Prefix: t.DataPrefix(), Base: t.base, ReservedAt: t.began}, nil
}

// ReadStaged reads a staged record. A missing one is ErrGenerationNotFound.
func ReadStaged(ctx context.Context, st store.Store, part, gen string) (*StagedRecord, error) {
	if err := manifest.ValidateGenerationID(gen); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGenerationNotFound, err)
	}
	data, _, err := store.ReadAll(ctx, st, layout.StagedKey(part, gen))
	atLegacy := false
	if errors.Is(err, store.ErrNotFound) {
		// Staged in the legacy layout (by an older pswap, or before the
		// partition's migration copied it).
		data, _, err = store.ReadAll(ctx, st, layout.LegacyStagedKey(part, gen))
		atLegacy = true
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%s: staged generation %s: %w", part, gen, ErrGenerationNotFound)
	}
	if err != nil {
		return nil, err
	}
	r, err := decodeStaged(data)
	if err != nil {
		return nil, fmt.Errorf("%s: staged generation %s: %w: %w", part, gen, ErrCorrupt, err)
	}
	if r.Partition != part || r.Generation != gen {
		return nil, fmt.Errorf("%s: staged generation %s records %s/%s: %w", part, gen, r.Partition, r.Generation, ErrCorrupt)
	}
	r.atLegacyKey = atLegacy
	return r, nil
}

// checkFiles is the check that a commit of staged files and a rollback
// share: every file of files lies under the data prefix of generation
// dataGen with its recorded size, and, for an "etag:" checksum, at its
// recorded version when the listing carries ETags. It costs one listing
// (a page per 1,000 objects). It returns the oldest modification time of
// the files found (zero for none), which dates the generation by the
// store's clock, and an error matching ErrGenerationNotFound that names the
// first file missing or changed.
func checkFiles(ctx context.Context, st store.Store, part, dataGen string, dataLayout int, files []manifest.File) (time.Time, error) {
	prefix := layout.DataPrefixIn(part, dataGen, dataLayout)
	have := map[string]store.Attrs{}
	var oldest time.Time
	for a, err := range st.List(ctx, prefix) {
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: list generation %s: %w", part, dataGen, err)
		}
		have[strings.TrimPrefix(a.Key, prefix)] = a
		if oldest.IsZero() || a.ModTime.Before(oldest) {
			oldest = a.ModTime
		}
	}
	for _, f := range files {
		a, ok := have[f.Path]
		switch {
		case !ok:
			return oldest, fmt.Errorf("%s: generation %s: data file %s is missing (collected?): %w", part, dataGen, f.Path, ErrGenerationNotFound)
		case a.Size != f.Size:
			return oldest, fmt.Errorf("%s: generation %s: data file %s has %d bytes, recorded %d: %w", part, dataGen, f.Path, a.Size, f.Size, ErrGenerationNotFound)
		case a.ETag != "" && strings.HasPrefix(f.Checksum, manifest.ETagChecksumPrefix) && !manifest.SameETag(f.Checksum, a.ETag):
			return oldest, fmt.Errorf("%s: generation %s: data file %s was replaced since it was recorded: %w", part, dataGen, f.Path, ErrGenerationNotFound)
		}
	}
	return oldest, nil
}

// AdoptFunc reads what an external engine wrote under a reservation's data
// prefix and describes it: the files to commit (paths relative to prefix)
// with their sizes, rows and store checksums, and the content checksum. It
// must not download the data (footers only) and fails, naming the object,
// on anything that is not a complete Parquet file. oldest is the earliest
// modification time of the files, by the store's clock.
type AdoptFunc func(ctx context.Context, st store.Store, prefix string) (c manifest.Content, oldest time.Time, err error)

// CommitStaged commits a generation recorded by Stage or Reserve; adopt
// describes a reservation's files (it may be nil when none is expected).
//
// The swap is fenced on the pointer recorded at staging (see the comment
// at the top of this file). A staged generation older than the grace
// period is refused with ErrStaleGeneration. Running it again after it
// succeeded returns Outcome AlreadyCommitted, changed=false.
func CommitStaged(ctx context.Context, st store.Store, part, gen string, opts Options, adopt AdoptFunc) (Result, error) {
	if err := manifest.ValidateGenerationID(gen); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrGenerationNotFound, err)
	}
	opts.defaults()
	// Reads before the transaction retry transient failures as its own
	// requests do (the CLI runs the SDK at one attempt).
	var pre Stats
	reads := opts.policy(env.From(ctx).Now().Add(opts.MaxElapsed), 1, &pre)
	var rec *StagedRecord
	err := reads.Do(ctx, store.IsRetryable, func(int) (err error) {
		rec, err = ReadStaged(ctx, st, part, gen)
		return err
	})
	if errors.Is(err, ErrGenerationNotFound) {
		return committedBefore(ctx, st, part, gen, opts, err)
	}
	if err != nil {
		return Result{}, err
	}
	var content manifest.Content
	var oldest time.Time
	if rec.Reserved {
		if adopt == nil {
			return Result{}, fmt.Errorf("%s: generation %s is a reservation and nothing can adopt its files", part, gen)
		}
		err = reads.Do(ctx, store.IsRetryable, func(int) (err error) {
			content, oldest, err = adopt(ctx, st, layout.DataPrefixIn(part, gen, rec.DataLayout))
			return err
		})
		if err != nil {
			return Result{}, err
		}
	} else {
		content = *rec.Content
		err = reads.Do(ctx, store.IsRetryable, func(int) (err error) {
			oldest, err = checkFiles(ctx, st, part, gen, rec.DataLayout, content.Files)
			return err
		})
		if err != nil {
			return Result{}, fmt.Errorf("staged generation: %w", err)
		}
	}
	began := rec.StagedAt
	if !oldest.IsZero() && oldest.Before(began) {
		began = oldest
	}
	t := &Txn{st: st, partition: part, generation: gen, opts: opts, began: began, keepData: true, stats: pre, dataLayout: rec.DataLayout}
	if rec.legacy || rec.DataLayout != manifest.DataLayoutTable {
		// No fence recorded, or one on the pointer at its legacy key (staged
		// before the partition moved): fence on the pointer as it is now,
		// which must be the recorded one (same sequence number: a pointer's
		// content never repeats) unless the policy is Overwrite.
		deadline := env.From(ctx).Now().Add(opts.MaxElapsed)
		if t.base, err = t.readPointer(ctx, deadline); err != nil {
			return Result{}, err
		}
		if t.base.Legacy || t.base.Moved {
			mr, err := migrateFrom(ctx, st, part, t.base, &t.opts, deadline, &t.stats)
			if err != nil {
				return Result{}, err
			}
			t.base = mr.Base
		}
		if !rec.legacy && !sameSeq(rec.Base, t.base.Pointer) {
			if opts.OnConflict != Overwrite {
				cur := t.base
				t.base = Base{Pointer: rec.Base}
				return Result{}, t.fenced(cur)
			}
		}
	} else {
		t.base = Base{Pointer: rec.Base, ETag: rec.BaseETag}
		if t.wouldSkip(content) {
			// A no-op judged on the recorded base is right only if the
			// base is still current: read the pointer to be sure.
			cur, err := t.readPointer(ctx, env.From(ctx).Now().Add(opts.MaxElapsed))
			if err != nil {
				return Result{}, err
			}
			if !SamePointer(cur, t.base) {
				if opts.OnConflict != Overwrite {
					return Result{}, t.fenced(cur)
				}
				t.base = cur
			}
		}
	}
	m := &manifest.Manifest{Partition: part, Generation: gen, RunID: opts.RunID, Content: content, CreatedAt: began.UTC(), DataLayout: rec.DataLayout}
	res, err := t.commit(ctx, m)
	if errors.Is(err, ErrCorrupt) {
		// The manifest exists with other bytes: an earlier run of this
		// commit wrote it (and perhaps swapped the pointer) and then died.
		if r, ok, serr := settleEarlier(ctx, st, part, gen, opts, m); serr != nil || ok {
			if serr != nil {
				return Result{}, serr
			}
			res, err = r, nil
		}
	}
	if err == nil || errors.Is(err, ErrStaleGeneration) {
		// The record where it was read, and its other copy (a record of
		// the legacy layout copied by a migration since: read first, it
		// hides the legacy one).
		keys := []string{layout.StagedKey(part, gen)}
		if rec.atLegacyKey || rec.DataLayout != manifest.DataLayoutTable {
			keys = append(keys, layout.LegacyStagedKey(part, gen))
		}
		if len(keys) == 1 {
			st.Delete(context.WithoutCancel(ctx), keys[0])
		} else {
			store.DeleteAll(context.WithoutCancel(ctx), st, keys)
		}
	}
	return res, err
}

// wouldSkip reports whether commit would make a no-op of c on the base.
func (t *Txn) wouldSkip(c manifest.Content) bool {
	b := t.base.Pointer
	return b != nil && !t.opts.Force && (t.sameRun(t.base) ||
		c.SameContent(b.ContentChecksum, b.Rows))
}

func (t *Txn) fenced(cur Base) error {
	cg, crun := "none", ""
	if cur.Pointer != nil {
		cg, crun = cur.Pointer.Generation, cur.Pointer.RunID
	}
	return fmt.Errorf("commit %s: generation %s (run %q) is current, not %s, which generation %s was staged against: %w",
		t.partition, cg, crun, baseGen(t.base), t.generation, ErrConflict)
}

// settleEarlier resolves a staged commit whose manifest an earlier run
// already wrote: if that run's commit is in the pointer's chain, this one is
// a no-op; if not (it died before the swap), the generation is committed
// under a new manifest id that reuses its data, as a rebase does.
func settleEarlier(ctx context.Context, st store.Store, part, gen string, opts Options, m *manifest.Manifest) (Result, bool, error) {
	old, err := ReadManifest(ctx, st, part, gen)
	if err != nil && store.IsRetryable(err) {
		// Not knowing whose manifest it is, say so as what it is: a
		// transient failure the caller retries, not corruption.
		return Result{}, false, fmt.Errorf("commit %s: reading the manifest of generation %s that an earlier run wrote: %w", part, gen, err)
	}
	if err != nil || old.Partition != part || old.ContentChecksum != m.ContentChecksum || old.Rows != m.Rows {
		return Result{}, false, nil // not ours: report the original error
	}
	if r, found, err := findCommitted(ctx, st, part, gen, opts); err != nil || found {
		return r, found, err
	}
	t, err := Begin(ctx, st, part, opts)
	if err != nil {
		return Result{}, false, err
	}
	t.keepData = true
	t.began = m.CreatedAt
	m2 := &manifest.Manifest{Partition: part, Generation: env.From(ctx).NewGenerationID(), DataGeneration: gen,
		RunID: opts.RunID, Content: m.Content, CreatedAt: m.CreatedAt, DataLayout: m.DataLayout}
	t.generation = m2.Generation
	r, err := t.commit(ctx, m2)
	r.Staged = gen
	return r, err == nil, err
}

// committedBefore answers a CommitStaged whose record is gone: a no-op if
// the generation was committed (it is in the pointer's chain, by id or as
// the data of a rebased commit), else notFound.
func committedBefore(ctx context.Context, st store.Store, part, gen string, opts Options, notFound error) (Result, error) {
	r, found, err := findCommitted(ctx, st, part, gen, opts)
	if err != nil {
		return Result{}, err
	}
	if !found {
		return Result{}, fmt.Errorf("%w (never staged, collected, or staged to another partition)", notFound)
	}
	return r, nil
}

// maxChainWalk bounds how far back findCommitted looks.
const maxChainWalk = 1000

// findCommitted walks the pointer's chain, newest first, for a generation
// that is gen or whose data is gen's.
func findCommitted(ctx context.Context, st store.Store, part, gen string, opts Options) (Result, bool, error) {
	t := &Txn{st: st, partition: part, opts: opts}
	deadline := env.From(ctx).Now().Add(opts.MaxElapsed)
	cur, err := t.readPointer(ctx, deadline)
	if err != nil || cur.Pointer == nil {
		return Result{}, false, err
	}
	next := cur.Pointer.Generation
	for depth := 0; next != "" && depth < maxChainWalk; depth++ {
		if next == gen {
			r := t.result(cur.Pointer, gen, false, AlreadyCommitted)
			t.noopFiles(ctx, &r, cur.Pointer, deadline)
			return r, true, nil
		}
		m, err := t.readManifest(ctx, next, deadline)
		if errors.Is(err, ErrGenerationNotFound) {
			return Result{}, false, nil
		}
		if err != nil {
			return Result{}, false, err
		}
		if m.DataGen() == gen {
			r := t.result(cur.Pointer, gen, false, AlreadyCommitted)
			t.noopFiles(ctx, &r, cur.Pointer, deadline)
			return r, true, nil
		}
		next = m.Parent
	}
	return Result{}, false, nil
}

// sameSeq reports whether two pointers are the same version of a
// partition's pointer, wherever each was read: equal sequence numbers and
// generations (a pointer's content never repeats), or both absent.
func sameSeq(a, b *manifest.Pointer) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Seq == b.Seq && a.Generation == b.Generation
}
