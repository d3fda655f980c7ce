package deltalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// wideSale is sale with a column more: a commit of it evolves the schema.
type wideSale struct {
	OrderID int64   `parquet:"order_id"`
	City    string  `parquet:"city"`
	Amount  float64 `parquet:"amount"`
	Region  string  `parquet:"region"`
}

// commitNoPublish commits rows to a partition without publishing anything;
// evolve lets them add columns.
func commitNoPublish[T any](t testing.TB, tbl *pswap.Table, part string, evolve bool, rows ...T) pswap.Result {
	t.Helper()
	ctx := context.Background()
	p, err := tbl.Partition(part)
	if err != nil {
		t.Error(err)
		return pswap.Result{}
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: evolve}})
	if err != nil {
		t.Error(err)
		return pswap.Result{}
	}
	if err := pswap.Write(w, rows...); err != nil {
		t.Error(err)
		return pswap.Result{}
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Error(err)
	}
	return res
}

// logColumns are the top-level column names of the log's current
// metaData schema.
func logColumns(t testing.TB, st store.Store) []string {
	t.Helper()
	s, err := deltalog.Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(s.Metadata.SchemaString), &sc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range sc.Fields {
		out = append(out, f.Name)
	}
	return out
}

// TestLostRaceKeepsEvolvedSchema: a publisher that read table.json before
// a rival's commit added a column, and loses the race for the log
// version to that rival's publish, must not write its older schema over
// the rival's metaData (issue 38, item 3). Its PUT is held until the
// rival's version is in.
func TestLostRaceKeepsEvolvedSchema(t *testing.T) {
	for _, mode := range []string{"commit", "reconcile"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			tbl := pswap.NewTable(st)
			commit(t, tbl, "dt=2026-11-01", "first", sale{1, "x", 1})
			plain := commitNoPublish(t, tbl, "dt=2026-11-02", false, sale{2, "y", 2})

			held, release := make(chan struct{}), make(chan struct{})
			slow := storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
				if c.Op == "put" && c.Key == deltalog.CommitKey(1) && c.N == 1 {
					close(held)
					<-release
				}
				return storetest.Fault{}
			})
			done := make(chan error, 1)
			go func() {
				var err error
				if mode == "commit" {
					_, err = deltalog.PublishCommit(ctx, slow, deltalog.Commit{Partition: "dt=2026-11-02", Generation: plain.Generation, Seq: plain.Seq}, deltalog.Options{})
				} else {
					_, err = deltalog.Publish(ctx, slow, deltalog.Options{})
				}
				done <- err
			}()
			<-held
			// The rival: a commit that adds a column, published first.
			p, _ := tbl.Partition("dt=2026-11-03")
			w, err := p.Begin(ctx, pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}})
			if err != nil {
				t.Fatal(err)
			}
			if err := pswap.Write(w, wideSale{3, "z", 3, "north"}); err != nil {
				t.Fatal(err)
			}
			res, err := w.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if pub := publishDelta(ctx, tbl.Store(), res, deltalog.Options{}); !pub.Published || pub.Version != 1 {
				t.Fatalf("the evolving publish: %+v", pub)
			}
			if cols := logColumns(t, st); !slices.Contains(cols, "region") {
				t.Fatalf("the evolving publish wrote columns %v", cols)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("the held publish: %v", err)
			}
			if cols := logColumns(t, st); !slices.Contains(cols, "region") {
				t.Fatalf("after the lost race the log's schema is %v: the column region was reverted", cols)
			}
			s, _ := current(t, st)
			if s.Version != 2 {
				t.Fatalf("version %d, want 2", s.Version)
			}
		})
	}
}

// TestRacingPublishersKeepEvolvedSchema races publishers of plain
// commits against one commit that adds a column, many times: the final
// log always has the column.
func TestRacingPublishersKeepEvolvedSchema(t *testing.T) {
	rounds, publishers := 12, 6
	if testing.Short() {
		rounds = 4
	}
	for round := range rounds {
		ctx := context.Background()
		st := memstore.New()
		tbl := pswap.NewTable(st)
		commit(t, tbl, "dt=2026-11-01", "first", sale{1, "x", 1})
		var plain []pswap.Result
		for i := range publishers {
			plain = append(plain, commitNoPublish(t, tbl, fmt.Sprintf("dt=2026-11-%02d", 10+i), false, sale{int64(i), "y", 2}))
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, r := range plain {
			wg.Go(func() {
				<-start
				var err error
				if i%2 == 0 {
					_, err = deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, deltalog.Options{})
				} else {
					_, err = deltalog.Publish(ctx, st, deltalog.Options{})
				}
				if err != nil {
					t.Errorf("round %d: publish %s: %v", round, r.Partition, err)
				}
			})
		}
		wg.Go(func() {
			<-start
			r := commitNoPublish(t, tbl, "dt=2026-11-30", true, wideSale{9, "z", 9, "north"})
			if _, err := deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, deltalog.Options{}); err != nil {
				t.Errorf("round %d: the evolving publish: %v", round, err)
			}
		})
		close(start)
		wg.Wait()
		if cols := logColumns(t, st); !slices.Contains(cols, "region") {
			t.Fatalf("round %d: the final log's schema is %v, without the evolved column region", round, cols)
		}
		if _, got := current(t, st); len(got) != publishers+2 {
			t.Fatalf("round %d: %d partitions in the log, want %d", round, len(got), publishers+2)
		}
	}
}

// TestOlderTableJSONKeepsLogSchema: a table.json that lacks a column of
// the log's schema even when read again (restored from a backup, say)
// never takes the column away from the log: the publish keeps the log's
// metaData and publishes its files.
func TestOlderTableJSONKeepsLogSchema(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	commit(t, tbl, "dt=2026-11-01", "first", sale{1, "x", 1})
	old, _, err := store.ReadAll(ctx, st, "_pswap/table.json")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := tbl.Partition("dt=2026-11-02")
	w, err := p.Begin(ctx, pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, wideSale{2, "y", 2, "south"}); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pub := publishDelta(ctx, tbl.Store(), res, deltalog.Options{}); !pub.Published {
		t.Fatalf("the evolving publish: %+v", pub)
	}
	// table.json goes back to the schema without the column.
	if _, err := st.Put(ctx, "_pswap/table.json", old, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r := commitNoPublish(t, tbl, "dt=2026-11-03", false, sale{3, "z", 3})
	dres, err := deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, deltalog.Options{})
	if err != nil || !dres.Changed {
		t.Fatalf("publish: %+v %v", dres, err)
	}
	if cols := logColumns(t, st); !slices.Contains(cols, "region") {
		t.Fatalf("the log's schema is %v: an older table.json took the column region away", cols)
	}
	if _, got := current(t, st); len(got) != 3 {
		t.Fatalf("%d partitions in the log, want 3", len(got))
	}
}
