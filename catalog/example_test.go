package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
)

// A REST catalog's table, opened with a token given by the program (the
// zero Options read $PSWAP_CATALOG_TOKEN or $PSWAP_CATALOG_CREDENTIAL).
// The program links the REST driver (import _
// "github.com/pswap/pswap/catalog/restcat"). Opening does no I/O: the
// first publish reaches the catalog, and String never shows the token.
func ExampleOpenWith() {
	cat, err := catalog.OpenWith("rest+https://catalog.example.com/api/catalog?warehouse=lake&namespace=db&table=sales",
		catalog.Options{Token: "a-bearer-token"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.Close()
	fmt.Println(cat)
	// Output: rest catalog https://catalog.example.com/api/catalog, table db.sales
}

// The form of a catalog URL to record or show: the password goes (it
// comes from $PGPASSWORD when the URL is opened again), the user stays.
func ExamplePublic() {
	pub, err := catalog.Public("sql+postgres://etl:s3cret@db.example.com/lake?table=sales&namespace=db&catalog=lake")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pub)
	// Output: sql+postgres://etl@db.example.com/lake?catalog=lake&namespace=db&table=sales
}

// mapCatalog is a catalog of one's own: metadata locations by table name,
// in memory. It honours the contract: ErrNotRegistered for a table it
// does not have, ErrCatalogConflict for a lost compare-and-swap.
type mapCatalog struct {
	mu     sync.Mutex
	tables map[string]string
	name   string // the table this entry is
}

func (c *mapCatalog) Current(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	loc, ok := c.tables[c.name]
	if !ok {
		return "", fmt.Errorf("%w: %s", catalog.ErrNotRegistered, c.name)
	}
	return loc, nil
}

func (c *mapCatalog) Register(ctx context.Context, loc string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tables[c.name]; ok {
		return fmt.Errorf("%w: %s exists", catalog.ErrCatalogConflict, c.name)
	}
	c.tables[c.name] = loc
	return nil
}

func (c *mapCatalog) Swap(ctx context.Context, prev, loc string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables[c.name] != prev {
		return fmt.Errorf("%w: %s moved", catalog.ErrCatalogConflict, c.name)
	}
	c.tables[c.name] = loc
	return nil
}

func (c *mapCatalog) String() string { return "map catalog, table " + c.name }

// A catalog of one's own: each publish of the table points the catalog's
// entry at the table's latest Iceberg version.
func Example_ownCatalog() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "pswap-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	t, err := pswap.Open(ctx, filepath.Join(dir, "sales"), pswap.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()

	mine := &mapCatalog{tables: map[string]string{}, name: "db.sales"}
	for _, day := range []string{"dt=2026-01-01", "dt=2026-01-02"} {
		if err := commitDay(ctx, t, day); err != nil {
			fmt.Println(err)
			return
		}
		if _, err := t.Publish(ctx, pswap.PublishOptions{Catalog: mine}); err != nil {
			fmt.Println("publish:", err)
			return
		}
		loc, err := mine.Current(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		_, rel, _ := strings.Cut(loc, "/sales/")
		fmt.Printf("%s names sales/%s\n", mine.name, rel)
	}
	// Output:
	// db.sales names sales/metadata/v1.metadata.json
	// db.sales names sales/metadata/v2.metadata.json
}

// commitDay commits one row to a partition of t.
func commitDay(ctx context.Context, t *pswap.Table, day string) error {
	p, err := t.Partition(day)
	if err != nil {
		return err
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		return err
	}
	if err := pswap.Write(w, sale{ID: 1, Amount: 2.5}); err != nil {
		return err
	}
	_, err = w.Commit(ctx)
	return err
}
