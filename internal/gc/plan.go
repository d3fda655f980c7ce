package gc

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// link is one generation of the chain: current, parent, grandparent, ...
type link struct {
	gen string
	m   *manifest.Manifest
	mod time.Time // the manifest's store timestamp
}

// planInput is everything a plan depends on. A plan is a pure function of it.
type planInput struct {
	part    string
	objects []store.Attrs     // one listing of MetaPrefix(part)
	ptr     *swap.Base        // the pointer as read; nil: the partition has no pointer
	chain   []link            // from the pointer's generation back to the first missing manifest
	young   map[string]string // manifests outside the chain that are not old: generation -> DataGen
	// referenced is the data generations whose files a reader outside
	// pswap still names (Options.Protect: the Iceberg snapshots).
	referenced map[string]bool
	now        time.Time // the store's clock, read after the listing
	opts       Options   // with defaults
	// window keeps what was retired less than this long ago as well: since
	// Options.Protect looked, plus CommitWindow (0: Protect not used).
	window time.Duration
}

// plan is what to delete in one partition, and why.
type plan struct {
	kept        []string          // chain generations kept, current first
	keptWhy     map[string]string // why each was kept: a Kept* reason
	collected   []string          // chain generations whose manifests are deleted
	orphans     []string          // uncommitted generations deleted, sorted
	orphansKept []string          // uncommitted generations still too young, sorted
	keys        []string          // to delete: manifests, then staged records, then data
	objects     int
	bytes       int64
}

// retiredBound returns an upper bound of the time chain[i] (i >= 1) stopped
// being current, or the zero time when it cannot tell.
//
// chain[i] was retired when chain[i-1] became current: by the swap that
// wrote the pointer (the pointer's own timestamp) for i = 1; for i >= 2, by
// a swap that happened before chain[i-2]'s manifest was written (its writer
// read a pointer naming chain[i-1]), and at most CommitWindow after
// chain[i-1]'s own manifest was written.
func retiredBound(in *planInput, i int) time.Time {
	var t time.Time
	if i == 1 {
		if in.ptr == nil {
			return time.Time{}
		}
		t = in.ptr.ModTime
	} else {
		t = in.chain[i-2].mod
		if m := in.chain[i-1].mod; !m.IsZero() && m.Add(in.opts.CommitWindow).Before(t) {
			t = m.Add(in.opts.CommitWindow)
		}
	}
	if t.IsZero() {
		return t
	}
	return t.Add(clockSlack)
}

// makePlan decides what to delete. It never selects the pointer, a key
// outside the partition's _pswap folder, or a key that the listing did not
// show.
func makePlan(in *planInput) (*plan, error) {
	pl := &planner{in: in, p: &plan{keptWhy: map[string]string{}}, chainIdx: map[string]int{},
		live: map[string]bool{}, collected: map[string]bool{}, protected: map[string]bool{},
		collectData: map[string]bool{}, refYoung: map[string]bool{}, groups: map[string]*orphanGroup{},
		orphanCutoff: in.now.Add(-in.opts.OrphanAge - in.opts.CommitWindow - clockSlack)}
	pl.splitChain()
	pl.chooseData()
	for _, a := range in.objects {
		pl.sortObject(a)
	}
	pl.chooseOrphans()
	pl.orderKeys()
	if err := checkKeys(in.part, pl.p.keys); err != nil {
		return nil, err
	}
	return pl.p, nil
}

// planner is the state of makePlan, step by step.
type planner struct {
	in *planInput
	p  *plan

	chainIdx    map[string]int  // chain generation -> its index in in.chain
	live        map[string]bool // data generations of kept manifests
	collected   map[string]bool // chain generations to collect
	protected   map[string]bool // data generations young uncommitted manifests name
	collectData map[string]bool // data generations to collect with their manifests
	// refYoung: generations named by a snapshot that have a young object
	// among those kept for it (its record, its data): its manifest, when it
	// falls to the orphan groups, waits for them as any orphan's would.
	refYoung map[string]bool
	// groups are the uncommitted objects by generation; a group is deleted
	// only when every object of it is old (older than orphanCutoff).
	groups       map[string]*orphanGroup
	orphanCutoff time.Time

	manifests, staged, data []store.Attrs // to delete, by kind
}

// orphanGroup is the uncommitted objects of one generation.
type orphanGroup struct {
	objs  []store.Attrs
	young bool
}

// splitChain decides which generations of the chain are kept (and why)
// and which are collected.
func (pl *planner) splitChain() {
	in, p := pl.in, pl.p
	keepAt := make([]bool, len(in.chain))
	for i, l := range in.chain {
		pl.chainIdx[l.gen] = i
		if why := keepReason(in, i); why != "" {
			keepAt[i] = true
			p.keptWhy[l.gen] = why
			pl.live[l.m.DataGen()] = true
		}
	}
	// Files that the Iceberg snapshots name stay a generation: when no kept
	// manifest names them, the newest manifest that does is kept too.
	// Without one they are no generation (history, rollback and verify
	// cannot reach them, and a later run takes them for an orphan's).
	for i, l := range in.chain {
		if dg := l.m.DataGen(); !keepAt[i] && in.referenced[dg] && !pl.live[dg] {
			keepAt[i] = true
			p.keptWhy[l.gen] = KeptSnapshot
			pl.live[dg] = true
		}
	}
	for i, l := range in.chain {
		if keepAt[i] {
			p.kept = append(p.kept, l.gen)
		} else {
			p.collected = append(p.collected, l.gen)
			pl.collected[l.gen] = true
		}
	}
}

// keepReason says why generation i of the chain is kept, "" when it is not
// (by age and position: snapshots are splitChain's).
func keepReason(in *planInput, i int) string {
	o := in.opts
	switch {
	case i == 0:
		return KeptCurrent
	case i <= o.Keep:
		return KeptForRollback
	}
	// Within MinAge of its retirement (or of unknown age), or inside the
	// commit window of the Iceberg check: keep.
	r := retiredBound(in, i)
	switch age := in.now.Sub(r); {
	case r.IsZero():
		return KeptUnknownAge
	case o.MinAge > 0 && age < o.MinAge:
		return KeptMinAge
	case age < in.window:
		return KeptCommitWindow
	case age < 0:
		return KeptClockSlack
	}
	return ""
}

// chooseData decides which data generations go with the collected
// manifests: those no kept manifest names and no young uncommitted one
// (a rollback or a rebase in flight) refers to.
func (pl *planner) chooseData() {
	for _, dg := range pl.in.young {
		pl.protected[dg] = true
	}
	for g := range pl.collected {
		if dg := pl.in.chain[pl.chainIdx[g]].m.DataGen(); !pl.live[dg] && !pl.protected[dg] {
			pl.collectData[dg] = true
		}
	}
}

// remove adds a to the objects to delete, by kind.
func (pl *planner) remove(a store.Attrs, k layout.Kind) {
	switch k {
	case layout.KindManifest:
		pl.manifests = append(pl.manifests, a)
	case layout.KindStaged:
		pl.staged = append(pl.staged, a)
	default:
		pl.data = append(pl.data, a)
	}
}

func (pl *planner) isYoung(a store.Attrs) bool {
	return a.ModTime.IsZero() || !a.ModTime.Before(pl.orphanCutoff)
}

// sortObject decides for one listed object: kept, deleted with its
// collected generation, or put in its generation's orphan group.
func (pl *planner) sortObject(a store.Attrs) {
	in := pl.in
	k, gen := layout.Classify(in.part, a.Key)
	switch k {
	case layout.KindOther, layout.KindPointer:
		return
	}
	_, inChain := pl.chainIdx[gen]
	if in.referenced[gen] {
		// Named by a snapshot: its data and its record stay, and so
		// does its manifest when the chain does not reach it (a
		// collected younger generation ended the walk before it) and
		// no kept manifest names its files, until no snapshot names it.
		if k != layout.KindManifest || !inChain && !pl.live[gen] {
			if pl.isYoung(a) {
				pl.refYoung[gen] = true
			}
			return
		}
	}
	switch k {
	case layout.KindManifest, layout.KindAttempt:
		// A committed generation's attempt record (the audit's identity
		// of it) goes with its manifest; any other one with its
		// generation's orphan group: when all of that is old (a no-op's
		// or a failed attempt's record is all there is of it).
		if inChain {
			if pl.collected[gen] {
				pl.remove(a, k)
			}
			return
		}
	case layout.KindData:
		if pl.live[gen] || pl.protected[gen] {
			return
		}
		if pl.collectData[gen] {
			pl.remove(a, k)
			return
		}
	}
	g := pl.groups[gen]
	if g == nil {
		g = &orphanGroup{}
		pl.groups[gen] = g
	}
	g.objs = append(g.objs, a)
	if pl.isYoung(a) {
		g.young = true
	}
}

// chooseOrphans deletes the orphan groups whose objects are all old.
func (pl *planner) chooseOrphans() {
	p := pl.p
	for gen, g := range pl.groups {
		if g.young || pl.refYoung[gen] {
			p.orphansKept = append(p.orphansKept, gen)
			continue
		}
		p.orphans = append(p.orphans, gen)
		for _, a := range g.objs {
			k, _ := layout.Classify(pl.in.part, a.Key)
			pl.remove(a, k)
		}
	}
	slices.Sort(p.orphans)
	slices.Sort(p.orphansKept)
}

// orderKeys lists the keys to delete. Manifests go first: a generation
// whose deletion is interrupted is then invisible (history ends, rollback
// refuses it) and its leftover data is an orphan that a later run removes.
func (pl *planner) orderKeys() {
	p := pl.p
	for _, list := range [][]store.Attrs{pl.manifests, pl.staged, pl.data} {
		slices.SortFunc(list, func(a, b store.Attrs) int { return strings.Compare(a.Key, b.Key) })
		for _, a := range list {
			p.keys = append(p.keys, a.Key)
			p.objects++
			p.bytes += a.Size
		}
	}
}

// checkKeys is the last line of defence: whatever the plan says, never the
// pointer and never anything outside the partition's _pswap folder.
func checkKeys(part string, keys []string) error {
	meta, legacy := layout.MetaPrefix(part), layout.LegacyMetaPrefix(part)
	for _, k := range keys {
		if k == layout.PointerKey(part) || k == layout.LegacyPointerKey(part) ||
			!(strings.HasPrefix(k, meta) || strings.HasPrefix(k, legacy)) {
			return fmt.Errorf("gc %s: internal error: refusing to delete %s", part, k)
		}
	}
	return nil
}
