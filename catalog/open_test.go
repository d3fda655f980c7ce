package catalog_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
)

// plainCatalog is mapCatalog breaking the contract: a plain error where
// ErrNotRegistered is due.
type plainCatalog struct{ *mapCatalog }

func (c plainCatalog) Current(ctx context.Context) (string, error) {
	loc, err := c.mapCatalog.Current(ctx)
	if errors.Is(err, catalog.ErrNotRegistered) {
		return "", errors.New("no table " + c.name)
	}
	return loc, err
}

// TestOwnCatalogContract: a catalog of one's own gets the table
// registered only if it answers ErrNotRegistered for a table it does not
// have: with a plain error the first publish fails (ErrCatalog, the
// metadata files published) and the catalog stays empty; the same catalog
// honouring the contract registers the table, and the next publish moves
// it.
func TestOwnCatalogContract(t *testing.T) {
	tb := openTable(t, t.TempDir())
	plain := plainCatalog{&mapCatalog{tables: map[string]string{}, name: "db.sales"}}
	pub := commitPart(t, tb, "dt=2026-01-01", 3, pswap.PublishOptions{Catalog: plain})
	if pub.Published || !errors.Is(pub.Err, catalog.ErrCatalog) || pub.MetadataLocation == "" || len(plain.tables) != 0 {
		t.Fatalf("a catalog answering a plain error for a missing table: %+v, tables %v", pub, plain.tables)
	}
	t.Logf("with a plain error: %v", pub.Err)

	mine := plain.mapCatalog
	r, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: mine})
	if err != nil || mine.tables["db.sales"] != r.MetadataLocation {
		t.Fatalf("the catalog honouring the contract: %+v %v, tables %v", r, err, mine.tables)
	}
	pub = commitPart(t, tb, "dt=2026-01-02", 3, pswap.PublishOptions{Catalog: mine})
	if !pub.Published || mine.tables["db.sales"] != pub.MetadataLocation || pub.Version != 2 {
		t.Fatalf("the next publish: %+v, tables %v", pub, mine.tables)
	}
}

// TestOpenSchemes: a URL whose scheme no driver is registered for is
// ErrBadURL naming the schemes there are; Glue stays refused.
func TestOpenSchemes(t *testing.T) {
	for raw, words := range map[string]string{
		"ftp://x/?namespace=n&table=t":          `unknown scheme "ftp" (supported: rest+http, rest+https, sql+postgres, sql+postgresql, sql+sqlite)`,
		"glue://x?namespace=n&table=t":          "glue catalogs are not supported",
		"/tmp/cat.db?namespace=n&table=t":       "no scheme",
		"sql+postgres://u:pw@h:99999999999/%zz": "bad catalog URL",
	} {
		_, err := catalog.Open(raw)
		if !errors.Is(err, catalog.ErrBadURL) || !errors.Is(err, pswap.ErrBadInput) || !strings.Contains(err.Error(), words) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want ErrBadURL saying %q", raw, err, words)
		}
		if _, perr := catalog.Public(raw); !errors.Is(perr, catalog.ErrBadURL) {
			t.Errorf("Public(%s): %v, want ErrBadURL", raw, perr)
		}
	}
	if got := strings.Join(catalog.Schemes(), " "); got != "rest+http rest+https sql+postgres sql+postgresql sql+sqlite" {
		t.Errorf("Schemes() = %s", got)
	}
}

// FuzzPublic: a catalog URL's public form, when it has one, shows no
// password, is its own public form, and opens the same catalog table as
// the URL itself.
func FuzzPublic(f *testing.F) {
	for _, s := range []string{
		"sql+sqlite:///tmp/cat.db?catalog=lake&namespace=db&table=sales",
		"sql+sqlite:rel/cat.db?catalog=lake&namespace=a.b&table=t&create-namespace=true",
		"sql+postgres://u:secret@localhost:5432/cat?catalog=lake&namespace=db&table=sales&sslmode=disable",
		"sql+postgresql://:secret@localhost/cat?catalog=lake&namespace=db&table=sales",
		"sql+postgres:///cat?host=/run/pg&catalog=c&namespace=n&table=t",
		"rest+https://cat.example:8443/api/catalog?warehouse=lake&namespace=a.b&table=t&create-namespace=true",
		"rest+http://u:pw@h/?namespace=n&table=t", "glue://x", "ftp://x", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		pub, err := catalog.Public(raw)
		if err != nil {
			if !errors.Is(err, catalog.ErrBadURL) {
				t.Fatalf("%q: %v is not ErrBadURL", raw, err)
			}
			if _, oerr := catalog.Open(raw); oerr == nil {
				t.Fatalf("%q opens, but has no public form: %v", raw, err)
			}
			return
		}
		u, err := url.Parse(pub)
		if err != nil {
			t.Fatalf("%q: the public form %q does not parse: %v", raw, pub, err)
		}
		if _, has := u.User.Password(); has {
			t.Fatalf("%q: the public form %q has a password", raw, pub)
		}
		if r, _ := url.Parse(raw); r != nil && r.User != nil {
			if pw, has := r.User.Password(); has && len(pw) >= 4 && strings.Contains(pub, pw) {
				t.Fatalf("%q: the public form %q shows the password", raw, pub)
			}
		}
		if again, err := catalog.Public(pub); err != nil || again != pub {
			t.Fatalf("%q: the public form %q is not canonical: %q, %v", raw, pub, again, err)
		}
		c1, err := catalog.Open(raw)
		if err != nil {
			t.Fatalf("%q has a public form but does not open: %v", raw, err)
		}
		defer c1.Close()
		c2, err := catalog.Open(pub)
		if err != nil {
			t.Fatalf("%q: its public form %q does not open: %v", raw, pub, err)
		}
		defer c2.Close()
		if c1.String() != c2.String() {
			t.Fatalf("%q opens %s, its public form %q opens %s", raw, c1, pub, c2)
		}
	})
}
