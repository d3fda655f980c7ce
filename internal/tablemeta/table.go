package tablemeta

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/partition"
)

// The document's identity and limits.
const (
	// Format is the value of the "format" field.
	Format = "pswap-table"
	// Version is the "major.minor" version this package writes and reads
	// for a table of the legacy (per-partition) layout.
	Version = "1.2"
	// VersionLayout is the version it writes and reads for a table created
	// in the table-level layout (Layout is LayoutTable): another major
	// version, so that a pswap that knows only the per-partition layout
	// (1.x) refuses the table instead of writing partitions where this
	// version never looks, or publishing views without the partitions it
	// cannot see.
	VersionLayout = "2.0"
	// Key is where a table keeps the document, relative to the table root.
	Key = "_pswap/table.json"
	// MaxDocumentBytes bounds a document.
	MaxDocumentBytes = 4 << 20
	// MaxFields bounds the fields of a schema, nested ones included.
	MaxFields = 10_000
	// MaxNesting bounds how deeply types nest (a struct in a list in a
	// map ...).
	MaxNesting = 16
	// MaxNameBytes bounds a field name.
	MaxNameBytes = 256
	// MaxLayoutBytes bounds a partition column's layout.
	MaxLayoutBytes = 64
)

// Sentinel errors, checked with errors.Is. None of them is worth a retry;
// the schema and partition ones also match pswap.ErrBadInput.
var (
	// ErrInvalid: a malformed, inconsistent or unsupported table document
	// (or a value that would encode to one).
	ErrInvalid = errkind.New("invalid table metadata", errkind.ErrPermanent)
	// ErrUnsupportedVersion: a document of another major version. It also
	// matches ErrInvalid.
	ErrUnsupportedVersion = fmt.Errorf("%w: unsupported version", ErrInvalid)
	// ErrSchemaMismatch: data whose schema the table does not accept (a
	// column dropped, renamed, retyped, added without evolving, or made
	// nullable). The message names the column.
	ErrSchemaMismatch = errkind.New("schema mismatch", errkind.ErrBadInput)
	// ErrPartitionMismatch: a partition key that does not fit the table's
	// partition columns or their layout. The message shows an example of a
	// key that fits.
	ErrPartitionMismatch = errkind.New("partition key does not fit the table", errkind.ErrBadInput)
	// ErrUnsupportedType: a data type that a table schema cannot express
	// (e.g. uint64, a union).
	ErrUnsupportedType = errkind.New("type not supported by table schemas", errkind.ErrBadInput)
)

// Table is the document <table>/_pswap/table.json: the table's partition
// columns with their layout and its data schema.
type Table struct {
	Format  string // Format; Encode writes it
	Version string // Version; Encode writes it
	// PartitionColumns are the columns of the table's Hive-style keys, in
	// key order: "dt" for dt=2026-11-29.
	PartitionColumns []PartitionColumn
	// SchemaID starts at 0 and grows by one with every evolution.
	SchemaID int
	// LastColumnID is the highest field id ever assigned (partition
	// columns included): a new column gets the next one, so ids are never
	// reused.
	LastColumnID int
	// Schema is the data columns, the same in every generation of every
	// partition.
	Schema Schema
	// Views are the views every writer publishes (nil: the document
	// records none, see ViewsOf).
	Views *Views
	// TimeZone is the IANA time zone the table's time partitions begin in
	// ("Europe/Berlin"; "" is UTC): its days begin at local midnight and
	// its keys are local dates (partition.Layout's Zone). It needs
	// partition columns of a time layout, is set when the table is created,
	// and never changes.
	TimeZone string
	// PublishedIDs says that the field ids are the ones the table's
	// Iceberg metadata publishes (every field it has, by name path) and
	// that LastColumnID is at least its last-column-id, so that a field
	// not published yet will be published with its id here. A publish
	// sets it when it writes the published ids back and its version has
	// every field of the document (version 1.2); a document without it
	// (older, or rewritten by an older pswap, which drops it) may hold
	// other ids than the published ones (a table published before
	// table.json held ids), so a check of Parquet field ids must read the
	// published schema instead.
	PublishedIDs bool
	// Layout is LayoutTable when the table was created in the table-level
	// layout (package internal/layout): it has no partition of the legacy
	// one, so a writer never looks for a legacy pointer. Such a document is
	// version 2.x (VersionLayout), which a pswap of the legacy layout
	// refuses. 0: the table may have legacy partitions (version 1.x).
	Layout int
}

// LayoutTable is Table.Layout of a table created in the table-level layout.
const LayoutTable = 2

// PartitionColumn is one column of the table's partition keys.
type PartitionColumn struct {
	// ID is a field id of the same space as the schema's (so an Iceberg
	// schema may hold the column beside the data columns).
	ID   int
	Name string
	// Type is String, Date or Int.
	Type Type
	// Layout is a Go time layout that every value must fit exactly
	// ("2006-01-02" for dt=2026-11-29, "15" for hr=13), or empty for a
	// free-form value.
	Layout string
}

// Clone returns a deep copy.
func (t *Table) Clone() *Table {
	c := *t
	c.PartitionColumns = slices.Clone(t.PartitionColumns)
	c.Schema = t.Schema.Clone()
	if t.Views != nil {
		v := t.Views.Clone()
		c.Views = &v
	}
	return &c
}

// Validate checks the document: format and version (when set), partition
// columns, the schema's names, types and ids. Errors match ErrInvalid.
func (t *Table) Validate() error {
	if t == nil {
		return invalid("document", "nil table")
	}
	if t.Layout != 0 && t.Layout != LayoutTable {
		return invalid("layout", "%d, want %d or none", t.Layout, LayoutTable)
	}
	if t.Format != "" && t.Format != Format {
		return invalid("format", "%q, want %q", t.Format, Format)
	}
	if t.Version != "" {
		if _, _, _, err := checkVersion(t.Version); err != nil {
			return err
		}
	}
	if t.SchemaID < 0 {
		return invalid("schema_id", "%d is negative", t.SchemaID)
	}
	ids := map[int]string{}
	useID := func(path string, id int) error {
		if id <= 0 {
			return invalid(path+".id", "%d: ids are positive", id)
		}
		if id > t.LastColumnID {
			return invalid(path+".id", "%d is greater than last_column_id %d", id, t.LastColumnID)
		}
		if prev, ok := ids[id]; ok {
			return invalid(path+".id", "%d is also the id of %s", id, prev)
		}
		ids[id] = path
		return nil
	}
	if len(t.PartitionColumns) == 0 {
		return invalid("partition_columns", "empty: a table has at least one partition column")
	}
	if len(t.PartitionColumns) > partition.MaxColumns {
		return invalid("partition_columns", "%d columns, at most %d", len(t.PartitionColumns), partition.MaxColumns)
	}
	for i, c := range t.PartitionColumns {
		path := fmt.Sprintf("partition_columns[%d]", i)
		if err := c.validate(path); err != nil {
			return err
		}
		for _, d := range t.PartitionColumns[:i] {
			if d.Name == c.Name {
				return invalid(path+".name", "%q: duplicate partition column", c.Name)
			}
		}
		if err := useID(path, c.ID); err != nil {
			return err
		}
	}
	if err := t.validateZone(); err != nil {
		return err
	}
	if len(t.Schema.Fields) == 0 {
		return invalid("schema", "no columns")
	}
	n := 0
	if err := validateFields("schema", t.Schema.Fields, 1, &n, useID); err != nil {
		return err
	}
	return t.Views.validate()
}

// validateZone checks TimeZone: a canonical zone name (UTC is written as
// no zone) of a table whose partition columns form a time layout that the
// zone admits (no hourly layout in a zone with daylight saving time).
func (t *Table) validateZone() error {
	if t.TimeZone == "" {
		return nil
	}
	z, err := partition.ParseZone(t.TimeZone)
	switch {
	case err != nil:
		return invalid("time_zone", "%v", err)
	case z != t.TimeZone:
		return invalid("time_zone", "%q: UTC is written as no time_zone", t.TimeZone)
	}
	l := timeLayout(t.PartitionColumns)
	if l == nil {
		return invalid("time_zone", "%q: a time zone needs partition columns of a time layout (such as dt=2006-01-02), not %s", t.TimeZone, t.PartitionLayout())
	}
	l.Zone = t.TimeZone
	if _, err := l.Normalize(); err != nil {
		return invalid("time_zone", "%v", err)
	}
	return nil
}

func (c PartitionColumn) validate(path string) error {
	if _, err := partition.New(partition.Column{Name: c.Name, Value: "x"}); err != nil {
		return invalid(path+".name", "%q: not a partition column name: %v", c.Name, err)
	}
	if c.Layout != "" {
		if err := checkLayout(c.Layout); err != nil {
			return invalid(path+".layout", "%q: %s", c.Layout, err)
		}
	}
	switch c.Type.Kind {
	case String:
	case Date:
		if !isDateLayout(c.Layout) {
			return invalid(path+".type", "date needs a layout of a whole day (such as 2006-01-02), not %q", c.Layout)
		}
	case Int:
		if c.Layout != "" && !isIntLayout(c.Layout) {
			return invalid(path+".type", "int needs a layout of digits only (such as 15), not %q", c.Layout)
		}
	default:
		return invalid(path+".type", "%s: a partition column is string, date or int", c.Type)
	}
	return nil
}

// sampleTimes are instants whose formats tell what a layout encodes.
var sampleTimes = []time.Time{
	time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC),
	time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
	time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC),
	time.Date(2026, 10, 29, 13, 0, 0, 0, time.UTC),
	time.Date(2025, 11, 29, 13, 0, 0, 0, time.UTC),
}

// checkLayout accepts a Go time layout that formats to a valid partition
// value and parses back, and encodes nothing finer than an hour.
func checkLayout(l string) error {
	switch {
	case len(l) > MaxLayoutBytes:
		return fmt.Errorf("longer than %d bytes", MaxLayoutBytes)
	case !utf8.ValidString(l):
		return errors.New("not valid UTF-8")
	case strings.IndexFunc(l, unicode.IsControl) >= 0:
		return errors.New("contains a control character")
	}
	t := sampleTimes[0]
	v := t.Format(l)
	if v == l {
		return errors.New("encodes no part of a time (want a Go layout such as 2006-01-02)")
	}
	if _, err := partition.New(partition.Column{Name: "x", Value: v}); err != nil {
		return fmt.Errorf("formats to %q, not a valid partition value", v)
	}
	back, err := time.Parse(l, v)
	if err != nil || back.Format(l) != v {
		return errors.New("does not parse back what it formats")
	}
	finer := t.Add(time.Minute + time.Second)
	if finer.Format(l) != v {
		return errors.New("encodes minutes or seconds; partitions are at least an hour")
	}
	return nil
}

// isDateLayout: the layout encodes exactly a day (year, month and day).
func isDateLayout(l string) bool {
	if l == "" || checkLayout(l) != nil {
		return false
	}
	f := func(i int) string { return sampleTimes[i].Format(l) }
	return f(0) == f(1) && f(0) != f(2) && f(0) != f(3) && f(0) != f(4)
}

// isIntLayout: the layout formats to digits only.
func isIntLayout(l string) bool {
	if checkLayout(l) != nil {
		return false
	}
	for _, t := range sampleTimes {
		if _, err := strconv.Atoi(t.Format(l)); err != nil {
			return false
		}
	}
	return true
}

func validateFields(path string, fields []Field, depth int, n *int, useID func(string, int) error) error {
	if depth > MaxNesting {
		return invalid(path, "nested more than %d levels deep", MaxNesting)
	}
	for i, f := range fields {
		fp := fmt.Sprintf("%s[%d]", path, i)
		if p := nameProblem(f.Name); p != "" {
			return invalid(fp+".name", "%q: %s", f.Name, p)
		}
		for _, g := range fields[:i] {
			if strings.EqualFold(g.Name, f.Name) {
				return invalid(fp+".name", "%q: duplicate of column %q (names are unique even when compared case-insensitively)", f.Name, g.Name)
			}
		}
		if err := validateField(fp, f, depth, n, useID); err != nil {
			return err
		}
	}
	return nil
}

func validateField(path string, f Field, depth int, n *int, useID func(string, int) error) error {
	*n++
	if *n > MaxFields {
		return invalid(path, "more than %d fields", MaxFields)
	}
	if err := useID(path, f.ID); err != nil {
		return err
	}
	if !utf8.ValidString(f.Doc) || strings.ContainsFunc(f.Doc, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) || len(f.Doc) > 4096 {
		return invalid(path+".doc", "invalid UTF-8, a control character, or more than 4096 bytes")
	}
	return validateType(path+".type", f.Type, depth, n, useID)
}

func validateType(path string, t Type, depth int, n *int, useID func(string, int) error) error {
	if t.Kind != Decimal && (t.Precision != 0 || t.Scale != 0) {
		return invalid(path, "%s has no precision or scale", t.Kind)
	}
	if t.Kind != Fixed && t.Length != 0 {
		return invalid(path, "%s has no length", t.Kind)
	}
	if t.Kind != Struct && t.Fields != nil {
		return invalid(path, "%s has no fields", t.Kind)
	}
	if t.Kind != List && t.Element != nil {
		return invalid(path, "%s has no element", t.Kind)
	}
	if t.Kind != Map && (t.Key != nil || t.Value != nil) {
		return invalid(path, "%s has no key or value", t.Kind)
	}
	switch t.Kind {
	case Boolean, Int, Long, Float, Double, Date, Time, Timestamp, TimestampTZ, TimestampNs, TimestampTZNs, String, Binary:
	case Decimal:
		if t.Precision < 1 || t.Precision > MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return invalid(path, "decimal(%d,%d): want precision 1..%d and scale 0..precision", t.Precision, t.Scale, MaxDecimalPrecision)
		}
	case Fixed:
		if t.Length < 1 || t.Length > 1<<31-1 {
			return invalid(path, "fixed[%d]: want a length of at least 1", t.Length)
		}
	case Struct:
		if len(t.Fields) == 0 {
			return invalid(path, "struct without fields")
		}
		return validateFields(path+".fields", t.Fields, depth+1, n, useID)
	case List:
		if t.Element == nil {
			return invalid(path, "list without element")
		}
		if t.Element.Name != "element" {
			return invalid(path+".element", "named %q, want \"element\"", t.Element.Name)
		}
		return validateField(path+".element", *t.Element, depth+1, n, useID)
	case Map:
		if t.Key == nil || t.Value == nil {
			return invalid(path, "map without key or value")
		}
		if t.Key.Name != "key" || t.Value.Name != "value" {
			return invalid(path, "key and value named %q and %q, want \"key\" and \"value\"", t.Key.Name, t.Value.Name)
		}
		if t.Key.Nullable {
			return invalid(path+".key", "map keys are never null")
		}
		if err := validateField(path+".key", *t.Key, depth+1, n, useID); err != nil {
			return err
		}
		return validateField(path+".value", *t.Value, depth+1, n, useID)
	default:
		return invalid(path, "unknown type %v", t.Kind)
	}
	return nil
}

// nameProblem says what is wrong with a column name, or "".
func nameProblem(name string) string {
	switch {
	case name == "":
		return "empty"
	case len(name) > MaxNameBytes:
		return fmt.Sprintf("longer than %d bytes", MaxNameBytes)
	case !utf8.ValidString(name):
		return "not valid UTF-8"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "contains a control character"
	}
	return ""
}

// checkVersion accepts "1.x" (Version's major) and "2.x" (VersionLayout's);
// it returns the major and minor, and whether the minor is newer than the
// one this package knows of that major.
func checkVersion(v string) (mj, mn int, newer bool, err error) {
	major, minor, ok := strings.Cut(v, ".")
	mj, err1 := strconv.Atoi(major)
	mn, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || mj < 0 || mn < 0 || strconv.Itoa(mj) != major || strconv.Itoa(mn) != minor {
		return 0, 0, false, invalid("version", "%q is not major.minor", v)
	}
	for _, ours := range []string{Version, VersionLayout} {
		ourMajor, ourMinor, _ := strings.Cut(ours, ".")
		om, _ := strconv.Atoi(ourMajor)
		on, _ := strconv.Atoi(ourMinor)
		if mj == om {
			return mj, mn, mn > on, nil
		}
	}
	if latest, _, _ := strictjson.ParseVersion(VersionLayout); mj > latest {
		return 0, 0, false, &Error{Field: "version", Problem: fmt.Sprintf("%q: this pswap reads versions 1.x and 2.x: %s", v, strictjson.NewerFormatProblem(v)),
			Err: fmt.Errorf("%w: %w", ErrUnsupportedVersion, strictjson.ErrNewerFormat)}
	}
	return 0, 0, false, &Error{Field: "version", Problem: fmt.Sprintf("%q: this pswap reads versions 1.x and 2.x", v), Err: ErrUnsupportedVersion}
}

// Error is one problem with one field of a table document:
//
//	table.json: schema[2].type: decimal(40,2): want precision 1..38 and scale 0..precision
//
// It matches ErrInvalid (or ErrUnsupportedVersion) with errors.Is.
type Error struct {
	Field   string // JSON path, or "document"
	Problem string
	Err     error
}

func (e *Error) Error() string { return "table.json: " + e.Field + ": " + e.Problem }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error {
	if e.Err == nil {
		return ErrInvalid
	}
	return e.Err
}

func invalid(field, problem string, args ...any) *Error {
	if len(args) > 0 {
		problem = fmt.Sprintf(problem, args...)
	}
	return &Error{Field: field, Problem: problem, Err: ErrInvalid}
}
