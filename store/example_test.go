package store_test

import (
	"context"
	"fmt"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// Read the last bytes of an object and copy it server-side, conditional on
// the version that was read.
func ExampleGetRange() {
	ctx := context.Background()
	s := memstore.New()
	s.Put(ctx, "in/data.parquet", []byte("...payload...PAR1"), store.PutOptions{})

	tail, a, err := store.ReadRange(ctx, s, "in/data.parquet", 13, -1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q of %d bytes\n", tail, a.Size)

	_, err = store.Copy(ctx, s, "gen/1/data.parquet", "in/data.parquet",
		store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	fmt.Println("copied:", err == nil)
	// Output:
	// "PAR1" of 17 bytes
	// copied: true
}
