package swap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// Appends (Options.Append).
//
// An append adds a run's files to the partition's current files: its
// manifest lists the base generation's files and the run's, as a new
// generation fenced on the base like every commit. The files are carried,
// never copied: every generation of a chain of appends shares one data
// generation (the root: the data generation of the first generation the
// chain started from), and each append writes its own files into a folder
// of the root's data prefix named by its staged generation id
// (<root prefix><staged>/part-00000.parquet). A manifest so keeps the one
// data prefix per generation that every reader (and garbage collection,
// which keeps a live generation's data generation whole) understands.
//
// The manifest is a head (manifest.Segment): the base's head with the
// run's files added to its tail, packed, so that an append reads and
// writes a few kilobytes whatever the number of earlier appends; the
// segments a pack makes are written under the root's prefix beside the
// manifest. ReadManifest expands a head for every reader of files.
//
// An append that loses the pointer swap rebases on the new current
// generation and tries again, as a merge does: racing appends of
// different runs all land, each once. Only when the new base has another
// root (the race was lost to a replacing commit, a rollback, or the
// partition's first commit) are the run's new files copied into the new
// root (server-side where the store can), once.
//
// Exactly once per run id, however many commits landed since: the pointer
// remembers only the last manifest.MaxHistory commits, so an append also
// keeps a run record, _pswap/p/<partition>/runs/<sha256 of the run id>.json
// (layout.RunKey): created (create-if-absent, beside the manifest's PUT)
// before the first pointer swap of the run, and completed with the
// generation that took the run's files once one did. Begin reads it beside
// the base manifest, so its cost does not grow with the number of earlier
// appends. A record without a generation (an attempt killed between its
// swap and the record's completion, or one that never swapped) is
// resolved from the pointer's history and, only when more than
// manifest.MaxHistory commits landed since the record was created, by
// walking the manifests' parent chain back to its creation.

// KindAppend is manifest.KindAppend: the kind an append records.
const KindAppend = manifest.KindAppend

// ErrAppendNeedsRunID: an append was asked for without a run id; the run
// id is what makes it exactly once. Kind: bad input.
var ErrAppendNeedsRunID = errkind.New("an append needs a run id (it is what makes a re-run a no-op)", errkind.ErrBadInput)

// runRecordFormat is the format string of a run record.
const runRecordFormat = "pswap-run"

// runRecordVersion is the version a run record is written in.
const runRecordVersion = "1.0"

// recordSlack is how much earlier than its record's creation an attempt of
// the run may have stamped its manifest's committed_at (the store's clock
// as estimated by two processes, and a manifest written at the same time
// as the record): the chain walk of an incomplete record goes that much
// further back.
const recordSlack = 15 * time.Minute

// RunRecord is a run's record of an append (see layout.RunKey).
type RunRecord struct {
	Format    string `json:"format"`
	Version   string `json:"version"`
	Partition string `json:"partition"`
	RunID     string `json:"run_id"`
	// Since is when the first attempt that wrote the record began (the
	// store's clock): every manifest of the run was written after it,
	// within recordSlack.
	Since time.Time `json:"since"`
	// Generation is the generation whose commit took the run's files; ""
	// while that is not yet known.
	Generation string `json:"generation,omitempty"`
}

// EncodeRunRecord returns r's JSON document, or an error matching
// ErrCorrupt when r is not valid.
func EncodeRunRecord(r *RunRecord) ([]byte, error) {
	c := *r
	c.Format, c.Version = runRecordFormat, runRecordVersion
	if err := c.validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeRunRecord parses a run record strictly: unknown fields, another
// major version, or invalid values are ErrCorrupt.
func DecodeRunRecord(data []byte) (*RunRecord, error) {
	var r RunRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("run record: %v: %w", err, ErrCorrupt)
	}
	if dec.More() {
		return nil, fmt.Errorf("run record: data after the document: %w", ErrCorrupt)
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *RunRecord) validate() error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("run record: %s: %w", fmt.Sprintf(f, a...), ErrCorrupt)
	}
	switch {
	case r.Format != runRecordFormat:
		return bad("format %q, want %q", r.Format, runRecordFormat)
	case r.Version != runRecordVersion:
		return bad("version %q, want %q", r.Version, runRecordVersion)
	case r.RunID == "":
		return bad("no run id")
	case r.Since.IsZero():
		return bad("no since")
	}
	if err := manifest.ValidateRunID(r.RunID); err != nil {
		return bad("%v", err)
	}
	if err := partition.Validate(r.Partition); err != nil {
		return bad("%v", err)
	}
	if r.Generation != "" {
		if err := manifest.ValidateGenerationID(r.Generation); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// RunKey is the store key of the run record of runID in partition part.
func RunKey(part, runID string) string {
	h := sha256.Sum256([]byte(runID))
	return layout.RunsPrefix(part) + hex.EncodeToString(h[:]) + ".json"
}

// ReadRunRecord reads the run record of runID in part; nil (and no error)
// when there is none.
func ReadRunRecord(ctx context.Context, st store.Store, part, runID string) (*RunRecord, error) {
	data, _, err := store.ReadAll(ctx, st, RunKey(part, runID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := DecodeRunRecord(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RunKey(part, runID), err)
	}
	if r.RunID != runID || r.Partition != part {
		return nil, fmt.Errorf("%s: the record is of run %q in %s: %w", RunKey(part, runID), r.RunID, r.Partition, ErrCorrupt)
	}
	return r, nil
}

// appendState is what an append transaction knows beyond a replacing one.
type appendState struct {
	// record is the run's record as Begin read it (nil: none).
	record *RunRecord
	// took is the generation that took the run's files, when Begin found
	// that the run already appended ("": not yet).
	took string
	// base is the base generation's manifest (nil: no base generation).
	base *manifest.Manifest
	// root and rootLayout are the data generation (and its layout) whose
	// prefix holds the partition's files and gets ours: the base's data
	// generation, or our own generation when there is no base or it holds
	// no files.
	root       string
	rootLayout int
	// sub is our folder under the root's prefix ("" when root is our own
	// generation: our files lie at its top).
	sub string
	// own are the files of the run, relative to prefix().
	own []manifest.File
	// schema is the run's schema fingerprint.
	schema string
	// pending are the segments the attempt's manifest references that it
	// made: written beside the manifest, before the pointer swap.
	pending []manifest.PackedSegment
}

// prefix is where the run's files are (or are to be) written.
func (s *appendState) prefix(part string) string {
	p := layout.DataPrefixIn(part, s.root, s.rootLayout)
	if s.sub != "" {
		p += s.sub + "/"
	}
	return p
}

// beginAppend completes Begin for an append: the run's record and the
// base manifest (one round trip for both), the root, and whether the run
// already appended.
func (t *Txn) beginAppend(ctx context.Context, deadline time.Time) error {
	if t.opts.RunID == "" {
		return fmt.Errorf("append %s: %w", t.partition, ErrAppendNeedsRunID)
	}
	s := &appendState{}
	t.app = s
	var recErr, manErr error
	bp := t.base.Pointer
	overlap.Do(ctx,
		func() {
			recErr = t.policy(deadline, 2).Do(ctx, store.IsRetryable, func(int) (err error) {
				s.record, err = ReadRunRecord(ctx, t.st, t.partition, t.opts.RunID)
				return err
			})
		},
		func() {
			if bp != nil {
				s.base, manErr = t.readManifest(ctx, bp.Generation, deadline)
			}
		})
	if recErr != nil {
		return fmt.Errorf("append %s: read the run's record: %w", t.partition, recErr)
	}
	if manErr != nil {
		return fmt.Errorf("append %s: read the base manifest: %w", t.partition, manErr)
	}
	s.setRoot(t.generation, t.dataLayout)
	if t.opts.Force {
		return nil
	}
	took, err := t.runTook(ctx, bp, s.record, deadline)
	if err != nil {
		return err
	}
	s.took = took
	return nil
}

// setRoot chooses the root from the base manifest: its data generation,
// or ours (gen, in layout lay) when there is none or it holds no files.
func (s *appendState) setRoot(gen string, lay int) {
	if s.base != nil && s.base.FileCount() > 0 {
		s.root, s.rootLayout, s.sub = s.base.DataGen(), s.base.DataLayout, gen
		return
	}
	s.root, s.rootLayout, s.sub = gen, lay, ""
}

// runTook returns the generation that took the run's files ("" when the
// run has not appended), from the pointer's history, the run's record, and
// only for an incomplete record older than the pointer's history, the
// manifests' parent chain back to the record's creation.
func (t *Txn) runTook(ctx context.Context, p *manifest.Pointer, rec *RunRecord, deadline time.Time) (string, error) {
	runID := t.opts.RunID
	if p != nil {
		if e, ok := p.FindRun(runID); ok {
			return e.Generation, nil
		}
	}
	if rec == nil {
		// No record: no attempt of the run reached its pointer swap
		// (the record is created before the first one).
		return "", nil
	}
	if rec.Generation != "" {
		return rec.Generation, nil
	}
	if p == nil {
		return "", nil
	}
	bound := rec.Since.Add(-recordSlack)
	// The history holds no commit of the run: it covers everything since
	// the record's creation unless it is truncated and its oldest entry
	// is newer than that.
	next := p.Generation
	if p.HasHistory() {
		last := p.History[len(p.History)-1]
		if !p.HistoryTruncated || last.CommittedAt.Before(bound) {
			return "", nil
		}
		m, err := t.readManifest(ctx, last.Generation, deadline)
		if err != nil {
			return "", fmt.Errorf("append %s: walk back to the run's record: %w", t.partition, err)
		}
		next = m.Parent
	}
	for depth := 0; next != "" && depth < 1_000_000; depth++ {
		m, err := t.readManifest(ctx, next, deadline)
		if errors.Is(err, ErrGenerationNotFound) {
			return "", nil // collected: retired long before the record
		}
		if err != nil {
			return "", fmt.Errorf("append %s: walk back to the run's record: %w", t.partition, err)
		}
		if m.RunID == runID {
			return m.Generation, nil
		}
		if m.CommittedAt.Before(bound) {
			return "", nil
		}
		next = m.Parent
	}
	return "", nil
}

// setContent sets m's files to the base's and ours: the base's segments
// (a head's references to its older files, see manifest.Segment) and its
// own files, ours behind them, then packed (manifest.Manifest.Pack) so
// that the head stays small whatever the number of earlier appends; the
// segments Pack made are left in s.pending, to be written beside the
// manifest. Nothing here reads or hashes the base's segments: the cost
// does not grow with the partition.
func (s *appendState) setContent(m *manifest.Manifest) error {
	var c manifest.Content
	m.Segments = nil
	own := make([]manifest.File, len(s.own))
	for i, f := range s.own {
		if s.sub != "" {
			f.Path = s.sub + "/" + f.Path
		}
		own[i] = f
	}
	baseSum := ""
	if b := s.base; b != nil && b.FileCount() > 0 {
		m.Segments = slices.Clone(b.Segments)
		c.Files = make([]manifest.File, 0, len(b.Files)+len(own))
		c.Files = append(c.Files, b.Files...)
		c.Rows, c.Bytes = b.Rows, b.Bytes
		c.Schema = b.Schema
		baseSum = b.ContentChecksum
	}
	for _, f := range own {
		c.Add(f)
	}
	if s.schema != "" {
		c.Schema = s.schema
	}
	// An append's rows were not all read together: its content checksum
	// chains the base's with the digest of the run's files (the algorithm
	// of an append), so it never compares equal to a staged generation's.
	c.ContentChecksum = checksum.OfAppend(baseSum, own)
	m.Content = c
	packed, err := m.Pack()
	if err != nil {
		return fmt.Errorf("append %s: %w", m.Partition, err)
	}
	s.pending = packed
	return nil
}

// putSegments writes the segments setContent made, under the root's data
// prefix, create-if-absent (a segment is named by its bytes: one already
// there is the same), all at once.
func (a *attempt) putSegments(ctx context.Context) error {
	t, s := a.t, a.t.app
	if len(s.pending) == 0 {
		return nil
	}
	prefix := layout.DataPrefixIn(t.partition, s.root, s.rootLayout)
	errs := make([]error, len(s.pending))
	fns := make([]func(), len(s.pending))
	for i, p := range s.pending {
		fns[i] = func() {
			key := manifest.SegmentKey(prefix, p.Ref.ID)
			errs[i] = t.policy(a.deadline, 1).Do(ctx, store.IsRetryable, func(int) error {
				_, err := t.st.Put(ctx, key, p.Data, store.PutOptions{ContentType: "application/json", IfNoneMatch: true})
				if errors.Is(err, store.ErrPrecondition) {
					return nil // written before, by an attempt of the same files
				}
				return err
			})
			if errs[i] != nil {
				errs[i] = fmt.Errorf("append %s: write segment %s: %w", t.partition, key, errs[i])
			}
		}
	}
	overlap.Do(ctx, fns...)
	return errors.Join(errs...)
}

// prepareAppend sets the manifest's files for base (its manifest read
// when it is not the one Begin read), moving our files into the new root
// when base has another one. rebase is the attempt's count.
func (a *attempt) prepareAppend(ctx context.Context, base Base) error {
	t, s, m := a.t, a.t.app, a.m
	if bp := base.Pointer; bp != nil && (s.base == nil || s.base.Generation != bp.Generation) {
		nb, err := t.readManifest(ctx, bp.Generation, a.deadline)
		if err != nil {
			return fmt.Errorf("append %s: read the new base manifest: %w", t.partition, err)
		}
		oldPrefix := s.prefix(t.partition)
		s.base = nb
		wasRoot, wasLayout, wasSub := s.root, s.rootLayout, s.sub
		s.setRoot(a.staged, t.dataLayout)
		if s.root != wasRoot || s.rootLayout != wasLayout {
			// Another root (we lost to a replacing commit, a rollback, or
			// the partition's first commit): our files move into it.
			if err := a.moveOwn(ctx, oldPrefix); err != nil {
				s.root, s.rootLayout, s.sub = wasRoot, wasLayout, wasSub
				return err
			}
		}
	}
	if err := s.setContent(m); err != nil {
		return err
	}
	if s.root != m.Generation {
		m.DataGeneration = s.root
	} else {
		m.DataGeneration = ""
	}
	m.DataLayout = s.rootLayout
	a.dataGen = s.root
	return nil
}

// moveOwn copies the run's files from oldPrefix into our folder of the
// (new) root, then deletes the old copies (best effort: GC removes what
// remains once nothing references it).
func (a *attempt) moveOwn(ctx context.Context, oldPrefix string) error {
	t, s := a.t, a.t.app
	newPrefix := s.prefix(t.partition)
	old := make([]string, 0, len(s.own))
	for _, f := range s.own {
		src := oldPrefix + f.Path
		err := t.policy(a.deadline, 1).Do(ctx, store.IsRetryable, func(int) error {
			_, err := store.Copy(ctx, t.st, newPrefix+f.Path, src, store.CopyOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("append %s: move the run's file %s into %s: %w", t.partition, src, newPrefix, err)
		}
		old = append(old, src)
	}
	store.DeleteAll(context.WithoutCancel(ctx), t.st, old)
	return nil
}

// setOwn records the run's staged content (paths relative to our folder).
func (s *appendState) setOwn(c manifest.Content) {
	s.own = c.Files
	s.schema = c.Schema
}

// writeRecord creates the run's record when Begin found none (before the
// first pointer swap of the run: create-if-absent, so that the first
// attempt's time stays), or completes it with the generation that took
// the run's files (gen != "").
func (t *Txn) writeRecord(ctx context.Context, gen string, deadline time.Time) error {
	s := t.app
	rec := RunRecord{Partition: t.partition, RunID: t.opts.RunID, Since: t.began.UTC(), Generation: gen}
	if s.record != nil {
		rec.Since = s.record.Since
	}
	data, err := EncodeRunRecord(&rec)
	if err != nil {
		return err
	}
	opts := store.PutOptions{ContentType: "application/json", IfNoneMatch: gen == ""}
	err = t.policy(deadline, 1).Do(ctx, store.IsRetryable, func(int) error {
		_, err := t.st.Put(ctx, RunKey(t.partition, t.opts.RunID), data, opts)
		if gen == "" && errors.Is(err, store.ErrPrecondition) {
			return nil // another attempt of the run created it first
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("append %s: write the run's record: %w", t.partition, err)
	}
	if s.record == nil {
		s.record = &rec
	}
	return nil
}

// appendSkip decides, before an append's manifest is written on base,
// whether the run already appended: SameRun, or "" to go on. The first
// attempt uses what Begin found; a rebase looks at the new base's history
// and reads the run's record again (another attempt of the run may have
// committed meanwhile, further back than the history reaches).
func (a *attempt) appendSkip(ctx context.Context, base Base, rebase int) (Outcome, error) {
	t, s := a.t, a.t.app
	if t.opts.Force {
		return "", nil
	}
	if rebase == 0 {
		if s.took != "" {
			return SameRun, nil
		}
		return "", nil
	}
	if base.Pointer != nil {
		if e, ok := base.Pointer.FindRun(t.opts.RunID); ok {
			s.took = e.Generation
			return SameRun, nil
		}
	}
	var rec *RunRecord
	err := t.policy(a.deadline, 2).Do(ctx, store.IsRetryable, func(int) (err error) {
		rec, err = ReadRunRecord(ctx, t.st, t.partition, t.opts.RunID)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("append %s: read the run's record: %w", t.partition, err)
	}
	if rec != nil && rec.Generation != "" {
		s.took = rec.Generation
		return SameRun, nil
	}
	if rec != nil && s.record == nil {
		s.record = rec
	}
	return "", nil
}

// appendSameRun completes a SameRun result of an append: the generation
// that took the run's files, and the run's record, completed with it when
// it was not (best effort).
func (t *Txn) appendSameRun(ctx context.Context, r *Result, deadline time.Time) {
	s := t.app
	if r.RunGeneration == "" {
		r.RunGeneration = s.took
	}
	if r.RunGeneration != "" && (s.record == nil || s.record.Generation == "") {
		t.writeRecord(context.WithoutCancel(ctx), r.RunGeneration, deadline)
	}
}
