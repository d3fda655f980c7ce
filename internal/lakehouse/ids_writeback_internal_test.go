package lakehouse

import (
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/tablemeta"
)

// publishedIDsInto gives every field the published schema has its
// published id (nested ones and the partition column too, by name path),
// keeps an unpublished field's id above the published last-column-id
// (the next publish gives it that id), renumbers one at or below it above
// every id (the next publish would not give it its id), and raises
// last_column_id; it marks the document once no field needs renumbering.
// A document already so is unchanged.
func TestPublishedIDsInto(t *testing.T) {
	str := tablemeta.Type{Kind: tablemeta.String}
	doc := &tablemeta.Table{
		PartitionColumns: []tablemeta.PartitionColumn{{ID: 4, Name: "dt", Type: str}},
		LastColumnID:     6,
		Schema: tablemeta.Schema{Fields: []tablemeta.Field{
			{ID: 1, Name: "a", Type: tablemeta.Type{Kind: tablemeta.Long}, Nullable: true},
			{ID: 2, Name: "b", Type: tablemeta.Type{Kind: tablemeta.List, Element: &tablemeta.Field{ID: 3, Name: "element", Type: str, Nullable: true}}, Nullable: true},
			{ID: 5, Name: "c", Type: str, Nullable: true}, // not published, 5 <= 7
			{ID: 6, Name: "d", Type: str, Nullable: true}, // not published, 6 <= 7
		}},
	}
	// Published nested fields first, plus a column table.json lacks.
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "b", Type: &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 3, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "dt", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "legacy", Type: iceberg.PrimitiveTypes.String},
	)
	if _, err := tablemeta.Encode(doc); err != nil {
		t.Fatal(err)
	}
	n, changed := publishedIDsInto(doc, sc, 7)
	if !changed || n.PublishedIDs {
		t.Fatalf("changed %v, marked %v: want changed, not marked (it renumbered)", changed, n.PublishedIDs)
	}
	f := n.Schema.Fields
	got := []int{f[0].ID, f[1].ID, f[1].Type.Element.ID, f[2].ID, f[3].ID, n.PartitionColumns[0].ID, n.LastColumnID}
	want := []int{3, 1, 2, 8, 9, 4, 9}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids a, b, b.element, c, d, dt, last: %v, want %v", got, want)
		}
	}
	if doc.Schema.Fields[0].ID != 1 || doc.PublishedIDs {
		t.Fatal("the document read was changed")
	}
	// The next publish gives c and d their new ids: then it is marked.
	sc = iceberg.NewSchema(1, append(sc.Fields(),
		iceberg.NestedField{ID: 8, Name: "c", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 9, Name: "d", Type: iceberg.PrimitiveTypes.String})...)
	if n, changed = publishedIDsInto(n, sc, 9); !changed || !n.PublishedIDs || n.Schema.Fields[2].ID != 8 || n.LastColumnID != 9 {
		t.Fatalf("changed %v, marked %v, c %d, last %d: want marked, c 8, last 9", changed, n.PublishedIDs, n.Schema.Fields[2].ID, n.LastColumnID)
	}
	if _, again := publishedIDsInto(n, sc, 9); again {
		t.Fatal("a document holding the published ids changes again")
	}
	// A column added since (above every id) is kept.
	n.Schema.Fields = append(n.Schema.Fields, tablemeta.Field{ID: 10, Name: "e", Type: str, Nullable: true})
	n.LastColumnID = 10
	if _, again := publishedIDsInto(n, sc, 9); again {
		t.Fatal("a column added above every published id changes")
	}
}

// A write-back marks table.json only when the version it publishes has
// every column of table.json: a version that lacks some may be older than
// one another publisher wrote meanwhile, which gave those columns other
// ids than table.json's (fresh ones, as their table.json ids were at or
// below that version's last-column-id). Here table.json (an earlier
// write-back renumbered y to 8, x kept 7) has x and y above version 2's
// last-column-id, and version 4 published y as 7 and x as 8: a mark from
// version 2 would say y is 8, and a commit would take a file whose id 8
// readers resolve to x. (Before, version 2's write-back marked it.) The
// version with every column gives them its ids and marks; a marked
// document stays marked when a column added since is not published yet.
func TestPublishedIDsIntoMarksOnlyWithEveryColumnPublished(t *testing.T) {
	str := tablemeta.Type{Kind: tablemeta.String}
	col := func(id int, name string) tablemeta.Field {
		return tablemeta.Field{ID: id, Name: name, Type: str, Nullable: true}
	}
	doc := &tablemeta.Table{
		PartitionColumns: []tablemeta.PartitionColumn{{ID: 4, Name: "dt", Type: str}},
		LastColumnID:     8,
		Schema:           tablemeta.Schema{Fields: []tablemeta.Field{col(1, "a"), col(6, "note"), col(8, "y"), col(7, "x")}},
	}
	pub := func(id int, name string) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: iceberg.PrimitiveTypes.String}
	}
	v2 := iceberg.NewSchema(1, pub(1, "a"), pub(4, "dt"), pub(6, "note"))
	if n, changed := publishedIDsInto(doc, v2, 6); changed || n.PublishedIDs {
		t.Fatalf("version 2 (without x and y): changed %v, marked %v; want table.json left as it is", changed, n.PublishedIDs)
	}
	v4 := iceberg.NewSchema(3, pub(1, "a"), pub(4, "dt"), pub(6, "note"), pub(7, "y"), pub(8, "x"))
	n, changed := publishedIDsInto(doc, v4, 8)
	if f := n.Schema.Fields; !changed || !n.PublishedIDs || f[2].ID != 7 || f[3].ID != 8 || n.LastColumnID != 8 {
		t.Fatalf("version 4: changed %v, marked %v, y %d, x %d, last %d; want marked, y 7, x 8, last 8", changed, n.PublishedIDs, f[2].ID, f[3].ID, n.LastColumnID)
	}
	// A column added since, above every id: still marked, nothing to write,
	// with version 2's schema as with version 4's.
	n.Schema.Fields = append(n.Schema.Fields, col(9, "z"))
	n.LastColumnID = 9
	for _, c := range []struct {
		sc   *iceberg.Schema
		last int
	}{{v2, 6}, {v4, 8}} {
		if again, changed := publishedIDsInto(n, c.sc, c.last); changed || !again.PublishedIDs {
			t.Fatalf("a marked table.json with a column not published yet: changed %v, marked %v; want it as it is", changed, again.PublishedIDs)
		}
	}
}
