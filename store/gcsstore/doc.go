// Package gcsstore implements store.Store on Google Cloud Storage, on the
// cloud's own Go SDK (cloud.google.com/go/storage, JSON API), and on the
// fake-gcs-server emulator.
//
// A Store is rooted at a prefix of one bucket (gs://bucket/prefix): keys are
// relative to that prefix and validated with store.ValidateKey, so nothing
// outside the root is ever read or written. Besides store.Store, a *Store
// implements store.BatchDeleter (concurrent deletes: the Go SDK has no batch
// request), store.RangeReader, store.Copier (the rewrite API: no byte passes
// through the client), store.DelimiterLister and store.Clock (the server's
// own time, from the Date header of its responses). Store.Sibling is a
// store on another bucket sharing the client and its credentials, and
// Store.CopyFrom copies an object of another bucket into the store with the
// same rewrite as Copy.
//
// Version tokens are GCS generation numbers, in decimal: the ETag of every
// store.Attrs the package returns is the object's generation, which GCS
// changes on every write of the object's data, even of the same bytes;
// store.Attrs.ContentMD5 is the object's md5Hash (Stat, List, Put, Copy),
// which names the bytes (composite objects have none). Conditional writes map to
// generation preconditions: store.PutOptions.IfNoneMatch sends
// ifGenerationMatch=0 (create only if no live object exists), and IfMatch
// sends ifGenerationMatch with the generation. A failed precondition is
// HTTP 412 whether the object changed or is missing; for IfMatch the
// package then reads the object's attributes once, so that a missing key
// matches store.ErrNotFound as well as store.ErrPrecondition, as on S3.
//
// Credentials: when STORAGE_EMULATOR_HOST is set (host:port or a URL),
// every request goes to that emulator, unauthenticated, as the SDK and the
// other GCS tools do. Otherwise the SDK's Application Default Credentials
// are used: GOOGLE_APPLICATION_CREDENTIALS (a service account or external
// account key file), the gcloud user credentials, or the metadata server of
// a Google Cloud VM. No credential, token or signed URL is ever logged or
// put in an error message; Options.OnSecret reports each access token so
// that a CLI can keep it out of its output.
//
// Every failure is mapped once (see the unexported mapError) to the
// sentinels of package store: store.ErrNotFound, store.ErrPrecondition,
// store.ErrTransient (429, 408, 5xx, transport failures),
// store.ErrAccessDenied (401, 403), store.ErrBucketNotFound and
// store.ErrInvalidRange (416). A cancelled context yields an error that
// matches the context's error instead.
//
// Options.RetryMaxAttempts bounds the SDK's attempts at each request,
// uploads included: the SDK retries an upload request until its context
// ends whatever WithMaxAttempts says, so the package counts an upload's
// failed attempts itself (a resumable upload's count starts afresh with
// each chunk sent).
//
// Large objects are streamed with NewWriter: a resumable upload that sends
// one chunk of PartSize bytes at a time (rounded up to 256 KiB), so memory
// is bounded by one chunk. Objects smaller than a chunk go in one request.
// Nothing is visible until the last chunk is accepted; an aborted or
// cancelled write leaves no object, only an unfinished upload session that
// GCS discards after a week and that is neither listed nor billed.
package gcsstore
