package staging

import (
	_ "github.com/apache/arrow/go/v17/arrow/array"
	_ "github.com/apache/arrow/go/v17/parquet/file"
	_ "github.com/apache/arrow/go/v17/parquet/pqarrow"
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/zeebo/xxh3"
)
