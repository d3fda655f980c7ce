package azstore_test

import "os"

func testenvKey() string { return os.Getenv("AZURE_STORAGE_KEY") }
