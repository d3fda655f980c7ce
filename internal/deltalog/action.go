package deltalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pswap/pswap/internal/strictjson"
)

// The actions of a Delta log entry that pswap writes or must understand
// (PROTOCOL.md, "Actions"). Fields are the protocol's, by its names.

// Protocol is the protocol action: the lowest reader and writer versions
// (and, from reader 3 / writer 7, the table features) a client needs.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Format is metaData.format.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      int64             `json:"createdTime,omitempty"`
}

// Add is the add action: a data file that is part of the table.
type Add struct {
	Path             string             `json:"path"` // a URI: relative to the table root, or absolute
	PartitionValues  map[string]*string `json:"partitionValues"`
	Size             int64              `json:"size"`
	ModificationTime int64              `json:"modificationTime"` // milliseconds since the epoch
	DataChange       bool               `json:"dataChange"`
	Stats            string             `json:"stats,omitempty"` // JSON: {"numRecords":N}
	Tags             map[string]string  `json:"tags,omitempty"`
	// Foreign names what the decoder saw that pswap never writes (a
	// deletion vector, row tracking): such a file is another writer's.
	Foreign string `json:"-"`
}

// Remove is the remove action: a file that left the table (a tombstone,
// kept for VACUUM's retention).
type Remove struct {
	Path                 string             `json:"path"`
	DeletionTimestamp    int64              `json:"deletionTimestamp,omitempty"`
	DataChange           bool               `json:"dataChange"`
	ExtendedFileMetadata bool               `json:"extendedFileMetadata,omitempty"`
	PartitionValues      map[string]*string `json:"partitionValues,omitempty"`
	Size                 int64              `json:"size,omitempty"`
	Tags                 map[string]string  `json:"tags,omitempty"`
}

// Txn is the txn action: the latest version an application (appId: for
// pswap the run id) committed, which Delta's idempotent writers check.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated int64  `json:"lastUpdated,omitempty"`
}

// CommitInfo is the commitInfo action pswap writes (other writers' are
// read as raw JSON: its fields are free-form).
type CommitInfo struct {
	Timestamp           int64             `json:"timestamp"`
	Operation           string            `json:"operation"`
	OperationParameters map[string]string `json:"operationParameters"`
	EngineInfo          string            `json:"engineInfo,omitempty"`
	IsBlindAppend       bool              `json:"isBlindAppend"`
	// Raw is another writer's commitInfo as it was (decoding only).
	Raw json.RawMessage `json:"-"`
}

// Action is one line of a log entry: exactly one field is set.
type Action struct {
	Protocol   *Protocol
	Metadata   *Metadata
	Add        *Add
	Remove     *Remove
	Txn        *Txn
	CommitInfo *CommitInfo
	// Other is the name of an action pswap does not interpret (cdc,
	// domainMetadata, checkpointMetadata, sidecar): kept so that a
	// replay can refuse what changes the data (cdc is harmless).
	Other string
}

// Limits of what the decoder reads.
const (
	// MaxCommitBytes bounds a log entry (a commit of 100,000 files is
	// about 60 MB).
	MaxCommitBytes = 256 << 20
	// MaxLineBytes bounds one action.
	MaxLineBytes = 16 << 20
	// MaxPathBytes bounds an add or remove path.
	MaxPathBytes = 4096
	// MaxMapEntries bounds partitionValues, tags and configuration.
	MaxMapEntries = 1000
)

// EncodeCommit writes a log entry: one action per line, each ending in a
// newline, in the order given.
func EncodeCommit(actions []Action) ([]byte, error) {
	var b bytes.Buffer
	for i, a := range actions {
		var (
			name string
			v    any
		)
		switch {
		case a.CommitInfo != nil:
			name, v = "commitInfo", a.CommitInfo
		case a.Protocol != nil:
			name, v = "protocol", a.Protocol
		case a.Metadata != nil:
			// The protocol's non-nullable collections as empty, not null.
			m := *a.Metadata
			m.PartitionColumns = nonNil(m.PartitionColumns)
			m.Configuration = nonNilMap(m.Configuration)
			m.Format.Options = nonNilMap(m.Format.Options)
			name, v = "metaData", &m
		case a.Txn != nil:
			name, v = "txn", a.Txn
		case a.Remove != nil:
			name, v = "remove", a.Remove
		case a.Add != nil:
			ad := *a.Add
			if ad.PartitionValues == nil {
				ad.PartitionValues = map[string]*string{}
			}
			name, v = "add", &ad
		default:
			return nil, fmt.Errorf("%w: action %d has no content", ErrInvalid, i)
		}
		body, err := json.Marshal(map[string]any{name: v})
		if err != nil {
			return nil, fmt.Errorf("encode %s action: %w", name, err)
		}
		b.Write(body)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// DecodeCommit reads a log entry strictly: valid UTF-8 JSON objects, one
// per line (empty lines aside), each with exactly one action, no
// duplicate keys, the fields pswap relies on present and typed. Fields a
// newer writer adds are ignored, as the protocol asks of readers; actions
// pswap does not interpret are named in Action.Other. Errors match
// ErrCorrupt and name the line and field.
func DecodeCommit(data []byte) ([]Action, error) {
	if len(data) > MaxCommitBytes {
		return nil, fmt.Errorf("%w: log entry of %d bytes, more than %d", ErrCorrupt, len(data), MaxCommitBytes)
	}
	var out []Action
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		a, err := decodeLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrCorrupt, n, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func decodeLine(line []byte) (Action, error) {
	top, p := strictjson.Parse(line, strictjson.Limits{MaxBytes: MaxLineBytes, MaxDepth: 64})
	if p != nil {
		return Action{}, p
	}
	if len(top) != 1 {
		return Action{}, fmt.Errorf("%d fields, an action has exactly one (%s)", len(top), strings.Join(slices.Sorted(maps.Keys(top)), ", "))
	}
	r := strictjson.NewReader(top, "Delta protocol")
	r.SetLenient(true)
	var a Action
	for name := range top {
		if name != "commitInfo" && r.Null(name) {
			return a, fmt.Errorf("%s: null is not an action", name)
		}
		switch name {
		case "add":
			a.Add = decodeAdd(r.Object(name, true))
		case "remove":
			a.Remove = decodeRemove(r.Object(name, true))
		case "metaData":
			a.Metadata = decodeMetadata(r.Object(name, true))
		case "protocol":
			a.Protocol = decodeProtocol(r.Object(name, true))
		case "txn":
			o := r.Object(name, true)
			a.Txn = &Txn{AppID: str(o, "appId", true), Version: o.Int("version", 64)}
			if o != nil && o.Has("lastUpdated") && !o.Null("lastUpdated") {
				a.Txn.LastUpdated = o.Int("lastUpdated", 64)
			}
		case "commitInfo":
			a.CommitInfo = &CommitInfo{Raw: slices.Clone(top[name])}
			if len(top[name]) == 0 || top[name][0] != '{' {
				r.Fail(name, "must be an object")
			}
		case "":
			r.Fail(name, "an action without a name")
		default:
			a.Other = name
		}
	}
	if p := r.Err(); p != nil {
		return Action{}, p
	}
	return a, nil
}

// str reads a string field that other writers may write as null (absent).
func str(r *strictjson.Reader, name string, required bool) string {
	if r == nil {
		return ""
	}
	if r.Null(name) {
		if required {
			r.Fail(name, "null is not allowed")
		}
		return ""
	}
	return r.Str(name, required)
}

func optInt(r *strictjson.Reader, name string) int64 {
	if r == nil || !r.Has(name) || r.Null(name) {
		return 0
	}
	return r.Int(name, 64)
}

func optBool(r *strictjson.Reader, name string) bool {
	if r == nil || !r.Has(name) || r.Null(name) {
		return false
	}
	return r.Bool(name, true)
}

// nullableMap reads an object of strings whose values may be null
// (partitionValues).
func nullableMap(r *strictjson.Reader, name string, required bool) map[string]*string {
	if r == nil {
		return nil
	}
	if r.Null(name) {
		if required {
			r.Fail(name, "null is not allowed")
		}
		return nil
	}
	raw := r.Raw(name, required)
	if raw == nil {
		return nil
	}
	var m map[string]*string
	if err := json.Unmarshal(raw, &m); err != nil || raw[0] != '{' {
		r.Fail(name, "must be an object of strings or nulls")
		return nil
	}
	if len(m) > MaxMapEntries {
		r.Fail(name, "%d entries, at most %d", len(m), MaxMapEntries)
		return nil
	}
	return m
}

// stringMap reads an object of strings (null values are dropped).
func stringMap(r *strictjson.Reader, name string) map[string]string {
	m := nullableMap(r, name, false)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func checkPath(r *strictjson.Reader, p string) {
	if r == nil || r.Err() != nil {
		return
	}
	switch {
	case p == "":
		r.Fail("path", "empty")
	case len(p) > MaxPathBytes:
		r.Fail("path", "%d bytes, at most %d", len(p), MaxPathBytes)
	}
}

func decodeAdd(o *strictjson.Reader) *Add {
	if o == nil {
		return &Add{}
	}
	a := &Add{
		Path:             str(o, "path", true),
		PartitionValues:  nullableMap(o, "partitionValues", true),
		Size:             o.Int("size", 64),
		ModificationTime: o.Int("modificationTime", 64),
		DataChange:       o.Bool("dataChange", true),
		Stats:            str(o, "stats", false),
		Tags:             stringMap(o, "tags"),
	}
	checkPath(o, a.Path)
	if a.Size < 0 {
		o.Fail("size", "%d is negative", a.Size)
	}
	for _, f := range []string{"deletionVector", "baseRowId", "clusteringProvider"} {
		if o.Has(f) && !o.Null(f) {
			a.Foreign = f
		}
	}
	return a
}

func decodeRemove(o *strictjson.Reader) *Remove {
	if o == nil {
		return &Remove{}
	}
	rm := &Remove{
		Path:                 str(o, "path", true),
		DeletionTimestamp:    optInt(o, "deletionTimestamp"),
		DataChange:           o.Bool("dataChange", true),
		ExtendedFileMetadata: optBool(o, "extendedFileMetadata"),
		PartitionValues:      nullableMap(o, "partitionValues", false),
		Size:                 optInt(o, "size"),
		Tags:                 stringMap(o, "tags"),
	}
	checkPath(o, rm.Path)
	return rm
}

func decodeMetadata(o *strictjson.Reader) *Metadata {
	if o == nil {
		return &Metadata{}
	}
	m := &Metadata{
		ID:            str(o, "id", true),
		Name:          str(o, "name", false),
		Description:   str(o, "description", false),
		SchemaString:  str(o, "schemaString", true),
		Configuration: stringMap(o, "configuration"),
		CreatedTime:   optInt(o, "createdTime"),
	}
	if f := o.Object("format", true); f != nil {
		m.Format = Format{Provider: str(f, "provider", true), Options: stringMap(f, "options")}
	}
	if !o.Null("partitionColumns") {
		m.PartitionColumns = o.Strings("partitionColumns", MaxMapEntries)
	}
	return m
}

func decodeProtocol(o *strictjson.Reader) *Protocol {
	if o == nil {
		return &Protocol{}
	}
	p := &Protocol{
		MinReaderVersion: int(o.Int("minReaderVersion", 32)),
		MinWriterVersion: int(o.Int("minWriterVersion", 32)),
	}
	if o.Has("readerFeatures") && !o.Null("readerFeatures") {
		p.ReaderFeatures = o.Strings("readerFeatures", MaxMapEntries)
	}
	if o.Has("writerFeatures") && !o.Null("writerFeatures") {
		p.WriterFeatures = o.Strings("writerFeatures", MaxMapEntries)
	}
	if p.MinReaderVersion < 1 || p.MinWriterVersion < 1 {
		o.Fail("minReaderVersion", "versions start at 1 (%d, %d)", p.MinReaderVersion, p.MinWriterVersion)
	}
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
