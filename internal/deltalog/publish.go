package deltalog

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Errors, checked with errors.Is. None but ErrContention is worth a retry.
var (
	// ErrCorrupt: a log entry, checkpoint or _last_checkpoint that does not
	// parse, or a log with a gap.
	ErrCorrupt = errkind.New("corrupt Delta log", errkind.ErrCorrupt)
	// ErrInvalid: a value that would encode to an invalid log entry.
	ErrInvalid = errkind.New("invalid Delta action", errkind.ErrPermanent)
	// ErrSchema: the table's schema or a partition key has no Delta form
	// (a time or nanosecond timestamp column).
	ErrSchema = errkind.New("schema not publishable as Delta Lake", errkind.ErrPermanent)
	// ErrForeign: another writer changed the Delta table (a file without
	// pswap's tags, a deletion vector, a protocol pswap does not write).
	// The pointers are the truth: a publish refuses rather than drop or
	// carry changes they do not know.
	ErrForeign = errkind.New("the Delta table was changed by another writer", errkind.ErrPermanent)
	// ErrContention: the publish lost the race for the next version more
	// often than Options.MaxAttempts allows. Publishing again converges.
	ErrContention = errors.New("the Delta publish kept losing the race for the next log version")
	// ErrNoTable: the table has no table.json (nothing was committed with a
	// pswap that records the schema), which a Delta log needs.
	ErrNoTable = errkind.New("the table has no _pswap/table.json, which the Delta log's schema comes from", errkind.ErrNotFound)
)

// Table configuration a new log gets (Delta's defaults, written out so
// that readers, VACUUM and pswap's gc agree on them).
const (
	DefaultCheckpointInterval = 10
	DefaultFileRetention      = 7 * 24 * time.Hour
	DefaultLogRetention       = 30 * 24 * time.Hour
)

// Options tune a publish. The zero value works.
type Options struct {
	// CheckpointInterval: a checkpoint every this many versions (default:
	// the table's delta.checkpointInterval, else 10).
	CheckpointInterval int
	// MaxAttempts bounds the rebases after lost races (default 100).
	MaxAttempts int
	// Concurrency bounds the reads made at once (default 16).
	Concurrency int
	// FileRetention and LogRetention are written into a new log's
	// configuration (delta.deletedFileRetentionDuration and
	// delta.logRetentionDuration; defaults 7 and 30 days).
	FileRetention, LogRetention time.Duration
	// EngineInfo is commitInfo.engineInfo (default "pswap").
	EngineInfo string
	// RequestAttempts bounds the attempts of each store request (default
	// retry.DefaultRequestAttempts, the CLI's default --max-attempts),
	// under the retry rule every view publish follows (retry.Request): a
	// transient failure of a read is read again after a backoff, and a
	// version PUT whose reply was lost is settled by reading it back.
	RequestAttempts int
}

func (o Options) withDefaults() Options {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 100
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.FileRetention <= 0 {
		o.FileRetention = DefaultFileRetention
	}
	if o.LogRetention <= 0 {
		o.LogRetention = DefaultLogRetention
	}
	if o.EngineInfo == "" {
		o.EngineInfo = "pswap"
	}
	return o
}

// Result is what a publish did.
type Result struct {
	// Version is the table's current Delta version (-1: no log, nothing
	// to publish).
	Version int64
	// Changed: this publish wrote Version (false: the log already
	// reflected the pointers).
	Changed bool
	// Rebases counts the versions lost to other publishers.
	Rebases int
	// Partitions is the number of partitions with files in the table
	// (the publish of an append from the log's tail counts them from the
	// checkpoint's summary and the entries after it).
	Partitions int
	// Checkpoint: this publish wrote a checkpoint of Version.
	Checkpoint bool
	// CheckpointErr is why a due checkpoint was not written (the version
	// stands; the next one due is tried again).
	CheckpointErr error
}

// Commit is a committed generation to publish.
type Commit struct {
	Partition  string
	Generation string
	Seq        int64 // the pointer's sequence number (0: read the pointer)
	// Manifest is the generation's (nil: read when needed, one GET).
	Manifest *manifest.Manifest
}

type publisher struct {
	st   store.Store
	opts Options
	tbl  *tablemeta.Table
	// env is the context's environment (internal/env): its clock stamps
	// commits and deletions.
	env *env.Env
	// pol is the retry rule of every request (retry.Request).
	pol retry.Policy
}

func newPublisher(ctx context.Context, st store.Store, opts Options) *publisher {
	opts = opts.withDefaults()
	return &publisher{st: st, opts: opts, env: env.From(ctx), pol: retry.Request(opts.RequestAttempts)}
}

// update is one partition's change: its files now m's (nil m: none).
type update struct {
	part  string
	seq   int64
	m     *manifest.Manifest
	runID string
	// files and bytes are the generation's totals when m lists only
	// the files to add (the publish of an append from the log's tail);
	// 0: m's.
	files int
	bytes int64
}

// PublishCommit brings the Delta log up to date with one committed
// generation: a version that removes the partition's previous files and
// adds the generation's, with a txn of its run id. A partition the log
// already has at this sequence number or a later one is left as it is. A
// table without a log gets version 0 from every partition's pointer. An
// append whose parent the log holds is published from the log's tail
// (tail.go): a version of the run's adds alone, at a cost that does not
// grow with the number of earlier appends.
func PublishCommit(ctx context.Context, st store.Store, c Commit, opts Options) (Result, error) {
	if err := partition.Validate(c.Partition); err != nil {
		return Result{Version: -1}, err
	}
	p := newPublisher(ctx, st, opts)
	if c.Seq <= 0 || c.Generation == "" {
		var b swap.Base
		err := p.pol.Idempotent(ctx, func() (err error) {
			b, err = swap.ReadPointer(ctx, st, c.Partition)
			return err
		})
		if err != nil {
			return Result{Version: -1}, err
		}
		c.Seq, c.Generation = b.Pointer.Seq, b.Pointer.Generation
		c.Manifest = nil
	}
	if c.Manifest != nil && (c.Manifest.Generation != c.Generation || c.Manifest.Partition != c.Partition) {
		c.Manifest = nil
	}
	if c.Manifest == nil || c.Manifest.Kind == manifest.KindAppend {
		// An append: its version adds the run's files alone, written from
		// the log's tail without the checkpoint's file list (tail.go).
		res, m, err := p.publishAppend(ctx, c)
		if !errors.Is(err, errFallback) {
			return res, err
		}
		if c.Manifest == nil && m != nil && !m.Segmented() {
			c.Manifest = m // read already, and whole
		}
	}
	var mu sync.Mutex
	return p.run(ctx, func(ctx context.Context, s *State, parts map[string]*part) ([]update, error) {
		if s.Version < 0 {
			return p.reconcilePlan(ctx, s, parts)
		}
		if cur := parts[c.Partition]; cur != nil && cur.seq >= c.Seq {
			return nil, nil
		}
		mu.Lock()
		m := c.Manifest
		mu.Unlock()
		if m == nil {
			var err error
			if m, err = p.readManifest(ctx, c.Partition, c.Generation); err != nil {
				return nil, err
			}
			mu.Lock()
			c.Manifest = m
			mu.Unlock()
		}
		return []update{{part: c.Partition, seq: c.Seq, m: m, runID: m.RunID}}, nil
	})
}

// Publish reconciles the Delta log with every partition's pointer (one
// GET per partition): a version with the removes and adds of each
// partition whose files differ, and the removes of partitions that no
// longer have a pointer. Idempotent: nothing is written when the log
// already reflects every pointer.
func Publish(ctx context.Context, st store.Store, opts Options) (Result, error) {
	p := newPublisher(ctx, st, opts)
	return p.run(ctx, p.reconcilePlan)
}

// readManifest reads a generation's manifest under the retry rule.
func (p *publisher) readManifest(ctx context.Context, part, gen string) (m *manifest.Manifest, err error) {
	err = p.pol.Idempotent(ctx, func() (err error) {
		m, err = swap.ReadManifest(ctx, p.st, part, gen)
		return err
	})
	return m, err
}

func (p *publisher) reconcilePlan(ctx context.Context, s *State, parts map[string]*part) ([]update, error) {
	var listed []swap.Listed
	err := p.pol.Idempotent(ctx, func() (err error) {
		listed, err = swap.ListPointersWith(ctx, p.st, "", swap.ListOptions{MaxAttempts: p.opts.RequestAttempts})
		return err
	})
	if err != nil {
		return nil, err
	}
	var (
		ups  []update
		mu   sync.Mutex
		errs []error
		live = map[string]bool{}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit(ctx, p.opts.Concurrency))
	for _, l := range listed {
		if l.Err != nil {
			// A corrupt pointer: its partition stays as the log has it.
			live[l.Partition] = true
			errs = append(errs, l.Err)
			continue
		}
		live[l.Partition] = true
		ptr := l.Pointer
		if cur := parts[l.Partition]; cur != nil && (cur.seq > ptr.Seq || cur.seq == ptr.Seq && cur.gen == ptr.Generation) {
			continue
		}
		g.Go(func() error {
			m, err := p.readManifest(gctx, l.Partition, ptr.Generation)
			if err != nil {
				return err
			}
			mu.Lock()
			ups = append(ups, update{part: l.Partition, seq: ptr.Seq, m: m, runID: ptr.RunID})
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for name := range parts {
		if !live[name] {
			ups = append(ups, update{part: name})
		}
	}
	slices.SortFunc(ups, func(a, b update) int {
		if a.part < b.part {
			return -1
		}
		if a.part > b.part {
			return 1
		}
		return 0
	})
	if len(errs) > 0 && len(ups) == 0 {
		return nil, errors.Join(errs...)
	}
	return ups, nil
}

type planFunc func(ctx context.Context, s *State, parts map[string]*part) ([]update, error)

// run is the publish loop: load the log (and table.json), plan, PUT the
// next version create-if-absent; a lost race reads the versions that
// won and plans again on them.
func (p *publisher) run(ctx context.Context, plan planFunc) (Result, error) {
	res := Result{Version: -1}
	var (
		s          *State
		lerr, terr error
	)
	overlap.Do(ctx, func() { s, lerr = load(ctx, p.st, p.pol) }, func() { terr = p.readTable(ctx) })
	if err := cmp.Or(lerr, terr); err != nil {
		return res, err
	}
	for attempt := 0; ; attempt++ {
		if attempt >= p.opts.MaxAttempts {
			return res, fmt.Errorf("%w (%d attempts)", ErrContention, attempt)
		}
		if attempt == 0 && p.schemaBehind(s) {
			// table.json was read beside the log, and the log has columns
			// it lacks: it was read before an evolution another publisher
			// has written. Read it again. (A later attempt follows a lost
			// race, after which it was read after the log.)
			if err := p.readTable(ctx); err != nil {
				return res, err
			}
		}
		parts, err := s.partitions()
		if err != nil {
			return res, err
		}
		ups, err := plan(ctx, s, parts)
		if err != nil {
			return res, err
		}
		acts, err := p.actions(s, parts, ups)
		if err != nil {
			return res, err
		}
		if acts == nil {
			res.Version, res.Partitions = s.Version, len(parts)
			return res, nil
		}
		v := s.Version + 1
		data, err := EncodeCommit(acts)
		if err != nil {
			return res, err
		}
		won, err := p.put(ctx, v, data)
		if err != nil {
			return res, err
		}
		if !won {
			// Lost the race: plan again from fresh table state, the
			// versions that won and then table.json (the winner may have
			// evolved the schema; table.json changes before the log does).
			res.Rebases++
			if err := s.catchUp(ctx, p.st, p.pol); err != nil {
				return res, err
			}
			if err := p.readTable(ctx); err != nil {
				return res, err
			}
			continue
		}
		s.apply(v, acts)
		parts, _ = s.partitions()
		res.Version, res.Changed, res.Partitions = v, true, len(parts)
		if interval := p.checkpointInterval(s); v > 0 && v%int64(interval) == 0 {
			res.CheckpointErr = p.checkpoint(ctx, s)
			res.Checkpoint = res.CheckpointErr == nil
		}
		return res, nil
	}
}

// readTable reads table.json, the schema and partition columns of the
// versions this publish writes.
func (p *publisher) readTable(ctx context.Context) error {
	var t *tablemeta.Table
	err := p.pol.Idempotent(ctx, func() (err error) {
		t, _, err = tablemeta.Read(ctx, p.st)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoTable
	}
	if err != nil {
		return err
	}
	p.tbl = t
	return nil
}

// schemaBehind reports whether the log's current schema has columns that
// the table.json this publish read lacks (olderSchema).
func (p *publisher) schemaBehind(s *State) bool {
	if s.Metadata == nil || p.tbl == nil {
		return false
	}
	info, err := deltaSchema(p.tbl)
	return err == nil && olderSchema(info.schemaString, s.Metadata.SchemaString)
}

// put writes version v create-if-absent: true when it is ours. An
// unknown outcome is settled by reading the version back, never by
// sending it blindly again (retry.CreateOnce).
func (p *publisher) put(ctx context.Context, v int64, data []byte) (bool, error) {
	won, err := retry.CreateOnce(ctx, p.pol, p.st, CommitKey(v), data, store.PutOptions{ContentType: "application/json"})
	if err != nil {
		return false, fmt.Errorf("the Delta log's version %d: %w", v, err)
	}
	return won, nil
}

func (p *publisher) checkpointInterval(s *State) int {
	if p.opts.CheckpointInterval > 0 {
		return p.opts.CheckpointInterval
	}
	if s.Metadata != nil {
		if n, err := strconv.Atoi(s.Metadata.Configuration["delta.checkpointInterval"]); err == nil && n > 0 {
			return n
		}
	}
	return DefaultCheckpointInterval
}

// checkpoint writes the checkpoint of s (its tombstones within the file
// retention), then points _last_checkpoint at it unless it already names
// a later one.
func (p *publisher) checkpoint(ctx context.Context, s *State) error {
	now := p.env.Now()
	keepAfter := now.Add(-FileRetention(s.Metadata)).UnixMilli()
	var tomb []*Remove
	for _, k := range sortedKeys(s.Tombstones) {
		if r := s.Tombstones[k]; r.DeletionTimestamp > keepAfter {
			tomb = append(tomb, r)
		}
	}
	data, n, err := encodeCheckpoint(s, tomb)
	if err != nil {
		return err
	}
	// Both PUTs are unconditional and write the same bytes when repeated.
	if err := p.pol.Idempotent(ctx, func() error {
		_, err := p.st.Put(ctx, CheckpointKey(s.Version), data, store.PutOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("write the checkpoint of version %d: %w", s.Version, err)
	}
	// The summary (summary.go) before _last_checkpoint names the
	// checkpoint, so that a checkpoint pswap names has one; none of a
	// state with another writer's files, whose publish replays.
	if parts, err := s.partitions(); err == nil {
		sum, err := encodeSummary(s, parts)
		if err == nil {
			sum, err = packSummary(sum)
		}
		if err == nil {
			err = p.pol.Idempotent(ctx, func() error {
				_, err := p.st.Put(ctx, summaryKey(s.Version), sum, store.PutOptions{ContentType: "application/gzip"})
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("write the checkpoint summary of version %d: %w", s.Version, err)
		}
	}
	if old, err := readAll(ctx, p.st, p.pol, lastCheckpointKey); err == nil {
		if lc, err := decodeLastCheckpoint(old); err == nil && lc.Version >= s.Version {
			return nil
		}
	}
	if err := p.pol.Idempotent(ctx, func() error {
		_, err := p.st.Put(ctx, lastCheckpointKey, encodeLastCheckpoint(lastCheckpoint{Version: s.Version, Size: int64(n)}), store.PutOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("write %s: %w", lastCheckpointKey, err)
	}
	return nil
}

// actions are the version that applies ups to s, or nil when nothing
// changes: commitInfo, the protocol and metaData when the log has none or
// the table's schema changed, a txn per run id, then each partition's
// removes and adds.
func (p *publisher) actions(s *State, parts map[string]*part, ups []update) ([]Action, error) {
	info, err := deltaSchema(p.tbl)
	if err != nil {
		return nil, err
	}
	now := p.env.Now()
	ms := now.UnixMilli()
	var acts []Action
	want := protocolFor(info)
	// keepLog: the log's schema is newer than table.json's as read (a
	// table.json read again still lacks the log's columns). Never write
	// an older schema over it: the log's metaData and protocol stay.
	keepLog := s.Metadata != nil && olderSchema(info.schemaString, s.Metadata.SchemaString)
	if keepLog {
		if !slices.Equal(s.Metadata.PartitionColumns, info.partitionColumns) {
			return nil, fmt.Errorf("%w: the Delta table is partitioned by %v, the pswap table by %v", ErrForeign, s.Metadata.PartitionColumns, info.partitionColumns)
		}
		if s.Protocol == nil || !sameProtocol(*s.Protocol, protocolFor(schemaInfo{})) && !sameProtocol(*s.Protocol, protocolFor(schemaInfo{ntz: true})) {
			return nil, fmt.Errorf("%w: the protocol is not one pswap writes", ErrForeign)
		}
	} else if s.Protocol == nil {
		acts = append(acts, Action{Protocol: &want})
	} else if !sameProtocol(*s.Protocol, want) {
		if s.Protocol.MinReaderVersion > want.MinReaderVersion || s.Protocol.MinWriterVersion > want.MinWriterVersion {
			if s.Protocol.MinWriterVersion != 7 || !slices.Equal(s.Protocol.WriterFeatures, want.WriterFeatures) || !slices.Equal(s.Protocol.ReaderFeatures, want.ReaderFeatures) {
				return nil, fmt.Errorf("%w: the protocol is reader %d / writer %d (features %v), which pswap does not write",
					ErrForeign, s.Protocol.MinReaderVersion, s.Protocol.MinWriterVersion, s.Protocol.WriterFeatures)
			}
		} else {
			acts = append(acts, Action{Protocol: &want})
		}
	}
	switch {
	case keepLog:
	case s.Metadata == nil:
		acts = append(acts, Action{Metadata: &Metadata{
			ID: p.newUUID(), Format: Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: info.schemaString, PartitionColumns: info.partitionColumns,
			Configuration: map[string]string{
				"delta.checkpointInterval":           strconv.Itoa(p.checkpointInterval(s)),
				"delta.deletedFileRetentionDuration": interval(p.opts.FileRetention),
				"delta.logRetentionDuration":         interval(p.opts.LogRetention),
			},
			CreatedTime: ms,
		}})
	case !slices.Equal(s.Metadata.PartitionColumns, info.partitionColumns):
		return nil, fmt.Errorf("%w: the Delta table is partitioned by %v, the pswap table by %v", ErrForeign, s.Metadata.PartitionColumns, info.partitionColumns)
	case s.Metadata.SchemaString != info.schemaString:
		m := *s.Metadata
		m.SchemaString = info.schemaString
		acts = append(acts, Action{Metadata: &m})
	}
	var files []Action
	runs := map[string]int64{}
	appendOnly := true // every update an append that removes nothing: mode Append
	for _, u := range ups {
		cur := parts[u.part]
		keep := map[string]bool{}
		// An append's generation lists the partition's files and the
		// run's: the files the log already has are neither removed nor
		// added again, so that the version adds only the run's files and
		// a streaming reader sees each row once.
		var have map[string]bool
		if u.m != nil && u.m.Kind == manifest.KindAppend && cur != nil {
			have = make(map[string]bool, len(cur.files))
			for _, a := range cur.files {
				have[a.Path] = true
			}
		}
		if u.m == nil || u.m.Kind != manifest.KindAppend {
			appendOnly = false
		}
		var adds []Action
		if u.m != nil {
			pv, err := partitionValues(p.tbl, u.part)
			if err != nil {
				return nil, err
			}
			mod := u.m.CommittedAt.UnixMilli()
			if u.m.CommittedAt.IsZero() {
				mod = ms
			}
			seq := strconv.FormatInt(u.seq, 10)
			for _, f := range swap.Files(p.st, u.m) {
				path := EscapePath(f.Key)
				keep[path] = true
				if have[path] {
					continue
				}
				adds = append(adds, Action{Add: &Add{
					Path: path, PartitionValues: pv, Size: f.Size, ModificationTime: mod, DataChange: true,
					Stats: fmt.Sprintf(`{"numRecords":%d}`, f.Rows),
					Tags:  map[string]string{TagPartition: u.part, TagGeneration: u.m.Generation, TagSeq: seq},
				}})
			}
			if u.runID != "" {
				runs[u.runID] = max(runs[u.runID], u.seq)
			}
		}
		if cur != nil {
			for _, a := range cur.files {
				if keep[a.Path] {
					continue // the same file (a rollback to the current data)
				}
				appendOnly = false
				files = append(files, Action{Remove: &Remove{Path: a.Path, DeletionTimestamp: ms, DataChange: true,
					ExtendedFileMetadata: true, PartitionValues: a.PartitionValues, Size: a.Size, Tags: a.Tags}})
			}
		}
		files = append(files, adds...)
	}
	if len(files) == 0 && len(acts) == 0 {
		return nil, nil
	}
	var txns []Action
	for _, id := range slices.Sorted(maps.Keys(runs)) {
		txns = append(txns, Action{Txn: &Txn{AppID: id, Version: runs[id], LastUpdated: ms}})
	}
	op := "WRITE"
	if s.Version < 0 {
		op = "CREATE TABLE"
	}
	params := map[string]string{"mode": "Overwrite"}
	if appendOnly {
		params["mode"] = "Append"
	}
	if len(ups) == 1 {
		u := ups[0]
		params["partition"] = u.part
		if u.m != nil {
			// The generation's files and bytes: what the partition holds
			// after this version, which the publish of a later append
			// reads from the log's tail (tail.go).
			files, bytes := len(u.m.Files), u.m.Bytes
			if u.files > 0 {
				files, bytes = u.files, u.bytes
			}
			params["generation"] = u.m.Generation
			params[paramFiles], params[paramBytes] = strconv.Itoa(files), strconv.FormatInt(bytes, 10)
		}
	}
	ci := Action{CommitInfo: &CommitInfo{Timestamp: ms, Operation: op, OperationParameters: params, EngineInfo: p.opts.EngineInfo}}
	out := append([]Action{ci}, acts...)
	out = append(out, txns...)
	return append(out, files...), nil
}

// interval writes a duration as Delta's configuration does ("interval 7
// days"; hours, minutes or seconds when not whole days).
func interval(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("interval %d days", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("interval %d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("interval %d minutes", d/time.Minute)
	}
	return fmt.Sprintf("interval %d seconds", d/time.Second)
}

// newUUID is a random (version 4) UUID from the environment's injected
// source (internal/env: the same on every run of a seed), or uuid.New.
func (p *publisher) newUUID() string {
	if !p.env.Seeded() {
		return uuid.NewString()
	}
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[:8], p.env.Uint64())
	binary.BigEndian.PutUint64(u[8:], p.env.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

// limit is n, or 1 under an environment that runs the overlapped parts of
// an operation one at a time (internal/overlap, internal/env's Order): a
// group limited to 1 runs its functions one after another, in order.
func limit(ctx context.Context, n int) int {
	if env.From(ctx).Order != nil {
		return 1
	}
	return n
}
