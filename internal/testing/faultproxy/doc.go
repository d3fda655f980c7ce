// Package faultproxy is an HTTP proxy for tests that sits between an S3
// client and a real S3 server (MinIO) and injects the failures that the
// commit protocol must survive: responses lost after the server applied the
// request, 503 SlowDown, 500, 409 ConditionalRequestConflict, connection
// resets and delays. It listens on loopback only.
//
// A rule decides the fate of each request: a hand-written function (drop the
// reply of the first pointer PUT), or a random Mix of faults over all
// requests. The proxy counts every action it took, so that tests can report
// how many faults they survived, and tracks requests in flight, so that a
// test can wait until everything a killed client sent has settled.
package faultproxy
