package pswap_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/azstore"
)

// TestOpenStoreAzureURLs: az://, abfss:// and wasbs:// open an azstore
// (the @ of abfss:// separates container and account, no credential);
// the unencrypted forms and credentials in an az:// URL are refused,
// naming what to write, and a refused URL's userinfo is never echoed.
func TestOpenStoreAzureURLs(t *testing.T) {
	env := map[string]string{azstore.EnvAccount: "acct01", azstore.EnvKey: "c2VjcmV0LWtleQ=="}
	opts := pswap.Options{Azure: azstore.Options{Getenv: func(k string) string { return env[k] }}}
	ctx := context.Background()
	for url, want := range map[string]string{
		"az://lake/sales": "abfss://lake@acct01.dfs.core.windows.net/sales",
		"abfss://lake@acct01.dfs.core.windows.net/sales/":  "abfss://lake@acct01.dfs.core.windows.net/sales",
		"wasbs://lake@acct02.blob.core.windows.net/a/b":    "abfss://lake@acct02.dfs.core.windows.net/a/b",
		"ABFSS://lake@acct03.dfs.core.chinacloudapi.cn/xy": "abfss://lake@acct03.dfs.core.chinacloudapi.cn/xy",
	} {
		st, err := pswap.OpenStore(ctx, url, opts)
		if err != nil {
			t.Errorf("OpenStore(%q): %v", url, err)
			continue
		}
		if got := st.URI(""); got != want {
			t.Errorf("OpenStore(%q).URI = %q, want %q", url, got, want)
		}
		if _, ok := st.(*azstore.Store); !ok {
			t.Errorf("OpenStore(%q) is a %T", url, st)
		}
	}
	for url, want := range map[string]string{
		"abfs://lake@acct01.dfs.core.windows.net/sales": "abfss://",
		"wasb://lake@acct01.blob.core.windows.net/s":    "az://CONTAINER",
		"az://Lake/sales":               "invalid container",
		"az://SECRETKEY0123@lake/sales": "credentials in a table URL are refused",
		"azz://lake/sales":              `did you mean "az://lake/sales"`,
	} {
		_, err := pswap.OpenStore(ctx, url, opts)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenStore(%q): %v, want an error with %q", url, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRETKEY0123") {
			t.Errorf("OpenStore(%q) echoes the userinfo: %v", url, err)
		}
		if !errors.Is(err, pswap.ErrBadURL) {
			t.Errorf("OpenStore(%q): %v, want ErrBadURL", url, err)
		}
	}
	// Credentials in an az:// URL: the hint names Azure's variables, not AWS's.
	if _, err := pswap.OpenStore(ctx, "az://SECRETKEY0123@lake/sales", opts); err == nil ||
		!strings.Contains(err.Error(), "AZURE_STORAGE_CONNECTION_STRING") || strings.Contains(err.Error(), "AWS_") {
		t.Errorf("OpenStore with credentials in an az:// URL: %v, want Azure's credential hint", err)
	}
}
