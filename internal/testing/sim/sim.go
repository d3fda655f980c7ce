package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/swap"
)

// Plant selects a deliberately planted protocol bug, to prove that the
// checks catch it. It exists only inside this package.
type Plant int

const (
	// PlantNone runs pswap as it is.
	PlantNone Plant = iota
	// PlantGCSkipReread makes GC's re-reads of the pointer (before each batch
	// of deletions) answer with the pointer as GC first read it in that
	// collection: GC behaves as if it skipped the re-read.
	PlantGCSkipReread
	// PlantRollbackSkipReread makes a rollback's second read of its target's
	// manifest (after writing its own) answer with the first read: the
	// rollback behaves as if it skipped the re-read that fences it from GC.
	PlantRollbackSkipReread
	// PlantGCSkipRelist makes GC's second listing of a partition's manifests
	// (before it deletes data) answer with what existed at its first
	// listing: GC behaves as if it skipped the re-list that spares the data
	// of a rollback in flight.
	PlantGCSkipRelist
	// PlantWriterSkipGrace makes a writer's clock reads answer with the time
	// it began: its grace-period check always passes, so a slow writer may
	// commit a generation GC already collected as an orphan.
	PlantWriterSkipGrace
	// PlantGCIgnoresIceberg makes GC's reads of the Iceberg metadata when it
	// asks what the snapshots name (gc.Options.Protect, before it plans)
	// answer as if the table had none: GC behaves as if Protect were empty.
	PlantGCIgnoresIceberg
	// PlantPublisherSkipSeqCheck makes the publishers that follow commits
	// claim a sequence number above the one the latest metadata has for
	// the partition: the check that keeps a slow publisher from bringing
	// back older data always passes. They claim to have swapped just
	// now (lakehouse.Commit.SwappedAt), so they read no pointer: the
	// comparison with the version's base is the one left, and it is
	// defeated.
	PlantPublisherSkipSeqCheck
	// PlantPublisherProbesFromV1 makes the publishers' listings of the
	// metadata versions (a publish without a hint, or with one naming a
	// missing version) answer as if there were none: the publish probes
	// from v1, as before issue 25, and after the expiry deleted v1 it
	// starts the history again at v1.
	PlantPublisherProbesFromV1
	// PlantReconcileKeepsMissingManifest makes a reconcile's listing of the
	// manifests, and its reads of a group's manifest, answer with the
	// manifests operators deleted still there: it finds none damaged and
	// carries a lost manifest on.
	PlantReconcileKeepsMissingManifest
)

func (p Plant) String() string {
	switch p {
	case PlantGCSkipReread:
		return "gc-skips-pointer-reread"
	case PlantRollbackSkipReread:
		return "rollback-skips-target-reread"
	case PlantGCSkipRelist:
		return "gc-skips-manifest-relist"
	case PlantWriterSkipGrace:
		return "writer-skips-grace-check"
	case PlantGCIgnoresIceberg:
		return "gc-ignores-iceberg"
	case PlantPublisherSkipSeqCheck:
		return "publisher-skips-seq-check"
	case PlantPublisherProbesFromV1:
		return "publisher-probes-from-v1"
	case PlantReconcileKeepsMissingManifest:
		return "reconcile-keeps-missing-manifest"
	}
	return "none"
}

// Config is one simulated run. Scenario derives one from a seed; tests may
// adjust it before Run.
type Config struct {
	Seed       uint64
	Partitions []string
	Writers    []WriterSpec
	Rollbacks  []ActorSpec
	GCs        []GCSpec
	Readers    []ReaderSpec
	// Mergers run pswap.Table.Merge into one partition each (merge.go).
	Mergers []MergeSpec
	// Appenders run pswap.Partition.Append into one partition each
	// (append.go).
	Appenders []AppendSpec
	// PublishAppends: the appends of these appenders (1-based) are
	// followed by a publisher of the Iceberg metadata (the facade's
	// Writer.Publish, as `pswap commit --append --publish`).
	PublishAppends map[int]bool
	// Publish: the commits and rollbacks of these actors (1-based, in the
	// order writers (a staged writer's committers right after it),
	// rollbacks) are followed by a publisher of the Iceberg metadata
	// (`pswap commit --publish`).
	Publish map[int]bool
	// PrefetchPublish: the publishers of these (same numbering) start the
	// reads of their publish (lakehouse.StartPrefetch) as soon as they
	// start, before a slow publisher's wait, as `pswap rollback` does
	// before its rollback, and publish from them (lakehouse.Options.Prefetch).
	PrefetchPublish map[int]bool
	// LeaseFirstPublish: the publishers of these (same numbering) take
	// the publish lease's path before their first attempt
	// (lakehouse.Options.LeaseFirst, `pswap commit --lease-first`): their
	// marker, then the lease.
	LeaseFirstPublish map[int]bool
	// StallPublish: the publishers of these (same numbering) stall, once,
	// right before the PUT of their manifest list (after their attempt
	// read the pointers, before its version PUT): 10-50 steps of the
	// others, and 2-6 s of the store's clock. lakehouse's MaxElapsed must
	// throw the attempt away (or the version PUT expires, CommitWindow), or
	// its version would name a generation GC may have collected.
	StallPublish map[int]bool
	// Reconcilers run `pswap publish` (lakehouse.Publish) Rounds times.
	Reconcilers []GCSpec
	// IceReaders read the latest Iceberg snapshot's files.
	IceReaders []ReaderSpec
	// LoseHint: operators delete version-hint.text (once each, from step
	// Start); LoseManifest: operators delete one manifest the current
	// version names. Each with a Pause runs `pswap publish` that many
	// steps after (the repair; faults.go).
	LoseHint, LoseManifest []LossSpec
	// MetadataMinAge is the expiry's lakehouse.ExpireOptions.MinAge: GC
	// (a whole-table run) deletes no Iceberg metadata object younger.
	MetadataMinAge time.Duration

	// FaultRate is the probability that a request gets a fault; KillRate
	// the probability that an actor is killed instead of sending it.
	FaultRate, KillRate float64
	// MaxSteps bounds the run (a run that does not end is a failure).
	MaxSteps int
	// Generations makes the store's version tokens GCS generation numbers
	// instead of S3 ETags: a new one for every write and copy, even of the
	// same bytes (an S3 ETag is the content's MD5, which repeats).
	Generations bool
	// PageSize is the number of keys per LIST page.
	PageSize int
	// StepTime is the most the store's clock advances per request; MaxDelay
	// the most a delay fault moves it.
	StepTime, MaxDelay time.Duration
	// GracePeriod and MaxElapsed are the writers' (swap.Options), in
	// simulated time.
	GracePeriod, MaxElapsed time.Duration
	// CommitWindow models what the writers' MaxElapsed bound (on their own
	// clock, here the simulated one) and request timeouts and expiry
	// guarantee on a real store: a writer's or a rollback's request on a
	// pointer or a manifest that arrives more than CommitWindow after its
	// latest read of the store's clock is refused (a transient error, not
	// applied): a request in flight too long. GC's CommitWindow is the same
	// value.
	CommitWindow time.Duration
	// GC is the collectors' options (Concurrency 1; ages in simulated time).
	GC gc.Options
	// LegacyGens: every partition starts with this many generations
	// committed in the legacy layout (package layout), as a pswap of that
	// layout wrote them, so that the writers, GC and the Migrators move
	// them (swap.Migrate) while the others run.
	LegacyGens int
	// Migrators run swap.Migrate on a partition (the first writer of the
	// new layout does the same before its swap).
	Migrators []ActorSpec
	// StrictRunIDs: a run id commits at most once per partition across the
	// whole history (issue 12). Without it, only while it is current.
	StrictRunIDs bool
	// StallTimeout is how long (wall clock) an actor may run between two
	// requests before the run is declared stuck.
	StallTimeout time.Duration
	// Focus names the race a scenario concentrates on ("" for none).
	Focus string
	// Plant is the planted bug, if any.
	Plant Plant
	// Views are actors that turn the table's Delta view on and off
	// (pswap.Table.SetViews: views.go). Scenario leaves it empty, so that
	// its seeds run as they did; WithViews adds one.
	Views []ViewsSpec
	// Disabled actors (1-based, in the order writers, rollbacks, collectors,
	// readers) never start; Suppressed faults (by their 0-based ordinal among
	// the run's fault decisions) are not injected. Shrink sets them.
	Disabled, Suppressed map[int]bool

	wallClock bool // NewStore: no scheduler, wall-clock timestamps
}

// WriterSpec is one committing writer.
type WriterSpec struct {
	ActorSpec
	RunID   string
	Policy  swap.Policy
	Facade  bool // through pswap.Writer and Parquet staging; else swap.Txn with raw files
	Content int  // equal values stage equal content
	Files   int
	// Staged: the writer stages (Writer.Stage, Txn.Stage) and Committers
	// other actors commit it (swap.CommitStaged): the first and the second
	// at once when staging ends, the third (if any) when the first ends.
	Staged     bool
	Committers int
	Pause      int           // steps of the others between two of its files (a slow task)
	Sleep      time.Duration // and the time that passes meanwhile
	// Prefetch: a facade writer reads the Iceberg metadata for the
	// publish that follows its commit at Begin, and again at Commit if
	// what it read is old (pswap.WriteOptions.Prefetch).
	Prefetch bool
	// Evolve: a facade writer whose rows have a column the table lacks
	// (EvolvedRow), with pswap.TableOptions.EvolveSchema: its commit
	// evolves table.json (views.go).
	Evolve bool
}

// ActorSpec says where and when an actor runs.
type ActorSpec struct {
	Partition string
	Start     int // first step at which it may start
	After     int // 1-based index of the writer it retries (starts once that one is done); 0: none
	// Looks (rollbacks only) is how many more times a rollback that
	// finds no generation still there to roll back to (or no history
	// yet) looks again, 5 to 24 steps later; 0: it gives up at once.
	Looks int
	// WithGC (rollbacks only): from Start, it looks (and rolls back)
	// only as a GC collection begins (one rollback per collection; at
	// most 100 steps' wait, none once every GC actor is done), and with
	// Looks left it passes over an oldest generation that GC may not
	// collect yet: its rollback then races the collection that may
	// delete its target (GC's second listing of the manifests against
	// the rollback's second read of its target, gc/doc.go).
	WithGC bool
}

// GCSpec is one garbage collector: Rounds collections, Pause steps apart.
type GCSpec struct {
	Start, Rounds, Pause int
}

// ReaderSpec is one reader: Reads resolutions of its partition, each
// reading every file.
type ReaderSpec struct {
	ActorSpec
	Reads int
	Pause int           // steps of the others between two files (a slow reader)
	Sleep time.Duration // and the time that passes meanwhile
}

// Scenario derives a run from a seed: 1-2 partitions; 4-8 writers over 2-4
// run ids (both conflict policies, both write paths, some slow, some
// retrying a predecessor of the same run once it ends); 0-3 rollbacks that
// start later, when there is history to go back to; 1-2 collectors that
// run several rounds; 1-3 readers, some slow; faults on 5-30% of the
// requests and kills on up to 3%.
func Scenario(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	c := Config{
		Seed:         seed,
		FaultRate:    0.05 + 0.25*r.Float64(),
		KillRate:     0.03 * r.Float64(),
		MaxSteps:     4000,
		PageSize:     []int{2, 3, 5, 1000}[r.IntN(4)],
		StepTime:     400 * time.Millisecond,
		MaxDelay:     3 * time.Second,
		GracePeriod:  6 * time.Second,
		MaxElapsed:   3 * time.Second,
		CommitWindow: 5 * time.Second,
		StallTimeout: 30 * time.Second,
		StrictRunIDs: true,
	}
	c.GC = gc.Options{
		Keep:         []int{-1, -1, 1, 2}[r.IntN(4)],
		MinAge:       7 * time.Second,
		OrphanAge:    c.GracePeriod,
		CommitWindow: c.CommitWindow,
		Concurrency:  1,
		MaxAttempts:  4,
	}
	c.Partitions = []string{"dt=2026-11-29"}
	if r.IntN(4) == 0 {
		// Half of these (drawn apart, so that the seeds' other draws stay
		// as they were) take a day of an earlier month: its publishes
		// merge the older month into the cold manifest (lakehouse,
		// cold.go), or rewrite it, under the faults.
		second := "dt=2026-11-30"
		if rand.New(rand.NewPCG(seed, 0xc01d)).IntN(2) == 0 {
			second = "dt=2026-09-30"
		}
		c.Partitions = append(c.Partitions, second)
	}
	part := func() string { return c.Partitions[r.IntN(len(c.Partitions))] }
	runs := 2 + r.IntN(3)
	nw := 4 + r.IntN(5)
	for i := range nw {
		run := r.IntN(runs)
		ws := WriterSpec{
			ActorSpec: ActorSpec{Partition: part(), Start: r.IntN(120)},
			RunID:     fmt.Sprintf("run-%d", run+1),
			Policy:    swap.Policy(r.IntN(2)),
			Facade:    r.IntN(2) == 0,
			Content:   run,
			Files:     1 + r.IntN(3),
		}
		if r.IntN(3) == 0 {
			ws.Pause = 10 + r.IntN(40) // a slow task: steps between its files
			ws.Sleep = time.Duration(1+r.IntN(12)) * time.Second
		}
		if r.IntN(8) == 0 {
			ws.Content = 0 // another run with the same rows: identical content
		}
		if r.IntN(4) == 0 {
			ws.Staged, ws.Committers = true, 1+r.IntN(3)
		}
		// A retry of an earlier attempt of the same run, started when that
		// one ends (killed, failed, or done): an orchestrator's retry.
		for j := i - 1; j >= 0 && r.IntN(3) == 0; j-- {
			if c.Writers[j].RunID == ws.RunID && c.Writers[j].Partition == ws.Partition {
				ws.After, ws.Start = j+1, 0
				ws.Facade, ws.Files, ws.Content = c.Writers[j].Facade, c.Writers[j].Files, c.Writers[j].Content
				ws.Staged, ws.Committers = false, 0
				break
			}
		}
		c.Writers = append(c.Writers, ws)
	}
	for range r.IntN(4) {
		c.Rollbacks = append(c.Rollbacks, ActorSpec{Partition: part(), Start: 40 + r.IntN(200)})
	}
	for range 1 + r.IntN(2) {
		c.GCs = append(c.GCs, GCSpec{Start: r.IntN(60), Rounds: 3 + r.IntN(6), Pause: 5 + r.IntN(20)})
	}
	for range 1 + r.IntN(3) {
		rs := ReaderSpec{ActorSpec: ActorSpec{Partition: part(), Start: r.IntN(150)}, Reads: 2 + r.IntN(4)}
		if r.IntN(3) == 0 {
			rs.Pause = 5 + r.IntN(30)
			rs.Sleep = time.Duration(r.IntN(5)) * time.Second
		}
		c.Readers = append(c.Readers, rs)
	}
	// A quarter of the seeds start from a table of the legacy layout, with
	// a migrator or two beside the writers: a stream of their own.
	if lg := rand.New(rand.NewPCG(seed, 0x1e6a)); lg.IntN(4) == 0 {
		c.LegacyGens = 1 + lg.IntN(3)
		for range 1 + lg.IntN(2) {
			c.Migrators = append(c.Migrators, ActorSpec{Partition: c.Partitions[lg.IntN(len(c.Partitions))], Start: lg.IntN(40)})
		}
	}
	// A third of the seeds focus on one race, drawn from a stream of their
	// own so that the others stay as they were.
	f := rand.New(rand.NewPCG(seed, 0xf0c5))
	switch f.IntN(6) {
	case 0, 1: // rollbacks to what GC is collecting right now
		c.Focus = "rollback-vs-gc"
		c.KillRate, c.FaultRate, c.GC.Keep = 0, c.FaultRate/2, -1
		for i := range c.Writers {
			if c.Writers[i].After == 0 {
				c.Writers[i].Start = f.IntN(200)
			}
		}
		c.Rollbacks = nil
		for range 3 + f.IntN(4) {
			// Each looks for a target and rolls back when a collection
			// begins, up to 9 times: the race of GC's second listing
			// of the manifests (gc-skips-manifest-relist).
			c.Rollbacks = append(c.Rollbacks, ActorSpec{Partition: c.Partitions[0], Start: 30 + f.IntN(250), Looks: 8, WithGC: true})
		}
		c.GCs = []GCSpec{{Start: f.IntN(40), Rounds: 6 + f.IntN(8), Pause: 10 + f.IntN(30)},
			{Start: 40 + f.IntN(40), Rounds: 6 + f.IntN(8), Pause: 10 + f.IntN(30)}}
	case 2: // slow tasks while GC collects orphans
		c.Focus = "slow-writers-vs-gc"
		for i := range c.Writers {
			if c.Writers[i].After == 0 && f.IntN(2) == 0 {
				c.Writers[i].Files = 2 + f.IntN(2)
				c.Writers[i].Pause = 5 + f.IntN(20)
				c.Writers[i].Sleep = time.Duration(4+f.IntN(8)) * time.Second
			}
		}
		c.GCs = append(c.GCs, GCSpec{Start: f.IntN(40), Rounds: 10 + f.IntN(10), Pause: 3 + f.IntN(8)})
	}
	// Iceberg, from a stream of its own: three quarters of the seeds
	// publish after some of their commits and rollbacks, reconcile, and
	// read the Iceberg snapshots.
	ice := rand.New(rand.NewPCG(seed, 0x1ceb))
	c.MetadataMinAge = time.Duration(15+ice.IntN(20)) * time.Second
	if ice.IntN(4) != 0 {
		rate := 0.3 + 0.6*ice.Float64()
		c.Publish = map[int]bool{}
		n := len(c.Rollbacks)
		for _, ws := range c.Writers {
			n++
			if ws.Staged {
				n += ws.Committers
			}
		}
		for id := 1; id <= n; id++ {
			if ice.Float64() < rate {
				c.Publish[id] = true
			}
		}
		for range ice.IntN(3) {
			c.Reconcilers = append(c.Reconcilers, GCSpec{Start: ice.IntN(200), Rounds: 1 + ice.IntN(4), Pause: 10 + ice.IntN(40)})
		}
		if len(c.Partitions) > 1 {
			// The reconcile finds the partitions with swap.ListPointers,
			// which reads their pointers from several goroutines at once:
			// one actor's requests would no longer come one at a time.
			c.Reconcilers = nil
		}
		for range ice.IntN(3) {
			rs := ReaderSpec{ActorSpec: ActorSpec{Start: 30 + ice.IntN(200)}, Reads: 1 + ice.IntN(3)}
			if ice.IntN(2) == 0 {
				rs.Pause = 5 + ice.IntN(20)
				rs.Sleep = time.Duration(ice.IntN(4)) * time.Second
			}
			c.IceReaders = append(c.IceReaders, rs)
		}
		// Half the facade writers prefetch what their publish reads, and
		// a third of the publishers prefetch it themselves.
		for i := range c.Writers {
			c.Writers[i].Prefetch = c.Writers[i].Facade && ice.IntN(2) == 0
		}
		c.PrefetchPublish = map[int]bool{}
		for id := 1; id <= n; id++ {
			if c.Publish[id] && ice.IntN(3) == 0 {
				c.PrefetchPublish[id] = true
			}
		}
		c.lossFaults(seed, n)
	}
	return c
}

// lossFaults adds, from a stream of its own, the Iceberg metadata's
// damage by operators (faults.go): half the publishing seeds lose the
// version hint once or twice, late enough that the expiry may have
// deleted the first versions, and those with one partition run the
// expiry before and `pswap publish` some steps after; a third of those
// with one partition lose a manifest, and repair it. (The reconcile's listing of the
// partitions reads several pointers at once with more: see Reconcilers.)
//
// A quarter of the publishers that follow commits stall between their
// pointer reads and their version PUT (StallPublish).
func (c *Config) lossFaults(seed uint64, publishers int) {
	r := rand.New(rand.NewPCG(seed, 0x1057))
	c.StallPublish = map[int]bool{}
	for id := 1; id <= publishers; id++ {
		if c.Publish[id] && r.IntN(4) == 0 {
			c.StallPublish[id] = true
		}
	}
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(2) {
			ls := LossSpec{Start: 100 + r.IntN(500), Pause: 5 + r.IntN(60)}
			if len(c.Partitions) > 1 {
				ls.Pause = 0
			}
			c.LoseHint = append(c.LoseHint, ls)
		}
	}
	if len(c.Partitions) == 1 && r.IntN(3) == 0 {
		c.LoseManifest = append(c.LoseManifest, LossSpec{Start: 60 + r.IntN(400), Pause: 5 + r.IntN(60)})
	}
}

// Result is what one run did.
type Result struct {
	Seed      uint64
	Focus     string
	Steps     int
	Faults    map[string]int
	Checks    int // store-wide invariant checks (one per partition per step)
	IceChecks int // checks of what the Iceberg metadata names (one per step once published)
	// Metadata is a digest of every Iceberg metadata object at the end.
	Metadata string
	Reports  int // reports of actors checked
	// ColdManifests is the number of cold manifests written (a publish
	// that merged months, or rewrote the cold manifest for a backfill).
	ColdManifests int
	Violation     *Violation
	Trace         []Event
	Outcomes      []string // each actor's name and how it ended
	// Views runs (Config.Views): the views' changes table.json recorded,
	// the Delta log versions written during the run, and whether the run
	// ended with the Delta view on.
	ViewSwitches, DeltaVersions int
	DeltaOn                     bool
	decisions                   int // fault decisions made (Config.Suppressed's range)
}

// FaultCount is the number of injected faults (kills included).
func (r *Result) FaultCount() int {
	n := 0
	for _, v := range r.Faults {
		n += v
	}
	return n
}

// Run runs one simulated world to its end.
func Run(cfg Config) *Result {
	w := newWorld(cfg)
	w.build()
	w.run()
	w.mu.Lock()
	w.checkAppends() // append.go
	w.mu.Unlock()
	w.converge()
	w.convergeViews()
	res := &Result{Seed: cfg.Seed, Focus: cfg.Focus, Steps: w.step, Faults: w.faults, Checks: w.checks, IceChecks: w.iceChecks,
		Metadata: w.metadataDigest(), Reports: w.reports, ColdManifests: w.coldWrites, Violation: w.failure, Trace: w.trace, decisions: w.decisions}
	res.ViewSwitches, res.DeltaVersions = w.views.switches, w.views.deltaVersions
	if v, ok := w.views.doc.ViewsOf(); ok && w.views.doc != nil {
		res.DeltaOn = v.Delta
	}
	for _, a := range w.actors {
		out := a.outcome
		if a.state == waiting || cfg.Disabled[a.id] {
			out = "never started"
		}
		res.Outcomes = append(res.Outcomes, a.name+": "+w.short(out))
	}
	return res
}

// Shrink looks for a smaller failing run than cfg's: it disables actors and
// suppresses faults one at a time, keeping each change under which the run
// still breaks the same invariant, within budget runs. It returns the
// smallest configuration found and its result.
func Shrink(cfg Config, budget int) (Config, *Result) {
	best := Run(cfg)
	if best.Violation == nil {
		return cfg, best
	}
	inv := best.Violation.Invariant
	try := func(c Config) bool {
		if budget <= 0 {
			return false
		}
		budget--
		r := Run(c)
		if r.Violation != nil && r.Violation.Invariant == inv {
			cfg, best = c, r
			return true
		}
		return false
	}
	clone := func(m map[int]bool) map[int]bool {
		out := map[int]bool{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	nw := newWorld(cfg)
	nw.build()
	actors := len(nw.actors)
	for id := 1; id <= actors; id++ {
		if cfg.Disabled[id] {
			continue
		}
		c := cfg
		c.Disabled = clone(cfg.Disabled)
		c.Disabled[id] = true
		try(c)
	}
	for i := 0; i < best.decisions; i++ {
		if cfg.Suppressed[i] {
			continue
		}
		c := cfg
		c.Suppressed = clone(cfg.Suppressed)
		c.Suppressed[i] = true
		try(c)
	}
	return cfg, best
}

// Format prints a run's trace: every request with its actor, fault and
// outcome, then how each actor ended.
func (r *Result) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d steps, faults: %v, metadata %s\n", r.Seed, r.Steps, r.Faults, r.Metadata)
	if r.Focus != "" {
		fmt.Fprintf(&b, "focus: %s\n", r.Focus)
	}
	for _, e := range r.Trace {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	b.WriteString("actors:\n")
	for _, o := range r.Outcomes {
		b.WriteString("  " + o + "\n")
	}
	if r.Violation != nil {
		b.WriteString(r.Violation.Error() + "\n")
	}
	return b.String()
}
