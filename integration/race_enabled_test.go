//go:build race

package integration

// raceEnabled: the test binary runs under the race detector, and so do the
// pswap processes it builds (sharing the build cache of the test).
const raceEnabled = true
