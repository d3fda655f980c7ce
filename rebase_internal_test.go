package pswap

import (
	"errors"
	"testing"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/staging"
)

// rebaseEvolution writes an evolution over a table.json that changed only
// in its views (the added column keeps its id, as before) or only in its
// ids (a write-back of the published ids: the added column moves above
// the new last_column_id, everything else is the new document's), and
// refuses any other change; idsStillAgree refuses an input whose id for a
// column the write read changed meanwhile.
func TestRebaseEvolution(t *testing.T) {
	str := tablemeta.Type{Kind: tablemeta.String}
	col := func(id int, name string) tablemeta.Field {
		return tablemeta.Field{ID: id, Name: name, Type: str, Nullable: true}
	}
	base := &tablemeta.Table{
		PartitionColumns: []tablemeta.PartitionColumn{{ID: 3, Name: "dt", Type: str}},
		LastColumnID:     3,
		Schema:           tablemeta.Schema{Fields: []tablemeta.Field{col(1, "a"), col(2, "b")}},
	}
	evolved := base.Clone()
	evolved.Schema.Fields = append(evolved.Schema.Fields, tablemeta.Field{ID: 4, Name: "s", Nullable: true,
		Type: tablemeta.Type{Kind: tablemeta.List, Element: &tablemeta.Field{ID: 5, Name: "element", Type: str, Nullable: true}}})
	evolved.LastColumnID, evolved.SchemaID = 5, 1

	views := base.Clone()
	views.Views = &tablemeta.Views{Iceberg: true, Delta: true}
	got, ok := rebaseEvolution(evolved, base, views)
	if !ok {
		t.Fatal("over a views switch: refused")
	}
	if ids := [3]int{got.Schema.Fields[2].ID, got.Schema.Fields[2].Type.Element.ID, got.LastColumnID}; ids != [3]int{4, 5, 5} || !got.Views.Delta {
		t.Fatalf("over a views switch: ids s, s.element, last %v, views %+v", ids, got.Views)
	}

	ids := base.Clone() // a write-back: a and dt swapped, last raised, marked
	ids.Schema.Fields[0].ID, ids.PartitionColumns[0].ID, ids.LastColumnID, ids.PublishedIDs = 3, 1, 6, true
	got, ok = rebaseEvolution(evolved, base, ids)
	if !ok {
		t.Fatal("over a write-back of ids: refused")
	}
	f := got.Schema.Fields
	if g := [7]int{f[0].ID, f[1].ID, got.PartitionColumns[0].ID, f[2].ID, f[2].Type.Element.ID, got.LastColumnID, got.SchemaID}; g != [7]int{3, 2, 1, 7, 8, 8, 1} || !got.PublishedIDs {
		t.Fatalf("over a write-back of ids: a, b, dt, s, s.element, last, schema id %v, marked %v", g, got.PublishedIDs)
	}
	if evolved.Schema.Fields[2].ID != 4 {
		t.Fatal("the evolution was changed")
	}
	in := staging.Input{Name: "f.parquet", FieldIDs: map[string]int{"a": 1, "b": 2, "s": 4}}
	if err := idsStillAgree(base, got, []staging.Input{in}); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("an input with a's former id: %v", err)
	}
	in.FieldIDs["a"] = 3 // s is not base's: not checked here
	if err := idsStillAgree(base, got, []staging.Input{in}); err != nil {
		t.Fatalf("an input with the ids: %v", err)
	}

	for name, change := range map[string]func(*tablemeta.Table){
		"a column added": func(c *tablemeta.Table) {
			c.Schema.Fields = append(c.Schema.Fields, col(4, "x"))
			c.LastColumnID, c.SchemaID = 4, 1
		},
		"a type":             func(c *tablemeta.Table) { c.Schema.Fields[1].Type = tablemeta.Type{Kind: tablemeta.Long} },
		"a name":             func(c *tablemeta.Table) { c.Schema.Fields[1].Name = "c" },
		"a partition column": func(c *tablemeta.Table) { c.PartitionColumns[0].Type = tablemeta.Type{Kind: tablemeta.Int} },
	} {
		c := base.Clone()
		change(c)
		if _, err := tablemeta.Encode(c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := rebaseEvolution(evolved, base, c); ok {
			t.Errorf("over %s: rebased", name)
		}
	}
}
