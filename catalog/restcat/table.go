package restcat

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pswap/pswap/catalog"
)

// table is what the commit needs of a table's metadata: the catalog's (in
// its LoadTable reply) or a pswap version's. Schemas, specs, sort orders
// and snapshots are kept as they were read, to be sent back as they are.
type table struct {
	uuid             string
	location         string
	lastColumnID     int
	currentSchema    int
	defaultSpec      int
	defaultSortOrder int
	main             *int64 // the main branch's snapshot, nil: none
	schemas          []item
	specs            []item
	sortOrders       []item
	snapshots        []item
	props            map[string]string

	metadataLocation string // the catalog's own metadata file (LoadTable)
}

// item is a schema, spec, sort order or snapshot: its id and its JSON.
type item struct {
	id  int64
	raw json.RawMessage
}

// parseTable reads table metadata JSON (the catalog's reply or pswap's
// version, both external input here): what it needs, checked.
func parseTable(data []byte) (*table, error) {
	var m struct {
		UUID             string             `json:"table-uuid"`
		Location         string             `json:"location"`
		LastColumnID     int                `json:"last-column-id"`
		CurrentSchemaID  *int               `json:"current-schema-id"`
		DefaultSpecID    *int               `json:"default-spec-id"`
		DefaultSortOrder *int               `json:"default-sort-order-id"`
		CurrentSnapshot  *int64             `json:"current-snapshot-id"`
		Refs             map[string]refJSON `json:"refs"`
		Schemas          []json.RawMessage  `json:"schemas"`
		Specs            []json.RawMessage  `json:"partition-specs"`
		SortOrders       []json.RawMessage  `json:"sort-orders"`
		Snapshots        []json.RawMessage  `json:"snapshots"`
		Properties       map[string]string  `json:"properties"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("table metadata: %w", err)
	}
	if m.UUID == "" || m.Location == "" {
		return nil, fmt.Errorf("table metadata without table-uuid or location")
	}
	t := &table{uuid: strings.ToLower(m.UUID), location: strings.TrimSuffix(m.Location, "/"),
		lastColumnID: m.LastColumnID, currentSchema: -1, defaultSpec: -1, props: m.Properties}
	if m.CurrentSchemaID != nil {
		t.currentSchema = *m.CurrentSchemaID
	}
	if m.DefaultSpecID != nil {
		t.defaultSpec = *m.DefaultSpecID
	}
	if m.DefaultSortOrder != nil {
		t.defaultSortOrder = *m.DefaultSortOrder
	}
	if r, ok := m.Refs["main"]; ok {
		id := r.SnapshotID
		t.main = &id
	} else if m.CurrentSnapshot != nil && *m.CurrentSnapshot != -1 {
		t.main = m.CurrentSnapshot
	}
	var err error
	if t.schemas, err = items(m.Schemas, "schema-id", "schemas"); err != nil {
		return nil, err
	}
	if t.specs, err = items(m.Specs, "spec-id", "partition-specs"); err != nil {
		return nil, err
	}
	if t.sortOrders, err = items(m.SortOrders, "order-id", "sort-orders"); err != nil {
		return nil, err
	}
	if t.snapshots, err = items(m.Snapshots, "snapshot-id", "snapshots"); err != nil {
		return nil, err
	}
	return t, nil
}

type refJSON struct {
	SnapshotID int64 `json:"snapshot-id"`
}

// items reads the id of each object of a list.
func items(raws []json.RawMessage, key, what string) ([]item, error) {
	out := make([]item, 0, len(raws))
	for i, raw := range raws {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		var id int64
		if err := json.Unmarshal(m[key], &id); err != nil || m[key] == nil {
			return nil, fmt.Errorf("%s[%d]: no %s", what, i, key)
		}
		out = append(out, item{id: id, raw: raw})
	}
	return out, nil
}

func has(list []item, id int64) bool {
	return slices.ContainsFunc(list, func(it item) bool { return it.id == id })
}

// pswapLocation is the pswap version the table reflects (see Current).
func (t *table) pswapLocation() string {
	if loc := t.props[PropMetadataLocation]; loc != "" && strings.HasPrefix(loc, t.location+"/") {
		return loc
	}
	return t.metadataLocation
}

// update is one of a commit's updates or requirements.
type update map[string]any

// commitRequest is the commit that takes the catalog's table cur to
// pswap's version next (at loc): its requirements and updates.
func commitRequest(cur, next *table, loc string) (map[string]any, error) {
	if cur.uuid != next.uuid || cur.location != next.location {
		return nil, fmt.Errorf("%w: the catalog's table is %s at %s, pswap's %s at %s",
			catalog.ErrCatalogForeign, cur.uuid, cur.location, next.uuid, next.location)
	}
	if cur.main != nil && !has(next.snapshots, *cur.main) {
		return nil, fmt.Errorf("%w: its current snapshot %d is not one of pswap's (another writer committed to the catalog's table)",
			catalog.ErrCatalogForeign, *cur.main)
	}
	var mainReq any // JSON null: the table has no main branch yet
	if cur.main != nil {
		mainReq = *cur.main
	}
	reqs := []update{
		{"type": "assert-table-uuid", "uuid": next.uuid},
		{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": mainReq},
	}
	var ups []update
	added := false
	for _, s := range next.schemas {
		if !has(cur.schemas, s.id) {
			ups = append(ups, update{"action": "add-schema", "schema": s.raw, "last-column-id": next.lastColumnID})
			added = true
		}
	}
	if next.currentSchema != cur.currentSchema {
		id := next.currentSchema
		if added && next.schemas[len(next.schemas)-1].id == int64(id) {
			id = -1 // the schema just added: the catalog may number it anew
		}
		ups = append(ups, update{"action": "set-current-schema", "schema-id": id})
	}
	added = false
	for _, s := range next.specs {
		if !has(cur.specs, s.id) {
			ups = append(ups, update{"action": "add-spec", "spec": s.raw})
			added = true
		}
	}
	if next.defaultSpec != cur.defaultSpec {
		id := next.defaultSpec
		if added && next.specs[len(next.specs)-1].id == int64(id) {
			id = -1
		}
		ups = append(ups, update{"action": "set-default-spec", "spec-id": id})
	}
	for _, s := range next.sortOrders {
		if !has(cur.sortOrders, s.id) {
			ups = append(ups, update{"action": "add-sort-order", "sort-order": s.raw})
		}
	}
	if next.defaultSortOrder != cur.defaultSortOrder && has(next.sortOrders, int64(next.defaultSortOrder)) {
		ups = append(ups, update{"action": "set-default-sort-order", "sort-order-id": next.defaultSortOrder})
	}
	for _, s := range next.snapshots {
		if !has(cur.snapshots, s.id) {
			ups = append(ups, update{"action": "add-snapshot", "snapshot": s.raw})
		}
	}
	switch {
	case next.main != nil && (cur.main == nil || *cur.main != *next.main):
		ups = append(ups, update{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": *next.main})
	case next.main == nil && cur.main != nil:
		ups = append(ups, update{"action": "remove-snapshot-ref", "ref-name": "main"})
	}
	var gone []int64
	for _, s := range cur.snapshots {
		if !has(next.snapshots, s.id) {
			gone = append(gone, s.id)
		}
	}
	if len(gone) > 0 {
		ups = append(ups, update{"action": "remove-snapshots", "snapshot-ids": gone})
	}
	props := map[string]string{PropMetadataLocation: loc}
	for k, v := range next.props {
		if cur.props[k] != v {
			props[k] = v
		}
	}
	ups = append(ups, update{"action": "set-properties", "updates": props})
	return map[string]any{"requirements": reqs, "updates": ups}, nil
}
