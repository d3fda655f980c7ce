package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/pswap/pswap/store"
)

// TestStoreOf: the kind of store a table URL names, for the hints.
func TestStoreOf(t *testing.T) {
	for u, want := range map[string]storeKind{
		"":                storeS3,
		"s3://lake/sales": storeS3,
		"S3://lake/sales": storeS3,
		"gs://lake/sales": storeGCS,
		"az://lake/sales": storeAzure,
		"abfss://lake@acct.dfs.core.windows.net/sales":  storeAzure,
		"wasbs://lake@acct.blob.core.windows.net/sales": storeAzure,
		"file:///srv/lake/sales":                        storeLocal,
		"./lake/sales":                                  storeLocal,
		"/srv/lake/sales":                               storeLocal,
	} {
		if got := storeOf(u); got != want {
			t.Errorf("storeOf(%q) = %d, want %d", u, got, want)
		}
	}
}

// TestHintsNameTheTablesStore: a refused request, a missing bucket and an
// endpoint that does not answer are advised in the table's store's own
// terms. A gs:// or az:// table was told to check its AWS credentials,
// AWS_ENDPOINT_URL and AWS_REGION, which it does not use.
func TestHintsNameTheTablesStore(t *testing.T) {
	dial := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/b/o", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	errs := map[string]error{
		"access":      fmt.Errorf("list partitions: %w", store.ErrAccessDenied),
		"bucket":      fmt.Errorf("list partitions: %w", store.ErrBucketNotFound),
		"unreachable": fmt.Errorf("list partitions: %w", dial),
	}
	want := map[storeKind]map[string][]string{
		storeS3: {
			"access":      {"AWS_ACCESS_KEY_ID", "AWS_PROFILE"},
			"bucket":      {"bucket", "AWS_ENDPOINT_URL", "AWS_REGION"},
			"unreachable": {"http://127.0.0.1:1", "AWS_ENDPOINT_URL"},
		},
		storeGCS: {
			"access":      {"GOOGLE_APPLICATION_CREDENTIALS", "application-default login"},
			"bucket":      {"bucket does not exist", "gcloud storage buckets create", "STORAGE_EMULATOR_HOST"},
			"unreachable": {"http://127.0.0.1:1", "STORAGE_EMULATOR_HOST"},
		},
		storeAzure: {
			"access":      {"AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "container"},
			"bucket":      {"container does not exist", "AZURE_STORAGE_ACCOUNT"},
			"unreachable": {"http://127.0.0.1:1", "BlobEndpoint"},
		},
		storeLocal: {
			"access": {"directory"},
			"bucket": {"root directory does not exist"},
		},
	}
	for kind, byErr := range want {
		for name, says := range byErr {
			h := errorHint(errs[name], kind)
			for _, s := range says {
				if !strings.Contains(h, s) {
					t.Errorf("store %d, %s: hint %q does not say %q", kind, name, h, s)
				}
			}
			if kind != storeS3 && strings.Contains(h, "AWS") {
				t.Errorf("store %d, %s: hint %q speaks of AWS", kind, name, h)
			}
		}
	}
}
