package manifest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/pswap/pswap/internal/strictjson"
)

// Segments: a manifest that lists the files of earlier appends by
// reference.
//
// A partition of many appends would otherwise carry a manifest that lists
// every file of the partition, read, decoded, re-encoded and written by
// every append. Instead an append's manifest (a head, version
// SegmentedVersion) lists the most recent files itself (its tail, Files)
// and the older ones through Segments: references to immutable segment
// documents, each named by the SHA-256 of its bytes, written once beside
// the data files (SegmentKey under the data generation's prefix). A
// segment of level 0 lists SegmentFiles files; one of level k+1 lists
// SegmentFanout references to segments of level k. Pack keeps a head at
// most SegmentFiles-1 tail files and SegmentFanout-1 references per level
// (a few kilobytes at any depth): an append reads and writes only the head,
// and writes a segment every SegmentFiles files.
//
// A reader expands a head (Expand) into the plain manifest it stands for:
// every file, in order (the segments', depth first, then the tail), with
// the head's totals checked against them. A version 1 reader refuses a
// head (its major version is 2: ErrUnsupportedVersion) instead of reading
// only its tail. A manifest without segments is written as before (1.x).

// SegmentedVersion is the manifest format version written for a manifest
// with segments (a head): version 2.0 is 1.2 plus the field segments. Its
// major version differs so that a reader that does not know segments
// refuses it rather than reading only the tail.
const SegmentedVersion = "2.0"

// SegmentVersion is the version of a segment document.
const SegmentVersion = "1.0"

// FormatSegment is the "format" field of a segment document.
const FormatSegment = "pswap-segment"

// Bounds of the segment tree (Pack).
const (
	// SegmentFiles is the number of files of a level-0 segment: Pack moves
	// a head's tail into one once it holds that many.
	SegmentFiles = 32
	// SegmentFanout is the number of references of a segment of level
	// 1 and more: Pack folds that many references of one level into one of
	// the next level.
	SegmentFanout = 16
	// MaxSegmentLevel bounds a segment's level (32*16^4 files exceed
	// MaxFiles).
	MaxSegmentLevel = 4
	// MaxSegmentRefs bounds the references of a head or a segment.
	MaxSegmentRefs = 1024
)

// SegmentRef is a head's (or a segment's) reference to a segment
// document: its name and what it holds.
type SegmentRef struct {
	ID    string // lowercase hex SHA-256 of the segment document's bytes
	Level int    // 0: lists files; k > 0: lists segments of level k-1
	Files int    // files under it
	Rows  int64  // their rows
	Bytes int64  // their sizes
}

// Segment is a segment document: the files (level 0) or the references
// (level > 0) of one part of a head's file list.
type Segment struct {
	Partition string
	Level     int
	Files     []File       // level 0
	Segments  []SegmentRef // level > 0
}

// SegmentKey is the store key of segment id under dataPrefix (the data
// prefix of the head's data generation, ending in "/"). The folder starts
// with "_", so readers of the data (Hive-style) never take it for data,
// and no file path of a manifest can name it.
func SegmentKey(dataPrefix, id string) string {
	return dataPrefix + SegmentsFolder + id + ".json"
}

// SegmentsFolder is the folder of a data generation's prefix that holds
// its heads' segments (SegmentKey).
const SegmentsFolder = "_segments/"

// FileCount is the number of files m stands for: its own and those of its
// segments.
func (m *Manifest) FileCount() int {
	n := len(m.Files)
	for _, s := range m.Segments {
		n += s.Files
	}
	return n
}

// Segmented reports whether m lists files by reference (a head that
// Expand turns into the plain manifest it stands for).
func (m *Manifest) Segmented() bool { return len(m.Segments) > 0 }

// ref returns the reference to segment s encoded as data.
func (s *Segment) ref(data []byte) SegmentRef {
	h := sha256.Sum256(data)
	r := SegmentRef{ID: hex.EncodeToString(h[:]), Level: s.Level}
	if s.Level == 0 {
		r.Files = len(s.Files)
		for _, f := range s.Files {
			r.Rows += f.Rows
			r.Bytes += f.Size
		}
		return r
	}
	for _, c := range s.Segments {
		r.Files += c.Files
		r.Rows += c.Rows
		r.Bytes += c.Bytes
	}
	return r
}

// EncodeSegment validates s and returns its canonical encoding and the
// reference that names it.
func EncodeSegment(s *Segment) ([]byte, SegmentRef, error) {
	if err := s.validate(); err != nil {
		return nil, SegmentRef{}, err
	}
	w := newObjWriter()
	w.str("format", FormatSegment)
	w.str("version", SegmentVersion)
	w.str("partition", s.Partition)
	w.int("level", int64(s.Level))
	if s.Level == 0 {
		w.writeFiles(s.Files)
	} else {
		w.writeSegments(s.Segments)
	}
	data, err := w.finish("segment")
	if err != nil {
		return nil, SegmentRef{}, err
	}
	return data, s.ref(data), nil
}

// DecodeSegment parses a segment document strictly and checks it against
// ref, the reference it was read by: its bytes hash to ref.ID, and its
// level and totals are ref's. Every error matches ErrInvalid.
func DecodeSegment(data []byte, ref SegmentRef) (*Segment, error) {
	s, err := decodeSegment(data, ref)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func decodeSegment(data []byte, ref SegmentRef) (*Segment, *Error) {
	const doc = "segment"
	if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != ref.ID {
		return nil, invalid(doc, "document", nil, "its SHA-256 is not the id %s it is referenced by", show(ref.ID))
	}
	s, err := parseSegment(data)
	if err != nil {
		return nil, err
	}
	if got := s.ref(data); got != ref {
		return nil, invalid(doc, "document", nil, "holds level %d, %d files, %d rows, %d bytes; its reference says level %d, %d files, %d rows, %d bytes",
			got.Level, got.Files, got.Rows, got.Bytes, ref.Level, ref.Files, ref.Rows, ref.Bytes)
	}
	return s, nil
}

// parseSegment parses and validates a segment document.
func parseSegment(data []byte) (*Segment, *Error) {
	const doc = "segment"
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: MaxDocumentBytes, MaxDepth: maxDepth})
	if p != nil {
		return nil, fromProblem(doc, p)
	}
	r := strictjson.NewReader(top, SegmentVersion)
	r.Known("format", "version", "partition", "level", "files", "segments")
	if f := r.Str("format", true); r.Err() == nil && f != FormatSegment {
		return nil, invalid(doc, "format", f, "want %q", FormatSegment)
	}
	if v := r.Str("version", true); r.Err() == nil && v != SegmentVersion {
		e := invalid(doc, "version", v, "unsupported (this reader knows %s)", SegmentVersion)
		e.Err = ErrUnsupportedVersion
		return nil, e
	}
	s := &Segment{Partition: r.Str("partition", true), Level: int(r.Int("level", 8))}
	if r.Err() == nil && (s.Level < 0 || s.Level > MaxSegmentLevel) {
		r.Fail("level", "must be between 0 and %d", MaxSegmentLevel)
	}
	if s.Level == 0 {
		s.Files = readFiles(r, "files", true)
	} else {
		s.Segments = readSegments(r, "segments")
	}
	if p := r.Err(); p != nil {
		return nil, fromProblem(doc, p)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Segment) validate() *Error {
	const doc = "segment"
	if s == nil {
		return invalid(doc, "document", nil, "nil segment")
	}
	if err := checkPartition(doc, s.Partition); err != nil {
		return err
	}
	if s.Level < 0 || s.Level > MaxSegmentLevel {
		return invalid(doc, "level", s.Level, "must be between 0 and %d", MaxSegmentLevel)
	}
	if s.Level == 0 {
		if len(s.Segments) > 0 {
			return invalid(doc, "segments", nil, "set in a segment of level 0")
		}
		if len(s.Files) == 0 {
			return invalid(doc, "files", nil, "empty")
		}
		c := Content{Files: s.Files}
		for _, f := range s.Files {
			c.Rows += f.Rows
			c.Bytes += f.Size
		}
		c.ContentChecksum = "x:0000000000000000" // not recorded in a segment
		return c.validate(doc)
	}
	if len(s.Files) > 0 {
		return invalid(doc, "files", nil, "set in a segment of level %d", s.Level)
	}
	if len(s.Segments) == 0 {
		return invalid(doc, "segments", nil, "empty")
	}
	return validateRefs(doc, "segments", s.Segments, s.Level-1)
}

// validateRefs checks references; level >= 0 requires all of that level.
func validateRefs(doc, field string, refs []SegmentRef, level int) *Error {
	if len(refs) > MaxSegmentRefs {
		return invalid(doc, field, nil, "%d references, at most %d allowed", len(refs), MaxSegmentRefs)
	}
	files := 0
	var rows int64
	for i, r := range refs {
		f := fmt.Sprintf("%s[%d]", field, i)
		if len(r.ID) != 64 || !isLowerHex(r.ID) {
			return invalid(doc, f+".id", r.ID, "must be 64 lowercase hex digits (a SHA-256)")
		}
		if r.Level < 0 || r.Level > MaxSegmentLevel || level >= 0 && r.Level != level {
			return invalid(doc, f+".level", r.Level, "out of range")
		}
		if r.Files < 1 || r.Files > MaxFiles-files {
			return invalid(doc, f+".files", r.Files, "must be at least 1, and all files at most %d", MaxFiles)
		}
		files += r.Files
		if r.Rows < 0 || rows > math.MaxInt64-r.Rows {
			return invalid(doc, f+".rows", r.Rows, "negative, or the total overflows")
		}
		rows += r.Rows
		if r.Bytes < 0 || r.Bytes > int64(r.Files)*MaxFileSize {
			return invalid(doc, f+".bytes", r.Bytes, "out of range")
		}
	}
	return nil
}

// validateHead checks a head's references and totals (its tail's files
// were checked by Content.validate... except for the totals, which cover
// the segments too: see Manifest.validate).
func (m *Manifest) validateHead(doc string) *Error {
	if err := validateRefs(doc, "segments", m.Segments, -1); err != nil {
		return err
	}
	if n := m.FileCount(); n > MaxFiles {
		return invalid(doc, "segments", nil, "%d files in all, at most %d allowed", n, MaxFiles)
	}
	return nil
}

// segmentTotals returns the files' and the segments' rows and bytes.
func (m *Manifest) segmentTotals() (rows, bytes int64) {
	for _, s := range m.Segments {
		rows += s.Rows
		bytes += s.Bytes
	}
	return rows, bytes
}

func (w *objWriter) writeSegments(refs []SegmentRef) {
	w.key("segments")
	w.buf.WriteString("[")
	for i, r := range refs {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		fmt.Fprintf(&w.buf, "\n    {\"id\": %q, \"level\": %d, \"files\": %d, \"rows\": %d, \"bytes\": %d}",
			r.ID, r.Level, r.Files, r.Rows, r.Bytes)
	}
	w.buf.WriteString("\n  ]")
}

// readSegments reads an array of segment references (required).
func readSegments(r *strictjson.Reader, name string) []SegmentRef {
	objs := r.Objects(name, MaxSegmentRefs, "references")
	if objs == nil {
		return nil
	}
	out := make([]SegmentRef, 0, len(objs))
	for _, o := range objs {
		o.Known("id", "level", "files", "rows", "bytes")
		out = append(out, SegmentRef{
			ID:    o.Str("id", true),
			Level: int(o.Int("level", 8)),
			Files: int(o.Int("files", 32)),
			Rows:  o.Int("rows", 64),
			Bytes: o.Int("bytes", 64),
		})
	}
	if r.Err() != nil {
		return nil
	}
	return out
}

// PackedSegment is a segment document Pack made: to be written (at
// SegmentKey of its Ref.ID) before the head that references it.
type PackedSegment struct {
	Ref  SegmentRef
	Data []byte
}

// Pack bounds head m (a manifest whose Files are its tail, any length):
// while the tail holds SegmentFiles files or more, its oldest SegmentFiles
// become a level-0 segment; while the last SegmentFanout references are of
// one level, they become one reference of the next. It returns the new
// segment documents, which the caller writes before m. m's totals do not
// change.
func (m *Manifest) Pack() ([]PackedSegment, error) {
	var out []PackedSegment
	add := func(s *Segment) error {
		data, ref, err := EncodeSegment(s)
		if err != nil {
			return err
		}
		out = append(out, PackedSegment{Ref: ref, Data: data})
		m.Segments = append(m.Segments, ref)
		return nil
	}
	for len(m.Files) >= SegmentFiles {
		seg := &Segment{Partition: m.Partition, Files: m.Files[:SegmentFiles:SegmentFiles]}
		m.Files = m.Files[SegmentFiles:]
		if err := add(seg); err != nil {
			return nil, err
		}
		for {
			n := len(m.Segments)
			if n < SegmentFanout {
				break
			}
			last := m.Segments[n-SegmentFanout:]
			lvl := last[0].Level
			same := lvl < MaxSegmentLevel
			for _, r := range last {
				same = same && r.Level == lvl
			}
			if !same {
				break
			}
			up := &Segment{Partition: m.Partition, Level: lvl + 1, Segments: append([]SegmentRef(nil), last...)}
			m.Segments = m.Segments[:n-SegmentFanout]
			if err := add(up); err != nil {
				return nil, err
			}
		}
	}
	m.Files = append([]File(nil), m.Files...)
	return out, nil
}

// SegmentFetcher reads the segment document of id (of a head's data
// generation): the bytes as stored.
type SegmentFetcher func(ctx context.Context, id string) ([]byte, error)

// expandParallel bounds the segment reads of one Expand in flight.
const expandParallel = 16

// Expand turns head m into the plain manifest it stands for: its files
// are the segments' (read with fetch, level by level, up to 16 at a time)
// in order and then its own, and the result passes Validate (its totals
// and its paths checked over all the files). A manifest without segments
// is left as is. fetch errors are returned wrapped; a segment that does
// not match its reference or the manifest is ErrInvalid.
func (m *Manifest) Expand(ctx context.Context, fetch SegmentFetcher) error {
	if !m.Segmented() {
		return nil
	}
	type node struct {
		ref   SegmentRef
		files []File // set once read (level 0)
		done  bool
	}
	nodes := make([]node, len(m.Segments))
	for i, r := range m.Segments {
		nodes[i].ref = r
	}
	for depth := 0; ; depth++ {
		var todo []int
		for i := range nodes {
			if !nodes[i].done {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			break
		}
		if depth > MaxSegmentLevel {
			return invalid("segment", "level", nil, "nested deeper than %d", MaxSegmentLevel)
		}
		segs := make([]*Segment, len(nodes))
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		sem := make(chan struct{}, expandParallel)
		for _, i := range todo {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				ref := nodes[i].ref
				data, err := fetch(ctx, ref.ID)
				if err != nil {
					errs[i] = fmt.Errorf("segment %s: %w", ref.ID, err)
					return
				}
				s, err := DecodeSegment(data, ref)
				if err == nil && s.Partition != m.Partition {
					err = invalid("segment", "partition", s.Partition, "is not the manifest's %s", m.Partition)
				}
				segs[i], errs[i] = s, err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		next := make([]node, 0, len(nodes))
		for i, n := range nodes {
			switch s := segs[i]; {
			case n.done:
				next = append(next, n)
			case s.Level == 0:
				next = append(next, node{ref: n.ref, files: s.Files, done: true})
			default:
				for _, r := range s.Segments {
					next = append(next, node{ref: r})
				}
			}
		}
		nodes = next
	}
	files := make([]File, 0, m.FileCount())
	for _, n := range nodes {
		files = append(files, n.files...)
	}
	files = append(files, m.Files...)
	c := *m
	c.Files, c.Segments = files, nil
	if err := c.Content.validate("manifest"); err != nil {
		return err
	}
	*m = c
	return nil
}
