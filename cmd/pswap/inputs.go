package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/pswap/pswap"
)

// stdinArg names standard input among the input paths.
const stdinArg = "-"

// input is one file (or stdin) to stage.
type input struct {
	path   string // stdinArg for standard input
	size   int64  // bytes, or -1 for stdin
	format pswap.Format
	rows   int64 // a Parquet file's footer's row count; -1: unknown (pswap.InputFile.Rows)
}

// parseInputFormat parses --input-format.
func parseInputFormat(s string) (pswap.Format, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return pswap.FormatAuto, nil
	case "parquet", "pq":
		return pswap.FormatParquet, nil
	case "csv":
		return pswap.FormatCSV, nil
	case "jsonl", "ndjson", "json":
		return pswap.FormatJSONL, nil
	case "arrow", "arrows", "ipc":
		return pswap.FormatArrow, nil
	}
	return "", usagef("unknown --input-format %q (want csv, jsonl, parquet or arrow)", s)
}

// expandInputs resolves the input arguments to files, before anything is
// uploaded: a folder contributes its data files (sorted by path; hidden and
// _-prefixed entries skipped), "-" is standard input. Every problem is a
// bad-input error, so nothing is staged for an input that cannot work.
func expandInputs(args []string, format pswap.Format) ([]input, error) {
	if len(args) == 0 {
		return nil, usagef("no input: give files, folders, or - for stdin")
	}
	var out []input
	stdin := false
	for _, arg := range args {
		if arg == stdinArg {
			if stdin {
				return nil, usagef("- (stdin) given twice")
			}
			if format == pswap.FormatAuto {
				return nil, usagef("reading stdin needs --input-format csv, jsonl, parquet or arrow")
			}
			stdin = true
			out = append(out, input{path: stdinArg, size: -1, format: format, rows: -1})
			continue
		}
		files, err := pswap.InputFiles(arg, format)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f.Format == pswap.FormatParquet {
				if err := checkParquetMagic(f.Path, f.Size); err != nil {
					return nil, err
				}
			}
			out = append(out, input{path: f.Path, size: f.Size, format: f.Format, rows: f.Rows})
		}
	}
	return out, nil
}

// adder is what stages inputs: *pswap.Writer.
type adder interface {
	AddPath(ctx context.Context, path string, format pswap.Format) error
	AddReader(ctx context.Context, r io.Reader, name string, format pswap.Format) error
	Rows() int64
}

// addInputs stages every input, advancing the progress bar (which may be
// nil) by the bytes read. It reports whether any input held a row.
func addInputs(ctx context.Context, w adder, inputs []input, stdin io.Reader, bar *progress) (hasRows bool, err error) {
	for _, in := range inputs {
		if bar != nil {
			bar.Describe(bar.phase(in))
		}
		var rows bool
		if in.format == pswap.FormatParquet && in.path != stdinArg {
			rows = in.rows != 0 // unknown counts as rows: staging says what is wrong
			err = w.AddPath(ctx, in.path, in.format)
			if bar != nil && err == nil {
				_ = bar.Add64(in.size)
			}
		} else {
			rows, err = addStream(ctx, w, in, stdin, bar)
		}
		if err != nil {
			return false, err
		}
		hasRows = hasRows || rows
	}
	if bar != nil {
		_ = bar.Finish()
	}
	return hasRows, nil
}

// addStream stages a CSV or JSON Lines file, or standard input, through a
// reader that moves the progress bar and notices whether any row went by.
func addStream(ctx context.Context, w adder, in input, stdin io.Reader, bar *progress) (bool, error) {
	r, name := io.Reader(newCtxReader(ctx, stdin)), "stdin"
	if in.path != stdinArg {
		f, err := os.Open(in.path)
		if err != nil {
			return false, fmt.Errorf("%w: %v", pswap.ErrBadInput, err)
		}
		defer f.Close()
		r, name = f, filepath.Base(in.path)
	}
	if bar != nil {
		r = io.TeeReader(r, bar)
	}
	sn := &rowSniffer{r: r, skipLines: 0}
	if in.format == pswap.FormatCSV {
		sn.skipLines = 1 // the header
	}
	if in.format == pswap.FormatParquet {
		sn.hasRows = true // stdin Parquet: the stager reads the footer
	}
	if in.format == pswap.FormatArrow {
		// Binary batches: whether any row went by is what the writer counted.
		before := w.Rows()
		err := w.AddReader(ctx, r, name, in.format)
		return w.Rows() > before, err
	}
	err := w.AddReader(ctx, sn, name, in.format)
	return sn.hasRows, err
}

// rowSniffer passes a text input through and notices whether it holds
// anything but whitespace after its first skipLines lines: whether a CSV
// file has a row below its header, or a JSON Lines file any line at all.
type rowSniffer struct {
	r         io.Reader
	skipLines int
	hasRows   bool
}

func (s *rowSniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if !s.hasRows {
		for _, c := range p[:n] {
			switch {
			case s.skipLines > 0:
				if c == '\n' {
					s.skipLines--
				}
			case c != ' ' && c != '\t' && c != '\r' && c != '\n':
				s.hasRows = true
			}
			if s.hasRows {
				break
			}
		}
	}
	return n, err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress is the progress bar of staging inputs, on stderr. Each input
// names its phase: "converting a.csv" (CSV and JSON Lines become Parquet as
// they are read and uploaded), "uploading b.parquet"; verb, when set,
// names one phase for all inputs (commit --dry-run reads without
// uploading).
type progress struct {
	*progressbar.ProgressBar
	verb string
}

// phase names what happens to one input.
func (p *progress) phase(in input) string {
	name := filepath.Base(in.path)
	if in.path == stdinArg {
		name = "stdin"
	}
	switch {
	case p.verb != "":
		return p.verb + " " + name
	case in.format == pswap.FormatParquet && in.path != stdinArg:
		return "uploading " + name
	}
	return "converting " + name
}

// newProgress returns a progress bar on stderr for staging inputs, or nil
// when stderr is not a terminal or with --json or --quiet. verb "" names
// each input's phase (see progress).
func (a *app) newProgress(inputs []input, verb string) *progress {
	if a.json || a.quiet || !isTerminal(a.stderr) {
		return nil
	}
	return newProgressTo(a.stderr, inputs, verb)
}

func newProgressTo(w io.Writer, inputs []input, verb string) *progress {
	var total int64
	for _, in := range inputs {
		if in.size < 0 {
			total = -1 // stdin: size unknown, show a spinner
			break
		}
		total += in.size
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(verb),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	// Start the clock now: a bar started by its first update computes its
	// first speed over a few microseconds (absurd gigabytes per second).
	bar.StartWithoutRender()
	return &progress{ProgressBar: bar, verb: verb}
}

// ctxReader makes a blocking reader (standard input from an idle pipe)
// give up when ctx ends, so that an interrupt or --timeout stops a command
// that waits for input. Each read runs in a goroutine on a buffer of its
// own; one left blocked at the end dies with the process.
type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	done    chan readResult
	buf     []byte
	rest    []byte
	pending bool
}

type readResult struct {
	n   int
	err error
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	return &ctxReader{ctx: ctx, r: r, done: make(chan readResult, 1)}
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.rest) > 0 { // what a read into a larger buffer left over
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		return n, nil
	}
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	if !c.pending {
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf := c.buf[:len(p)]
		c.pending = true
		go func() {
			n, err := c.r.Read(buf)
			c.done <- readResult{n, err}
		}()
	}
	select {
	case <-c.ctx.Done():
		return 0, context.Cause(c.ctx)
	case res := <-c.done:
		c.pending = false
		n := copy(p, c.buf[:res.n])
		c.rest = c.buf[n:res.n]
		if len(c.rest) > 0 {
			return n, nil // the error, if any, comes with the last bytes
		}
		return n, res.err
	}
}

// checkParquetMagic refuses a file that cannot be Parquet at all (a CSV
// export or a text file named .parquet) in the user's words, before
// anything is uploaded: a Parquet file starts and ends with "PAR1".
func checkParquetMagic(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", pswap.ErrBadInput, err)
	}
	defer f.Close()
	head, tail := make([]byte, 4), make([]byte, 4)
	ok := size >= 12
	if ok {
		_, err1 := f.ReadAt(head, 0)
		_, err2 := f.ReadAt(tail, size-4)
		ok = err1 == nil && err2 == nil && string(head) == "PAR1" && string(tail) == "PAR1"
	}
	if ok {
		return nil
	}
	what := "it does not start and end with the Parquet marker PAR1"
	start := make([]byte, min(size, 512))
	n, _ := f.ReadAt(start, 0)
	switch {
	case size < 12:
		what = fmt.Sprintf("it has only %d bytes", size)
	case string(head) == "PAR1":
		what = "it starts like Parquet but does not end with PAR1: it is truncated, or was still being written"
	case looksLikeText(start[:n]):
		what = "it looks like text (a CSV or JSON Lines file? name it .csv or .jsonl, or pass --input-format)"
	}
	return fmt.Errorf("%w: %s is not a Parquet file: %s", pswap.ErrBadInput, path, what)
}

func looksLikeText(b []byte) bool {
	for _, c := range b {
		if c < 0x09 || (c > 0x0d && c < 0x20) || c == 0x7f {
			return false
		}
	}
	return true
}
