package pswap

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/views"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Views are the views of a table that every writer keeps current with its
// partitions' pointers: the Iceberg metadata, the Delta Lake log and the
// Iceberg catalogs the table is registered in. They belong to the table
// (its table.json records them), not to a command: every commit, merge,
// rollback or gc, by the CLI or a Go program, publishes every view the
// table has (Writer.Publish, Partition.Publish, Table.Publish).
type Views struct {
	// Iceberg: <table>/metadata/ (on for every table unless turned off).
	Iceberg bool
	// Delta: the Delta Lake log, <table>/_delta_log/.
	Delta bool
	// Catalogs are the URLs of the Iceberg catalogs whose entry follows
	// the table's metadata (package catalog's form), without credentials:
	// a writer takes those from its environment.
	Catalogs []string
	// Recorded: the table's table.json records these views. False for a
	// table written before views were recorded: its views are then Iceberg
	// and, if the store has one, the Delta log; the next publish records
	// them.
	Recorded bool
}

func (v Views) doc() tablemeta.Views {
	return tablemeta.Views{Iceberg: v.Iceberg, Delta: v.Delta, Catalogs: v.Catalogs}
}

func viewsOf(d tablemeta.Views, recorded bool) Views {
	return Views{Iceberg: d.Iceberg, Delta: d.Delta, Catalogs: d.Catalogs, Recorded: recorded}
}

// union is cur with every view of add turned on as well.
func union(cur, add tablemeta.Views) tablemeta.Views {
	out := cur.Clone()
	out.Iceberg = out.Iceberg || add.Iceberg
	out.Delta = out.Delta || add.Delta
	for _, c := range add.Catalogs {
		out = out.WithCatalog(c)
	}
	return out
}

// PublicCatalogURL returns a catalog URL as a table records it: without a
// password (a writer takes it from its environment, e.g. $PGPASSWORD), in
// the canonical form of package catalog (catalog.Public) when the URL's
// driver is linked. A URL that does not parse is ErrBadInput.
func PublicCatalogURL(raw string) (string, error) {
	p, err := catalog.Public(raw)
	if err == nil || !errors.Is(err, catalog.ErrNoDriver) {
		return p, err
	}
	u, perr := url.Parse(raw)
	if perr != nil || u.Scheme == "" {
		return "", fmt.Errorf("%w: catalog URL: not a URL with a scheme", ErrBadInput)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.User(u.User.Username())
		}
	}
	return u.String(), nil
}

// Views returns the table's views (see Views.Recorded for a table that
// records none). A table never committed to has the default views.
func (t *Table) Views(ctx context.Context) (Views, error) {
	doc, _, err := tablemeta.Read(ctx, t.st)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Views{}, fmt.Errorf("read the table's views: %w", corruptIfInvalid(err))
	}
	v, recorded, err := views.Resolve(ctx, t.st, doc)
	return viewsOf(v, recorded), err
}

// SetViews records v as the table's views (a conditional replace of
// table.json, repeated if another writer changed it meanwhile) and returns
// them as recorded. Catalog URLs are recorded without passwords. It
// publishes nothing: the next publish brings a view just turned on up to
// date (Table.Publish does it at once). A view turned off is no longer
// published; its files stay where they are. A table never committed to
// has no table.json to record views in: ErrNoData.
func (t *Table) SetViews(ctx context.Context, v Views) (Views, error) {
	want, err := publicViews(v.doc())
	if err != nil {
		return Views{}, err
	}
	got, err := t.updateViews(ctx, nil, "", func(tablemeta.Views) tablemeta.Views { return want })
	return viewsOf(got, err == nil), err
}

// publicViews strips the catalogs' passwords and sorts them.
func publicViews(v tablemeta.Views) (tablemeta.Views, error) {
	out := v
	out.Catalogs = nil
	for _, c := range v.Catalogs {
		p, err := PublicCatalogURL(c)
		if err != nil {
			return tablemeta.Views{}, err
		}
		out = out.WithCatalog(p)
	}
	return out, nil
}

// maxViewUpdates bounds the conditional replaces of table.json an update
// of the views makes while other writers keep changing it.
const maxViewUpdates = 10

// updateViews replaces the views of table.json with change(current),
// conditionally on the document's tag; doc and tag are the document as
// the caller read it ("" tag: read it). A lost race reads it again: only
// the views change, whatever else another writer changed meanwhile.
func (t *Table) updateViews(ctx context.Context, doc *tablemeta.Table, tag string, change func(tablemeta.Views) tablemeta.Views) (tablemeta.Views, error) {
	for try := 0; ; try++ {
		if doc == nil || tag == "" {
			var err error
			if doc, tag, err = tablemeta.Read(ctx, t.st); errors.Is(err, store.ErrNotFound) {
				return tablemeta.Views{}, fmt.Errorf("%w: the table has no table.json yet, which records its views: commit to it first", ErrNoData)
			} else if err != nil {
				return tablemeta.Views{}, fmt.Errorf("record the table's views: %w", corruptIfInvalid(err))
			}
		}
		cur, _ := doc.ViewsOf()
		want := change(cur)
		if doc.Views != nil && want.Equal(cur) {
			return cur, nil
		}
		next := doc.Clone()
		next.Views = &want
		_, err := tablemeta.Update(ctx, t.st, next, tag)
		if err == nil {
			return want, nil
		}
		if !errors.Is(err, tablemeta.ErrChanged) || try+1 >= maxViewUpdates {
			return cur, fmt.Errorf("record the table's views: %w", err)
		}
		doc, tag = nil, ""
	}
}

// corruptIfInvalid makes a table.json that does not decode ErrCorrupt.
func corruptIfInvalid(err error) error {
	if errors.Is(err, tablemeta.ErrInvalid) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// ViewState is what one view of the table reflects of its pointers
// (Table.ViewStates): current, or behind and by how much.
type ViewState struct {
	// View is ViewIceberg, ViewDelta or ViewCatalog; Name a catalog's
	// name and table.
	View, Name string
	// Version is the view's latest version (-1: none yet).
	Version int64
	// Location is the Iceberg metadata location (Iceberg and catalogs).
	Location string
	// Behind lists the partitions whose pointer is newer than what the
	// view reflects (or that it lacks).
	Behind []string
	// Seqs is the pointer sequence number the view reflects of each
	// partition compared that it has (Iceberg and Delta).
	Seqs map[string]int64
	// Lag says why a catalog is behind: it names an older version.
	Lag string
	// Err is why the view's state could not be read (or a catalog not
	// opened).
	Err error
}

// Current reports whether the view reflects every pointer it was
// compared with.
func (s ViewState) Current() bool { return s.Err == nil && len(s.Behind) == 0 && s.Lag == "" }

// ViewStates reads what each view of the table reflects and compares it
// with current, each partition's pointer sequence number, for the
// partitions that have files (nil: every partition, listed and read
// here). It writes nothing; opts opens the catalogs (OpenCatalog).
func (t *Table) ViewStates(ctx context.Context, current map[string]int64, opts PublishOptions) ([]ViewState, error) {
	v, err := t.Views(ctx)
	if err != nil {
		return nil, err
	}
	if current == nil {
		if current, err = t.pointerSeqs(ctx); err != nil {
			return nil, err
		}
	}
	opts.Catalog = nil
	set, closeAll := t.viewSet(ctx, v.doc(), opts)
	defer closeAll()
	ss := views.Status(ctx, t.st, set, current)
	out := make([]ViewState, len(ss))
	for i, s := range ss {
		out[i] = ViewState{View: s.View, Name: s.Name, Version: s.Version, Location: s.Location, Behind: s.Behind, Seqs: s.Seqs, Lag: s.Lag, Err: s.Err}
	}
	return out, nil
}

// pointerSeqs lists and reads every partition's pointer (swap's listing:
// one GET per partition, concurrently): the sequence numbers of those
// whose generation has files (a pointer written before it counted files
// says so by its rows).
func (t *Table) pointerSeqs(ctx context.Context) (map[string]int64, error) {
	listed, err := swap.ListPointers(ctx, t.st, "")
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, l := range listed {
		if l.Err != nil {
			return nil, l.Err
		}
		if p := l.Pointer; p.Files > 0 || p.Rows > 0 {
			out[l.Partition] = p.Seq
		}
	}
	return out, nil
}
