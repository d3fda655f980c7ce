package swap

import (
	"encoding/json"
	"fmt"

	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
)

// encodeStaged validates and encodes a staged record.
func encodeStaged(r *StagedRecord) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(r, "", "  ")
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
	r := readStaged(rd, format)
	if p := rd.Err(); p != nil {
		return nil, stagedProblem(p)
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

// readStaged reads the fields of a staged record (of format format).
func readStaged(rd *strictjson.Reader, format string) *StagedRecord {
	r := &StagedRecord{Format: format, Version: rd.Str("version", true)}
	_, minor, _ := strictjson.ParseVersion(r.Version)
	_, ours, _ := strictjson.ParseVersion(manifest.Version)
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
	if c := rd.Object("content", false); c != nil {
		r.Content = readContent(c)
	}
	r.Equivalent = rd.Strings("equivalent", 4)
	r.StagedAt = rd.Time("staged_at")
	if rd.Has("data_layout") {
		r.DataLayout = int(rd.Int("data_layout", 8))
	}
	return r
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

// readContent reads content as encoding/json writes manifest.Content.
func readContent(o *strictjson.Reader) *manifest.Content {
	o.Known("files", "rows", "bytes", "content_checksum", "schema")
	c := &manifest.Content{Rows: o.Int("rows", 64), Bytes: o.Int("bytes", 64),
		ContentChecksum: o.Str("content_checksum", true), Schema: o.Str("schema", false)}
	if o.Null("files") {
		return c // an empty generation, as an earlier encoder wrote it
	}
	for _, f := range o.Objects("files", manifest.MaxFiles, "files") {
		f.Known("path", "size", "rows", "checksum")
		c.Files = append(c.Files, manifest.File{Path: f.Str("path", true), Size: f.Int("size", 64),
			Rows: f.Int("rows", 64), Checksum: f.Str("checksum", true)})
	}
	return c
}
