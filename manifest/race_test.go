//go:build race

package manifest

// raceEnabled lets the tests that only exercise size limits (and gain
// nothing from the race detector) skip their slow work under it.
const raceEnabled = true
