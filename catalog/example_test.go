package catalog_test

import (
	"fmt"

	"github.com/pswap/pswap/catalog"
)

// A REST catalog's table, opened with a token given by the program (the
// zero Options read $PSWAP_CATALOG_TOKEN or $PSWAP_CATALOG_CREDENTIAL).
// Opening does no I/O: the first publish reaches the catalog, and String
// never shows the token.
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
