package lakehouse_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pswap/pswap/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// One 503 on any read of a publish (the version hint, the metadata, the
// manifest list, the pointer, the manifest), each position in turn, is
// retried: the publish lands, and readers see the commit. A store that
// keeps failing still fails the publish, with the store's error.
func TestPublishRetriesTransientReads(t *testing.T) {
	nosleep := func(context.Context, time.Duration) error { return nil }
	positions := 0
	for k := 1; ; k++ {
		mem := memstore.New()
		first := commit(t, mem, "dt=2026-11-28", 10, "a", swap.Options{})
		publish(t, mem, first)
		res := commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{})
		var gets int
		var failed string
		flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" || c.Op == "get-range" || c.Op == "stat" {
				gets++
				if gets == k {
					failed = c.Key
					return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
				}
			}
			return storetest.Fault{}
		})
		r, err := lakehouse.PublishCommit(ctx, flaky, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
			lakehouse.Options{Sleep: nosleep})
		if failed == "" {
			break // fewer than k reads: every position was tried
		}
		positions++
		if err != nil || !r.Changed {
			t.Fatalf("publish after one 503 on read %d (%s): %+v %v", k, failed, r, err)
		}
		if got, _ := icebergRows(t, mem, r.MetadataLocation); got["dt=2026-11-29"] != 20 || got["dt=2026-11-28"] != 10 {
			t.Fatalf("503 on read %d (%s): readers see %v", k, failed, got)
		}
	}
	if positions < 4 {
		t.Fatalf("only %d reads in a publish; want the hint, metadata, manifest list, pointer and manifest", positions)
	}
	t.Logf("a 503 at each of %d read positions was retried", positions)
	t.Run("down", func(t *testing.T) {
		mem := memstore.New()
		res := commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{})
		down := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" || c.Op == "get-range" || c.Op == "stat" || c.Op == "list" {
				return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
			}
			return storetest.Fault{}
		})
		_, err := lakehouse.PublishCommit(ctx, down, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
			lakehouse.Options{Sleep: nosleep})
		if !errors.Is(err, store.ErrTransient) {
			t.Fatalf("publish against a store that stays down: %v", err)
		}
	})
}
