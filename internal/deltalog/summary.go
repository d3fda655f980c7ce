package deltalog

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
)

// A checkpoint summary is what the publish of an append needs of the
// state a checkpoint holds, without its files: the protocol, the
// metaData, and each pswap partition's generation, sequence number, file
// count and bytes. pswap writes one beside each checkpoint it writes, before
// pointing _last_checkpoint at it, under a folder of the log that no
// Delta reader takes for a log file (summaryKey):
//
//	_delta_log/_pswap/checkpoint-<20-digit version>.json.gz
//
// gzip-compressed (its partitions' names and generation ids compress
// about fivefold: 24 KB for 1,000 partitions, against 84 KB for the
// checkpoint of their files), of the JSON document
//
//	{"format": "pswap-delta-summary", "version": "1.0",
//	 "delta_version": N, "protocol": {...}, "metaData": {...},
//	 "partitions": [{"partition": "dt=2026-11-29", "generation": "...",
//	                 "seq": 7, "files": 12, "bytes": 81920}, ...]}
//
// protocol and metaData are the Delta actions' objects. A summary is
// written only of a state whose every file is pswap's; it is a hint: a
// publish that finds none, or one that does not decode, replays the
// checkpoint as before. Expire deletes it with its checkpoint.

const (
	summaryDir     = LogDir + "_pswap/"
	summaryFormat  = "pswap-delta-summary"
	summaryVersion = "1.0"
	// maxSummaryBytes bounds a summary (a table of 100,000 partitions is
	// about 12 MB).
	maxSummaryBytes = 64 << 20
	// maxSummaryParts bounds its partitions.
	maxSummaryParts = 1 << 20
)

// summaryKey is the store key of the summary of version v's checkpoint.
func summaryKey(v int64) string { return fmt.Sprintf("%scheckpoint-%020d.json.gz", summaryDir, v) }

// parseSummaryKey returns the version of a summary's key.
func parseSummaryKey(key string) (int64, bool) {
	var v int64
	name, ok := bytes.CutPrefix([]byte(key), []byte(summaryDir+"checkpoint-"))
	if !ok || len(name) != versionDigits+len(".json.gz") || !bytes.HasSuffix(name, []byte(".json.gz")) {
		return 0, false
	}
	for _, c := range name[:versionDigits] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, v >= 0
}

// packSummary compresses an encoded summary for the store.
func packSummary(doc []byte) ([]byte, error) {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write(doc); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// unpackSummary decompresses a stored summary (at most maxSummaryBytes):
// ErrCorrupt when it is not gzip or is larger.
func unpackSummary(data []byte, v int64) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint summary of version %d: %v", ErrCorrupt, v, err)
	}
	doc, err := io.ReadAll(io.LimitReader(z, maxSummaryBytes+1))
	if err == nil && len(doc) > maxSummaryBytes {
		err = fmt.Errorf("more than %d bytes", maxSummaryBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint summary of version %d: %v", ErrCorrupt, v, err)
	}
	return doc, nil
}

// partSummary is what a summary (or the log's tail) says of one pswap
// partition: the generation and sequence number its newest files are
// tagged with, how many files it has and their bytes.
type partSummary struct {
	gen   string
	seq   int64
	files int
	bytes int64
}

// summary is a decoded checkpoint summary.
type summary struct {
	version  int64
	protocol *Protocol
	metadata *Metadata
	parts    map[string]partSummary
}

// encodeSummary writes the summary of s, whose partitions are parts.
func encodeSummary(s *State, parts map[string]*part) ([]byte, error) {
	if s.Protocol == nil || s.Metadata == nil {
		return nil, fmt.Errorf("%w: a checkpoint summary needs the protocol and the metadata", ErrInvalid)
	}
	type partDoc struct {
		Partition  string `json:"partition"`
		Generation string `json:"generation"`
		Seq        int64  `json:"seq"`
		Files      int    `json:"files"`
		Bytes      int64  `json:"bytes"`
	}
	m := *s.Metadata
	m.PartitionColumns = nonNil(m.PartitionColumns)
	m.Configuration = nonNilMap(m.Configuration)
	m.Format.Options = nonNilMap(m.Format.Options)
	doc := struct {
		Format       string    `json:"format"`
		Version      string    `json:"version"`
		DeltaVersion int64     `json:"delta_version"`
		Protocol     *Protocol `json:"protocol"`
		Metadata     *Metadata `json:"metaData"`
		Partitions   []partDoc `json:"partitions"`
	}{Format: summaryFormat, Version: summaryVersion, DeltaVersion: s.Version, Protocol: s.Protocol, Metadata: &m, Partitions: []partDoc{}}
	for _, name := range sortedKeys(parts) {
		p := parts[name]
		doc.Partitions = append(doc.Partitions, partDoc{Partition: name, Generation: p.gen, Seq: p.seq, Files: len(p.files), Bytes: p.bytes()})
	}
	return json.Marshal(doc)
}

// decodeSummary reads a summary strictly: it must be of version v, name
// each partition once, with a valid partition name and generation id, a
// positive sequence number and at least one file. Errors match
// ErrCorrupt.
func decodeSummary(data []byte, v int64) (*summary, error) {
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: maxSummaryBytes, MaxDepth: 64})
	if p != nil {
		return nil, fmt.Errorf("%w: checkpoint summary of version %d: %v", ErrCorrupt, v, p)
	}
	r := strictjson.NewReader(top, summaryVersion)
	r.Known("format", "version", "delta_version", "protocol", "metaData", "partitions")
	if f := r.Str("format", true); r.Err() == nil && f != summaryFormat {
		r.Fail("format", "want %q", summaryFormat)
	}
	if ver := r.Str("version", true); r.Err() == nil && ver != summaryVersion {
		r.Fail("version", "%q: this reader knows %s", ver, summaryVersion)
	}
	s := &summary{version: r.Int("delta_version", 64), parts: map[string]partSummary{}}
	if r.Err() == nil && s.version != v {
		r.Fail("delta_version", "%d, under the key of version %d", s.version, v)
	}
	if o := r.Object("protocol", true); o != nil {
		s.protocol = decodeProtocol(o)
	}
	if o := r.Object("metaData", true); o != nil {
		s.metadata = decodeMetadata(o)
	}
	for i, o := range r.Objects("partitions", maxSummaryParts, "partitions") {
		o.Known("partition", "generation", "seq", "files", "bytes")
		name := o.Str("partition", true)
		ps := partSummary{gen: o.Str("generation", true), seq: o.Int("seq", 64), files: int(o.Int("files", 32)), bytes: o.Int("bytes", 64)}
		if o.Err() != nil {
			break
		}
		switch _, dup := s.parts[name]; {
		case partition.Validate(name) != nil:
			o.Fail("partition", "%q is not a partition", name)
		case dup:
			o.Fail("partition", "%q is named twice", name)
		case manifest.ValidateGenerationID(ps.gen) != nil:
			o.Fail("generation", "%q is not a generation id", ps.gen)
		case ps.seq < 1 || ps.files < 1 || ps.bytes < 0:
			o.Fail("seq", "partition %d: seq %d and files %d must be positive, bytes %d not negative", i, ps.seq, ps.files, ps.bytes)
		}
		s.parts[name] = ps
	}
	if p := r.Err(); p != nil {
		return nil, fmt.Errorf("%w: checkpoint summary of version %d: %v", ErrCorrupt, v, p)
	}
	if s.protocol == nil || s.metadata == nil {
		return nil, fmt.Errorf("%w: checkpoint summary of version %d has no protocol or metaData", ErrCorrupt, v)
	}
	return s, nil
}
