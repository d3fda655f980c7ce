package s3store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// A store on a bucket prefix, configured from the standard AWS variables
// (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...), and a pointer
// swapped by a conditional put.
func ExampleNew() {
	ctx := context.Background()
	s, err := s3store.New(ctx, "my-lake", "warehouse/sales", s3store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// Create the pointer if it is absent...
	a, err := s.Put(ctx, "dt=2026-11-29/_pswap/pointer.json", []byte(`{"gen":"g1"}`),
		store.PutOptions{IfNoneMatch: true})
	if errors.Is(err, store.ErrPrecondition) {
		log.Fatal("someone else created it first")
	} else if err != nil {
		log.Fatal(err)
	}
	// ...and replace it only if it is still the version we wrote.
	_, err = s.Put(ctx, "dt=2026-11-29/_pswap/pointer.json", []byte(`{"gen":"g2"}`),
		store.PutOptions{IfMatch: a.ETag})
	switch {
	case errors.Is(err, store.ErrPrecondition):
		fmt.Println("lost the race: re-read the pointer")
	case store.IsRetryable(err):
		fmt.Println("outcome unknown: read the pointer back")
	case err != nil:
		log.Fatal(err)
	}
}

// Streaming a large object: parts are uploaded while the caller writes;
// nothing is visible until Commit.
func ExampleStore_NewWriter() {
	ctx := context.Background()
	s, err := s3store.Open(ctx, "s3://my-lake/warehouse/sales", s3store.Options{ChecksumWhenRequired: true})
	if err != nil {
		log.Fatal(err)
	}
	w, err := s.NewWriter(ctx, "dt=2026-11-29/_pswap/gen/g1/part-00000.parquet",
		store.WriterOptions{PutOptions: store.PutOptions{IfNoneMatch: true}})
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("part-00000.parquet")
	if err != nil {
		w.Abort()
		log.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteTo(w); err != nil {
		w.Abort() // aborts the multipart upload: nothing is left behind
		log.Fatal(err)
	}
	a, err := w.Commit()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Size, a.ETag)
}

func ExampleParseURL() {
	bucket, prefix, err := s3store.ParseURL("s3://my-lake/warehouse/sales/")
	fmt.Println(bucket, prefix, err)
	_, _, err = s3store.ParseURL("s3://my-lake/../etc")
	fmt.Println(errors.Is(err, store.ErrInvalidKey))
	// Output:
	// my-lake warehouse/sales <nil>
	// true
}
