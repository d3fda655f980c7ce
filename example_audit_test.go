package pswap_test

import (
	"context"
	"fmt"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// The audit of a table: a day loaded, then backfilled; Table.Audit tells
// both commits (the backfill current, the first load superseded by it),
// from the store alone. PublishAudit would write the same rows into an
// Iceberg table of their own (AuditTableURL names the usual place).
func ExampleTable_Audit() {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	table := pswap.NewTable(memstore.New(memstore.Options{Now: func() time.Time { return now }}))
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		panic(err)
	}
	for _, run := range []string{"daily/2026-11-29", "backfill/2026-11-29"} {
		w, err := day.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run}})
		if err != nil {
			panic(err)
		}
		if err := pswap.Write(w, Sale{1, "Lisbon", 10}, Sale{2, "Porto", float64(len(run))}); err != nil {
			panic(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			panic(err)
		}
		now = now.Add(time.Hour)
	}
	rows, err := table.Audit(ctx, pswap.AuditOptions{})
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Println(r.Partition, r.Kind, r.State, r.RunID, *r.Rows, r.CommittedAt.Format(time.DateTime))
	}
	audit, _ := pswap.AuditTableURL("s3://lake/sales")
	fmt.Println(audit)
	// Output:
	// dt=2026-11-29 commit current backfill/2026-11-29 2 2026-11-29 07:00:00
	// dt=2026-11-29 commit superseded daily/2026-11-29 2 2026-11-29 06:00:00
	// s3://lake/sales__audit
}
