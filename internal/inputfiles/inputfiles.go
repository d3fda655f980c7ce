// Package inputfiles knows the local and object-store inputs a commit
// stages: their formats by name, the data files of a folder, and the names
// engines write beside their data. The facade's Writer.AddPath and the CLI
// expand inputs with it, so that both see a folder the same way.
package inputfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pswap/pswap/internal/errkind"
)

// The formats a file name can tell.
const (
	Parquet = "parquet"
	CSV     = "csv"
	JSONL   = "jsonl"
)

// FormatOf guesses a format from a file name (a .gz suffix is looked
// through): Parquet, CSV or JSONL, or ErrBadInput naming the file.
func FormatOf(name string) (string, error) {
	n := strings.ToLower(strings.TrimSuffix(name, ".gz"))
	switch {
	case strings.HasSuffix(n, ".parquet"), strings.HasSuffix(n, ".pq"):
		return Parquet, nil
	case strings.HasSuffix(n, ".csv"):
		return CSV, nil
	case strings.HasSuffix(n, ".jsonl"), strings.HasSuffix(n, ".ndjson"), strings.HasSuffix(n, ".json"):
		return JSONL, nil
	}
	return "", fmt.Errorf("%w: %s: unknown format (want .parquet, .csv or .jsonl)", errkind.ErrBadInput, name)
}

// DataFiles lists the data files of a folder, sorted by path: regular files
// whose format FormatOf knows (every regular file when any is true: the
// caller gave a format), skipping hidden and _-prefixed entries. A folder
// without any is ErrBadInput.
func DataFiles(dir string, any bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if _, ferr := FormatOf(name); ferr == nil || any {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errkind.ErrBadInput, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: folder %s has no .parquet, .csv or .jsonl files", errkind.ErrBadInput, dir)
	}
	slices.Sort(files)
	return files, nil
}

// IsEngineMarker reports whether a path (relative to a generation's data
// prefix) is bookkeeping of an engine rather than data: any segment hidden
// or _-prefixed (_SUCCESS, _committed_*, _started_*, _temporary/, .crc
// files written as .name.crc), or a name ending in .crc. Hive-style readers
// skip the same names.
func IsEngineMarker(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg[0] == '_' || seg[0] == '.' {
			return true
		}
	}
	return strings.HasSuffix(rel, ".crc")
}
