package deltalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/store"
)

// FileRetention is the table's delta.deletedFileRetentionDuration (how
// long a removed file stays for time travel and VACUUM), or Delta's
// default of a week.
func FileRetention(m *Metadata) time.Duration {
	return retention(m, "delta.deletedFileRetentionDuration", DefaultFileRetention)
}

// LogRetention is the table's delta.logRetentionDuration, or Delta's
// default of 30 days.
func LogRetention(m *Metadata) time.Duration {
	return retention(m, "delta.logRetentionDuration", DefaultLogRetention)
}

func retention(m *Metadata, key string, def time.Duration) time.Duration {
	if m == nil {
		return def
	}
	v, ok := m.Configuration[key]
	if !ok {
		return def
	}
	d, err := ParseInterval(v)
	if err != nil {
		return def
	}
	return d
}

// ParseInterval reads a Delta interval ("interval 7 days", "1 week",
// "interval 36 hours"): a whole number and a unit of milliseconds to weeks.
func ParseInterval(s string) (time.Duration, error) {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) != 2 {
		return 0, fmt.Errorf("%w: interval %q: want \"interval N UNIT\"", ErrInvalid, s)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("%w: interval %q: %q is not a whole number", ErrInvalid, s, f[0])
	}
	units := map[string]time.Duration{
		"millisecond": time.Millisecond, "second": time.Second, "minute": time.Minute,
		"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
	}
	u, ok := units[strings.TrimSuffix(f[1], "s")]
	if !ok {
		return 0, fmt.Errorf("%w: interval %q: unknown unit %q", ErrInvalid, s, f[1])
	}
	return time.Duration(n) * u, nil
}

// Referenced returns the store keys of the data files that a Delta reader
// may still open at now: the current version's files and every file
// removed less than the table's file retention ago (time travel and
// VACUUM keep those). Garbage collection keeps them
// (gc.Options.Protect). A table without a log references nothing.
func Referenced(ctx context.Context, st store.Store, now time.Time) ([]string, error) {
	s, err := Load(ctx, st)
	if err != nil || s.Version < 0 {
		return nil, err
	}
	after := now.Add(-FileRetention(s.Metadata)).UnixMilli()
	var out []string
	add := func(p string) {
		if k, ok := KeyOfPath(p); ok {
			out = append(out, k)
		}
	}
	for p := range s.Files {
		add(p)
	}
	for p, r := range s.Tombstones {
		if r.DeletionTimestamp > after {
			add(p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ExpireResult is what Expire deleted.
type ExpireResult struct {
	// Deleted are the log entries and checkpoints deleted.
	Deleted []string
	// KeptFrom is the oldest version the log still reads from.
	KeptFrom int64
}

// Expire deletes the log entries and checkpoints older than the table's
// log retention (delta.logRetentionDuration), by the store's times, as
// Delta's own writers do: only those before the newest checkpoint that is
// itself older than the retention, so every version within the retention
// still replays (from that checkpoint on), and the summaries of the
// checkpoints deleted (pswap's, under _delta_log/_pswap/). Nothing else
// is touched.
func Expire(ctx context.Context, st store.Store, now time.Time) (ExpireResult, error) {
	res := ExpireResult{KeptFrom: -1}
	s, err := Load(ctx, st)
	if err != nil || s.Version < 0 {
		return res, err
	}
	cutoff := now.Add(-LogRetention(s.Metadata))
	pol := retry.Request(0)
	var files, summaries []logFile
	err = pol.Idempotent(ctx, func() error {
		files, summaries = files[:0], summaries[:0]
		for a, err := range st.List(ctx, LogDir) {
			if err != nil {
				return fmt.Errorf("list %s: %w", LogDir, err)
			}
			if f, ok := parseLogKey(a); ok {
				files = append(files, f)
			} else if v, ok := parseSummaryKey(a.Key); ok {
				summaries = append(summaries, logFile{version: v, attrs: a})
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	// The newest checkpoint written before the cutoff: every version
	// after the cutoff replays from it.
	keepFrom := int64(-1)
	for _, f := range files {
		if f.checkpoint && f.attrs.ModTime.Before(cutoff) && f.version <= s.Version {
			keepFrom = max(keepFrom, f.version)
		}
	}
	res.KeptFrom = max(keepFrom, 0)
	if keepFrom <= 0 {
		return res, nil
	}
	var del []string
	// A checkpoint's summary (summary.go) goes with it.
	for _, f := range append(files, summaries...) {
		if f.version < keepFrom && f.attrs.ModTime.Before(cutoff) {
			del = append(del, f.attrs.Key)
		}
	}
	err = pol.Idempotent(ctx, func() error {
		if err := store.DeleteAll(ctx, st, del); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("delete expired Delta log entries: %w", err)
	}
	res.Deleted = del
	return res, nil
}
