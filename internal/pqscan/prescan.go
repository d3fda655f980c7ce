package pqscan

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/pswap/pswap/internal/checksum"
)

// A Prescan is the full check of one Parquet file (footer, page CRCs, every
// page decoded and hashed into the content checksum: what ScanPages
// computes, with colsum128 only) started before the file is added, so that
// a command's own start (opening the table, reading the partition's
// pointer) overlaps the decoding instead of preceding it. The stager takes
// it by the file's path with [TakePrescan] and uses its result in place of
// its own scan when the file it opened is the one scanned (same file, size
// and modification time); the upload then reads the file as before, and
// the size and modification time are compared again once it is read, as
// for the scan beside the upload.
type Prescan struct {
	path   string
	fi     os.FileInfo
	cancel context.CancelFunc
	done   chan struct{}
	// more is closed by Wait: the scan then decodes on every core; until
	// then on one, beside the command's start.
	more     chan struct{}
	moreOnce sync.Once
	rows     int64
	sum      checksum.Sums
	err      error
}

var (
	prescansMu sync.Mutex
	prescans   = map[string]*Prescan{}
	// prescansTaken counts the prescans TakePrescan handed out (tests).
	prescansTaken atomic.Int64
)

// PrescansTaken returns how many prescans TakePrescan has handed to a
// stager in this process (tests check which path a file took).
func PrescansTaken() int64 { return prescansTaken.Load() }

// StartPrescan starts the full check of the Parquet file at path in the
// background and registers it for [TakePrescan]. It does nothing (and
// returns nil) when the file cannot be opened or stated: the stager then
// reports the error when it adds the file. ctx bounds the scan; Stop ends
// it and forgets it. A second StartPrescan of the same path replaces the
// first.
func StartPrescan(ctx context.Context, path string) *Prescan {
	key, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Prescan{path: key, fi: fi, cancel: cancel, done: make(chan struct{}), more: make(chan struct{})}
	prescansMu.Lock()
	if old := prescans[key]; old != nil {
		old.cancel()
	}
	prescans[key] = p
	prescansMu.Unlock()
	go func() {
		defer close(p.done)
		defer f.Close()
		p.rows, p.sum, p.err = scanFile(ctx, f, fi.Size(), p.more)
	}()
	return p
}

// scanFile opens f and scans it as the stager does (CheckFooter, then
// ScanPages without the legacy checksum), on one core until more is
// closed.
func scanFile(ctx context.Context, f *os.File, size int64, more <-chan struct{}) (int64, checksum.Sums, error) {
	pr, err := Open(f, size)
	if err != nil {
		return 0, checksum.Sums{}, err
	}
	defer pr.Close()
	_, canon, err := CheckFooter(pr, size)
	if err != nil {
		return 0, checksum.Sums{}, err
	}
	return scanPages(ctx, f, size, pr, canon, false, more)
}

// Stop cancels the scan if it still runs and forgets it. A nil Prescan
// is a no-op.
func (p *Prescan) Stop() {
	if p == nil {
		return
	}
	p.cancel()
	prescansMu.Lock()
	if prescans[p.path] == p {
		delete(prescans, p.path)
	}
	prescansMu.Unlock()
}

// TakePrescan returns the prescan of the file at path, removing it from
// the registry, when one was started and the file fi (stated by the caller
// on its own open file) is the same file, of the same size and
// modification time; else nil, after stopping a prescan of another file
// at that path. legacy (the stager computes rowsum128 as well) also
// declines: the prescan computed colsum128 only.
func TakePrescan(path string, fi os.FileInfo, legacy bool) *Prescan {
	key, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	prescansMu.Lock()
	p := prescans[key]
	delete(prescans, key)
	prescansMu.Unlock()
	if p == nil {
		return nil
	}
	if legacy || !os.SameFile(p.fi, fi) || p.fi.Size() != fi.Size() || !p.fi.ModTime().Equal(fi.ModTime()) {
		p.cancel()
		return nil
	}
	prescansTaken.Add(1)
	return p
}

// Wait returns the prescan's result: the rows and content checksum
// ScanPages computed, or its error, the scan on every core from now on
// (it ran on one before). It returns ctx's error if ctx ends
// first (the scan is then cancelled).
func (p *Prescan) Wait(ctx context.Context) (rows int64, sum checksum.Sums, err error) {
	p.moreOnce.Do(func() { close(p.more) })
	select {
	case <-p.done:
		return p.rows, p.sum, p.err
	case <-ctx.Done():
		p.cancel()
		return 0, checksum.Sums{}, ctx.Err()
	}
}
