package catalog

import (
	"context"
	"io"
	"os"

	"github.com/pswap/pswap/catalog/restcat"
	"github.com/pswap/pswap/catalog/sqlcat"
)

// The environment variables a REST catalog's credentials come from when
// Options gives none: a bearer token, or OAuth2 client credentials
// (client_id:client_secret, the form of Iceberg's "credential").
const (
	EnvToken      = "PSWAP_CATALOG_TOKEN"
	EnvCredential = "PSWAP_CATALOG_CREDENTIAL"
)

// Catalog is an opened catalog's table: what a publish commits to
// (pswap.PublishOptions.Catalog, which it satisfies), and the connection
// to close after.
type Catalog interface {
	// Current is the metadata location the catalog's table names.
	Current(ctx context.Context) (string, error)
	// Register creates the table naming loc.
	Register(ctx context.Context, loc string) error
	// Swap points the table at loc if it still names prev.
	Swap(ctx context.Context, prev, loc string) error
	// String names the catalog and the table, never a secret.
	String() string
	io.Closer
}

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

// Open parses a catalog URL (Parse) and opens the catalog, with the
// credentials of the environment. It does no I/O: the first publish
// reaches the catalog.
func Open(raw string) (Catalog, error) { return OpenWith(raw, Options{}) }

// OpenWith is Open with the credentials of o.
func OpenWith(raw string, o Options) (Catalog, error) {
	cfg, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if cfg.REST != nil {
		if o.Token == "" && o.Credential == "" {
			get := o.Getenv
			if get == nil {
				get = os.Getenv
			}
			o.Token, o.Credential = get(EnvToken), get(EnvCredential)
		}
		cfg.REST.Token, cfg.REST.Credential = o.Token, o.Credential
		return restcat.Open(*cfg.REST)
	}
	return sqlcat.Open(*cfg.SQL)
}
