package pswap

// VerifySnapshot verifies a generation that is not current, for the tests
// of what Verify finds in a doctored manifest (collect_test.go).
var VerifySnapshot = verifySnapshot
