package lakehouse_test

import (
	"slices"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// The expiry keeps every version that a reader finding the latest one
// steps through: from the version the hint names, or from v1 when there is
// no hint, up to the latest, until the hint names the latest. Found by the
// simulation (seed 29978312357481): two publishes too slow to write the
// hint, an expiry whose hint PUT got a 503, and a sweep that deleted v1;
// every reader then probed v1, found nothing, and the next publish wrote a
// new v1 that no reader saw.
func TestExpireKeepsTheProbeChain(t *testing.T) {
	for _, hinted := range []bool{false, true} {
		mem := memstore.New(memstore.Options{})
		part := "dt=2026-11-01"
		if hinted {
			publish(t, mem, commit(t, mem, part, 3, "z", swap.Options{})) // v1, the hint at 1
		}
		for i, seed := range []string{"a", "b"} {
			res := commit(t, mem, part, 4+i, seed, swap.Options{OnConflict: swap.Overwrite})
			if _, err := lakehouse.PublishCommit(ctx, failHint{mem}, lakehouse.Commit{Partition: part, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		later := func() time.Time { return time.Now().Add(time.Hour) }
		r, err := lakehouse.Expire(ctx, failHint{mem}, lakehouse.ExpireOptions{Retention: time.Millisecond, MinAge: time.Millisecond, Now: later})
		if err != nil {
			t.Fatalf("expire: %+v %v", r, err)
		}
		_, latest, err := lakehouse.Latest(ctx, mem)
		if err != nil || latest < 2 || latest < r.Version {
			t.Fatalf("hint at 1: %v: the latest version %d %v after the expiry wrote %d and deleted %v", hinted, latest, err, r.Version, r.Deleted)
		}
		for v := 1; v <= latest; v++ {
			if slices.Contains(r.Deleted, lakehouse.MetadataKey(v)) {
				t.Fatalf("hint at 1: %v; with the hint not at the latest version %d, the expiry deleted version %d: %v", hinted, latest, v, r.Deleted)
			}
		}
		res := commit(t, mem, part, 9, "c", swap.Options{OnConflict: swap.Overwrite})
		if p := publish(t, mem, res); p.Version != latest+1 {
			t.Fatalf("the next publish wrote version %d, want %d", p.Version, latest+1)
		}
		if got := checkReaders(t, mem); got[part] != 9 {
			t.Fatalf("rows %v", got)
		}
	}
}
