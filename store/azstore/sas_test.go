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

// TestSAS opens a store with a container SAS (AZURE_STORAGE_ACCOUNT and
// AZURE_STORAGE_SAS_TOKEN, no key), writes, reads, lists and deletes
// through it (single deletes: a batch needs a key), and checks that no
// error names the signature, nor does OnSecret miss it.
func TestSAS(t *testing.T) {
	t.Parallel()
	s := testenv.AzureStore(t)
	endpoint := os.Getenv("AZURITE_BLOB_ENDPOINT")
	if endpoint == "" {
		t.Skip("needs AZURITE_BLOB_ENDPOINT (scripts/azurite.sh)")
	}
	sasURL, err := s.Client().GetSASURL(sas.ContainerPermissions{Read: true, Write: true, Create: true, Delete: true, List: true},
		time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(sasURL)
	if err != nil {
		t.Fatal(err)
	}
	token := u.RawQuery
	sig := u.Query().Get("sig")
	var secrets []string
	env := map[string]string{azstore.EnvAccount: s.Account(), azstore.EnvSAS: "?" + token}
	sa, err := azstore.New(context.Background(), s.Container(), strings.TrimSuffix(s.Prefix(), "/"), azstore.Options{
		Endpoint: endpoint,
		Getenv:   func(k string) string { return env[k] },
		OnSecret: func(v string) { secrets = append(secrets, v) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(secrets, token) || !contains(secrets, sig) {
		t.Errorf("OnSecret was not given the SAS and its signature (%d secrets)", len(secrets))
	}
	ctx := context.Background()
	a, err := sa.Put(ctx, "dt=1/a", []byte("via sas"), store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Put(ctx, "dt=1/a", []byte("again"), store.PutOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("second create through SAS: %v", err)
	}
	if st, err := s.Stat(ctx, "dt=1/a"); err != nil || st.ETag != a.ETag {
		t.Fatalf("written through SAS, seen with the key: %+v %v", st, err)
	}
	if err := sa.DeleteMany(ctx, []string{"dt=1/a", "dt=1/missing"}); err != nil {
		t.Fatal(err)
	}
	for a, err := range sa.List(ctx, "") {
		t.Fatalf("left: %v %v", a.Key, err)
	}
	// A SAS for another container: denied, and the error shows no signature.
	other, err := azstore.New(ctx, "pswap-other-container", "", azstore.Options{Endpoint: endpoint, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = other.Get(ctx, "k")
	if !errors.Is(err, store.ErrAccessDenied) && !errors.Is(err, store.ErrBucketNotFound) {
		t.Errorf("Get with another container's SAS: %v, want access denied", err)
	}
	if err != nil && (strings.Contains(err.Error(), sig) || strings.Contains(err.Error(), "sig=")) {
		t.Errorf("error shows the SAS: %v", err)
	}
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// TestTransportErrorHidesSAS: a request that gets no answer (nothing
// listens) fails as transient, and its error, which the HTTP client writes
// with the request URL, carries no SAS.
func TestTransportErrorHidesSAS(t *testing.T) {
	const sig = "c2VjcmV0LXNpZ25hdHVyZQ%3D%3D"
	env := map[string]string{azstore.EnvAccount: "acct01", azstore.EnvSAS: "sv=2024-11-04&sp=r&sig=" + sig}
	s, err := azstore.New(context.Background(), "lake", "", azstore.Options{
		Endpoint: "http://127.0.0.1:1/acct01", RetryMaxAttempts: 1,
		Getenv: func(k string) string { return env[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(context.Background(), "k", []byte("x"), store.PutOptions{})
	if !errors.Is(err, store.ErrTransient) {
		t.Errorf("Put to a closed port: %v, want ErrTransient", err)
	}
	if err == nil || strings.Contains(err.Error(), "sig=") || strings.Contains(err.Error(), sig) {
		t.Errorf("error shows the SAS: %v", err)
	}
}
