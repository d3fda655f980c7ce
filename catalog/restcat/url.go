package restcat

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/pswap/pswap/catalog"
)

// The URL schemes of REST catalogs, registered with package catalog when
// a program imports this package.
const (
	SchemeHTTP  = "rest+http"
	SchemeHTTPS = "rest+https"
)

func init() {
	catalog.RegisterDriver(SchemeHTTP, driver{})
	catalog.RegisterDriver(SchemeHTTPS, driver{})
}

// driver is the catalog.Driver of the rest+ schemes.
type driver struct{}

// Open opens the table u names, with the credentials of o, or of the
// environment ($PSWAP_CATALOG_TOKEN, $PSWAP_CATALOG_CREDENTIAL) when o
// gives none.
func (driver) Open(u *url.URL, o catalog.Options) (catalog.Conn, error) {
	cfg, err := parse(u)
	if err != nil {
		return nil, err
	}
	if o.Token == "" && o.Credential == "" {
		o.Token, o.Credential = o.Env(catalog.EnvToken), o.Env(catalog.EnvCredential)
	}
	cfg.Token, cfg.Credential = o.Token, o.Credential
	return Open(cfg)
}

// Public is u as parsed: a REST catalog URL carries no secret.
func (driver) Public(u *url.URL) (*url.URL, error) {
	cfg, err := parse(u)
	if err != nil {
		return nil, err
	}
	params := url.Values{}
	for k, v := range map[string]string{paramWarehouse: cfg.Warehouse, paramOAuth2URI: cfg.OAuth2URI, paramScope: cfg.Scope} {
		if v != "" {
			params.Set(k, v)
		}
	}
	n := catalog.Names{Namespace: strings.Join(cfg.Namespace, "."), Table: cfg.Table, CreateNamespace: cfg.CreateNamespace}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath, RawQuery: n.Query(params)}, nil
}

// The query parameters of a REST catalog URL, besides namespace, table
// and create-namespace.
const (
	paramWarehouse = "warehouse"
	paramOAuth2URI = "oauth2-server-uri"
	paramScope     = "scope"
)

// ParseURL reads a REST catalog's URL, the catalog's base URI (what Spark
// calls uri) with rest+ before its scheme:
//
//	rest+https://host:8181/api/catalog?warehouse=lake&namespace=db&table=sales
//
// It needs namespace and table; warehouse, oauth2-server-uri and scope
// are optional, create-namespace=true lets the first publish create a
// missing namespace. Its credentials are never in the URL: the Config has
// none. Errors match catalog.ErrBadURL.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %w", catalog.ErrBadURL, stripURL(err))
	}
	return parse(u)
}

func parse(u *url.URL) (Config, error) {
	if u.Scheme != SchemeHTTP && u.Scheme != SchemeHTTPS {
		return Config{}, fmt.Errorf("%w: %q is not a REST catalog's scheme (rest+http, rest+https)", catalog.ErrBadURL, u.Scheme)
	}
	q := u.Query()
	if q.Has(catalog.ParamCatalog) {
		return Config{}, fmt.Errorf("%w: a REST catalog URL names its catalog by warehouse=W, not by catalog=", catalog.ErrBadURL)
	}
	if u.Opaque != "" || u.Host == "" {
		return Config{}, fmt.Errorf("%w: the form is %s://host[:port][/path]?namespace=NS&table=T (no host given)", catalog.ErrBadURL, u.Scheme)
	}
	if u.User != nil {
		return Config{}, fmt.Errorf("%w: a REST catalog URL takes no user or password: give a token in $%s or client credentials in $%s",
			catalog.ErrBadURL, catalog.EnvToken, catalog.EnvCredential)
	}
	if u.Fragment != "" {
		return Config{}, fmt.Errorf("%w: a REST catalog URL has no #fragment", catalog.ErrBadURL)
	}
	n, err := catalog.ParseNames(q, false, paramWarehouse, paramOAuth2URI, paramScope)
	if err != nil {
		return Config{}, err
	}
	base := url.URL{Scheme: strings.TrimPrefix(u.Scheme, "rest+"), Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	if _, err := url.Parse(base.String()); err != nil {
		// A host Go's parser takes in the rest+ URL but not in the
		// catalog's own (rest+http://::): refused here, not by the client.
		return Config{}, fmt.Errorf("%w: host %q is not a valid host[:port]", catalog.ErrBadURL, u.Host)
	}
	cfg := Config{
		URI:             base.String(),
		Namespace:       strings.Split(n.Namespace, "."),
		Table:           n.Table,
		CreateNamespace: n.CreateNamespace,
	}
	for _, p := range []struct {
		name string
		v    *string
	}{{paramWarehouse, &cfg.Warehouse}, {paramOAuth2URI, &cfg.OAuth2URI}, {paramScope, &cfg.Scope}} {
		if *p.v, err = catalog.Param(q, p.name); err != nil {
			return Config{}, err
		}
	}
	if cfg.OAuth2URI != "" {
		o, err := url.Parse(cfg.OAuth2URI)
		if err != nil || (o.Scheme != "http" && o.Scheme != "https") || o.Host == "" || o.User != nil {
			return Config{}, fmt.Errorf("%w: %s must be an http(s):// URL without user or password", catalog.ErrBadURL, paramOAuth2URI)
		}
	}
	return cfg, nil
}
