package duckcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrHyparquetUnavailable is returned when node or the hyparquet npm packages are missing.
var ErrHyparquetUnavailable = errors.New("duckcheck: node or hyparquet not installed (run `npm ci` in internal/duckcheck)")

var (
	hypOnce sync.Once
	hypErr  error
)

// HyparquetAvailable reports whether [ReadParquet] can run; the error says what is missing.
func HyparquetAvailable() error {
	hypOnce.Do(func() {
		once.Do(locate)
		if nodeBin == "" {
			hypErr = fmt.Errorf("%w: %v", ErrHyparquetUnavailable, availErr)
			return
		}
		for _, pkg := range []string{"hyparquet", "hyparquet-compressors"} {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
				hypErr = fmt.Errorf("%w: %v", ErrHyparquetUnavailable, err)
				return
			}
		}
	})
	return hypErr
}

// SkipIfHyparquetUnavailable skips the test or benchmark when hyparquet cannot run.
func SkipIfHyparquetUnavailable(t TB) {
	t.Helper()
	if err := HyparquetAvailable(); err != nil {
		t.Skipf("skipping hyparquet check: %v", err)
	}
}

// ParquetFile is what hyparquet read from one Parquet file.
//
// Values are JSON values in these forms, the same whichever writer,
// encoding or codec made the file:
//   - INT64 (and UINT64) as decimal strings (exact), INT32, FLOAT, DOUBLE,
//     FLOAT16 and DECIMAL as numbers, NaN and infinities as the strings
//     "NaN", "Infinity", "-Infinity";
//   - strings (STRING/UTF8/ENUM/JSON annotated BYTE_ARRAY) as strings,
//     other BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY as {"$bytes": base64};
//   - timestamps (any unit, INT96 too) as "2006-01-02T15:04:05.000000000Z",
//     dates as "2006-01-02";
//   - lists as arrays (in order), structs as objects, maps as objects keyed
//     by the map key's text, null at any level as nil.
type ParquetFile struct {
	// Columns are the top-level column names, in schema order.
	Columns []string
	// NumRows is the footer's row count.
	NumRows int64
	// Rows holds every row, in file order, numbers as json.Number.
	Rows []map[string]any
}

// Checksum returns an order-independent checksum of the rows: the sum
// (modulo 2^64, per 64-bit lane) of the SHA-256 of each row's canonical JSON
// (object keys sorted), as hex, followed by ":" and the row count. Two files
// hold the same multiset of rows, whatever their row order, encodings, codecs
// or writers, exactly when their checksums are equal (up to hash collisions).
// Map entry order and struct field order do not count; list order does.
func (f ParquetFile) Checksum() string {
	var sum [4]uint64
	for _, row := range f.Rows {
		b, err := json.Marshal(row) // encoding/json sorts map keys
		if err != nil {
			// Values came from json.Unmarshal, so they marshal back.
			panic(err)
		}
		h := sha256.Sum256(b)
		for i := range sum {
			sum[i] += binary.LittleEndian.Uint64(h[8*i:])
		}
	}
	var out [32]byte
	for i := range sum {
		binary.LittleEndian.PutUint64(out[8*i:], sum[i])
	}
	return hex.EncodeToString(out[:]) + ":" + strconv.Itoa(len(f.Rows))
}

// ReadParquet reads the Parquet file at path with hyparquet (and the codecs
// of hyparquet-compressors: SNAPPY, GZIP, BROTLI, ZSTD, LZ4, LZ4_RAW), in a
// node process. The file must fit in memory; it is meant for test files.
func ReadParquet(ctx context.Context, path string) (ParquetFile, error) {
	if err := HyparquetAvailable(); err != nil {
		return ParquetFile{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ParquetFile{}, err
	}
	cmd := exec.CommandContext(ctx, nodeBin, filepath.Join(dir, "hyparquet.mjs"), abs)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return ParquetFile{}, fmt.Errorf("duckcheck: hyparquet %s: %w: %s", filepath.Base(path), err, strings.TrimSpace(stderr.String()))
	}
	var out struct {
		Columns []string         `json:"columns"`
		NumRows string           `json:"num_rows"`
		Rows    []map[string]any `json:"rows"`
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return ParquetFile{}, fmt.Errorf("duckcheck: decode hyparquet output: %w", err)
	}
	n, err := strconv.ParseInt(out.NumRows, 10, 64)
	if err != nil {
		return ParquetFile{}, fmt.Errorf("duckcheck: hyparquet row count %q: %w", out.NumRows, err)
	}
	return ParquetFile{Columns: out.Columns, NumRows: n, Rows: out.Rows}, nil
}
