package main

import (
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
	u := strings.TrimSpace(a.catalogURL)
	if u == "" {
		u = strings.TrimSpace(a.getenv(envCatalog))
	}
	if u == "" {
		return nil
	}
	c, err := catalog.OpenWith(u, catalog.Options{Getenv: a.getenv})
	if err != nil {
		return usageError{fmt.Errorf("--catalog %s: %w", redactURL(u), err)}
	}
	a.catalog = c
	return nil
}

// closeCatalog closes the catalog's connections, if one was opened.
func (a *app) closeCatalog() {
	if a.catalog != nil {
		a.catalog.Close()
	}
}

// publishOptions are the options of a command's publishes: the catalog
// (if any) and the prefetch pf (nil: none).
func (a *app) publishOptions(pf *pswap.Prefetch) pswap.PublishOptions {
	o := pswap.PublishOptions{Prefetch: pf}
	if a.catalog != nil {
		o.Catalog = a.catalog
	}
	return o
}
