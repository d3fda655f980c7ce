package sim

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// histEntry is one pointer swap as the store applied it: the ground truth
// of a partition's history, which the checks compare every report with.
type histEntry struct {
	gen, dataGen, runID, rollbackOf string
	actor                           *actor
	step                            int
	at, retiredAt                   time.Time
}

// partTruth is what the simulation knows of one partition.
type partTruth struct {
	hist []histEntry
}

func (pt *partTruth) current() *histEntry {
	if len(pt.hist) == 0 {
		return nil
	}
	return &pt.hist[len(pt.hist)-1]
}

// readState is a reader between resolving a generation and finishing it.
type readState struct {
	part, gen, dataGen string
	t0                 time.Time // when its pointer GET was applied
}

// key classification by the layout of package swap.
const (
	kindOther = iota
	kindPointer
	kindManifest
	kindData
)

func isPointerKey(key string) bool {
	_, ok := layout.PartitionOfPointerKey(key)
	return ok
}

// classify returns a key's partition, kind and generation (in either
// layout of package layout).
func classify(key string) (part string, kind int, gen string) {
	part, ok := layout.PartitionOf(key)
	if !ok {
		return "", kindOther, ""
	}
	switch k, g := layout.Classify(part, key); k {
	case layout.KindPointer:
		return part, kindPointer, ""
	case layout.KindManifest:
		return part, kindManifest, g
	case layout.KindData:
		return part, kindData, g
	}
	return part, kindOther, ""
}

// isMetadata: a request on a partition's pointer or manifests.
func isMetadata(r *request) bool {
	_, k, _ := classify(r.key)
	return k == kindPointer || k == kindManifest
}

func (w *World) truth(part string) *partTruth {
	pt := w.parts[part]
	if pt == nil {
		pt = &partTruth{}
		w.parts[part] = pt
	}
	return pt
}

// observePut records an applied PUT. A pointer swap extends the history;
// it must name the previous current generation as its parent (no lost
// update: I1/I3), name a manifest that exists (I2), and not repeat a run id
// (I4).
func (w *World) observePut(r *request) {
	if w.cfg.wallClock {
		return
	}
	if v, ok := lakehouse.VersionOfKey(r.key); ok {
		w.observeVersion(v, r.data)
		return
	}
	if w.observeViews(r) { // views.go
		return
	}
	part, kind, _ := classify(r.key)
	if kind != kindPointer {
		return
	}
	p, err := manifest.DecodePointer(r.data)
	if err != nil {
		w.fail("I2", "%s wrote an undecodable pointer for %s: %v", w.curName(), part, err)
		return
	}
	pt := w.truth(part)
	if w.samePointerVersion(r.key, p, pt) { // legacy.go
		return
	}
	prev := pt.current()
	switch {
	case prev == nil && p.Parent != "":
		w.fail("I3", "%s swapped in %s with parent %s, but %s had no generation", w.curName(), p.Generation, p.Parent, part)
	case prev != nil && p.Parent != prev.gen:
		w.fail("I3", "%s swapped in %s with parent %s, but %s was current: a lost update", w.curName(), p.Generation, p.Parent, prev.gen)
	case p.Seq != int64(len(pt.hist)+1):
		w.fail("I3", "%s swapped in %s with seq %d after %d swaps", w.curName(), p.Generation, p.Seq, len(pt.hist))
	}
	e := histEntry{gen: p.Generation, runID: p.RunID, actor: w.cur, step: w.step, at: w.clock}
	mo, ok := w.manifestObj(part, p.Generation)
	if !ok {
		w.fail("I2", "%s swapped in %s whose manifest does not exist", w.curName(), p.Generation)
		e.dataGen = p.Generation
	} else if m, err := w.decodeManifest(mo.data); err != nil {
		w.fail("I2", "%s swapped in %s whose manifest is undecodable: %v", w.curName(), p.Generation, err)
	} else {
		e.dataGen, e.rollbackOf = m.DataGen(), m.RollbackOf
		switch m.Kind {
		case manifest.KindMerge:
			w.observeMerge(part, prev, m) // merge.go
		case manifest.KindAppend:
			w.observeAppend(part, prev, m) // append.go
		}
	}
	if p.RunID != "" {
		for i := len(pt.hist) - 1; i >= 0; i-- {
			h := pt.hist[i]
			if h.runID != p.RunID {
				if w.cfg.StrictRunIDs {
					continue
				}
				break // before issue 12, a run id is a no-op only while it is current
			}
			w.fail("I4", "run %q committed twice to %s: %s (step %d by %s) and now %s by %s",
				p.RunID, part, h.gen, h.step, h.actor, p.Generation, w.curName())
			break
		}
	}
	if prev != nil {
		prev.retiredAt = w.clock
	}
	pt.hist = append(pt.hist, e)
}

func (w *World) curName() string {
	if w.cur == nil {
		return "setup"
	}
	return w.cur.name
}

// keep is the number of retired generations GC keeps (gc.Options.Keep's rules).
func (w *World) keep() int {
	switch k := w.cfg.GC.Keep; {
	case k == 0:
		return 1
	case k < 0:
		return 0
	default:
		return k
	}
}

// protected returns, for a partition, the generations whose manifests and
// the data generations whose files no one may delete now (I5), each with
// the reason.
func (w *World) protected(part string) (gens, data map[string]string) {
	gens, data = map[string]string{}, map[string]string{}
	pt := w.truth(part)
	n := len(pt.hist)
	if n == 0 {
		return gens, data
	}
	cur := pt.hist[n-1]
	gens[cur.gen] = "current"
	data[cur.dataGen] = "data of current " + cur.gen
	kept := 0
	for i := n - 2; i >= 0; i-- {
		e := pt.hist[i]
		var reason string
		switch age := w.clock.Sub(e.retiredAt); {
		case kept < w.keep():
			kept++
			reason = fmt.Sprintf("kept for rollback (%d of keep=%d)", kept, w.keep())
		case age < w.cfg.GC.MinAge:
			reason = fmt.Sprintf("retired %s ago, less than min-age %s", age.Round(time.Millisecond), w.cfg.GC.MinAge)
		default:
			continue
		}
		gens[e.gen] = reason
		if _, ok := data[e.dataGen]; !ok {
			data[e.dataGen] = "data of " + e.gen + ", " + reason
		}
	}
	for a, rs := range w.readers {
		if rs.part == part && w.clock.Sub(rs.t0) < w.cfg.GC.MinAge {
			if _, ok := data[rs.dataGen]; !ok {
				data[rs.dataGen] = fmt.Sprintf("being read by %s since %s ago (< min-age)", a.name, w.clock.Sub(rs.t0).Round(time.Millisecond))
			}
		}
	}
	return gens, data
}

// observeDelete checks an applied deletion of an existing key (I5).
func (w *World) observeDelete(key string) {
	if w.cfg.wallClock {
		return
	}
	w.observeLoss(key)
	if _, ok := w.objs[key]; !ok {
		return
	}
	part, kind, gen := classify(key)
	switch kind {
	case kindPointer:
		w.fail("I5", "%s deleted the pointer of %s", w.curName(), part)
	case kindManifest:
		if w.otherCopy(key, part, gen) {
			return // the manifest stays readable at its other key
		}
		gens, _ := w.protected(part)
		if why, ok := gens[gen]; ok {
			w.fail("I5", "%s deleted the manifest of %s (%s)", w.curName(), gen, why)
		}
	case kindData:
		_, data := w.protected(part)
		if why, ok := data[gen]; ok && w.referencedEver(part, gen, key) { // append.go
			w.fail("I5", "%s deleted %s (%s)", w.curName(), key, why)
		}
	}
}

// checkStore checks, after every step, that every partition's current
// generation is complete on the store (I1, I2): the pointer decodes, its
// manifest exists and agrees with it, and every file the manifest names is
// there with its recorded size and checksum.
func (w *World) checkStore() {
	parts := make([]string, 0, len(w.parts))
	for p := range w.parts {
		parts = append(parts, p)
	}
	sort.Strings(parts)
	for _, part := range parts {
		w.checks++
		po, ok := w.pointerObj(part)
		if !ok {
			if len(w.parts[part].hist) > 0 {
				w.fail("I5", "the pointer of %s is gone", part)
			}
			continue
		}
		pd := w.memo("pointer", po, func(b []byte) any {
			p, err := manifest.DecodePointer(b)
			return decoded[*manifest.Pointer]{p, err}
		}).(decoded[*manifest.Pointer])
		p, err := pd.v, pd.err
		if err != nil {
			w.fail("I2", "pointer of %s: %v", part, err)
			continue
		}
		if cur := w.parts[part].current(); cur == nil || cur.gen != p.Generation {
			w.fail("I3", "the pointer of %s names %s, the history says otherwise", part, p.Generation)
			continue
		}
		mo, ok := w.manifestObj(part, p.Generation)
		if !ok {
			w.fail("I2", "the manifest of current %s of %s is missing", p.Generation, part)
			continue
		}
		md := w.memo("manifest", mo, func(b []byte) any {
			m, err := w.decodeManifest(b)
			return decoded[*manifest.Manifest]{m, err}
		}).(decoded[*manifest.Manifest])
		m, err := md.v, md.err
		if err != nil {
			w.fail("I2", "manifest of current %s: %v", p.Generation, err)
			continue
		}
		if m.ContentChecksum != p.ContentChecksum || m.Rows != p.Rows || m.Bytes != p.Bytes {
			w.fail("I2", "manifest of current %s does not match its pointer", p.Generation)
		}
		for _, f := range m.Files {
			key := layout.DataPrefixOf(m) + f.Path
			o, ok := w.objs[key]
			if !ok {
				w.fail("I2", "file %s of current generation %s is missing", key, p.Generation)
				break
			}
			sum := w.memo("sha256", o, func(b []byte) any { s := sha256.Sum256(b); return manifest.SHA256Checksum(s[:]) }).(string)
			if int64(len(o.data)) != f.Size || sum != f.Checksum {
				w.fail("I2", "file %s of current generation %s differs from its manifest", key, p.Generation)
				break
			}
		}
	}
}

// decoded is a decoding's result, for memo.
type decoded[T any] struct {
	v   T
	err error
}

// memo computes f of an object's bytes once per content (by its ETag, the
// MD5 of its bytes): the checks after every step decode the same pointers,
// manifests and checksums over and over.
func (w *World) memo(kind string, o object, f func([]byte) any) any {
	k := kind + "\x00" + o.etag
	if v, ok := w.memos[k]; ok {
		return v
	}
	v := f(o.data)
	w.memos[k] = v
	return v
}

// entriesBy returns the pointer swaps an actor's requests made.
func (w *World) entriesBy(a *actor, part string) []histEntry {
	var out []histEntry
	for _, e := range w.truth(part).hist {
		if e.actor == a {
			out = append(out, e)
		}
	}
	return out
}

// commitReport checks what a writer or a rollback reported (I3, I4): a
// success names a generation that its own swap made current (and that is
// in the history), a no-op or a failure swapped nothing, and no attempt
// swapped twice. The lock is held.
func (w *World) commitReport(a *actor, part, staged string, res swap.Result, err error) string {
	mine := w.entriesBy(a, part)
	if len(mine) > 1 {
		w.fail("I3", "%s swapped %d times in one attempt (%s at step %d, %s at step %d)", a, len(mine), mine[0].gen, mine[0].step, mine[1].gen, mine[1].step)
	}
	switch {
	case err == nil && res.Changed:
		if len(mine) == 0 {
			// Two committers of one staged generation write the same
			// manifest and pointer bytes when they read the clock in the
			// same second; on S3 (ETag = MD5) the second cannot tell the
			// first one's swap from its own, and both report a change of
			// the same generation (committed, or superseded if another
			// commit followed; one idempotency key). Allowed, counted.
			if e := w.findGen(part, res.Generation); a.group != 0 && e != nil && e.actor != nil &&
				e.actor.group == a.group && res.Generation == staged &&
				(res.Outcome == swap.Committed || res.Outcome == swap.Superseded) {
				w.faults["twin-committed"]++
				return fmt.Sprintf("%s %s (the swap of its twin %s)", res.Outcome, res.Generation, e.actor)
			}
			w.fail("I3", "%s reported %s of %s but none of its swaps landed", a, res.Outcome, res.Generation)
			return "violation"
		}
		if mine[0].gen != res.Generation {
			w.fail("I3", "%s reported generation %s, its swap made %s current", a, res.Generation, mine[0].gen)
		}
		if staged != "" && mine[0].dataGen != staged && mine[0].rollbackOf == "" {
			w.fail("I3", "%s staged %s but its committed generation %s has the data of %s", a, staged, mine[0].gen, mine[0].dataGen)
		}
		return fmt.Sprintf("%s %s", res.Outcome, res.Generation)
	case err == nil:
		if len(mine) > 0 {
			w.fail("I3", "%s reported %s (changed=false) but its swap to %s landed at step %d", a, res.Outcome, mine[0].gen, mine[0].step)
		}
		if res.Generation != "" && !w.inHistory(part, res.Generation) {
			w.fail("I3", "%s reported %s with generation %s, which was never current", a, res.Outcome, res.Generation)
		}
		if res.Outcome == swap.SameRun {
			// The run committed before: the generation reported (the
			// current one), or, across history (issue 12), any earlier one.
			e := w.findGen(part, res.Generation)
			ok := e != nil && e.runID == res.RunID
			for _, h := range w.truth(part).hist {
				ok = ok || (w.cfg.StrictRunIDs && h.runID == res.RunID)
			}
			if !ok {
				w.fail("I4", "%s reported same-run (current %s), but run %q never committed", a, res.Generation, res.RunID)
			}
		}
		return fmt.Sprintf("%s (changed=false) %s", res.Outcome, res.Generation)
	case errors.Is(err, swap.ErrOutcomeUnknown):
		return "outcome unknown: " + errSummary(err)
	default:
		if len(mine) > 0 {
			w.fail("I3", "%s reported a failure (%v) but its swap to %s landed at step %d", a, err, mine[0].gen, mine[0].step)
		}
		return "failed: " + errSummary(err)
	}
}

func (w *World) inHistory(part, gen string) bool { return w.findGen(part, gen) != nil }

func (w *World) findGen(part, gen string) *histEntry {
	pt := w.truth(part)
	for i := range pt.hist {
		if pt.hist[i].gen == gen {
			return &pt.hist[i]
		}
	}
	return nil
}

// errSummary names the sentinel an error matches, for the trace.
func errSummary(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{swap.ErrConflict, "conflict"},
		{swap.ErrOutcomeUnknown, "outcome-unknown"},
		{swap.ErrStaleGeneration, "stale-generation"},
		{swap.ErrGenerationNotFound, "generation-not-found"},
		{swap.ErrNoData, "no-data"},
		{swap.ErrCorrupt, "corrupt"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120] + "..."
	}
	return msg
}
