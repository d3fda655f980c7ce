package manifest

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pswap/pswap/partition"
)

// Version is the manifest format version this package writes,
// "major.minor". Decode rejects another major version and accepts any minor
// version of this major (a higher minor only adds optional fields, which are
// then ignored).
const Version = "1.0"

// PointerVersion is the pointer format version this package writes for a
// pointer that carries its partition's recent history (see Pointer.History).
// Version 1.1 adds the fields files, history and history_truncated to 1.0;
// a reader of 1.0 ignores them (a higher minor version), so pointers written
// by this package stay readable by older ones. A pointer without history
// (read from a 1.0 document) is written back as 1.0.
const PointerVersion = "1.1"

// KindVersion is the manifest format version written for a manifest that
// records its kind (Manifest.Kind, e.g. KindMerge): version 1.1 adds the
// optional field kind to 1.0, which a 1.0 reader ignores. A manifest
// without a kind is written as 1.0.
const KindVersion = "1.1"

// DataLayoutVersion is the manifest format version written for a manifest
// whose data lies in the table-level layout (Manifest.DataLayout set):
// version 1.2 adds the optional field data_layout (beside files[].columns,
// see StatsVersion: one version adds both). Such a manifest is only
// ever reached through a pointer under the table's top-level _pswap/
// folder, which no version before it reads.
const DataLayoutVersion = "1.2"

// DataLayoutTable is the value of Manifest.DataLayout (and of a staged
// record's) for a generation whose data lies under the table's top-level
// _pswap/p/<partition>/gen/<generation>/ folder; 0 (omitted) is the
// partition's own <partition>/_pswap/gen/<generation>/ folder, where every
// generation written before that layout lies.
const DataLayoutTable = 2

// Kinds of generation a manifest records in Manifest.Kind. A commit that
// replaces the partition with its inputs records none; a rollback is told
// by RollbackOf.
const (
	// KindMerge: the generation was derived by a merge (pswap merge): the
	// parent's rows whose key the input did not hold, plus the input's.
	KindMerge = "merge"
	// KindAppend: the generation is its parent's files and one run's
	// (pswap commit --append): the data generation's folder named by the
	// run's staged generation holds the run's files.
	KindAppend = "append"
)

// MaxKindBytes bounds Manifest.Kind.
const MaxKindBytes = 32

// MaxHistory bounds Pointer.History: the pointer remembers the partition's
// last 100 commits (the current one included), newest first.
const MaxHistory = 100

// Format strings: the "format" field of each kind of document.
const (
	FormatManifest = "pswap-manifest"
	FormatPointer  = "pswap-pointer"
)

// File is one data file of a generation.
type File struct {
	Path     string `json:"path"`     // relative to the generation's data prefix, e.g. "part-00000.parquet"
	Size     int64  `json:"size"`     // bytes
	Rows     int64  `json:"rows"`     // rows in the file
	Checksum string `json:"checksum"` // "sha256:<64 lowercase hex>" of the file's bytes
	// Columns (version 1.2) are the statistics of the file's flat
	// top-level columns, as its footer gives them; nil when not recorded
	// (a manifest of an older version, a file whose footer the writer did
	// not have): a reader that needs them reads the footer. Only the
	// manifest's own encoding and EncodeColumns carry them (encoding/json
	// skips them).
	Columns []ColumnStats `json:"-"`
}

// Content is what staging produces and a manifest records.
type Content struct {
	Files           []File `json:"files"`
	Rows            int64  `json:"rows"`             // sum of Files[i].Rows
	Bytes           int64  `json:"bytes"`            // sum of Files[i].Size
	ContentChecksum string `json:"content_checksum"` // "<algo>:<hex>", order-independent row hash
	Schema          string `json:"schema,omitempty"` // textual schema fingerprint

	// Equivalent lists other content checksums of the same rows, in other
	// algorithms (staging's rowsum128 beside colsum128). It is not
	// recorded: a commit compares it with the base's checksum, so that
	// identical rows are a no-op on a generation staged before the
	// algorithm changed.
	Equivalent []string `json:"-"`
}

// SameContent reports whether content c holds what a generation of rows
// rows and content checksum checksum holds: equal row counts and checksum
// equal to c's or to one of c's Equivalent ones.
func (c Content) SameContent(checksum string, rows int64) bool {
	if rows != c.Rows {
		return false
	}
	if checksum == c.ContentChecksum {
		return true
	}
	for _, e := range c.Equivalent {
		if e == checksum {
			return true
		}
	}
	return false
}

// Add appends f to the files and adds its rows and size to the totals. It
// does not touch ContentChecksum, which the caller computes over the rows.
func (c *Content) Add(f File) {
	c.Files = append(c.Files, f)
	c.Rows += f.Rows
	c.Bytes += f.Size
}

// Validate checks the files and totals of c by the rules of a manifest.
func (c *Content) Validate() error {
	if err := c.validate("manifest"); err != nil {
		return err
	}
	return nil
}

// Manifest is the immutable, write-once description of one generation of a
// partition. See the package documentation for the meaning of each field.
type Manifest struct {
	Format         string `json:"format"`                    // FormatManifest; Encode writes it
	Version        string `json:"version"`                   // Encode writes Version; Decode reports the document's
	Partition      string `json:"partition"`                 // Hive-style key, e.g. "dt=2026-11-29/hr=13"
	Generation     string `json:"generation"`                // UUIDv7, lowercase canonical
	DataGeneration string `json:"data_generation,omitempty"` // whose gen/<id>/ prefix holds the files; empty = Generation (a rollback points at an older generation's files)
	Parent         string `json:"parent,omitempty"`          // generation that was current when this one began ("" = first)
	RunID          string `json:"run_id,omitempty"`
	RollbackOf     string `json:"rollback_of,omitempty"`
	Kind           string `json:"kind,omitempty"` // how the generation was derived: "" (a replacing commit) or KindMerge
	// DataLayout (1.2) says where the data generation's files lie: 0 in
	// the partition's own _pswap folder, DataLayoutTable under the table's
	// top-level _pswap/p/ folder (package internal/layout spells both). A
	// manifest that reuses another generation's data (a rollback, a
	// rebase) copies that generation's.
	DataLayout int `json:"data_layout,omitempty"`
	// Segments (2.0) reference segment documents that list the files
	// before Files (see SegmentRef): a head, which Expand turns into the
	// plain manifest it stands for. Rows and Bytes are the totals of all
	// the files, the segments' included. Empty in every manifest a reader
	// returns after Expand, and in every manifest of version 1.
	Segments    []SegmentRef `json:"-"`
	Content                  // embedded, fields flattened in JSON
	CreatedAt   time.Time    `json:"created_at"`   // when the attempt began (UTC)
	CommittedAt time.Time    `json:"committed_at"` // when the manifest was written (UTC)
	Writer      string       `json:"writer"`       // e.g. "pswap/0.1.0"
}

// EncodedVersion is the version Encode writes for m: the lowest that has
// every field m uses (StatsVersion with column statistics, KindVersion
// with a kind, else Version).
func (m *Manifest) EncodedVersion() string {
	switch {
	case m.Segmented():
		return SegmentedVersion
	case m.HasStats() || m.DataLayout != 0:
		return StatsVersion // = DataLayoutVersion: 1.2 adds both
	case m.Kind != "":
		return KindVersion
	}
	return Version
}

// DataGen returns the generation whose data prefix holds the files:
// DataGeneration, or Generation when that is empty.
func (m *Manifest) DataGen() string {
	if m.DataGeneration != "" {
		return m.DataGeneration
	}
	return m.Generation
}

// Pointer returns the pointer that makes m current, with the given sequence
// number (the previous pointer's Seq plus one, or 1 for the first commit).
// Its history holds m alone, marked truncated when m has a parent; a commit
// uses PointerAfter, which keeps the previous pointer's history.
func (m *Manifest) Pointer(seq int64) *Pointer {
	return &Pointer{
		Format:           FormatPointer,
		Version:          PointerVersion,
		Partition:        m.Partition,
		Generation:       m.Generation,
		Seq:              seq,
		Parent:           m.Parent,
		RunID:            m.RunID,
		Rows:             m.Rows,
		Bytes:            m.Bytes,
		Files:            m.FileCount(),
		ContentChecksum:  m.ContentChecksum,
		CommittedAt:      m.CommittedAt.UTC(),
		History:          []HistoryEntry{m.historyEntry()},
		HistoryTruncated: m.Parent != "",
	}
}

// PointerAfter returns the pointer that makes m current in place of base
// (nil for a partition's first commit): seq one more than base's, and the
// history of base behind m's own entry, cut to MaxHistory entries. The
// history is marked truncated when entries were cut, when base's was, and
// when base is a pointer without history (a 1.0 document) or m's parent is
// not base's generation: then older commits exist that the list omits.
func (m *Manifest) PointerAfter(base *Pointer) *Pointer {
	if base == nil {
		return m.Pointer(1)
	}
	p := m.Pointer(base.Seq + 1)
	if m.Parent != base.Generation || len(base.History) == 0 {
		return p // truncated: base's history is not ours to continue
	}
	keep := base.History
	p.HistoryTruncated = base.HistoryTruncated
	if len(keep) > MaxHistory-1 {
		keep = keep[:MaxHistory-1]
		p.HistoryTruncated = true
	}
	p.History = append(p.History, keep...)
	return p
}

func (m *Manifest) historyEntry() HistoryEntry {
	e := HistoryEntry{Generation: m.Generation, RunID: m.RunID, CommittedAt: m.CommittedAt.UTC(), Rows: m.Rows}
	if m.DataGeneration != m.Generation {
		e.DataGeneration = m.DataGeneration
	}
	return e
}

// Validate reports the first problem with m, as an error matching
// ErrInvalid, or nil. Encode succeeds exactly when Validate does. Empty
// Format and Version fields are allowed (they mean the current ones, which
// Encode writes); non-empty ones must be FormatManifest and a version of the
// same major as Version.
func (m *Manifest) Validate() error {
	if err := m.validate(); err != nil {
		return err
	}
	return nil
}

// validate returns a typed nil-able *Error; the exported wrappers avoid the
// typed-nil-in-interface trap.
func (m *Manifest) validate() *Error {
	const doc = "manifest"
	if m == nil {
		return invalid(doc, "document", nil, "nil manifest")
	}
	if err := checkFormatVersion(doc, FormatManifest, m.Format, m.Version); err != nil {
		return err
	}
	if err := checkPartition(doc, m.Partition); err != nil {
		return err
	}
	if err := requiredGenID(doc, "generation", m.Generation); err != nil {
		return err
	}
	for _, f := range []struct{ name, val string }{
		{"data_generation", m.DataGeneration},
		{"parent", m.Parent},
		{"rollback_of", m.RollbackOf},
	} {
		if err := optionalGenID(doc, f.name, f.val); err != nil {
			return err
		}
	}
	if m.Parent == m.Generation {
		return invalid(doc, "parent", m.Parent, "equals the generation itself")
	}
	if m.RollbackOf == m.Generation {
		return invalid(doc, "rollback_of", m.RollbackOf, "equals the generation itself")
	}
	if p := checkPrintable(m.RunID, MaxRunIDBytes); p != "" {
		return invalid(doc, "run_id", m.RunID, "%s", p)
	}
	if m.Segmented() {
		if err := m.validateHead(doc); err != nil {
			return err
		}
		// The tail's files carry the totals less the segments'.
		c := m.Content
		rows, bytes := m.segmentTotals()
		if c.Rows < rows || c.Bytes < bytes {
			return invalid(doc, "rows", m.Rows, "less than its segments' %d rows (or bytes %d less than their %d)", rows, m.Bytes, bytes)
		}
		c.Rows -= rows
		c.Bytes -= bytes
		if err := c.validate(doc); err != nil {
			return err
		}
	} else if err := m.Content.validate(doc); err != nil {
		return err
	}
	if p := checkTime(m.CreatedAt); p != "" {
		return invalid(doc, "created_at", nil, "%s", p)
	}
	if p := checkTime(m.CommittedAt); p != "" {
		return invalid(doc, "committed_at", nil, "%s", p)
	}
	if p := checkPrintable(m.Writer, MaxWriterBytes); p != "" {
		return invalid(doc, "writer", m.Writer, "%s", p)
	}
	if p := checkPrintable(m.Kind, MaxKindBytes); p != "" {
		return invalid(doc, "kind", m.Kind, "%s", p)
	}
	if m.DataLayout != 0 && m.DataLayout != DataLayoutTable {
		return invalid(doc, "data_layout", m.DataLayout, "must be %d or omitted", DataLayoutTable)
	}
	return nil
}

func (c *Content) validate(doc string) *Error {
	if len(c.Files) > MaxFiles {
		return invalid(doc, "files", nil, "%d files, at most %d allowed", len(c.Files), MaxFiles)
	}
	if len(c.Files) == 0 && c.Rows != 0 {
		return invalid(doc, "files", nil, "empty, but rows is %d", c.Rows)
	}
	// Paths are compared case-insensitively: on a case-insensitive file
	// system two such files would be one. A path must also not be a folder
	// of another file ("a" and "a/b"), which no file system can hold.
	seen := make(map[string]int, len(c.Files))
	var rows, size int64
	for i := range c.Files {
		f := &c.Files[i]
		field := fmt.Sprintf("files[%d]", i)
		if p := checkFilePath(f.Path); p != "" {
			return invalid(doc, field+".path", f.Path, "%s", p)
		}
		folded := strings.ToLower(f.Path)
		if j, dup := seen[folded]; dup {
			return invalid(doc, field+".path", f.Path, "duplicates files[%d].path %s", j, show(c.Files[j].Path))
		}
		seen[folded] = i
		if f.Size < 0 {
			return invalid(doc, field+".size", f.Size, "negative")
		}
		if f.Size > MaxFileSize {
			return invalid(doc, field+".size", f.Size, "larger than the 5 TiB object limit")
		}
		if f.Rows < 0 {
			return invalid(doc, field+".rows", f.Rows, "negative")
		}
		if p := checkFileChecksum(f.Checksum); p != "" {
			return invalid(doc, field+".checksum", f.Checksum, "%s", p)
		}
		if err := validateColumns(doc, field+".columns", f.Columns); err != nil {
			return err
		}
		if rows > math.MaxInt64-f.Rows {
			return invalid(doc, field+".rows", f.Rows, "total rows overflow a 64-bit integer")
		}
		rows += f.Rows
		size += f.Size // at most MaxFiles * MaxFileSize: cannot overflow
	}
	for i := range c.Files {
		p := strings.ToLower(c.Files[i].Path)
		for k := strings.IndexByte(p, '/'); k >= 0; {
			if j, ok := seen[p[:k]]; ok {
				return invalid(doc, fmt.Sprintf("files[%d].path", i), c.Files[i].Path,
					"lies inside files[%d].path %s, which is a file", j, show(c.Files[j].Path))
			}
			next := strings.IndexByte(p[k+1:], '/')
			if next < 0 {
				break
			}
			k += 1 + next
		}
	}
	if c.Rows < 0 {
		return invalid(doc, "rows", c.Rows, "negative")
	}
	if c.Bytes < 0 {
		return invalid(doc, "bytes", c.Bytes, "negative")
	}
	if c.Rows != rows {
		return invalid(doc, "rows", c.Rows, "does not equal the sum of files[].rows (%d)", rows)
	}
	if c.Bytes != size {
		return invalid(doc, "bytes", c.Bytes, "does not equal the sum of files[].size (%d)", size)
	}
	if p := checkContentChecksum(c.ContentChecksum); p != "" {
		return invalid(doc, "content_checksum", c.ContentChecksum, "%s", p)
	}
	if p := checkSchema(c.Schema); p != "" {
		return invalid(doc, "schema", c.Schema, "%s", p)
	}
	return nil
}

// Pointer is the only mutable object of a partition: it names the current
// generation and repeats the headline facts of its manifest so that a status
// check needs one read. It is replaced only by a conditional write.
//
// Since version 1.1 it also carries the partition's recent history, newest
// first, History[0] being the current generation: what the same-run check of
// a commit needs (a run id found there has committed, whatever committed
// since) and what garbage collection's keep and retention rules need (each
// entry's data generation and commit time; an entry was retired when the next
// newer one committed), without reading a manifest.
type Pointer struct {
	Format          string    `json:"format"`  // FormatPointer; EncodePointer writes it
	Version         string    `json:"version"` // EncodePointer writes PointerVersion (Version without history); DecodePointer reports the document's
	Partition       string    `json:"partition"`
	Generation      string    `json:"generation"`
	Seq             int64     `json:"seq"` // 1 for the first commit, +1 per swap: pointer content never repeats (no ABA)
	Parent          string    `json:"parent,omitempty"`
	RunID           string    `json:"run_id,omitempty"`
	Rows            int64     `json:"rows"`
	Bytes           int64     `json:"bytes"`
	Files           int       `json:"files"` // 1.1: the current generation's file count (0 in a 1.0 document: unknown)
	ContentChecksum string    `json:"content_checksum"`
	CommittedAt     time.Time `json:"committed_at"`
	// History (1.1) lists the last commits of the partition, newest first,
	// at most MaxHistory; History[0] is the current generation and
	// History[i+1] the parent of History[i]. Empty in a 1.0 document.
	History []HistoryEntry `json:"history,omitempty"`
	// HistoryTruncated (1.1) says that older generations exist than the last
	// entry of History (the bound was reached, or a writer of version 1.0
	// replaced the pointer on the way and its history was lost).
	HistoryTruncated bool `json:"history_truncated,omitempty"`
	// MovedTo is set only in the record a layout migration leaves at a
	// partition's old pointer key: the pointer's full content plus the key
	// it moved to. No version before it knows the field, so an older
	// reader or writer refuses the record instead of committing to a
	// pointer nobody reads. Empty in every live pointer.
	MovedTo string `json:"moved_to,omitempty"`
}

// HistoryEntry is one commit in a pointer's history.
type HistoryEntry struct {
	Generation     string    `json:"generation"`
	DataGeneration string    `json:"data_generation,omitempty"` // empty: the generation itself (a rollback names another)
	RunID          string    `json:"run_id,omitempty"`
	CommittedAt    time.Time `json:"committed_at"`
	Rows           int64     `json:"rows"`
}

// DataGen returns the generation whose data prefix holds the entry's files.
func (e HistoryEntry) DataGen() string {
	if e.DataGeneration != "" {
		return e.DataGeneration
	}
	return e.Generation
}

// HasHistory reports whether p carries its partition's recent history (a
// version 1.1 document), so that Files and History are known.
func (p *Pointer) HasHistory() bool { return len(p.History) > 0 }

// FindRun returns the newest commit of runID that p knows of: an entry of
// History, or, for a pointer without history, the current generation when
// it carries runID. An empty run id is never found.
func (p *Pointer) FindRun(runID string) (HistoryEntry, bool) {
	if runID == "" {
		return HistoryEntry{}, false
	}
	if !p.HasHistory() {
		if p.RunID == runID {
			return HistoryEntry{Generation: p.Generation, RunID: p.RunID, CommittedAt: p.CommittedAt, Rows: p.Rows}, true
		}
		return HistoryEntry{}, false
	}
	for _, e := range p.History {
		if e.RunID == runID {
			return e, true
		}
	}
	return HistoryEntry{}, false
}

// Since returns the entries of History newer than generation gen (those
// before it, newest first), and whether gen was found in History. When it
// was not, the entries are all of History.
func (p *Pointer) Since(gen string) ([]HistoryEntry, bool) {
	for i, e := range p.History {
		if e.Generation == gen {
			return p.History[:i], true
		}
	}
	return p.History, false
}

// Validate reports the first problem with p, as an error matching
// ErrInvalid, or nil. EncodePointer succeeds exactly when Validate does.
func (p *Pointer) Validate() error {
	if err := p.validate(); err != nil {
		return err
	}
	return nil
}

func (p *Pointer) validate() *Error {
	const doc = "pointer"
	if p == nil {
		return invalid(doc, "document", nil, "nil pointer")
	}
	if err := checkFormatVersion(doc, FormatPointer, p.Format, p.Version); err != nil {
		return err
	}
	if err := checkPartition(doc, p.Partition); err != nil {
		return err
	}
	if err := requiredGenID(doc, "generation", p.Generation); err != nil {
		return err
	}
	if p.Seq < 1 {
		return invalid(doc, "seq", p.Seq, "must be at least 1")
	}
	if err := optionalGenID(doc, "parent", p.Parent); err != nil {
		return err
	}
	if p.Parent == p.Generation {
		return invalid(doc, "parent", p.Parent, "equals the generation itself")
	}
	if prob := checkPrintable(p.RunID, MaxRunIDBytes); prob != "" {
		return invalid(doc, "run_id", p.RunID, "%s", prob)
	}
	if p.Rows < 0 {
		return invalid(doc, "rows", p.Rows, "negative")
	}
	if p.Bytes < 0 {
		return invalid(doc, "bytes", p.Bytes, "negative")
	}
	if prob := checkContentChecksum(p.ContentChecksum); prob != "" {
		return invalid(doc, "content_checksum", p.ContentChecksum, "%s", prob)
	}
	if prob := checkTime(p.CommittedAt); prob != "" {
		return invalid(doc, "committed_at", nil, "%s", prob)
	}
	if prob := checkPrintable(p.MovedTo, 1024); prob != "" {
		return invalid(doc, "moved_to", p.MovedTo, "%s", prob)
	}
	return p.validateHistory(doc)
}

func (p *Pointer) validateHistory(doc string) *Error {
	if p.Files < 0 || p.Files > MaxFiles {
		return invalid(doc, "files", p.Files, "must be between 0 and %d", MaxFiles)
	}
	if len(p.History) == 0 {
		if p.Files != 0 {
			return invalid(doc, "files", p.Files, "set without a history (a version 1.0 pointer has neither)")
		}
		if p.HistoryTruncated {
			return invalid(doc, "history_truncated", nil, "set without a history")
		}
		return nil
	}
	if len(p.History) > MaxHistory {
		return invalid(doc, "history", nil, "%d entries, at most %d allowed", len(p.History), MaxHistory)
	}
	seen := make(map[string]int, len(p.History))
	for i, e := range p.History {
		field := fmt.Sprintf("history[%d]", i)
		if err := requiredGenID(doc, field+".generation", e.Generation); err != nil {
			return err
		}
		if err := optionalGenID(doc, field+".data_generation", e.DataGeneration); err != nil {
			return err
		}
		if e.DataGeneration == e.Generation {
			return invalid(doc, field+".data_generation", e.DataGeneration, "equals the generation (omit it)")
		}
		if j, dup := seen[e.Generation]; dup {
			return invalid(doc, field+".generation", e.Generation, "duplicates history[%d].generation", j)
		}
		seen[e.Generation] = i
		if prob := checkPrintable(e.RunID, MaxRunIDBytes); prob != "" {
			return invalid(doc, field+".run_id", e.RunID, "%s", prob)
		}
		if prob := checkTime(e.CommittedAt); prob != "" {
			return invalid(doc, field+".committed_at", nil, "%s", prob)
		}
		if e.Rows < 0 {
			return invalid(doc, field+".rows", e.Rows, "negative")
		}
	}
	h := p.History[0]
	switch {
	case h.Generation != p.Generation:
		return invalid(doc, "history[0].generation", h.Generation, "is not the current generation %s", p.Generation)
	case h.RunID != p.RunID:
		return invalid(doc, "history[0].run_id", h.RunID, "differs from run_id %s", show(p.RunID))
	case h.Rows != p.Rows:
		return invalid(doc, "history[0].rows", h.Rows, "differs from rows %d", p.Rows)
	case !h.CommittedAt.Equal(p.CommittedAt):
		return invalid(doc, "history[0].committed_at", nil, "differs from committed_at")
	}
	if len(p.History) > 1 && p.History[1].Generation != p.Parent {
		return invalid(doc, "history[1].generation", p.History[1].Generation, "is not the parent %s", show(p.Parent))
	}
	if len(p.History) == 1 && p.Parent != "" && !p.HistoryTruncated {
		return invalid(doc, "history", nil, "ends at the current generation, whose parent %s is neither listed nor marked truncated", p.Parent)
	}
	return nil
}

func checkFormatVersion(doc, wantFormat, format, version string) *Error {
	if format != "" && format != wantFormat {
		return invalid(doc, "format", format, "want %q", wantFormat)
	}
	if version != "" {
		if _, err := checkVersion(doc, version); err != nil {
			return err
		}
	}
	return nil
}

func checkPartition(doc, key string) *Error {
	if key == "" {
		return invalid(doc, "partition", nil, "missing")
	}
	if err := partition.Validate(key); err != nil {
		// The partition package's message already quotes the key.
		e := invalid(doc, "partition", nil, "%v", err)
		e.Cause = err
		return e
	}
	return nil
}

func requiredGenID(doc, field, id string) *Error {
	if id == "" {
		return invalid(doc, field, nil, "missing")
	}
	return optionalGenID(doc, field, id)
}

func optionalGenID(doc, field, id string) *Error {
	if id == "" {
		return nil
	}
	if p := checkGenerationID(id); p != "" {
		return invalid(doc, field, id, "%s", p)
	}
	return nil
}
