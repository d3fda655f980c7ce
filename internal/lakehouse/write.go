package lakehouse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/partition"
)

// write builds and writes the next version from s plus ups: the schema and
// spec it is written with (shapeFor), its manifest list (newList), the
// new manifests and the list at once (putList), then the version. It
// returns errLostRace when another publisher wrote that version first.
func (p *publisher) write(ctx context.Context, s *state, ups []partUpdate, attempt int) (*state, error) {
	ups, deltas, err := p.resolveAppends(ctx, s, ups)
	if err != nil {
		return nil, err
	}
	sh, err := p.shapeFor(ctx, s, ups)
	if err != nil {
		return nil, err
	}
	lc, err := p.newList(ctx, s, sh, ups, deltas)
	if err != nil {
		return nil, err
	}

	// The snapshot.
	var parent *int64
	seq := int64(1)
	now := p.env.Now().UnixMilli()
	if s.meta != nil {
		seq = s.meta.LastSequenceNumber + 1
		if cs := s.meta.currentSnapshot(); cs != nil {
			id := cs.SnapshotID
			parent = &id
		}
		now = max(now, s.meta.LastUpdatedMS+1)
	}
	listKey := manifestListKey(p.snapshot, attempt, p.newUUID().String()[:8])
	var buf bytes.Buffer
	if err := iceberg.WriteManifestList(2, &buf, p.snapshot, parent, &seq, 0, lc.list); err != nil {
		return nil, fmt.Errorf("encode manifest list: %w", err)
	}
	listData := p.deterministic(buf.Bytes())
	if err := p.putList(ctx, lc.puts, listKey, listData); err != nil {
		return nil, err
	}
	snap := Snapshot{
		SnapshotID: p.snapshot, ParentSnapshotID: parent, SequenceNumber: seq, TimestampMs: now,
		ManifestList: p.loc(listKey), Summary: lc.summary(ups),
	}
	if p.holding != "" && slices.ContainsFunc(ups, func(u partUpdate) bool { return u.folded }) {
		snap.Summary[leaseSummaryKey] = p.holding // a burst in progress (lease.go, inBurst)
	}
	var md *tableMetadata
	if s.meta == nil {
		md, err = firstMetadata(p.newUUID(), p.tableURI, sh.sc, *sh.spec, sh.props, snap)
	} else {
		var added *iceberg.Schema // the schema to add and make current
		if sh.changed {
			added = sh.sc
		}
		md, err = s.meta.withSnapshot(s.loc, added, sh.props, snap)
		if err == nil && s.oldRoot != "" {
			md, err = p.relocate(md, snap)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("build Iceberg metadata: %w", err)
	}
	data, err := md.encode()
	if err != nil {
		return nil, fmt.Errorf("encode Iceberg metadata: %w", err)
	}
	v := s.version + 1
	if err := p.putVersion(ctx, v, data); err != nil {
		return nil, err
	}
	next := &state{version: v, meta: md, loc: p.loc(MetadataKey(v)), list: lc.list, refs: make([]manifestRef, len(lc.list)), data: data, listData: listData}
	for i, mf := range lc.list {
		next.refs[i], _ = parseManifestPath(mf.FilePath())
	}
	return next, nil
}

// shape is what a version is written with: its schema and partition spec
// and the table's properties.
type shape struct {
	sc      *iceberg.Schema
	spec    *iceberg.PartitionSpec
	changed bool // sc is new: the version adds it and makes it current
	props   map[string]string
	digest  string // what a manifest's name says of the shape (shapeDigest)
}

// shapeFor is the shape of the version after s with ups: s's schema,
// merged with the schema of every generation whose schema fingerprint it
// has not seen (read by Options.Schema), s's spec (the first version's
// from the first partition key), the fingerprints seen (the newest 64)
// and the name mapping of the schema.
func (p *publisher) shapeFor(ctx context.Context, s *state, ups []partUpdate) (shape, error) {
	var (
		sh     shape
		lastID int
		fps    []string
	)
	if s.meta != nil {
		sh.sc, lastID = s.meta.currentSchema(), s.meta.LastColumnID
		sp := s.meta.defaultSpec()
		sh.spec = &sp
		if v := s.meta.Properties[propFingerprint]; v != "" {
			fps = strings.Split(v, ",")
		}
	}
	for _, u := range ups {
		if u.m == nil || len(u.m.Files) == 0 {
			continue
		}
		key, err := partition.Parse(u.part)
		if err != nil {
			return shape{}, err
		}
		if sh.spec != nil {
			if err := specFits(sh.spec, key); err != nil {
				return shape{}, err
			}
		}
		if fp := fingerprintHash(u.m.Schema); sh.sc == nil || u.m.Schema == "" || !slices.Contains(fps, fp) {
			nsc, changed, err := p.mergeSchema(ctx, sh.sc, lastID, u, key)
			if err != nil {
				return shape{}, err
			}
			if changed {
				sh.sc, sh.changed = nsc, true
				lastID = max(lastID, nsc.HighestFieldID())
			}
			if u.m.Schema != "" {
				fps = append(fps, fp)
			}
		}
		if sh.spec == nil {
			sp, err := partitionSpec(sh.sc, key)
			if err != nil {
				return shape{}, err
			}
			sh.spec = &sp
		}
	}
	if sh.sc == nil {
		return shape{}, errors.New("nothing to publish: no generation with files")
	}
	if len(fps) > 64 {
		fps = fps[len(fps)-64:]
	}
	nm, err := nameMapping(sh.sc)
	if err != nil {
		return shape{}, err
	}
	sh.digest = shapeDigest(sh.sc, sh.spec)
	sh.props = map[string]string{
		propFingerprint: strings.Join(fps, ","),
		propFormat:      "pswap/1",
		nameMappingKey:  nm,
	}
	return sh, nil
}

// mergeSchema merges the schema of u's generation (sourceOf: table.json's,
// or its footer's) into sc (nil: the table's first version).
func (p *publisher) mergeSchema(ctx context.Context, sc *iceberg.Schema, lastID int, u partUpdate, key partition.Key) (*iceberg.Schema, bool, error) {
	var (
		nsc     *iceberg.Schema
		changed bool
	)
	src, err := p.sourceOf(ctx, u, key)
	if err == nil {
		nsc, changed, err = buildSchema(sc, lastID, src, key)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s generation %s: %w", u.part, u.m.Generation, err)
	}
	return nsc, changed, nil
}

// listChange is a version's manifest list, the manifests it adds, and what
// its snapshot changes.
type listChange struct {
	list                       []iceberg.ManifestFile
	puts                       []*manifestPut // nil where an earlier attempt wrote it
	addFiles, addRows, addSize int64
	delFiles, delRows          int64
	// rows is the rows of the generations of appends written as append
	// manifests (whose updates hold the run's files only), by partition.
	rows map[string]int64
}

// newList is the manifest list after s with ups: every kept manifest (a
// manifest of deletions only is left out: those are the history of the
// snapshot that wrote it, not the table's state), plus one new manifest
// per group that ups change (encodeGroup), the cold manifest counting as
// one group, and the groups that mergeCold merges into the cold manifest;
// and an append manifest per append of deltas (appends.go), unless its
// group's manifest is written anyway, which then folds it in.
func (p *publisher) newList(ctx context.Context, s *state, sh shape, ups []partUpdate, deltas map[string]*appendDelta) (listChange, error) {
	lc := listChange{rows: map[string]int64{}}
	units := map[string]*groupUnit{} // by group hash (or a dropped partition's hash)
	byPart := map[string]string{}    // partHash of a changed partition -> its unit
	for _, u := range ups {
		if d := deltas[u.part]; d != nil && u.drop == "" {
			lc.addFiles += int64(len(u.m.Files))
			lc.addRows += u.m.Rows
			lc.addSize += u.m.Bytes
			lc.rows[u.part] = d.rows
			continue
		}
		id, cold := u.drop, ""
		if id == "" {
			id, cold = unitOf(s, u.part)
			byPart[partHash(u.part)] = id
			if u.m != nil {
				lc.addFiles += int64(len(u.m.Files))
				lc.addRows += u.m.Rows
				lc.addSize += u.m.Bytes
			}
		} else {
			byPart[u.drop] = id
		}
		if units[id] == nil {
			units[id] = &groupUnit{id: id, cold: cold, drop: u.drop != ""}
		}
		if u.drop == "" {
			units[id].ups = append(units[id].ups, u)
		}
	}
	// Older groups merged into their cold manifest (cold.go).
	into, err := p.mergeCold(ctx, s, units)
	if err != nil {
		return listChange{}, err
	}
	for ph, id := range byPart {
		if c, ok := into[id]; ok {
			byPart[ph] = c
		}
	}
	// Appends: folded into their group's unit when it is written anyway,
	// else an append manifest each, with the manifests it merges.
	appUnits := map[string]*appendUnit{} // by partition
	merged := map[string]*appendUnit{}   // manifestRef.id of a merged append manifest -> its unit
	for _, part := range slices.Sorted(maps.Keys(deltas)) {
		d := deltas[part]
		g := groupHash(part)
		if c, ok := into[g]; ok {
			g = c
		}
		if un := units[g]; un != nil {
			un.deltas = append(un.deltas, d)
			continue
		}
		idx, n := mergeable(s, partHash(part))
		au := &appendUnit{d: d, n: n}
		appUnits[part] = au
		for _, i := range idx {
			merged[s.refs[i].id()] = au
		}
	}
	for i, mf := range s.list {
		r := s.refs[i]
		if r.app != "" {
			// An append manifest: folded into the unit of its partition
			// or its group when one is written, merged, or kept.
			un := units[byPart[r.app]]
			if c, ok := into[r.appGroup]; ok && un == nil {
				un = units[c]
			}
			if un == nil {
				un = units[r.appGroup]
			}
			switch {
			case un != nil:
				un.olds = append(un.olds, oldManifest{mf, r})
			case merged[r.id()] != nil:
				merged[r.id()].olds = append(merged[r.id()].olds, oldManifest{mf, r})
			case liveFiles(mf) > 0:
				lc.list = append(lc.list, mf)
			}
			continue
		}
		id := byPart[r.part]
		if c, ok := into[r.id()]; ok && r.group != "" {
			id = c
		} else if r.group != "" && units[r.id()] != nil {
			id = r.id()
		}
		if id != "" {
			units[id].olds = append(units[id].olds, oldManifest{mf, r})
			continue
		}
		if liveFiles(mf) > 0 {
			lc.list = append(lc.list, mf)
		}
	}
	ids := slices.Sorted(maps.Keys(units))
	out := make([]groupOut, len(ids))
	enc, ectx := errgroup.WithContext(ctx)
	enc.SetLimit(p.opts.Concurrency)
	for i, id := range ids {
		enc.Go(func() (err error) {
			out[i], err = p.encodeGroup(ectx, sh, units[id], s.damaged)
			return err
		})
	}
	parts := slices.Sorted(maps.Keys(appUnits))
	aout := make([]groupOut, len(parts))
	for i, part := range parts {
		enc.Go(func() (err error) {
			aout[i], err = p.encodeAppend(ectx, sh, appUnits[part])
			return err
		})
	}
	if err := enc.Wait(); err != nil {
		return listChange{}, err
	}
	out = append(out, aout...)
	for _, o := range out {
		lc.delFiles += o.delFiles
		lc.delRows += o.delRows
		lc.addFiles -= o.keptFiles // an append's carried files (appendCarry)
		lc.addRows -= o.keptRows
		lc.addSize -= o.keptSize
		lc.list = append(lc.list, o.mfs...)
		lc.puts = append(lc.puts, o.puts...)
	}
	return lc, nil
}

// putList writes the new manifests and the manifest list at once: nothing
// reaches any of them before the version that names them, which is
// written only once all of them are (a failed write leaves unnamed
// objects, which the expiry deletes past its MinAge). In the order of
// puts, then the list, when Concurrency is 1.
func (p *publisher) putList(ctx context.Context, puts []*manifestPut, listKey string, listData []byte) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	put := func(write func() error) {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // another failed first: not sent
			}
			return write()
		})
	}
	for _, mp := range puts {
		if mp != nil {
			put(func() error { return p.putManifest(gctx, mp) })
		}
	}
	put(func() error { return p.putOnce(gctx, listKey, listData) })
	return g.Wait()
}

// summary is the snapshot's summary: Iceberg's counts, and pswap's
// partition, generation, sequence number, run id and rows for a commit's
// publish (one update), the partitions for a reconcile, and both (without
// rows) for a commit's publish that folded others.
func (lc listChange) summary(ups []partUpdate) map[string]string {
	var totalFiles, totalRows int64
	for _, mf := range lc.list {
		totalFiles += liveFiles(mf)
		totalRows += mf.AddedRows() + mf.ExistingRows()
	}
	op := "append"
	if lc.delFiles > 0 {
		op = "overwrite"
	}
	sum := map[string]string{
		"operation":               op,
		"added-data-files":        strconv.FormatInt(lc.addFiles, 10),
		"added-records":           strconv.FormatInt(lc.addRows, 10),
		"added-files-size":        strconv.FormatInt(lc.addSize, 10),
		"deleted-data-files":      strconv.FormatInt(lc.delFiles, 10),
		"deleted-records":         strconv.FormatInt(lc.delRows, 10),
		"total-data-files":        strconv.FormatInt(totalFiles, 10),
		"total-records":           strconv.FormatInt(totalRows, 10),
		"changed-partition-count": strconv.Itoa(len(ups)),
	}
	if len(ups) == 1 && ups[0].m != nil {
		u := ups[0]
		sum["pswap.partition"] = u.part
		sum["pswap.generation"] = u.m.Generation
		sum["pswap.seq"] = strconv.FormatInt(u.seq, 10)
		sum["pswap.run-id"] = u.m.RunID
		rows := u.m.Rows
		if r, ok := lc.rows[u.part]; ok {
			rows = r // an append manifest's update holds the run's files only
		}
		sum["pswap.rows"] = strconv.FormatInt(rows, 10)
		if u.m.RollbackOf != "" {
			sum["pswap.rollback-of"] = u.m.RollbackOf
		}
		return sum
	}
	sum["pswap.operation"] = "reconcile"
	if len(ups) > 1 && ups[len(ups)-1].folded && ups[0].m != nil {
		// A commit's publish that carried other commits (fold.go): its
		// own commit, and every partition in pswap.partitions.
		sum["pswap.operation"] = "fold"
		sum["pswap.partition"], sum["pswap.generation"] = ups[0].part, ups[0].m.Generation
		sum["pswap.seq"], sum["pswap.run-id"] = strconv.FormatInt(ups[0].seq, 10), ups[0].m.RunID
	}
	var names []string
	for _, u := range ups {
		if u.part != "" && len(names) < 20 {
			names = append(names, u.part)
		}
	}
	sum["pswap.partitions"] = strings.Join(names, ",")
	return sum
}
