package textconv

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// observation kinds for schema inference.
type inferState struct {
	name                                string
	seen                                bool // a non-null value was seen
	ints, floats, bools, strs, other    int
	dates, tsZone, tsNaive, nonTimeStrs int

	// Nested values (JSON Lines): arrays and objects seen, the inferred
	// element of arrays, the fields of objects (names in order).
	arrays, objects int
	elem            *inferState
	fields          map[string]*inferState
	order           []string
}

func (st *inferState) observeText(v string) {
	st.seen = true
	if hasLeadingZeroOrSign(v) {
		// "007" or "+1" would lose their spelling as numbers.
		st.observeString(v)
		return
	}
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		st.ints++
		return
	}
	if isFloatText(v) {
		st.floats++
		return
	}
	if v == "true" || v == "false" || v == "TRUE" || v == "FALSE" || v == "True" || v == "False" {
		st.bools++
		return
	}
	st.observeString(v)
}

// hasLeadingZeroOrSign reports whether v is spelled as an identifier
// rather than a number: a leading "+", or a leading zero before an
// integer part ("007", a zip code or an account number). A zero-padded
// number with a fraction ("0012.50", a fixed-width export's amount) is a
// number: its fraction says it is a quantity, and the same column
// unpadded ("12.50") is one.
func hasLeadingZeroOrSign(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if strings.HasPrefix(v, "+") {
		return true
	}
	if len(d) < 2 || d[0] != '0' || d[1] == '.' {
		return false
	}
	i := strings.IndexByte(d, '.')
	return i < 0 || i == len(d)-1 || strings.Trim(d[:i], "0123456789") != "" || strings.Trim(d[i+1:], "0123456789") != ""
}

func isFloatText(v string) bool {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return false
	}
	// Only plain decimal notation: "inf" and "nan" stay strings.
	return !math.IsInf(f, 0) && !math.IsNaN(f) && strings.ContainsAny(v, "0123456789")
}

func (st *inferState) observeString(v string) {
	st.seen = true
	st.strs++
	switch {
	case len(v) == 10 && isDate(v):
		st.dates++
	default:
		if _, zone, err := parseTimestamp(v, arrow.Microsecond, time.UTC); err == nil && len(v) > 10 {
			if zone {
				st.tsZone++
			} else {
				st.tsNaive++
			}
		} else {
			st.nonTimeStrs++
		}
	}
}

func isDate(v string) bool {
	_, err := time.Parse("2006-01-02", v)
	return err == nil
}

// parseTimestamp wraps Arrow's parser, which can panic on odd input.
func parseTimestamp(v string, unit arrow.TimeUnit, loc *time.Location) (ts arrow.Timestamp, zone bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid timestamp %q", v)
		}
	}()
	return arrow.TimestampFromStringInLocation(v, unit, loc)
}

// field returns the inferred column.
func (st *inferState) field() arrow.Field {
	if nf, ok := st.nestedField(); ok {
		return nf
	}
	f := arrow.Field{Name: st.name, Nullable: true, Type: arrow.BinaryTypes.String}
	switch {
	case !st.seen || st.other > 0:
	case st.ints > 0 && st.floats+st.bools+st.strs == 0:
		f.Type = arrow.PrimitiveTypes.Int64
	case st.floats > 0 && st.bools+st.strs == 0:
		f.Type = arrow.PrimitiveTypes.Float64
	case st.bools > 0 && st.ints+st.floats+st.strs == 0:
		f.Type = arrow.FixedWidthTypes.Boolean
	case st.strs > 0 && st.ints+st.floats+st.bools == 0:
		switch st.strs {
		case st.dates:
			f.Type = arrow.FixedWidthTypes.Date32
		case st.tsZone:
			f.Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case st.tsNaive:
			f.Type = &arrow.TimestampType{Unit: arrow.Microsecond}
		}
	}
	return f
}

// column converts text or JSON values into an Arrow builder.
type column struct {
	field arrow.Field
	b     array.Builder
	text  func(v string) error // appends a non-null text value
	json  func(v any) error    // appends a non-null JSON value (json.Number for numbers)
}

// newColumns builds converters for a flat schema.
func newColumns(mem memory.Allocator, sc *arrow.Schema) ([]*column, error) {
	cols := make([]*column, sc.NumFields())
	for i, f := range sc.Fields() {
		c, err := newColumn(mem, f)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return cols, nil
}

func errType(want string, v any) error {
	if _, ok := v.(json.Number); ok {
		return fmt.Errorf("want %s, got number %v", want, v)
	}
	switch v.(type) {
	case string:
		return fmt.Errorf("want %s, got string %q", want, v)
	case bool:
		return fmt.Errorf("want %s, got boolean %v", want, v)
	case map[string]any:
		return fmt.Errorf("want %s, got an object", want)
	case []any:
		return fmt.Errorf("want %s, got an array", want)
	}
	return fmt.Errorf("want %s, got %T", want, v)
}

func jsonText(want string, v any) (string, error) {
	switch x := v.(type) {
	case json.Number:
		return string(x), nil
	case string:
		return x, nil
	}
	return "", errType(want, v)
}

func jsonString(want string, v any) (string, error) {
	if x, ok := v.(string); ok {
		return x, nil
	}
	return "", errType(want, v)
}

func newColumn(mem memory.Allocator, f arrow.Field) (*column, error) {
	c, err := columnOf(array.NewBuilder(mem, f.Type), f)
	if err != nil {
		c.b.Release()
		return nil, err
	}
	return c, nil
}

// columnOf converts values into the builder b of field f (b may be the
// child builder of a list, struct or map: see jsonnested.go).
func columnOf(b array.Builder, f arrow.Field) (*column, error) {
	c := &column{field: f, b: b}
	name := f.Type.String()
	switch b := b.(type) {
	case *array.BooleanBuilder:
		c.text = func(v string) error {
			switch v {
			case "true", "TRUE", "True":
				b.Append(true)
			case "false", "FALSE", "False":
				b.Append(false)
			default:
				return fmt.Errorf("want bool, got %q", v)
			}
			return nil
		}
		c.json = func(v any) error {
			x, ok := v.(bool)
			if !ok {
				return errType(name, v)
			}
			b.Append(x)
			return nil
		}
	case *array.Int8Builder:
		c.intFuncs(name, 8, func(x int64) { b.Append(int8(x)) })
	case *array.Int16Builder:
		c.intFuncs(name, 16, func(x int64) { b.Append(int16(x)) })
	case *array.Int32Builder:
		c.intFuncs(name, 32, func(x int64) { b.Append(int32(x)) })
	case *array.Int64Builder:
		c.intFuncs(name, 64, b.Append)
	case *array.Uint8Builder:
		c.uintFuncs(name, 8, func(x uint64) { b.Append(uint8(x)) })
	case *array.Uint16Builder:
		c.uintFuncs(name, 16, func(x uint64) { b.Append(uint16(x)) })
	case *array.Uint32Builder:
		c.uintFuncs(name, 32, func(x uint64) { b.Append(uint32(x)) })
	case *array.Uint64Builder:
		c.uintFuncs(name, 64, b.Append)
	case *array.Float32Builder:
		c.floatFuncs(name, 32, func(x float64) { b.Append(float32(x)) })
	case *array.Float64Builder:
		c.floatFuncs(name, 64, b.Append)
	case *array.StringBuilder:
		c.text = func(v string) error { b.Append(v); return nil }
		c.json = func(v any) error {
			s, err := jsonString(name, v)
			if err == nil {
				b.Append(s)
			}
			return err
		}
	case *array.LargeStringBuilder:
		c.text = func(v string) error { b.Append(v); return nil }
		c.json = func(v any) error {
			s, err := jsonString(name, v)
			if err == nil {
				b.Append(s)
			}
			return err
		}
	case *array.BinaryBuilder:
		// Base64, as Arrow's CSV and JSON readers do.
		c.text = func(v string) error {
			d, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return fmt.Errorf("want base64 for %s: %v", name, err)
			}
			b.Append(d)
			return nil
		}
		c.json = c.viaText(name)
	case *array.Date32Builder:
		c.text = func(v string) error {
			t, err := time.Parse("2006-01-02", v)
			if err != nil {
				return fmt.Errorf("want date YYYY-MM-DD, got %q", v)
			}
			b.Append(arrow.Date32FromTime(t))
			return nil
		}
		c.json = c.viaText(name)
	case *array.TimestampBuilder:
		tt := f.Type.(*arrow.TimestampType)
		loc, err := tt.GetZone()
		if err != nil || loc == nil {
			loc = time.UTC
		}
		c.text = func(v string) error {
			ts, _, err := parseTimestamp(v, tt.Unit, loc)
			if err != nil {
				return fmt.Errorf("want %s: %v", name, err)
			}
			b.Append(ts)
			return nil
		}
		c.json = c.viaText(name)
	case *array.Decimal128Builder:
		dt := f.Type.(*arrow.Decimal128Type)
		c.text = func(v string) error {
			n, err := decimal128.FromString(v, dt.Precision, dt.Scale)
			if err != nil {
				return fmt.Errorf("want %s, got %q: %v", name, v, err)
			}
			b.Append(n)
			return nil
		}
		c.json = c.viaText(name)
	case *array.Decimal256Builder:
		dt := f.Type.(*arrow.Decimal256Type)
		c.text = func(v string) error {
			n, err := decimal256.FromString(v, dt.Precision, dt.Scale)
			if err != nil {
				return fmt.Errorf("want %s, got %q: %v", name, v, err)
			}
			b.Append(n)
			return nil
		}
		c.json = c.viaText(name)
	default:
		if ok, err := c.nestedFuncs(); ok {
			return c, err
		}
		return c, fmt.Errorf("%w: column %q has type %s, which CSV and JSON Lines inputs do not support", ErrUnsupported, f.Name, f.Type)
	}
	return c, nil
}

// viaText accepts JSON strings and numbers through the text converter.
func (c *column) viaText(want string) func(any) error {
	return func(v any) error {
		s, err := jsonText(want, v)
		if err != nil {
			return err
		}
		return c.text(s)
	}
}

func (c *column) intFuncs(name string, bits int, app func(int64)) {
	c.text = func(v string) error {
		x, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return fmt.Errorf("want %s, got %q", name, v)
		}
		app(x)
		return nil
	}
	c.json = func(v any) error {
		n, ok := v.(json.Number)
		if !ok {
			return errType(name, v)
		}
		return c.text(string(n))
	}
}

func (c *column) uintFuncs(name string, bits int, app func(uint64)) {
	c.text = func(v string) error {
		x, err := strconv.ParseUint(v, 10, bits)
		if err != nil {
			return fmt.Errorf("want %s, got %q", name, v)
		}
		app(x)
		return nil
	}
	c.json = func(v any) error {
		n, ok := v.(json.Number)
		if !ok {
			return errType(name, v)
		}
		return c.text(string(n))
	}
}

func (c *column) floatFuncs(name string, bits int, app func(float64)) {
	c.text = func(v string) error {
		x, err := strconv.ParseFloat(v, bits)
		if err != nil {
			return fmt.Errorf("want %s, got %q", name, v)
		}
		app(x)
		return nil
	}
	c.json = func(v any) error {
		n, ok := v.(json.Number)
		if !ok {
			return errType(name, v)
		}
		return c.text(string(n))
	}
}

// appendNull appends a null, refusing it for a non-nullable column.
func (c *column) appendNull() error {
	if !c.field.Nullable {
		return fmt.Errorf("column %q is not nullable", c.field.Name)
	}
	c.b.AppendNull()
	return nil
}

// buildRecord makes a record of the builders' contents and resets them.
func buildRecord(sc *arrow.Schema, cols []*column) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		arrs[i] = c.b.NewArray()
	}
	n := int64(0)
	if len(arrs) > 0 {
		n = int64(arrs[0].Len())
	}
	rec := array.NewRecordBatch(sc, arrs, n)
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func releaseColumns(cols []*column) {
	for _, c := range cols {
		c.b.Release()
	}
}
