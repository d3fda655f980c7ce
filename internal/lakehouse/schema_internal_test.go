package lakehouse

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/partition"
)

// TestBuildSchemaMissingColumnBecomesOptional: a generation whose files
// lack a required column of the table makes it optional (readers fill it
// with nulls; a required column a file lacks fails them), while the
// partition column, which no file holds, stays as it is.
func TestBuildSchemaMissingColumnBecomesOptional(t *testing.T) {
	key, err := partition.Parse("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	prev := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "city", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "dt", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
	as := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	sc, changed, err := buildSchema(prev, 3, as, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Fatal("a column the files lack left the schema unchanged")
	}
	want := map[string]bool{"id": true, "city": false, "dt": true}
	for _, f := range sc.Fields() {
		if f.Required != want[f.Name] {
			t.Errorf("%s: required %v, want %v", f.Name, f.Required, want[f.Name])
		}
	}
	if sc.ID != prev.ID+1 {
		t.Errorf("schema id %d, want %d", sc.ID, prev.ID+1)
	}
	// The same files again change nothing.
	if _, changed, err := buildSchema(sc, 3, as, key, nil); err != nil || changed {
		t.Errorf("again: changed %v, %v", changed, err)
	}
}
