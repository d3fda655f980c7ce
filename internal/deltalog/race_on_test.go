//go:build race

package deltalog_test

// raceEnabled: the tests run under the race detector (see raceShare).
const raceEnabled = true
