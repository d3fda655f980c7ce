package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
	// The catalogs --catalog opens by URL scheme: SQL (sql+sqlite,
	// sql+postgres) and Iceberg REST (rest+http, rest+https).
	_ "github.com/pswap/pswap/catalog/restcat"
	_ "github.com/pswap/pswap/catalog/sqlcat"
)

// envCatalog is the default of --catalog.
const envCatalog = "PSWAP_CATALOG"

// addCatalogFlag adds --catalog to a command that publishes.
func addCatalogFlag(a *app, cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.catalogURL, "catalog", "",
		"also commit each published version to this Iceberg catalog: sql+sqlite:///path/catalog.db?catalog=NAME&namespace=NS&table=T, "+
			"sql+postgres://user@host:port/dbname?catalog=...&namespace=...&table=... "+
			"or rest+https://host:port/path?warehouse=W&namespace=NS&table=T with a token in $"+catalog.EnvToken+
			" or client_id:secret in $"+catalog.EnvCredential+" (default $"+envCatalog+"; see the README, \"Catalogs\")")
}

// openCatalog opens --catalog (or $PSWAP_CATALOG) when the command has the
// flag; a bad URL is a usage error, before anything is written.
func (a *app) openCatalog(cmd *cobra.Command) error {
	if cmd.Flags().Lookup("catalog") == nil {
		return nil
	}
	u := a.catalogRaw()
	if u == "" {
		return nil
	}
	c, err := catalog.OpenWith(u, catalog.Options{Getenv: a.getenv})
	if err != nil {
		return usageError{fmt.Errorf("--catalog %s: %w", redactURL(u), err)}
	}
	pub, err := pswap.PublicCatalogURL(u)
	if err != nil {
		return usageError{fmt.Errorf("--catalog %s: %w", redactURL(u), err)}
	}
	a.catalog, a.catalogPublic = c, pub
	return nil
}

// catalogRaw is --catalog, or $PSWAP_CATALOG ("" for none).
func (a *app) catalogRaw() string {
	u := strings.TrimSpace(a.catalogURL)
	if u == "" {
		u = strings.TrimSpace(a.getenv(envCatalog))
	}
	return u
}

// catalogArg is the catalog the command names, as the table records it
// (without a password; "" for none).
func (a *app) catalogArg() string { return a.catalogPublic }

// closeCatalog closes the catalog's connections, if one was opened.
func (a *app) closeCatalog() {
	if a.catalog != nil {
		a.catalog.Close()
	}
}

// openTableCatalog opens one of the table's catalogs by its recorded URL
// (pswap.PublishOptions.OpenCatalog): the command's own when it is the
// one --catalog named (with the credentials its URL may carry), else
// from the URL with the environment's credentials. The command's own is
// closed when the command ends, not by the publish.
func (a *app) openTableCatalog(_ context.Context, u string) (pswap.Catalog, error) {
	if a.catalog != nil && u == a.catalogPublic {
		if d, ok := a.catalog.(catalog.DocumentCatalog); ok {
			return keepOpenDocument{d}, nil
		}
		return keepOpen{a.catalog}, nil
	}
	c, err := catalog.OpenWith(u, catalog.Options{Getenv: a.getenv})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// keepOpen hides a catalog's Close from the publish that uses it.
type keepOpen struct{ pswap.Catalog }

// keepOpenDocument is keepOpen for a catalog.DocumentCatalog (a REST
// catalog, which the publish moves by the metadata document).
type keepOpenDocument struct{ catalog.DocumentCatalog }
