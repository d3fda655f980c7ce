package main

import "testing"

// TestIsStoreURIInputs: the CLI routes an input to the server-side copy
// when it is a store URI of any scheme (the copy then refuses a scheme
// other than the table's, naming it), and to a local read otherwise.
func TestIsStoreURIInputs(t *testing.T) {
	for s, want := range map[string]bool{
		"s3://lake/out/dt=1/":                          true,
		"gs://lake/out/dt=1/":                          true,
		"az://lake/out/dt=1/":                          true,
		"abfss://lake@acct.dfs.core.windows.net/out/":  true,
		"wasbs://lake@acct.blob.core.windows.net/out/": true,
		"s3a://lake/out/":                              true,
		"file:///data/out/a.parquet":                   false,
		"out/dt=1/a.parquet":                           false,
		"/data/out":                                    false,
	} {
		if got := isStoreURI(s); got != want {
			t.Errorf("isStoreURI(%q) = %v, want %v", s, got, want)
		}
	}
	if got := firstStoreURI([]string{"a.parquet", "gs://lake/out/", "s3://x/y"}); got != "gs://lake/out/" {
		t.Errorf("firstStoreURI = %q", got)
	}
}
