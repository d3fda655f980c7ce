package lakehouse

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/store"
)

// PublishedIDs are the field ids of the latest version's current schema:
// what Iceberg readers resolve a data file's Parquet field ids against.
type PublishedIDs struct {
	Top  map[string]int // each top-level column's id, by name
	Used map[int]string // every id in use, nested ones too, with its field's name path
}

// ReadPublishedIDs reads the field ids of the latest published version, as
// a publish finds it (the hint, then a probe). The zero PublishedIDs (nil
// maps): nothing is published yet.
func ReadPublishedIDs(ctx context.Context, st store.Store) (PublishedIDs, error) {
	_, v, err := Latest(ctx, st)
	if err != nil || v == 0 {
		return PublishedIDs{}, err
	}
	key := MetadataKey(v)
	data, _, err := store.ReadAll(ctx, st, key)
	if err != nil {
		return PublishedIDs{}, fmt.Errorf("read %s: %w", key, err)
	}
	md, err := parseMetadata(data)
	if err != nil {
		return PublishedIDs{}, fmt.Errorf("%s: %w", key, err)
	}
	sc := md.currentSchema()
	used, err := iceberg.IndexNameByID(sc)
	if err != nil {
		return PublishedIDs{}, fmt.Errorf("%s: %w: %v", key, ErrCorrupt, err)
	}
	ids := PublishedIDs{Top: map[string]int{}, Used: used}
	for _, f := range sc.Fields() {
		ids.Top[f.Name] = f.ID
	}
	return ids, nil
}
