package lakehouse_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

const rtt = 20 * time.Millisecond

// nextCommit commits a new generation of dt=2026-01-01 on a published
// table and returns what its publish is given.
func nextCommit(t *testing.T, mem store.Store) lakehouse.Commit {
	t.Helper()
	res := commit(t, mem, "dt=2026-01-01", 9, "y", swap.Options{OnConflict: swap.Overwrite})
	m, err := swap.ReadManifest(ctx, mem, res.Partition, res.Generation)
	if err != nil {
		t.Fatal(err)
	}
	return lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: m}
}

// rttRun is one publish through a Latency store, on the table mem.
type rttRun struct {
	mem store.Store
	lat *storetest.Latency
	r   lakehouse.Result
}

// shows reports whether the publish made n requests, seq one after another.
func (x rttRun) shows(n, seq int) bool {
	return len(x.lat.Spans()) == n && x.lat.Sequential() == seq
}

// A publish reads the pointer and the manifest it replaces (to record that
// manifest's files as deleted) at once (the new file's column statistics
// are in its manifest: no footer), writes the partition's manifest and the
// manifest list at once, then the version, then the hint: 9 requests, 7 one
// after another.
// (The first of three attempts that shows it: storetest.FirstShown.)
func TestPublishWritesAtOnce(t *testing.T) {
	got := storetest.FirstShown(func() rttRun {
		mem := publishedTable(t, 3)
		c := nextCommit(t, mem)
		lat := storetest.NewLatency(mem, rtt)
		r, err := lakehouse.PublishCommit(ctx, lat, c, lakehouse.Options{WaitForView: true})
		if err != nil || !r.Changed {
			t.Fatalf("publish: %+v %v", r, err)
		}
		return rttRun{mem, lat, r}
	}, func(x rttRun) bool { return x.shows(9, 7) })
	mem, lat, r := got.mem, got.lat, got.r
	if n, seq := len(lat.Spans()), lat.Sequential(); n != 9 || seq != 7 {
		t.Fatalf("%d requests, %d one after another; want 9, 7:\n%s", n, seq, lat.Timeline())
	}
	// The version follows both writes, the hint follows the version.
	var manifestEnd, listEnd, version, hint storetest.Span
	for _, s := range lat.Spans() {
		switch {
		case strings.HasPrefix(s.Key, lakehouse.MetadataPrefix+"pswap-"):
			manifestEnd = s
		case strings.HasPrefix(s.Key, lakehouse.MetadataPrefix+"snap-") && s.Op != "get":
			listEnd = s
		case s.Key == lakehouse.MetadataKey(r.Version):
			version = s
		case s.Key == lakehouse.VersionHintKey && s.Op != "get":
			hint = s
		}
	}
	if version.Start < manifestEnd.End || version.Start < listEnd.End || hint.Start < version.End {
		t.Fatalf("writes out of order:\n%s", lat.Timeline())
	}
	checkReaders(t, mem)
}
