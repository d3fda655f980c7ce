package main

import (
	"strings"
	"testing"
)

// TestRedactAzure: an Azure key, SAS token and connection string never
// reach the output, alone or quoted in a URL or a connection string, while
// an abfss:// URL's container@account (no credential) passes unchanged.
func TestRedactAzure(t *testing.T) {
	const (
		key = "c2VjcmV0LWF6dXJlLWtleS0wNDUxLWZvci1wc3dhcA=="
		sig = "Zm9vYmFyc2lnbmF0dXJl%3D"
		sas = "sv=2024-11-04&ss=b&srt=co&sp=rwdl&se=2026-12-31&sig=" + sig
		cs  = "DefaultEndpointsProtocol=https;AccountName=lakeacct;AccountKey=" + key + ";EndpointSuffix=core.windows.net"
	)
	env := map[string]string{
		"AZURE_STORAGE_ACCOUNT":           "lakeacct",
		"AZURE_STORAGE_KEY":               key,
		"AZURE_STORAGE_SAS_TOKEN":         "?" + sas,
		"AZURE_STORAGE_CONNECTION_STRING": cs,
	}
	red := newRedactor(func(k string) string { return env[k] }, []string{"commit", "--table", "abfss://lake@lakeacct.dfs.core.windows.net/sales"})
	for _, in := range []string{
		"key " + key,
		"https://lakeacct.blob.core.windows.net/lake/x?" + sas,
		"signature " + sig + " rejected",
		"conn " + cs,
		"other SAS https://h/c?sv=1&sig=OTHERsig123&se=2",
		"DefaultEndpointsProtocol=https;AccountName=b;AccountKey=T3RoZXJLZXk=;EndpointSuffix=x",
	} {
		got := red.String(in)
		for _, secret := range []string{key, sig, "OTHERsig123", "T3RoZXJLZXk="} {
			if strings.Contains(got, secret) {
				t.Errorf("redact(%q) = %q: shows a secret", in, got)
			}
		}
	}
	for _, in := range []string{
		"created a table at abfss://lake@lakeacct.dfs.core.windows.net/sales",
		"az://lake/sales/dt=2026-11-27/_pswap/gen/01a2/part-00000.parquet",
		"account lakeacct, container lake",
	} {
		if got := red.String(in); got != in {
			t.Errorf("redact(%q) = %q: changed output that holds no secret", in, got)
		}
	}
}
