package azstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/storetest"
)

// TestConformance runs the store conformance suite against Azurite (or
// any Blob service the environment names).
func TestConformance(t *testing.T) {
	t.Parallel()
	testenv.AzureOptions(t) // skip early, with the message, when Azure is off
	storetest.Run(t, func(t *testing.T) store.Store { return testenv.Azure(t) }, storetest.Options{
		ContentMD5: true,
		NewMissing: func(t *testing.T) (store.Store, error) {
			s, err := azstore.New(context.Background(), "pswap-missing-"+strconv.FormatInt(time.Now().UnixNano(), 36), "p", testenv.AzureOptions(t))
			if err == nil {
				t.Cleanup(func() { _ = s.Close() })
			}
			return s, err
		},
	})
}
