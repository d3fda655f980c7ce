package lakehouse

import "github.com/apache/iceberg-go"

// idPlan gives the fields of a merged schema their field ids. Readers
// resolve columns by id, so the ids a version published are never changed
// or reused:
//
//   - a field the published schema has (by name path: a column, a struct's
//     field, a list's element, a map's key and value) keeps its published
//     id, whatever id the source proposes (table.json's nested ids differ
//     from those of tables published before it: see tableSource);
//   - a new field takes the id its source proposes (table.json's) when no
//     published version can have used it (above the published
//     last-column-id), so that a table published from table.json has its
//     ids;
//   - any other new field (a footer proposes none) takes the next id above
//     both the published last-column-id and every proposed one.
type idPlan struct {
	last int // the published last-column-id: ids above it were never assigned
	next int // the last id handed out
}

// newIDPlan plans ids above lastID, fresh ones above proposed too.
func newIDPlan(lastID, proposed int) *idPlan {
	return &idPlan{last: lastID, next: max(lastID, proposed)}
}

// id is prevID if the table has the field (prevID > 0), else srcID if no
// version assigned it, else a fresh id.
func (a *idPlan) id(prevID, srcID int) int {
	switch {
	case prevID > 0:
		return prevID
	case srcID > a.last:
		return srcID
	}
	a.next++
	return a.next
}

// typ returns t with the ids of its nested fields planned against prev,
// the field's type in the table (nil for a new field): in pre-order, a
// field's id before those nested in it. A field the table has keeps its
// doc too: a published field changes only as buildSchema lets it.
func (a *idPlan) typ(t, prev iceberg.Type) iceberg.Type {
	switch t := t.(type) {
	case *iceberg.StructType:
		ps, _ := prev.(*iceberg.StructType)
		fields := make([]iceberg.NestedField, len(t.FieldList))
		for i, f := range t.FieldList {
			var pf iceberg.NestedField
			if ps != nil {
				for _, g := range ps.FieldList {
					if g.Name == f.Name {
						pf = g
					}
				}
			}
			f.ID = a.id(pf.ID, f.ID)
			if pf.ID > 0 {
				f.Doc = pf.Doc
			}
			f.Type = a.typ(f.Type, pf.Type)
			fields[i] = f
		}
		return &iceberg.StructType{FieldList: fields}
	case *iceberg.MapType:
		pm, _ := prev.(*iceberg.MapType)
		var pk, pv iceberg.Type
		var pkid, pvid int
		if pm != nil {
			pk, pv, pkid, pvid = pm.KeyType, pm.ValueType, pm.KeyID, pm.ValueID
		}
		m := *t
		m.KeyID, m.ValueID = a.id(pkid, t.KeyID), a.id(pvid, t.ValueID)
		m.KeyType, m.ValueType = a.typ(t.KeyType, pk), a.typ(t.ValueType, pv)
		return &m
	case *iceberg.ListType:
		pl, _ := prev.(*iceberg.ListType)
		var pe iceberg.Type
		var peid int
		if pl != nil {
			pe, peid = pl.Element, pl.ElementID
		}
		l := *t
		l.ElementID = a.id(peid, t.ElementID)
		l.Element = a.typ(t.Element, pe)
		return &l
	}
	return t
}

// maxID is the highest field id in fields, nested ones included.
func maxID(fields []iceberg.NestedField) int {
	m := 0
	for _, f := range fields {
		m = max(m, f.ID, maxTypeID(f.Type))
	}
	return m
}

func maxTypeID(t iceberg.Type) int {
	switch t := t.(type) {
	case *iceberg.StructType:
		return maxID(t.FieldList)
	case *iceberg.ListType:
		return max(t.ElementID, maxTypeID(t.Element))
	case *iceberg.MapType:
		return max(t.KeyID, t.ValueID, maxTypeID(t.KeyType), maxTypeID(t.ValueType))
	}
	return 0
}
