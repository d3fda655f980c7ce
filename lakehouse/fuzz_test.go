package lakehouse_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// FuzzParseMetadata: any bytes either parse as v2 metadata or fail with
// ErrCorrupt; never a panic.
func FuzzParseMetadata(f *testing.F) {
	mem := memstore.New()
	r := publish(f, mem, commit(f, mem, "dt=2026-11-01", 3, "f", swap.Options{}))
	good, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(r.Version))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"format-version": 1}`))
	f.Add([]byte(`{"format-version": 2, "table-uuid": "x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := lakehouse.ParseMetadata(data)
		if err != nil && !errors.Is(err, lakehouse.ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
		if err == nil && m.Version() != 2 {
			t.Fatalf("accepted format version %d", m.Version())
		}
	})
}

// FuzzMetadataKeys: the key classifiers accept only keys directly under
// metadata/ that are valid store keys.
func FuzzMetadataKeys(f *testing.F) {
	for _, k := range []string{"metadata/v1.metadata.json", "metadata/v01.metadata.json", "metadata/version-hint.text",
		"metadata/snap-1-2-abcdefgh.avro", "metadata/pswap-0123456789abcdef-3-01900000-0000-7000-8000-000000000000-9.avro",
		"metadata/../v1.metadata.json", "dt=1/metadata/v1.metadata.json"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if lakehouse.IsMetadataKey(key) {
			if !strings.HasPrefix(key, lakehouse.MetadataPrefix) || strings.Contains(strings.TrimPrefix(key, lakehouse.MetadataPrefix), "/") {
				t.Fatalf("IsMetadataKey(%q) outside metadata/", key)
			}
			if err := store.ValidateKey(key); err != nil {
				t.Fatalf("IsMetadataKey(%q) but %v", key, err)
			}
		}
		if v, ok := lakehouse.VersionOfKey(key); ok && lakehouse.MetadataKey(v) != key {
			t.Fatalf("VersionOfKey(%q) = %d, which is %s", key, v, lakehouse.MetadataKey(v))
		}
	})
}

// The publish errors carry their kinds: corrupt metadata is corrupt, and
// no retry fixes a schema or layout Iceberg cannot hold.
func TestErrorKinds(t *testing.T) {
	if !errors.Is(fmt.Errorf("v6.metadata.json: %w", lakehouse.ErrCorrupt), errkind.ErrCorrupt) {
		t.Error("ErrCorrupt is not corrupt")
	}
	for _, e := range []error{lakehouse.ErrCorrupt, lakehouse.ErrSchema, lakehouse.ErrLayout} {
		if errkind.Retryable(fmt.Errorf("publish: %w", e)) {
			t.Errorf("%v is retryable", e)
		}
	}
	if !errkind.Retryable(fmt.Errorf("publish: %w", lakehouse.ErrContention)) {
		t.Error("ErrContention: publishing again converges, so it is retryable")
	}
}
