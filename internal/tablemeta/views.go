package tablemeta

import (
	"fmt"
	"net/url"
	"slices"
	"unicode"
)

// Limits of a table's views.
const (
	// MaxCatalogs bounds the catalogs a table is registered in.
	MaxCatalogs = 8
	// MaxCatalogURLBytes bounds one catalog's URL.
	MaxCatalogURLBytes = 2048
)

// Views are the views of a table that every writer keeps current with its
// pointers: the Iceberg metadata (<table>/metadata/), the Delta Lake log
// (<table>/_delta_log/) and the Iceberg catalogs the table is registered
// in. They belong to the table, not to a command: a commit, a merge, a
// rollback or a gc by any writer publishes every view the table has.
type Views struct {
	// Iceberg: the table's Iceberg metadata is published.
	Iceberg bool
	// Delta: the table's Delta Lake log is published.
	Delta bool
	// Catalogs are the URLs of the Iceberg catalogs whose entry for the
	// table follows its metadata, without credentials (a writer takes
	// those from its environment). Sorted, no duplicates.
	Catalogs []string
}

// DefaultViews are the views of a table whose document records none (one
// written before views were recorded): Iceberg only. A reader of such a
// table also looks for a Delta log on the store.
func DefaultViews() Views { return Views{Iceberg: true} }

// Clone returns a deep copy.
func (v Views) Clone() Views {
	v.Catalogs = slices.Clone(v.Catalogs)
	return v
}

// Equal reports whether v and o are the same views.
func (v Views) Equal(o Views) bool {
	return v.Iceberg == o.Iceberg && v.Delta == o.Delta && slices.Equal(v.Catalogs, o.Catalogs)
}

// WithCatalog returns v with the catalog u added (sorted, once).
func (v Views) WithCatalog(u string) Views {
	v = v.Clone()
	if !slices.Contains(v.Catalogs, u) {
		v.Catalogs = append(v.Catalogs, u)
		slices.Sort(v.Catalogs)
	}
	return v
}

// WithoutCatalog returns v without the catalog u.
func (v Views) WithoutCatalog(u string) Views {
	v = v.Clone()
	v.Catalogs = slices.DeleteFunc(v.Catalogs, func(c string) bool { return c == u })
	return v
}

// ViewsOf returns t's recorded views and whether the document records
// them; DefaultViews when it does not (or t is nil).
func (t *Table) ViewsOf() (Views, bool) {
	if t == nil || t.Views == nil {
		return DefaultViews(), false
	}
	return t.Views.Clone(), true
}

// validate checks the views: catalog URLs that parse, carry a scheme and
// no password (a secret is never stored), sorted and unique.
func (v *Views) validate() error {
	if v == nil {
		return nil
	}
	if len(v.Catalogs) > MaxCatalogs {
		return invalid("views.catalogs", "%d catalogs, at most %d", len(v.Catalogs), MaxCatalogs)
	}
	for i, c := range v.Catalogs {
		path := fmt.Sprintf("views.catalogs[%d]", i)
		if err := checkCatalogURL(c); err != "" {
			return invalid(path, "%s", err)
		}
		if i > 0 && v.Catalogs[i-1] >= c {
			return invalid(path, "catalogs are sorted and unique")
		}
	}
	return nil
}

// checkCatalogURL says what is wrong with a catalog URL ("" if nothing).
func checkCatalogURL(c string) string {
	switch {
	case c == "":
		return "empty"
	case len(c) > MaxCatalogURLBytes:
		return fmt.Sprintf("%d bytes, at most %d", len(c), MaxCatalogURLBytes)
	case slices.ContainsFunc([]rune(c), unicode.IsControl):
		return "has a control character"
	}
	u, err := url.Parse(c)
	if err != nil {
		return "not a URL"
	}
	if u.Scheme == "" {
		return "no scheme"
	}
	if _, has := u.User.Password(); has {
		return "holds a password (credentials come from the environment, never from table.json)"
	}
	return ""
}
