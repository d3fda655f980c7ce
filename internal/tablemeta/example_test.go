package tablemeta_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/tablemeta"
)

// A table's metadata is made from its first commit's key and data schema.
func ExampleNew() {
	cols, _ := tablemeta.InferPartitionColumns("dt=2026-11-29", nil)
	t, _ := tablemeta.New(cols, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil))
	fmt.Println(t.Schema)
	fmt.Println(t.PartitionLayout())
	fmt.Println(t.CheckKey("dt=2026-13-45"))
	// Output:
	// 1 id long not null
	// 2 amount double
	// dt=2006-01-02
	// partition key does not fit the table: dt=2026-13-45: dt value "2026-13-45" does not fit the layout 2006-01-02 (month out of range) (hint: the table's partitions are dt=2006-01-02, e.g. dt=2026-11-29)
}

func ExampleEncode() {
	cols, _ := tablemeta.InferPartitionColumns("dt=2026-11-29", nil)
	t, _ := tablemeta.New(cols, arrow.NewSchema([]arrow.Field{
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil))
	b, _ := tablemeta.Encode(t)
	fmt.Print(string(b))
	// Output:
	// {
	//   "format": "pswap-table",
	//   "version": "1.2",
	//   "partition_columns": [
	//     {
	//       "id": 3,
	//       "name": "dt",
	//       "type": "date",
	//       "layout": "2006-01-02"
	//     }
	//   ],
	//   "schema_id": 0,
	//   "last_column_id": 3,
	//   "schema": [
	//     {
	//       "id": 1,
	//       "name": "tags",
	//       "type": {
	//         "type": "list",
	//         "element_id": 2,
	//         "element": "string",
	//         "element_nullable": true
	//       },
	//       "nullable": true
	//     }
	//   ]
	// }
}
