package catalog

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/pswap/pswap/internal/errkind"
)

// The environment variables a REST catalog's credentials come from when
// Options gives none: a bearer token, or OAuth2 client credentials
// (client_id:client_secret, the form of Iceberg's "credential").
const (
	EnvToken      = "PSWAP_CATALOG_TOKEN"
	EnvCredential = "PSWAP_CATALOG_CREDENTIAL"
)

// ErrBadURL: a catalog URL that does not parse, names an unknown scheme,
// or lacks or misspells a parameter. It is errkind.ErrBadInput.
var ErrBadURL = errkind.New("bad catalog URL", errkind.ErrBadInput)

// ErrNoDriver: the URL's scheme is one of pswap's catalogs, but the
// program does not link its driver package (the error names the import to
// add). It is errkind.ErrBadInput.
var ErrNoDriver = errkind.New("no catalog driver for the URL's scheme", errkind.ErrBadInput)

// Options are the secrets a catalog URL does not carry. The zero value
// reads them from the environment ($PSWAP_CATALOG_TOKEN,
// $PSWAP_CATALOG_CREDENTIAL; a SQL catalog's password from the URL or
// $PGPASSWORD).
type Options struct {
	// Token is a REST catalog's bearer token; Credential its OAuth2 client
	// credentials, client_id:client_secret.
	Token, Credential string
	// Getenv reads the environment when Token and Credential are both
	// empty (default os.Getenv).
	Getenv func(string) string
}

// Env returns the environment's value of name, through Getenv (default
// os.Getenv): what a driver reads its credentials with.
func (o Options) Env(name string) string {
	if o.Getenv != nil {
		return o.Getenv(name)
	}
	return os.Getenv(name)
}

// Driver opens the catalogs of the URL schemes it is registered for
// (RegisterDriver). pswap's drivers, sqlcat and restcat, register
// themselves when a program imports them.
type Driver interface {
	// Open opens the table u names, with the credentials of o. It does no
	// I/O: the first publish reaches the catalog. A u it refuses is an
	// error matching ErrBadURL.
	Open(u *url.URL, o Options) (Conn, error)
	// Public returns u in canonical form with every secret removed (a
	// password in the userinfo, any query parameter that carries one),
	// user names kept: the form a program records, which Open takes back
	// with the secrets from Options or the environment. A u it refuses is
	// an error matching ErrBadURL.
	Public(u *url.URL) (*url.URL, error)
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// pswapDrivers are the packages of pswap's own schemes: what to import
// when a URL names one whose driver is not linked.
var pswapDrivers = map[string]string{
	"sql+sqlite":     "github.com/pswap/pswap/catalog/sqlcat",
	"sql+postgres":   "github.com/pswap/pswap/catalog/sqlcat",
	"sql+postgresql": "github.com/pswap/pswap/catalog/sqlcat",
	"rest+http":      "github.com/pswap/pswap/catalog/restcat",
	"rest+https":     "github.com/pswap/pswap/catalog/restcat",
}

// RegisterDriver makes d open the URLs of scheme (lower case, such as
// "sql+sqlite"). It panics if scheme is empty or already registered, or d
// is nil: a driver registers in its package's init.
func RegisterDriver(scheme string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	switch {
	case d == nil:
		panic("catalog: RegisterDriver of a nil driver for " + scheme)
	case scheme == "" || scheme != strings.ToLower(scheme):
		panic(fmt.Sprintf("catalog: RegisterDriver of scheme %q: a scheme is lower case and not empty", scheme))
	case drivers[scheme] != nil:
		panic("catalog: RegisterDriver called twice for scheme " + scheme)
	}
	drivers[scheme] = d
}

// Schemes returns the schemes of the registered drivers, sorted.
func Schemes() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	return slices.Sorted(maps.Keys(drivers))
}

// Open opens the catalog table a URL names, with the credentials of the
// environment:
//
//	sql+sqlite:///path/to/catalog.db?catalog=lake&namespace=db&table=sales
//	sql+postgres://user@host:5432/dbname?catalog=lake&namespace=db&table=sales
//	rest+https://host:8181/api/catalog?warehouse=lake&namespace=db&table=sales
//
// The URL's scheme names the driver, which the program links by importing
// its package (sqlcat, restcat, or a driver of its own); ErrNoDriver when
// one of pswap's schemes has no driver linked, ErrBadURL for anything else
// it cannot open. It does no I/O: the first publish reaches the catalog.
func Open(raw string) (Conn, error) { return OpenWith(raw, Options{}) }

// OpenWith is Open with the credentials of o.
func OpenWith(raw string, o Options) (Conn, error) {
	u, d, err := lookup(raw)
	if err != nil {
		return nil, err
	}
	return d.Open(u, o)
}

// Public returns a catalog URL in canonical form with every secret
// removed (a password in the userinfo, any query parameter that carries
// one), the user name kept: the form to record or show, which Open takes
// back, to the same catalog table, with the secrets from the environment
// ($PGPASSWORD, $PSWAP_CATALOG_TOKEN, ...). Its driver must be linked, as
// for Open, which parses the URL the same way.
func Public(raw string) (string, error) {
	u, d, err := lookup(raw)
	if err != nil {
		return "", err
	}
	p, err := d.Public(u)
	if err != nil {
		return "", err
	}
	if _, has := p.User.Password(); has {
		// A driver's canonical form never keeps a password.
		p.User = url.User(p.User.Username())
	}
	return p.String(), nil
}

// lookup parses raw and finds its scheme's driver.
func lookup(raw string) (*url.URL, Driver, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadURL, stripURL(err))
	}
	driversMu.RLock()
	d := drivers[u.Scheme]
	driversMu.RUnlock()
	if d != nil {
		return u, d, nil
	}
	supported := strings.Join(supportedSchemes(), ", ")
	switch pkg := pswapDrivers[u.Scheme]; {
	case pkg != "":
		return nil, nil, fmt.Errorf("%w %q: the program does not link its driver (add import _ %q)", ErrNoDriver, u.Scheme, pkg)
	case u.Scheme == "glue":
		return nil, nil, fmt.Errorf("%w: glue catalogs are not supported (supported: %s; Glue's Iceberg REST endpoint needs SigV4, not supported either)", ErrBadURL, supported)
	case u.Scheme == "":
		return nil, nil, fmt.Errorf("%w: no scheme (supported: %s; such as sql+sqlite:///path/catalog.db?..., sql+postgres://host/db?..., rest+https://host/path?...)", ErrBadURL, supported)
	}
	return nil, nil, fmt.Errorf("%w: unknown scheme %q (supported: %s)", ErrBadURL, u.Scheme, supported)
}

// supportedSchemes are pswap's schemes and the registered ones, sorted.
func supportedSchemes() []string {
	s := Schemes()
	for scheme := range pswapDrivers {
		if !slices.Contains(s, scheme) {
			s = append(s, scheme)
		}
	}
	slices.Sort(s)
	return s
}

// stripURL drops the URL (which may hold a password) from url.Parse's error.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
