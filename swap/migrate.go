package swap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// Migration of a partition from the legacy layout (everything under
// <partition>/_pswap/) to the table-level one (_pswap/p/<partition>/),
// crash-safe and idempotent, in three steps:
//
//  1. copy every manifest and staged record to its new key, create-if-absent
//     (a key that exists must hold equal bytes);
//  2. fence the legacy pointer: replace it, If-Match the ETag read before
//     step 1, by a moved record (the pointer's content plus moved_to),
//     which an older pswap's strict parser refuses;
//  3. create the new pointer, create-if-absent, from that content.
//
// Whatever stops a migration, the next one resumes: before step 2 the
// legacy pointer is still live and step 1 is repeated (equal bytes); after
// it, ReadPointer follows the moved record (Base.Moved) and the next writer
// does step 3. Two migrators race only on create-if-absent PUTs of equal
// bytes and on step 2's If-Match, which one of them wins; the loser reads
// the moved record and goes on with step 3. An older pswap that read the
// legacy pointer before step 2 loses its swap to the fence and then refuses
// the record, committing nothing. Data files never move: each manifest
// records where its data lies (manifest.Manifest.DataLayout).

// MaxMigrateRounds bounds how often Migrate starts over when the legacy
// pointer changes under it (an older pswap committing meanwhile).
const MaxMigrateRounds = 10

// MigrateResult says what Migrate did.
type MigrateResult struct {
	// Migrated: this call finished a move (step 3, or steps 1 to 3).
	Migrated bool
	// Copied counts the manifests and staged records this call wrote to
	// their new keys (those already there with equal bytes not counted).
	Copied int
	// Base is the pointer at its new key after the call (Pointer nil when
	// the partition has no pointer in either layout).
	Base Base
}

// Migrate moves one partition to the table-level layout, if it is still
// in the legacy one, and returns its pointer at the new key. A partition
// already moved (or never committed) costs one GET of its pointer (two
// when it has none: the legacy key is read too). It needs the store's
// write permission on both layouts' keys.
func Migrate(ctx context.Context, st store.Store, part string, opts Options) (MigrateResult, error) {
	if err := partition.Validate(part); err != nil {
		return MigrateResult{}, err
	}
	opts.defaults()
	var stats Stats
	deadline := env.From(ctx).Now().Add(opts.MaxElapsed)
	var b Base
	err := opts.policy(deadline, 2, &stats).Do(ctx, store.IsRetryable, func(int) (err error) {
		b, err = ReadPointer(ctx, st, part)
		if errors.Is(err, ErrNoData) {
			b, err = Base{}, nil
		}
		return err
	})
	if err != nil {
		return MigrateResult{}, err
	}
	return migrateFrom(ctx, st, part, b, &opts, deadline, &stats)
}

// migrateFrom migrates from a pointer just read by ReadPointer. It returns
// b itself when b is at the new key (or absent).
func migrateFrom(ctx context.Context, st store.Store, part string, b Base, opts *Options, deadline time.Time, stats *Stats) (MigrateResult, error) {
	var res MigrateResult
	pol := opts.policy(deadline, 1, stats)
	for round := 0; ; round++ {
		switch {
		case b.Pointer == nil || (!b.Legacy && !b.Moved):
			res.Base = b
			return res, nil
		case b.Moved:
			nb, err := finishMove(ctx, st, part, b.Pointer, opts, deadline, stats)
			if err != nil {
				return res, err
			}
			res.Migrated, res.Base = true, nb
			return res, nil
		}
		if round >= MaxMigrateRounds {
			return res, fmt.Errorf("migrate %s: the legacy pointer changed %d times during its migration (an older pswap still writing it): %w", part, round, ErrConflict)
		}
		// Step 1: copy manifests and staged records.
		n, err := copyLegacy(ctx, st, part, opts, deadline, stats)
		res.Copied += n
		if err != nil {
			return res, err
		}
		// Step 2: fence the legacy pointer with the moved record.
		moved := *b.Pointer
		moved.MovedTo = layout.PointerKey(part)
		data, err := manifest.EncodePointer(&moved)
		if err != nil {
			return res, fmt.Errorf("migrate %s: %w", part, err)
		}
		key := layout.LegacyPointerKey(part)
		fenced := b.ETag
		putErr := pol.Do(ctx, store.IsRetryable, func(int) error {
			_, err := st.Put(ctx, key, data, store.PutOptions{IfMatch: fenced, ContentType: "application/json"})
			return err
		})
		if putErr != nil && !errors.Is(putErr, store.ErrPrecondition) && !store.IsRetryable(putErr) {
			return res, fmt.Errorf("migrate %s: fence the legacy pointer: %w", part, putErr)
		}
		// Landed, lost to another migrator or an older writer, or not
		// known: the legacy key (or the new pointer) says which.
		err = opts.policy(deadline, 2, stats).Do(ctx, store.IsRetryable, func(int) (err error) {
			b, err = ReadPointer(ctx, st, part)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("migrate %s: read back: %w", part, err)
		}
		if putErr != nil && !errors.Is(putErr, store.ErrPrecondition) && b.Legacy && b.ETag == fenced {
			// Still the pointer we read: the fence did not land, and
			// its retries ran out.
			return res, fmt.Errorf("migrate %s: fence the legacy pointer: %w", part, putErr)
		}
	}
}

// finishMove is step 3: the new pointer, create-if-absent, from the moved
// record's content. Another writer that created it first (and perhaps
// committed since) wins: its pointer is returned.
func finishMove(ctx context.Context, st store.Store, part string, moved *manifest.Pointer, opts *Options, deadline time.Time, stats *Stats) (Base, error) {
	p := *moved
	p.MovedTo = ""
	data, err := manifest.EncodePointer(&p)
	if err != nil {
		return Base{}, fmt.Errorf("migrate %s: %w", part, err)
	}
	key := layout.PointerKey(part)
	var a store.Attrs
	err = opts.policy(deadline, 1, stats).Do(ctx, store.IsRetryable, func(int) (err error) {
		a, err = st.Put(ctx, key, data, store.PutOptions{IfNoneMatch: true, ContentType: "application/json"})
		return err
	})
	if err == nil {
		return Base{Pointer: &p, ETag: a.ETag, ModTime: a.ModTime, Raw: data}, nil
	}
	if !errors.Is(err, store.ErrPrecondition) && !store.IsRetryable(err) {
		return Base{}, fmt.Errorf("migrate %s: create the pointer: %w", part, err)
	}
	putErr := err
	var b Base
	err = opts.policy(deadline, 2, stats).Do(ctx, store.IsRetryable, func(int) (err error) {
		b, err = readPointerAt(ctx, st, part, key)
		return err
	})
	if errors.Is(err, ErrNoData) && !errors.Is(putErr, store.ErrPrecondition) {
		return Base{}, fmt.Errorf("migrate %s: create the pointer: %w", part, putErr)
	}
	if err != nil {
		return Base{}, fmt.Errorf("migrate %s: read the new pointer back: %w", part, err)
	}
	return b, nil
}

// copyLegacy is step 1: every manifest and staged record at its legacy key
// copied to its new key, create-if-absent. A key that already holds equal
// bytes (an earlier or concurrent migration) is fine; other bytes are
// ErrCorrupt. An object gone between the listing and its read (collected)
// is skipped. It returns how many it wrote.
func copyLegacy(ctx context.Context, st store.Store, part string, opts *Options, deadline time.Time, stats *Stats) (int, error) {
	type pair struct{ from, to string }
	var pairs []pair
	for _, pre := range []struct {
		prefix string
		kind   layout.Kind
		to     func(part, gen string) string
	}{
		{layout.LegacyManifestsPrefix(part), layout.KindManifest, layout.ManifestKey},
		{layout.LegacyStagedPrefix(part), layout.KindStaged, layout.StagedKey},
	} {
		err := opts.policy(deadline, 1, stats).Do(ctx, store.IsRetryable, func(int) error {
			var ps []pair
			for a, err := range st.List(ctx, pre.prefix) {
				if err != nil {
					return err
				}
				if k, gen := layout.Classify(part, a.Key); k == pre.kind {
					ps = append(ps, pair{a.Key, pre.to(part, gen)})
				}
			}
			pairs = append(pairs, ps...)
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("migrate %s: list %s: %w", part, st.URI(pre.prefix), err)
		}
	}
	n := 0
	for _, pr := range pairs {
		var wrote bool
		err := opts.policy(deadline, 1, stats).Do(ctx, store.IsRetryable, func(int) error {
			data, _, err := store.ReadAll(ctx, st, pr.from)
			if errors.Is(err, store.ErrNotFound) {
				return nil // collected since the listing
			}
			if err != nil {
				return err
			}
			wrote, err = putOnce(ctx, st, pr.to, data)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("migrate %s: copy %s: %w", part, pr.from, err)
		}
		if wrote {
			n++
		}
	}
	return n, nil
}

// putOnce writes data at key create-if-absent; a key that holds equal
// bytes already is success (wrote false), other bytes ErrCorrupt.
func putOnce(ctx context.Context, st store.Store, key string, data []byte) (wrote bool, err error) {
	_, err = st.Put(ctx, key, data, store.PutOptions{IfNoneMatch: true, ContentType: "application/json"})
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, store.ErrPrecondition) {
		return false, err
	}
	got, _, gerr := store.ReadAll(ctx, st, key)
	switch {
	case gerr == nil && bytes.Equal(got, data):
		return false, nil
	case gerr == nil:
		return false, fmt.Errorf("%s exists with other content: %w", st.URI(key), ErrCorrupt)
	case errors.Is(gerr, store.ErrNotFound):
		return false, fmt.Errorf("read back after %v: %v: %w", err, gerr, store.ErrTransient)
	}
	return false, gerr
}
