package swap

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// Rollback makes an earlier generation current again, as a new conditional
// swap fenced like any commit: a new manifest (with rollback_of set) that
// reuses the old generation's data files, which must all still exist. A
// rollback has no run id unless opts.RunID gives one; with one, it obeys the
// same-run rule of every commit: once that run id committed to the partition
// (among the last manifest.MaxHistory commits), running it again is a no-op
// (SameRun) unless opts.Force, and costs only the pointer's GET.
func Rollback(ctx context.Context, st store.Store, part, to string, opts Options) (Result, error) {
	if err := partition.Validate(part); err != nil {
		return Result{}, err // before any request
	}
	if err := manifest.ValidateRunID(opts.RunID); err != nil {
		return Result{}, err
	}
	var (
		t        *Txn
		err      error
		old      *manifest.Manifest
		checkErr error
	)
	// The target's manifest, then every one of its files, still there at
	// its recorded size: one list (the check a staged commit makes too).
	check := func() {
		// The target as stored: a head's segments are carried to the
		// new manifest as they are (the same data generation holds
		// them), and its files checked from its expansion.
		if old, _, checkErr = ReadManifestHead(ctx, st, part, to); checkErr == nil {
			all := *old
			if checkErr = ExpandManifest(ctx, st, &all); checkErr == nil {
				_, checkErr = checkFiles(ctx, st, part, all.DataGen(), all.DataLayout, all.Files)
			}
		}
	}
	if opts.RunID == "" || opts.Force {
		// No same-run no-op is possible, so the target is checked
		// whatever the pointer says: the pointer's read and the target's
		// at once. Neither decides anything about the other, and what
		// keeps GC from collecting the target meanwhile is the re-read of
		// the target after our manifest is written (recheckTarget).
		overlap.Do(ctx, func() { t, err = Begin(ctx, st, part, opts) }, check)
		if err != nil {
			return Result{}, err
		}
		t.generation = "" // nothing is staged
	} else {
		if t, err = Begin(ctx, st, part, opts); err != nil {
			return Result{}, err
		}
		t.generation = "" // nothing is staged
		if t.AlreadyCommitted() {
			t.done = true
			r := t.result(t.base.Pointer, "", false, SameRun)
			t.noopFiles(ctx, &r, t.base.Pointer, env.From(ctx).Now().Add(t.opts.MaxElapsed))
			return r, nil
		}
		check()
	}
	if checkErr != nil {
		return Result{}, fmt.Errorf("rollback %s to %s: %w", part, to, missingTarget(t.base.Pointer, part, to, checkErr))
	}
	if cur := t.base.Pointer; cur != nil && (cur.Generation == to || currentDataGen(cur) == old.DataGen() && old.SameContent(cur.ContentChecksum, cur.Rows)) {
		// The target, or its data: a rollback to G repeated, or to the
		// generation a rollback already restored, would only add a
		// generation with the same files. (Generations of a chain of
		// appends share their data generation and differ in files: their
		// content tells them apart.)
		r := t.result(t.base.Pointer, "", false, Identical)
		r.Files = old.FileCount()
		return r, nil
	}
	m := &manifest.Manifest{
		Partition:      part,
		Generation:     cmp.Or(opts.Generation, env.From(ctx).NewGenerationID()),
		DataGeneration: old.DataGen(),
		RunID:          opts.RunID,
		RollbackOf:     to,
		Segments:       old.Segments,
		Content:        old.Content,
		DataLayout:     old.DataLayout,
	}
	t.generation = m.Generation
	t.restore = true // a rollback restores content on purpose, even if identical
	t.afterManifest = func(ctx context.Context, m *manifest.Manifest, deadline time.Time) error {
		return recheckTarget(ctx, t, m, deadline)
	}
	return t.commit(ctx, m)
}

// recheckTarget reads the rollback target's manifest again once ours is
// written. GC deletes a collected generation's manifest before its data,
// and re-lists manifests before deleting data, sparing data that a new
// manifest names. Reading the target again now, after ours exists, closes
// the race: either GC's re-list sees ours, or we see the target gone and
// refuse.
func recheckTarget(ctx context.Context, t *Txn, m *manifest.Manifest, deadline time.Time) error {
	if _, err := t.readManifest(ctx, m.RollbackOf, deadline); err != nil {
		return fmt.Errorf("rollback %s to %s: the target was collected while rolling back: %w", t.partition, m.RollbackOf, err)
	}
	return nil
}

// currentDataGen returns whose files the pointer's current generation uses:
// its own, or those a rollback restored (from the pointer's history; a
// pointer without history, format 1.0, is taken to use its own).
func currentDataGen(p *manifest.Pointer) string {
	if len(p.History) > 0 && p.History[0].Generation == p.Generation && p.History[0].DataGeneration != "" {
		return p.History[0].DataGeneration
	}
	return p.Generation
}

// missingTarget explains a rollback target that is gone (err matches
// ErrGenerationNotFound) from the pointer's history: a generation it
// names was committed and has since been collected by gc, which the
// message says with when it was committed and replaced (gc records no
// time of its deletions); one it does not name never was committed to the
// partition, or is older than the commits the history keeps. Other
// errors are returned as they are.
func missingTarget(p *manifest.Pointer, part, to string, err error) error {
	if !errors.Is(err, ErrGenerationNotFound) || p == nil || !p.HasHistory() {
		return err
	}
	hint := fmt.Sprintf("'pswap history --partition %s' lists the generations that can still be restored", part)
	for i, e := range p.History {
		if e.Generation != to {
			continue
		}
		when := "committed " + e.CommittedAt.UTC().Format(time.RFC3339)
		if e.RunID != "" {
			when += fmt.Sprintf(" by run %q", e.RunID)
		}
		if i > 0 {
			next := p.History[i-1]
			when += fmt.Sprintf(", replaced %s by generation %s", next.CommittedAt.UTC().Format(time.RFC3339), next.Generation)
		}
		return fmt.Errorf("gc removed generation %s (%s; gc deletes a generation once it is beyond --keep and was replaced longer than --min-age ago, "+
			"and records no time of the deletion); %s: %w", to, when, hint, err)
	}
	return fmt.Errorf("no generation %s in the history of %s (its last %d commits at most): never committed to this partition, or older than its history; %s: %w",
		to, part, manifest.MaxHistory, hint, err)
}
