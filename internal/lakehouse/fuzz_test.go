package lakehouse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// FuzzParseMetadata: any bytes either parse as v2 metadata or fail with
// ErrCorrupt, never a panic. What parses encodes to a file that parses to
// the same, and where iceberg-go's reader (the one pswap used before) reads
// it too, the two agree on its snapshots, schema, spec and properties.
func FuzzParseMetadata(f *testing.F) {
	mem := memstore.New()
	r := publish(f, mem, commit(f, mem, "dt=2026-11-01", 3, "f", swap.Options{}))
	good, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(r.Version))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(bytes.Replace(good, []byte(`"current-snapshot-id":`), []byte(`"current-snapshot-id":1`), 1))
	f.Add(bytes.Replace(good, []byte(`"format-version":2`), []byte(`"format-version":1`), 1))
	f.Add(bytes.Replace(good, []byte(`"pswap/1"`), []byte(`"pswap/2"`), 1))
	// A version with two snapshots, two schemas and a metadata log.
	f.Add(encodeJSON(f, goodMetadata(f)))
	f.Add([]byte(`{"format-version": 1}`))
	f.Add([]byte(`{"format-version": 2, "table-uuid": "x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := lakehouse.ParseMetadata(data)
		if err != nil {
			if !errors.Is(err, lakehouse.ErrCorrupt) && !errors.Is(err, strictjson.ErrNewerFormat) {
				t.Fatalf("error %v is not ErrCorrupt (nor ErrNewerFormat)", err)
			}
			return
		}
		if m.FormatVersion() != 2 {
			t.Fatalf("accepted format version %d", m.FormatVersion())
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("encode what parsed: %v", err)
		}
		again, err := lakehouse.ParseMetadata(enc)
		if err != nil {
			t.Fatalf("what parsed encodes to what does not: %v\n%s", err, enc)
		}
		if enc2, _ := json.Marshal(again); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
		}
		old, err := icebergGoParse(data)
		if err != nil {
			return
		}
		same := func(what string, a, b any) {
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: iceberg-go reads %v, pswap %v", what, a, b)
			}
		}
		md := lakehouse.Model(m)
		oldCur, cur := int64(-1), int64(-1)
		if cs := old.CurrentSnapshot(); cs != nil {
			oldCur = cs.SnapshotID
		}
		if cs := m.CurrentSnapshot(); cs != nil {
			cur = cs.SnapshotID
		}
		same("current snapshot", oldCur, cur)
		var oldIDs, ids []int64
		for _, s := range old.Snapshots() {
			oldIDs = append(oldIDs, s.SnapshotID)
		}
		for _, s := range m.Snapshots() {
			ids = append(ids, s.SnapshotID)
		}
		same("snapshots", oldIDs, ids)
		same("current schema", old.CurrentSchema().ID, md.CurrentSchemaID)
		same("default spec", old.DefaultPartitionSpec(), md.DefaultSpecID)
		same("last-updated-ms", old.LastUpdatedMillis(), md.LastUpdatedMS)
		if !maps.Equal(old.Properties(), iceberg.Properties(m.Properties())) {
			t.Fatalf("properties: iceberg-go %v, pswap %v", old.Properties(), m.Properties())
		}
	})
}

// icebergGoParse is iceberg-go's reader, which panics on some input.
func icebergGoParse(data []byte) (m table.Metadata, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return table.ParseMetadataBytes(data)
}

// FuzzMetadataKeys: the key classifiers accept only keys directly under
// metadata/ that are valid store keys.
func FuzzMetadataKeys(f *testing.F) {
	for _, k := range []string{"metadata/v1.metadata.json", "metadata/v01.metadata.json", "metadata/version-hint.text",
		"metadata/snap-1-2-abcdefgh.avro", "metadata/pswap-0123456789abcdef-3-01900000-0000-7000-8000-000000000000-9.avro",
		"metadata/pswap-g0123456789abcdef-3-9-0a1b2c3d.avro", "metadata/pswap-m0123456789abcdef-202611-3-9-0a1b2c3d.avro",
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

// FuzzKeysOf: a location read from metadata maps only to valid store keys
// inside the table (never above its root), or is refused; it never panics.
// A location the table's own root spells maps back to its key first.
func FuzzKeysOf(f *testing.F) {
	for _, loc := range []string{"file:///lake/sales/dt=2026-11-29/_pswap/gen/g/part-00000.parquet",
		"file:///lake/sales/region=us%20east/x.parquet", "/lake/sales/metadata/snap-1-1-a.avro",
		"file:/lake/sales/metadata/v1.metadata.json", "file:///lake/sales/../etc/passwd", "file:///old/x.avro",
		"s3://b/sales/x", "file:///lake/sales/", "file:///lake/sales"} {
		f.Add(loc)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		keys, err := lakehouse.KeysOf("file:///lake/sales", "file:///lake/sales", "file:///old", loc)
		if err != nil {
			return
		}
		if len(keys) == 0 {
			t.Fatalf("KeysOf(%q): no key and no error", loc)
		}
		for _, k := range keys {
			if err := store.ValidateKey(k); err != nil {
				t.Fatalf("KeysOf(%q) = %q, not a valid key: %v", loc, k, err)
			}
		}
		if k, ok := strings.CutPrefix(loc, "file:///lake/sales/"); ok && store.ValidateKey(k) == nil && keys[0] != k {
			t.Fatalf("KeysOf(%q) = %q, want %q first", loc, keys, k)
		}
	})
}
