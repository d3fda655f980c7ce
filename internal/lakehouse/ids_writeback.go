package lakehouse

import (
	"bytes"
	"context"
	"errors"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/tablemeta"
)

// maxWriteBackTries bounds the conditional updates of table.json that
// writeBackIDs tries when other writers change it meanwhile.
const maxWriteBackTries = 4

// writeBackIDs makes table.json's field ids the ones md (the version this
// publish wrote) publishes, once, so that a commit checks the Parquet
// field ids of its inputs against table.json alone and never reads
// metadata/ (tablemeta.Table.PublishedIDs). The ids differ for a table
// published before table.json held ids (that publish numbered nested
// fields first) and idPlan keeps the published ones. It compares in
// memory with the table.json this publish used, and writes only when that
// document lacks the marker or disagrees: a conditional Update of the
// document re-read, retried when another writer changed it meanwhile.
// Each try changes only the ids, last_column_id and the marker of the
// document it read, conditionally on that document's tag, never an older
// document: a column an evolving commit added or a views switch stays. It never fails the
// publish: on any error table.json stays as it was and the next publish
// tries again. It needs table.json at hand (Commit.Table, or this
// attempt's read of it) and reads it for nothing else, so that a publish
// makes no more requests than before: the write-back costs a conditional
// PUT (and a GET when the document came from the commit) once per table;
// a publish without it (Publish of generations whose schemas the metadata
// had) leaves table.json to a later one.
func (p *publisher) writeBackIDs(ctx context.Context, md *tableMetadata) {
	if md == nil {
		return
	}
	doc, tag := p.doc.given, ""
	if doc == nil && p.doc.read {
		doc, tag = p.doc.t, p.doc.tag
	}
	sc := md.currentSchema()
	if doc == nil || sc == nil {
		return
	}
	if _, changed := publishedIDsInto(doc, sc, md.LastColumnID); !changed {
		return
	}
	for range maxWriteBackTries {
		t, etag := doc, tag
		if etag == "" {
			var err error
			if t, etag, err = tablemeta.Read(ctx, p.st); err != nil {
				return
			}
		}
		tag = ""
		n, changed := publishedIDsInto(t, sc, md.LastColumnID)
		if !changed {
			return
		}
		if _, err := tablemeta.Update(ctx, p.st, n, etag); !errors.Is(err, tablemeta.ErrChanged) {
			return
		}
	}
}

// publishedIDsInto returns t with the ids sc publishes, and whether that
// differs from t. Every field sc has (by name path: a column, a partition
// column, a struct's field, a list's element, a map's key and value)
// takes its published id. A field sc lacks keeps its id if it is above
// lastID (the published last-column-id: the next publish gives it that
// id, idPlan), else gets a fresh one above every id (the next publish
// would give it a fresh id anyway, which no input can know; an input
// carrying the old id was refused, as a published field has it, or is
// read as NULL either way). last_column_id becomes at least lastID, so
// that a column added later gets an id above every published one. The
// marker is set only when sc has every field of t: sc may be older than a
// version another publisher wrote meanwhile, which may have given a field
// sc lacks another id than t's (a fresh one, when t's was at or below
// that version's last-column-id: a table published before table.json
// held ids, or a version that assigned fresh ids), so the commit keeps
// reading the published schema until a publish of every column marks it.
// A marked t stays marked (its ids are the published ones, and a column
// added since has an id above every published one) unless a field was
// renumbered (it cannot happen). A result that does not validate (it
// cannot happen) leaves t unchanged.
func publishedIDsInto(t *tablemeta.Table, sc *iceberg.Schema, lastID int) (*tablemeta.Table, bool) {
	n := t.Clone()
	var unpublished []*int
	for i := range n.Schema.Fields {
		f := &n.Schema.Fields[i]
		pf, ok := topField(sc, f.Name)
		if !ok {
			unpublished = append(unpublished, typeIDs(&f.ID, &f.Type)...)
			continue
		}
		f.ID = pf.ID
		unpublished = append(unpublished, matchType(&f.Type, pf.Type)...)
	}
	for i := range n.PartitionColumns {
		c := &n.PartitionColumns[i]
		if pf, ok := topField(sc, c.Name); ok {
			c.ID = pf.ID
		} else {
			unpublished = append(unpublished, &c.ID)
		}
	}
	next := max(lastID, t.LastColumnID, sc.HighestFieldID())
	renumbered := false
	for _, id := range unpublished {
		if *id <= lastID {
			next++
			*id, renumbered = next, true
		}
	}
	n.LastColumnID = max(next, n.LastColumnID)
	n.PublishedIDs = len(unpublished) == 0 || (t.PublishedIDs && !renumbered)
	before, err1 := tablemeta.Encode(t)
	after, err2 := tablemeta.Encode(n)
	if err1 != nil || err2 != nil {
		return t, false
	}
	return n, !bytes.Equal(before, after)
}

// topField is sc's top-level field named name.
func topField(sc *iceberg.Schema, name string) (iceberg.NestedField, bool) {
	for _, f := range sc.Fields() {
		if f.Name == name {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// matchType sets the ids nested in t to those of pt, the published type
// of the same field, and returns the ids of the nested fields pt lacks.
func matchType(t *tablemeta.Type, pt iceberg.Type) []*int {
	var unpublished []*int
	switch t.Kind {
	case tablemeta.Struct:
		ps, _ := pt.(*iceberg.StructType)
		for i := range t.Fields {
			f := &t.Fields[i]
			var pf *iceberg.NestedField
			if ps != nil {
				for j := range ps.FieldList {
					if ps.FieldList[j].Name == f.Name {
						pf = &ps.FieldList[j]
					}
				}
			}
			if pf == nil {
				unpublished = append(unpublished, typeIDs(&f.ID, &f.Type)...)
				continue
			}
			f.ID = pf.ID
			unpublished = append(unpublished, matchType(&f.Type, pf.Type)...)
		}
	case tablemeta.List:
		pl, _ := pt.(*iceberg.ListType)
		if pl == nil {
			return typeIDs(&t.Element.ID, &t.Element.Type)
		}
		t.Element.ID = pl.ElementID
		unpublished = matchType(&t.Element.Type, pl.Element)
	case tablemeta.Map:
		pm, _ := pt.(*iceberg.MapType)
		if pm == nil {
			return append(typeIDs(&t.Key.ID, &t.Key.Type), typeIDs(&t.Value.ID, &t.Value.Type)...)
		}
		t.Key.ID, t.Value.ID = pm.KeyID, pm.ValueID
		unpublished = append(matchType(&t.Key.Type, pm.KeyType), matchType(&t.Value.Type, pm.ValueType)...)
	}
	return unpublished
}

// typeIDs returns id and the ids nested in t, in pre-order.
func typeIDs(id *int, t *tablemeta.Type) []*int {
	ids := []*int{id}
	switch t.Kind {
	case tablemeta.Struct:
		for i := range t.Fields {
			ids = append(ids, typeIDs(&t.Fields[i].ID, &t.Fields[i].Type)...)
		}
	case tablemeta.List:
		ids = append(ids, typeIDs(&t.Element.ID, &t.Element.Type)...)
	case tablemeta.Map:
		ids = append(ids, typeIDs(&t.Key.ID, &t.Key.Type)...)
		ids = append(ids, typeIDs(&t.Value.ID, &t.Value.Type)...)
	}
	return ids
}
