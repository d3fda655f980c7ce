package deltalog

import (
	"context"
	"encoding/json"
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
//     number, file count and bytes, without files) and the entries after
//     the checkpoint (fewer than the checkpoint interval);
//   - table.json, as every publish does;
//   - the append's manifest head, never expanded (none when the commit
//     hands its manifest over), and only when a pack moved some of the
//     run's files into segments, the newest segments down to them
//     (manifest.Segment: one GET a level);
//
// and writes the version: commitInfo, the run's txn and the run's adds.
// The run's files are the head's last files beyond the count the log
// holds of the partition, which the log holds at the parent when its
// newest files are tagged with the parent generation and the head's
// files before the run's have exactly the log's bytes of the partition
// (the summary's counts, moved by the adds and removes of the entries
// since). Anything else (no summary, another writer's action since the
// checkpoint, a partition the tail cannot place) makes the publish
// replay the checkpoint as every other publish does (errFallback): the
// tail is never the only judge of a foreign change. A checkpoint due at
// the version written is the one cost that grows with the table: its
// state is the previous checkpoint's, read, with the tail applied
// (Delta's own trade-off: checkpoints bound the replay and cost the
// table's size).

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
	cp, usable, err := readLastCheckpoint(ctx, p.st, p.pol)
	if err != nil {
		return nil, err
	}
	if !usable {
		return nil, errFallback
	}
	t := &logTail{cp: cp}
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
				if data, serr = unpackSummary(data, t.cp); serr == nil {
					t.sum, serr = decodeSummary(data, t.cp)
				}
				if serr != nil {
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

// catchUpTail reads the entries after t's last version (a lost race).
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

// The operationParameters of a version of one partition's change that
// say the generation's files and bytes: what the partition holds after
// it.
const (
	paramFiles = "pswap.files"
	paramBytes = "pswap.bytes"
)

// apply moves the partitions by one entry. A partition with adds is at
// their generation and sequence number (pswap's versions bring a
// partition to exactly one generation's files), with the files and
// bytes the version's operationParameters give for it (a version of one
// partition), or, for a partition the log did not hold, those of the
// adds. A version that re-adds files a partition kept (a rollback) says
// nothing countable otherwise: such a partition is unknown, and so is
// one that removes alone leave with files (their tags name older
// generations).
func (ts *tailState) apply(acts []Action) error {
	type change struct {
		adds, removes int
		bytes         int64
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
	var params map[string]string
	for _, a := range acts {
		switch {
		case a.CommitInfo != nil:
			params = commitParams(a.CommitInfo)
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
			c.bytes += a.Add.Size
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
		cur, had := ts.parts[part]
		files, ferr := strconv.Atoi(params[paramFiles])
		bytes, berr := strconv.ParseInt(params[paramBytes], 10, 64)
		switch {
		case !had && !ts.unknown[part] && c.removes > 0:
			return errFallback // removes of files the tail does not know
		case c.adds > 0 && len(changes) == 1 && params["partition"] == part && params["generation"] == c.gen && ferr == nil && berr == nil && files >= c.adds && bytes >= 0:
			ts.parts[part] = partSummary{gen: c.gen, seq: c.seq, files: files, bytes: bytes}
			delete(ts.unknown, part)
		case c.adds > 0 && !had && !ts.unknown[part]:
			ts.parts[part] = partSummary{gen: c.gen, seq: c.seq, files: c.adds, bytes: c.bytes}
		case c.adds == 0 && had && c.removes == cur.files:
			delete(ts.parts, part) // every file removed
		default:
			delete(ts.parts, part)
			ts.unknown[part] = true
		}
	}
	return nil
}

// commitParams are a commitInfo's operationParameters (nil when it has
// none that are strings).
func commitParams(ci *CommitInfo) map[string]string {
	if ci.OperationParameters != nil {
		return ci.OperationParameters
	}
	var doc struct {
		OperationParameters map[string]any `json:"operationParameters"`
	}
	if json.Unmarshal(ci.Raw, &doc) != nil {
		return nil
	}
	out := make(map[string]string, len(doc.OperationParameters))
	for k, v := range doc.OperationParameters {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// readAppend returns c's manifest, or reads its head (never expanded),
// and errFallback when it is not an append's.
func (p *publisher) readAppend(ctx context.Context, c Commit) (*manifest.Manifest, error) {
	m := c.Manifest
	if m == nil {
		var err error
		if m, err = p.readHead(ctx, c.Partition, c.Generation); err != nil {
			return nil, err
		}
	}
	if m.Kind != manifest.KindAppend {
		return m, errFallback
	}
	return m, nil
}

// runFiles returns the last n files of m (a head, or a whole manifest):
// from its tail and, when a pack moved some into segments, the newest
// segments.
func (p *publisher) runFiles(ctx context.Context, m *manifest.Manifest, n int) ([]manifest.File, error) {
	tail := m.Files[len(m.Files)-min(n, len(m.Files)):]
	if n <= len(m.Files) {
		return tail, nil
	}
	older, err := p.lastSegmentFiles(ctx, m, m.Segments, n-len(m.Files))
	if err != nil {
		return nil, err
	}
	return append(older, tail...), nil
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
//
// The run's files are m's last FileCount() less the files the log holds
// of the partition. The log holds the append's parent when the
// partition's newest files are tagged with the parent generation, and
// the files left of m's have exactly the bytes the log's have: then the
// version adds the run's files. A partition the log does not hold gets
// all of m's files.
func (p *publisher) publishAppend(ctx context.Context, c Commit) (Result, *manifest.Manifest, error) {
	res := Result{Version: -1}
	var (
		t                *logTail
		m                *manifest.Manifest
		lerr, terr, merr error
	)
	overlap.Do(ctx,
		func() { t, lerr = p.readTail(ctx) },
		func() { terr = p.readTable(ctx) },
		func() { m, merr = p.readAppend(ctx, c) })
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
		case had && cur.gen != m.Parent, m.FileCount() < cur.files:
			return res, m, errFallback
		default:
			own, err := p.runFiles(ctx, m, m.FileCount()-cur.files)
			if err != nil {
				return res, m, err
			}
			var ownBytes int64
			for _, f := range own {
				ownBytes += f.Size
			}
			if m.Bytes-ownBytes != cur.bytes {
				return res, m, errFallback // not the parent's files
			}
			run := *m
			run.Segments, run.Content = nil, manifest.Content{Files: own}
			ups = []update{{part: c.Partition, seq: c.Seq, m: &run, runID: m.RunID, files: m.FileCount(), bytes: m.Bytes}}
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
