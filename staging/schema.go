package staging

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/parquet/file"
	pq "github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/pqscan"
)

// canonOfParquetGo derives the canonical schema of a parquet-go schema by
// writing an empty file with it and reading that file's footer with
// Arrow's reader: the same path a file that parquet-go writes takes when
// it is read back.
func canonOfParquetGo(t reflect.Type, ps *pq.Schema, opts []pq.WriterOption) (*pqscan.Schema, error) {
	var buf bytes.Buffer
	w := pq.NewWriter(&buf, append([]pq.WriterOption{ps}, opts...)...)
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("staging: schema of %s: %w", t, err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("staging: schema of %s: %w", t, err)
	}
	defer r.Close()
	return pqscan.SchemaOf(r.MetaData().Schema)
}
