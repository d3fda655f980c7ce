package azstore_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
)

// TestSiblingCopyFrom: a store on another container of the account, with
// the same credential, lists and reads that container; CopyFrom copies its
// blobs into this store with Copy Blob, byte-exact (Content-MD5 kept),
// conditional on the source's ETag and on the destination's absence; a
// missing source is not found, a missing container's listing is
// ErrBucketNotFound, and the errors name them.
func TestSiblingCopyFrom(t *testing.T) {
	t.Parallel()
	s := testenv.AzureStore(t)
	other := testenv.AzureContainer(t)
	ctx := context.Background()
	src, err := s.Sibling(other, "staging/")
	if err != nil {
		t.Fatal(err)
	}
	wantURI := "az://" + other + "/staging/a"
	if s.Account() != "" {
		wantURI = "abfss://" + other + "@" + s.Account() + ".dfs.core.windows.net/staging/a"
	}
	if src.Container() != other || src.Prefix() != "staging/" || src.Account() != s.Account() || src.URI("a") != wantURI {
		t.Fatalf("sibling: container %q prefix %q account %q URI %q", src.Container(), src.Prefix(), src.Account(), src.URI("a"))
	}
	data := []byte("parquet bytes, say")
	a, err := src.Put(ctx, "out/a.parquet", data, store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	var listed []store.Attrs
	for e, err := range src.List(ctx, "out/") {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, e)
	}
	if len(listed) != 1 || listed[0].Key != "out/a.parquet" || listed[0].ETag != a.ETag || listed[0].ContentMD5 == "" {
		t.Fatalf("sibling listing: %+v, want out/a.parquet at %s with its MD5", listed, a.ETag)
	}

	c, err := s.CopyFrom(ctx, "gen/1/a.parquet", other, "staging/out/a.parquet", store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	got, ga, err := store.ReadAll(ctx, s, "gen/1/a.parquet")
	if err != nil || string(got) != string(data) || ga.ETag != c.ETag {
		t.Fatalf("copied: %q at %s (copy said %s), %v", got, ga.ETag, c.ETag, err)
	}
	if st, err := s.Stat(ctx, "gen/1/a.parquet"); err != nil || st.ContentMD5 != listed[0].ContentMD5 {
		t.Fatalf("copy's MD5 %q, source's %q (%v)", st.ContentMD5, listed[0].ContentMD5, err)
	}
	if b, _, err := store.ReadAll(ctx, src, "out/a.parquet"); err != nil || string(b) != string(data) {
		t.Fatalf("source after the copy: %q %v", b, err)
	}

	_, err = s.CopyFrom(ctx, "gen/1/a.parquet", other, "staging/out/a.parquet", store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy onto an existing key with IfNoneMatch: %v, want ErrPrecondition", err)
	}
	if _, err := src.Put(ctx, "out/a.parquet", []byte("replaced"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CopyFrom(ctx, "gen/2/a.parquet", other, "staging/out/a.parquet", store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPrecondition) || !strings.Contains(err.Error(), src.URI("out/a.parquet")) {
		t.Fatalf("copy of a replaced source: %v, want ErrPrecondition naming the source", err)
	}
	if _, err := s.Stat(ctx, "gen/2/a.parquet"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused copy left its destination: %v", err)
	}
	_, err = s.CopyFrom(ctx, "gen/3/a.parquet", other, "staging/missing.parquet", store.CopyOptions{IfNoneMatch: true})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), src.URI("missing.parquet")) {
		t.Fatalf("copy of a missing source: %v, want ErrNotFound naming it", err)
	}

	missing, err := s.Sibling("missing-"+other, "")
	if err != nil {
		t.Fatal(err)
	}
	listed = nil
	for a, err := range missing.List(ctx, "out/") {
		listed = append(listed, a)
		if !errors.Is(err, store.ErrBucketNotFound) || !strings.Contains(err.Error(), missing.URI("out/")) {
			t.Errorf("list of a missing container: %v, want ErrBucketNotFound naming it", err)
		}
	}
	if len(listed) != 1 {
		t.Errorf("list of a missing container yielded %d entries, want its one error", len(listed))
	}
	if _, err := s.CopyFrom(ctx, "gen/4/a.parquet", "missing-"+other, "out/a.parquet", store.CopyOptions{IfNoneMatch: true}); err == nil || !strings.Contains(err.Error(), missing.URI("out/a.parquet")) {
		t.Errorf("copy from a missing container: %v, want an error naming the source", err)
	}
	for _, bad := range []struct{ container, key string }{{"Bad_Container", "k"}, {other, ""}, {other, "a/../b"}} {
		if _, err := s.CopyFrom(ctx, "gen/5/a", bad.container, bad.key, store.CopyOptions{}); err == nil {
			t.Errorf("CopyFrom(%q, %q): no error", bad.container, bad.key)
		}
	}
	if _, err := s.Sibling("Bad_Container", ""); err == nil {
		t.Error("Sibling of an invalid container name: no error")
	}
	for a, err := range s.List(ctx, "gen/") {
		if err != nil || a.Key != "gen/1/a.parquet" {
			t.Errorf("left in the store: %s %v", a.Key, err)
		}
	}
}

// TestSiblingWithContainerSAS: a store whose credential is a SAS for its
// own container makes siblings with that SAS, which another container
// refuses: access denied, and no error shows the signature.
func TestSiblingWithContainerSAS(t *testing.T) {
	t.Parallel()
	s := testenv.AzureStore(t)
	other := testenv.AzureContainer(t)
	endpoint := os.Getenv("AZURITE_BLOB_ENDPOINT")
	if endpoint == "" {
		t.Skip("needs AZURITE_BLOB_ENDPOINT (scripts/azurite.sh)")
	}
	ctx := context.Background()
	if _, err := s.Sibling(other, ""); err != nil {
		t.Fatal(err)
	}
	sasURL, err := s.Client().GetSASURL(sas.ContainerPermissions{Read: true, Write: true, Create: true, List: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(sasURL)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{azstore.EnvAccount: s.Account(), azstore.EnvSAS: u.RawQuery}
	sa, err := azstore.New(ctx, s.Container(), "", azstore.Options{Endpoint: endpoint, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range sa.List(ctx, "") {
		t.Fatalf("listing the SAS's own container: %v", err)
	}
	sib, err := sa.Sibling(other, "")
	if err != nil {
		t.Fatal(err)
	}
	denied := false
	for _, err := range sib.List(ctx, "out/") {
		denied = true
		if !errors.Is(err, store.ErrAccessDenied) || !strings.Contains(err.Error(), sib.URI("out/")) {
			t.Errorf("list of another container with a container SAS: %v, want ErrAccessDenied naming it", err)
		}
		if err != nil && (strings.Contains(err.Error(), "sig=") || strings.Contains(err.Error(), u.Query().Get("sig"))) {
			t.Errorf("error shows the SAS: %v", err)
		}
	}
	if !denied {
		t.Error("another container listed with a container SAS")
	}
}
