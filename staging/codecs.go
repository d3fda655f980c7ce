package staging

import "github.com/pswap/pswap/internal/pqscan"

// RegisterCodecs adds to arrow-go's process-wide codec registry what it
// lacks for reading the Parquet files other writers produce (see the
// package documentation, "Codecs and encodings"):
//   - LZ4 (the deprecated codec id 5), in each of its three framings:
//     Hadoop's (parquet-mr, Spark, Hive), the LZ4 frame format, and a bare
//     LZ4 block (older arrow-cpp); written with Hadoop's framing.
//   - An empty compressed input decodes to an empty output, whatever the
//     codec: a DataPage v2 whose values are all null holds no compressed
//     bytes (only its levels), and snappy, gzip or zstd would call zero
//     bytes corrupt.
//
// Importing the package changes nothing: the package calls RegisterCodecs
// itself before it writes or reads a file (New). Call it to read such
// files (AddParquetFile copies them as they are) with arrow-go directly;
// where other goroutines may be using arrow-go's codecs already, call it
// first (at start-up), as arrow-go's registry has no lock. Calling it
// again does nothing.
func RegisterCodecs() { pqscan.RegisterCodecs() }
