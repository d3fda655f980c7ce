// Package s3store implements store.Store on Amazon S3 and S3-compatible
// servers (tested on MinIO).
//
// A Store is rooted at a prefix of one bucket: keys are relative to that
// prefix and validated with store.ValidateKey, so nothing outside the root is
// ever read or written. Besides store.Store, a *Store implements
// store.BatchDeleter (DeleteObjects), store.UploadLister (multipart uploads,
// for garbage collection) and store.Clock (the server's own time, from the
// Date header of its responses).
//
// Configuration follows the AWS SDK's standard chain: AWS_ENDPOINT_URL (or
// AWS_ENDPOINT_URL_S3), AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_PROFILE and the shared config files, AWS_REQUEST_CHECKSUM_CALCULATION
// and AWS_RESPONSE_CHECKSUM_VALIDATION. The zero Options use all of them; a
// custom endpoint implies path-style addressing, and a missing region
// defaults to us-east-1.
//
// Conditional writes map to S3 preconditions: store.PutOptions.IfNoneMatch
// sends If-None-Match: *, and IfMatch sends If-Match with the ETag exactly as
// S3 returned it (quotes included). They apply to PutObject and to
// CompleteMultipartUpload alike.
//
// Every failure is mapped once (see the unexported mapError) to the
// sentinels of package store, checked with errors.Is: store.ErrNotFound,
// store.ErrPrecondition, store.ErrTransient, store.ErrAccessDenied,
// store.ErrBucketNotFound. A cancelled context yields an error that matches
// the context's error instead. Error messages name the operation, bucket and
// key, never the credentials.
//
// Large objects are streamed with NewWriter: a multipart upload whose parts
// are uploaded concurrently while the caller keeps writing, with memory
// bounded by about (Concurrency+1)*PartSize. Objects smaller than one part
// are sent with a single PutObject. A failed, aborted or cancelled write
// aborts the multipart upload, so nothing becomes visible.
package s3store
