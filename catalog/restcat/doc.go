// Package restcat is a table of an Iceberg REST catalog (Polaris, Nessie,
// Lakekeeper, Unity, Apache Iceberg's own server, ...), as
// catalog.Catalog and catalog.DocumentCatalog. Importing it registers the
// URL schemes rest+http and rest+https with catalog.Open (ParseURL reads
// them):
//
//	import _ "github.com/pswap/pswap/catalog/restcat"
//
// A REST catalog writes the metadata files of its tables itself: it can be
// pointed at a metadata file only once, when the table is registered
// (POST .../namespaces/{ns}/register, with pswap's vN.metadata.json). Each
// later version is committed as the difference between what the catalog's
// table holds and pswap's new version: add-schema, set-current-schema,
// add-spec, set-default-spec, add-snapshot, set-snapshot-ref (main),
// remove-snapshots (what an expiry dropped) and set-properties, under the
// requirements assert-table-uuid and assert-ref-snapshot-id (main), the
// catalog's compare-and-swap. The same commit sets the table property
// pswap.metadata-location to the pswap version the catalog's table now
// reflects: Current answers with it, so that the catalog only moves forward
// along pswap's chain of versions.
//
// The catalog's own metadata files land in the table's metadata/ folder
// under names pswap never uses (00001-<uuid>.metadata.json): pswap's
// publishes ignore them and its expiry never deletes them.
//
// The client is net/http and encoding/json: a 409 is
// catalog.ErrCatalogConflict, a 5xx or a lost reply to a commit leaves
// its outcome unknown (a publish settles it by reading the table back), a
// 401/403 is ErrUnauthorized. Authentication: a bearer token, or OAuth2
// client credentials exchanged at the catalog's token endpoint
// (.../v1/oauth/tokens, or Config.OAuth2URI) for a token, once per
// process. Neither ever appears in an error or in String.
package restcat
