package sqlcat_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/catalog/sqlcat"
)

// FuzzParseURL: any string either parses into a configuration that names
// a catalog, a namespace and a table and shows no password, or is refused
// with ErrBadURL; never a panic. (A SQLite path is shown as given.) What
// parses has a public form (catalog.Public) without the password that
// parses into the same configuration, the password aside.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"sql+sqlite:///tmp/cat.db?catalog=lake&namespace=db&table=sales",
		"sql+sqlite:rel/cat.db?catalog=lake&namespace=a.b&table=t&create-namespace=true",
		"sql+postgres://u:secret@localhost:5432/cat?catalog=lake&namespace=db&table=sales&sslmode=disable",
		"sql+postgres:///cat?host=/run/pg&catalog=c&namespace=n&table=t",
		"sql+postgresql://u@h/db?catalog=c&namespace=n&table=t&create-namespace=0",
		"mysql://x", "", "sql+sqlite://host/x.db",
		"sql+sqlite:///x.db?catalog=a&catalog=b&namespace=n&table=t",
		"sql+sqlite:a%3Fb/c%25d.db?catalog=c&namespace=n&table=t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := sqlcat.ParseURL(raw)
		if err != nil {
			if !errors.Is(err, catalog.ErrBadURL) {
				t.Fatalf("%q: %v is not ErrBadURL", raw, err)
			}
			return
		}
		if s.Catalog == "" || s.Namespace == "" || s.Table == "" || s.DSN == "" {
			t.Fatalf("%q parsed into %+v", raw, s)
		}
		if s.Driver == "pgx" {
			shown, _, _ := strings.Cut(s.Display, " ")
			if u, err := url.Parse(shown); err != nil || u.User != nil {
				t.Fatalf("%q: the display form %q may show userinfo (%v)", raw, s.Display, err)
			}
		}
		pub, err := catalog.Public(raw)
		if err != nil {
			t.Fatalf("%q parses, but has no public form: %v", raw, err)
		}
		p, err := sqlcat.ParseURL(pub)
		if err != nil {
			t.Fatalf("%q: its public form %q does not parse: %v", raw, pub, err)
		}
		dsn := s.DSN
		if s.Driver == "pgx" {
			dsn = withoutPassword(t, dsn)
		}
		if dsn != p.DSN || s.Driver != p.Driver || s.Display != p.Display ||
			s.Catalog != p.Catalog || s.Namespace != p.Namespace || s.Table != p.Table || s.CreateNamespace != p.CreateNamespace {
			t.Fatalf("%q: its public form %q opens %+v, not %+v", raw, pub, p, s)
		}
		if again, err := catalog.Public(pub); err != nil || again != pub {
			t.Fatalf("%q: the public form %q is not canonical: %q %v", raw, pub, again, err)
		}
	})
}

// withoutPassword is a DSN without its userinfo's password.
func withoutPassword(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("DSN %q: %v", dsn, err)
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

func TestParseURL(t *testing.T) {
	cfg, err := sqlcat.ParseURL("sql+postgres://u:secret@db.internal:5433/cat?catalog=lake&namespace=a.b&table=sales&sslmode=disable&create-namespace=1")
	if err != nil {
		t.Fatal(err)
	}
	want := "postgres://u:secret@db.internal:5433/cat?connect_timeout=10&sslmode=disable"
	if cfg.Driver != "pgx" || cfg.DSN != want || cfg.Catalog != "lake" || cfg.Namespace != "a.b" || cfg.Table != "sales" || !cfg.CreateNamespace ||
		strings.Contains(cfg.Display, "secret") {
		t.Fatalf("%+v", cfg)
	}
	for raw, words := range map[string]string{
		"sql+sqlite:///x.db?catalog=c&table=t":                                    "no namespace",
		"sql+sqlite:///x.db?catalog=c&namespace=a..b&table=t":                     "empty level",
		"sql+sqlite:///x.db?namespace=n&table=t":                                  "no catalog",
		"sql+sqlite:///x.db?catalog=c&namespace=n&table=t&sslmode=x":              `unknown parameter "sslmode"`,
		"sql+postgres://u:pw@h/db?catalog=c&namespace=n&table=t&x=1":              `unknown parameter "x"`,
		"sql+sqlite:///x.db?catalog=c&namespace=n&table=t&create-namespace=maybe": "not true or false",
		"sql+postgres://u:pw@h:99999999999/%zz":                                   "bad catalog URL",
		"sql+sqlite://host/x.db?catalog=c&namespace=n&table=t":                    "not a host",
		"rest+http://h/?namespace=n&table=t":                                      "not a SQL catalog's scheme",
	} {
		_, err := sqlcat.ParseURL(raw)
		if !errors.Is(err, catalog.ErrBadURL) || !strings.Contains(err.Error(), words) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want ErrBadURL saying %q", raw, err, words)
		}
	}
}

// TestPublic: the public form of a SQL catalog URL keeps the user and
// drops the password, names the parameters in order, and reopens the same
// table.
func TestPublic(t *testing.T) {
	for raw, want := range map[string]string{
		"sql+postgres://u:s3cret@db.internal:5433/cat?table=sales&namespace=a.b&catalog=lake&sslmode=disable&create-namespace=1": "sql+postgres://u@db.internal:5433/cat?catalog=lake&create-namespace=true&namespace=a.b&sslmode=disable&table=sales",
		"sql+postgresql://db/cat?catalog=lake&namespace=db&table=sales&create-namespace=false":                                   "sql+postgres://db/cat?catalog=lake&namespace=db&table=sales",
		"sql+sqlite:///data/cat.db?catalog=lake&namespace=db&table=sales":                                                        "sql+sqlite:///data/cat.db?catalog=lake&namespace=db&table=sales",
		"sql+sqlite:rel/cat.db?catalog=lake&namespace=db&table=sales":                                                            "sql+sqlite:rel/cat.db?catalog=lake&namespace=db&table=sales",
	} {
		got, err := catalog.Public(raw)
		if err != nil || got != want {
			t.Errorf("Public(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// TestRelativeSQLitePath: a sql+sqlite URL with a relative path opens the
// database file relative to the working directory.
func TestRelativeSQLitePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("rel", 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open("sql+sqlite:rel/cat.db?catalog=c&namespace=n&table=t&create-namespace=true")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const loc = "file:///x/metadata/v1.metadata.json"
	if err := c.Register(context.Background(), loc); err != nil {
		t.Fatalf("register in a database at a relative path: %v", err)
	}
	if got, err := c.Current(context.Background()); err != nil || got != loc {
		t.Fatalf("current: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rel", "cat.db")); err != nil {
		t.Fatalf("the database file: %v", err)
	}
}
