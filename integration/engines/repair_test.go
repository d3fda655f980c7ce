package engines

import (
	"context"
	"encoding/json"
	"path"
	"path/filepath"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
)

// TestRepairedMetadataReads: the latest metadata version truncated (as a
// crashed copy or a hand edit leaves it): every engine fails on it; pswap
// publish repairs it (a new version from the pointers and the version
// before), and every engine reads the table exactly again.
func TestRepairedMetadataReads(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28"} {
			tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
			tb.record("commit " + d)
		}
		truncateLatest(t, tb)
		var pub struct {
			Repairs []string `json:"repairs"`
		}
		if err := json.Unmarshal([]byte(tb.run("publish", "--json")), &pub); err != nil || len(pub.Repairs) != 1 {
			t.Fatalf("pswap publish over a truncated version: %+v, %v; want one repair", pub, err)
		}
		tb.snaps = tb.snaps[:1] // the truncated version's snapshot is gone from the history
		tb.record("repaired")
		tb.checkEngines("dt")
	})
}

// truncateLatest cuts the table's latest metadata version in half.
func truncateLatest(t *testing.T, tb *table) {
	t.Helper()
	cur := tb.snaps[len(tb.snaps)-1]
	st, err := pswap.OpenStore(context.Background(), tb.url, pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := "metadata/" + path.Base(cur.metadata)
	data, _, err := store.ReadAll(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), key, data[:len(data)/2], store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}
