package sqlcat

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/pswap/pswap/catalog"
)

// The URL schemes of SQL catalogs, registered with package catalog when a
// program imports this package.
const (
	SchemeSQLite     = "sql+sqlite"
	SchemePostgres   = "sql+postgres"
	SchemePostgreSQL = "sql+postgresql" // the same as sql+postgres
)

func init() {
	for _, s := range []string{SchemeSQLite, SchemePostgres, SchemePostgreSQL} {
		catalog.RegisterDriver(s, driver{})
	}
}

// driver is the catalog.Driver of the sql+ schemes.
type driver struct{}

func (driver) Open(u *url.URL, _ catalog.Options) (catalog.Conn, error) {
	cfg, err := parse(u)
	if err != nil {
		return nil, err
	}
	return Open(cfg)
}

func (driver) Public(u *url.URL) (*url.URL, error) {
	cfg, err := parse(u)
	if err != nil {
		return nil, err
	}
	n := catalog.Names{Catalog: cfg.Catalog, Namespace: cfg.Namespace, Table: cfg.Table, CreateNamespace: cfg.CreateNamespace}
	if u.Scheme == SchemeSQLite {
		path := sqlitePath(u)
		p := &url.URL{Scheme: SchemeSQLite, RawQuery: n.Query(nil)}
		if strings.HasPrefix(path, "/") {
			p.Path = path
		} else {
			p.Opaque = (&url.URL{Path: path}).EscapedPath()
		}
		return p, nil
	}
	params := url.Values{}
	q := u.Query()
	for _, k := range postgresParams {
		if v, ok := q[k]; ok {
			params[k] = v
		}
	}
	p := &url.URL{Scheme: SchemePostgres, Host: u.Host, Path: u.Path, RawQuery: n.Query(params)}
	if u.User != nil {
		// The user stays, the password goes: it comes from $PGPASSWORD.
		p.User = url.User(u.User.Username())
	}
	return p, nil
}

// defaultConnectTimeout is a sql+postgres URL's connect_timeout (seconds)
// when it gives none.
const defaultConnectTimeout = "10"

// postgresParams are the libpq parameters a sql+postgres URL passes on to
// the driver (the password comes from the URL or $PGPASSWORD). None
// carries a secret.
var postgresParams = []string{"sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name", "host", "port", "user", "dbname"}

// ParseURL reads a SQL catalog's URL:
//
//	sql+sqlite:///path/to/catalog.db?catalog=lake&namespace=db&table=sales
//	sql+sqlite:relative/catalog.db?...
//	sql+postgres://user@host:5432/dbname?catalog=lake&namespace=db&table=sales&sslmode=disable
//
// It needs catalog, namespace and table; create-namespace=true lets the
// first publish create a missing namespace. A SQLite file is created by
// the first publish if missing. Errors match catalog.ErrBadURL and never
// show the password.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Config{}, fmt.Errorf("%w: %w", catalog.ErrBadURL, err)
	}
	return parse(u)
}

func parse(u *url.URL) (Config, error) {
	var (
		cfg   Config
		err   error
		extra []string // the scheme's own query parameters
	)
	switch u.Scheme {
	case SchemeSQLite:
		cfg, err = sqliteConfig(u)
	case SchemePostgres, SchemePostgreSQL:
		cfg, err = postgresConfig(u)
		extra = postgresParams
	default:
		return Config{}, fmt.Errorf("%w: %q is not a SQL catalog's scheme (sql+sqlite, sql+postgres)", catalog.ErrBadURL, u.Scheme)
	}
	if err != nil {
		return Config{}, err
	}
	n, err := catalog.ParseNames(u.Query(), true, extra...)
	if err != nil {
		return Config{}, err
	}
	cfg.Catalog, cfg.Namespace, cfg.Table, cfg.CreateNamespace = n.Catalog, n.Namespace, n.Table, n.CreateNamespace
	return cfg, nil
}

// sqlitePath is the database file's path of a sql+sqlite URL.
func sqlitePath(u *url.URL) string {
	if u.Opaque == "" {
		return u.Path
	}
	if p, err := url.PathUnescape(u.Opaque); err == nil {
		return p
	}
	return u.Opaque
}

func sqliteConfig(u *url.URL) (Config, error) {
	if u.Opaque == "" && u.Host != "" {
		return Config{}, fmt.Errorf("%w: sql+sqlite takes a path (sql+sqlite:///abs/path.db or sql+sqlite:rel/path.db), not a host %q", catalog.ErrBadURL, u.Host)
	}
	path := sqlitePath(u)
	if path == "" || strings.HasSuffix(path, "/") {
		return Config{}, fmt.Errorf("%w: sql+sqlite needs the database file's path", catalog.ErrBadURL)
	}
	// Several processes commit at once: wait for the database's lock
	// rather than fail, and take the write lock when a transaction starts.
	dsn := &url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(30000)&_txlock=immediate"}
	if !strings.HasPrefix(path, "/") {
		// A relative path is the URI's opaque part (file:rel/cat.db):
		// after file:// its first folder would be read as a host.
		dsn.Path, dsn.Opaque = "", (&url.URL{Path: path}).EscapedPath()
	}
	return Config{Driver: "sqlite", DSN: dsn.String(), Display: "sqlite " + path}, nil
}

func postgresConfig(u *url.URL) (Config, error) {
	q := u.Query()
	if u.Opaque != "" {
		return Config{}, fmt.Errorf("%w: sql+postgres://[user[:password]@]host[:port]/dbname", catalog.ErrBadURL)
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
	return Config{Driver: "pgx", DSN: dsn.String(), Display: display}, nil
}
