package pswap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Errors of the table schema, checked with errors.Is.
var (
	// ErrSchemaMismatch: data the table's schema does not accept (a column
	// dropped, renamed, retyped, or added without evolving); the message
	// names the column. Nothing was changed.
	ErrSchemaMismatch = tablemeta.ErrSchemaMismatch
	// ErrPartitionMismatch: a partition key that does not fit the table's
	// partition columns and layout; the message shows a key that fits.
	ErrPartitionMismatch = tablemeta.ErrPartitionMismatch
)

// TableOptions tune how a write uses the table's metadata
// (<table>/_pswap/table.json). The zero value works: the first commit
// creates it, later ones are checked against it.
type TableOptions struct {
	// EvolveSchema lets this write add columns to the table's schema (as
	// nullable columns); table.json is then replaced conditionally before
	// the commit. Without it a new column is ErrSchemaMismatch.
	EvolveSchema bool
	// Layout is the partition layout recorded when this write creates the
	// table (the one an interval was mapped with); nil infers it from the
	// key (dt=2026-11-29 gives dt=2006-01-02). Its Zone, the IANA time
	// zone the key's interval was mapped in (Layout.ParseInterval,
	// Layout.Key), becomes the table's time zone when this write creates
	// it: the table's days then begin at local midnight. Against an
	// existing table, a Layout whose Zone is not the table's is
	// ErrPartitionMismatch (its key would name another day), and nothing
	// is written; a nil Layout is not checked.
	Layout *partition.Layout
	// Declare types columns up front (ParseColumnTypes,
	// DecodeColumnTypes: "amount=double,qty=int"), so that the
	// first commit does not fix a column's type from one day's values (a day
	// of whole-number amounts would make a long column). CSV and JSON Lines
	// inputs read the declared columns as the declared types (the others
	// are inferred); the write that creates the table records them, and
	// fails with ErrSchemaMismatch if an input lacks a declared column or
	// stores another type (a Parquet file). Against an existing table,
	// every declared column must be the table's with the same type (or,
	// with EvolveSchema, a new column): a table created with another type
	// is ErrSchemaMismatch, and nothing is written.
	Declare ColumnTypes
	// FillMissingNullable accepts an input that lacks nullable columns of
	// the table (one written before EvolveSchema added them: a backfill
	// from archived extracts) and writes NULL in them. Without it such an
	// input is ErrSchemaMismatch, as a dropped or renamed column must be.
	// A NOT NULL column is never filled. It is never silent: the write
	// reports the columns it filled (Writer.Filled, and the CLI warns).
	FillMissingNullable bool
}

// schemaGuard holds a write's view of the table's metadata: read at
// Begin, consulted for every input (staging's Conform), written at
// Commit when the write creates or evolves it.
type schemaGuard struct {
	st   store.Store
	key  string
	opts TableOptions

	mu     sync.Mutex
	table  *tablemeta.Table // current or provisional; nil: absent and no input yet
	base   *tablemeta.Table // as read at Begin (nil: absent)
	etag   string           // of the document read; "" when absent
	create bool             // absent: create it at commit
	// newLayout: the write creates the table (no pointer under its root):
	// table.json records the table-level layout (tablemeta.LayoutTable).
	newLayout bool
	created   bool            // commit created it (this write made the table)
	evolved   []string        // columns this write adds
	filled    []string        // nullable columns an input lacked, written as NULL (FillMissingNullable)
	withIDs   []staging.Input // inputs that carry Parquet field ids (publishedIDsAgree)
}

// tableRead is the table's metadata as Begin read it.
type tableRead struct {
	t    *tablemeta.Table
	etag string
	err  error
}

// tableReader reads the table's metadata, retrying transient failures
// with the policy of the commit's own reads (retry.Policy from
// swap.Options: MaxAttempts, BaseDelay, MaxDelay with their defaults, its
// Sleep and Clock), a given number of attempts at a time: Begin makes the
// first at once with the pointer's read, and the others only once that
// read succeeded.
type tableReader struct {
	st    store.Store
	pol   retry.Policy
	tries int
	ended bool // the context ended a wait: no more attempts
	last  tableRead
}

func newTableReader(st store.Store, o swap.Options) *tableReader {
	o = o.WithDefaults()
	return &tableReader{st: st, pol: retry.Policy{
		MaxAttempts: o.MaxAttempts, BaseDelay: o.BaseDelay, MaxDelay: o.MaxDelay,
	}}
}

// read makes up to n more attempts (n <= 0: up to the bound), and returns
// the last one's outcome. It reads nothing once an attempt succeeded or
// failed for good.
func (r *tableReader) read(ctx context.Context, n int) tableRead {
	for made := 0; n <= 0 || made < n; made++ {
		if r.tries > 0 {
			if !r.retry(ctx) {
				break
			}
			if err := r.pol.Wait(ctx, r.tries-1, r.last.err); err != nil {
				r.last.err = fmt.Errorf("%w (after: %w)", err, r.last.err)
				r.ended = true
				return r.last
			}
		}
		t, etag, err := tablemeta.Read(ctx, r.st)
		r.tries++
		r.last = tableRead{t, etag, err}
	}
	return r.last
}

// retry reports whether the last attempt failed transiently with
// attempts left.
func (r *tableReader) retry(ctx context.Context) bool {
	return !r.ended && errors.Is(r.last.err, store.ErrTransient) && !r.pol.Exhausted(ctx, r.tries-1)
}

// readTable reads the table's metadata (tableReader), all attempts at once.
func readTable(ctx context.Context, st store.Store, o swap.Options) tableRead {
	return newTableReader(st, o).read(ctx, 0)
}

// beginSchema checks the partition key against the table's metadata read
// at Begin, and makes the staging options store data in the table's
// schema: CSV and JSON Lines are read with it (no per-file guessing) and
// every input's schema is checked and promoted.
func beginSchema(r tableRead, st store.Store, key string, wo WriteOptions, so *staging.Options) (*schemaGuard, error) {
	opts := wo.Table
	g := &schemaGuard{st: st, key: key, opts: opts}
	t, etag, err := r.t, r.etag, r.err
	switch {
	case errors.Is(err, store.ErrNotFound):
		g.create = true
	case errors.Is(err, tablemeta.ErrInvalid):
		return nil, fmt.Errorf("%w: %w", swap.ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("read table metadata: %w", err)
	default:
		if err := t.CheckKey(key); err != nil {
			return nil, err
		}
		if err := checkZone(t, opts.Layout); err != nil {
			return nil, err
		}
		if err := checkDeclared(t, opts, "the table's schema"); err != nil {
			return nil, err
		}
		g.table, g.etag, g.base = t, etag, t
		if so.TextSchema == nil && !opts.EvolveSchema {
			so.TextSchema = t.Schema.Arrow()
		}
	}
	if len(opts.Declare.cols) > 0 && so.TextTypes == nil {
		so.TextTypes = map[string]arrow.DataType{}
		for _, c := range opts.Declare.cols {
			so.TextTypes[c.Name] = c.Type.Arrow()
		}
	}
	if so.Conform == nil {
		so.Conform = g.conform
	}
	return g, nil
}

// checkZone refuses a write whose key was mapped from an interval in
// another time zone than the table's (TableOptions.Layout): a Berlin day's
// key on a UTC table, or the reverse, names the wrong day.
func checkZone(t *tablemeta.Table, l *partition.Layout) error {
	if l == nil {
		return nil
	}
	z, err := partition.ParseZone(l.Zone)
	if err != nil {
		return err
	}
	if z == t.TimeZone {
		return nil
	}
	if t.TimeZone == "" {
		return fmt.Errorf("%w: the interval was mapped in the time zone %s, but the table has none: its partitions begin at midnight UTC "+
			"(a table's zone is set only by the commit that creates it): map the interval in UTC (no --time-zone), or write a new table in %s",
			ErrPartitionMismatch, z, z)
	}
	in := "UTC"
	if z != "" {
		in = z
	}
	return fmt.Errorf("%w: the table's partitions begin at local midnight in its time zone %s, but the interval was mapped in %s: "+
		"map it in the table's zone (--time-zone %s; TableOptions.Layout.Zone in the library)",
		ErrPartitionMismatch, t.TimeZone, in, t.TimeZone)
}

// conform is the staging.ConformFunc of a write.
func (g *schemaGuard) conform(in staging.Input, s *arrow.Schema) (*arrow.Schema, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	popts := tablemeta.PlanOptions{Text: in.Text, FillMissing: g.opts.FillMissingNullable}
	if g.table == nil {
		cols, err := tablemeta.InferPartitionColumns(g.key, g.opts.Layout)
		if err != nil {
			return nil, err
		}
		t, err := tablemeta.New(cols, s)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		if l := g.opts.Layout; l != nil && l.Zone != "" {
			if t.TimeZone, err = partition.ParseZone(l.Zone); err != nil {
				return nil, err
			}
			if err := t.Validate(); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
			}
		}
		// The table this write creates must have the declared types.
		o := g.opts
		o.EvolveSchema = false
		if err := checkDeclared(t, o, "input "+in.Name); err != nil {
			return nil, err
		}
		g.table = t
	}
	if err := fieldIDsAgree(g.table, s, in); err != nil {
		return nil, err
	}
	if in.FieldIDs != nil {
		g.withIDs = append(g.withIDs, in)
	}
	target, err := g.table.Plan(s, popts)
	if errors.Is(err, tablemeta.ErrSchemaMismatch) && g.opts.EvolveSchema {
		evolved, added, eerr := g.table.Evolve(s, popts)
		if eerr != nil {
			return nil, eerr
		}
		if len(added) > 0 {
			g.table = evolved
			g.evolved = append(g.evolved, added...)
			target, err = g.table.Plan(s, popts)
		}
	}
	if err == nil {
		for _, c := range g.table.Missing(s) {
			if !slices.Contains(g.filled, c) {
				g.filled = append(g.filled, c)
			}
		}
	}
	return target, err
}

// filledColumns are the nullable columns that inputs of the write lacked
// and that were written as NULL (TableOptions.FillMissingNullable).
func (g *schemaGuard) filledColumns() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.filled)
}

// checkDeclared checks the declared columns (TableOptions.Declare) against
// a table's schema (what names it in messages): each must be one of its
// columns, of the declared type, unless EvolveSchema lets it be a new one.
func checkDeclared(t *tablemeta.Table, o TableOptions, what string) error {
	for _, c := range o.Declare.cols {
		f, ok := t.Schema.Field(c.Name)
		switch {
		case !ok && o.EvolveSchema:
		case !ok:
			return fmt.Errorf("%w: declared column %q is not in %s:\n%s", ErrSchemaMismatch, c.Name, what, t.Schema)
		case f.Type.String() != c.Type.String():
			return fmt.Errorf("%w: column %q is declared %s, but %s has it as %s "+
				"(a table's column keeps the type its first commit gave it: to change it, re-create the table; see the README)",
				ErrSchemaMismatch, c.Name, c.Type, what, f.Type)
		}
	}
	return nil
}

// commit writes the table's metadata if this write creates or evolves it,
// before the pointer swap. stored is the schema the generation's files
// hold. A lost race is resolved by re-reading: the write goes on only if
// its data fits the table's metadata as it now is, else it fails with
// ErrSchemaMismatch and nothing visible changed.
func (g *schemaGuard) commit(ctx context.Context, stored *arrow.Schema) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.table == nil || stored == nil {
		return nil // no input: nothing to record
	}
	if err := publishedIDsAgree(ctx, g.st, g.table, g.withIDs); err != nil {
		return err
	}
	switch {
	case g.create:
		if g.table.Views == nil {
			v := tablemeta.DefaultViews() // a new table records its views
			g.table.Views = &v
		}
		if g.newLayout {
			g.table.Layout = tablemeta.LayoutTable
		}
		cur, tag, created, err := tablemeta.Create(ctx, g.st, g.table)
		if err != nil {
			if errors.Is(err, tablemeta.ErrInvalid) {
				return fmt.Errorf("%w: %w", swap.ErrCorrupt, err)
			}
			return err
		}
		if !created {
			return g.adopt(cur, tag, fits(cur, g.key, stored, "was created by another writer at the same time"))
		}
		g.created, g.etag = true, tag
	case len(g.evolved) > 0:
		return g.evolve(ctx, stored)
	}
	return nil
}

// maxEvolveTries bounds the replaces of an evolution whose table.json
// another writer changed only in its views or ids meanwhile.
const maxEvolveTries = 10

// evolve replaces table.json with the evolved schema, conditionally on
// the document read. Another writer that changed only the views
// meanwhile (Table.SetViews, a first publish recording them) or only the
// field ids (a publish writing the published ids back) is no conflict:
// the evolution is written over its document (rebaseEvolution). Any
// other change is resolved by fits.
func (g *schemaGuard) evolve(ctx context.Context, stored *arrow.Schema) error {
	base := g.base
	for try := 0; ; try++ {
		tag, err := tablemeta.Update(ctx, g.st, g.table, g.etag)
		if err == nil {
			g.etag = tag
			return nil
		}
		if !errors.Is(err, tablemeta.ErrChanged) {
			return err
		}
		cur, tag, rerr := tablemeta.Read(ctx, g.st)
		if rerr != nil {
			return fmt.Errorf("%w (read back: %w)", err, rerr)
		}
		if base != nil && try+1 < maxEvolveTries {
			if next, ok := rebaseEvolution(g.table, base, cur); ok {
				if err := idsStillAgree(base, next, g.withIDs); err != nil {
					return err
				}
				g.table, g.etag, base = next, tag, cur
				continue
			}
		}
		return g.adopt(cur, tag, fits(cur, g.key, stored, "was changed by another writer at the same time"))
	}
}

// rebaseEvolution returns evolved (base with columns added) as an
// evolution of cur, when cur is base but for its views or its field ids,
// and false otherwise. A publish writes the published ids back into
// table.json once (lakehouse's writeBackIDs: the ids, last_column_id and
// the published_ids mark change, nothing else), and a views switch
// changes only the views: both are cur's in the result, and the added
// columns' ids move up by what cur's last_column_id is above base's, so
// that they stay above every id of cur, in the order Evolve gave them.
// Never an older document over a newer one: every column, id and view of
// cur stays as it is.
func rebaseEvolution(evolved, base, cur *tablemeta.Table) (*tablemeta.Table, bool) {
	if cur.SchemaID != base.SchemaID || !sameButViewsAndIDs(cur, base) {
		return nil, false
	}
	next := cur.Clone()
	shift := cur.LastColumnID - base.LastColumnID
	for _, f := range evolved.Clone().Schema.Fields {
		if _, ok := base.Schema.Field(f.Name); ok {
			continue
		}
		shiftIDs(&f, shift)
		next.Schema.Fields = append(next.Schema.Fields, f)
	}
	next.LastColumnID, next.SchemaID = evolved.LastColumnID+shift, evolved.SchemaID
	if next.Validate() != nil {
		return nil, false
	}
	return next, true
}

// shiftIDs adds shift to the ids of f and of the fields nested in it.
func shiftIDs(f *tablemeta.Field, shift int) {
	f.ID += shift
	for i := range f.Type.Fields {
		shiftIDs(&f.Type.Fields[i], shift)
	}
	for _, g := range []*tablemeta.Field{f.Type.Element, f.Type.Key, f.Type.Value} {
		if g != nil {
			shiftIDs(g, shift)
		}
	}
}

// sameButViewsAndIDs reports whether a and b are the same document but
// for their views and field ids (last_column_id and the published_ids
// mark included): the same columns, in the same order, with the same
// names, types, nullability and partition layouts.
func sameButViewsAndIDs(a, b *tablemeta.Table) bool {
	x, y := a.Clone(), b.Clone()
	for _, t := range []*tablemeta.Table{x, y} {
		t.Views, t.PublishedIDs = nil, false
		last := 0 // every field's id becomes its place in the document
		for i := range t.Schema.Fields {
			placeIDs(&t.Schema.Fields[i], &last)
		}
		for i := range t.PartitionColumns {
			last++
			t.PartitionColumns[i].ID = last
		}
		t.LastColumnID = last
	}
	ex, err1 := tablemeta.Encode(x)
	ey, err2 := tablemeta.Encode(y)
	return err1 == nil && err2 == nil && string(ex) == string(ey)
}

// placeIDs gives f and the fields nested in it the ids after *last,
// pre-order, and leaves *last at the highest.
func placeIDs(f *tablemeta.Field, last *int) {
	*last++
	f.ID = *last
	for i := range f.Type.Fields {
		placeIDs(&f.Type.Fields[i], last)
	}
	for _, g := range []*tablemeta.Field{f.Type.Element, f.Type.Key, f.Type.Value} {
		if g != nil {
			placeIDs(g, last)
		}
	}
}

// idsStillAgree checks the Parquet field ids of inputs against t, an
// evolution rebased over a document with other ids: each input agreed
// with base, the document the write read (fieldIDsAgree), and a column of
// base whose id changed meanwhile refuses the write, as it would have at
// its start.
func idsStillAgree(base, t *tablemeta.Table, ins []staging.Input) error {
	for _, in := range ins {
		for _, name := range slices.Sorted(maps.Keys(in.FieldIDs)) {
			if _, known := base.Schema.Field(name); !known {
				continue
			}
			if f, ok := t.Schema.Field(name); ok && f.ID != in.FieldIDs[name] {
				return fmt.Errorf("%w: %s: column %q has Parquet field id %d, the table's is now %d (a publish wrote the published ids back meanwhile): engines would read another column's values; %s",
					ErrSchemaMismatch, in.Name, name, in.FieldIDs[name], f.ID, idRemedy)
			}
		}
	}
	return nil
}

// adopt makes cur (tagged tag), the document another writer stored, the
// write's when its data fits it (err nil), so that the publish after the
// commit uses the stored ids (stored).
func (g *schemaGuard) adopt(cur *tablemeta.Table, tag string, err error) error {
	if err == nil {
		g.table, g.etag = cur, tag
	}
	return err
}

// document is the table's metadata as stored after the write's commit,
// with its tag ("" when unknown), for the publish after it: nil when the
// write had no input and the table has none.
func (g *schemaGuard) document() (*tablemeta.Table, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.table == nil || (g.create && !g.created && g.etag == "") {
		return nil, ""
	}
	return g.table, g.etag
}

// stored is the table's metadata as stored after the write's commit (nil:
// the write had no input), which the publish after it takes its schema
// from.
func (g *schemaGuard) stored() *tablemeta.Table {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.table
}

// fits checks data already staged against a table's metadata that another
// writer wrote meanwhile: the data must be exactly what the table stores,
// as staged data can no longer be converted.
func fits(t *tablemeta.Table, key string, stored *arrow.Schema, what string) error {
	return fitsAsIs(t, key, stored, nil, what)
}

// fitsAsIs checks data stored as it is (staged, adopted or copied: it can
// no longer be converted) against a table's metadata: its columns must be
// exactly the table's, in the types and nullability the table stores
// them in, except that a nullable column that nullFree names (its files'
// footers prove it holds no null) fits a NOT NULL one: the same data from
// a local file is read, found without nulls and stored. The error names
// the first column that differs.
func fitsAsIs(t *tablemeta.Table, key string, stored *arrow.Schema, nullFree map[string]bool, what string) error {
	if err := t.CheckKey(key); err != nil {
		return fmt.Errorf("the table's metadata %s: %w", what, err)
	}
	target, err := t.Plan(stored, tablemeta.PlanOptions{})
	if err != nil {
		return fmt.Errorf("the table's metadata %s: %w; re-run to write data that fits it", what, err)
	}
	ts, err1 := tablemeta.SchemaFromArrow(target)
	ss, err2 := tablemeta.SchemaFromArrow(stored)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%w: the table's metadata %s, with columns stored differently:\n%s\nre-run to write data that fits it", ErrSchemaMismatch, what, t.Schema)
	}
	for i := range ss.Fields {
		f := &ss.Fields[i]
		if tf, ok := ts.Field(f.Name); ok && nullFree[f.Name] && !tf.Nullable {
			f.Nullable = false
		}
	}
	if ts.SameTypes(ss) {
		// The same table types, and the same Parquet storage: an
		// unsigned or half-precision column maps to a table type but
		// engines read it as stored (uint32's values above 2^31 as
		// negative longs).
		for _, tf := range target.Fields() {
			sf, ok := stored.FieldsByName(tf.Name)
			if !ok || len(sf) != 1 || sameStorage(tf.Type, sf[0].Type) {
				continue
			}
			return fmt.Errorf("%w: the table's metadata %s: column %q is stored as %s in the files, the table's files store it as %s (commit them from a local copy, where they are converted, or write them so)", ErrSchemaMismatch, what, tf.Name, sf[0].Type, tf.Type)
		}
		return nil
	}
	describe := func(f tablemeta.Field) string {
		if f.Nullable {
			return f.Type.String()
		}
		return f.Type.String() + " not null"
	}
	for _, tf := range ts.Fields {
		sf, ok := ss.Field(tf.Name)
		if !ok || (tablemeta.Schema{Fields: []tablemeta.Field{sf}}).SameTypes(tablemeta.Schema{Fields: []tablemeta.Field{tf}}) {
			continue
		}
		why := ""
		switch {
		case sf.Type.Kind == tablemeta.TimestampNs && tf.Type.Kind == tablemeta.Timestamp,
			sf.Type.Kind == tablemeta.TimestampTZNs && tf.Type.Kind == tablemeta.TimestampTZ:
			why = " (Iceberg v2 timestamps hold microseconds: write the files in microseconds, e.g. pyarrow's coerce_timestamps=\"us\", or commit them from a local copy, where they are converted)"
		case sf.Nullable && !tf.Nullable:
			why = " (the files' footers do not prove it holds no null: commit them from a local copy, where their values are read, or make the column NOT NULL where they are written)"
		}
		return fmt.Errorf("%w: the table's metadata %s: column %q is %s in the files, the table stores it as %s%s", ErrSchemaMismatch, what, tf.Name, describe(sf), describe(tf), why)
	}
	return fmt.Errorf("%w: the table's metadata %s, with columns stored differently:\n%s\nre-run to write data that fits it", ErrSchemaMismatch, what, t.Schema)
}

// sameStorage reports whether Arrow types a and b (canonical: as staging
// derives them from Parquet) store values the same way, nullability and
// nested names aside.
func sameStorage(a, b arrow.DataType) bool {
	switch at := a.(type) {
	case *arrow.StructType:
		bt, ok := b.(*arrow.StructType)
		if !ok || at.NumFields() != bt.NumFields() {
			return false
		}
		for i, f := range at.Fields() {
			if g := bt.Field(i); f.Name != g.Name || !sameStorage(f.Type, g.Type) {
				return false
			}
		}
		return true
	case *arrow.MapType:
		bt, ok := b.(*arrow.MapType)
		return ok && sameStorage(at.KeyType(), bt.KeyType()) && sameStorage(at.ItemType(), bt.ItemType())
	case arrow.ListLikeType:
		bt, ok := b.(arrow.ListLikeType)
		return ok && a.ID() == b.ID() && sameStorage(at.Elem(), bt.Elem())
	}
	return arrow.TypeEqual(a, b)
}

// TableSchema is a table's schema as its metadata document
// (<table>/_pswap/table.json) records it: the same in every generation of
// every partition.
type TableSchema struct {
	// Data are the data columns, in the Arrow types pswap's Parquet files
	// store.
	Data *arrow.Schema
	// PartitionColumns are the columns of the table's keys, in key order
	// ("dt" for dt=2026-11-29).
	PartitionColumns []PartitionColumn
	// Version counts the schema's evolutions: 0 as created, one more for
	// each write that added columns (TableOptions.EvolveSchema).
	Version int
	// TimeLayout is the layout of the keys' time columns (dt=2006-01-02,
	// and hr=15 for hourly partitions), nil when the partition columns
	// have none: what the table's intervals map to.
	TimeLayout *partition.Layout
	// Columns are the data columns as table.json records them (the
	// columns of Data, in its order), with their field ids and Iceberg
	// types: what `pswap show --json` prints.
	Columns []Column

	meta *tablemeta.Table
}

// Column is one data column of a table's schema (TableSchema.Columns).
type Column struct {
	// ID is the column's stable field id.
	ID   int    `json:"id"`
	Name string `json:"name"`
	// Type is the column's Iceberg type in Iceberg's JSON form: a string
	// for a primitive type ("long", "decimal(10,2)", "timestamptz"), an
	// object for a list, map or struct (with the ids of its fields).
	Type     json.RawMessage `json:"type"`
	Nullable bool            `json:"nullable"`
}

// CheckKey checks a partition key against the table's partition columns,
// as a write does before it stages anything: the same columns in the same
// order, and every value in its column's layout. The error matches
// ErrPartitionMismatch and shows a key that fits.
func (s *TableSchema) CheckKey(key string) error {
	if s.meta == nil {
		return nil
	}
	return s.meta.CheckKey(key)
}

// PartitionColumn is one column of a table's partition keys.
type PartitionColumn struct {
	Name string
	// Type is its Iceberg type: string, date or int.
	Type string
	// Layout is the Go time layout every value fits ("2006-01-02" for
	// dt=2026-11-29), or "" for a free-form value.
	Layout string
}

// Schema reads the table's schema from its metadata document. A table
// that has none yet (no commit since pswap began keeping it) is
// ErrNotFound; a malformed one is ErrCorrupt.
func (t *Table) Schema(ctx context.Context) (*TableSchema, error) {
	m, err := tablemeta.Load(ctx, t.st)
	if err != nil {
		return nil, err
	}
	s := &TableSchema{Data: m.Schema.Arrow(), Version: m.SchemaID, TimeLayout: m.TimeLayout(), meta: m}
	for _, c := range m.PartitionColumns {
		s.PartitionColumns = append(s.PartitionColumns, PartitionColumn{Name: c.Name, Type: c.Type.String(), Layout: c.Layout})
	}
	s.Columns = make([]Column, 0, len(m.Schema.Fields))
	for _, f := range m.Schema.Fields {
		typ, err := f.Type.MarshalJSON() // not json.Marshal: it would escape <, > and & in names
		if err != nil {
			return nil, fmt.Errorf("%w: column %s: %w", ErrCorrupt, f.Name, err)
		}
		s.Columns = append(s.Columns, Column{ID: f.ID, Name: f.Name, Type: typ, Nullable: f.Nullable})
	}
	return s, nil
}

// idRemedy is what to do about an input whose field ids disagree.
const idRemedy = "write the file without Parquet field ids (pyarrow: no field_id metadata; Spark: plain Parquet, not an Iceberg table's data files), and pswap's name mapping resolves its columns by name"

// fieldIDsAgree checks the Parquet field ids an input carries (an Iceberg
// engine writes them; pyarrow writes them from field_id metadata) against
// the table's: Java Iceberg and PyIceberg read a file that has ids by its
// ids, not by the name mapping, so a file whose ids disagree with the
// table's is read with its columns swapped or NULL (DuckDB returned another
// column's values, TestParquetWithFieldIDs). A file without ids is read by
// name and always fits. A file with ids fits only if every top-level
// column has the id the table gives it and no nested field has one (the
// table's nested ids are not the published ones yet); otherwise the error
// names the column and the remedy. The commit then checks the ids against
// the published schema too, unless table.json holds the published ids
// (publishedIDsAgree).
func fieldIDsAgree(t *tablemeta.Table, s *arrow.Schema, in staging.Input) error {
	if in.FieldIDs == nil && !in.NestedFieldIDs {
		return nil
	}
	if in.NestedFieldIDs {
		return fmt.Errorf("%w: %s: its nested fields carry Parquet field ids, which pswap cannot match with the published ones yet; %s", ErrSchemaMismatch, in.Name, idRemedy)
	}
	for _, f := range s.Fields() {
		id, ok := in.FieldIDs[f.Name]
		tf, known := t.Schema.Field(f.Name)
		switch {
		case !ok:
			return fmt.Errorf("%w: %s: column %q has no Parquet field id while others do: engines would read it as NULL; %s", ErrSchemaMismatch, in.Name, f.Name, idRemedy)
		case known && tf.ID != id:
			return fmt.Errorf("%w: %s: column %q has Parquet field id %d, the table's is %d: engines would read another column's values; %s", ErrSchemaMismatch, in.Name, f.Name, id, tf.ID, idRemedy)
		}
	}
	return nil
}

// publishedIDsAgree checks the Parquet field ids of inputs (each already
// agreeing with table.json: fieldIDsAgree) against the published Iceberg
// schema, which is what readers resolve them with. A table.json marked
// PublishedIDs holds the published ids (a publish wrote them back, and
// last_column_id is above every published id, so a column not published
// yet is published with its id here): table.json alone decides, and the
// commit reads nothing under metadata/. An unmarked one (older, never
// published since pswap writes the ids back, or rewritten by an older
// pswap) may hold others: a table published before table.json held ids
// numbered nested fields first. Then, when an input carries ids, it reads
// the published schema: a column published has its published id, and a
// column not yet published gets table.json's id only while no published
// field has it (else the next free one, which no input can know).
func publishedIDsAgree(ctx context.Context, st store.Store, t *tablemeta.Table, ins []staging.Input) error {
	if len(ins) == 0 || t.PublishedIDs {
		return nil
	}
	pub, err := lakehouse.ReadPublishedIDs(ctx, st)
	if err != nil {
		return fmt.Errorf("read the published Iceberg schema to check the field ids of %s: %w", ins[0].Name, err)
	}
	if pub.Top == nil {
		return nil // nothing published: the first publish takes table.json's ids
	}
	for _, in := range ins {
		for _, name := range slices.Sorted(maps.Keys(in.FieldIDs)) {
			id := in.FieldIDs[name]
			want, published := pub.Top[name]
			if published && id == want {
				continue
			}
			if !published {
				// It gets table.json's id (id: fieldIDsAgree checked
				// it) unless a published field has that id.
				_, known := t.Schema.Field(name)
				if _, taken := pub.Used[id]; !known || !taken {
					continue
				}
			}
			return fmt.Errorf("%w: %s: column %q has Parquet field id %d, which Iceberg readers of the published table resolve to %s: engines would read another column's values; %s",
				ErrSchemaMismatch, in.Name, name, id, publishedName(pub, id), idRemedy)
		}
	}
	return nil
}

// publishedName names what a field id is in the published schema.
func publishedName(pub lakehouse.PublishedIDs, id int) string {
	if name, ok := pub.Used[id]; ok {
		return fmt.Sprintf("%q", name)
	}
	return "no column"
}

// Filled returns the nullable columns of the table that the writer's
// inputs lacked and that were written as NULL
// (TableOptions.FillMissingNullable), in the order first seen; nil when
// none was.
func (w *Writer) Filled() []string { return w.schema.filledColumns() }
