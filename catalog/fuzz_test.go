package catalog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap/catalog"
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
		"rest+http://localhost:8181/?warehouse=w", "mysql://x", "", "sql+sqlite://host/x.db",
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
		if cfg.Catalog == "" || cfg.Namespace == "" || cfg.Table == "" || cfg.DSN == "" {
			t.Fatalf("%q parsed into %+v", raw, cfg)
		}
		if cfg.Driver == "pgx" && strings.Contains(cfg.Display, "@") {
			t.Fatalf("%q: the display form %q may show userinfo", raw, cfg.Display)
		}
	})
}

func TestParse(t *testing.T) {
	cfg, err := catalog.Parse("sql+postgres://u:secret@db.internal:5433/cat?catalog=lake&namespace=a.b&table=sales&sslmode=disable&create-namespace=1")
	if err != nil {
		t.Fatal(err)
	}
	want := "postgres://u:secret@db.internal:5433/cat?connect_timeout=10&sslmode=disable"
	if cfg.Driver != "pgx" || cfg.DSN != want || cfg.Catalog != "lake" || cfg.Namespace != "a.b" || cfg.Table != "sales" || !cfg.CreateNamespace ||
		strings.Contains(cfg.Display, "secret") {
		t.Fatalf("%+v", cfg)
	}
	for raw, words := range map[string]string{
		"glue://x":                             "not supported",
		"ftp://x":                              "unknown scheme",
		"sql+sqlite:///x.db?catalog=c&table=t": "no namespace",
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
