package pswap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// The property test of issue 39: one rule for every input on every write
// path. It generates logical tables (columns of every type the text
// formats and Parquet share, values, nulls) and a schema change of the
// next input (none, a column dropped, added, retyped, reordered, all
// null), writes that input as CSV, JSON Lines, Parquet in other Arrow
// types and units (int32 for long, float32 for double, large strings,
// date64, timestamps in ms or ns...) and Arrow records, commits it
// (plain, and with FillMissingNullable) and merges it, and checks that
// every format has the same outcome: the same rows (those of a canonical
// Parquet input, and for a merge those of a plain model: the base rows
// whose key the input lacks plus the input's), or the same refusal naming
// the same column (for a dropped or added column, the same message).
//
// PSWAP_PROPERTY_SEED picks the seed (default 39), PSWAP_PROPERTY_CASES
// the number of cases (default 40).

type pType int

const (
	pLong pType = iota
	pDouble
	pString
	pBool
	pDate
	pTs
	pTsTZ
	pTime // Parquet and Arrow only: text inputs have no time of day
	nPTypes
)

func (p pType) arrow() arrow.DataType {
	return [...]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String,
		arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Date32, tsType(arrow.Microsecond, ""),
		tsType(arrow.Microsecond, "UTC"), arrow.FixedWidthTypes.Time64us}[p]
}

// pCol is a logical column; its values are int64 (long; double in
// quarters; bool 0/1; date in days; timestamp and time in ms) or string,
// nil for null.
type pCol struct {
	name string
	typ  pType
	vals []any
}

type pCase struct {
	key    pType
	base   []pCol // column 0 is the key "id"
	input  []pCol
	change string
	// column the change names ("" for none)
	changed string
}

var pChanges = []string{"none", "drop", "add", "reorder", "allnull", "retype"}

func genValue(r *rand.Rand, t pType, i int) any {
	switch t {
	case pString:
		return fmt.Sprintf("s%d", r.IntN(1000))
	case pBool:
		return int64(r.IntN(2))
	case pDate:
		return int64(20000 + r.IntN(400))
	case pTs, pTsTZ:
		return int64(1_780_000_000_000 + r.Int64N(1_000_000_000))
	case pTime:
		return int64(r.IntN(86_400_000))
	}
	return int64(r.IntN(10_000) - 5_000)
}

// keyValue is the i-th distinct key of type t.
func keyValue(t pType, i int) any {
	switch t {
	case pString:
		return fmt.Sprintf("k%03d", i)
	case pTs, pTsTZ:
		return int64(1_780_000_000_000 + int64(i)*1_001)
	case pTime:
		return int64(3_600_000 + i*1_001)
	}
	return int64(i * 3)
}

func genCase(r *rand.Rand) pCase {
	keys := []pType{pLong, pString, pTs, pTsTZ, pTime}
	c := pCase{key: keys[r.IntN(len(keys))], change: pChanges[r.IntN(len(pChanges))]}
	nRows := 2 + r.IntN(6)
	nCols := 1 + r.IntN(4)
	c.base = []pCol{{name: "id", typ: c.key}}
	for j := range nCols {
		t := pType(r.IntN(int(pTime))) // pTime only as a key
		c.base = append(c.base, pCol{name: fmt.Sprintf("c%d", j), typ: t})
	}
	for i := range nRows {
		for j := range c.base {
			var v any
			if j == 0 {
				v = keyValue(c.key, i)
			} else if r.IntN(5) > 0 {
				v = genValue(r, c.base[j].typ, i)
			}
			c.base[j].vals = append(c.base[j].vals, v)
		}
	}
	// The input: keys half of the base's, half new, other values fresh.
	nIn := 1 + r.IntN(5)
	for j, bc := range c.base {
		ic := pCol{name: bc.name, typ: bc.typ}
		for i := range nIn {
			var v any
			if j == 0 {
				k := i * 2
				if k >= nRows {
					k = nRows + i
				}
				v = keyValue(c.key, k)
			} else if r.IntN(5) > 0 {
				v = genValue(r, bc.typ, i)
			}
			ic.vals = append(ic.vals, v)
		}
		c.input = append(c.input, ic)
	}
	other := 1 + r.IntN(len(c.input)-1)
	switch c.change {
	case "drop":
		c.changed = c.input[other].name
		c.input = slices.Delete(c.input, other, other+1)
	case "add":
		vals := make([]any, nIn)
		for i := range vals {
			vals[i] = fmt.Sprintf("e%d", i)
		}
		c.changed = "extra"
		c.input = append(c.input, pCol{name: "extra", typ: pString, vals: vals})
	case "reorder":
		r.Shuffle(len(c.input), func(i, j int) { c.input[i], c.input[j] = c.input[j], c.input[i] })
	case "allnull":
		c.input[other].vals = make([]any, nIn)
	case "retype":
		if c.input[other].typ == pString {
			c.change = "none"
			break
		}
		c.changed = c.input[other].name
		c.input[other].typ = pString
		for i := range c.input[other].vals {
			c.input[other].vals[i] = fmt.Sprintf("x%d", i)
		}
	}
	return c
}

func hasType(cols []pCol, t pType) bool {
	return slices.ContainsFunc(cols, func(c pCol) bool { return c.typ == t })
}

// --- rendering ---

func tsText(ms int64, tz bool) string {
	s := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000")
	if tz {
		s += "Z"
	}
	return s
}

func textValue(t pType, v any) string {
	switch t {
	case pString:
		return v.(string)
	case pDouble:
		return strconv.FormatFloat(float64(v.(int64))/4, 'f', -1, 64)
	case pBool:
		return strconv.FormatBool(v.(int64) == 1)
	case pDate:
		return time.Unix(v.(int64)*86400, 0).UTC().Format("2006-01-02")
	case pTs, pTsTZ:
		return tsText(v.(int64), t == pTsTZ)
	}
	return strconv.FormatInt(v.(int64), 10)
}

func csvOf(cols []pCol) string {
	var b strings.Builder
	for j, c := range cols {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.name)
	}
	b.WriteByte('\n')
	for i := range cols[0].vals {
		for j, c := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			if c.vals[i] != nil {
				b.WriteString(textValue(c.typ, c.vals[i]))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func jsonlOf(cols []pCol) string {
	var b strings.Builder
	for i := range cols[0].vals {
		b.WriteByte('{')
		for j, c := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", c.name)
			v := c.vals[i]
			switch {
			case v == nil:
				b.WriteString("null")
			case c.typ == pLong || c.typ == pDouble:
				b.WriteString(textValue(c.typ, v))
			case c.typ == pBool:
				b.WriteString(textValue(c.typ, v))
			default:
				q, _ := json.Marshal(textValue(c.typ, v))
				b.Write(q)
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// variantType is the Arrow type an input stores a logical type in: the
// canonical one, or another the table stores in it (variant > 0).
func variantType(t pType, variant int) arrow.DataType {
	alts := map[pType][]arrow.DataType{
		pLong:   {arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32},
		pDouble: {arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32},
		pString: {arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString},
		pDate:   {arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64},
		pTs:     {tsType(arrow.Microsecond, ""), tsType(arrow.Millisecond, ""), tsType(arrow.Nanosecond, "")},
		pTsTZ:   {tsType(arrow.Microsecond, "UTC"), tsType(arrow.Millisecond, "UTC"), tsType(arrow.Nanosecond, "Europe/Lisbon")},
		pTime:   {arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64ns},
	}[t]
	if len(alts) == 0 {
		return t.arrow()
	}
	return alts[variant%len(alts)]
}

func recordOf(t testing.TB, cols []pCol, variant int) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, c := range cols {
		dt := variantType(c.typ, variant)
		b := array.NewBuilder(mem, dt)
		for _, v := range c.vals {
			if v == nil {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int64Builder:
				bb.Append(v.(int64))
			case *array.Int32Builder:
				bb.Append(int32(v.(int64)))
			case *array.Float64Builder:
				bb.Append(float64(v.(int64)) / 4)
			case *array.Float32Builder:
				bb.Append(float32(v.(int64)) / 4)
			case *array.StringBuilder:
				bb.Append(v.(string))
			case *array.LargeStringBuilder:
				bb.Append(v.(string))
			case *array.BooleanBuilder:
				bb.Append(v.(int64) == 1)
			case *array.Date32Builder:
				bb.Append(arrow.Date32(v.(int64)))
			case *array.Date64Builder:
				bb.Append(arrow.Date64(v.(int64) * 86_400_000))
			case *array.TimestampBuilder:
				ms := v.(int64)
				switch dt.(*arrow.TimestampType).Unit {
				case arrow.Millisecond:
					bb.Append(arrow.Timestamp(ms))
				case arrow.Microsecond:
					bb.Append(arrow.Timestamp(ms * 1_000))
				default:
					bb.Append(arrow.Timestamp(ms * 1_000_000))
				}
			case *array.Time32Builder:
				bb.Append(arrow.Time32(v.(int64)))
			case *array.Time64Builder:
				ms := v.(int64)
				if dt.(*arrow.Time64Type).Unit == arrow.Microsecond {
					bb.Append(arrow.Time64(ms * 1_000))
				} else {
					bb.Append(arrow.Time64(ms * 1_000_000))
				}
			default:
				t.Fatalf("no builder for %s", dt)
			}
		}
		arrs = append(arrs, b.NewArray())
		b.Release()
		fields = append(fields, arrow.Field{Name: c.name, Type: dt, Nullable: true})
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(len(cols[0].vals)))
	for _, a := range arrs {
		a.Release()
	}
	t.Cleanup(rec.Release)
	return rec
}

// --- outcomes ---

// outcome is what a write did: the partition's rows, or a refusal.
type outcome struct {
	rows    []string
	refused string // the error's kind and the first column it names
	message string // the error, without the input's name
}

func (o outcome) String() string {
	if o.refused != "" {
		return "refused " + o.refused + ": " + o.message
	}
	return fmt.Sprintf("rows %q", o.rows)
}

var (
	quotedName = regexp.MustCompile(`"([a-z0-9_]+)"`)
	inputName  = regexp.MustCompile(` \(in [^)]*\)|in\.(csv|jsonl|parquet)|Arrow record|(CSV|JSON Lines|Parquet file) `)
)

func refusal(err error) outcome {
	kind := "error"
	switch {
	case errors.Is(err, pswap.ErrSchemaMismatch):
		kind = "schema"
	case errors.Is(err, pswap.ErrBadInput):
		kind = "bad-input"
	}
	col := ""
	if m := quotedName.FindStringSubmatch(err.Error()); m != nil {
		col = m[1]
	}
	return outcome{refused: kind + " " + col, message: inputName.ReplaceAllString(err.Error(), "")}
}

// allRows reads a partition's rows, every column of the table in the
// table's order, as sorted text.
func allRows(t testing.TB, tbl *pswap.Table, key string) []string {
	t.Helper()
	sc, err := tbl.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var cols [][]string
	for _, f := range sc.Data.Fields() {
		cols = append(cols, readColumn(t, tbl.Store(), key, f.Name))
	}
	var rows []string
	for i := range cols[0] {
		parts := make([]string, len(cols))
		for j := range cols {
			parts[j] = cols[j][i]
		}
		rows = append(rows, strings.Join(parts, "|"))
	}
	slices.Sort(rows)
	return rows
}

const (
	pBase = "dt=2026-01-01"
	pNext = "dt=2026-01-02"
)

// freshTable is a table whose dt=2026-01-01 holds the case's base rows
// (canonical Parquet).
func freshTable(t testing.TB, c pCase) *pswap.Table {
	t.Helper()
	tbl := pswap.NewTable(memstore.New())
	if _, err := commitPath(t, tbl, pBase, parquetFile(t, recordOf(t, c.base, 0)), pswap.WriteOptions{}); err != nil {
		t.Fatalf("base: %v", err)
	}
	return tbl
}

// pFormat writes cols as one input of a format (a text format cannot
// hold a time of day: text marks it).
type pFormat struct {
	name string
	text bool
	file func(t testing.TB, dir string, cols []pCol) string // nil: Arrow record
	vary int
}

var pFormats = []pFormat{
	{name: "csv", text: true, file: func(t testing.TB, dir string, cols []pCol) string { return writeFile(t, dir, "in.csv", csvOf(cols)) }},
	{name: "jsonl", text: true, file: func(t testing.TB, dir string, cols []pCol) string {
		return writeFile(t, dir, "in.jsonl", jsonlOf(cols))
	}},
	{name: "parquet", vary: 0},
	{name: "parquet-alt1", vary: 1},
	{name: "parquet-alt2", vary: 2},
	{name: "arrow-alt1", vary: 1},
}

func (f pFormat) write(t testing.TB, dir string, cols []pCol) string {
	if f.file != nil {
		return f.file(t, dir, cols)
	}
	return parquetFile(t, recordOf(t, cols, f.vary))
}

// commitAs commits the case's input in format f into dt=2026-01-02.
func commitAs(t testing.TB, c pCase, f pFormat, to pswap.TableOptions) outcome {
	t.Helper()
	ctx := context.Background()
	tbl := freshTable(t, c)
	p, _ := tbl.Partition(pNext)
	w, err := p.Begin(ctx, pswap.WriteOptions{Table: to})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(f.name, "arrow") {
		err = w.WriteRecord(recordOf(t, c.input, f.vary))
	} else {
		err = w.AddPath(ctx, f.write(t, t.TempDir(), c.input), pswap.FormatAuto)
	}
	if err == nil {
		_, err = w.Commit(ctx)
	} else {
		w.Abort(ctx)
	}
	if err != nil {
		return refusal(err)
	}
	return outcome{rows: allRows(t, tbl, pNext)}
}

// mergeAs merges the case's input in format f into dt=2026-01-01.
func mergeAs(t testing.TB, c pCase, f pFormat) outcome {
	t.Helper()
	tbl := freshTable(t, c)
	_, err := tbl.Merge(context.Background(), []string{f.write(t, t.TempDir(), c.input)}, pswap.MergeOptions{Keys: []string{"id"}, Partition: pBase})
	if err != nil {
		return refusal(err)
	}
	return outcome{rows: allRows(t, tbl, pBase)}
}

// mergeModel is the plain model of a merge: the base rows whose key the
// input lacks plus the input's rows, as a canonical Parquet commit of
// them reads back.
func mergeModel(t testing.TB, c pCase) outcome {
	t.Helper()
	in := map[any]bool{}
	for _, ic := range c.input {
		if ic.name == "id" {
			for _, v := range ic.vals {
				in[v] = true
			}
		}
	}
	model := slices.Clone(c.base)
	for j := range model {
		model[j].vals = nil
	}
	for i, k := range c.base[0].vals {
		if in[k] {
			continue
		}
		for j := range model {
			model[j].vals = append(model[j].vals, c.base[j].vals[i])
		}
	}
	byName := map[string]pCol{}
	for _, ic := range c.input {
		byName[ic.name] = ic
	}
	for i := range c.input[0].vals {
		for j := range model {
			model[j].vals = append(model[j].vals, byName[model[j].name].vals[i])
		}
	}
	tbl := freshTable(t, pCase{base: model})
	return outcome{rows: allRows(t, tbl, pBase)}
}

// colOf is the column a refusal names.
func colOf(refused string) string {
	_, col, _ := strings.Cut(refused, " ")
	return col
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestInputsProperty(t *testing.T) {
	seed := uint64(envInt("PSWAP_PROPERTY_SEED", 39))
	cases := envInt("PSWAP_PROPERTY_CASES", 40)
	r := rand.New(rand.NewPCG(seed, 0))
	runs, disagreements, knownRetype := 0, 0, 0
	for n := range cases {
		c := genCase(r)
		name := fmt.Sprintf("case%02d-key-%s-%s", n, c.key.arrow(), c.change)
		t.Run(name, func(t *testing.T) {
			textOK := !hasType(c.input, pTime) && !hasType(c.base, pTime)
			type path struct {
				name string
				run  func(f pFormat) outcome
			}
			paths := []path{
				{name: "commit", run: func(f pFormat) outcome { return commitAs(t, c, f, pswap.TableOptions{}) }},
				{name: "commit-fill", run: func(f pFormat) outcome {
					return commitAs(t, c, f, pswap.TableOptions{FillMissingNullable: true})
				}},
				{name: "merge", run: func(f pFormat) outcome { return mergeAs(t, c, f) }},
			}
			for _, p := range paths {
				var ref outcome
				var refFormat string
				for _, f := range pFormats {
					if f.text && !textOK || p.name == "merge" && strings.HasPrefix(f.name, "arrow") {
						continue
					}
					got := p.run(f)
					runs++
					if refFormat == "" {
						ref, refFormat = got, f.name
						t.Logf("%s %s: %s", p.name, f.name, got)
						continue
					}
					same := slices.Equal(got.rows, ref.rows) && got.refused == ref.refused
					switch {
					case c.change == "retype" && got.refused != "" && ref.refused != "":
						// Known: text inputs are read as the table's types,
						// so a retyped column is refused for its first value
						// (bad input, naming the line), a typed input for
						// its type (schema mismatch). Both exit 2 naming
						// the column.
						same = colOf(got.refused) == colOf(ref.refused)
						if !same {
							break
						}
						if got.refused != ref.refused {
							knownRetype++
						}
					case same && (c.change == "drop" || c.change == "add") && got.message != ref.message:
						same = false
					}
					if !same {
						disagreements++
						t.Errorf("%s: %s and %s disagree:\n  %s: %s\n  %s: %s", p.name, refFormat, f.name, refFormat, ref, f.name, got)
					}
				}
				// What the rule says, whatever the format.
				switch {
				case p.name == "commit" && (c.change == "drop" || c.change == "add" || c.change == "retype"),
					p.name == "commit-fill" && (c.change == "add" || c.change == "retype"),
					p.name == "merge" && (c.change == "drop" || c.change == "add" || c.change == "retype"):
					if ref.refused == "" || !strings.HasSuffix(ref.refused, " "+c.changed) {
						t.Errorf("%s of a %s input: %s, want a refusal naming %q", p.name, c.change, ref, c.changed)
					}
				case p.name == "merge":
					if want := mergeModel(t, c); !slices.Equal(ref.rows, want.rows) || ref.refused != "" {
						t.Errorf("merge: %s, the plain model has %q", ref, want.rows)
					}
				default:
					if ref.refused != "" {
						t.Errorf("%s of a %s input: %s, want it accepted", p.name, c.change, ref)
					}
				}
			}
		})
	}
	t.Logf("seed %d: %d cases, %d formats x 3 paths, %d writes compared, %d disagreements, %d retyped-column refusals of another kind (text: bad input)",
		seed, cases, len(pFormats), runs, disagreements, knownRetype)
}
