// Package store is pswap's small object-store abstraction: get, stat,
// conditional put, streaming write, delete and list, with a few optional
// interfaces in the manner of io/fs (batch delete, multipart-upload listing,
// the store's clock, ranged reads, server-side copies, delimited listings).
// The functions GetRange, ReadRange and Copy use a backend's RangeReader or
// Copier and fall back to plain reads and writes for stores without one;
// ListDelimited uses a DelimiterLister (S3's ListObjectsV2 with Delimiter,
// whose cost grows with the folders listed, not with the objects beneath)
// and falls back to rolling up a full List.
//
// Backends live in subpackages: memstore (in memory, for tests), filestore
// (a local directory, the embedded default), s3store (AWS S3 and
// S3-compatible servers such as MinIO), gcsstore (Google Cloud Storage,
// generation numbers as version tokens, tested on fake-gcs-server) and
// azstore (Azure Blob Storage, tested on Azurite). All of them pass the
// same conformance suite, storetest.Run.
//
// Conditional writes are the foundation of pswap's commit: PutOptions.IfNoneMatch
// creates an object only if it is absent, PutOptions.IfMatch replaces it only
// if it is still at the version the caller read. Backend failures are mapped
// once to the sentinels of this package (ErrNotFound, ErrPrecondition,
// ErrTransient, ErrAccessDenied, ErrBucketNotFound, ErrInvalidKey), which
// callers check with errors.Is.
package store
