package pswap

import (
	"strings"

	"github.com/pswap/pswap/internal/tablemeta"
)

// ColumnTypes declare the types of some columns up front
// (TableOptions.Declare), in Iceberg's type names: boolean, int, long,
// float, double, decimal(P,S), date, time, timestamp, timestamptz, string,
// binary, and nested list/map/struct types in the JSON form. The zero value
// declares nothing.
type ColumnTypes struct{ cols []tablemeta.ColumnType }

// ParseColumnTypes parses a NAME=TYPE list: "amount=double,qty=int".
func ParseColumnTypes(spec string) (ColumnTypes, error) {
	cols, err := tablemeta.ParseColumnTypes(spec)
	return ColumnTypes{cols}, err
}

// DecodeColumnTypes reads column types from JSON: an object of names to
// types ({"amount": "double"}), a list of {name, type}, or a document with
// such a list as "schema" (a table.json, or `pswap show --json` of a table).
func DecodeColumnTypes(data []byte) (ColumnTypes, error) {
	cols, err := tablemeta.DecodeColumnTypes(data)
	return ColumnTypes{cols}, err
}

// Names are the declared columns, in order.
func (c ColumnTypes) Names() []string {
	names := make([]string, len(c.cols))
	for i, col := range c.cols {
		names[i] = col.Name
	}
	return names
}

// String is the NAME=TYPE list ParseColumnTypes reads.
func (c ColumnTypes) String() string {
	parts := make([]string, len(c.cols))
	for i, col := range c.cols {
		parts[i] = col.Name + "=" + col.Type.String()
	}
	return strings.Join(parts, ",")
}
