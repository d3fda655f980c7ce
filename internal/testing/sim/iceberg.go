package sim

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/twmb/avro/ocf"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// The Iceberg side of the simulation: publishers (lakehouse.PublishCommit
// after a commit or rollback, through the facade as `pswap commit
// --publish` does; lakehouse.Publish, the reconcile of `pswap publish`),
// GC with Iceberg protection and snapshot expiry (pswap.Table.GC, what
// `pswap gc` runs), Iceberg readers, and the checks of what the metadata
// names.

// iceSnap is one snapshot of a metadata version.
type iceSnap struct {
	id   int64
	ts   time.Time
	list string // the store key of its manifest list
}

// iceVersion is a metadata version as the simulation parsed it.
type iceVersion struct {
	err     error
	current int64
	snaps   []iceSnap
	// ids are its current schema's top-level field ids by name, last its
	// last-column-id (checkMark).
	ids  map[string]int
	last int
}

// iceManifest is one manifest of a manifest list: its key, what its name
// says (partition hash, sequence number, generation), and the file it
// describes.
type iceManifest struct {
	key, part, gen string
	seq            int64
	group          bool // a group's manifest: its members are in its header
	mf             iceberg.ManifestFile
}

// iceList is a parsed manifest list.
type iceList struct {
	err       error
	manifests []iceManifest
}

// iceFile is one live data file of a manifest.
type iceFile struct {
	key  string
	rows int64
	size int64
}

type iceFiles struct {
	err   error
	files []iceFile
}

// iceRead is an Iceberg reader between opening a snapshot and finishing it.
type iceRead struct {
	snapTS time.Time
	t0     time.Time       // when its GET of the metadata file was applied
	live   map[string]bool // "part\x00dataGen" current in pswap at t0
}

// keyOfLoc maps a location the metadata names back to a store key.
func keyOfLoc(loc string) string { return strings.TrimPrefix(loc, "sim://") }

// partHash is lakehouse's name for a partition in manifest names.
func partHash(part string) string {
	h := sha256.Sum256([]byte(part))
	return hex.EncodeToString(h[:8])
}

// parseManifestName reads pswap-<hash>-<seq>-<generation>-<snapshot>.avro.
func parseManifestName(loc string) (part string, seq int64, gen string, ok bool) {
	name, ok1 := strings.CutPrefix(path.Base(loc), "pswap-")
	name, ok2 := strings.CutSuffix(name, ".avro")
	f := strings.Split(name, "-")
	if !ok1 || !ok2 || len(f) != 8 {
		return "", 0, "", false
	}
	seq, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return f[0], seq, strings.Join(f[2:7], "-"), true
}

func recoverErr(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("panic: %v", r)
	}
}

func parseVersion(data []byte) (v iceVersion) {
	defer recoverErr(&v.err)
	meta, err := lakehouse.ParseMetadata(data)
	if err != nil {
		v.err = err
		return v
	}
	if cs := meta.CurrentSnapshot(); cs != nil {
		v.current = cs.SnapshotID
	}
	for _, s := range meta.Snapshots() {
		v.snaps = append(v.snaps, iceSnap{id: s.SnapshotID, ts: time.UnixMilli(s.TimestampMs), list: keyOfLoc(s.ManifestList)})
	}
	var schemas struct {
		Current int `json:"current-schema-id"`
		Last    int `json:"last-column-id"`
		Schemas []struct {
			ID     int `json:"schema-id"`
			Fields []struct {
				ID   int    `json:"id"`
				Name string `json:"name"`
			} `json:"fields"`
		} `json:"schemas"`
	}
	if v.err = json.Unmarshal(data, &schemas); v.err != nil {
		return v
	}
	v.ids, v.last = map[string]int{}, schemas.Last
	for _, sc := range schemas.Schemas {
		if sc.ID == schemas.Current {
			for _, f := range sc.Fields {
				v.ids[f.Name] = f.ID
			}
		}
	}
	return v
}

func parseList(data []byte) (l iceList) {
	defer recoverErr(&l.err)
	mfs, err := iceberg.ReadManifestList(bytes.NewReader(data))
	if err != nil {
		l.err = err
		return l
	}
	for _, mf := range mfs {
		m := iceManifest{key: keyOfLoc(mf.FilePath()), mf: mf}
		m.part, m.seq, m.gen, _ = parseManifestName(mf.FilePath())
		// A group's manifest, or a cold one (members in the header alike).
		m.group, _ = lakehouse.ManifestShape(mf.FilePath())
		l.manifests = append(l.manifests, m)
	}
	return l
}

func parseManifest(mf iceberg.ManifestFile, data []byte) (fs iceFiles) {
	defer recoverErr(&fs.err)
	entries, err := iceberg.ReadManifest(mf, bytes.NewReader(data), true)
	if err != nil {
		fs.err = err
		return fs
	}
	for _, e := range entries {
		df := e.DataFile()
		fs.files = append(fs.files, iceFile{key: keyOfLoc(df.FilePath()), rows: df.Count(), size: df.FileSizeBytes()})
	}
	return fs
}

func (w *World) version(key string) (iceVersion, bool) {
	o, ok := w.objs[key]
	if !ok {
		return iceVersion{}, false
	}
	return w.memo("iceberg "+key, o, func(b []byte) any { return parseVersion(b) }).(iceVersion), true
}

func (w *World) list(key string) (iceList, bool) {
	o, ok := w.objs[key]
	if !ok {
		return iceList{}, false
	}
	return w.memo("iceberg "+key, o, func(b []byte) any { return parseList(b) }).(iceList), true
}

// groupMembers is what a group's manifest records of its members: the
// generation of each (by partition hash), read from its Avro header with
// the Avro library, independently of lakehouse's own reader.
func (w *World) groupMembers(m iceManifest) (map[string]string, error) {
	o, ok := w.objs[m.key]
	if !ok {
		return nil, fmt.Errorf("manifest %s is gone", m.key)
	}
	type members struct {
		err  error
		gens map[string]string
	}
	got := w.memo("members "+m.key, o, func(b []byte) any {
		var out members
		defer recoverErr(&out.err)
		rd, err := ocf.NewReader(bytes.NewReader(b))
		if err != nil {
			return members{err: err}
		}
		var doc struct {
			Members []struct {
				Partition, Generation string
			}
		}
		raw := rd.Metadata()["pswap.members"]
		if z, ok := rd.Metadata()["pswap.members.deflate"]; ok {
			// A cold manifest's members: deflated, in base64.
			if raw, err = inflateBase64(z); err != nil {
				return members{err: err}
			}
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return members{err: err}
		}
		out.gens = map[string]string{}
		for _, mb := range doc.Members {
			out.gens[partHash(mb.Partition)] = mb.Generation
		}
		return out
	}).(members)
	return got.gens, got.err
}

func (w *World) manifestFiles(m iceManifest) (iceFiles, bool) {
	o, ok := w.objs[m.key]
	if !ok {
		return iceFiles{}, false
	}
	return w.memo("iceberg "+m.key, o, func(b []byte) any { return parseManifest(m.mf, b) }).(iceFiles), true
}

// retention is how long a snapshot keeps its files: GC's snapshot
// retention, as pswap.Table.GC derives it (MinAge here).
func (w *World) retention() time.Duration {
	if w.cfg.GC.MinAge > 0 {
		return w.cfg.GC.MinAge
	}
	return time.Nanosecond
}

// observeVersion checks a new metadata version when its PUT is applied: it
// must not bring back an older generation of any partition than the
// version before it named (a slow publisher never brings back older data).
// The lock is held.
func (w *World) observeVersion(v int, data []byte) {
	w.checkVersionOrder(v)
	if v <= w.iceLatest {
		return
	}
	prev := w.iceGens
	w.iceLatest = v
	w.iceGens = nil
	nv := parseVersion(data)
	if nv.err != nil {
		w.fail("I6-ice", "%s published version %d, which does not parse: %v", w.curName(), v, nv.err)
		return
	}
	gens := map[string]string{}
	for _, s := range nv.snaps {
		if s.id != nv.current {
			continue
		}
		l, ok := w.list(s.list)
		if !ok {
			w.fail("I6-ice", "%s published version %d, whose manifest list %s does not exist", w.curName(), v, s.list)
			return
		}
		for _, m := range l.manifests {
			if !m.group {
				gens[m.part] = m.gen
				continue
			}
			if liveFiles := m.mf.AddedDataFiles() + m.mf.ExistingDataFiles(); liveFiles == 0 {
				continue
			}
			members, err := w.groupMembers(m)
			if err != nil && w.excusedLoss(m.key, true) {
				// An operator deleted it and no reconcile has repaired
				// it yet: every publish carries it on until one does
				// (checkIceberg excuses it likewise). Its members are
				// unknown here, so their freshness is not checked.
				continue
			}
			if err != nil {
				w.fail("I6-ice", "%s published version %d, whose manifest %s has no readable members: %v", w.curName(), v, m.key, err)
				return
			}
			for ph, gen := range members {
				gens[ph] = gen
			}
		}
	}
	w.iceGens = gens
	w.iceIDs, w.iceLast = nv.ids, nv.last
	w.checkMark(w.views.doc, fmt.Sprintf("version %d", v))
	for _, part := range w.partNames() {
		ph := partHash(part)
		old, now := prev[ph], gens[ph]
		if old == "" || old == now {
			continue
		}
		if now == "" {
			continue // its manifest leaves when its generation has no files
		}
		if w.genIndex(part, now) < w.genIndex(part, old) {
			w.fail("I6-ice", "%s published version %d with generation %s of %s over the newer %s: it went back",
				w.curName(), v, now, part, old)
			return
		}
		// Fresh: a generation a version adds was current within
		// CommitWindow of the version landing (the publisher read the
		// pointer naming it at most that long before), which is what GC's
		// protection of what the snapshots name assumes.
		if e := w.findGen(part, now); e != nil && !e.retiredAt.IsZero() && w.clock.Sub(e.retiredAt) > w.cfg.CommitWindow+time.Second {
			w.fail("I6-ice", "%s published version %d naming generation %s of %s, retired %s before (commit window %s)",
				w.curName(), v, now, part, w.clock.Sub(e.retiredAt).Round(time.Millisecond), w.cfg.CommitWindow)
		}
	}
}

// partNames is every partition of the run, sorted.
func (w *World) partNames() []string { return slices.Sorted(slices.Values(w.cfg.Partitions)) }

// genIndex is a generation's place in a partition's history (-1: never current).
func (w *World) genIndex(part, gen string) int {
	for i, e := range w.truth(part).hist {
		if e.gen == gen {
			return i
		}
	}
	return -1
}

// checkIceberg checks, after every step, that the latest metadata version
// and what it references exist: the current snapshot's manifest list, its
// manifests and their data files, and the same for every snapshot still
// within the retention (I6-ice).
func (w *World) checkIceberg() {
	if w.iceLatest == 0 || w.cfg.wallClock {
		return
	}
	w.iceChecks++
	key := lakehouse.MetadataKey(w.iceLatest)
	v, ok := w.version(key)
	if !ok {
		w.fail("I6-ice", "the latest metadata version %s is gone", key)
		return
	}
	if v.err != nil {
		w.fail("I6-ice", "the latest metadata version %s does not parse: %v", key, v.err)
		return
	}
	cutoff := w.clock.Add(-w.retention())
	for _, s := range v.snaps {
		what := "the current snapshot"
		if s.id != v.current {
			if s.ts.Before(cutoff) {
				continue
			}
			what = fmt.Sprintf("snapshot %d (%s old, within the retention %s)", s.id, w.clock.Sub(s.ts).Round(time.Millisecond), w.retention())
		}
		l, ok := w.list(s.list)
		if !ok {
			w.fail("I6-ice", "%s of %s names the manifest list %s, which is gone", what, key, s.list)
			return
		}
		if l.err != nil {
			w.fail("I6-ice", "%s of %s: manifest list %s: %v", what, key, s.list, l.err)
			return
		}
		for _, m := range l.manifests {
			fs, ok := w.manifestFiles(m)
			if !ok && w.excusedLoss(m.key, s.id == v.current) {
				continue
			}
			if !ok {
				w.fail("I6-ice", "%s of %s names the manifest %s, which is gone", what, key, m.key)
				return
			}
			if fs.err != nil {
				w.fail("I6-ice", "%s of %s: manifest %s: %v", what, key, m.key, fs.err)
				return
			}
			for _, f := range fs.files {
				if _, ok := w.objs[f.key]; !ok {
					w.fail("I6-ice", "%s of %s names the data file %s, which was deleted", what, key, f.key)
					return
				}
			}
		}
	}
}

// current is, per partition, the files and rows of the latest metadata
// version's current snapshot.
func (w *World) icebergContent() (map[string]map[string]bool, map[string]int64, error) {
	files, rows := map[string]map[string]bool{}, map[string]int64{}
	if w.iceLatest == 0 {
		return files, rows, nil
	}
	v, ok := w.version(lakehouse.MetadataKey(w.iceLatest))
	if !ok || v.err != nil {
		return nil, nil, fmt.Errorf("latest version %d unreadable: %v", w.iceLatest, v.err)
	}
	for _, s := range v.snaps {
		if s.id != v.current {
			continue
		}
		l, ok := w.list(s.list)
		if !ok || l.err != nil {
			return nil, nil, fmt.Errorf("manifest list %s unreadable: %v", s.list, l.err)
		}
		for _, m := range l.manifests {
			fs, ok := w.manifestFiles(m)
			if !ok || fs.err != nil {
				return nil, nil, fmt.Errorf("manifest %s unreadable: %v", m.key, fs.err)
			}
			for _, f := range fs.files {
				part, ok := layout.PartitionOf(f.key)
				if !ok {
					return nil, nil, fmt.Errorf("manifest %s names %s, outside any partition", m.key, f.key)
				}
				if files[part] == nil {
					files[part] = map[string]bool{}
				}
				files[part][f.key] = true
				rows[part] += f.rows
			}
		}
	}
	return files, rows, nil
}

// converge runs a last reconcile with no faults once every actor is done,
// and checks that the metadata then names exactly every partition's
// current generation: its files and its rows.
func (w *World) converge() {
	if !w.iceberg || w.failure != nil {
		return
	}
	w.checkPending()
	_, err := lakehouse.Publish(env.With(context.Background(), w.convergeEnv()), w.st, w.iceOptions())
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record(Event{Actor: "CHECK", Outcome: fmt.Sprintf("final reconcile: %v", err)})
	if w.failure != nil {
		return
	}
	if err != nil {
		w.fail("I6-ice", "the final reconcile, with no faults, failed: %v", err)
		return
	}
	files, rows, err := w.icebergContent()
	if err != nil {
		w.fail("I6-ice", "after the final reconcile: %v", err)
		return
	}
	w.iceChecks++
	for _, part := range w.partNames() {
		want, wantRows := map[string]bool{}, int64(0)
		if cur := w.truth(part).current(); cur != nil {
			if mo, ok := w.manifestObj(part, cur.gen); ok {
				if m, err := w.decodeManifest(mo.data); err == nil {
					for _, f := range m.Files {
						want[layout.DataPrefixOf(m)+f.Path] = true
					}
					wantRows = m.Rows
				}
			}
		}
		if len(want) == 0 {
			wantRows = 0
		}
		got := files[part]
		same := len(got) == len(want)
		for k := range want {
			same = same && got[k]
		}
		if !same || rows[part] != wantRows {
			w.fail("I6-ice", "after the final reconcile the metadata names %d files and %d rows of %s, its current generation has %d files and %d rows",
				len(got), rows[part], part, len(want), wantRows)
			return
		}
	}
}

// iceOptions are a publisher's: one request at a time (its clock, waits
// and random source are its environment's: actorEnv).
func (w *World) iceOptions() lakehouse.Options {
	return lakehouse.Options{
		Concurrency: 1,
		MaxAttempts: 8,
		MaxElapsed:  w.cfg.MaxElapsed,
		Schema:      simSchema,
	}
}

// simSchema is lakehouse's FooterSchema for the facade's Parquet files; the
// raw files of the swap.Txn writers have the same columns, which it
// returns without reading them.
func simSchema(ctx context.Context, st store.Store, files []swap.FileRef) (*arrow.Schema, error) {
	if len(files) > 0 && strings.HasSuffix(files[0].Key, ".parquet") {
		return lakehouse.FooterSchema(ctx, st, files)
	}
	rowSchemaOnce.Do(func() {
		var buf bytes.Buffer
		if rowSchemaErr = parquet.Write(&buf, rowsOf(0, 0)); rowSchemaErr != nil {
			return
		}
		mem := memstore.New()
		if _, rowSchemaErr = mem.Put(context.Background(), "f.parquet", buf.Bytes(), store.PutOptions{}); rowSchemaErr != nil {
			return
		}
		rowSchema, rowSchemaErr = lakehouse.FooterSchema(context.Background(), mem, []swap.FileRef{{Key: "f.parquet", URI: "mem://f.parquet"}})
	})
	return rowSchema, rowSchemaErr
}

var (
	rowSchemaOnce sync.Once
	rowSchema     *arrow.Schema
	rowSchemaErr  error
)

// pubSlot is what a committing actor leaves for the publisher that follows it.
type pubSlot struct {
	part string
	res  swap.Result
	w    *pswap.Writer    // the facade's writer (Writer.Publish), or nil
	p    *pswap.Partition // else Partition.Publish
}

// publisherBody publishes the commit or rollback its predecessor made, the
// way `pswap commit --publish` does after it (pswap.Writer.Publish,
// pswap.Partition.Publish: lakehouse.PublishCommit).
func (w *World) publisherBody(slot *pubSlot, prefetch, leaseFirst bool) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		w.mu.Lock()
		s := *slot
		w.mu.Unlock()
		if s.part == "" || !s.res.Changed {
			return "nothing to publish"
		}
		// A facade writer's commit is published through the facade
		// (Writer.Publish); the raw files of the swap.Txn writers and the
		// rollbacks through lakehouse itself, with simSchema, as
		// Partition.Publish would.
		opts := w.iceOptions()
		facade := s.w != nil && w.cfg.Plant != PlantPublisherSkipSeqCheck
		opts.LeaseFirst = leaseFirst
		fopts := pswap.PublishOptions{Concurrency: opts.Concurrency, MaxAttempts: opts.MaxAttempts, MaxElapsed: opts.MaxElapsed, LeaseFirst: leaseFirst}
		switch {
		case prefetch && facade:
			fopts.Prefetch = pswap.NewTable(w.st).StartPrefetch(ctx, fopts)
		case prefetch:
			opts.Prefetch = lakehouse.StartPrefetch(ctx, w.st, opts)
		}
		if slow := a.rng.IntN(3) == 0; slow || w.cfg.Plant == PlantPublisherSkipSeqCheck {
			// A slow publisher: other commits (and their publishers) may
			// go first. (The planted one is always slow: its bug shows
			// when a newer generation was published first.)
			n := 5 + a.rng.IntN(40)
			if !slow {
				n = 20 + a.rng.IntN(80)
			}
			if err := w.sleep(ctx, n, time.Duration(a.rng.IntN(4))*time.Second); err != nil {
				return "killed"
			}
		}
		var pub pswap.Publication
		folded := "" // how the folding publisher (lakehouse fold.go) went, when it shows
		switch {
		case w.cfg.Plant == PlantPublisherSkipSeqCheck:
			// As a commit's own publish, and one that swapped just now
			// (it slept since): it reads no pointer, so only the
			// comparison with the version's base (which the claimed seq
			// defeats) could keep its older generation out.
			c := lakehouse.Commit{Partition: s.part, Generation: s.res.Generation, Seq: w.plantedSeq(a, s.part, s.res.Seq), SwappedAt: env.From(ctx).Now()}
			r, err := lakehouse.PublishCommit(ctx, w.st, c, opts)
			pub = pswap.Publication{Published: err == nil, Version: r.Version, Err: err}
		case facade:
			pub = s.w.Publish(ctx, fopts)
		default:
			c := lakehouse.Commit{Partition: s.part, Generation: s.res.Generation, Seq: s.res.Seq, Manifest: s.res.Manifest, SwappedAt: s.res.SwappedAt}
			r, err := lakehouse.PublishCommit(ctx, w.st, c, opts)
			pub = pswap.Publication{Published: err == nil && !r.Pending, Pending: r.Pending, MetadataLocation: r.MetadataLocation, Version: r.Version, Rebases: r.Rebases, Err: err}
			folded = foldNote(r)
		}
		return w.report(a, func() string {
			if pub.Pending && pub.Err == nil {
				// Announced to the lease's holder: in a version by the
				// time every actor is done, or left (its marker, or the
				// lease of a killed holder) to the next publish.
				w.pendingPubs = append(w.pendingPubs, pendingPub{actor: a.name, part: s.part, gen: s.res.Generation})
				return fmt.Sprintf("pending %s (the lease holder's next version after %d)", s.res.Generation, pub.Version)
			}
			if !pub.Published {
				return "not published: " + errSummary(pub.Err)
			}
			// A publication reported is in the latest version: this
			// generation of the partition, or a newer one.
			got := w.iceGens[partHash(s.part)]
			if w.cfg.Plant == PlantNone && w.genIndex(s.part, got) < w.genIndex(s.part, s.res.Generation) {
				w.fail("I6-ice", "%s reported %s of %s published, the latest version %d names %s", a, s.res.Generation, s.part, w.iceLatest, got)
			}
			return fmt.Sprintf("published %s (version %d, %d rebases%s)", s.res.Generation, pub.Version, pub.Rebases, folded)
		})
	}
}

// plantedSeq is the sequence number the planted publisher claims: one past
// the partition's latest swap, so that it neither finds the metadata as
// new as its commit nor switches to what the pointer names now. The lock
// is not held.
func (w *World) plantedSeq(a *actor, part string, seq int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := int64(len(w.truth(part).hist))
	if seq >= n {
		return seq // its generation is current: the check would pass anyway
	}
	w.faults[FaultPlantedSkip]++
	w.record(Event{Actor: a.name, Outcome: fmt.Sprintf("planted: publishes seq %d as %d", seq, n+1)})
	return n + 1
}

// reconcilerBody runs `pswap publish` (lakehouse.Publish through
// pswap.Table.Publish) Rounds times, Pause steps apart, each round checked
// (reconcileRound).
func (w *World) reconcilerBody(gs GCSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		var outs []string
		for round := range gs.Rounds {
			if round > 0 {
				if err := w.pause(ctx, gs.Pause); err != nil {
					return "killed"
				}
			}
			out, _ := w.reconcileRound(ctx, a)
			outs = append(outs, out)
		}
		return w.report(a, func() string { return fmt.Sprint(outs) })
	}
}

// iceReaderBody resolves the latest Iceberg snapshot Reads times and reads
// every data file it names.
func (w *World) iceReaderBody(rs ReaderSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		n := map[string]int{}
		for range rs.Reads {
			n[w.iceReadOnce(ctx, a, rs)]++
			if err := w.pause(ctx, 1+a.rng.IntN(20)); err != nil {
				break
			}
		}
		return w.report(a, func() string {
			return fmt.Sprintf("complete %d, gone past the windows %d, unresolved %d, failed %d", n["complete"], n["expired"], n["unresolved"], n["failed"])
		})
	}
}

// readRetry reads an object, retrying transient failures.
func (w *World) readRetry(ctx context.Context, key string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		data, _, err := store.ReadAll(ctx, w.st, key)
		if err == nil || !store.IsRetryable(err) || attempt == 3 {
			return data, err
		}
	}
}

// iceReadOnce opens the latest version (the hint and a probe past it, as
// readers find it), its current snapshot's manifest list, its manifests
// and their data files, one request each, across scheduling points. A file
// missing while the snapshot is within the retention, or a data file of a
// generation that was current when the reader opened the snapshot, within
// GC's min-age of that, breaks I6-ice.
func (w *World) iceReadOnce(ctx context.Context, a *actor, spec ReaderSpec) string {
	_, v, err := lakehouse.Latest(ctx, w.st)
	if err != nil || v == 0 {
		return "unresolved"
	}
	data, err := w.readRetry(ctx, lakehouse.MetadataKey(v))
	if err != nil {
		return "unresolved" // expired past its version (its metadata may go once superseded)
	}
	meta, err := lakehouse.ParseMetadata(data)
	if err != nil {
		w.mu.Lock()
		w.fail("I6-ice", "%s read version %d, which does not parse: %v", a, v, err)
		w.mu.Unlock()
		return "failed"
	}
	cs := meta.CurrentSnapshot()
	if cs == nil {
		return "unresolved"
	}
	w.mu.Lock()
	rd := &iceRead{snapTS: time.UnixMilli(cs.TimestampMs), t0: w.clock, live: map[string]bool{}}
	for _, part := range w.partNames() {
		if cur := w.truth(part).current(); cur != nil {
			rd.live[part+"\x00"+cur.dataGen] = true
		}
	}
	w.mu.Unlock()
	// missing reports whether a key of the snapshot being gone breaks the
	// invariant, and fails the run if so.
	missing := func(what, key string) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		age := w.clock.Sub(rd.snapTS)
		if _, lost := w.lost[key]; lost {
			return false // an operator deleted it (until a reconcile repairs it, checkIceberg's concern)
		}
		if age < w.retention() {
			w.fail("I6-ice", "%s lost %s %s of snapshot %d, %s old (retention %s)", a, what, key, cs.SnapshotID, age.Round(time.Millisecond), w.retention())
			return true
		}
		if part, kind, gen := classify(key); kind == kindData && rd.live[part+"\x00"+gen] && w.clock.Sub(rd.t0) < w.cfg.GC.MinAge {
			w.fail("I6-ice", "%s lost data file %s of generation %s, current %s before (min-age %s)", a, key, gen, w.clock.Sub(rd.t0).Round(time.Millisecond), w.cfg.GC.MinAge)
			return true
		}
		return false
	}
	ld, err := w.readRetry(ctx, keyOfLoc(cs.ManifestList))
	if errors.Is(err, store.ErrNotFound) {
		missing("manifest list", keyOfLoc(cs.ManifestList))
		return "expired"
	}
	if err != nil {
		return "failed"
	}
	l := parseList(ld)
	if l.err != nil {
		w.mu.Lock()
		w.fail("I6-ice", "%s: manifest list %s: %v", a, cs.ManifestList, l.err)
		w.mu.Unlock()
		return "failed"
	}
	var files []iceFile
	for _, m := range l.manifests {
		md, err := w.readRetry(ctx, m.key)
		if errors.Is(err, store.ErrNotFound) {
			missing("manifest", m.key)
			return "expired"
		}
		if err != nil {
			return "failed"
		}
		fs := parseManifest(m.mf, md)
		if fs.err != nil {
			w.mu.Lock()
			w.fail("I6-ice", "%s: manifest %s: %v", a, m.key, fs.err)
			w.mu.Unlock()
			return "failed"
		}
		files = append(files, fs.files...)
	}
	for i, f := range files {
		if i > 0 && spec.Pause > 0 {
			if err := w.sleep(ctx, spec.Pause, spec.Sleep); err != nil {
				return "failed"
			}
		}
		data, err := w.readRetry(ctx, f.key)
		if errors.Is(err, store.ErrNotFound) {
			missing("data file", f.key)
			return "expired"
		}
		if err != nil {
			return "failed"
		}
		if int64(len(data)) != f.size {
			w.mu.Lock()
			w.fail("I6-ice", "%s read %s: %d bytes, the manifest records %d", a, f.key, len(data), f.size)
			w.mu.Unlock()
			return "failed"
		}
	}
	return "complete"
}

// inflateBase64 reads what a cold manifest's pswap.members.deflate holds:
// a document deflated (RFC 1951), in standard base64.
func inflateBase64(b64 []byte) ([]byte, error) {
	z, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil {
		return nil, err
	}
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	return io.ReadAll(r)
}

// pendingPub is a publication that returned pending.
type pendingPub struct {
	actor, part, gen string
}

// checkPending checks, once every actor is done and before the final
// reconcile, that each publication that returned pending is in the latest
// version (this generation of its partition, or a newer one), or else left
// to the next publish: its fold marker is still there, or the lease of a
// holder killed (or whose release failed) is (I6-ice-pending). A holder
// that deleted a marker without reflecting its commit, or released the
// lease and left without folding what was announced to it, breaks it.
func (w *World) checkPending() {
	ctx := env.With(context.Background(), w.convergeEnv())
	w.mu.Lock()
	pend := slices.Clone(w.pendingPubs)
	w.mu.Unlock()
	if len(pend) == 0 {
		return
	}
	_, leaseErr := w.st.Stat(ctx, layout.LeaseKey)
	markers := map[string]bool{}
	for a, err := range w.st.List(ctx, layout.FoldPrefix) {
		if err != nil {
			return
		}
		if part, _, ok := layout.ParseFoldKey(a.Key); ok {
			markers[part] = true
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.iceChecks++
	for _, p := range pend {
		got := w.iceGens[partHash(p.part)]
		if w.genIndex(p.part, got) >= w.genIndex(p.part, p.gen) {
			continue
		}
		if markers[p.part] || leaseErr == nil {
			w.record(Event{Actor: "CHECK", Outcome: fmt.Sprintf("%s's pending %s of %s left to the next publish (marker %v, lease %v)", p.actor, p.gen, p.part, markers[p.part], leaseErr == nil)})
			continue
		}
		w.fail("I6-ice", "%s returned %s of %s pending, and no version holds it (the latest names %q), its marker and the lease are gone", p.actor, p.gen, p.part, got)
	}
}
