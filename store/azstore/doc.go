// Package azstore implements store.Store on Azure Blob Storage (block
// blobs), tested on Azurite, the Azure Storage emulator.
//
// A Store is rooted at a prefix of one container: keys are relative to that
// prefix and validated with store.ValidateKey. Besides store.Store, a
// *Store implements store.BatchDeleter (blob batch, 256 deletes per
// request), store.DelimiterLister, store.RangeReader, store.Copier (Copy
// Blob, server-side) and store.Clock (the service's Date header).
// Store.Sibling is a store on another container of the same storage
// account with the same credential, and Store.CopyFrom copies a blob of
// another container of the account into the store with the same Copy Blob
// as Copy (a blob of another account would need a credential of its own
// for the source, a SAS in its URL, which a Store does not hold).
//
// URLs: az://container/prefix, with the account from the environment;
// abfss://container@account.dfs.core.windows.net/prefix and
// wasbs://container@account.blob.core.windows.net/prefix name the account
// too (see ParseURL). Store.URI writes the abfss:// form, the one Spark,
// PyIceberg (adlfs), delta-rs and DuckDB all read, so that is what the
// Iceberg view records. Credentials, as Azure's tools take them:
// AZURE_STORAGE_CONNECTION_STRING (which also names an emulator's
// BlobEndpoint), or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or
// AZURE_STORAGE_SAS_TOKEN; an embedding program may pass any
// azcore.TokenCredential (azidentity's DefaultAzureCredential) in
// Options.Credential. No secret appears in an error or in the request log.
//
// Conditional writes map to Azure's ETag conditions: PutOptions.IfNoneMatch
// sends If-None-Match: * and IfMatch sends If-Match with the ETag as the
// service returned it; they apply to Put Blob and to Put Block List alike.
// Azure answers an If-Match write to a missing blob with 412, as for a
// stale ETag; a HEAD then tells the two apart, so the error also matches
// store.ErrNotFound, as on S3.
//
// An ETag is new with every write, even of the same bytes;
// store.Attrs.ContentMD5 (Stat, List) is the blob's Content-MD5, which
// names the bytes: Azure computes it on Put Blob, and a block upload has
// one only when its writer sent it (pswap's own block uploads do not).
//
// Every failure is mapped once to the sentinels of package store. Error
// messages carry Azure's error code and HTTP status, never the SDK's
// message, which quotes the request URL (with a SAS, a credential).
//
// Large blobs are streamed with NewWriter: blocks staged concurrently (Put
// Block) while the caller keeps writing, with memory bounded by about
// (Concurrency+1)*PartSize, and committed at once by Put Block List. Blobs
// smaller than one block are sent with one Put Blob. Staged blocks are
// never visible, and the service discards uncommitted blocks after a week,
// so an aborted write leaves nothing to clean up.
package azstore
