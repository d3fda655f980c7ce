package sim

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
)

// Damage to the Iceberg metadata from outside pswap (issue 25): an operator
// or a crashed tool deletes version-hint.text, or one manifest that the
// current version names, and an operator repairs the latter with `pswap
// publish`. Each is an actor of kind "operator" (the repair: "publisher"),
// never killed, whose requests the scheduler interleaves with the others'.

// LossSpec is one deletion by an operator: at step Start (or later), and,
// for a manifest, a reconcile Pause steps after it (`pswap publish`, the
// repair).
type LossSpec struct {
	Start, Pause int
}

// lostObject is what a loss deleted.
type lostObject struct {
	step int    // when its deletion was applied
	hint bool   // the version hint (else a manifest)
	size int64  // its size (for the planted listing that still shows it)
	data []byte // its content (for the planted reads that still find it)
}

// hintLoserBody deletes version-hint.text once, retrying a transient
// failure as an operator's tool would. With expire, it first lets the
// metadata age past the expiry's min-age (the store's clock moves that
// much: a world stalled as long) and runs the expiry as `pswap gc` ends
// (lakehouse.Expire, the store's clock): late in a run the collectors are
// done, and the expiry is what deletes the first versions, which a publish
// that probes from v1 needs gone to go wrong (issue 25's reproduction: age
// the metadata, gc, delete the hint, publish).
func (w *World) hintLoserBody(expire bool) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		out := ""
		if expire {
			if err := w.sleep(ctx, 1, w.cfg.MetadataMinAge); err != nil {
				return "killed"
			}
			now := w.now(ctx)
			res, err := lakehouse.Expire(ctx, w.st, lakehouse.ExpireOptions{
				Retention: w.retention(), MinAge: w.cfg.MetadataMinAge,
				Now: func() time.Time { return now },
			})
			out = fmt.Sprintf("expired %d snapshots, %d metadata objects (%v); ", len(res.Expired), len(res.Deleted), err)
		}
		err := w.deleteRetry(ctx, lakehouse.VersionHintKey)
		return w.report(a, func() string {
			if err != nil {
				return out + "hint not deleted: " + errSummary(err)
			}
			return out + "deleted " + lakehouse.VersionHintKey
		})
	}
}

// manifestLoserBody deletes one manifest that the latest version's current
// snapshot names (found as a reader finds it), looking again a while later
// (at most 6 times) while there is none or its reads fail.
func (w *World) manifestLoserBody() func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		out := "nothing to delete"
		for try := range 6 {
			if try > 0 {
				if err := w.pause(ctx, 30); err != nil {
					return "killed"
				}
			}
			key, err := w.pickManifest(ctx, a)
			switch {
			case err != nil:
				out = "found no manifest: " + errSummary(err)
				continue
			case key == "":
				out = "nothing to delete"
				continue
			}
			if err := w.deleteRetry(ctx, key); err != nil {
				out = "not deleted: " + errSummary(err)
				continue
			}
			out = "deleted " + key
			break
		}
		return w.report(a, func() string { return out })
	}
}

// repairBody is the operator's `pswap publish` after a loss: it waits
// Pause steps once the loss is done, then reconciles until a round
// succeeds (at most 4 rounds), each checked (reconcileRound).
func (w *World) repairBody(ls LossSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		if err := w.pause(ctx, ls.Pause); err != nil {
			return "killed"
		}
		var outs []string
		for range 4 {
			out, ok := w.reconcileRound(ctx, a)
			outs = append(outs, out)
			if ok {
				break
			}
			if err := w.pause(ctx, 5); err != nil {
				break
			}
		}
		return w.report(a, func() string { return fmt.Sprint(outs) })
	}
}

// pickManifest returns one manifest the latest version's current snapshot
// names ("" if none), reading as a reader does.
func (w *World) pickManifest(ctx context.Context, a *actor) (string, error) {
	_, v, err := lakehouse.Latest(ctx, w.st)
	if err != nil || v == 0 {
		return "", err
	}
	data, err := w.readRetry(ctx, lakehouse.MetadataKey(v))
	if err != nil {
		return "", err
	}
	meta, err := lakehouse.ParseMetadata(data)
	if err != nil {
		return "", err
	}
	cs := meta.CurrentSnapshot()
	if cs == nil {
		return "", nil
	}
	ld, err := w.readRetry(ctx, keyOfLoc(cs.ManifestList))
	if err != nil {
		return "", err
	}
	l := parseList(ld)
	if l.err != nil || len(l.manifests) == 0 {
		return "", l.err
	}
	return l.manifests[a.rng.IntN(len(l.manifests))].key, nil
}

// deleteRetry deletes a key, retrying transient failures.
func (w *World) deleteRetry(ctx context.Context, key string) error {
	var err error
	for range 4 {
		if err = w.st.Delete(ctx, key); err == nil || !store.IsRetryable(err) {
			return err
		}
	}
	return err
}

// observeLoss records an operator's deletion of an Iceberg object: the
// checks of what the metadata names tolerate it until a reconcile that
// began after it succeeds. The lock is held.
func (w *World) observeLoss(key string) {
	if w.cur == nil || w.cur.kind != "operator" {
		return
	}
	if _, ok := w.objs[key]; !ok {
		return
	}
	if _, ok := w.lost[key]; !ok {
		w.lost[key] = lostObject{step: w.step, hint: key == lakehouse.VersionHintKey, size: int64(len(w.objs[key].data)), data: w.objs[key].data}
	}
}

// lostManifest reports whether key is a manifest an operator deleted that
// no successful reconcile has had to repair yet: the metadata may still
// name it (every version a publish of a commit writes carries it on).
func (w *World) lostManifest(key string) bool {
	l, ok := w.lost[key]
	return ok && !l.hint && !w.repaired[key]
}

// reconcileStart is what a reconcile round began with: the step, and each
// partition's generation then current with files (the least it must
// publish).
type reconcileStart struct {
	step int
	gens map[string]string
}

func (w *World) startReconcile() reconcileStart {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs := reconcileStart{step: w.step, gens: map[string]string{}}
	for _, part := range w.partNames() {
		if cur := w.truth(part).current(); cur != nil && w.hasFiles(part, cur.gen) {
			rs.gens[part] = cur.gen
		}
	}
	return rs
}

// hasFiles reports whether a generation's manifest names files (a
// generation without any has no Iceberg manifest).
func (w *World) hasFiles(part, gen string) bool {
	mo, ok := w.manifestObj(part, gen)
	if !ok {
		return false
	}
	m, err := w.decodeManifest(mo.data)
	return err == nil && len(m.Files) > 0
}

// reconcileRound runs one `pswap publish` and, when it succeeds, checks
// what it must have achieved (I7-repair).
func (w *World) reconcileRound(ctx context.Context, a *actor) (string, bool) {
	start := w.startReconcile()
	r, err := lakehouse.Publish(ctx, w.st, w.iceOptions())
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case a.killed:
		return "killed", false
	case err != nil:
		return "failed: " + errSummary(err), false
	}
	w.checkRepaired(a, start, r.Version)
	out := "no-op"
	if r.Changed {
		out = fmt.Sprintf("v%d", r.Version)
	}
	if r.HintFixed {
		out += fmt.Sprintf(" (hint was %d)", r.HintWas)
	}
	return out, true
}

// checkRepaired checks, once a reconcile that began at start succeeded
// (reporting version v), that the latest version as a reader finds it (the
// hint, then a probe past it; the highest listed without a hint) is at
// least v, that everything its current snapshot names is there (no
// manifest lost before the reconcile began: from now on no version may
// name one), and that it names, for every partition, the generation that
// was current when the reconcile began or a newer one (I7-repair). The
// lock is held.
func (w *World) checkRepaired(a *actor, start reconcileStart, v int) {
	for k, l := range w.lost {
		if !l.hint && l.step < start.step {
			w.repaired[k] = true
		}
	}
	w.iceChecks++
	latest := w.readerLatest()
	if latest < v {
		w.fail("I7-repair", "%s reconciled to version %d, readers find version %d", a, v, latest)
		return
	}
	if latest == 0 {
		if len(start.gens) > 0 {
			w.fail("I7-repair", "%s reconciled, and readers find no version (partitions %v have data)", a, slices.Sorted(maps.Keys(start.gens)))
		}
		return
	}
	gens, err := w.readableContent(latest)
	if err != nil {
		w.fail("I7-repair", "%s reconciled; version %d, as readers find it: %v", a, latest, err)
		return
	}
	for part, want := range start.gens {
		got := gens[partHash(part)]
		if got == lostGen {
			continue
		}
		if got == "" || w.genIndex(part, got) < w.genIndex(part, want) {
			w.fail("I7-repair", "%s reconciled; version %d names generation %q of %s, %s was current when it began",
				a, latest, got, part, want)
			return
		}
	}
}

// readerLatest is the version a reader opens (lakehouse.Latest) given the
// store as it is: the hint, or the highest version listed when there is
// none or it is garbage, then a probe past it. The lock is held.
func (w *World) readerLatest() int {
	v := 0
	o, ok := w.objs[lakehouse.VersionHintKey]
	if n, err := strconv.Atoi(strings.TrimSpace(string(o.data))); ok && err == nil && n > 0 {
		v = n
	} else {
		for k := range w.objs {
			if n, ok := lakehouse.VersionOfKey(k); ok && n > v {
				v = n
			}
		}
	}
	for {
		if _, ok := w.objs[lakehouse.MetadataKey(v+1)]; !ok {
			return v
		}
		v++
	}
}

// lostGen stands for the generation of a manifest lost after a reconcile
// began, which it need not have repaired.
const lostGen = "(lost)"

// readableContent reads version v's current snapshot from the store as it
// is, and returns the generation it names per partition hash (lostGen for
// a manifest lost that no reconcile had to repair yet), or what a reader
// would fail on. The lock is held.
func (w *World) readableContent(v int) (map[string]string, error) {
	key := lakehouse.MetadataKey(v)
	ver, ok := w.version(key)
	switch {
	case !ok:
		return nil, fmt.Errorf("%s does not exist", key)
	case ver.err != nil:
		return nil, fmt.Errorf("%s: %v", key, ver.err)
	}
	gens := map[string]string{}
	for _, s := range ver.snaps {
		if s.id != ver.current {
			continue
		}
		l, ok := w.list(s.list)
		if !ok || l.err != nil {
			return nil, fmt.Errorf("manifest list %s unreadable (exists: %v): %v", s.list, ok, l.err)
		}
		lostGroup := false
		for _, m := range l.manifests {
			fs, ok := w.manifestFiles(m)
			if !ok && w.lostManifest(m.key) {
				gens[m.part] = lostGen // lost after the reconcile began
				lostGroup = lostGroup || m.group
				continue
			}
			if !ok || fs.err != nil {
				_, lost := w.lost[m.key]
				return nil, fmt.Errorf("manifest %s unreadable (exists: %v, lost by an operator: %v): %v",
					m.key, ok, lost, fs.err)
			}
			for _, f := range fs.files {
				if _, ok := w.objs[f.key]; !ok {
					return nil, fmt.Errorf("manifest %s names the data file %s, which is gone", m.key, f.key)
				}
			}
			if !m.group {
				gens[m.part] = m.gen
				continue
			}
			if m.mf.AddedDataFiles()+m.mf.ExistingDataFiles() == 0 {
				continue
			}
			members, err := w.groupMembers(m)
			if err != nil {
				return nil, fmt.Errorf("manifest %s: members: %v", m.key, err)
			}
			for ph, gen := range members {
				gens[ph] = gen
			}
		}
		if lostGroup {
			// A group's manifest lost after the reconcile began: its
			// members are not known any more; excuse every partition the
			// other manifests do not name.
			for _, part := range w.partNames() {
				if gens[partHash(part)] == "" {
					gens[partHash(part)] = lostGen
				}
			}
		}
	}
	return gens, nil
}

// checkVersionOrder checks a version's PUT as it is applied: no version
// is written at or below the latest one written (I8-versions). A
// publisher that lost the hint and did not list the metadata folder would
// start the history again at v1, behind the versions that exist, and
// readers would go on reading those. The lock is held.
func (w *World) checkVersionOrder(v int) {
	if v > w.iceLatest {
		return
	}
	var above []int
	for k := range w.objs {
		if n, ok := lakehouse.VersionOfKey(k); ok && n > v {
			above = append(above, n)
		}
	}
	sort.Ints(above)
	w.fail("I8-versions", "%s wrote version %d, the latest written is %d (versions above it that exist: %v)",
		w.curName(), v, w.iceLatest, above)
}

// excusedLoss reports whether a manifest that a version's snapshot names
// may be missing: an operator deleted it, and it is not named by the
// current snapshot after a reconcile had to repair it (older snapshots
// keep naming it: a reconcile writes only the next version). The lock is
// held.
func (w *World) excusedLoss(key string, current bool) bool {
	if _, lost := w.lost[key]; !lost {
		return false
	}
	return !current || w.lostManifest(key)
}

// plantedIcebergList answers a publisher's listing of the metadata folder
// for the plants that blind it (ok: the plant applies to r). The lock is
// held.
func (w *World) plantedIcebergList(a *actor, r *request) (served, hit, ok bool) {
	if l, lost := w.lost[r.key]; lost && r.op == "get" && !l.hint && w.cfg.Plant == PlantReconcileKeepsMissingManifest && a.kind == "publisher" {
		if _, back := w.objs[r.key]; !back {
			// A group's manifest is read, not only listed: the
			// reconcile finds it as it was.
			b, err := store.Slice(l.data, r.off, r.n)
			r.body, r.attrs, r.err = bytes.Clone(b), store.Attrs{Key: r.key, Size: l.size}, err
			return true, true, true
		}
	}
	if r.op != "list" {
		return false, false, false
	}
	switch {
	case w.cfg.Plant == PlantPublisherProbesFromV1 && (a.kind == "publisher" || a.kind == "writer") &&
		r.key == lakehouse.MetadataPrefix+"v":
		// As if the folder held no version: the publish probes from v1.
		for k := range w.objs {
			_, isVersion := lakehouse.VersionOfKey(k)
			hit = hit || isVersion
		}
		r.page, r.pre, r.more = nil, nil, false
		return true, hit, true
	case w.cfg.Plant == PlantReconcileKeepsMissingManifest && a.kind == "publisher" &&
		r.key == lakehouse.MetadataPrefix+"pswap-":
		w.apply(r)
		return true, w.relist(r), true
	}
	return false, false, false
}

// relist puts back into a listing's page the manifests operators deleted
// (with the size they had), as if they were still there: in key order,
// within the page's range. It reports whether it added any. The lock is
// held.
func (w *World) relist(r *request) bool {
	end := "\xff"
	if r.more && len(r.page) > 0 {
		end = r.page[len(r.page)-1].Key
	}
	added := false
	for k, l := range w.lost {
		if l.hint || !strings.HasPrefix(k, r.key) || k <= r.after || k > end {
			continue
		}
		if _, ok := w.objs[k]; ok {
			continue
		}
		r.page = append(r.page, store.Attrs{Key: k, Size: l.size})
		r.pre = append(r.pre, false)
		added = true
	}
	sort.SliceStable(r.page, func(i, j int) bool { return r.page[i].Key < r.page[j].Key })
	return added
}

// stallBefore stalls a publisher marked to (Config.StallPublish) once,
// before the PUT of its first manifest list: after its attempt read the
// pointers, before its version PUT. Not a request of its own: a pause
// (10-50 steps of the others, 2-6 s of the store's clock).
func (w *World) stallBefore(ctx context.Context, key string) error {
	a := w.actorOf(ctx)
	if a == nil || !strings.HasPrefix(key, lakehouse.MetadataPrefix+"snap-") {
		return nil
	}
	w.mu.Lock()
	stall := a.stall
	a.stall = false
	w.mu.Unlock()
	if !stall {
		return nil
	}
	r := rand.New(rand.NewPCG(w.cfg.Seed, 0x57a11<<16|uint64(a.id)))
	return w.sleep(ctx, 10+r.IntN(41), time.Duration(2+r.IntN(5))*time.Second)
}
