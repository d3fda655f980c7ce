package swap

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
)

// encodeStaged validates and encodes a staged record. Content's files carry
// their column statistics (manifest.File's JSON form omits them), in a
// record of version manifest.StatsVersion, which readers before it ignore.
func encodeStaged(r *StagedRecord) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	doc := stagedDoc{Format: r.Format, Version: r.Version, Partition: r.Partition, Generation: r.Generation,
		Reserved: r.Reserved, Base: r.Base, BaseETag: r.BaseETag, Equivalent: r.Equivalent,
		StagedAt: r.StagedAt, DataLayout: r.DataLayout}
	if c := r.Content; c != nil {
		doc.Content = &stagedContent{Rows: c.Rows, Bytes: c.Bytes, ContentChecksum: c.ContentChecksum, Schema: c.Schema}
		if c.Files != nil {
			doc.Content.Files = make([]stagedFile, len(c.Files))
		}
		for i, f := range c.Files {
			doc.Content.Files[i] = stagedFile{Path: f.Path, Size: f.Size, Rows: f.Rows, Checksum: f.Checksum}
			if f.Columns != nil {
				doc.Content.Files[i].Columns = manifest.EncodeColumns(f.Columns)
			}
		}
		if c.HasStats() {
			doc.Version = manifest.StatsVersion
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// stagedDoc is a staged record as encodeStaged writes it (StagedRecord's
// fields, in its order).
type stagedDoc struct {
	Format     string            `json:"format"`
	Version    string            `json:"version"`
	Partition  string            `json:"partition"`
	Generation string            `json:"generation"`
	Reserved   bool              `json:"reserved,omitempty"`
	Base       *manifest.Pointer `json:"base,omitempty"`
	BaseETag   string            `json:"base_etag,omitempty"`
	Content    *stagedContent    `json:"content,omitempty"`
	Equivalent []string          `json:"equivalent,omitempty"`
	StagedAt   time.Time         `json:"staged_at"`
	DataLayout int               `json:"data_layout,omitempty"`
}

// stagedContent is manifest.Content with its files' statistics.
type stagedContent struct {
	Files           []stagedFile `json:"files"`
	Rows            int64        `json:"rows"`
	Bytes           int64        `json:"bytes"`
	ContentChecksum string       `json:"content_checksum"`
	Schema          string       `json:"schema,omitempty"`
}

// stagedFile is manifest.File with its statistics (version 1.2).
type stagedFile struct {
	Path     string          `json:"path"`
	Size     int64           `json:"size"`
	Rows     int64           `json:"rows"`
	Checksum string          `json:"checksum"`
	Columns  json.RawMessage `json:"columns,omitempty"`
}

// decodeStaged decodes and validates a staged record, as strictly as
// manifest.Decode reads a manifest: one JSON object of valid UTF-8, no
// duplicate keys, nothing after it, names matched exactly, no null, no
// field that its version does not know. Two leniencies keep records that
// earlier versions wrote readable: a staged generation without files may
// say "files": null, and a base pointer without "files" counts 0 of them.
// A record written by an earlier version still (a manifest document,
// without a fence) is accepted: its Base is unknown, so the commit is
// fenced from the pointer it reads then. Errors match manifest.ErrInvalid.
func decodeStaged(data []byte) (*StagedRecord, error) {
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: maxStagedBytes})
	if p != nil {
		return nil, stagedProblem(p)
	}
	rd := strictjson.NewReader(top, manifest.Version)
	format := rd.Str("format", true)
	if format == manifest.FormatManifest {
		m, err := manifest.Decode(data)
		if err != nil {
			return nil, err
		}
		c := m.Content
		return &StagedRecord{Format: formatStaged, Version: manifest.Version, Partition: m.Partition,
			Generation: m.Generation, Content: &c, StagedAt: m.CreatedAt, legacy: true}, nil
	}
	r, err := readStaged(rd, format)
	if p := rd.Err(); p != nil {
		return nil, stagedProblem(p)
	}
	if err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.Content != nil {
		r.Content.Equivalent = r.Equivalent
	}
	return r, nil
}

func stagedProblem(p *strictjson.Problem) error {
	return fmt.Errorf("staged record: %w: %v", manifest.ErrInvalid, p)
}

// readStaged reads the fields of a staged record (of format format); the
// error is a file's invalid statistics.
func readStaged(rd *strictjson.Reader, format string) (*StagedRecord, error) {
	r := &StagedRecord{Format: format, Version: rd.Str("version", true)}
	_, minor, _ := strictjson.ParseVersion(r.Version)
	_, ours, _ := strictjson.ParseVersion(manifest.StatsVersion)
	rd.SetLenient(minor > ours) // a newer minor version's additions are ignored
	rd.Known("format", "version", "partition", "generation", "reserved", "base", "base_etag",
		"content", "equivalent", "staged_at", "data_layout")
	r.Partition = rd.Str("partition", true)
	r.Generation = rd.Str("generation", true)
	r.Reserved = rd.Bool("reserved", false)
	if b := rd.Object("base", false); b != nil {
		r.Base = readPointer(b)
	}
	r.BaseETag = rd.Str("base_etag", false)
	var err error
	if c := rd.Object("content", false); c != nil {
		r.Content, err = readContent(c, minor >= 2)
	}
	r.Equivalent = rd.Strings("equivalent", 4)
	r.StagedAt = rd.Time("staged_at")
	if rd.Has("data_layout") {
		r.DataLayout = int(rd.Int("data_layout", 8))
	}
	return r, err
}

// readPointer reads a pointer as encoding/json writes manifest.Pointer.
func readPointer(o *strictjson.Reader) *manifest.Pointer {
	o.Known("format", "version", "partition", "generation", "seq", "parent", "run_id", "rows",
		"bytes", "files", "content_checksum", "committed_at", "history", "history_truncated", "moved_to")
	p := &manifest.Pointer{
		Format: o.Str("format", true), Version: o.Str("version", true),
		Partition: o.Str("partition", true), Generation: o.Str("generation", true),
		Seq: o.Int("seq", 64), Parent: o.Str("parent", false), RunID: o.Str("run_id", false),
		Rows: o.Int("rows", 64), Bytes: o.Int("bytes", 64),
		ContentChecksum: o.Str("content_checksum", true), CommittedAt: o.Time("committed_at"),
		HistoryTruncated: o.Bool("history_truncated", false),
	}
	if o.Has("files") {
		p.Files = int(o.Int("files", 32))
	}
	if o.Has("history") {
		for _, h := range o.Objects("history", manifest.MaxHistory, "entries") {
			h.Known("generation", "data_generation", "run_id", "committed_at", "rows")
			p.History = append(p.History, manifest.HistoryEntry{
				Generation: h.Str("generation", true), DataGeneration: h.Str("data_generation", false),
				RunID: h.Str("run_id", false), CommittedAt: h.Time("committed_at"), Rows: h.Int("rows", 64),
			})
		}
	}
	return p
}

// readContent reads content as encodeStaged writes it: manifest.Content's
// JSON form, with files[].columns in a record of version 1.2 (stats).
func readContent(o *strictjson.Reader, stats bool) (*manifest.Content, error) {
	o.Known("files", "rows", "bytes", "content_checksum", "schema")
	c := &manifest.Content{Rows: o.Int("rows", 64), Bytes: o.Int("bytes", 64),
		ContentChecksum: o.Str("content_checksum", true), Schema: o.Str("schema", false)}
	if o.Null("files") {
		return c, nil // an empty generation, as an earlier encoder wrote it
	}
	for _, f := range o.Objects("files", manifest.MaxFiles, "files") {
		if stats {
			f.Known("path", "size", "rows", "checksum", "columns")
		} else {
			f.Known("path", "size", "rows", "checksum")
		}
		file := manifest.File{Path: f.Str("path", true), Size: f.Int("size", 64),
			Rows: f.Int("rows", 64), Checksum: f.Str("checksum", true)}
		if stats && f.Has("columns") {
			cols, err := manifest.DecodeColumns("staged record", f.Path()+".columns", f.Raw("columns", true))
			if err != nil {
				return nil, err
			}
			file.Columns = cols
		}
		c.Files = append(c.Files, file)
	}
	return c, nil
}
