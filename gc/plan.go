package gc

import (
	"fmt"
	"slices"
	"strings"
	"time"

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
	o := in.opts
	p := &plan{keptWhy: map[string]string{}}
	chainIdx := map[string]int{}
	live := map[string]bool{}      // data generations of kept manifests
	collected := map[string]bool{} // chain generations to collect
	keepAt := make([]bool, len(in.chain))
	for i, l := range in.chain {
		chainIdx[l.gen] = i
		why := ""
		switch {
		case i == 0:
			why = KeptCurrent
		case i <= o.Keep:
			why = KeptForRollback
		default:
			// Within MinAge of its retirement (or of unknown age), or
			// inside the commit window of the Iceberg check: keep.
			r := retiredBound(in, i)
			switch age := in.now.Sub(r); {
			case r.IsZero():
				why = KeptUnknownAge
			case o.MinAge > 0 && age < o.MinAge:
				why = KeptMinAge
			case age < in.window:
				why = KeptCommitWindow
			case age < 0:
				why = KeptClockSlack
			}
		}
		if why != "" {
			keepAt[i] = true
			p.keptWhy[l.gen] = why
			live[l.m.DataGen()] = true
		}
	}
	// Files that the Iceberg snapshots name stay a generation: when no kept
	// manifest names them, the newest manifest that does is kept too.
	// Without one they are no generation (history, rollback and verify
	// cannot reach them, and a later run takes them for an orphan's).
	for i, l := range in.chain {
		if dg := l.m.DataGen(); !keepAt[i] && in.referenced[dg] && !live[dg] {
			keepAt[i] = true
			p.keptWhy[l.gen] = KeptSnapshot
			live[dg] = true
		}
	}
	for i, l := range in.chain {
		if keepAt[i] {
			p.kept = append(p.kept, l.gen)
		} else {
			p.collected = append(p.collected, l.gen)
			collected[l.gen] = true
		}
	}
	// Data that an uncommitted manifest refers to (a rollback or a rebase in
	// flight) is protected as long as that manifest is young.
	protected := map[string]bool{}
	for _, dg := range in.young {
		protected[dg] = true
	}
	collectData := map[string]bool{}
	for g := range collected {
		if dg := in.chain[chainIdx[g]].m.DataGen(); !live[dg] && !protected[dg] {
			collectData[dg] = true
		}
	}

	// Uncommitted objects are grouped by generation; a group is deleted
	// only when every object of it is old.
	orphanCutoff := in.now.Add(-o.OrphanAge - o.CommitWindow - clockSlack)
	type group struct {
		objs  []store.Attrs
		young bool
	}
	groups := map[string]*group{}
	// refYoung: generations named by a snapshot that have a young object
	// among those kept for it (its record, its data): its manifest, when it
	// falls to the orphan groups, waits for them as any orphan's would.
	refYoung := map[string]bool{}
	var manifests, staged, data []store.Attrs
	add := func(a store.Attrs, k swap.Kind) {
		switch k {
		case swap.KindManifest:
			manifests = append(manifests, a)
		case swap.KindStaged:
			staged = append(staged, a)
		default:
			data = append(data, a)
		}
	}
	for _, a := range in.objects {
		k, gen := swap.Classify(in.part, a.Key)
		switch k {
		case swap.KindOther, swap.KindPointer:
			continue
		}
		if in.referenced[gen] {
			// Named by a snapshot: its data and its record stay, and so
			// does its manifest when the chain does not reach it (a
			// collected younger generation ended the walk before it) and
			// no kept manifest names its files, until no snapshot names it.
			if _, inChain := chainIdx[gen]; k != swap.KindManifest || !inChain && !live[gen] {
				if a.ModTime.IsZero() || !a.ModTime.Before(orphanCutoff) {
					refYoung[gen] = true
				}
				continue
			}
		}
		switch k {
		case swap.KindManifest:
			if _, inChain := chainIdx[gen]; inChain {
				if collected[gen] {
					add(a, k)
				}
				continue
			}
		case swap.KindData:
			if live[gen] || protected[gen] {
				continue
			}
			if collectData[gen] {
				add(a, k)
				continue
			}
		}
		g := groups[gen]
		if g == nil {
			g = &group{}
			groups[gen] = g
		}
		g.objs = append(g.objs, a)
		if a.ModTime.IsZero() || !a.ModTime.Before(orphanCutoff) {
			g.young = true
		}
	}
	for gen, g := range groups {
		if g.young || refYoung[gen] {
			p.orphansKept = append(p.orphansKept, gen)
			continue
		}
		p.orphans = append(p.orphans, gen)
		for _, a := range g.objs {
			k, _ := swap.Classify(in.part, a.Key)
			add(a, k)
		}
	}
	slices.Sort(p.orphans)
	slices.Sort(p.orphansKept)
	// Manifests go first: a generation whose deletion is interrupted is then
	// invisible (history ends, rollback refuses it) and its leftover data is
	// an orphan that a later run removes.
	for _, list := range [][]store.Attrs{manifests, staged, data} {
		slices.SortFunc(list, func(a, b store.Attrs) int { return strings.Compare(a.Key, b.Key) })
		for _, a := range list {
			p.keys = append(p.keys, a.Key)
			p.objects++
			p.bytes += a.Size
		}
	}
	if err := checkKeys(in.part, p.keys); err != nil {
		return nil, err
	}
	return p, nil
}

// checkKeys is the last line of defence: whatever the plan says, never the
// pointer and never anything outside the partition's _pswap folder.
func checkKeys(part string, keys []string) error {
	meta := swap.MetaPrefix(part)
	for _, k := range keys {
		if k == swap.PointerKey(part) || !strings.HasPrefix(k, meta) {
			return fmt.Errorf("gc %s: internal error: refusing to delete %s", part, k)
		}
	}
	return nil
}
