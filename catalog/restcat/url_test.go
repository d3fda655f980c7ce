package restcat_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/catalog/restcat"
)

// FuzzParseURL: any string either parses into a configuration that Open
// takes, names a namespace and a table and holds no credential, or is
// refused with ErrBadURL; never a panic. What parses has a canonical
// public form that parses into the same configuration.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"rest+http://localhost:8181/?warehouse=w", "mysql://x", "",
		"rest+https://cat.example:8443/api/catalog?warehouse=lake&namespace=a.b&table=t&create-namespace=true",
		"rest+http://h/?namespace=n&table=t&oauth2-server-uri=https://idp/token&scope=PRINCIPAL_ROLE:ALL",
		"rest+http://u:pw@h/?namespace=n&table=t",
		"rest+http://h/a%2Fb/?namespace=n&table=t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := restcat.ParseURL(raw)
		if err != nil {
			if !errors.Is(err, catalog.ErrBadURL) {
				t.Fatalf("%q: %v is not ErrBadURL", raw, err)
			}
			return
		}
		u, err := url.Parse(r.URI)
		if len(r.Namespace) == 0 || r.Table == "" || r.Token != "" || r.Credential != "" ||
			err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
			t.Fatalf("%q parsed into %+v", raw, r)
		}
		if _, err := restcat.Open(r); err != nil {
			t.Fatalf("%q parsed into %+v, which Open refuses: %v", raw, r, err)
		}
		pub, err := catalog.Public(raw)
		if err != nil {
			t.Fatalf("%q parses, but has no public form: %v", raw, err)
		}
		p, err := restcat.ParseURL(pub)
		if err != nil || !reflect.DeepEqual(p, r) {
			t.Fatalf("%q: its public form %q parses into %+v, %v; not %+v", raw, pub, p, err, r)
		}
		if again, err := catalog.Public(pub); err != nil || again != pub {
			t.Fatalf("%q: the public form %q is not canonical: %q %v", raw, pub, again, err)
		}
	})
}

func TestParseURL(t *testing.T) {
	r, err := restcat.ParseURL("rest+https://cat.example:8443/api/catalog/?warehouse=lake&namespace=a.b&table=sales&create-namespace=true&scope=PRINCIPAL_ROLE:ALL")
	if err != nil {
		t.Fatal(err)
	}
	if r.URI != "https://cat.example:8443/api/catalog/" || r.Warehouse != "lake" ||
		strings.Join(r.Namespace, "|") != "a|b" || r.Table != "sales" || !r.CreateNamespace || r.Scope != "PRINCIPAL_ROLE:ALL" {
		t.Fatalf("%+v", r)
	}
	for raw, words := range map[string]string{
		"rest+http://u:pw@h/?namespace=n&table=t":                      "no user or password",
		"rest+http://h/?namespace=n":                                   "no table",
		"rest+http://h/?catalog=c&namespace=n&table=t":                 "warehouse=",
		"rest+http://h/?namespace=n&table=t&credential=a:pw":           `unknown parameter "credential"`,
		"rest+http://h/?namespace=n&table=t&oauth2-server-uri=ftp://x": "oauth2-server-uri",
		"rest+http:///?namespace=n&table=t":                            "host",
		"rest+http://h/?namespace=n&table=t&warehouse=a&warehouse=b":   "given 2 times",
		"sql+sqlite:///x.db?catalog=c&namespace=n&table=t":             "not a REST catalog's scheme",
	} {
		_, err := restcat.ParseURL(raw)
		if !errors.Is(err, catalog.ErrBadURL) || !strings.Contains(err.Error(), words) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want ErrBadURL saying %q", raw, err, words)
		}
	}
}
