//go:build !race

package swap_test

const raceEnabled = false
