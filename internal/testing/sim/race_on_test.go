//go:build race

package sim

// raceEnabled: the test binary runs under the race detector, where a seed
// costs about three and a half times its CPU without it.
const raceEnabled = true
