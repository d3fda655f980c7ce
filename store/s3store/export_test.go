package s3store

// SetCopyLimits lowers s's CopyObject limit and UploadPartCopy part size, so
// that a test runs a multipart copy on a small object.
func SetCopyLimits(s *Store, objectLimit, partSize int64) {
	s.testCopyLimit, s.testCopyPart = objectLimit, partSize
}
