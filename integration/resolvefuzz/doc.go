// Package resolvefuzz holds a fuzz target of the read path (pointer ->
// manifest -> files) on tampered metadata. It is its own package, apart
// from the integration tests, so that its test binary links only the
// protocol and a memory store: coverage-guided fuzzing of a binary that
// also links the S3 SDK and Arrow is a hundred times slower.
package resolvefuzz
