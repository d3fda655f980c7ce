// Package testenv gives tests the external services they need, and skips
// them with a clear message when a service is not configured.
//
// S3 tests run against the MinIO server that scripts/test.sh starts (it
// exports PSWAP_TEST_S3=1 and the standard AWS_* variables). Each call to S3,
// S3URL or S3Bucket creates a fresh bucket with a unique name, so tests are
// isolated and may run in parallel, and empties and deletes it when the test
// ends.
package testenv
