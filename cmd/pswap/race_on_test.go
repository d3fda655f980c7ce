//go:build race

package main

// raceEnabled: the test binary, and so the pswap processes the scripts run
// from it, are built with the race detector.
const raceEnabled = true
