package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// CollectOptions tune Collect, Partitions and Table. The zero value works.
type CollectOptions struct {
	// Concurrency bounds the partitions read at once and each partition's
	// GETs in flight (default 8).
	Concurrency int
	// MaxAttempts bounds the attempts of each read (default 5): a
	// transient failure repeats that read after a backoff.
	MaxAttempts int
}

func (o CollectOptions) conc() int {
	if o.Concurrency > 0 {
		return o.Concurrency
	}
	return 8
}

func (o CollectOptions) policy() retry.Policy {
	n := o.MaxAttempts
	if n <= 0 {
		n = 5
	}
	return retry.Policy{MaxAttempts: n}
}

// Collect reads what the store holds of one partition: one listing of its
// folder in each layout (package layout: _pswap/p/<partition>/ and, for a
// partition written before it, <partition>/_pswap/), the pointer, and every manifest and staged record listed
// (and every generation of the pointer's history that the listing missed:
// a commit that landed after the listing). On a store with unfinished
// uploads (store.UploadLister: S3's multipart uploads, a file system's
// temporary files), one more listing finds those of the partition: an
// attempt killed while it wrote its first file is seen too. One listing of
// the table's batch records (ReadBatches) and a GET of each finds the
// entries of backfills. A partition with nothing stored gives empty Facts.
func Collect(ctx context.Context, st store.Store, part string, opts CollectOptions) (Facts, error) {
	if err := partition.Validate(part); err != nil {
		return Facts{Partition: part}, err
	}
	uploads := map[string][]store.Upload{}
	for _, prefix := range layout.MetaPrefixes(part) {
		u, err := listUploads(ctx, st, prefix, opts)
		if err != nil {
			return Facts{Partition: part}, err
		}
		uploads[part] = append(uploads[part], u[part]...)
	}
	b, err := ReadBatches(ctx, st, opts)
	if err != nil {
		return Facts{Partition: part}, err
	}
	return collect(ctx, st, part, opts, uploads[part], b.Attempts[part])
}

// listUploads lists the unfinished uploads under prefix by partition (none
// on a store without them).
func listUploads(ctx context.Context, st store.Store, prefix string, opts CollectOptions) (map[string][]store.Upload, error) {
	ul, ok := st.(store.UploadLister)
	if !ok {
		return nil, nil
	}
	var out map[string][]store.Upload
	err := opts.policy().Do(ctx, store.IsRetryable, func(int) error {
		out = map[string][]store.Upload{}
		for u, err := range ul.ListUploads(ctx, prefix) {
			if err != nil {
				return fmt.Errorf("list unfinished uploads %s: %w", st.URI(prefix), err)
			}
			if part, ok := layout.PartitionOf(u.Key); ok {
				out[part] = append(out[part], u)
			}
		}
		return nil
	})
	return out, err
}

// collect is Collect with the partition's unfinished uploads listed.
// batch are the partition's entries of the table's batch records (Facts.Batch).
func collect(ctx context.Context, st store.Store, part string, opts CollectOptions, uploads []store.Upload, batch map[string]*Attempt) (Facts, error) {
	f := Facts{Partition: part, Manifests: map[string]*manifest.Manifest{}, Staged: map[string]*swap.StagedRecord{},
		Data: map[string]DataFolder{}, Attempts: map[string]*Attempt{}, BadAttempts: map[string]string{}, Batch: batch}
	if err := partition.Validate(part); err != nil {
		return f, err
	}
	pol := opts.policy()
	var (
		hasPointer           bool
		manifests, stg, atts []string
	)
	err := pol.Do(ctx, store.IsRetryable, func(int) error {
		var err error
		if f.Now, err = store.Now(ctx, st); err != nil {
			return err
		}
		hasPointer, manifests, stg, atts = false, nil, nil, nil
		clear(f.Data)
		for _, prefix := range layout.MetaPrefixes(part) {
			for a, err := range st.List(ctx, prefix) {
				if err != nil {
					return fmt.Errorf("list %s: %w", st.URI(prefix), err)
				}
				kind, gen := layout.Classify(part, a.Key)
				switch kind {
				case layout.KindPointer:
					hasPointer = true
				case layout.KindManifest:
					// A migrated partition's manifests are listed in
					// both layouts: read once.
					if !slices.Contains(manifests, gen) {
						manifests = append(manifests, gen)
					}
				case layout.KindStaged:
					if !slices.Contains(stg, gen) {
						stg = append(stg, gen)
					}
				case layout.KindAttempt:
					atts = append(atts, gen)
				case layout.KindData:
					d := f.Data[gen]
					d.Files++
					d.Bytes += a.Size
					if d.Oldest.IsZero() || a.ModTime.Before(d.Oldest) {
						d.Oldest = a.ModTime
					}
					if a.ModTime.After(d.Newest) {
						d.Newest = a.ModTime
					}
					f.Data[gen] = d
				}
			}
		}
		return nil
	})
	if err != nil {
		return f, err
	}
	for _, u := range uploads {
		kind, gen := layout.Classify(part, u.Key)
		if kind != layout.KindData || u.Initiated.IsZero() {
			continue
		}
		d := f.Data[gen]
		d.Files++
		d.Unfinished++
		d.Bytes += u.Size
		if d.Oldest.IsZero() || u.Initiated.Before(d.Oldest) {
			d.Oldest = u.Initiated
		}
		if u.Initiated.After(d.Newest) {
			d.Newest = u.Initiated
		}
		f.Data[gen] = d
	}
	if hasPointer {
		var b swap.Base
		err := pol.Do(ctx, store.IsRetryable, func(int) (err error) {
			b, err = swap.ReadPointer(ctx, st, part)
			return err
		})
		switch {
		case errors.Is(err, swap.ErrNoData): // removed since the listing
		case errors.Is(err, swap.ErrCorrupt):
			f.Corrupt = err
			return f, nil
		case err != nil:
			return f, err
		default:
			f.Pointer = b.Pointer
			for _, e := range b.Pointer.History {
				if !slices.Contains(manifests, e.Generation) {
					manifests = append(manifests, e.Generation)
				}
			}
			if !slices.Contains(manifests, b.Pointer.Generation) {
				manifests = append(manifests, b.Pointer.Generation)
			}
		}
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, opts.conc())
	)
	const (
		readManifest = iota
		readStaged
		readAttempt
	)
	read := func(gen string, what int) {
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		var (
			m *manifest.Manifest
			s *swap.StagedRecord
			a *Attempt
		)
		err := pol.Do(ctx, store.IsRetryable, func(int) (err error) {
			switch what {
			case readStaged:
				s, err = swap.ReadStaged(ctx, st, part, gen)
			case readAttempt:
				a, err = ReadAttempt(ctx, st, part, gen)
			default:
				m, _, err = swap.ReadManifestHead(ctx, st, part, gen) // counts, not files (FileCount)
			}
			return err
		})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, swap.ErrGenerationNotFound) || errors.Is(err, store.ErrNotFound):
			// Collected or committed since the listing: not there.
		case errors.Is(err, errBadAttempt):
			// An audit record that cannot be read does not stop the
			// audit: its row says so.
			f.BadAttempts[gen] = err.Error()
		case err != nil:
			errs = append(errs, err)
		case what == readStaged:
			f.Staged[gen] = s
		case what == readAttempt:
			f.Attempts[gen] = a
		default:
			f.Manifests[gen] = m
		}
	}
	for _, g := range manifests {
		wg.Add(1)
		go read(g, readManifest)
	}
	for _, g := range stg {
		wg.Add(1)
		go read(g, readStaged)
	}
	for _, g := range atts {
		wg.Add(1)
		go read(g, readAttempt)
	}
	wg.Wait()
	return f, errors.Join(errs...)
}

// Partitions returns the partitions under a key prefix ("" for the whole
// table) that have state of pswap's in either layout (package layout: a
// folder under the table's _pswap/p/, or a legacy partition folder's
// _pswap folder): committed ones, and those where an attempt staged or
// uploaded something but nothing ever committed (which swap.ListPointers,
// reading pointers, does not see). It walks the key=value folders of both
// layouts with delimited listings: one request per folder.
func Partitions(ctx context.Context, st store.Store, prefix string, opts CollectOptions) ([]string, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var (
		mu   sync.Mutex
		out  []string
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, opts.conc())
		pol  = opts.policy()
	)
	// root is "" for the legacy layout's partition folders (each holds a
	// _pswap folder) or layout.PartitionsRoot for the table-level one
	// (each holds manifests/, gen/, staged/ or its pointer).
	var visit func(root, folder string)
	visit = func(root, folder string) {
		defer wg.Done()
		sem <- struct{}{}
		var children []string
		found := false
		err := pol.Do(ctx, store.IsRetryable, func(int) error {
			children, found = children[:0], false
			for e, err := range store.ListDelimited(ctx, st, folder, "/") {
				if err != nil {
					return fmt.Errorf("list %s: %w", st.URI(folder), err)
				}
				name := strings.TrimSuffix(strings.TrimPrefix(e.Key, folder), "/")
				if !e.IsPrefix {
					if root != "" && e.Key == folder+"pointer.json" && layout.PointerKey(strings.TrimSuffix(strings.TrimPrefix(folder, root), "/")) == e.Key {
						found = true
					}
					continue
				}
				switch {
				case root == "" && name == layout.MetaDir:
					found = true
				case root != "" && !strings.Contains(name, "=") && folder != root:
					// manifests/, gen/, staged/: a partition's state.
					found = true
				case strings.Contains(name, "=") && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "."):
					children = append(children, e.Key)
				}
			}
			return nil
		})
		<-sem
		mu.Lock()
		if err != nil {
			errs = append(errs, err)
		}
		if part := strings.TrimSuffix(strings.TrimPrefix(folder, root), "/"); found && partition.Validate(part) == nil && !slices.Contains(out, part) {
			out = append(out, part)
		}
		mu.Unlock()
		for _, c := range children {
			wg.Add(1)
			go visit(root, c)
		}
	}
	for _, root := range []string{layout.PartitionsRoot, ""} {
		start := root + prefix
		if prefix != "" && !strings.HasSuffix(start, "/") {
			// A key prefix such as "dt=2026-11-": list its level and keep the
			// folders that start with it.
			i := strings.LastIndex(start, "/") + 1
			level := start[:i]
			var firsts []string
			for e, err := range store.ListDelimited(ctx, st, level, "/") {
				if err != nil {
					return nil, fmt.Errorf("list %s: %w", st.URI(level), err)
				}
				if e.IsPrefix && strings.HasPrefix(e.Key, start) && strings.Contains(e.Key[i:], "=") {
					firsts = append(firsts, e.Key)
				}
			}
			for _, f := range firsts {
				wg.Add(1)
				go visit(root, f)
			}
		} else {
			wg.Add(1)
			go visit(root, start)
		}
	}
	wg.Wait()
	slices.Sort(out)
	return out, errors.Join(errs...)
}

// Table returns the rows of the given partitions (nil: every partition
// Partitions finds), in the order of the partitions, each partition's in
// Derive's order.
func Table(ctx context.Context, st store.Store, parts []string, opts CollectOptions, dopts Options) ([]Row, error) {
	if parts == nil {
		var err error
		if parts, err = Partitions(ctx, st, "", opts); err != nil {
			return nil, err
		}
	}
	// The unfinished uploads of the whole table, in one listing.
	uploads, err := listUploads(ctx, st, "", opts)
	if err != nil {
		return nil, err
	}
	// The backfills' batch records, in one listing.
	batches, err := ReadBatches(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	per := make([][]Row, len(parts))
	errs := make([]error, len(parts))
	corrupt := make([]error, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, opts.conc())
	for i, p := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f, err := collect(ctx, st, p, opts, uploads[p], batches.Attempts[p])
			if err != nil {
				errs[i] = fmt.Errorf("audit %s: %w", p, err)
				return
			}
			per[i] = Derive(f, dopts)
			if f.Corrupt != nil {
				corrupt[i] = f.Corrupt
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var rows []Row
	for _, r := range per {
		rows = append(rows, r...)
	}
	// A batch record that cannot be read stops nothing either: one error,
	// beside the corrupt pointers', that names it.
	return rows, errors.Join(corruptError(parts, corrupt), BadBatchesError(st, batches.Bad))
}

// corruptError is the error of an audit that found partitions whose
// pointer cannot be read (nil when it found none): swap's one error for
// them (ErrCorruptPointer, naming each), which comes with every
// partition's rows. corrupt is indexed like parts.
func corruptError(parts []string, corrupt []error) error {
	var bad []swap.CorruptPointer
	for i, err := range corrupt {
		if err != nil {
			bad = append(bad, swap.CorruptPointer{Partition: parts[i], Err: err})
		}
	}
	return swap.CorruptPointersError(bad, "every other partition was audited; each has a row of state corrupt")
}
