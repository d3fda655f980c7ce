package lakehouse

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/pswap/pswap/store"
)

// The locations a publish writes into the metadata (the table's, each
// version's, manifest list's, manifest's and data file's) are paths as they
// are written on the store, never percent-encoded: Java Iceberg's, PyIceberg's
// and DuckDB's file IO open a location as written, so a table path with a
// space or a partition folder with a Hive escape (region=a%3Ab) must appear
// as it is on disk. store.Store.URI is a URI (file:///a%20b): tableLocation
// turns it into a location. S3 locations are the same in both forms.
//
// Tables published before kept percent-encoded file:// locations in the
// manifests of partitions not published since; keyOf and keysOf read both.

// tableLocation is the table root's location, without a trailing slash.
func tableLocation(st store.Store) string {
	return literalLocation(strings.TrimSuffix(st.URI(""), "/"))
}

// literalLocation turns a file:// URI into the location of the same path
// as written; any other location is returned as it is.
func literalLocation(uri string) string {
	rest, ok := strings.CutPrefix(uri, "file://")
	if !ok {
		return uri
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return uri
	}
	return "file://" + p
}

// loc is the location of a key of the table.
func (p *publisher) loc(key string) string { return p.tableURI + "/" + key }

// keyOf maps a location inside the table back to its store key, refusing
// anything outside the table root. A location as written is read as it
// is; one of an older publish's percent-encoded file:// locations whose
// literal reading is not a valid key is unescaped (keysOf gives every
// reading of an ambiguous one).
func (p *publisher) keyOf(loc string) (string, error) {
	keys, err := p.keysOf(loc)
	if err != nil {
		return "", err
	}
	return keys[0], nil
}

// keysOf returns the store keys a location inside the table may name, the
// likelier first: the location as written, then, for a file:// table, its
// percent-decoded reading if that differs (the form publishes wrote before
// locations were written as they are). Garbage collection keeps every
// reading; a reader tries them in order.
func (p *publisher) keysOf(loc string) ([]string, error) {
	if strings.HasPrefix(p.tableURI, "file://") {
		loc = fileLocation(loc)
	}
	var keys []string
	if rel, ok := strings.CutPrefix(loc, p.tableURI+"/"); ok && store.ValidateKey(rel) == nil {
		keys = append(keys, rel)
	}
	if p.oldRoot != "" {
		// A moved table: its metadata still names the root it had.
		if rel, ok := strings.CutPrefix(loc, p.oldRoot+"/"); ok && store.ValidateKey(rel) == nil {
			keys = append(keys, rel)
		}
	}
	if strings.HasPrefix(p.tableURI, "file://") {
		if rel, ok := strings.CutPrefix(loc, p.escapedURI+"/"); ok {
			if u, err := url.PathUnescape(rel); err == nil && store.ValidateKey(u) == nil && (len(keys) == 0 || keys[0] != u) {
				keys = append(keys, u)
			}
		}
	}
	if len(keys) == 0 {
		rel, ok := strings.CutPrefix(loc, p.tableURI+"/")
		if !ok {
			return nil, &outsideError{loc: loc, table: p.tableURI}
		}
		return nil, store.ValidateKey(rel)
	}
	return keys, nil
}

// outsideError is a location outside the table root.
type outsideError struct{ loc, table string }

func (e *outsideError) Error() string {
	return strconv.Quote(e.loc) + " is outside the table " + e.table
}

// fileLocation spells a local location the way tableLocation does: Java
// Iceberg writes the paths of a table it opened by path as plain paths
// (/lake/sales/...) or as Hadoop's file:/lake/sales/...
func fileLocation(loc string) string {
	switch {
	case strings.HasPrefix(loc, "/"):
		return "file://" + loc
	case strings.HasPrefix(loc, "file:/") && !strings.HasPrefix(loc, "file://"):
		return "file://" + strings.TrimPrefix(loc, "file:")
	}
	return loc
}

// relocatedFrom returns the root the latest version records (its
// "location") when it is not this table's, "" when it is: the table was
// moved or copied with its metadata. Its locations are read as the
// table's own (oldRoot); a reconcile writes every manifest anew under the
// table's root, and a commit's publish refuses (readers would still look
// under the old root).
func (p *publisher) relocatedFrom(meta *tableMetadata) string {
	root := meta.Location
	if strings.HasPrefix(p.tableURI, "file://") {
		root = fileLocation(root)
	}
	// The same root, spelt with or without a trailing slash (a store
	// rooted at "/" or at a bucket is "file:///", "sim://"): tableLocation
	// trims one, which a first publish recorded as the location.
	same := func(a, b string) bool { return a == b || strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }
	if same(root, p.tableURI) || same(root, p.escapedURI) {
		return ""
	}
	return strings.TrimSuffix(root, "/")
}
