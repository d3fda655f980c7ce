package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/swap"
)

// FoldScenario derives, from a seed, a burst of writers of distinct
// partitions (some partitions written twice, so that a folded marker's
// pointer has moved on), each followed by its publisher, all at about the
// same step: the leasing publisher (lakehouse, lease.go) as an actor,
// half of them with --lease-first (their marker, then the lease). The
// publisher that holds the publish lease publishes its commit and folds
// the commits announced to it; the others find the lease live, announce
// their commit and return pending; killed publishers leave markers, and
// killed holders the lease, behind. GC, readers and Iceberg readers run
// beside them, with faults and kills. Besides I1-I6, every publication
// reported must be in the latest version, and every one that returned
// pending in the latest version once every actor is done, or still
// announced (its marker, or a killed holder's lease) for the next publish
// (I6-ice).
func FoldScenario(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 0xf01d))
	c := Config{
		Seed:      seed,
		Focus:     "fold",
		FaultRate: 0.02 + 0.08*r.Float64(),
		KillRate:  0.02 * r.Float64(),
		MaxSteps:  6000,
		PageSize:  []int{2, 3, 1000}[r.IntN(3)],
		StepTime:  100 * time.Millisecond, // a burst of actors: many requests per second

		MaxDelay:     3 * time.Second,
		GracePeriod:  6 * time.Second,
		MaxElapsed:   3 * time.Second,
		CommitWindow: 5 * time.Second,
		StallTimeout: 30 * time.Second,
		StrictRunIDs: true,
	}
	c.GC = gc.Options{Keep: []int{-1, 1, 2}[r.IntN(3)], MinAge: 7 * time.Second, OrphanAge: c.GracePeriod,
		CommitWindow: c.CommitWindow, Concurrency: 1, MaxAttempts: 4}
	c.MetadataMinAge = time.Duration(15+r.IntN(20)) * time.Second
	// 3-8 days, sometimes across a month's end: one group manifest, or two.
	first := time.Date(2026, 11, 25+r.IntN(3), 0, 0, 0, 0, time.UTC)
	if r.IntN(3) == 0 {
		first = time.Date(2026, 10, 29, 0, 0, 0, 0, time.UTC)
	}
	n := 3 + r.IntN(6)
	// A third of the seeds (drawn apart, so that the others stay as they
	// were) spread the days over several months instead: a publish that
	// starts a month merges the older months into the cold manifest
	// (lakehouse, cold.go), and a second commit of an old day rewrites it.
	if spread := rand.New(rand.NewPCG(seed, 0xc01d)); spread.IntN(3) == 0 {
		day := time.Date(2026, time.Month(6+spread.IntN(3)), 1+spread.IntN(28), 0, 0, 0, 0, time.UTC)
		for range n {
			c.Partitions = append(c.Partitions, "dt="+day.Format("2006-01-02"))
			day = day.AddDate(0, 0, 10+spread.IntN(30))
		}
	} else {
		for i := range n {
			c.Partitions = append(c.Partitions, "dt="+first.AddDate(0, 0, i).Format("2006-01-02"))
		}
	}
	window := 2 + r.IntN(10) // the burst: every writer starts within these steps
	c.Publish, c.PrefetchPublish = map[int]bool{}, map[int]bool{}
	id := 0
	add := func(part string, start int, run string, content int) {
		id++
		c.Writers = append(c.Writers, WriterSpec{
			ActorSpec: ActorSpec{Partition: part, Start: start},
			// Mostly swap.Txn writers, whose publishers report how
			// they folded; a facade writer's publishes through pswap.
			RunID: run, Policy: swap.Policy(r.IntN(2)), Facade: r.IntN(4) == 0,
			Content: content, Files: 1 + r.IntN(2),
		})
		c.Publish[id] = r.IntN(8) != 0
		c.PrefetchPublish[id] = c.Publish[id] && r.IntN(3) == 0
	}
	for i, part := range c.Partitions {
		add(part, r.IntN(window), fmt.Sprintf("run-%d", i+1), i)
	}
	for range r.IntN(3) {
		// A second commit of a partition, while the burst's publishers run.
		i := r.IntN(len(c.Partitions))
		add(c.Partitions[i], window+r.IntN(30), fmt.Sprintf("run-%d-again", i+1), 10+i)
	}
	c.GCs = append(c.GCs, GCSpec{Start: r.IntN(60), Rounds: 2 + r.IntN(4), Pause: 10 + r.IntN(30)})
	for range 1 + r.IntN(2) {
		c.Readers = append(c.Readers, ReaderSpec{ActorSpec: ActorSpec{Partition: c.Partitions[r.IntN(len(c.Partitions))], Start: r.IntN(100)}, Reads: 2 + r.IntN(3)})
	}
	for range 1 + r.IntN(2) {
		c.IceReaders = append(c.IceReaders, ReaderSpec{ActorSpec: ActorSpec{Start: 20 + r.IntN(150)}, Reads: 1 + r.IntN(3)})
	}
	// Half the publishers (drawn apart, so that the others stay as they
	// were) expect the burst: `--lease-first`.
	lf := rand.New(rand.NewPCG(seed, 0x1eaf))
	c.LeaseFirstPublish = map[int]bool{}
	for i := 1; i <= id; i++ {
		c.LeaseFirstPublish[i] = c.Publish[i] && lf.IntN(2) == 0
	}
	c.lossFaults(seed, id)
	return c
}

// foldNote is what a publisher's outcome says of folding: carried by
// another's version, or carrying others in its own.
func foldNote(r lakehouse.Result) string {
	switch {
	case r.Folded:
		return ", folded into another's version"
	case r.FoldedOthers > 0:
		return fmt.Sprintf(", folded %d others", r.FoldedOthers)
	}
	return ""
}
