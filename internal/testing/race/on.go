//go:build race

package race

// Enabled: the binary runs under the race detector (and so do the pswap
// processes a test binary builds or runs from the same build flags).
const Enabled = true
