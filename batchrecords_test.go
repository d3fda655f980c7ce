package pswap_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// batchKeys lists the table's batch attempt records.
func batchKeys(t *testing.T, st store.Store) []string {
	t.Helper()
	var keys []string
	for a, err := range st.List(ctx, layout.BatchesPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

// TestAuditUnreadableBatchRecord: a backfill's batch record that cannot
// be read does not stop the audit, nor is it skipped in silence (it was):
// Audit returns every row, and an error matching ErrCorrupt and
// ErrCorruptBatchRecord that names the record; the rows of another
// backfill, whose record reads, keep its identity; PublishAudit publishes
// them all, counts the record and returns the same error.
func TestAuditUnreadableBatchRecord(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	id := pswap.Identity{Job: "sales_backfill", Task: "load"}
	opts := pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "first", Identity: id}}}
	if res, err := tb.CommitPartitioned(ctx, hiveFolder(t, 2, 0), opts); err != nil || res.Committed != 2 {
		t.Fatalf("the first backfill: %+v, %v", res, err)
	}
	good := batchKeys(t, mem)
	opts.Write.Commit.RunID = "second"
	if res, err := tb.CommitPartitioned(ctx, hiveFolder(t, 3, 100), opts); err != nil || res.Committed != 3 {
		t.Fatalf("the second backfill: %+v, %v", res, err)
	}
	var bad string
	for _, k := range batchKeys(t, mem) {
		if k != good[0] {
			bad = k
		}
	}
	if len(good) != 1 || bad == "" {
		t.Fatalf("batch records %v, then %v", good, batchKeys(t, mem))
	}
	if _, err := mem.Put(ctx, bad, []byte(`{"version":"1.0","id":`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	rows, err := tb.Audit(ctx, pswap.AuditOptions{})
	if !errors.Is(err, pswap.ErrCorrupt) || !errors.Is(err, pswap.ErrCorruptBatchRecord) || !strings.Contains(err.Error(), bad) ||
		!strings.HasPrefix(err.Error(), "corrupt") {
		t.Fatalf("the audit with an unreadable batch record: %v, want ErrCorruptBatchRecord naming %s", err, bad)
	}
	n := map[string]int{}
	for _, r := range rows {
		n[r.RunID]++
		if strings.HasPrefix(r.RunID, "first/") && r.Job != id.Job {
			t.Errorf("a row of the readable record without its identity: %+v", r)
		}
	}
	// Each commit's run id is its manifest's: only the unreadable
	// record's identity is lost.
	if len(rows) != 5 || n["first/dt=2026-09-01"] != 1 || n["second/dt=2026-09-03"] != 1 {
		t.Errorf("rows %+v, want every commit's", rows)
	}
	dst := pswap.NewTable(memstore.New())
	pub, err := tb.PublishAudit(ctx, dst, pswap.AuditPublishOptions{})
	if !errors.Is(err, pswap.ErrCorruptBatchRecord) || pub.Rows != 5 || pub.UnreadableRecords != 1 || pub.Corrupt != 0 {
		t.Errorf("PublishAudit: %+v, %v; want 5 rows published, 1 unreadable record and its error", pub, err)
	}
}
