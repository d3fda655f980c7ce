// Package partupload is the part-upload pipeline of the stores that write a
// large object in parts (s3store's multipart uploads, azstore's staged
// blocks): it fills one part buffer at a time while at most Concurrency
// full parts upload in the background, so that memory stays about
// (Concurrency+1)*PartSize; it stops every part at the first failure, and
// sends an object that fits in one part in a single request at Commit.
// A caller with a file reads it straight into the part buffers
// (Writer.ReadFrom), may say its size first so that a Target that is a
// [Preparer] gets ready before the first part is full (Writer.SizeHint: an
// S3 multipart upload is created then), and may send the last part before
// Commit (Writer.Seal) while it finishes other work, such as checking what
// it wrote.
//
// What differs between the stores (how a part is sent, how the parts
// become the object, what an aborted write must clean up) is a [Target]
// each store implements; the request options of each request stay there.
//
// Its behaviour is checked by the store conformance suite (store/storetest)
// through s3store on MinIO and azstore on Azurite, and by this package's
// tests with a fake target.
package partupload
