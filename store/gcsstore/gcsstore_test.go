package gcsstore_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/store/storetest"
)

// TestConformance runs the store conformance suite against fake-gcs-server.
func TestConformance(t *testing.T) {
	t.Parallel()
	testenv.GCSOptions(t) // skip early, with the message, when GCS is off
	storetest.Run(t, func(t *testing.T) store.Store { return testenv.GCS(t) }, storetest.Options{
		PartSize:   1 << 20,
		ContentMD5: true,
		NewMissing: func(t *testing.T) (store.Store, error) {
			s, err := gcsstore.New(context.Background(), "pswap-missing-"+strconv.FormatInt(time.Now().UnixNano(), 36), "p", testenv.GCSOptions(t))
			if err == nil {
				t.Cleanup(func() { _ = s.Close() })
			}
			return s, err
		},
	})
}

// TestServerDelimiter checks the merge of a page of objects and common
// prefixes on the emulator, with a one-byte delimiter and fewer entries than
// a page (where fake-gcs-server's delimited listing is right).
func TestServerDelimiter(t *testing.T) {
	t.Parallel()
	s := testenv.GCSStore(t)
	ctx := context.Background()
	for _, k := range []string{"t/a", "t/b/x", "t/b/y", "t/c", "t/d/z", "t/e"} {
		if _, err := s.Put(ctx, k, []byte(k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"t/a", "t/b/", "t/c", "t/d/", "t/e"}
	for _, server := range []bool{false, true} {
		if server {
			gcsstore.UseServerDelimiter(s)
		}
		var got []string
		for e, err := range s.ListDelimited(ctx, "t/", "/") {
			if err != nil {
				t.Fatal(err)
			}
			if e.IsPrefix != strings.HasSuffix(e.Key, "/") {
				t.Fatalf("entry %+v: IsPrefix wrong", e)
			}
			got = append(got, e.Key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("server delimiter %v: %q, want %q", server, got, want)
		}
	}
}
