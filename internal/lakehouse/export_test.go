package lakehouse

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Hooks for the tests in package lakehouse_test: those of the metadata
// model check it against iceberg-go's table package.

// Model gives a test the fields of a parsed version.
func Model(m *Metadata) *tableMetadata { return m.md }

// BuildFirstMetadata encodes the first version firstMetadata builds.
func BuildFirstMetadata(id uuid.UUID, loc string, sc *iceberg.Schema, spec iceberg.PartitionSpec, props map[string]string, snap Snapshot) ([]byte, error) {
	md, err := firstMetadata(id, loc, sc, spec, props, snap)
	if err != nil {
		return nil, err
	}
	return md.encode()
}

// BuildNextMetadata parses prev (read from prevLoc) and encodes the
// version withSnapshot builds on it.
func BuildNextMetadata(prev []byte, prevLoc string, sc *iceberg.Schema, props map[string]string, snap Snapshot) ([]byte, error) {
	m, err := parseMetadata(prev)
	if err != nil {
		return nil, err
	}
	md, err := m.withSnapshot(prevLoc, sc, props, snap)
	if err != nil {
		return nil, err
	}
	return md.encode()
}

// BuildExpiredMetadata parses prev (read from prevLoc) and encodes the
// version withoutSnapshots builds on it.
func BuildExpiredMetadata(prev []byte, prevLoc string, drop []int64, nowMs int64) ([]byte, error) {
	m, err := parseMetadata(prev)
	if err != nil {
		return nil, err
	}
	md, err := m.withoutSnapshots(prevLoc, drop, nowMs)
	if err != nil {
		return nil, err
	}
	return md.encode()
}

// IcebergType is the Iceberg type of an Arrow column of a footer, its
// nested fields given ids as a publish gives them: those of prev, the
// column's type in the table, by name path, else the next after *next.
func IcebergType(f arrow.Field, prev iceberg.Type, next *int) (iceberg.Type, error) {
	t, err := footerType(f)
	if err != nil {
		return nil, err
	}
	ids := newIDPlan(*next, 0)
	t = ids.typ(t, prev)
	*next = ids.next
	return t, nil
}

// WaitPrefetch waits for a prefetch's reads and returns their error.
func WaitPrefetch(f *Prefetch) error {
	<-f.done
	return f.err
}

// KeysOf maps a location to the store keys it may name, for a table whose
// root URI is tableURI (escapedURI: its percent-encoded spelling) and,
// when oldRoot is set, whose metadata records that root.
func KeysOf(tableURI, escapedURI, oldRoot, loc string) ([]string, error) {
	p := &publisher{tableURI: tableURI, escapedURI: escapedURI, oldRoot: oldRoot}
	return p.keysOf(loc)
}

// KeepHot sets how many groups of each prefix stay out of the cold
// manifest (n large: the layout before cold manifests) until the returned
// function restores it.
func KeepHot(n int) (restore func()) {
	old := keepHot
	keepHot = n
	return func() { keepHot = old }
}
