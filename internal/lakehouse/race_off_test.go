//go:build !race

package lakehouse_test

const raceEnabled = false
