package lakehouse

// ColdCap sets the most entries of a cold manifest (coldCap) until the
// returned function restores it.
func ColdCap(n int) (restore func()) {
	old := coldCap
	coldCap = n
	return func() { coldCap = old }
}
