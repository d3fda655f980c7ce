package catalog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/catalog/restcat"
)

// FuzzParse: any string either parses into a configuration that names a
// catalog, a namespace and a table and shows no password, or is refused
// with ErrBadURL; never a panic. (A SQLite path is shown as given.)
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"sql+sqlite:///tmp/cat.db?catalog=lake&namespace=db&table=sales",
		"sql+sqlite:rel/cat.db?catalog=lake&namespace=a.b&table=t&create-namespace=true",
		"sql+postgres://u:secret@localhost:5432/cat?catalog=lake&namespace=db&table=sales&sslmode=disable",
		"sql+postgres:///cat?host=/run/pg&catalog=c&namespace=n&table=t",
		"rest+http://localhost:8181/?warehouse=w", "mysql://x",
		"rest+https://cat.example:8443/api/catalog?warehouse=lake&namespace=a.b&table=t&create-namespace=true",
		"rest+http://h/?namespace=n&table=t&oauth2-server-uri=https://idp/token&scope=PRINCIPAL_ROLE:ALL",
		"rest+http://u:pw@h/?namespace=n&table=t", "", "sql+sqlite://host/x.db",
		"sql+sqlite:///x.db?catalog=a&catalog=b&namespace=n&table=t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := catalog.Parse(raw)
		if err != nil {
			if !errors.Is(err, catalog.ErrBadURL) {
				t.Fatalf("%q: %v is not ErrBadURL", raw, err)
			}
			return
		}
		if (cfg.SQL == nil) == (cfg.REST == nil) {
			t.Fatalf("%q parsed into %+v", raw, cfg)
		}
		if r := cfg.REST; r != nil {
			if len(r.Namespace) == 0 || r.Table == "" || r.Token != "" || r.Credential != "" ||
				!(strings.HasPrefix(r.URI, "http://") || strings.HasPrefix(r.URI, "https://")) || strings.Contains(r.URI, "@") {
				t.Fatalf("%q parsed into %+v", raw, r)
			}
			if _, err := restcat.Open(*r); err != nil {
				t.Fatalf("%q parsed into %+v, which Open refuses: %v", raw, r, err)
			}
			return
		}
		s := cfg.SQL
		if s.Catalog == "" || s.Namespace == "" || s.Table == "" || s.DSN == "" {
			t.Fatalf("%q parsed into %+v", raw, s)
		}
		if s.Driver == "pgx" && strings.Contains(s.Display, "@") {
			t.Fatalf("%q: the display form %q may show userinfo", raw, s.Display)
		}
	})
}

func TestParse(t *testing.T) {
	parsed, err := catalog.Parse("sql+postgres://u:secret@db.internal:5433/cat?catalog=lake&namespace=a.b&table=sales&sslmode=disable&create-namespace=1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := parsed.SQL
	want := "postgres://u:secret@db.internal:5433/cat?connect_timeout=10&sslmode=disable"
	if cfg.Driver != "pgx" || cfg.DSN != want || cfg.Catalog != "lake" || cfg.Namespace != "a.b" || cfg.Table != "sales" || !cfg.CreateNamespace ||
		strings.Contains(cfg.Display, "secret") {
		t.Fatalf("%+v", cfg)
	}
	for raw, words := range map[string]string{
		"glue://x": "not supported",
		"rest+http://u:pw@h/?namespace=n&table=t":                                 "no user or password",
		"rest+http://h/?namespace=n":                                              "no table",
		"rest+http://h/?catalog=c&namespace=n&table=t":                            "warehouse=",
		"rest+http://h/?namespace=n&table=t&credential=a:pw":                      `unknown parameter "credential"`,
		"rest+http://h/?namespace=n&table=t&oauth2-server-uri=ftp://x":            "oauth2-server-uri",
		"rest+http:///?namespace=n&table=t":                                       "host",
		"ftp://x":                                                                 "unknown scheme",
		"sql+sqlite:///x.db?catalog=c&table=t":                                    "no namespace",
		"sql+sqlite:///x.db?catalog=c&namespace=a..b&table=t":                     "empty level",
		"sql+sqlite:///x.db?catalog=c&namespace=n&table=t&sslmode=x":              `unknown parameter "sslmode"`,
		"sql+postgres://u:pw@h/db?catalog=c&namespace=n&table=t&x=1":              `unknown parameter "x"`,
		"sql+sqlite:///x.db?catalog=c&namespace=n&table=t&create-namespace=maybe": "not true or false",
		"sql+postgres://u:pw@h:99999999999/%zz":                                   "bad catalog URL",
	} {
		_, err := catalog.Parse(raw)
		if !errors.Is(err, catalog.ErrBadURL) || !strings.Contains(err.Error(), words) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want ErrBadURL saying %q", raw, err, words)
		}
	}
}

func TestParseREST(t *testing.T) {
	parsed, err := catalog.Parse("rest+https://cat.example:8443/api/catalog/?warehouse=lake&namespace=a.b&table=sales&create-namespace=true&scope=PRINCIPAL_ROLE:ALL")
	if err != nil {
		t.Fatal(err)
	}
	r := parsed.REST
	if parsed.SQL != nil || r == nil || r.URI != "https://cat.example:8443/api/catalog/" || r.Warehouse != "lake" ||
		strings.Join(r.Namespace, "|") != "a|b" || r.Table != "sales" || !r.CreateNamespace || r.Scope != "PRINCIPAL_ROLE:ALL" {
		t.Fatalf("%+v", r)
	}
}
