//go:build !race

package deltalog_test

const raceEnabled = false
