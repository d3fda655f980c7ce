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
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pswap/pswap/internal/testing/nodeenv"
)

// ErrHyparquetUnavailable is returned when node or the hyparquet npm packages are missing.
var ErrHyparquetUnavailable = errors.New("duckcheck: hyparquet cannot run")

// hyparquet is hyparquet's npm packages, installed in this folder.
var hyparquet = nodeenv.NewReader("hyparquet", ErrHyparquetUnavailable, "hyparquet", "hyparquet-compressors")

// HyparquetAvailable reports whether [ReadParquet] can run; the error says what is missing.
func HyparquetAvailable() error { return hyparquet.Available() }

// SkipIfHyparquetUnavailable skips the test or benchmark when node is
// missing, and fails it when hyparquet is not installed.
func SkipIfHyparquetUnavailable(t TB) {
	t.Helper()
	hyparquet.Require(t)
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
	files, errs, err := ReadParquetFiles(ctx, path)
	if err != nil {
		return ParquetFile{}, err
	}
	return files[0], errs[0]
}

// ReadParquetFiles reads several files as [ReadParquet] does, in one node
// process (starting node costs more than reading a small file). errs[i] is
// the error of file i; err is an error of the whole run.
func ReadParquetFiles(ctx context.Context, paths ...string) (files []ParquetFile, errs []error, err error) {
	if err := HyparquetAvailable(); err != nil {
		return nil, nil, err
	}
	args := []string{"hyparquet.mjs"}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, abs)
	}
	cmd := hyparquet.Command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("duckcheck: hyparquet: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var out []struct {
		Error   string           `json:"error"`
		Columns []string         `json:"columns"`
		NumRows string           `json:"num_rows"`
		Rows    []map[string]any `json:"rows"`
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("duckcheck: decode hyparquet output: %w", err)
	}
	if len(out) != len(paths) {
		return nil, nil, fmt.Errorf("duckcheck: hyparquet read %d files, want %d", len(out), len(paths))
	}
	files, errs = make([]ParquetFile, len(out)), make([]error, len(out))
	for i, o := range out {
		if o.Error != "" {
			errs[i] = fmt.Errorf("duckcheck: hyparquet %s: %s", filepath.Base(paths[i]), o.Error)
			continue
		}
		n, err := strconv.ParseInt(o.NumRows, 10, 64)
		if err != nil {
			errs[i] = fmt.Errorf("duckcheck: hyparquet row count %q: %w", o.NumRows, err)
			continue
		}
		files[i] = ParquetFile{Columns: o.Columns, NumRows: n, Rows: o.Rows}
	}
	return files, errs, nil
}
