package pswap_test

import (
	"errors"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store/memstore"
)

// A table created with a zoned layout records its zone; later commits
// must map their intervals in the same zone (a UTC-mapped key names
// another day), and a UTC table refuses a zoned one. A key given directly
// (no Layout) is checked against the columns only.
func TestTableTimeZone(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		berlin := partition.Layout{Zone: "Europe/Berlin"}
		iv, err := berlin.ParseInterval("2026-03-29T00:00:00+01:00/2026-03-30T00:00:00+02:00")
		if err != nil {
			t.Fatal(err)
		}
		k, err := berlin.Key(iv)
		if err != nil || k.String() != "dt=2026-03-29" {
			t.Fatalf("key %q, %v", k, err)
		}
		rec := record(t, "id", []int64{1}, "amount", []float64{7.5})
		if _, err := commitRecord(t, tb, k.String(), rec, pswap.WriteOptions{Table: pswap.TableOptions{Layout: &berlin}}); err != nil {
			t.Fatal(err)
		}
		m, err := tablemeta.Load(ctx, tb.Store())
		if err != nil {
			t.Fatal(err)
		}
		if m.TimeZone != "Europe/Berlin" {
			t.Fatalf("table.json time zone %q", m.TimeZone)
		}
		s, err := tb.Schema(ctx)
		if err != nil || s.TimeLayout == nil || s.TimeLayout.Zone != "Europe/Berlin" {
			t.Fatalf("Schema().TimeLayout = %+v, %v", s.TimeLayout, err)
		}
		for _, other := range []partition.Layout{{}, {Zone: "America/New_York"}} {
			assertUnchanged(t, tb, pswap.ErrPartitionMismatch, "--time-zone Europe/Berlin", func() error {
				_, err := commitRecord(t, tb, "dt=2026-03-30", rec, pswap.WriteOptions{Table: pswap.TableOptions{Layout: &other}})
				return err
			})
		}
		// The same zone, and a key given directly, pass.
		if _, err := commitRecord(t, tb, "dt=2026-03-30", rec, pswap.WriteOptions{Table: pswap.TableOptions{Layout: &berlin}}); err != nil {
			t.Fatal(err)
		}
		if _, err := commitRecord(t, tb, "dt=2026-03-31", rec, pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTableTimeZoneOnUTCTable(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		rec := record(t, "id", []int64{1})
		utc := partition.Layout{}
		if _, err := commitRecord(t, tb, "dt=2026-12-06", rec, pswap.WriteOptions{Table: pswap.TableOptions{Layout: &utc}}); err != nil {
			t.Fatal(err)
		}
		berlin := partition.Layout{Zone: "Europe/Berlin"}
		assertUnchanged(t, tb, pswap.ErrPartitionMismatch, "the table has none", func() error {
			_, err := commitRecord(t, tb, "dt=2026-12-07", rec, pswap.WriteOptions{Table: pswap.TableOptions{Layout: &berlin}})
			return err
		})
		if m, err := tablemeta.Load(ctx, tb.Store()); err != nil || m.TimeZone != "" {
			t.Fatalf("a UTC table: %q, %v", m.TimeZone, err)
		}
	})
}

// An hourly table cannot be created in a zone with daylight saving time.
func TestTableTimeZoneHourlyDST(t *testing.T) {
	tb := pswap.NewTable(memstore.New())
	l := partition.Layout{Grain: partition.Hour, Zone: "Europe/Berlin"}
	_, err := commitRecord(t, tb, "dt=2026-12-06/hr=10", record(t, "id", []int64{1}), pswap.WriteOptions{Table: pswap.TableOptions{Layout: &l}})
	if err == nil {
		t.Fatal("an hourly table in Berlin was created")
	}
	if !errors.Is(err, partition.ErrInvalidLayout) {
		t.Fatalf("%v", err)
	}
}
