package pswap_test

import (
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// A peer's maintenance that deletes the Iceberg metadata (delta-rs's full
// vacuum, Spark's VACUUM RETAIN 0 HOURS) leaves the pointers whole: the
// view's state says every partition lags until the next publish, which
// writes the metadata again.
func TestIcebergMetadataDeletedLags(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	for _, p := range []string{"dt=2026-11-01", "dt=2026-11-02"} {
		if _, err := commitRecord(t, tb, p, record(t, "id", []int64{1, 2}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.Publish(ctx, pswap.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for a, err := range mem.List(ctx, "metadata/") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	for _, k := range keys {
		if err := mem.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	states, err := tb.ViewStates(ctx, nil, pswap.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lagging := false
	for _, s := range states {
		if s.View == pswap.ViewIceberg {
			lagging = len(s.Behind) == 2
			t.Logf("iceberg after the metadata was deleted: version %d, behind %v, err %v", s.Version, s.Behind, s.Err)
		}
	}
	if !lagging {
		t.Fatalf("the Iceberg view does not say it lags: %+v", states)
	}
	if _, err := tb.Publish(ctx, pswap.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if parts, err := tb.Partitions(ctx, ""); err != nil || len(parts) != 2 {
		t.Fatalf("partitions: %v %v", parts, err)
	}
	states, err = tb.ViewStates(ctx, nil, pswap.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.View == pswap.ViewIceberg && (len(s.Behind) != 0 || s.Version < 1) {
			t.Fatalf("after the publish: %+v", s)
		}
	}
}
