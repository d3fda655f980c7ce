package lakehouse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/store"
)

// DefaultRetention keeps snapshots (and so the files they name) for a week,
// Iceberg's own default for expiring snapshots.
const DefaultRetention = 7 * 24 * time.Hour

// DefaultMetadataMinAge keeps every metadata object younger than this: a
// publisher writes its manifests and manifest list before the version that
// names them (within twice Options.MaxElapsed, plus a request's flight),
// its version names the manifests of the version it read (at most
// MaxElapsed/2 before its attempt began, with a Prefetch, plus the
// attempt's MaxElapsed), and readers may still be opening an older version.
const DefaultMetadataMinAge = time.Hour

// ExpireOptions tune Expire and Referenced. The zero value works.
type ExpireOptions struct {
	// Retention: snapshots younger than this are kept (default
	// DefaultRetention); the current snapshot is always kept.
	Retention time.Duration
	// MinAge: metadata objects younger than this are never deleted
	// (default DefaultMetadataMinAge).
	MinAge time.Duration
	// DryRun reports what would be expired and deleted, and changes nothing.
	DryRun bool
	// Now is the store's clock (default: the local clock, internal/env).
	Now func() time.Time
	// Catalog, when not nil, is the table's entry in an Iceberg catalog:
	// Expire commits its version to it (for a REST catalog, the
	// remove-snapshots of what it expired) before it deletes anything, and
	// deletes nothing when the catalog cannot be brought up to date: the
	// catalog's current metadata would still name what it deletes.
	Catalog catalog.Catalog
	// MaxAttempts bounds the attempts of each read and delete of Expire
	// and Referenced (default 1+maxReadTries, as a publish's reads). 1
	// retries nothing, for a caller whose store retries each request
	// itself (the CLI's gc: one retry layer).
	MaxAttempts int
}

func (o ExpireOptions) withDefaults(ctx context.Context) ExpireOptions {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MinAge <= 0 {
		o.MinAge = DefaultMetadataMinAge
	}
	if o.Now == nil {
		o.Now = env.From(ctx).Now
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 1 + maxReadTries
	}
	return o
}

// expirer is the publisher of an expiry: its reads retry up to
// o.MaxAttempts.
func expirer(ctx context.Context, st store.Store, o ExpireOptions) *publisher {
	p := newLoader(ctx, st, Options{})
	p.readTries = o.MaxAttempts - 1
	if p.readTries == 0 {
		p.readTries = -1 // one attempt: no retry
	}
	return p
}

// ExpireResult is what Expire did.
type ExpireResult struct {
	Expired []int64  // snapshot ids removed from the metadata
	Deleted []string // metadata keys deleted (or, with DryRun, to delete)
	Version int      // the version written (0: none)
}

// Referenced returns the store keys of every data file named by the current
// snapshot or by a snapshot younger than the retention: garbage collection
// must keep them (gc.Options.Protect). A table without published metadata
// references nothing. Its reads retry transient failures as Expire's do.
func Referenced(ctx context.Context, st store.Store, opts ExpireOptions) ([]string, error) {
	o := opts.withDefaults(ctx)
	p := expirer(ctx, st, o)
	s, err := p.loadRetried(ctx, true)
	if err != nil || s.meta == nil {
		return nil, err
	}
	keep := p.retained(s.meta, o.Now().Add(-o.Retention))
	seen := map[string]bool{}
	var out []string
	for _, snap := range keep {
		var list []iceberg.ManifestFile
		err := p.retryRead(ctx, func() (err error) {
			list, err = p.readList(ctx, snap.ManifestList)
			return err
		})
		if lostList(s.meta, snap, err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, mf := range list {
			if seen[mf.FilePath()] {
				continue
			}
			seen[mf.FilePath()] = true
			var files []string
			err := p.retryRead(ctx, func() (err error) {
				files, err = p.readManifestFiles(ctx, mf)
				return err
			})
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// retryRead runs read, which writes nothing (or deletes what nothing
// uses: repeating it deletes the same), again after a transient failure,
// bounded and with the backoff of a publish's reads (maxReadTries): the CLI
// runs the SDK at one attempt, and one 503 must not fail a publish's
// read-back or listing, cost an expiry its run or fail the protection of
// GC. Each read either succeeds whole or fails its caller: nothing is
// decided from a partial read.
func (p *publisher) retryRead(ctx context.Context, read func() error) error {
	return p.policy(p.readRetries()+1).Do(ctx, store.IsRetryable, func(int) error { return read() })
}

// readRetries is the retries of a read: maxReadTries unless an expiry's
// options set fewer.
func (p *publisher) readRetries() int {
	if p.readTries != 0 {
		return max(p.readTries, 0)
	}
	return maxReadTries
}

// loadRetried is load with its reads (hint, probes, metadata, manifest
// list) retried as one: load only reads.
func (p *publisher) loadRetried(ctx context.Context, probe bool) (s *state, err error) {
	err = p.retryRead(ctx, func() error {
		s, err = p.load(ctx, probe)
		return err
	})
	return s, err
}

// retained is the current snapshot plus every snapshot at or after cutoff.
func (p *publisher) retained(meta *tableMetadata, cutoff time.Time) []Snapshot {
	var cur int64
	if cs := meta.currentSnapshot(); cs != nil {
		cur = cs.SnapshotID
	}
	var out []Snapshot
	for _, s := range meta.Snapshots {
		if s.SnapshotID == cur || !time.UnixMilli(s.TimestampMs).Before(cutoff) {
			out = append(out, s)
		}
	}
	return out
}

func (p *publisher) readList(ctx context.Context, loc string) ([]iceberg.ManifestFile, error) {
	k, err := p.keyOf(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: manifest list %v", ErrCorrupt, err)
	}
	data, _, err := store.ReadAll(ctx, p.st, k)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", loc, err)
	}
	list, err := readManifestList(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", loc, ErrCorrupt, err)
	}
	return list, nil
}

// readManifestFiles returns the store keys of a manifest's live data files.
func (p *publisher) readManifestFiles(ctx context.Context, mf iceberg.ManifestFile) (keys []string, err error) {
	k, err := p.keyOf(mf.FilePath())
	if err != nil {
		return nil, fmt.Errorf("%w: manifest %v", ErrCorrupt, err)
	}
	data, _, err := store.ReadAll(ctx, p.st, k)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", mf.FilePath(), err)
	}
	entries, err := readEntries(mf, data)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		dks, err := p.keysOf(e.DataFile().FilePath())
		if err != nil {
			return nil, fmt.Errorf("%s: %w: data file %v", mf.FilePath(), ErrCorrupt, err)
		}
		keys = append(keys, dks...)
	}
	return keys, nil
}

// Expire removes the snapshots older than the retention (never the current
// one) by publishing a new version without them, then deletes the metadata
// objects that no retained snapshot and no retained version uses: older
// metadata versions, their manifest lists, and manifests only they name.
// Objects younger than MinAge, the version hint and the latest version are
// never deleted, nor, while the hint does not name the latest version, any
// version from the hinted one (v1 without a hint) on: the versions a
// reader probes for the latest. A transient failure of one of its reads
// (the hint, the metadata, the manifest lists, the listing) or of its
// deletes is retried, bounded like the reads of a publish, so that one 503
// does not cost GC its expiry.
func Expire(ctx context.Context, st store.Store, opts ExpireOptions) (ExpireResult, error) {
	o := opts.withDefaults(ctx)
	p := expirer(ctx, st, o)
	var res ExpireResult
	cutoff := o.Now().Add(-o.Retention)
	for attempt := 1; ; attempt++ {
		s, err := p.loadRetried(ctx, attempt > 1)
		if err != nil || s.meta == nil {
			return res, err
		}
		keep := p.retained(s.meta, cutoff)
		var drop []int64
		for _, snap := range s.meta.Snapshots {
			if !slices.ContainsFunc(keep, func(k Snapshot) bool { return k.SnapshotID == snap.SnapshotID }) {
				drop = append(drop, snap.SnapshotID)
			}
		}
		res.Expired = drop
		// A metadata log that names versions whose current snapshot is
		// gone (an expiry before the log was kept readable) is trimmed by
		// a version of its own.
		stale := len(s.meta.readableLog()) < len(s.meta.MetadataLog)
		if len(drop) == 0 && !stale || o.DryRun {
			break
		}
		// The version is stamped with Now (the store's clock), never
		// before the version it follows.
		md, err := s.meta.withoutSnapshots(s.loc, drop, o.Now().UnixMilli())
		if err != nil {
			return res, fmt.Errorf("expire snapshots: %w", err)
		}
		data, err := md.encode()
		if err != nil {
			return res, fmt.Errorf("encode Iceberg metadata: %w", err)
		}
		err = p.putVersion(ctx, s.version+1, data)
		if errors.Is(err, errLostRace) && attempt < 20 {
			p.floor = s.version + 1
			continue
		}
		if err != nil {
			return res, err
		}
		p.writeHint(ctx, s, s.version+1)
		res.Version = s.version + 1
		break
	}
	if o.Catalog != nil && !o.DryRun {
		if _, err := CommitLatest(ctx, p.st, o.Catalog); err != nil {
			return res, fmt.Errorf("expire snapshots: no metadata was deleted, the catalog may still name it: %w", err)
		}
	}
	deleted, err := p.sweep(ctx, o, cutoff)
	res.Deleted = deleted
	return res, err
}

// sweep deletes metadata objects that nothing retained uses.
func (p *publisher) sweep(ctx context.Context, o ExpireOptions, cutoff time.Time) ([]string, error) {
	s, err := p.loadRetried(ctx, true)
	if err != nil || s.meta == nil {
		return nil, err
	}
	live := map[string]bool{VersionHintKey: true, MetadataKey(s.version): true}
	if p.hinted < s.version {
		// Readers and publishers find the latest version by probing from
		// the one the hint names, or from v1 without a hint: a publish
		// whose hint update failed leaves it behind. Every version on that
		// way stays while the hint lags (without the hinted one every later
		// publish would find the metadata corrupt; past a gap, a reader
		// stops at an older version, and a publisher writes the missing
		// one anew, where no reader finds it: found by the simulation,
		// seed 29978312357481); bring the hint up to date for the next
		// expiry.
		for v := max(p.hinted, 1); v < s.version; v++ {
			live[MetadataKey(v)] = true
		}
		if !o.DryRun {
			p.writeHint(ctx, s, s.version)
		}
	}
	// The versions the metadata log names stay: the expiry that removes a
	// snapshot takes the versions whose current snapshot it was out of the
	// log (readableLog), so what the log names reads whole. So do the
	// manifest lists and manifests of retained snapshots.
	for _, e := range s.meta.MetadataLog {
		if k, err := p.keyOf(e.MetadataFile); err == nil {
			live[k] = true
		}
	}
	keepSnapshot := func(snap Snapshot) error {
		lk, err := p.keyOf(snap.ManifestList)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if live[lk] {
			return nil
		}
		var list []iceberg.ManifestFile
		err = p.retryRead(ctx, func() (err error) {
			list, err = p.readList(ctx, snap.ManifestList)
			return err
		})
		if lostList(s.meta, snap, err) {
			return nil
		}
		if err != nil {
			return err
		}
		live[lk] = true
		for _, mf := range list {
			if k, err := p.keyOf(mf.FilePath()); err == nil {
				live[k] = true
			}
		}
		return nil
	}
	for _, snap := range p.retained(s.meta, cutoff) {
		if err := keepSnapshot(snap); err != nil {
			return nil, err
		}
	}
	if live[MetadataKey(p.hinted)] && p.hinted != s.version {
		// Readers that trust the hint (Iceberg's own readers do) open the
		// hinted version: what its snapshots use stays with it, or they
		// would find it corrupt (found by the simulation: a 503 on the
		// hint update, then this sweep deleted the hinted version's
		// manifest list).
		var data []byte
		err := p.retryRead(ctx, func() (err error) {
			data, _, err = store.ReadAll(ctx, p.st, MetadataKey(p.hinted))
			return err
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			hm, err := parseMetadata(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.st.URI(MetadataKey(p.hinted)), err)
			}
			for _, snap := range hm.Snapshots {
				if err := keepSnapshot(snap); err != nil {
					return nil, err
				}
			}
		}
	}
	minAgeCut := o.Now().Add(-o.MinAge)
	var dead []string
	err = p.retryRead(ctx, func() error {
		// A listing that failed part way is listed again in full.
		dead = nil
		for a, err := range p.st.List(ctx, MetadataPrefix) {
			if err != nil {
				return fmt.Errorf("list %s: %w", MetadataPrefix, err)
			}
			if live[a.Key] || !IsMetadataKey(a.Key) || !a.ModTime.Before(minAgeCut) {
				continue
			}
			if v, ok := VersionOfKey(a.Key); ok && v >= s.version {
				continue
			}
			dead = append(dead, a.Key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.DryRun || len(dead) == 0 {
		return dead, nil
	}
	// Deleting a missing key is no error: a batch that failed part way is
	// deleted again whole.
	if err := p.retryRead(ctx, func() error { return store.DeleteAll(ctx, p.st, dead) }); err != nil {
		return nil, fmt.Errorf("delete expired metadata: %w", err)
	}
	return dead, nil
}

// lostList reports whether err is the loss of the manifest list of a
// snapshot that is not the current one: nobody can read that snapshot any
// more (time travel to it fails whatever is kept), so its files need no
// protection and the expiry goes on. The current snapshot's lost list is
// still an error, which pswap publish repairs (every partition's manifest
// written anew from its pointer).
func lostList(meta *tableMetadata, snap Snapshot, err error) bool {
	cs := meta.currentSnapshot()
	return errors.Is(err, store.ErrNotFound) && (cs == nil || cs.SnapshotID != snap.SnapshotID)
}
