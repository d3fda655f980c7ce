package tablemeta

import (
	"context"
	"errors"
	"fmt"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/store"
)

// Read reads and decodes the table document of the table whose root st is,
// with its version tag (ETag) for a conditional Update. A table without
// one is store.ErrNotFound. A document that does not decode is ErrInvalid
// (never silently replaced: it is a store problem for the operator).
func Read(ctx context.Context, st store.Store) (*Table, string, error) {
	data, attrs, err := store.ReadAll(ctx, st, Key)
	if err != nil {
		return nil, "", err
	}
	t, err := Decode(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", st.URI(Key), err)
	}
	return t, attrs.ETag, nil
}

// Load is Read for a reader of the table's schema (the facade's
// Table.Schema, `pswap show` and `status`), without the version tag: a
// document that does not decode is also errkind.ErrCorrupt, metadata on
// the store that is malformed.
func Load(ctx context.Context, st store.Store) (*Table, error) {
	t, _, err := Read(ctx, st)
	if errors.Is(err, ErrInvalid) {
		return nil, fmt.Errorf("%w: %w", errkind.ErrCorrupt, err)
	}
	return t, err
}

// Create writes the document of a new table, create-if-absent. When
// another writer created it first, Create returns the document that is
// there (and its tag) with created false; the caller checks its data
// against that one.
func Create(ctx context.Context, st store.Store, t *Table) (current *Table, etag string, created bool, err error) {
	data, err := Encode(t)
	if err != nil {
		return nil, "", false, err
	}
	attrs, err := st.Put(ctx, Key, data, store.PutOptions{IfNoneMatch: true, ContentType: "application/json"})
	if err == nil {
		return t.Clone(), attrs.ETag, true, nil
	}
	if !errors.Is(err, store.ErrPrecondition) && !errors.Is(err, store.ErrTransient) {
		return nil, "", false, fmt.Errorf("create %s: %w", st.URI(Key), err)
	}
	// Someone created it, or our own write landed and its reply was lost:
	// read back what is there.
	cur, tag, rerr := Read(ctx, st)
	if rerr != nil {
		return nil, "", false, fmt.Errorf("create %s: %w (read back: %w)", st.URI(Key), err, rerr)
	}
	if got, _ := Encode(cur); string(got) == string(data) {
		return cur, tag, true, nil
	}
	return cur, tag, false, nil
}

// ErrChanged: Update lost a race (the document changed since it was read).
var ErrChanged = errors.New("table metadata changed concurrently")

// Update replaces the document, conditionally on the version tag the
// caller read. A lost race is ErrChanged (wrapping store.ErrPrecondition):
// re-read, re-check, and try again if still needed.
func Update(ctx context.Context, st store.Store, t *Table, etag string) (string, error) {
	if etag == "" {
		return "", fmt.Errorf("tablemeta: Update needs the tag of the document read")
	}
	data, err := Encode(t)
	if err != nil {
		return "", err
	}
	attrs, err := st.Put(ctx, Key, data, store.PutOptions{IfMatch: etag, ContentType: "application/json"})
	if err == nil {
		return attrs.ETag, nil
	}
	if errors.Is(err, store.ErrPrecondition) || errors.Is(err, store.ErrTransient) {
		// A transient failure's outcome is unknown: if what is there now
		// is exactly ours, our write landed.
		cur, tag, rerr := Read(ctx, st)
		if rerr == nil {
			if got, _ := Encode(cur); string(got) == string(data) {
				return tag, nil
			}
		}
		return "", fmt.Errorf("update %s: %w: %w", st.URI(Key), ErrChanged, err)
	}
	return "", fmt.Errorf("update %s: %w", st.URI(Key), err)
}
