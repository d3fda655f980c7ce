package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// What ls and status cost on a table of 1,000 daily partitions x 3
// generations x 10 files (34,000 objects; a full listing is 34 pages):
// ls lists the partitions' folders (one page per 1,000) and reads each
// pointer; status reads one pointer per day of its range and lists nothing.
func TestReadCommandRequestCounts(t *testing.T) {
	n, gens, files := 1000, 3, 10
	if testing.Short() {
		n = 100
	}
	ctx := context.Background()
	mem := memstore.New()
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		part := "dt=" + day0.AddDate(0, 0, i).Format(time.DateOnly)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for g := range gens {
				txn, err := swap.Begin(ctx, mem, part, swap.Options{})
				if err == nil {
					_, err = txn.Commit(ctx, swaptest.Stage(t, mem, txn.DataPrefix(), files, fmt.Sprint(part, g)))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	cs := storetest.NewCounting(mem)
	cli := func(args ...string) string {
		t.Helper()
		cs.Reset()
		var out, errb bytes.Buffer
		a := &app{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			getenv:    func(string) string { return "" },
			wrapStore: func(store.Store) store.Store { return cs }}
		if code := run(a, append([]string{"--table", "file://" + t.TempDir(), "--json"}, args...)); code != 0 {
			t.Fatalf("pswap %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}

	var ls lsJSON
	if err := json.Unmarshal([]byte(cli("ls")), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Partitions) != n || ls.Partitions[n-1].Seq != int64(gens) {
		t.Fatalf("ls listed %d partitions (want %d)", len(ls.Partitions), n)
	}
	// A GET of table.json (swap.TableListOptions; absent here, a table
	// written before pswap kept one), the pointers' listing pages, plus
	// one of the root that looks for partitions of the legacy layout,
	// which such a table may hold.
	pages := (n+999)/1000 + 1
	if c := cs.Counts(); c["list"] != pages || c["get"] != n+1 || cs.Total() != n+1+pages {
		t.Fatalf("ls: requests %v, want %d GETs and %d listing page(s)", c, n+1, pages)
	}
	t.Logf("ls of %d partitions: %d requests %v", n, cs.Total(), cs.Counts())
	// With the table.json of a table created in the table-level layout,
	// as pswap writes it: the GET of table.json replaces the listing of
	// the root (no legacy partition can be there), so ls costs what it
	// did before it read table.json.
	doc := &tablemeta.Table{Layout: tablemeta.LayoutTable, Version: tablemeta.VersionLayout, LastColumnID: 2,
		PartitionColumns: []tablemeta.PartitionColumn{{ID: 2, Name: "dt", Type: tablemeta.Type{Kind: tablemeta.String}}},
		Schema:           tablemeta.Schema{Fields: []tablemeta.Field{{ID: 1, Name: "id", Type: tablemeta.Type{Kind: tablemeta.Long}, Nullable: true}}}}
	if _, _, _, err := tablemeta.Create(ctx, mem, doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cli("ls")), &ls); err != nil || len(ls.Partitions) != n {
		t.Fatalf("ls with table.json: %d partitions, %v", len(ls.Partitions), err)
	}
	if c := cs.Counts(); c["list"] != pages-1 || c["get"] != n+1 || cs.Total() != n+pages {
		t.Fatalf("ls with table.json: requests %v, want %d GETs and %d listing page(s)", c, n+1, pages-1)
	}
	if err := mem.Delete(ctx, tablemeta.Key); err != nil {
		t.Fatal(err)
	}

	from := day0.AddDate(0, 0, n/2)
	var st statusJSON
	if err := json.Unmarshal([]byte(cli("status", "--from", from.Format(time.DateOnly), "--to", from.AddDate(0, 0, 31).Format(time.DateOnly))), &st); err != nil {
		t.Fatal(err)
	}
	if st.Expected != 31 || st.Present != 31 {
		t.Fatalf("status: %d of %d present, want 31 of 31", st.Present, st.Expected)
	}
	// One GET per partition's pointer, and one of table.json (the
	// table's layout); then the views' state, a few requests whatever the
	// range (table.json, and for each view its latest version: here a
	// table without views recorded nor published, so the look for a Delta
	// log and the Iceberg version hint's listing and probe).
	if c := cs.Counts(); c["get"] < 32 || cs.Total() > 32+6 {
		t.Fatalf("status over 31 days: requests %v, want 32 GETs and at most 6 requests for the views", c)
	}
	t.Logf("status over 31 days: %d requests %v", cs.Total(), cs.Counts())
}
