package testenv

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
)

// EnvAzure is the variable that enables Azure Blob Storage tests
// (scripts/azurite.sh start sets it, with the connection string).
const EnvAzure = "PSWAP_TEST_AZURE"

const azureSkipMessage = "Azure tests need Azurite: run scripts/test.sh, or start scripts/azurite.sh and load its env file (" +
	EnvAzure + "=1 and AZURE_STORAGE_CONNECTION_STRING)"

// AzureEnabled reports whether Azure tests are enabled (PSWAP_TEST_AZURE
// set to anything but "", "0" or "false").
func AzureEnabled() bool {
	v := strings.TrimSpace(os.Getenv(EnvAzure))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// AzureOptions returns the azstore options tests use: the environment's.
// It skips the test when Azure tests are not enabled.
func AzureOptions(t testing.TB) azstore.Options {
	t.Helper()
	if !AzureEnabled() {
		t.Skip(azureSkipMessage)
	}
	return azstore.Options{}
}

// AzureContainer creates a fresh, empty container with a unique name and
// returns its name. It is deleted, with its blobs, when the test ends.
func AzureContainer(t testing.TB) string {
	t.Helper()
	opts := AzureOptions(t)
	name := "pswap-test-" + randomHex(t, 8)
	s, err := azstore.New(context.Background(), name, "", opts)
	if err != nil {
		t.Fatalf("testenv: azstore.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().Create(ctx, nil); err != nil {
		t.Fatalf("testenv: create container %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.Client().Delete(ctx, &container.DeleteOptions{}); err != nil {
			t.Errorf("testenv: delete container %s: %v", name, err)
		}
	})
	return name
}

// AzureURL returns az://container/prefix for a fresh container (see
// AzureContainer), for tests that open a store by URL, such as CLI tests.
func AzureURL(t testing.TB) string {
	t.Helper()
	return "az://" + AzureContainer(t) + "/" + testPrefix(t)
}

// Azure returns a store rooted at a prefix of a fresh container. The
// concrete type is *azstore.Store.
func Azure(t testing.TB) store.Store {
	t.Helper()
	return AzureStore(t)
}

// AzureStore is Azure returning the concrete type.
func AzureStore(t testing.TB) *azstore.Store {
	t.Helper()
	name := AzureContainer(t)
	s, err := azstore.New(context.Background(), name, testPrefix(t), AzureOptions(t))
	if err != nil {
		t.Fatalf("testenv: azstore.New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
