// Package race tells tests whether they run under the race detector, and
// sizes their long loops for it. Under -race a step of a loop costs several
// times its CPU, and the detector finds nothing in the 1,000th of a loop of
// appends, one after another on a memory store, that it would not in the
// 200th: such a loop runs in full without -race (scripts/test.sh runs those
// tests again without it, beside the race-enabled ones, as it does the
// simulation's seeds) and in part under it (Share).
//
// It imports nothing, so that any package's tests can use it without
// linking more.
package race

// Share returns full, or under the race detector part: the steps of a long
// loop a test runs.
func Share(full, part int) int {
	if Enabled {
		return part
	}
	return full
}
