package lakehouse_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// Iceberg metadata whose pswap.format is newer than this pswap's was
// written by a newer pswap: reading it says so (ErrNewerFormat, not
// ErrCorrupt, nor another writer's), and a publish, a commit's or a
// repairing one, refuses it and leaves it as it is.
func TestNewerIcebergFormatRefused(t *testing.T) {
	mem := memstore.New()
	r := publish(t, mem, commit(t, mem, "dt=2026-11-01", 3, "f", swap.Options{}))
	key := lakehouse.MetadataKey(r.Version)
	data, _, err := store.ReadAll(ctx, mem, key)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"pswap\.format"\s*:\s*"pswap/1"`)
	if !re.Match(data) {
		t.Fatalf("the metadata has no pswap.format of pswap/1: %s", data)
	}
	newer := re.ReplaceAll(data, []byte(`"pswap.format":"pswap/2"`))
	_, err = lakehouse.ParseMetadata(newer)
	if !errors.Is(err, strictjson.ErrNewerFormat) || errors.Is(err, lakehouse.ErrCorrupt) ||
		!strings.Contains(err.Error(), "written by a newer pswap (format pswap/2); upgrade") {
		t.Fatalf("metadata of pswap/2: %v, want ErrNewerFormat", err)
	}
	if _, err := mem.Put(ctx, key, newer, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c := commit(t, mem, "dt=2026-11-02", 3, "g", swap.Options{})
	_, err = lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: c.Partition, Generation: c.Generation, Seq: c.Seq}, lakehouse.Options{})
	if !errors.Is(err, strictjson.ErrNewerFormat) || errors.Is(err, lakehouse.ErrForeign) {
		t.Errorf("publish over pswap/2 metadata: %v, want ErrNewerFormat", err)
	}
	if _, err := lakehouse.Publish(noWait, mem, lakehouse.Options{}); !errors.Is(err, strictjson.ErrNewerFormat) {
		t.Errorf("repairing publish over pswap/2 metadata: %v, want ErrNewerFormat", err)
	}
	after, _, err := store.ReadAll(ctx, mem, key)
	if err != nil || !bytes.Equal(after, newer) {
		t.Errorf("the newer metadata was changed (%v)", err)
	}
	if _, err := mem.Stat(ctx, lakehouse.MetadataKey(r.Version+1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a version was written over the newer one: %v", err)
	}
}
