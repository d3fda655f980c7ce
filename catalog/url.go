package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pswap/pswap/catalog/restcat"
	"github.com/pswap/pswap/catalog/sqlcat"
	"github.com/pswap/pswap/internal/errkind"
)

// ErrBadURL: a catalog URL that does not parse, names an unknown scheme,
// or lacks or misspells a parameter. It is errkind.ErrBadInput.
var ErrBadURL = errkind.New("bad catalog URL", errkind.ErrBadInput)

// The query parameters every catalog URL takes.
const (
	paramCatalog         = "catalog"
	paramNamespace       = "namespace"
	paramTable           = "table"
	paramCreateNamespace = "create-namespace"
)

// defaultConnectTimeout is a sql+postgres URL's connect_timeout (seconds)
// when it gives none.
const defaultConnectTimeout = "10"

// postgresParams are the libpq parameters a sql+postgres URL passes on to
// the driver (the password comes from the URL or $PGPASSWORD).
var postgresParams = []string{"sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name", "host", "port", "user", "dbname"}

// The query parameters of a REST catalog URL.
const (
	paramWarehouse = "warehouse"
	paramOAuth2URI = "oauth2-server-uri"
	paramScope     = "scope"
)

// Config is a parsed catalog URL: exactly one of SQL and REST is set.
type Config struct {
	SQL  *sqlcat.Config
	REST *restcat.Config
}

// Parse reads a catalog URL into the configuration of a SQL or REST
// catalog:
//
//	sql+sqlite:///path/to/catalog.db?catalog=lake&namespace=db&table=sales
//	sql+sqlite:relative/catalog.db?...
//	sql+postgres://user@host:5432/dbname?catalog=lake&namespace=db&table=sales&sslmode=disable
//	rest+https://host:8181/api/catalog?warehouse=lake&namespace=db&table=sales
//
// A SQL URL needs catalog, namespace and table; a REST URL namespace and
// table (warehouse, oauth2-server-uri and scope are optional, and its
// credentials come from Options, never from the URL). create-namespace=true
// lets the first publish create a missing namespace. A SQLite file is
// created by the first publish if missing.
func Parse(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrBadURL, stripURL(err))
	}
	var cfg sqlcat.Config
	switch u.Scheme {
	case "sql+sqlite":
		cfg, err = sqliteConfig(u)
	case "sql+postgres", "sql+postgresql":
		cfg, err = postgresConfig(u)
	case "rest+http", "rest+https":
		return restConfig(u)
	case "glue":
		return Config{}, fmt.Errorf("%w: glue catalogs are not supported (supported: sql+sqlite, sql+postgres, rest+http, rest+https; Glue's Iceberg REST endpoint needs SigV4, not supported either)", ErrBadURL)
	case "":
		return Config{}, fmt.Errorf("%w: no scheme (sql+sqlite:///path/catalog.db?..., sql+postgres://host/db?..., rest+https://host/path?...)", ErrBadURL)
	default:
		return Config{}, fmt.Errorf("%w: unknown scheme %q (supported: sql+sqlite, sql+postgres, rest+http, rest+https)", ErrBadURL, u.Scheme)
	}
	if err != nil {
		return Config{}, err
	}
	n, err := names(u.Query(), true)
	if err != nil {
		return Config{}, err
	}
	cfg.Catalog, cfg.Namespace, cfg.Table, cfg.CreateNamespace = n.catalog, n.namespace, n.table, n.create
	return Config{SQL: &cfg}, nil
}

// restConfig reads a rest+http(s) URL.
func restConfig(u *url.URL) (Config, error) {
	q := u.Query()
	if err := known(q, paramWarehouse, paramOAuth2URI, paramScope); err != nil {
		return Config{}, err
	}
	if q.Has(paramCatalog) {
		return Config{}, fmt.Errorf("%w: a REST catalog URL names its catalog by warehouse=W, not by catalog=", ErrBadURL)
	}
	if u.Opaque != "" || u.Host == "" {
		return Config{}, fmt.Errorf("%w: the form is %s://host[:port][/path]?namespace=NS&table=T (no host given)", ErrBadURL, u.Scheme)
	}
	if u.User != nil {
		return Config{}, fmt.Errorf("%w: a REST catalog URL takes no user or password: give a token in $%s or client credentials in $%s",
			ErrBadURL, EnvToken, EnvCredential)
	}
	if u.Fragment != "" {
		return Config{}, fmt.Errorf("%w: a REST catalog URL has no #fragment", ErrBadURL)
	}
	n, err := names(q, false)
	if err != nil {
		return Config{}, err
	}
	base := url.URL{Scheme: strings.TrimPrefix(u.Scheme, "rest+"), Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	cfg := restcat.Config{
		URI:             base.String(),
		Namespace:       strings.Split(n.namespace, "."),
		Table:           n.table,
		CreateNamespace: n.create,
	}
	for _, p := range []struct {
		name string
		v    *string
	}{{paramWarehouse, &cfg.Warehouse}, {paramOAuth2URI, &cfg.OAuth2URI}, {paramScope, &cfg.Scope}} {
		if len(q[p.name]) > 1 {
			return Config{}, fmt.Errorf("%w: %s given %d times", ErrBadURL, p.name, len(q[p.name]))
		}
		*p.v = q.Get(p.name)
		if strings.ContainsFunc(*p.v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return Config{}, fmt.Errorf("%w: %s has a control character", ErrBadURL, p.name)
		}
	}
	if cfg.OAuth2URI != "" {
		o, err := url.Parse(cfg.OAuth2URI)
		if err != nil || (o.Scheme != "http" && o.Scheme != "https") || o.Host == "" || o.User != nil {
			return Config{}, fmt.Errorf("%w: %s must be an http(s):// URL without user or password", ErrBadURL, paramOAuth2URI)
		}
	}
	return Config{REST: &cfg}, nil
}

// tableNames are the names a catalog URL gives.
type tableNames struct {
	catalog, namespace, table string
	create                    bool
}

// names reads the catalog's (when needCatalog), namespace's and table's
// names.
func names(q url.Values, needCatalog bool) (tableNames, error) {
	var n tableNames
	cfg := &n
	get := func(name string) (string, error) {
		v := q.Get(name)
		switch {
		case len(q[name]) > 1:
			return "", fmt.Errorf("%w: %s given %d times", ErrBadURL, name, len(q[name]))
		case v == "" && name != paramCreateNamespace && (name != paramCatalog || needCatalog):
			return "", fmt.Errorf("%w: no %s (add %s=... to the query)", ErrBadURL, name, name)
		case strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }):
			return "", fmt.Errorf("%w: %s has a control character", ErrBadURL, name)
		}
		return v, nil
	}
	var err error
	if cfg.catalog, err = get(paramCatalog); err != nil {
		return n, err
	}
	if cfg.namespace, err = get(paramNamespace); err != nil {
		return n, err
	}
	if slices.Contains(strings.Split(cfg.namespace, "."), "") {
		return n, fmt.Errorf("%w: namespace %q has an empty level", ErrBadURL, cfg.namespace)
	}
	if cfg.table, err = get(paramTable); err != nil {
		return n, err
	}
	create, err := get(paramCreateNamespace)
	if err != nil {
		return n, err
	}
	if create != "" {
		if cfg.create, err = strconv.ParseBool(create); err != nil {
			return n, fmt.Errorf("%w: %s=%q is not true or false", ErrBadURL, paramCreateNamespace, create)
		}
	}
	return n, nil
}

// known refuses a query parameter that is neither the catalog's nor in extra.
func known(q url.Values, extra ...string) error {
	for k := range q {
		switch k {
		case paramCatalog, paramNamespace, paramTable, paramCreateNamespace:
			continue
		}
		if !slices.Contains(extra, k) {
			return fmt.Errorf("%w: unknown parameter %q", ErrBadURL, k)
		}
	}
	return nil
}

func sqliteConfig(u *url.URL) (sqlcat.Config, error) {
	path := u.Opaque
	if path == "" {
		if u.Host != "" {
			return sqlcat.Config{}, fmt.Errorf("%w: sql+sqlite takes a path (sql+sqlite:///abs/path.db or sql+sqlite:rel/path.db), not a host %q", ErrBadURL, u.Host)
		}
		path = u.Path
	} else if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	if path == "" || strings.HasSuffix(path, "/") {
		return sqlcat.Config{}, fmt.Errorf("%w: sql+sqlite needs the database file's path", ErrBadURL)
	}
	if err := known(u.Query()); err != nil {
		return sqlcat.Config{}, err
	}
	// Several processes commit at once: wait for the database's lock
	// rather than fail, and take the write lock when a transaction starts.
	dsn := (&url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(30000)&_txlock=immediate"}).String()
	return sqlcat.Config{Driver: "sqlite", DSN: dsn, Display: "sqlite " + path}, nil
}

func postgresConfig(u *url.URL) (sqlcat.Config, error) {
	q := u.Query()
	if err := known(q, postgresParams...); err != nil {
		return sqlcat.Config{}, err
	}
	if u.Opaque != "" {
		return sqlcat.Config{}, fmt.Errorf("%w: sql+postgres://[user[:password]@]host[:port]/dbname", ErrBadURL)
	}
	pq := url.Values{}
	for _, k := range postgresParams {
		if v, ok := q[k]; ok {
			pq[k] = v
		}
	}
	if pq.Get("connect_timeout") == "" {
		// A catalog host that does not answer must not hold the commit's
		// publication up for long: it is published false, and converges.
		pq.Set("connect_timeout", defaultConnectTimeout)
	}
	dsn := &url.URL{Scheme: "postgres", User: u.User, Host: u.Host, Path: u.Path, RawQuery: pq.Encode()}
	display := (&url.URL{Scheme: "postgres", Host: u.Host, Path: u.Path}).String()
	if h := q.Get("host"); h != "" && u.Host == "" {
		display += " (host " + h + ")"
	}
	return sqlcat.Config{Driver: "pgx", DSN: dsn.String(), Display: display}, nil
}

// stripURL drops the URL (which may hold a password) from url.Parse's error.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
