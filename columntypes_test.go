package pswap_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/pswap/pswap"
)

func TestColumnTypes(t *testing.T) {
	c, err := pswap.ParseColumnTypes("amount=double, qty=int,price=decimal(10,2)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Names(), []string{"amount", "qty", "price"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got, want := c.String(), "amount=double,qty=int,price=decimal(10,2)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	d, err := pswap.DecodeColumnTypes([]byte(`[{"name": "amount", "type": "double"}, {"name": "qty", "type": "int"}, {"name": "price", "type": "decimal(10,2)"}]`))
	if err != nil || !slices.Equal(d.Names(), c.Names()) || d.String() != c.String() {
		t.Errorf("DecodeColumnTypes = %v, %v; want %v", d, err, c)
	}
	if _, err := pswap.ParseColumnTypes("amount=dubble"); !errors.Is(err, pswap.ErrBadInput) {
		t.Errorf("an unknown type: %v, want ErrBadInput", err)
	}
	if len((pswap.ColumnTypes{}).Names()) != 0 {
		t.Error("the zero value declares a column")
	}
}
