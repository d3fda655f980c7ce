package merge

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrDuplicateKey: the input holds a key twice in one partition and no
// Dedupe policy was given. It matches errkind.ErrBadInput.
var ErrDuplicateKey = errkind.New("duplicate key in the merge input", errkind.ErrBadInput)

// Dedupe is what a merge does with a key the input holds more than once
// in one partition.
type Dedupe int

const (
	// DedupeNone refuses the input (ErrDuplicateKey, naming the key).
	DedupeNone Dedupe = iota
	// DedupeFirst keeps the first of the rows, in input order.
	DedupeFirst
	// DedupeLast keeps the last of the rows, in input order (the latest
	// change of a change log).
	DedupeLast
)

// ParseDedupe parses "" or "none", "first", "last".
func ParseDedupe(s string) (Dedupe, error) {
	switch s {
	case "", "none":
		return DedupeNone, nil
	case "first":
		return DedupeFirst, nil
	case "last":
		return DedupeLast, nil
	}
	return 0, fmt.Errorf("%w: --dedupe %q: want first or last", ErrBadOption, clip(s))
}

// String spells the policy as ParseDedupe reads it.
func (d Dedupe) String() string {
	switch d {
	case DedupeFirst:
		return "first"
	case DedupeLast:
		return "last"
	}
	return "none"
}

// PlanOptions describe a merge's input handling.
type PlanOptions struct {
	Keys []string
	// KeyTypes are the table's Arrow types of the key columns (nil: no
	// table yet): the input's keys are hashed as the table's values
	// (NewHasher).
	KeyTypes []arrow.DataType
	Delete   DeleteWhen
	Dedupe   Dedupe
	Route    RouteOptions
}

// Planner reads the input's record batches (all of one schema), in order,
// and builds the Plan: each row's partition, the key set of each
// partition, which rows are written.
type Planner struct {
	opts    PlanOptions
	router  *Router
	hasher  *Hasher
	keyCols []int
	delCol  int
	index   map[string]int32
	names   []string
	sets    []map[Hash]int64
	part    []int32
	deleted []bool
	rows    int64
}

// NewPlanner checks that the input's schema sc has the key columns (and
// the delete marker's) and can be routed.
func NewPlanner(sc *arrow.Schema, o PlanOptions) (*Planner, error) {
	if len(o.Keys) == 0 {
		return nil, fmt.Errorf("%w: no key column", ErrBadOption)
	}
	r, err := NewRouter(sc, o.Route)
	if err != nil {
		return nil, err
	}
	p := &Planner{opts: o, router: r, hasher: NewHasher(o.Keys, o.KeyTypes...), delCol: -1, index: map[string]int32{}}
	if p.keyCols, err = p.hasher.Columns(sc, "the input"); err != nil {
		return nil, err
	}
	for _, k := range o.Keys {
		if slices.Contains(r.Drop(), k) {
			return nil, fmt.Errorf("%w: key column %q is a partition column, not a data column of the table", ErrBadKey, k)
		}
	}
	if !o.Delete.IsZero() {
		i := sc.FieldIndices(o.Delete.Column)
		if len(i) == 0 {
			return nil, fmt.Errorf("%w: the input has no delete marker column %q", ErrBadOption, o.Delete.Column)
		}
		if slices.Contains(o.Keys, o.Delete.Column) {
			return nil, fmt.Errorf("%w: the delete marker column %q is a key column", ErrBadOption, o.Delete.Column)
		}
		p.delCol = i[0]
	}
	return p, nil
}

// Router returns the planner's router.
func (p *Planner) Router() *Router { return p.router }

// Add plans the rows of rec, the next batch of the input.
func (p *Planner) Add(ctx context.Context, rec arrow.RecordBatch) error {
	keys, err := p.hasher.Keys(ctx, rec, p.keyCols)
	if err != nil {
		return err
	}
	defer keys.Release()
	n := int(rec.NumRows())
	for i := range n {
		row := p.rows + 1
		key, err := p.router.Key(rec, i, row)
		if err != nil {
			return err
		}
		pi, ok := p.index[key]
		if !ok {
			pi = int32(len(p.names))
			p.index[key] = pi
			p.names = append(p.names, key)
			p.sets = append(p.sets, map[Hash]int64{})
		}
		h, null := keys.Row(i)
		if null {
			return fmt.Errorf("%w: row %d has a null key column (%s)", ErrBadKey, row, p.hasher.Describe(rec, p.keyCols, i))
		}
		del := false
		if p.delCol >= 0 {
			v, ok := Text(rec.Column(p.delCol), i)
			del = ok && v == p.opts.Delete.Value
		}
		idx := p.rows
		if prev, dup := p.sets[pi][h]; dup {
			switch p.opts.Dedupe {
			case DedupeNone:
				return fmt.Errorf("%w: %s appears in rows %d and %d of partition %s (hint: --dedupe last keeps the last of them)", ErrDuplicateKey,
					p.hasher.Describe(rec, p.keyCols, i), prev+1, row, key)
			case DedupeFirst:
				idx = prev
			}
		}
		p.sets[pi][h] = idx
		p.part = append(p.part, pi)
		p.deleted = append(p.deleted, del)
		p.rows++
	}
	return nil
}

// Plan is what the input does to each partition.
type Plan struct {
	names  []string
	sets   []map[Hash]int64
	part   []int32
	keep   []bool
	counts []PartCounts
	Drop   []string // input columns not written (routing, delete marker)
	Rows   int64    // input rows
	// KeyTypes are the types the input's keys were hashed as (the
	// table's; nil: as they are): the current rows' keys must be hashed
	// the same (NewHasher).
	KeyTypes []arrow.DataType
}

// PartCounts count what the input holds for one partition.
type PartCounts struct {
	Keys    int64 // distinct keys
	Upserts int64 // rows written
	Deletes int64 // keys deleted
}

// Finish ends the input and returns the plan. drop adds the input
// columns that are not written besides the routing ones (a delete marker
// that is no column of the table).
func (p *Planner) Finish(dropDelete bool) *Plan {
	pl := &Plan{names: p.names, sets: p.sets, part: p.part, keep: make([]bool, p.rows), counts: make([]PartCounts, len(p.names)), Rows: p.rows,
		KeyTypes: p.opts.KeyTypes}
	for pi, set := range p.sets {
		c := &pl.counts[pi]
		c.Keys = int64(len(set))
		for _, row := range set {
			if p.deleted[row] {
				c.Deletes++
			} else {
				pl.keep[row] = true
				c.Upserts++
			}
		}
	}
	pl.Drop = slices.Clone(p.router.Drop())
	if dropDelete && p.delCol >= 0 && !slices.Contains(pl.Drop, p.opts.Delete.Column) {
		pl.Drop = append(pl.Drop, p.opts.Delete.Column)
	}
	return pl
}

// Partitions returns the partitions the input touches, sorted.
func (pl *Plan) Partitions() []string { return slices.Sorted(slices.Values(pl.names)) }

// Counts returns what the input holds for partition key.
func (pl *Plan) Counts(key string) PartCounts {
	if i := slices.Index(pl.names, key); i >= 0 {
		return pl.counts[i]
	}
	return PartCounts{}
}

// Set returns partition key's key set (nil when the input does not touch
// it).
func (pl *Plan) Set(key string) map[Hash]int64 {
	if i := slices.Index(pl.names, key); i >= 0 {
		return pl.sets[i]
	}
	return nil
}

// InputMask returns, for the input batch rec whose first row is input row
// first (0-based), which rows are written to partition key, and how many.
func (pl *Plan) InputMask(rec arrow.RecordBatch, first int64, key string) ([]bool, int) {
	pi := int32(slices.Index(pl.names, key))
	mask := make([]bool, rec.NumRows())
	n := 0
	for i := range mask {
		r := first + int64(i)
		if pl.part[r] == pi && pl.keep[r] {
			mask[i] = true
			n++
		}
	}
	return mask, n
}

// CurrentMask returns, for a batch rec of the partition's current rows
// (key columns keyCols, hashed by h as the table's values), which rows are
// kept: those whose key the input does not hold (a row with a null key is
// always kept), and how many.
func CurrentMask(ctx context.Context, rec arrow.RecordBatch, h *Hasher, keyCols []int, set map[Hash]int64) ([]bool, int, error) {
	keys, err := h.Keys(ctx, rec, keyCols)
	if err != nil {
		return nil, 0, err
	}
	defer keys.Release()
	mask := make([]bool, rec.NumRows())
	n := 0
	for i := range mask {
		sum, null := keys.Row(i)
		if null {
			mask[i] = true
			n++
			continue
		}
		if _, in := set[sum]; !in {
			mask[i] = true
			n++
		}
	}
	return mask, n, nil
}

// Select returns the rows of rec where mask is true, without the columns
// named in drop. The caller releases the result.
func Select(ctx context.Context, rec arrow.RecordBatch, mask []bool, n int, drop []string) (arrow.RecordBatch, error) {
	rec = project(rec, drop)
	defer rec.Release()
	if n == len(mask) {
		rec.Retain()
		return rec, nil
	}
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(mask, nil)
	m := b.NewBooleanArray()
	defer m.Release()
	return compute.FilterRecordBatch(ctx, rec, m, compute.DefaultFilterOptions())
}

// project returns rec without the columns named in drop (retained: the
// caller releases it).
func project(rec arrow.RecordBatch, drop []string) arrow.RecordBatch {
	if len(drop) == 0 {
		rec.Retain()
		return rec
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if slices.Contains(drop, f.Name) {
			continue
		}
		fields = append(fields, f)
		cols = append(cols, rec.Column(i))
	}
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}
