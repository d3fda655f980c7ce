package deltalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/store"
)

// The layout of the Delta log, in this file only.
const (
	// LogDir is the Delta log's folder at the table root.
	LogDir            = "_delta_log/"
	lastCheckpointKey = LogDir + "_last_checkpoint"
	versionDigits     = 20
)

// CommitKey is the store key of version v's log entry.
func CommitKey(v int64) string { return fmt.Sprintf("%s%020d.json", LogDir, v) }

// CheckpointKey is the store key of version v's single-file checkpoint.
func CheckpointKey(v int64) string { return fmt.Sprintf("%s%020d.checkpoint.parquet", LogDir, v) }

// logFile is a file of the log folder that a listing found.
type logFile struct {
	version    int64
	checkpoint bool // a single-file checkpoint (else a commit)
	attrs      store.Attrs
}

// parseLogKey tells a commit or a single-file checkpoint from the other
// files of the log folder (.crc, multi-part checkpoints, temporary files).
func parseLogKey(a store.Attrs) (logFile, bool) {
	name, ok := strings.CutPrefix(a.Key, LogDir)
	if !ok || len(name) < versionDigits+1 {
		return logFile{}, false
	}
	v, err := strconv.ParseInt(name[:versionDigits], 10, 64)
	if err != nil || v < 0 {
		return logFile{}, false
	}
	switch name[versionDigits:] {
	case ".json":
		return logFile{version: v, attrs: a}, true
	case ".checkpoint.parquet":
		return logFile{version: v, checkpoint: true, attrs: a}, true
	}
	return logFile{}, false
}

// listFrom lists the log files of versions from `from` on: one listing
// per hundred versions (a prefix of 18 digits), so a table with a long
// log costs one request, not a listing of it all.
func listFrom(ctx context.Context, st store.Store, pol retry.Policy, from int64) ([]logFile, error) {
	var out []logFile
	for hundred := from / 100; ; hundred++ {
		prefix := fmt.Sprintf("%s%018d", LogDir, hundred)
		var page []logFile
		full := false
		err := pol.Idempotent(ctx, func() error {
			page, full = page[:0], false
			for a, err := range st.List(ctx, prefix) {
				if err != nil {
					return fmt.Errorf("list %s: %w", prefix, err)
				}
				f, ok := parseLogKey(a)
				if !ok || f.version < from {
					continue
				}
				page = append(page, f)
				if !f.checkpoint && f.version%100 == 99 {
					full = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if !full {
			return out, nil
		}
	}
}

// readAll reads a whole object under pol (a transient failure: read again).
func readAll(ctx context.Context, st store.Store, pol retry.Policy, key string) (data []byte, err error) {
	err = pol.Idempotent(ctx, func() (err error) {
		data, _, err = store.ReadAll(ctx, st, key)
		return err
	})
	return data, err
}

// readCommit reads and decodes one log entry.
func readCommit(ctx context.Context, st store.Store, pol retry.Policy, v int64) ([]Action, error) {
	data, err := readAll(ctx, st, pol, CommitKey(v))
	if err != nil {
		return nil, fmt.Errorf("read Delta log version %d: %w", v, err)
	}
	acts, err := DecodeCommit(data)
	if err != nil {
		return nil, fmt.Errorf("log version %d: %w", v, err)
	}
	return acts, nil
}

// Load replays the table's Delta log: from the checkpoint that
// _last_checkpoint names (a missing or unreadable checkpoint: from the
// newest version 0 on), then every entry after it. A table without a log
// is a State of Version -1. Each read is retried on a transient failure
// (retry.Request's rule).
func Load(ctx context.Context, st store.Store) (*State, error) {
	return load(ctx, st, retry.Request(0))
}

func load(ctx context.Context, st store.Store, pol retry.Policy) (*State, error) {
	s := newState()
	v, usable, err := readLastCheckpoint(ctx, st, pol)
	if err != nil {
		return nil, err
	}
	if usable && v >= 0 {
		cp, err := readAll(ctx, st, pol, CheckpointKey(v))
		if err == nil {
			if cs, derr := decodeCheckpoint(cp, v); derr == nil {
				cs.Checkpoint = v
				s = cs
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("read the checkpoint of version %d: %w", v, err)
		}
	}
	// An unreadable _last_checkpoint or checkpoint (another writer's kind,
	// or damage) costs a replay from version 0.
	if err := s.catchUp(ctx, st, pol); err != nil {
		return nil, err
	}
	return s, nil
}

// readLastCheckpoint reads _last_checkpoint: the version of the single-part
// checkpoint it names, or -1 when there is none (usable both); usable is
// false when it does not decode or names a multi-part checkpoint (another
// writer's kind, or damage). An error is the read's.
func readLastCheckpoint(ctx context.Context, st store.Store, pol retry.Policy) (v int64, usable bool, err error) {
	data, err := readAll(ctx, st, pol, lastCheckpointKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return -1, true, nil
	case err != nil:
		return 0, false, fmt.Errorf("read %s: %w", lastCheckpointKey, err)
	}
	lc, err := decodeLastCheckpoint(data)
	if err != nil || lc.Parts != 0 {
		return 0, false, nil
	}
	return lc.Version, true, nil
}

// catchUp applies the entries after s.Version, read at once.
func (s *State) catchUp(ctx context.Context, st store.Store, pol retry.Policy) error {
	acts, err := readEntries(ctx, st, pol, s.Version+1)
	if err != nil {
		return err
	}
	for _, a := range acts {
		s.apply(s.Version+1, a)
	}
	if s.Version >= 0 && (s.Protocol == nil || s.Metadata == nil) {
		return fmt.Errorf("%w: version %d has no protocol or metaData before it", ErrCorrupt, s.Version)
	}
	return nil
}

// readEntries lists and reads the log entries of versions from `from`
// on, at once: acts[i] is version from+i's. A gap is ErrCorrupt, as is a
// log that starts after version 0 when from is 0.
func readEntries(ctx context.Context, st store.Store, pol retry.Policy, from int64) ([][]Action, error) {
	files, err := listFrom(ctx, st, pol, from)
	if err != nil {
		return nil, err
	}
	var versions []int64
	for _, f := range files {
		if f.checkpoint {
			continue
		}
		if want := from + int64(len(versions)); f.version != want {
			if from == 0 && len(versions) == 0 {
				return nil, fmt.Errorf("%w: the log starts at version %d, without a checkpoint to start from", ErrCorrupt, f.version)
			}
			return nil, fmt.Errorf("%w: version %d is missing (the log has %d)", ErrCorrupt, want, f.version)
		}
		versions = append(versions, f.version)
	}
	acts := make([][]Action, len(versions))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit(ctx, 16))
	for i, v := range versions {
		g.Go(func() error {
			a, err := readCommit(gctx, st, pol, v)
			mu.Lock()
			acts[i] = a
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return acts, nil
}
