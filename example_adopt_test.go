package pswap_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// An engine writes a partition into a reserved generation; the commit
// adopts its files by their footers, without downloading them.
func ExamplePartition_Reserve() {
	ctx := context.Background()
	st := memstore.New()
	t := pswap.NewTable(st)
	p, _ := t.Partition("dt=2026-09-01")

	res, err := p.Reserve(ctx, pswap.CommitOptions{})
	if err != nil {
		panic(err)
	}
	// The engine: a Parquet file and its marker under res.Prefix.
	type sale struct {
		ID int64 `parquet:"id"`
	}
	var buf bytes.Buffer
	parquet.Write(&buf, []sale{{1}, {2}, {3}})
	st.Put(ctx, res.Prefix+"part-00000.parquet", buf.Bytes(), store.PutOptions{})
	st.Put(ctx, res.Prefix+"_SUCCESS", nil, store.PutOptions{})

	r, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Changed, r.Rows, r.Files, r.Generation == res.Generation)
	// Output: true 3 1 true
}
