package deltalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// The publish of an append from the log's tail.
//
// An append's version is an add of the run's files alone: it needs the
// protocol, the metaData, the last version, and whether the log holds
// the partition at the append's parent generation (then the run's files
// are all that is missing). None of that needs the file list a
// checkpoint holds, which grows with every append. So the publish of an
// append reads:
//
//   - _last_checkpoint, then the checkpoint's summary (summary.go: the
//     protocol, the metaData and each partition's generation, sequence
//     number and file count, without files) and the entries after the
//     checkpoint (at most the checkpoint interval);
//   - the append's manifest head and its parent's head (never expanded),
//     and only when the run's files were packed into a segment, the
//     newest segments down to them (manifest.Segment: one GET a level);
//
// and writes the version: commitInfo, the run's txn and the run's adds.
// The log holds the partition at the parent when its newest files are
// tagged with the parent generation and it has as many files as the
// parent's manifest (the summary's count, moved by the adds and removes
// of the entries since). Anything else (no summary, another writer's
// action since the checkpoint, a partition the tail cannot place) makes
// the publish replay the checkpoint as every other publish does
// (errFallback): the flat path is never the only judge of a foreign
// change. A checkpoint due at the version written is the one cost that
// grows with the table: its state is the previous checkpoint's, read,
// with the tail applied (Delta's own trade-off: checkpoints bound the
// replay and cost the table's size).

// errFallback: the flat publish cannot decide; replay the checkpoint.
var errFallback = errors.New("the log's tail does not decide the publish")

// logTail is the log as the flat publish reads it: the newest
// checkpoint's summary and the entries after it.
type logTail struct {
	cp  int64    // the checkpoint's version (-1: none; the tail starts at version 0)
	sum *summary // its summary (nil when cp < 0)
	// entries are the versions cp+1 ... cp+len(entries).
	entries [][]Action
}

func (t *logTail) version() int64 { return t.cp + int64(len(t.entries)) }

// readTail reads _last_checkpoint, then the checkpoint's summary and the
// entries after it at once.
func (p *publisher) readTail(ctx context.Context) (*logTail, error) {
	t := &logTail{cp: -1}
	data, err := readAll(ctx, p.st, p.pol, lastCheckpointKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", lastCheckpointKey, err)
	default:
		lc, err := decodeLastCheckpoint(data)
		if err != nil || lc.Parts != 0 {
			return nil, errFallback
		}
		t.cp = lc.Version
	}
	var serr, eerr error
	overlap.Do(ctx,
		func() {
			if t.cp < 0 {
				return
			}
			var data []byte
			data, serr = readAll(ctx, p.st, p.pol, summaryKey(t.cp))
			if errors.Is(serr, store.ErrNotFound) {
				serr = errFallback // another writer's checkpoint, or an older pswap's
				return
			}
			if serr == nil {
				if t.sum, serr = decodeSummary(data, t.cp); serr != nil {
					serr = errFallback
				}
			}
		},
		func() { t.entries, eerr = readEntries(ctx, p.st, p.pol, t.cp+1) })
	if serr != nil {
		return nil, serr
	}
	if eerr != nil {
		if errors.Is(eerr, ErrCorrupt) {
			return nil, errFallback // the replay judges the log
		}
		return nil, eerr
	}
	return t, nil
}

// catchUp reads the entries after t's last version (a lost race).
func (p *publisher) catchUpTail(ctx context.Context, t *logTail) error {
	more, err := readEntries(ctx, p.st, p.pol, t.version()+1)
	if errors.Is(err, ErrCorrupt) {
		return errFallback
	}
	t.entries = append(t.entries, more...)
	return err
}

// tailState is what the tail says of the table: the protocol and
// metaData in s (its Files and Tombstones are the tail's alone, never a
// table's state), each partition placed (parts) and those it cannot
// place (unknown: the removes of a rollback to fewer files leave files
// tagged with older generations).
type tailState struct {
	s       *State
	parts   map[string]partSummary
	unknown map[string]bool
}

// state replays the tail on its summary, or errFallback when something
// in it is not what pswap writes.
func (t *logTail) state() (*tailState, error) {
	ts := &tailState{s: newState(), parts: map[string]partSummary{}, unknown: map[string]bool{}}
	if t.sum != nil {
		ts.s.Protocol, ts.s.Metadata, ts.s.Version, ts.s.Checkpoint = t.sum.protocol, t.sum.metadata, t.cp, t.cp
		for k, v := range t.sum.parts {
			ts.parts[k] = v
		}
	}
	for i, acts := range t.entries {
		v := t.cp + 1 + int64(i)
		if err := ts.apply(acts); err != nil {
			return nil, err
		}
		ts.s.apply(v, acts)
	}
	if ts.s.Version < 0 || ts.s.Protocol == nil || ts.s.Metadata == nil || ts.s.foreign != "" {
		return nil, errFallback
	}
	return ts, nil
}

// apply moves the partitions by one entry: a partition with adds is at
// their generation and sequence number (pswap's versions bring a
// partition to exactly one generation's files), with its files counted.
func (ts *tailState) apply(acts []Action) error {
	type change struct {
		adds, removes int
		gen           string
		seq           int64
	}
	changes := map[string]*change{}
	at := func(part string) *change {
		c := changes[part]
		if c == nil {
			c = &change{}
			changes[part] = c
		}
		return c
	}
	for _, a := range acts {
		switch {
		case a.Add != nil:
			part, gen := a.Add.Tags[TagPartition], a.Add.Tags[TagGeneration]
			seq, err := strconv.ParseInt(a.Add.Tags[TagSeq], 10, 64)
			if part == "" || gen == "" || err != nil || a.Add.Foreign != "" {
				return errFallback // another writer's file: the replay refuses it
			}
			c := at(part)
			if c.adds > 0 && (c.gen != gen || c.seq != seq) {
				return errFallback
			}
			c.adds++
			c.gen, c.seq = gen, seq
		case a.Remove != nil:
			part := a.Remove.Tags[TagPartition]
			if part == "" {
				return errFallback // a remove that names no pswap partition
			}
			at(part).removes++
		}
	}
	for part, c := range changes {
		if ts.unknown[part] {
			continue // kept files cannot be counted: still unknown
		}
		cur, had := ts.parts[part]
		files := cur.files + c.adds - c.removes
		switch {
		case !had && c.removes > 0 || files < 0:
			return errFallback // removes of files the tail does not know
		case c.adds > 0:
			ts.parts[part] = partSummary{gen: c.gen, seq: c.seq, files: files}
		case files == 0:
			delete(ts.parts, part)
		default:
			// Removes alone, files left: their tags name older
			// generations (a rollback to fewer files).
			delete(ts.parts, part)
			ts.unknown[part] = true
		}
	}
	return nil
}

// appendFiles is what the flat publish reads of an append's manifests.
type appendFiles struct {
	m           *manifest.Manifest // the append's head (or manifest)
	parentFiles int                // its parent's file count (0: none)
	own         []manifest.File    // the run's files: m's last FileCount()-parentFiles
}

// readAppend reads the head of c's generation (unless c has its
// manifest) and its parent's, and the run's files: the last files of the
// head that the parent does not have, from its tail and, when a pack
// moved some into segments, the newest segments. errFallback when c's
// generation is not an append.
func (p *publisher) readAppend(ctx context.Context, c Commit) (*appendFiles, error) {
	af := &appendFiles{m: c.Manifest}
	if af.m == nil {
		var err error
		if af.m, err = p.readHead(ctx, c.Partition, c.Generation); err != nil {
			return nil, err
		}
	}
	m := af.m
	if m.Kind != manifest.KindAppend {
		return af, errFallback
	}
	if m.Parent != "" {
		pm, err := p.readHead(ctx, c.Partition, m.Parent)
		if errors.Is(err, swap.ErrGenerationNotFound) {
			return af, errFallback
		}
		if err != nil {
			return nil, err
		}
		af.parentFiles = pm.FileCount()
	}
	n := m.FileCount() - af.parentFiles
	if n < 0 {
		return af, errFallback
	}
	tail := m.Files[len(m.Files)-min(n, len(m.Files)):]
	if n > len(m.Files) {
		older, err := p.lastSegmentFiles(ctx, m, m.Segments, n-len(m.Files))
		if err != nil {
			return nil, err
		}
		af.own = append(older, tail...)
	} else {
		af.own = tail
	}
	if len(af.own) != n {
		return af, errFallback
	}
	return af, nil
}

// readHead reads a generation's manifest unexpanded, under the retry rule.
func (p *publisher) readHead(ctx context.Context, part, gen string) (m *manifest.Manifest, err error) {
	err = p.pol.Idempotent(ctx, func() (err error) {
		m, _, err = swap.ReadManifestHead(ctx, p.st, part, gen)
		return err
	})
	return m, err
}

// lastSegmentFiles returns the last k files under refs (newest last),
// reading the segments that hold them, newest first: one GET a level.
func (p *publisher) lastSegmentFiles(ctx context.Context, m *manifest.Manifest, refs []manifest.SegmentRef, k int) ([]manifest.File, error) {
	var out []manifest.File
	for i := len(refs) - 1; i >= 0 && k > 0; i-- {
		ref := refs[i]
		key := manifest.SegmentKey(layout.DataPrefixOf(m), ref.ID)
		data, err := readAll(ctx, p.st, p.pol, key)
		if err != nil {
			return nil, fmt.Errorf("%s generation %s: read segment %s: %w", m.Partition, m.Generation, key, err)
		}
		seg, err := manifest.DecodeSegment(data, ref)
		if err == nil && seg.Partition != m.Partition {
			err = fmt.Errorf("names partition %s", seg.Partition)
		}
		if err != nil {
			return nil, fmt.Errorf("%s generation %s: segment %s: %w: %w", m.Partition, m.Generation, key, swap.ErrCorrupt, err)
		}
		var files []manifest.File
		if ref.Level == 0 {
			files = seg.Files[len(seg.Files)-min(k, len(seg.Files)):]
		} else if files, err = p.lastSegmentFiles(ctx, m, seg.Segments, min(k, ref.Files)); err != nil {
			return nil, err
		}
		out = append(append([]manifest.File(nil), files...), out...)
		k -= len(files)
	}
	return out, nil
}

// publishAppend publishes c, an append, from the log's tail: errFallback
// (with the manifest it read, when it read one) when the tail does not
// decide, and the caller replays the checkpoint.
func (p *publisher) publishAppend(ctx context.Context, c Commit) (Result, *manifest.Manifest, error) {
	res := Result{Version: -1}
	var (
		t                *logTail
		af               *appendFiles
		lerr, terr, merr error
	)
	overlap.Do(ctx,
		func() { t, lerr = p.readTail(ctx) },
		func() { terr = p.readTable(ctx) },
		func() { af, merr = p.readAppend(ctx, c) })
	var m *manifest.Manifest
	if af != nil {
		m = af.m
	}
	for _, err := range []error{merr, lerr, terr} {
		if err != nil {
			return res, m, err
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt >= p.opts.MaxAttempts {
			return res, m, fmt.Errorf("%w (%d attempts)", ErrContention, attempt)
		}
		ts, err := t.state()
		if err != nil {
			return res, m, err
		}
		s := ts.s
		if attempt == 0 && p.schemaBehind(s) {
			if err := p.readTable(ctx); err != nil {
				return res, m, err
			}
		}
		var ups []update
		cur, had := ts.parts[c.Partition]
		switch {
		case ts.unknown[c.Partition]:
			return res, m, errFallback
		case had && cur.seq >= c.Seq:
			// The log already holds this commit or a later one (a
			// schema change alone may still be due).
		case af.parentFiles == 0 && had:
			return res, m, errFallback
		case af.parentFiles > 0 && (!had || cur.gen != m.Parent || cur.files != af.parentFiles):
			return res, m, errFallback
		default:
			run := *m
			run.Segments, run.Content = nil, manifest.Content{Files: af.own}
			ups = []update{{part: c.Partition, seq: c.Seq, m: &run, runID: m.RunID}}
		}
		acts, err := p.actions(s, map[string]*part{}, ups)
		if err != nil {
			return res, m, err
		}
		if acts == nil {
			res.Version, res.Partitions = s.Version, len(ts.parts)+len(ts.unknown)
			return res, m, nil
		}
		v := s.Version + 1
		data, err := EncodeCommit(acts)
		if err != nil {
			return res, m, err
		}
		won, err := p.put(ctx, v, data)
		if err != nil {
			return res, m, err
		}
		if !won {
			res.Rebases++
			if err := p.catchUpTail(ctx, t); err != nil {
				return res, m, err
			}
			if err := p.readTable(ctx); err != nil {
				return res, m, err
			}
			continue
		}
		t.entries = append(t.entries, acts)
		res.Version, res.Changed = v, true
		if err := ts.apply(acts); err == nil {
			res.Partitions = len(ts.parts) + len(ts.unknown)
		}
		if interval := p.checkpointInterval(s); v%int64(interval) == 0 {
			full, err := p.stateAt(ctx, t)
			if err == nil {
				err = p.checkpoint(ctx, full)
			}
			res.CheckpointErr = err
			res.Checkpoint = err == nil
		}
		return res, m, nil
	}
}

// stateAt is the table's whole state at t's last version: the
// checkpoint t starts from, read, with t's entries applied; or, when
// that checkpoint does not read, the log replayed up to that version.
func (p *publisher) stateAt(ctx context.Context, t *logTail) (*State, error) {
	s := newState()
	if t.cp >= 0 {
		data, err := readAll(ctx, p.st, p.pol, CheckpointKey(t.cp))
		if err == nil {
			s, err = decodeCheckpoint(data, t.cp)
		}
		if err != nil {
			return p.replayTo(ctx, t.version())
		}
		s.Checkpoint = t.cp
	}
	for i, acts := range t.entries {
		s.apply(t.cp+1+int64(i), acts)
	}
	return s, nil
}

// replayTo replays the log from version 0 up to version v.
func (p *publisher) replayTo(ctx context.Context, v int64) (*State, error) {
	acts, err := readEntries(ctx, p.st, p.pol, 0)
	if err != nil {
		return nil, err
	}
	if int64(len(acts)) <= v {
		return nil, fmt.Errorf("%w: version %d is missing", ErrCorrupt, v)
	}
	s := newState()
	for i := range v + 1 {
		s.apply(i, acts[i])
	}
	return s, nil
}
