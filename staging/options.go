package staging

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/s2"
	pq "github.com/parquet-go/parquet-go"
	pqcompress "github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/store"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrSchemaMismatch: an input's schema differs from the generation's.
	// The message shows both schemas.
	ErrSchemaMismatch = pqscan.ErrSchemaMismatch
	// ErrBadInput: a CSV or JSON Lines input has a malformed or ill-typed
	// row; the message names the input and the line.
	ErrBadInput = errkind.ErrBadInput
	// ErrCorrupt: a Parquet file given to AddParquetFile is not a valid
	// Parquet file (bad footer, truncated, undecodable pages).
	ErrCorrupt = pqscan.ErrCorrupt
	// ErrPageChecksum: a page of a Parquet file carries a CRC that does
	// not match its bytes. It matches ErrCorrupt too.
	ErrPageChecksum = pqscan.ErrPageChecksum
	// ErrUnsupported: a column type that staging cannot hash canonically
	// (intervals, durations, unions; nested fields of Go structs given to
	// Write).
	ErrUnsupported = checksum.ErrUnsupported
	// ErrClosed: the Stager was finished, aborted, or failed earlier.
	ErrClosed = errors.New("stager is closed")
)

// Compression selects the codec of the Parquet pages. The zero value is Snappy.
type Compression int

const (
	Snappy       Compression = iota // the default
	Zstd                            // smaller files, slower to write
	Gzip                            // widely readable, slow
	Uncompressed                    // no compression
)

// String returns the codec's name.
func (c Compression) String() string {
	switch c {
	case Snappy:
		return "snappy"
	case Zstd:
		return "zstd"
	case Gzip:
		return "gzip"
	case Uncompressed:
		return "uncompressed"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

func (c Compression) arrow() (compress.Compression, error) {
	switch c {
	case Snappy:
		return compress.Codecs.Snappy, nil
	case Zstd:
		return compress.Codecs.Zstd, nil
	case Gzip:
		return compress.Codecs.Gzip, nil
	case Uncompressed:
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("staging: unknown %v", c)
}

func (c Compression) parquetGo() (pqcompress.Codec, error) {
	switch c {
	case Snappy:
		return fastSnappy{&snappy.Codec{}}, nil
	case Zstd:
		return &zstd.Codec{}, nil
	case Gzip:
		return &gzip.Codec{}, nil
	case Uncompressed:
		return &uncompressed.Codec{}, nil
	}
	return nil, fmt.Errorf("staging: unknown %v", c)
}

// fastSnappy is Snappy with s2's fastest Snappy-compatible block encoder;
// parquet-go's codec uses the slower "better" one. Any Snappy decoder reads
// its output, and it is deterministic.
type fastSnappy struct{ *snappy.Codec }

func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}

// Defaults applied to zero fields of Options.
const (
	DefaultTargetFileSize = 128 << 20
	DefaultRowGroupRows   = 122880 // DuckDB's: as many row groups to skip and to scan in parallel
	DefaultRowGroupBytes  = 64 << 20
)

// Options tune a Stager. The zero value works.
type Options struct {
	// TargetFileSize: a file is closed and a new one started once it
	// reaches about this many bytes (default 128 MiB). The check happens
	// between batches of rows (for Go structs, between row groups), so
	// files can be somewhat larger.
	TargetFileSize int64
	// RowGroupRows caps the rows of one row group (default 122,880, as
	// DuckDB writes them: each row group has its own statistics, which
	// let readers skip it, and is a unit that readers scan in parallel).
	RowGroupRows int64
	// RowGroupBytes caps the encoded bytes a row group buffers in memory
	// before it is flushed to the store (default 64 MiB), and, for Go
	// structs, the size of the rows a row group copies before it is
	// encoded (a row group then has fewer than RowGroupRows rows).
	// Together with Encoders and Writer's part buffers it bounds the
	// memory a Stager uses.
	RowGroupBytes int64
	// Encoders is the number of row groups of Go structs encoded at the
	// same time. With 1 Write encodes them itself while the row hash runs
	// on a second core; with more (and GOMAXPROCS > 1) each row group is
	// encoded on its own goroutine from a copy of its rows, which holds up
	// to Encoders+2 row groups in memory, each up to twice RowGroupBytes.
	// The default (0) leaves a core to the row hash and the upload:
	// GOMAXPROCS-1 encoders, at most 4, so 1 on 2 cores, where 2 encoders
	// pay only on an idle machine (BENCHMARKS.md, section 3). Set 1 for
	// the least memory. The bytes written do not depend on it.
	Encoders int
	// Compression of the data pages (default Snappy).
	Compression Compression
	// Writer tunes the streaming uploads (part size, concurrency). Data
	// files are always written create-if-absent (IfNoneMatch).
	Writer store.WriterOptions
	// Schema, when set, fixes the generation's schema up front: CSV and
	// JSON Lines inputs are read with it instead of inferring one, and
	// every input must match it.
	Schema *arrow.Schema
	// TextSchema, when set, is the schema CSV and JSON Lines inputs are
	// read with when neither their options nor an earlier input give one
	// (a table's schema). Unlike Schema it does not fix the generation's
	// schema: Conform decides that.
	TextSchema *arrow.Schema
	// TextTypes, when set, types the named columns of CSV and JSON Lines
	// inputs whose schema is inferred (a schema declared up front): the
	// inferred type of such a column is replaced by the given one, and its
	// values must parse as that type; other columns are inferred.
	TextTypes map[string]arrow.DataType
	// Conform, when set, decides the schema each input is stored in (a
	// table schema's checks and safe promotions): data of another schema
	// is converted through Arrow (see ConformFunc).
	Conform ConformFunc
	// LegacyChecksum also computes the generation's content checksum in
	// rowsum128, the algorithm of generations staged before colsum128, and
	// returns it in Content.Equivalent (it is not recorded), so that a
	// commit of the same rows onto a generation that records a rowsum128
	// checksum is a no-op. pswap sets it only when the partition's current
	// generation records one: it costs a second hash of every row.
	LegacyChecksum bool
	// Check selects how AddParquetFile checks an existing file before it
	// is committed (default CheckFull).
	Check Check
}

// Check is how much of an existing Parquet file AddParquetFile reads
// before it commits the file's upload.
type Check int

const (
	// CheckFull, the default, checks the footer before the upload and,
	// while the bytes upload, every page CRC present, and decompresses and
	// decodes every page and hashes every row: a corrupt page is refused,
	// and the content checksum is the rows' (colsum128), so identical rows
	// in a differently encoded file are a no-op.
	CheckFull Check = iota
	// CheckFooter checks the footer before the upload (schema, row groups,
	// column chunks inside the file, row counts) and the page CRCs present
	// while the bytes upload, but decodes nothing: a damaged page without
	// a CRC is stored as it is (readers fail on it later), and the rows
	// are not hashed. The generation's content checksum is then
	// files-sha256, over the files' bytes: the same bytes committed again
	// are a no-op, other bytes of the same rows (another writer, other row
	// groups) are a new generation. It costs about a plain upload.
	CheckFooter
)

// String returns the check's name, as pswap's --check flag spells it.
func (c Check) String() string {
	switch c {
	case CheckFull:
		return "full"
	case CheckFooter:
		return "footer"
	}
	return fmt.Sprintf("Check(%d)", int(c))
}

// ParseCheck parses a Check's name ("full" or "footer").
func ParseCheck(s string) (Check, error) {
	switch s {
	case "", "full":
		return CheckFull, nil
	case "footer":
		return CheckFooter, nil
	}
	return 0, fmt.Errorf("%w: unknown check %q (want full or footer)", ErrBadInput, s)
}

func (o Options) withDefaults() Options {
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = DefaultTargetFileSize
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.RowGroupBytes <= 0 {
		o.RowGroupBytes = DefaultRowGroupBytes
	}
	o.Writer.IfNoneMatch = true
	o.Writer.IfMatch = ""
	if o.Writer.ContentType == "" {
		o.Writer.ContentType = "application/vnd.apache.parquet"
	}
	return o
}

// dictionaryPageLimit bounds a column's dictionary in the Arrow path.
const dictionaryPageLimit = 256 << 10

// createdBy is the fixed created_by string of every file pswap writes, so
// that files carry no library build or version that could change the bytes.
const createdBy = "pswap"

// arrowProps are the Parquet writer properties of the Arrow path, for
// records of any schema (the canonical schema does not depend on the
// per-column encodings that arrowPropsFor adds).
func (o Options) arrowProps() (*parquet.WriterProperties, error) { return o.arrowPropsFor(nil) }

// arrowPropsFor are the Parquet writer properties of the Arrow path for
// records of schema sc, with the per-column encodings of the defaults (see
// the package documentation): 64-bit integers and timestamps
// DELTA_BINARY_PACKED, floating point PLAIN, everything else dictionary
// encoded, falling back to PLAIN for a dictionary that outgrows
// dictionaryPageLimit.
func (o Options) arrowPropsFor(sc *arrow.Schema) (*parquet.WriterProperties, error) {
	codec, err := o.Compression.arrow()
	if err != nil {
		return nil, err
	}
	opts := []parquet.WriterProperty{
		parquet.WithCreatedBy(createdBy),
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(o.RowGroupRows),
		parquet.WithVersion(parquet.V2_6),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		// Decimals of precision <= 18 as INT32/INT64, which every reader
		// (parquet-go among them) decodes.
		parquet.WithStoreDecimalAsInteger(true),
		// A dictionary that outgrows this falls back to plain encoding; a
		// smaller limit than Arrow's 1 MiB keeps the per-column hash
		// tables (the largest buffers of a row group) small.
		parquet.WithDictionaryPageSizeLimit(dictionaryPageLimit),
		// The page index (min/max and offsets per page), as the struct path
		// writes it: readers skip pages with it, not only row groups.
		parquet.WithPageIndexEnabled(true),
	}
	if sc != nil {
		for _, f := range sc.Fields() {
			switch f.Type.ID() {
			case arrow.INT64, arrow.UINT64, arrow.TIMESTAMP, arrow.TIME64:
				opts = append(opts, parquet.WithDictionaryFor(f.Name, false),
					parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
			case arrow.FLOAT32, arrow.FLOAT64:
				opts = append(opts, parquet.WithDictionaryFor(f.Name, false))
			}
		}
	}
	return parquet.NewWriterProperties(opts...), nil
}

// setCreatedBy sets parquet-go's created_by verbatim.
type setCreatedBy string

func (s setCreatedBy) ConfigureWriter(c *pq.WriterConfig) { c.CreatedBy = string(s) }

// parquetGoOptions are the writer options of the struct path.
func (o Options) parquetGoOptions() ([]pq.WriterOption, error) {
	codec, err := o.Compression.parquetGo()
	if err != nil {
		return nil, err
	}
	return []pq.WriterOption{
		setCreatedBy(createdBy),
		pq.Compression(codec),
		pq.MaxRowsPerRowGroup(o.RowGroupRows),
		pq.WriteBufferSize(0), // the part's own buffer sits below
		// The default encodings of columns whose struct tag names none (see
		// the package documentation). Floating point and booleans stay PLAIN.
		pq.DefaultEncodingFor(pq.ByteArray, &pq.RLEDictionary),
		pq.DefaultEncodingFor(pq.FixedLenByteArray, &pq.RLEDictionary),
		pq.DefaultEncodingFor(pq.Int32, &pq.RLEDictionary),
		pq.DefaultEncodingFor(pq.Int64, &pq.DeltaBinaryPacked),
		pq.DictionaryMaxBytes(dictionaryPageLimit),
		pq.DataPageStatistics(false),
	}, nil
}
