package gc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// genID returns a valid, deterministic generation id for tests.
func genID(i int) string { return fmt.Sprintf("%08x-abcd-7000-8000-%012x", i+1, i+1) }

// bytesReader hands out fuzz bytes, then zeros.
type bytesReader []byte

func (b *bytesReader) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}

// scenario builds a plan input from fuzz bytes: a chain (with rollbacks),
// listed objects of every kind with arbitrary ages, uncommitted manifests,
// options.
func scenario(data []byte) *planInput {
	r := bytesReader(data)
	const p = "dt=2026-11-29"
	base := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	hours := func() time.Time { return base.Add(time.Duration(r.next()) * time.Hour) }
	n := 1 + r.next()%8
	in := &planInput{part: p, young: map[string]string{}}
	in.now = base.Add(time.Duration(200+r.next()) * time.Hour)
	in.opts, _ = Options{
		Keep:         r.next()%5 - 1,
		MinAge:       time.Duration(r.next()%50-1) * time.Hour,
		OrphanAge:    time.Duration(r.next()%100) * time.Hour,
		CommitWindow: time.Duration(r.next()%3) * time.Hour,
	}.withDefaults()
	chainLen := r.next() % (n + 1)
	for i := range chainLen {
		m := &manifest.Manifest{Partition: p, Generation: genID(i)}
		if i+1 < chainLen {
			m.Parent = genID(i + 1)
		}
		if v := r.next(); v%4 == 0 {
			m.DataGeneration = genID(v / 4 % n)
		}
		in.chain = append(in.chain, link{gen: m.Generation, m: m, mod: hours()})
	}
	if chainLen > 0 {
		in.ptr = &swap.Base{Pointer: &manifest.Pointer{Generation: genID(0)}, ModTime: hours()}
		in.objects = append(in.objects, store.Attrs{Key: layout.PointerKey(p), ModTime: hours()})
	}
	for i := range n {
		g := genID(i)
		flags := r.next()
		if flags&1 != 0 {
			in.objects = append(in.objects, store.Attrs{Key: layout.ManifestKey(p, g), Size: 10, ModTime: hours()})
			if i >= chainLen && flags&8 != 0 {
				in.young[g] = genID(r.next() % n)
			}
		}
		for j := range (flags >> 1) & 3 {
			in.objects = append(in.objects, store.Attrs{Key: fmt.Sprintf("%sf%d", layout.DataPrefix(p, g), j), Size: 100, ModTime: hours()})
		}
		if flags&16 != 0 {
			in.objects = append(in.objects, store.Attrs{Key: layout.StagedKey(p, g), ModTime: hours()})
		}
		if flags&32 != 0 {
			in.objects = append(in.objects, store.Attrs{Key: layout.MetaPrefix(p) + "other/" + g, ModTime: hours()})
		}
	}
	// Data generations that the Iceberg snapshots name (Options.Protect).
	refs := r.next()
	for i := range n {
		if refs&(1<<i) != 0 {
			if in.referenced == nil {
				in.referenced = map[string]bool{}
			}
			in.referenced[genID(i)] = true
		}
	}
	slices.SortFunc(in.objects, func(a, b store.Attrs) int { return strings.Compare(a.Key, b.Key) })
	return in
}

// FuzzPlan checks the planner's safety properties on arbitrary partitions.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 10, 1, 5, 20, 2, 3, 0, 4, 5, 6, 7, 8, 9, 255, 1, 2, 3, 31, 31, 31, 31})
	f.Add([]byte{7, 255, 0, 0, 99, 0, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 63, 5, 63, 9, 25, 7, 8, 9})
	f.Add([]byte{5, 0, 4, 48, 1, 2, 5, 8, 12, 16, 20, 24, 9, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := scenario(data)
		p, err := makePlan(in)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, in, p)
	})
}

func checkPlan(t *testing.T, in *planInput, p *plan) {
	t.Helper()
	// Every kept generation has its reason, and only those.
	if len(p.keptWhy) != len(p.kept) {
		t.Fatalf("%d kept generations, %d reasons: %v %v", len(p.kept), len(p.keptWhy), p.kept, p.keptWhy)
	}
	for _, g := range p.kept {
		if p.keptWhy[g] == "" {
			t.Fatalf("kept %s without a reason", g)
		}
	}
	listed := map[string]store.Attrs{}
	for _, a := range in.objects {
		listed[a.Key] = a
	}
	deleted := map[string]bool{}
	for _, k := range p.keys {
		if _, ok := listed[k]; !ok || deleted[k] {
			t.Fatalf("deletes %s: not listed, or twice", k)
		}
		deleted[k] = true
		if k == layout.PointerKey(in.part) || !strings.HasPrefix(k, layout.MetaPrefix(in.part)) {
			t.Fatalf("deletes %s", k)
		}
		if kd, _ := layout.Classify(in.part, k); kd == layout.KindOther || kd == layout.KindPointer {
			t.Fatalf("deletes %s, which is not pswap's layout", k)
		}
	}
	// The current generation and the Keep most recent retired are kept.
	if len(in.chain) > 0 && (len(p.kept) == 0 || p.kept[0] != in.chain[0].gen) {
		t.Fatalf("current %s not kept first: %v", in.chain[0].gen, p.kept)
	}
	for i := 0; i < len(in.chain) && i <= in.opts.Keep; i++ {
		if !slices.Contains(p.kept, in.chain[i].gen) {
			t.Fatalf("generation %d of the chain not kept with Keep %d", i, in.opts.Keep)
		}
	}
	// Kept manifests, their data, and the data young manifests name survive.
	safeData := map[string]bool{}
	inChain := map[string]bool{}
	for _, l := range in.chain {
		inChain[l.gen] = true
		if slices.Contains(p.kept, l.gen) {
			safeData[l.m.DataGen()] = true
			if deleted[layout.ManifestKey(in.part, l.gen)] {
				t.Fatalf("deletes the manifest of kept %s", l.gen)
			}
		} else if !slices.Contains(p.collected, l.gen) {
			t.Fatalf("chain generation %s neither kept nor collected", l.gen)
		}
	}
	for _, dg := range in.young {
		safeData[dg] = true
	}
	collectedData := map[string]bool{}
	for _, g := range p.collected {
		for _, l := range in.chain {
			if l.gen == g {
				collectedData[l.m.DataGen()] = true
			}
		}
	}
	// What the snapshots name stays a generation: its files and records,
	// and a manifest that names the files (in the chain, or its own).
	for g := range in.referenced {
		for k := range deleted {
			if kd, gen := layout.Classify(in.part, k); gen == g && kd != layout.KindManifest {
				t.Fatalf("deletes %s, named by a snapshot", k)
			}
		}
		inChainData, keptData := false, false
		for _, l := range in.chain {
			if l.m.DataGen() == g {
				inChainData = true
				keptData = keptData || slices.Contains(p.kept, l.gen)
			}
		}
		if inChainData && !keptData {
			t.Fatalf("no manifest that names %s's files is kept: kept %v", g, p.kept)
		}
		if _, listedM := listed[layout.ManifestKey(in.part, g)]; listedM && !inChain[g] && !safeData[g] && deleted[layout.ManifestKey(in.part, g)] {
			t.Fatalf("deletes the manifest of %s, named by a snapshot and by no kept manifest", g)
		}
	}
	cutoff := in.now.Add(-in.opts.OrphanAge - in.opts.CommitWindow - clockSlack)
	for k := range deleted {
		kd, gen := layout.Classify(in.part, k)
		if kd == layout.KindData && safeData[gen] {
			t.Fatalf("deletes %s, data of a kept or in-flight manifest", k)
		}
		// Anything deleted that is not a collected generation's is an
		// orphan: then every uncommitted object of its generation is old.
		if (kd == layout.KindManifest && inChain[gen]) || (kd == layout.KindData && collectedData[gen]) {
			continue
		}
		for _, a := range in.objects {
			ka, ga := layout.Classify(in.part, a.Key)
			// The data of a kept, in-flight or collected generation is not
			// part of an orphan group.
			if ga != gen || ka == layout.KindOther || ka == layout.KindPointer || (ka == layout.KindManifest && inChain[ga]) || (ka == layout.KindData && (collectedData[ga] || safeData[ga])) {
				continue
			}
			if !a.ModTime.Before(cutoff) {
				t.Fatalf("deletes orphan %s although %s is young (%s, cutoff %s)", k, a.Key, a.ModTime, cutoff)
			}
		}
	}
}

// A generation whose files the Iceberg snapshots name keeps a manifest
// that names them: its own when no kept one does (the first generation
// here), none more when a kept rollback already does (the second: the
// current generation is a rollback to it, whose manifest names its files).
func TestPlanKeepsAManifestOfReferencedData(t *testing.T) {
	const p = "dt=2026-11-29"
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	g1, g2, g3, rb := genID(1), genID(2), genID(3), genID(4)
	chain := []struct{ gen, data, parent string }{{rb, g2, g3}, {g3, g3, g2}, {g2, g2, g1}, {g1, g1, ""}}
	in := &planInput{part: p, young: map[string]string{}, now: now, referenced: map[string]bool{g1: true, g2: true}}
	in.opts, _ = Options{Keep: None, MinAge: None, OrphanAge: time.Hour, CommitWindow: time.Minute}.withDefaults()
	old := now.Add(-48 * time.Hour)
	in.ptr = &swap.Base{Pointer: &manifest.Pointer{Generation: rb}, ModTime: old}
	for _, c := range chain {
		m := &manifest.Manifest{Partition: p, Generation: c.gen, Parent: c.parent}
		if c.data != c.gen {
			m.DataGeneration = c.data
		}
		in.chain = append(in.chain, link{gen: c.gen, m: m, mod: old})
		in.objects = append(in.objects, store.Attrs{Key: layout.ManifestKey(p, c.gen), ModTime: old})
		if c.data == c.gen {
			in.objects = append(in.objects, store.Attrs{Key: layout.DataPrefix(p, c.gen) + "part-00000.parquet", ModTime: old})
		}
	}
	plan, err := makePlan(in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.kept, []string{rb, g1}) || !slices.Equal(plan.collected, []string{g3, g2}) {
		t.Fatalf("kept %v, collected %v; want [rollback first] kept, [third second] collected", plan.kept, plan.collected)
	}
	want := []string{layout.ManifestKey(p, g2), layout.ManifestKey(p, g3), layout.DataPrefix(p, g3) + "part-00000.parquet"}
	slices.Sort(want[:2])
	if !slices.Equal(plan.keys, want) {
		t.Fatalf("deletes %v, want %v", plan.keys, want)
	}
	checkPlan(t, in, plan)
}

// Each kept generation says which rule kept it: current, --keep, --min-age,
// the commit window of the Iceberg check, a retained snapshot.
func TestKeptReasons(t *testing.T) {
	const p = "dt=2026-11-29"
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ago := func(h int) time.Time { return now.Add(-time.Duration(h) * time.Hour) }
	in := &planInput{part: p, young: map[string]string{}, now: now, window: 5 * time.Hour,
		referenced: map[string]bool{genID(4): true}}
	in.opts, _ = Options{Keep: 1, MinAge: 2 * time.Hour, CommitWindow: time.Hour}.withDefaults()
	// Manifest times: each generation retired when the next newer one's
	// writer committed (bounded by that one's manifest plus the window).
	mods := []time.Time{ago(1), ago(1), ago(4), ago(10), ago(20), ago(40)}
	for i, mod := range mods {
		m := &manifest.Manifest{Partition: p, Generation: genID(i)}
		if i+1 < len(mods) {
			m.Parent = genID(i + 1)
		}
		in.chain = append(in.chain, link{gen: m.Generation, m: m, mod: mod})
	}
	in.ptr = &swap.Base{Pointer: &manifest.Pointer{Generation: genID(0)}, ModTime: ago(1)}
	plan, err := makePlan(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		genID(0): KeptCurrent,      // the pointer's
		genID(1): KeptForRollback,  // Keep 1
		genID(2): KeptMinAge,       // retired about 1h ago
		genID(3): KeptCommitWindow, // about 3h ago: past MinAge, inside the window
		genID(4): KeptSnapshot,     // 9h ago, but a snapshot names it
	}
	if len(plan.keptWhy) != len(want) {
		t.Fatalf("kept %v, want %v", plan.keptWhy, want)
	}
	for g, w := range want {
		if plan.keptWhy[g] != w {
			t.Errorf("%s kept as %q, want %q", g, plan.keptWhy[g], w)
		}
	}
	if !slices.Equal(plan.collected, []string{genID(5)}) {
		t.Errorf("collected %v, want %v", plan.collected, []string{genID(5)})
	}
	checkPlan(t, in, plan)
}
