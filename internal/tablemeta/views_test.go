package tablemeta

import (
	"errors"
	"strings"
	"testing"
)

func TestViewsRoundTrip(t *testing.T) {
	tb, err := Decode(golden(t))
	if err != nil {
		t.Fatal(err)
	}
	v, recorded := tb.ViewsOf()
	want := Views{Iceberg: true, Delta: true, Catalogs: []string{"sql+postgres://pswap@db.example:5432/lake?catalog=lake&namespace=db&table=sales"}}
	if !recorded || !v.Equal(want) {
		t.Fatalf("views %+v (recorded %v), want %+v", v, recorded, want)
	}
	// The clone is deep: changing it leaves the table's alone.
	c := tb.Clone()
	c.Views.Catalogs[0] = "x:y"
	if tb.Views.Catalogs[0] == "x:y" {
		t.Fatal("Clone shares the catalogs")
	}
}

func TestViewsAbsentAreDefault(t *testing.T) {
	g := string(golden(t))
	i := strings.Index(g, `,
  "views"`)
	doc := g[:i] + "\n}\n"
	tb, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	v, recorded := tb.ViewsOf()
	if recorded || !v.Equal(DefaultViews()) || !v.Iceberg || v.Delta {
		t.Fatalf("views %+v recorded %v, want the default (Iceberg only), not recorded", v, recorded)
	}
	enc, err := Encode(tb)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(enc), "views") {
		t.Fatalf("a table without recorded views encodes them:\n%s", enc)
	}
	// A document of version 1.0 (before views) reads as it always did.
	old := strings.Replace(doc, `"version": "1.2"`, `"version": "1.0"`, 1)
	if _, err := Decode([]byte(old)); err != nil {
		t.Fatalf("1.0 document: %v", err)
	}
}

func TestViewsInvalid(t *testing.T) {
	g := string(golden(t))
	rep := func(old, new string) string { return strings.Replace(g, old, new, 1) }
	const cat = `"sql+postgres://pswap@db.example:5432/lake?catalog=lake&namespace=db&table=sales"`
	for _, c := range []struct{ name, doc, want string }{
		{"password", rep(cat, `"sql+postgres://pswap:hunter2@db/lake?table=t"`), "holds a password"},
		{"no scheme", rep(cat, `"db/lake?table=t"`), "no scheme"},
		{"empty", rep(cat, `""`), "empty"},
		{"duplicate", rep(cat, cat+", "+cat), "sorted and unique"},
		{"unsorted", rep(cat, cat+`, "a+b://x"`), "sorted and unique"},
		{"not bool", rep(`"delta": true`, `"delta": "yes"`), "views.delta"},
		{"missing iceberg", rep(`"iceberg": true,`, ``), "views.iceberg"},
		{"unknown", rep(`"delta": true,`, `"delta": true, "hudi": true,`), "hudi"},
		{"not object", rep(`"delta": true,`, `"delta": true, "catalogs": {},`), "views.catalogs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want ErrInvalid naming %q", err, c.want)
			}
		})
	}
	// Encode refuses what Decode refuses: a secret never reaches the store.
	tb, _ := Decode(golden(t))
	v := tb.Views.WithCatalog("sql+postgres://u:secret@h/db?table=t")
	tb.Views = &v
	if _, err := Encode(tb); !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Encode with a password: %v", err)
	}
}

func TestViewsWithCatalog(t *testing.T) {
	v := DefaultViews().WithCatalog("b://x").WithCatalog("a://y").WithCatalog("b://x")
	if len(v.Catalogs) != 2 || v.Catalogs[0] != "a://y" {
		t.Fatalf("%v", v.Catalogs)
	}
	if w := v.WithoutCatalog("a://y"); len(w.Catalogs) != 1 || len(v.Catalogs) != 2 {
		t.Fatalf("WithoutCatalog: %v (original %v)", w.Catalogs, v.Catalogs)
	}
}
