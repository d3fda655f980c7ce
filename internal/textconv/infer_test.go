package textconv

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

type schemaSink struct{ sc *arrow.Schema }

func (s *schemaSink) Schema(sc *arrow.Schema) error     { s.sc = sc; return nil }
func (s *schemaSink) Write(rec arrow.RecordBatch) error { return nil }

// TestInferZeroPadded: a zero-padded number with a fraction ("0012.50",
// a fixed-width export's amount) is inferred as a double, as "12.50" is,
// so that a padded and an unpadded day agree; a zero-padded integer
// ("00123", a zip code or an account number) stays a string, as its
// leading zeros are part of an identifier (issue 39, item 10).
func TestInferZeroPadded(t *testing.T) {
	for _, c := range []struct {
		csv  string
		want arrow.DataType
	}{
		{"v\n0012.50\n0003.00\n", arrow.PrimitiveTypes.Float64},
		{"v\n0012.50\n12.5\n", arrow.PrimitiveTypes.Float64},
		{"v\n-0012.50\n", arrow.PrimitiveTypes.Float64},
		{"v\n0.5\n", arrow.PrimitiveTypes.Float64},
		{"v\n00123\n", arrow.BinaryTypes.String},
		{"v\n007\n12\n", arrow.BinaryTypes.String},
		{"v\n+1.5\n", arrow.BinaryTypes.String},
		{"v\n00.\n", arrow.BinaryTypes.String},
		{"v\n0012.50.1\n", arrow.BinaryTypes.String},
	} {
		var s schemaSink
		if err := CSV(context.Background(), strings.NewReader(c.csv), "x.csv", Options{}, &s); err != nil {
			t.Fatalf("%q: %v", c.csv, err)
		}
		if got := s.sc.Field(0).Type; !arrow.TypeEqual(got, c.want) {
			t.Errorf("%q: inferred %s, want %s", c.csv, got, c.want)
		}
	}
}
