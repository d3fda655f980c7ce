// Package integration holds pswap's end-to-end tests: the commit protocol on
// a real MinIO behind a fault-injecting proxy, racing processes, killed
// processes, and the invariant checker that all of them share (docs/design.md
// I1-I6). Tests that need MinIO skip without it; scripts/test.sh starts one.
package integration
