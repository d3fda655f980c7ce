package swap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// ReadPointer reads a partition's pointer: one GET. A partition never
// committed gives ErrNoData (with a zero Base).
//
// A partition of a table written before the table-level layout has its
// pointer at the legacy key (layout.LegacyPointerKey): when the pointer's
// key has none, the legacy key is read (one more GET), and its pointer is
// returned with Base.Legacy set. A legacy key that holds a moved record (a
// migration that stopped between its fence and the new pointer) gives the
// record's content with Base.Moved set and no ETag: a reader follows it, a
// writer finishes the move (Migrate) before it swaps.
func ReadPointer(ctx context.Context, st store.Store, part string) (Base, error) {
	if err := partition.Validate(part); err != nil {
		return Base{}, err
	}
	b, err := readPointerAt(ctx, st, part, layout.PointerKey(part))
	if !errors.Is(err, ErrNoData) {
		return b, err
	}
	return readLegacyPointer(ctx, st, part)
}

// readLegacyPointer reads the pointer at a partition's legacy key (one GET).
func readLegacyPointer(ctx context.Context, st store.Store, part string) (Base, error) {
	b, err := readPointerAt(ctx, st, part, layout.LegacyPointerKey(part))
	if err != nil {
		return b, err
	}
	if b.Pointer.MovedTo != "" {
		b.Moved = true
		b.ETag = "" // the moved record's version fences nothing of ours
	} else {
		b.Legacy = true
	}
	return b, nil
}

// readPointerAt reads and decodes the pointer stored at key.
func readPointerAt(ctx context.Context, st store.Store, part, key string) (Base, error) {
	data, a, err := store.ReadAll(ctx, st, key)
	if errors.Is(err, store.ErrNotFound) {
		return Base{}, fmt.Errorf("%s: %w", part, ErrNoData)
	}
	if err != nil {
		return Base{}, fmt.Errorf("read pointer of %s: %w", part, err)
	}
	p, err := manifest.DecodePointer(data)
	if err != nil {
		return Base{}, fmt.Errorf("%s: %w: %w", st.URI(key), ErrCorruptPointer, err)
	}
	if p.Partition != part {
		return Base{}, fmt.Errorf("%s: %w: pointer names partition %q", st.URI(key), ErrCorruptPointer, p.Partition)
	}
	if p.MovedTo != "" && key != layout.LegacyPointerKey(part) {
		return Base{}, fmt.Errorf("%s: %w: a live pointer carries moved_to", st.URI(key), ErrCorruptPointer)
	}
	if p.MovedTo != "" && p.MovedTo != layout.PointerKey(part) {
		return Base{}, fmt.Errorf("%s: %w: moved to %q, not to %q", st.URI(key), ErrCorruptPointer, p.MovedTo, layout.PointerKey(part))
	}
	return Base{Pointer: p, ETag: a.ETag, ModTime: a.ModTime, Raw: data}, nil
}

// ReadManifest reads and validates one generation's manifest: one GET, and
// for a manifest that lists files by reference (an append's head, see
// manifest.Segment) the GETs of its segments, which it expands: the
// manifest returned lists every file.
func ReadManifest(ctx context.Context, st store.Store, part, gen string) (*manifest.Manifest, error) {
	m, _, err := ReadManifestAttrs(ctx, st, part, gen)
	return m, err
}

// ReadManifestAttrs is ReadManifest that also returns the manifest object's
// attributes (its ModTime dates the commit by the store's clock).
func ReadManifestAttrs(ctx context.Context, st store.Store, part, gen string) (*manifest.Manifest, store.Attrs, error) {
	m, a, err := ReadManifestHead(ctx, st, part, gen)
	if err != nil {
		return nil, a, err
	}
	if err := ExpandManifest(ctx, st, m); err != nil {
		return nil, store.Attrs{}, err
	}
	return m, a, nil
}

// ExpandManifest expands a manifest read by ReadManifestHead that lists
// files by reference (manifest.Manifest.Expand, its segments read from
// under its data generation's prefix); any other is left as is. A segment
// that is missing or does not match is ErrCorrupt.
func ExpandManifest(ctx context.Context, st store.Store, m *manifest.Manifest) error {
	if !m.Segmented() {
		return nil
	}
	prefix := layout.DataPrefixOf(m)
	err := m.Expand(ctx, func(ctx context.Context, id string) ([]byte, error) {
		data, _, err := store.ReadAll(ctx, st, manifest.SegmentKey(prefix, id))
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return data, err
	})
	if errors.Is(err, manifest.ErrInvalid) {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err != nil {
		return fmt.Errorf("%s generation %s: expand the manifest: %w", m.Partition, m.Generation, err)
	}
	return nil
}

// ReadManifestHead is ReadManifestAttrs without the expansion: a manifest
// that lists files by reference is returned as it is stored (its Files are
// the newest ones, its Segments reference the rest; FileCount, Rows and
// Bytes count them all). One GET. What needs the generation's facts but
// not its file list (garbage collection, the audit, an append) reads this.
func ReadManifestHead(ctx context.Context, st store.Store, part, gen string) (*manifest.Manifest, store.Attrs, error) {
	if err := manifest.ValidateGenerationID(gen); err != nil {
		return nil, store.Attrs{}, fmt.Errorf("%s: %w: %w", part, ErrGenerationNotFound, err)
	}
	key := layout.ManifestKey(part, gen)
	data, a, err := store.ReadAll(ctx, st, key)
	if errors.Is(err, store.ErrNotFound) {
		// Not (or not yet) migrated: a legacy partition's manifests stay
		// at their keys until its migration copies them.
		key = layout.LegacyManifestKey(part, gen)
		data, a, err = store.ReadAll(ctx, st, key)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, store.Attrs{}, fmt.Errorf("%s generation %s: %w", part, gen, ErrGenerationNotFound)
	}
	if err != nil {
		return nil, store.Attrs{}, fmt.Errorf("read manifest %s: %w", key, err)
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return nil, store.Attrs{}, fmt.Errorf("%s: %w: %w", st.URI(key), ErrCorrupt, err)
	}
	if m.Partition != part || m.Generation != gen {
		return nil, store.Attrs{}, fmt.Errorf("%s: %w: manifest names %s generation %s", st.URI(key), ErrCorrupt, m.Partition, m.Generation)
	}
	return m, a, nil
}

// SamePointer reports whether two reads of a pointer saw the same version:
// equal ETags (when both have one), else equal bytes. Two reads without a
// pointer are the same; a pointer with seq never repeats its content.
func SamePointer(a, b Base) bool {
	switch {
	case a.Pointer == nil || b.Pointer == nil:
		return a.Pointer == nil && b.Pointer == nil
	case a.ETag != "" && b.ETag != "":
		return a.ETag == b.ETag
	}
	return string(a.Raw) == string(b.Raw)
}

// FileRef is one data file of a resolved generation.
type FileRef struct {
	manifest.File
	Key string // store key
	URI string // absolute location
}

// Snapshot is a partition's current generation, resolved from its pointer.
type Snapshot struct {
	Pointer  *manifest.Pointer
	ETag     string
	Manifest *manifest.Manifest
	Files    []FileRef
}

// Resolve returns the current generation of a partition and its files in
// two GETs (pointer, manifest), without listing anything. The manifest is
// checked against the pointer, so a tampered or mismatched one is an error.
func Resolve(ctx context.Context, st store.Store, part string) (*Snapshot, error) {
	b, err := ReadPointer(ctx, st, part)
	if err != nil {
		return nil, err
	}
	m, err := ReadManifest(ctx, st, part, b.Pointer.Generation)
	if err != nil {
		if errors.Is(err, ErrGenerationNotFound) {
			return nil, fmt.Errorf("%s: %w: pointer names generation %s whose manifest is missing", part, ErrCorrupt, b.Pointer.Generation)
		}
		return nil, err
	}
	if m.ContentChecksum != b.Pointer.ContentChecksum || m.Rows != b.Pointer.Rows || m.Bytes != b.Pointer.Bytes {
		return nil, fmt.Errorf("%s: %w: manifest of %s does not match the pointer (rows %d vs %d, checksum %s vs %s)",
			part, ErrCorrupt, m.Generation, m.Rows, b.Pointer.Rows, m.ContentChecksum, b.Pointer.ContentChecksum)
	}
	return &Snapshot{Pointer: b.Pointer, ETag: b.ETag, Manifest: m, Files: fileRefs(st, m)}, nil
}

func fileRefs(st store.Store, m *manifest.Manifest) []FileRef {
	prefix := layout.DataPrefixOf(m)
	out := make([]FileRef, len(m.Files))
	for i, f := range m.Files {
		k := prefix + f.Path
		out[i] = FileRef{File: f, Key: k, URI: st.URI(k)}
	}
	return out
}

// Files returns the data files of a manifest with their keys and URIs.
func Files(st store.Store, m *manifest.Manifest) []FileRef { return fileRefs(st, m) }

// ListPartitions returns the committed partitions under a key prefix (""
// for the whole table; "dt=2026-11-" for a month), in lexical order. It
// costs what ListPointers costs: the data files and generations of the
// table are never listed.
func ListPartitions(ctx context.Context, st store.Store, prefix string) ([]string, error) {
	ps, err := ListPointers(ctx, st, prefix)
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Partition)
	}
	return out, err
}

// Listed is one committed partition found by ListPointers: its pointer, or
// the error that reading it gave (ErrCorrupt for a pointer that does not
// decode or names another partition).
type Listed struct {
	Partition string
	Base
	Err error
}

// listConcurrency is the number of pointer reads and folder listings that
// ListPointers runs at once.
const listConcurrency = 16

// defaultListReadAttempts bounds the attempts of each pointer read of a
// listing (ListOptions.MaxAttempts).
const defaultListReadAttempts = 5

// ListOptions tune ListPointersWith. The zero value works.
type ListOptions struct {
	// MaxAttempts bounds the attempts of each pointer read (default
	// defaultListReadAttempts): a transient failure of one read repeats
	// that read, after a backoff, not the listing.
	MaxAttempts int
	// Columns are the names of the table's partition columns in key order
	// (table.json's, see TableListOptions), or nil when unknown. Given,
	// the walk reads a pointer only in a folder of the layout's depth
	// whose every column is the table's at its place: a folder above the
	// partitions (dt=X of dt=X/hr=Y) is listed without a GET of a
	// pointer, and a folder of another layout is not pswap's.
	Columns []string
	// NoLegacy says that the table was created in the table-level layout
	// (table.json's layout 2): it has no partition of the legacy layout,
	// and the walk of the root for them is left out.
	NoLegacy bool
	// Known are pointers the caller wrote itself and knows current (a
	// backfill's own commits, by partition): the walk takes a found
	// partition's pointer from here instead of a GET (its Base has no
	// ETag, ModTime or Raw).
	Known map[string]*manifest.Pointer
}

// TableListOptions returns the ListOptions of the table whose root st is,
// from its table.json (one GET): its partition columns and whether it can
// hold legacy partitions. A table without one, or with one that does not
// decode (which writers refuse), gets the zero options: the listing walks
// every folder named like a key, in both layouts.
func TableListOptions(ctx context.Context, st store.Store) (ListOptions, error) {
	return TableListOptionsWith(ctx, st, ListOptions{})
}

// TableListOptionsWith is TableListOptions filling in opts: its GET of
// table.json makes opts.MaxAttempts attempts (default
// defaultListReadAttempts), as each pointer read of the listing does, so
// that a caller whose store retries every request itself (the CLI: one
// retry layer) gives 1.
func TableListOptionsWith(ctx context.Context, st store.Store, opts ListOptions) (ListOptions, error) {
	attempts := opts.MaxAttempts
	if attempts <= 0 {
		attempts = defaultListReadAttempts
	}
	var doc *tablemeta.Table
	err := retry.Policy{MaxAttempts: attempts}.Do(ctx, store.IsRetryable, func(int) (err error) {
		doc, _, err = tablemeta.Read(ctx, st)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, tablemeta.ErrInvalid):
		return opts, nil
	case err != nil:
		return opts, fmt.Errorf("list partitions: %w", err)
	}
	opts.NoLegacy, opts.Columns = doc.Layout == tablemeta.LayoutTable, nil
	for _, c := range doc.PartitionColumns {
		opts.Columns = append(opts.Columns, c.Name)
	}
	return opts, nil
}

// ListPointers is ListPointersWith with the default options.
func ListPointers(ctx context.Context, st store.Store, prefix string) ([]Listed, error) {
	return ListPointersWith(ctx, st, prefix, ListOptions{})
}

// ListPointersWith returns the committed partitions under a key prefix with
// their pointers, in lexical order of their keys. It walks the table's
// folders with a delimited listing (store.ListDelimited with "/": one
// request per 1,000 folders of a level) and reads the pointer of every
// folder that can be a partition (one GET). A folder without a pointer is
// walked in turn: an upper level of a multi-column layout (dt=.../hr=...)
// costs one GET and one listing, and a partition staged but never committed
// is not listed. Data files, manifests and generations are never listed,
// so the cost does not grow with them: for a one-column layout, one GET per
// partition plus one listing page per 1,000 partitions. A partition whose
// key extends that of a committed partition (dt=X/hr=1 below a committed
// dt=X) is not found: a table uses one layout. A transient failure of a
// pointer read is retried on its own (bounded by opts.MaxAttempts): it
// costs one more GET, not another listing; a failed listing page fails the
// listing.
//
// Both layouts are walked (package layout): first the partitions under the
// table's _pswap/p/ folder, then the legacy partition folders at the root,
// where only a partition the first walk did not find costs its pointer's
// GET (a partition not yet migrated, Base.Legacy, or one whose migration
// stopped after its fence, Base.Moved). On a table without legacy
// partitions the second walk is one listing of the root.
func ListPointersWith(ctx context.Context, st store.Store, prefix string, opts ListOptions) ([]Listed, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	attempts := opts.MaxAttempts
	if attempts <= 0 {
		attempts = defaultListReadAttempts
	}
	w := &walker{st: st, reads: retry.Policy{MaxAttempts: attempts}}
	w.cols = opts.Columns
	out, err := w.walk(ctx, layout.PartitionsRoot, prefix, nil, func(ctx context.Context, part string) (Base, error) {
		if p := opts.Known[part]; p != nil {
			return Base{Pointer: p}, nil
		}
		return readPointerAt(ctx, st, part, layout.PointerKey(part))
	})
	if err != nil {
		return nil, err
	}
	if opts.NoLegacy {
		// Created in the table-level layout: no legacy partition.
		slices.SortFunc(out, func(a, b Listed) int { return strings.Compare(a.Partition, b.Partition) })
		return out, nil
	}
	found := make(map[string]bool, len(out))
	for _, l := range out {
		found[l.Partition] = true
	}
	legacy, err := w.walk(ctx, "", prefix, found, func(ctx context.Context, part string) (Base, error) {
		return readLegacyPointer(ctx, st, part)
	})
	if err != nil {
		return nil, err
	}
	out = append(out, legacy...)
	slices.SortFunc(out, func(a, b Listed) int { return strings.Compare(a.Partition, b.Partition) })
	return out, nil
}

// walker walks one layout's partition folders for ListPointersWith.
type walker struct {
	st    store.Store
	reads retry.Policy
	// cols are the table's partition columns (ListOptions.Columns), nil
	// when unknown: then every folder named like a key may be a
	// partition, and a folder without a pointer is walked into.
	cols []string
}

// depth is the number of columns of folder part when each names the
// table's column at its place (ok false when one does not, or when there
// are more than the table's).
func (w *walker) depth(part string) (n int, ok bool) {
	for seg := range strings.SplitSeq(part, "/") {
		name, _, _ := strings.Cut(seg, "=")
		if n >= len(w.cols) || name != w.cols[n] {
			return 0, false
		}
		n++
	}
	return n, true
}

// walk finds the partitions under root+prefix whose pointer read gives a
// pointer (or ErrCorrupt). root is layout.PartitionsRoot (keys
// root+partition+"/pointer.json") or "" (the legacy layout, whose
// partition folders hold a _pswap folder). A partition in skip is known
// from another walk: neither read nor walked into.
func (w *walker) walk(ctx context.Context, root, prefix string, skip map[string]bool, read func(context.Context, string) (Base, error)) ([]Listed, error) {
	st, reads := w.st, w.reads
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		out  []Listed
		wg   sync.WaitGroup
		sem  = make(chan struct{}, listConcurrency)
		fail = func(err error) { cancel(err) }
	)
	// visit lists one folder level (prefix relative to root); known is a
	// partition already found to have no pointer (the folder being
	// walked), not read again.
	var visit func(prefix, known string)
	visit = func(prefix, known string) {
		type cand struct {
			part string
			leaf bool // found as the level's own folder: not walked further
		}
		sem <- struct{}{}
		var cands []cand
		for e, err := range store.ListDelimited(ctx, st, root+prefix, "/") {
			if err != nil {
				<-sem
				fail(fmt.Errorf("list partitions under %s: %w", st.URI(root+prefix), err))
				return
			}
			rel := strings.TrimPrefix(e.Key, root)
			if !e.IsPrefix {
				// The pointer of the level's own folder: the listing
				// prefix reached inside a partition ("dt=X/").
				if part, ok := layout.PartitionOfPointerKey(e.Key); ok && root != "" && part+"/" == prefix && part != known && partition.Validate(part) == nil {
					cands = append(cands, cand{part, true})
				}
				continue
			}
			folder := strings.TrimSuffix(rel, "/")
			if part, ok := strings.CutSuffix(folder, "/"+layout.MetaDir); root == "" && (ok || folder == layout.MetaDir) {
				// The pswap folder of the level's own folder: the listing
				// prefix reached inside a partition ("dt=X/").
				if ok && part != known && partition.Validate(part) == nil {
					cands = append(cands, cand{part, true})
				}
				continue
			}
			cands = append(cands, cand{part: folder})
		}
		<-sem
		for _, c := range cands {
			part, leaf := c.part, c.leaf
			if skip[part] {
				continue
			}
			if w.cols != nil {
				// The table's layout: a folder above the partitions is
				// walked into without a read, a partition's is read and
				// never walked into, and any other is not pswap's.
				d, ok := w.depth(part)
				if !ok {
					continue
				}
				if d < len(w.cols) {
					if !leaf {
						wg.Add(1)
						go func() { defer wg.Done(); visit(part+"/", "") }()
					}
					continue
				}
				leaf = true
			}
			if partition.Validate(part) != nil {
				if !leaf && strings.Contains(part[strings.LastIndex(part, "/")+1:], "=") {
					wg.Add(1)
					go func() { defer wg.Done(); visit(part+"/", "") }()
				}
				continue
			}
			// The slot is taken before the goroutine starts, so that at
			// most listConcurrency of them exist however many partitions.
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var b Base
				err := reads.Do(ctx, store.IsRetryable, func(int) (err error) {
					b, err = read(ctx, part)
					return err
				})
				<-sem
				switch {
				case err == nil || errors.Is(err, ErrCorrupt):
					mu.Lock()
					out = append(out, Listed{Partition: part, Base: b, Err: err})
					mu.Unlock()
				case errors.Is(err, ErrNoData):
					if !leaf {
						visit(part+"/", part)
					}
				default:
					fail(err)
				}
			}()
		}
	}
	visit(prefix, "")
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// Entry is one generation in a partition's history.
type Entry struct {
	Generation  string
	Parent      string
	RunID       string
	Rows        int64
	Bytes       int64
	Files       int
	CreatedAt   time.Time
	CommittedAt time.Time
	RollbackOf  string
	Current     bool // named by the pointer
	Retired     bool // replaced by a later generation
	Collected   bool // its manifest is gone (garbage-collected); the chain ends here
}

// History walks the generation chain from the current generation back
// through the parents, newest first, up to limit entries (0: all).
func History(ctx context.Context, st store.Store, part string, limit int) ([]Entry, error) {
	b, err := ReadPointer(ctx, st, part)
	if err != nil {
		return nil, err
	}
	var out []Entry
	gen := b.Pointer.Generation
	seen := map[string]bool{}
	for gen != "" && (limit <= 0 || len(out) < limit) {
		if seen[gen] {
			return out, fmt.Errorf("%s: %w: generation %s appears twice in the chain", part, ErrCorrupt, gen)
		}
		seen[gen] = true
		m, _, err := ReadManifestHead(ctx, st, part, gen) // the facts, not the files
		if errors.Is(err, ErrGenerationNotFound) {
			out = append(out, Entry{Generation: gen, Retired: len(out) > 0, Collected: true})
			break
		}
		if err != nil {
			return out, err
		}
		out = append(out, Entry{
			Generation: m.Generation, Parent: m.Parent, RunID: m.RunID, Rows: m.Rows, Bytes: m.Bytes,
			Files: m.FileCount(), CreatedAt: m.CreatedAt, CommittedAt: m.CommittedAt, RollbackOf: m.RollbackOf,
			Current: len(out) == 0, Retired: len(out) > 0,
		})
		gen = m.Parent
	}
	return out, nil
}
