package pswap

import (
	"fmt"
	"os"

	"github.com/pswap/pswap/internal/inputfiles"
	"github.com/pswap/pswap/internal/pqscan"
)

// For returns the format a file named name is staged in: f itself, or
// with FormatAuto the one its extension tells (.parquet or .pq, .csv,
// .jsonl, .ndjson or .json, each also with .gz). An extension FormatAuto
// does not know is ErrBadInput, naming the file.
func (f Format) For(name string) (Format, error) {
	if f != FormatAuto {
		return f, nil
	}
	return formatOf(name)
}

// InputFile is one local data file as Writer.AddPath stages it
// (InputFiles).
type InputFile struct {
	Path   string
	Size   int64
	Format Format
	// Rows is a Parquet file's row count, from its footer; -1 when
	// unknown: a CSV or JSON Lines file, or a footer that does not read
	// (staging then says what is wrong with it).
	Rows int64
}

// InputFiles returns the local data files that Writer.AddPath stages for
// path, in its order, so that a caller can size a progress bar or check
// the inputs before it begins a write: path itself when it is a regular
// file, else the data files of the folder (sorted by path; hidden and
// _-prefixed entries skipped; with FormatAuto the files whose extension
// Format.For knows, else every regular file). Each has its format
// (Format.For), size, and for Parquet its footer's row count (one read
// of the footer). Errors match ErrBadInput.
func InputFiles(path string, format Format) ([]InputFile, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	paths := []string{path}
	if fi.IsDir() {
		if paths, err = inputfiles.DataFiles(path, format != FormatAuto); err != nil {
			return nil, err
		}
	}
	out := make([]InputFile, 0, len(paths))
	for _, p := range paths {
		f, err := format.For(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadInput, p)
		}
		in := InputFile{Path: p, Format: f, Rows: -1}
		if fi.IsDir() {
			pfi, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
			}
			in.Size = pfi.Size()
		} else {
			in.Size = fi.Size()
		}
		if f == FormatParquet {
			in.Rows = footerRows(p, in.Size)
		}
		out = append(out, in)
	}
	return out, nil
}

// IsEngineMarker reports whether a path relative to a partition's folder
// or prefix is an engine's bookkeeping rather than data: any segment
// hidden or _-prefixed (_SUCCESS, _committed_*, _started_*, _temporary/,
// .name.crc), or a name ending in .crc. Hive-style readers skip the same
// names, and so do InputFiles (for a folder) and Partition.CommitObjects
// (for a prefix).
func IsEngineMarker(rel string) bool { return inputfiles.IsEngineMarker(rel) }

// footerRows reads a Parquet file's footer for its row count, as staging
// reads it; -1 when it cannot.
func footerRows(path string, size int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	ft, err := pqscan.ReadFooter(f, size)
	if err != nil {
		return -1
	}
	return ft.Rows
}
