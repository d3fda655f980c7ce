package lakehouse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/pswap/pswap/internal/strictjson"
)

// pswap's model of an Iceberg v2 table metadata file (vN.metadata.json): it
// parses and checks a version, builds the next one and encodes it. It
// writes what iceberg-go 0.7.0's table.MetadataBuilder wrote for the same
// changes, byte for byte (the tests rebuild every version with it), without
// importing iceberg-go's table package, whose package initialisation (its
// Substrait function catalogue) cost every pswap invocation 32 MB and a
// tenth of a second or more. Schemas and partition specs are iceberg-go's
// root package types, which carry their own JSON form.

// Names of the metadata that pswap writes or reads.
const (
	mainBranch = "main"
	// nameMappingKey is the property of the default name mapping.
	nameMappingKey = "schema.name-mapping.default"
	// previousVersionsMaxKey bounds the metadata log (default
	// previousVersionsMaxDefault entries).
	previousVersionsMaxKey     = "write.metadata.previous-versions-max"
	previousVersionsMaxDefault = 100
	// oneMinuteMs is the clock skew the timestamps of the logs may show.
	oneMinuteMs = 60_000
)

// Snapshot is one snapshot of a table's metadata. Its Summary holds the
// operation ("operation": append, replace, overwrite or delete) and the
// snapshot's properties, as the file does.
type Snapshot struct {
	SnapshotID       int64             `json:"snapshot-id"`
	ParentSnapshotID *int64            `json:"parent-snapshot-id,omitempty"`
	SequenceNumber   int64             `json:"sequence-number"`
	TimestampMs      int64             `json:"timestamp-ms"`
	ManifestList     string            `json:"manifest-list,omitempty"`
	Summary          map[string]string `json:"summary,omitempty"`
	SchemaID         *int              `json:"schema-id,omitempty"`
}

type snapshotRef struct {
	SnapshotID         int64  `json:"snapshot-id"`
	Type               string `json:"type"` // "branch" or "tag"
	MinSnapshotsToKeep *int   `json:"min-snapshots-to-keep,omitempty"`
	MaxSnapshotAgeMs   *int64 `json:"max-snapshot-age-ms,omitempty"`
	MaxRefAgeMs        *int64 `json:"max-ref-age-ms,omitempty"`
}

type snapshotLogEntry struct {
	SnapshotID  int64 `json:"snapshot-id"`
	TimestampMs int64 `json:"timestamp-ms"`
}

type metadataLogEntry struct {
	MetadataFile string `json:"metadata-file"`
	TimestampMs  int64  `json:"timestamp-ms"`
}

// sortOrder is carried as it is read: pswap writes only the unsorted order
// (id 0, no fields).
type sortOrder struct {
	OrderID int               `json:"order-id"`
	Fields  []json.RawMessage `json:"fields"`
}

// statisticsFile is an entry of statistics or partition-statistics, carried
// as it is read; an expiry drops the entries of the snapshots it removes.
type statisticsFile struct {
	snapshotID int64
	raw        json.RawMessage
}

func (s statisticsFile) MarshalJSON() ([]byte, error) { return s.raw, nil }

// tableMetadata mirrors a v2 metadata file. The order of its fields is the
// order of the file's keys.
type tableMetadata struct {
	LastSequenceNumber  int64                   `json:"last-sequence-number"`
	FormatVersion       int                     `json:"format-version"`
	TableUUID           uuid.UUID               `json:"table-uuid"`
	Location            string                  `json:"location"`
	LastUpdatedMS       int64                   `json:"last-updated-ms"`
	LastColumnID        int                     `json:"last-column-id"`
	Schemas             []*iceberg.Schema       `json:"schemas"`
	CurrentSchemaID     int                     `json:"current-schema-id"`
	PartitionSpecs      []iceberg.PartitionSpec `json:"partition-specs"`
	DefaultSpecID       int                     `json:"default-spec-id"`
	LastPartitionID     int                     `json:"last-partition-id"`
	Properties          map[string]string       `json:"properties,omitempty"`
	CurrentSnapshotID   *int64                  `json:"current-snapshot-id,omitempty"`
	SnapshotLog         []snapshotLogEntry      `json:"snapshot-log,omitempty"`
	MetadataLog         []metadataLogEntry      `json:"metadata-log,omitempty"`
	SortOrders          []sortOrder             `json:"sort-orders"`
	DefaultSortOrderID  int                     `json:"default-sort-order-id"`
	Refs                map[string]snapshotRef  `json:"refs,omitempty"`
	Statistics          []statisticsFile        `json:"statistics,omitempty"`
	PartitionStatistics []statisticsFile        `json:"partition-statistics,omitempty"`
	Snapshots           []Snapshot              `json:"snapshots,omitempty"`
}

// Metadata is one version of a table's Iceberg metadata, as ParseMetadata
// read and checked it.
type Metadata struct{ md *tableMetadata }

// ParseMetadata parses and checks a metadata file: it must be Iceberg v2
// JSON with every required field, and its ids must agree (current schema,
// default spec, current snapshot, refs, snapshot parents). A tampered or
// truncated file is ErrCorrupt, with what is wrong.
func ParseMetadata(data []byte) (*Metadata, error) {
	md, err := parseMetadata(data)
	if err != nil {
		return nil, err
	}
	return &Metadata{md: md}, nil
}

// FormatVersion is the table's format version (always 2).
func (m *Metadata) FormatVersion() int { return m.md.FormatVersion }

// CurrentSnapshot is the snapshot the main branch names (nil: none).
func (m *Metadata) CurrentSnapshot() *Snapshot { return m.md.currentSnapshot() }

// Snapshots are the snapshots the metadata keeps, oldest first.
func (m *Metadata) Snapshots() []Snapshot { return slices.Clone(m.md.Snapshots) }

// Properties are the table's properties.
func (m *Metadata) Properties() map[string]string { return maps.Clone(m.md.Properties) }

// MarshalJSON encodes the metadata as its file.
func (m *Metadata) MarshalJSON() ([]byte, error) { return m.md.encode() }

func (m *tableMetadata) encode() ([]byte, error) { return json.Marshal(m) }

func (m *tableMetadata) currentSnapshot() *Snapshot {
	if m.CurrentSnapshotID == nil {
		return nil
	}
	return m.snapshot(*m.CurrentSnapshotID)
}

// snapshot returns a copy of the snapshot with the id, or nil.
func (m *tableMetadata) snapshot(id int64) *Snapshot {
	for _, s := range m.Snapshots {
		if s.SnapshotID == id {
			return &s
		}
	}
	return nil
}

func (m *tableMetadata) schema(id int) *iceberg.Schema {
	for _, s := range m.Schemas {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func (m *tableMetadata) currentSchema() *iceberg.Schema { return m.schema(m.CurrentSchemaID) }

// defaultSpec is the default partition spec (checked to exist).
func (m *tableMetadata) defaultSpec() iceberg.PartitionSpec {
	for _, s := range m.PartitionSpecs {
		if s.ID() == m.DefaultSpecID {
			return s
		}
	}
	return iceberg.PartitionSpec{}
}

// clone copies what the next version may change.
func (m *tableMetadata) clone() *tableMetadata {
	c := *m
	c.Schemas = slices.Clone(m.Schemas)
	c.PartitionSpecs = slices.Clone(m.PartitionSpecs)
	c.Properties = maps.Clone(m.Properties)
	if c.Properties == nil {
		c.Properties = map[string]string{}
	}
	c.SnapshotLog = slices.Clone(m.SnapshotLog)
	c.MetadataLog = slices.Clone(m.MetadataLog)
	c.SortOrders = slices.Clone(m.SortOrders)
	c.Refs = maps.Clone(m.Refs)
	if c.Refs == nil {
		c.Refs = map[string]snapshotRef{}
	}
	c.Statistics = slices.Clone(m.Statistics)
	c.PartitionStatistics = slices.Clone(m.PartitionStatistics)
	c.Snapshots = slices.Clone(m.Snapshots)
	return &c
}

// firstMetadata is a table's first version: the schema, the unsorted sort
// order, the spec (id 0), the properties and one snapshot, which main
// names. The snapshot's schema-id is set to the schema's.
func firstMetadata(id uuid.UUID, location string, sc *iceberg.Schema, spec iceberg.PartitionSpec, props map[string]string, snap Snapshot) (*tableMetadata, error) {
	if sc == nil {
		return nil, errors.New("no schema")
	}
	m := &tableMetadata{
		FormatVersion: 2, TableUUID: id, Location: location,
		LastColumnID: -1, Properties: map[string]string{}, Refs: map[string]snapshotRef{},
		SortOrders: []sortOrder{{OrderID: 0, Fields: []json.RawMessage{}}},
	}
	m.addSchema(sc)
	floor := iceberg.PartitionDataIDStart - 1
	specID := 0
	bound, err := spec.BindToSchema(m.currentSchema(), &floor, &specID)
	if err != nil {
		return nil, fmt.Errorf("partition spec: %w", err)
	}
	m.PartitionSpecs = []iceberg.PartitionSpec{bound}
	m.LastPartitionID = max(floor, bound.LastAssignedFieldID())
	maps.Copy(m.Properties, props)
	if err := m.addSnapshot(snap); err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// withSnapshot is the version after m, which was read from prevLoc: sc
// (unless nil) added and made the current schema, props set (other
// properties stay), snap added with the current schema's id and main moved
// to it.
func (m *tableMetadata) withSnapshot(prevLoc string, sc *iceberg.Schema, props map[string]string, snap Snapshot) (*tableMetadata, error) {
	next := m.clone()
	if sc != nil {
		next.addSchema(sc)
	}
	maps.Copy(next.Properties, props)
	if err := next.addSnapshot(snap); err != nil {
		return nil, err
	}
	next.logPrevious(prevLoc, m.LastUpdatedMS)
	if err := next.validate(); err != nil {
		return nil, err
	}
	return next, nil
}

// withoutSnapshots is the version after m, which was read from prevLoc,
// without the snapshots drop (never the current one): refs to them and
// their statistics go, and so does the snapshot log up to the last entry of
// a snapshot that is gone (what iceberg-go and Java keep of it). Its
// last-updated-ms is nowMs, or m's if that is later.
func (m *tableMetadata) withoutSnapshots(prevLoc string, drop []int64, nowMs int64) (*tableMetadata, error) {
	if m.CurrentSnapshotID != nil && slices.Contains(drop, *m.CurrentSnapshotID) {
		return nil, fmt.Errorf("the current snapshot %d cannot be removed", *m.CurrentSnapshotID)
	}
	next := m.clone()
	gone := func(id int64) bool { return slices.Contains(drop, id) }
	next.Snapshots = slices.DeleteFunc(next.Snapshots, func(s Snapshot) bool { return gone(s.SnapshotID) })
	maps.DeleteFunc(next.Refs, func(_ string, r snapshotRef) bool { return next.snapshot(r.SnapshotID) == nil })
	next.Statistics = slices.DeleteFunc(next.Statistics, func(s statisticsFile) bool { return gone(s.snapshotID) })
	next.PartitionStatistics = slices.DeleteFunc(next.PartitionStatistics, func(s statisticsFile) bool { return gone(s.snapshotID) })
	var log []snapshotLogEntry
	for _, e := range next.SnapshotLog {
		if next.snapshot(e.SnapshotID) == nil {
			log = log[:0]
			continue
		}
		log = append(log, e)
	}
	if cur := next.CurrentSnapshotID; cur != nil && len(log) > 0 && log[len(log)-1].SnapshotID != *cur {
		return nil, fmt.Errorf("the snapshot log ends with snapshot %d, not the current %d", log[len(log)-1].SnapshotID, *cur)
	}
	next.SnapshotLog = log
	next.MetadataLog = next.readableLog()
	next.LastUpdatedMS = max(nowMs, m.LastUpdatedMS)
	next.logPrevious(prevLoc, m.LastUpdatedMS)
	if err := next.validate(); err != nil {
		return nil, err
	}
	return next, nil
}

// readableLog is the metadata log without the versions whose current
// snapshot m no longer has: their manifest lists and data go with the
// snapshot, so an engine that opened such a version (registered at it,
// or scanning its file) would fail on a missing file. A version's current
// snapshot is the one the snapshot log names last at or before the
// version's timestamp (its last-updated-ms, its snapshot's timestamp for a
// version that added one); a version from before the snapshot log's first
// entry counts as gone (the log is cut at the last removed snapshot).
func (m *tableMetadata) readableLog() []metadataLogEntry {
	var out []metadataLogEntry
	for _, e := range m.MetadataLog {
		if id, ok := m.currentAt(e.TimestampMs); ok && m.snapshot(id) != nil {
			out = append(out, e)
		}
	}
	return out
}

// currentAt is the snapshot the snapshot log says was current at ts.
func (m *tableMetadata) currentAt(ts int64) (id int64, ok bool) {
	for _, e := range m.SnapshotLog {
		if e.TimestampMs > ts {
			break
		}
		id, ok = e.SnapshotID, true
	}
	return id, ok
}

// addSchema adds sc, under the id of an equal schema if there is one, else
// under sc's id or one past the highest id in use, and makes it current.
func (m *tableMetadata) addSchema(sc *iceberg.Schema) {
	id := sc.ID
	for _, s := range m.Schemas {
		if sc.Equals(s) {
			m.CurrentSchemaID = s.ID
			return
		}
		if s.ID >= id {
			id = s.ID + 1
		}
	}
	m.LastColumnID = max(m.LastColumnID, sc.HighestFieldID())
	m.Schemas = append(m.Schemas, iceberg.NewSchemaWithIdentifiers(id, sc.IdentifierFieldIDs, sc.Fields()...))
	m.CurrentSchemaID = id
}

// addSnapshot adds snap, stamped with the current schema's id, and moves
// main (a branch) to it; the version is stamped with its timestamp.
func (m *tableMetadata) addSnapshot(snap Snapshot) error {
	if m.snapshot(snap.SnapshotID) != nil {
		return fmt.Errorf("snapshot %d already exists", snap.SnapshotID)
	}
	if snap.ParentSnapshotID != nil && snap.SequenceNumber <= m.LastSequenceNumber {
		return fmt.Errorf("snapshot %d has sequence number %d, not past the last %d", snap.SnapshotID, snap.SequenceNumber, m.LastSequenceNumber)
	}
	id := m.CurrentSchemaID
	snap.SchemaID = &id
	snap.Summary = maps.Clone(snap.Summary)
	m.Snapshots = append(m.Snapshots, snap)
	m.LastSequenceNumber = snap.SequenceNumber
	m.LastUpdatedMS = snap.TimestampMs
	cur := snap.SnapshotID
	m.CurrentSnapshotID = &cur
	m.Refs[mainBranch] = snapshotRef{SnapshotID: cur, Type: "branch"}
	m.SnapshotLog = append(m.SnapshotLog, snapshotLogEntry{SnapshotID: cur, TimestampMs: snap.TimestampMs})
	return nil
}

// logPrevious appends the version the next one replaces to the metadata
// log, which keeps the newest write.metadata.previous-versions-max entries
// (default 100, at least 1).
func (m *tableMetadata) logPrevious(loc string, lastUpdatedMS int64) {
	if loc == "" {
		return
	}
	m.MetadataLog = append(m.MetadataLog, metadataLogEntry{MetadataFile: loc, TimestampMs: lastUpdatedMS})
	n := previousVersionsMaxDefault
	if v, ok := m.Properties[previousVersionsMaxKey]; ok {
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			n = int(i)
		}
	}
	n = max(n, 1)
	if len(m.MetadataLog) > n {
		m.MetadataLog = slices.Clone(m.MetadataLog[len(m.MetadataLog)-n:])
	}
}

// Parsing.

// rawMetadata is a metadata file as it decodes, every required field a
// pointer (nil: missing or null).
type rawMetadata struct {
	FormatVersion       *int                       `json:"format-version"`
	TableUUID           *string                    `json:"table-uuid"`
	Location            *string                    `json:"location"`
	LastSequenceNumber  *int64                     `json:"last-sequence-number"`
	LastUpdatedMS       *int64                     `json:"last-updated-ms"`
	LastColumnID        *int                       `json:"last-column-id"`
	Schemas             []json.RawMessage          `json:"schemas"`
	CurrentSchemaID     *int                       `json:"current-schema-id"`
	PartitionSpecs      []json.RawMessage          `json:"partition-specs"`
	DefaultSpecID       *int                       `json:"default-spec-id"`
	LastPartitionID     *int                       `json:"last-partition-id"`
	Properties          map[string]string          `json:"properties"`
	CurrentSnapshotID   *int64                     `json:"current-snapshot-id"`
	Snapshots           []json.RawMessage          `json:"snapshots"`
	SnapshotLog         []rawLogEntry              `json:"snapshot-log"`
	MetadataLog         []rawLogEntry              `json:"metadata-log"`
	SortOrders          []json.RawMessage          `json:"sort-orders"`
	DefaultSortOrderID  *int                       `json:"default-sort-order-id"`
	Refs                map[string]json.RawMessage `json:"refs"`
	Statistics          []json.RawMessage          `json:"statistics"`
	PartitionStatistics []json.RawMessage          `json:"partition-statistics"`
	// Fields of format version 3, refused in a v2 table.
	NextRowID      json.RawMessage `json:"next-row-id"`
	EncryptionKeys json.RawMessage `json:"encryption-keys"`
}

type rawLogEntry struct {
	SnapshotID   *int64  `json:"snapshot-id"`
	MetadataFile *string `json:"metadata-file"`
	TimestampMs  *int64  `json:"timestamp-ms"`
}

type rawSnapshot struct {
	SnapshotID       *int64            `json:"snapshot-id"`
	ParentSnapshotID *int64            `json:"parent-snapshot-id"`
	SequenceNumber   *int64            `json:"sequence-number"`
	TimestampMs      *int64            `json:"timestamp-ms"`
	ManifestList     *string           `json:"manifest-list"`
	Summary          map[string]string `json:"summary"`
	SchemaID         *int              `json:"schema-id"`
}

type rawRef struct {
	SnapshotID         *int64  `json:"snapshot-id"`
	Type               *string `json:"type"`
	MinSnapshotsToKeep *int    `json:"min-snapshots-to-keep"`
	MaxSnapshotAgeMs   *int64  `json:"max-snapshot-age-ms"`
	MaxRefAgeMs        *int64  `json:"max-ref-age-ms"`
}

type rawSortOrder struct {
	OrderID *int               `json:"order-id"`
	Fields  *[]json.RawMessage `json:"fields"`
}

// parseMetadata is ParseMetadata's model: anything malformed is
// ErrCorrupt, never a panic.
func parseMetadata(data []byte) (m *tableMetadata, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	m, err = decodeMetadata(data)
	if err == nil {
		err = m.validate()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := checkFormat(m.Properties); err != nil {
		return nil, err
	}
	return m, nil
}

// formatVersion is the version of pswap's Iceberg metadata this reader
// knows: its property pswap.format is "pswap/1".
const formatVersion = 1

// checkFormat refuses metadata whose pswap.format names a newer version
// of pswap's than formatVersion (strictjson.ErrNewerFormat, not
// ErrCorrupt: a newer pswap wrote it, and no repair may replace it). A
// value of another form is not pswap's to judge.
func checkFormat(props map[string]string) error {
	n, ok := strings.CutPrefix(props[propFormat], "pswap/")
	v, err := strconv.Atoi(n)
	if !ok || err != nil || v <= formatVersion {
		return nil
	}
	return strictjson.NewerFormat("Iceberg metadata", props[propFormat])
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// decodeMetadata reads the fields and checks that each required one is
// there and has its type.
func decodeMetadata(data []byte) (*tableMetadata, error) {
	var r rawMetadata
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.FormatVersion == nil {
		return nil, errors.New("format-version is missing")
	}
	if *r.FormatVersion != 2 {
		return nil, fmt.Errorf("format version %d, pswap writes 2", *r.FormatVersion)
	}
	if !isNull(r.NextRowID) || !isNull(r.EncryptionKeys) {
		return nil, errors.New("next-row-id or encryption-keys (format version 3) in a version 2 table")
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"table-uuid", r.TableUUID == nil}, {"location", r.Location == nil},
		{"last-sequence-number", r.LastSequenceNumber == nil}, {"last-updated-ms", r.LastUpdatedMS == nil},
		{"last-column-id", r.LastColumnID == nil}, {"schemas", r.Schemas == nil}, {"current-schema-id", r.CurrentSchemaID == nil},
		{"partition-specs", r.PartitionSpecs == nil}, {"default-spec-id", r.DefaultSpecID == nil},
		{"last-partition-id", r.LastPartitionID == nil}, {"sort-orders", r.SortOrders == nil},
		{"default-sort-order-id", r.DefaultSortOrderID == nil},
	} {
		if f.missing {
			return nil, fmt.Errorf("%s is missing", f.name)
		}
	}
	id, err := uuid.Parse(*r.TableUUID)
	if err != nil {
		return nil, fmt.Errorf("table-uuid %q: %v", *r.TableUUID, err)
	}
	m := &tableMetadata{
		FormatVersion: 2, TableUUID: id, Location: *r.Location,
		LastSequenceNumber: *r.LastSequenceNumber, LastUpdatedMS: *r.LastUpdatedMS, LastColumnID: *r.LastColumnID,
		CurrentSchemaID: *r.CurrentSchemaID, DefaultSpecID: *r.DefaultSpecID, LastPartitionID: *r.LastPartitionID,
		Properties: r.Properties, DefaultSortOrderID: *r.DefaultSortOrderID, Refs: map[string]snapshotRef{},
	}
	for i, raw := range r.Schemas {
		if isNull(raw) {
			return nil, fmt.Errorf("schemas[%d] is null", i)
		}
		var s iceberg.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("schemas[%d]: %v", i, err)
		}
		m.Schemas = append(m.Schemas, &s)
	}
	for i, raw := range r.PartitionSpecs {
		spec, err := decodeSpec(raw)
		if err != nil {
			return nil, fmt.Errorf("partition-specs[%d]: %v", i, err)
		}
		m.PartitionSpecs = append(m.PartitionSpecs, spec)
	}
	m.SortOrders = []sortOrder{}
	for i, raw := range r.SortOrders {
		var o rawSortOrder
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, fmt.Errorf("sort-orders[%d]: %v", i, err)
		}
		if o.OrderID == nil || o.Fields == nil {
			return nil, fmt.Errorf("sort-orders[%d] lacks order-id or fields", i)
		}
		for j, f := range *o.Fields {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(f, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("sort-orders[%d].fields[%d] is not an object", i, j)
			}
		}
		m.SortOrders = append(m.SortOrders, sortOrder{OrderID: *o.OrderID, Fields: append([]json.RawMessage{}, *o.Fields...)})
	}
	for i, raw := range r.Snapshots {
		var s rawSnapshot
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("snapshots[%d]: %v", i, err)
		}
		switch {
		case s.SnapshotID == nil:
			return nil, fmt.Errorf("snapshots[%d] has no snapshot-id", i)
		case s.TimestampMs == nil:
			return nil, fmt.Errorf("snapshot %d has no timestamp-ms", *s.SnapshotID)
		case s.SequenceNumber == nil:
			return nil, fmt.Errorf("snapshot %d has no sequence-number", *s.SnapshotID)
		case s.ManifestList == nil || *s.ManifestList == "":
			return nil, fmt.Errorf("snapshot %d has no manifest-list", *s.SnapshotID)
		case s.Summary == nil:
			return nil, fmt.Errorf("snapshot %d has no summary", *s.SnapshotID)
		}
		m.Snapshots = append(m.Snapshots, Snapshot{
			SnapshotID: *s.SnapshotID, ParentSnapshotID: s.ParentSnapshotID, SequenceNumber: *s.SequenceNumber,
			TimestampMs: *s.TimestampMs, ManifestList: *s.ManifestList, Summary: s.Summary, SchemaID: s.SchemaID,
		})
	}
	if r.CurrentSnapshotID != nil && *r.CurrentSnapshotID != -1 {
		cur := *r.CurrentSnapshotID
		m.CurrentSnapshotID = &cur
	}
	for name, raw := range r.Refs {
		var ref rawRef
		if err := json.Unmarshal(raw, &ref); err != nil {
			return nil, fmt.Errorf("ref %q: %v", name, err)
		}
		if ref.SnapshotID == nil || ref.Type == nil {
			return nil, fmt.Errorf("ref %q lacks snapshot-id or type", name)
		}
		m.Refs[name] = snapshotRef{SnapshotID: *ref.SnapshotID, Type: *ref.Type,
			MinSnapshotsToKeep: ref.MinSnapshotsToKeep, MaxSnapshotAgeMs: ref.MaxSnapshotAgeMs, MaxRefAgeMs: ref.MaxRefAgeMs}
	}
	if _, ok := m.Refs[mainBranch]; !ok && m.CurrentSnapshotID != nil {
		// Older writers name the current snapshot without refs.
		m.Refs[mainBranch] = snapshotRef{SnapshotID: *m.CurrentSnapshotID, Type: "branch"}
	}
	for i, e := range r.SnapshotLog {
		if e.SnapshotID == nil || e.TimestampMs == nil {
			return nil, fmt.Errorf("snapshot-log[%d] lacks snapshot-id or timestamp-ms", i)
		}
		m.SnapshotLog = append(m.SnapshotLog, snapshotLogEntry{SnapshotID: *e.SnapshotID, TimestampMs: *e.TimestampMs})
	}
	for i, e := range r.MetadataLog {
		if e.MetadataFile == nil || *e.MetadataFile == "" || e.TimestampMs == nil {
			return nil, fmt.Errorf("metadata-log[%d] lacks metadata-file or timestamp-ms", i)
		}
		m.MetadataLog = append(m.MetadataLog, metadataLogEntry{MetadataFile: *e.MetadataFile, TimestampMs: *e.TimestampMs})
	}
	if m.Statistics, err = decodeStatistics("statistics", r.Statistics); err != nil {
		return nil, err
	}
	if m.PartitionStatistics, err = decodeStatistics("partition-statistics", r.PartitionStatistics); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeSpec reads a partition spec, whose spec-id and field ids must be
// there (iceberg-go's reader would make them up).
func decodeSpec(raw json.RawMessage) (iceberg.PartitionSpec, error) {
	var keys struct {
		SpecID *int                         `json:"spec-id"`
		Fields []map[string]json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(raw, &keys); err != nil {
		return iceberg.PartitionSpec{}, err
	}
	if keys.SpecID == nil {
		return iceberg.PartitionSpec{}, errors.New("no spec-id")
	}
	for j, f := range keys.Fields {
		if isNull(f["field-id"]) {
			return iceberg.PartitionSpec{}, fmt.Errorf("fields[%d] has no field-id", j)
		}
	}
	var spec iceberg.PartitionSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return iceberg.PartitionSpec{}, err
	}
	return spec, nil
}

func decodeStatistics(what string, raws []json.RawMessage) ([]statisticsFile, error) {
	var out []statisticsFile
	for i, raw := range raws {
		var s struct {
			SnapshotID *int64 `json:"snapshot-id"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || s.SnapshotID == nil {
			return nil, fmt.Errorf("%s[%d] has no snapshot-id", what, i)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", what, i, err)
		}
		out = append(out, statisticsFile{snapshotID: *s.SnapshotID, raw: buf.Bytes()})
	}
	return out, nil
}

// validate checks that the ids of a version agree, which the reader and the
// builders both rely on.
func (m *tableMetadata) validate() error {
	switch {
	case m.FormatVersion != 2:
		return fmt.Errorf("format version %d, pswap writes 2", m.FormatVersion)
	case m.TableUUID == uuid.Nil:
		return errors.New("table-uuid is the nil UUID")
	case m.Location == "":
		return errors.New("location is empty")
	case m.LastSequenceNumber < 0:
		return fmt.Errorf("last-sequence-number %d is negative", m.LastSequenceNumber)
	case m.LastColumnID < 0:
		return fmt.Errorf("last-column-id %d is negative", m.LastColumnID)
	}
	if err := m.validateSchemas(); err != nil {
		return err
	}
	if err := m.validateSpecs(); err != nil {
		return err
	}
	if err := m.validateSortOrders(); err != nil {
		return err
	}
	if err := m.validateSnapshots(); err != nil {
		return err
	}
	return m.validateLogs()
}

func (m *tableMetadata) validateSchemas() error {
	if len(m.Schemas) == 0 {
		return errors.New("no schemas")
	}
	seen := map[int]bool{}
	for _, s := range m.Schemas {
		if seen[s.ID] {
			return fmt.Errorf("schema id %d is used twice", s.ID)
		}
		seen[s.ID] = true
		if h := s.HighestFieldID(); h > m.LastColumnID {
			return fmt.Errorf("schema %d has field id %d, past last-column-id %d", s.ID, h, m.LastColumnID)
		}
	}
	if !seen[m.CurrentSchemaID] {
		return fmt.Errorf("current-schema-id %d is not among the schemas", m.CurrentSchemaID)
	}
	return nil
}

func (m *tableMetadata) validateSpecs() error {
	if len(m.PartitionSpecs) == 0 {
		return errors.New("no partition specs")
	}
	seen := map[int]bool{}
	for _, s := range m.PartitionSpecs {
		if seen[s.ID()] {
			return fmt.Errorf("partition spec id %d is used twice", s.ID())
		}
		seen[s.ID()] = true
		if l := s.LastAssignedFieldID(); l > m.LastPartitionID {
			return fmt.Errorf("partition spec %d has field id %d, past last-partition-id %d", s.ID(), l, m.LastPartitionID)
		}
	}
	if !seen[m.DefaultSpecID] {
		return fmt.Errorf("default-spec-id %d is not among the partition specs", m.DefaultSpecID)
	}
	spec, sc := m.defaultSpec(), m.currentSchema()
	for _, f := range spec.Fields() {
		if len(f.SourceIDs) == 0 {
			return fmt.Errorf("partition field %q has no source column", f.Name)
		}
		for _, id := range f.SourceIDs {
			if _, ok := sc.FindFieldByID(id); !ok {
				return fmt.Errorf("partition field %q's source column %d is not in the current schema", f.Name, id)
			}
		}
	}
	return nil
}

func (m *tableMetadata) validateSortOrders() error {
	seen := map[int]bool{}
	for _, o := range m.SortOrders {
		switch {
		case o.OrderID < 0:
			return fmt.Errorf("sort order id %d is negative", o.OrderID)
		case seen[o.OrderID]:
			return fmt.Errorf("sort order id %d is used twice", o.OrderID)
		case o.OrderID == 0 && len(o.Fields) > 0:
			return errors.New("sort order 0 (unsorted) has fields")
		case o.OrderID != 0 && len(o.Fields) == 0:
			return fmt.Errorf("sort order %d has no fields", o.OrderID)
		}
		seen[o.OrderID] = true
	}
	if m.DefaultSortOrderID < 0 || m.DefaultSortOrderID != 0 && !seen[m.DefaultSortOrderID] {
		return fmt.Errorf("default-sort-order-id %d is not among the sort orders", m.DefaultSortOrderID)
	}
	return nil
}

var operations = []string{"append", "replace", "overwrite", "delete"}

func (m *tableMetadata) validateSnapshots() error {
	byID := map[int64]*Snapshot{}
	for i := range m.Snapshots {
		s := &m.Snapshots[i]
		switch {
		case s.SnapshotID <= 0:
			return fmt.Errorf("snapshot id %d is not positive", s.SnapshotID)
		case byID[s.SnapshotID] != nil:
			return fmt.Errorf("snapshot id %d is used twice", s.SnapshotID)
		case s.SequenceNumber < 0 || s.SequenceNumber > m.LastSequenceNumber:
			return fmt.Errorf("snapshot %d has sequence number %d, outside 0..last-sequence-number %d", s.SnapshotID, s.SequenceNumber, m.LastSequenceNumber)
		case s.ManifestList == "":
			return fmt.Errorf("snapshot %d has no manifest-list", s.SnapshotID)
		case !slices.Contains(operations, s.Summary["operation"]):
			return fmt.Errorf("snapshot %d has operation %q", s.SnapshotID, s.Summary["operation"])
		case s.ParentSnapshotID != nil && *s.ParentSnapshotID == s.SnapshotID:
			return fmt.Errorf("snapshot %d is its own parent", s.SnapshotID)
		case s.SchemaID != nil && m.schema(*s.SchemaID) == nil:
			return fmt.Errorf("snapshot %d has schema-id %d, which is not among the schemas", s.SnapshotID, *s.SchemaID)
		}
		byID[s.SnapshotID] = s
	}
	for _, s := range m.Snapshots {
		// A parent may have been expired; one that is still there is older.
		if s.ParentSnapshotID == nil {
			continue
		}
		if p := byID[*s.ParentSnapshotID]; p != nil && p.SequenceNumber >= s.SequenceNumber {
			return fmt.Errorf("snapshot %d has sequence number %d, its parent %d has %d", s.SnapshotID, s.SequenceNumber, p.SnapshotID, p.SequenceNumber)
		}
	}
	if cur := m.CurrentSnapshotID; cur != nil && byID[*cur] == nil {
		return fmt.Errorf("current-snapshot-id %d is not among the snapshots", *cur)
	}
	for name, r := range m.Refs {
		switch {
		case r.Type != "branch" && r.Type != "tag":
			return fmt.Errorf("ref %q has type %q", name, r.Type)
		case byID[r.SnapshotID] == nil:
			return fmt.Errorf("ref %q names snapshot %d, which is not among the snapshots", name, r.SnapshotID)
		case r.MinSnapshotsToKeep != nil && *r.MinSnapshotsToKeep <= 0,
			r.MaxSnapshotAgeMs != nil && *r.MaxSnapshotAgeMs <= 0,
			r.MaxRefAgeMs != nil && *r.MaxRefAgeMs <= 0:
			return fmt.Errorf("ref %q has a retention that is not positive", name)
		case r.Type == "tag" && (r.MinSnapshotsToKeep != nil || r.MaxSnapshotAgeMs != nil):
			return fmt.Errorf("tag %q has a branch's retention", name)
		}
	}
	main, ok := m.Refs[mainBranch]
	switch {
	case m.CurrentSnapshotID == nil && ok:
		return fmt.Errorf("the main branch names snapshot %d, and there is no current snapshot", main.SnapshotID)
	case m.CurrentSnapshotID == nil:
	case main.SnapshotID != *m.CurrentSnapshotID:
		return fmt.Errorf("the main branch names snapshot %d, the current snapshot is %d", main.SnapshotID, *m.CurrentSnapshotID)
	case main.Type != "branch":
		return fmt.Errorf("main is a %s, not a branch", main.Type)
	}
	return nil
}

// validateLogs checks that the logs are in time order, within a minute of
// clock skew, and end no later than last-updated-ms (as iceberg-go does).
func (m *tableMetadata) validateLogs() error {
	check := func(what string, ts []int64) error {
		for i := 1; i < len(ts); i++ {
			if ts[i]-ts[i-1] < -oneMinuteMs {
				return fmt.Errorf("%s[%d] at %d is before the entry before it (%d)", what, i, ts[i], ts[i-1])
			}
		}
		if len(ts) > 0 && m.LastUpdatedMS-ts[len(ts)-1] < -oneMinuteMs {
			return fmt.Errorf("last-updated-ms %d is before the last %s entry (%d)", m.LastUpdatedMS, what, ts[len(ts)-1])
		}
		return nil
	}
	ts := make([]int64, 0, len(m.SnapshotLog))
	for _, e := range m.SnapshotLog {
		ts = append(ts, e.TimestampMs)
	}
	if err := check("snapshot-log", ts); err != nil {
		return err
	}
	ts = ts[:0]
	for _, e := range m.MetadataLog {
		ts = append(ts, e.TimestampMs)
	}
	return check("metadata-log", ts)
}
