package lakehouse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Manifests are grouped: the partitions of one month (one day, for a
// table partitioned finer than by day) share a manifest, so that an
// engine's plan of the whole table opens a few manifests, not one per
// partition, and its plan of one partition still skips the others by the
// manifest list's partition summaries. A publish rewrites only the group
// of the partitions it changes: the other members' entries are carried
// as existing (their snapshot and sequence numbers unchanged), the
// replaced files are recorded as deleted. What pswap knows of each member
// (the pointer's sequence number and generation it reflects, and how many
// entries are its files, in the manifest's order) is in the manifest's
// Avro header under membersKey, which readers of the Iceberg format
// ignore.
//
// Manifests written before grouping (one per partition, named after it)
// are read as they are, and a partition's moves into its group's manifest
// at its next publish.

// membersKey is the Avro header metadata key of a group manifest's members.
const membersKey = "pswap.members"

// maxMembers bounds the members a group manifest's header may list (a
// month of hourly partitions is 744).
const maxMembers = 100_000

// dateValue matches a partition value that starts with a date
// (2026-11-29, 2026-11-29T13, 2026-11-29 13:00:00...).
var dateValue = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)

// groupOf is the group of a partition: the key up to its first column
// whose value is a date, that value cut to its month (dt=2026-11-29 ->
// dt=2026-11), or to its day when the partition is finer than a day (a
// time in the value, or columns after it: dt=2026-11-29/hr=13 ->
// dt=2026-11-29). A partition without a date column is a group of its own.
func groupOf(part string) string {
	k, err := partition.Parse(part)
	if err != nil {
		return part
	}
	cols := k.Columns()
	for i, c := range cols {
		if !dateValue.MatchString(c.Value) {
			continue
		}
		v := c.Value[:7]
		if len(c.Value) > 10 || i < len(cols)-1 {
			v = c.Value[:10]
		}
		g := append(slices.Clone(cols[:i]), partition.Column{Name: c.Name, Value: v})
		gk, err := partition.New(g...)
		if err != nil {
			return part
		}
		return "group:" + gk.String()
	}
	return part
}

// groupHash names a partition's group in manifest file names.
func groupHash(part string) string { return partHash(groupOf(part)) }

// groupManifestKey names a group's manifest written under snapshot, with
// members members; digest tells apart the manifests an attempt writes
// from different manifests it replaces or generations it adds.
func groupManifestKey(group string, members int, snapshot int64, digest string) string {
	return fmt.Sprintf("%s/pswap-g%s-%d-%d-%s.avro", MetadataDir, group, members, snapshot, digest)
}

// shapeDigest is what a manifest's name says of the shape it is encoded
// with: the schema it embeds and the spec that types its partition values
// (an attempt that plans again may publish another: table.json appeared, a
// rival's version evolved the schema), so that a later attempt reuses a
// manifest only when written as it would write it. shapeFor computes it
// once per attempt.
func shapeDigest(sc *iceberg.Schema, spec *iceberg.PartitionSpec) string {
	return fmt.Sprintf("shape\x00%d\x00%s\x00%d\x00%s", sc.ID, sc, spec.ID(), spec)
}

// member is what a group manifest records of a partition.
type member struct {
	part  string
	seq   int64  // the pointer's sequence number of the generation
	gen   string // the generation
	files int    // its live entries, consecutive in the manifest
}

// newer reports whether the member reflects the pointer (seq, gen) or a
// later one.
func (m member) newer(seq int64, gen string) bool {
	return m.seq > seq || m.seq == seq && m.gen == gen
}

// encodeMembers is the header value of a group manifest's members.
func encodeMembers(ms []member) []byte {
	type doc struct {
		Partition  string `json:"partition"`
		Seq        int64  `json:"seq"`
		Generation string `json:"generation"`
		Files      int    `json:"files"`
	}
	docs := make([]doc, len(ms))
	for i, m := range ms {
		docs[i] = doc{m.part, m.seq, m.gen, m.files}
	}
	data, _ := json.Marshal(struct {
		Version string `json:"version"`
		Members []doc  `json:"members"`
	}{"1", docs})
	return data
}

// errMembers is a group manifest header that does not parse.
var errMembers = errors.New("bad pswap.members")

// decodeMembers reads a group manifest's members strictly.
func decodeMembers(data []byte) ([]member, error) {
	fields, prob := strictjson.Parse(data, strictjson.Limits{MaxBytes: 64 << 20, MaxDepth: 4})
	if prob != nil {
		return nil, fmt.Errorf("%w: %v", errMembers, prob)
	}
	r := strictjson.NewReader(fields, "1")
	r.Known("version", "members")
	if v := r.Str("version", true); r.Err() == nil && v != "1" {
		r.Fail("version", "unknown version %q", v)
	}
	var out []member
	seen := map[string]bool{}
	for _, mr := range r.Objects("members", maxMembers, "members") {
		mr.Known("partition", "seq", "generation", "files")
		m := member{
			part: mr.Str("partition", true), seq: mr.Int("seq", 64),
			gen: mr.Str("generation", true), files: int(mr.Int("files", 32)),
		}
		switch {
		case mr.Err() != nil:
		case partition.Validate(m.part) != nil:
			mr.Fail("partition", "not a partition key: %q", m.part)
		case seen[m.part]:
			mr.Fail("partition", "%s listed twice", m.part)
		case m.seq <= 0:
			mr.Fail("seq", "must be positive, not %d", m.seq)
		case m.files <= 0:
			mr.Fail("files", "must be positive, not %d", m.files)
		case len(out) > 0 && out[len(out)-1].part >= m.part:
			mr.Fail("partition", "members out of order at %s", m.part)
		}
		seen[m.part] = true
		out = append(out, m)
	}
	if p := r.Err(); p != nil {
		return nil, fmt.Errorf("%w: %v", errMembers, p)
	}
	return out, nil
}

// groupContent is a group manifest's members and their live entries.
type groupContent struct {
	members []member
	entries [][]iceberg.ManifestEntry // by member
}

// find returns the member of part, or false.
func (gc *groupContent) find(part string) (member, bool) {
	i, ok := slices.BinarySearchFunc(gc.members, part, func(m member, p string) int { return strings.Compare(m.part, p) })
	if !ok {
		return member{}, false
	}
	return gc.members[i], true
}

// parseGroup reads a group manifest: its members from the header, its
// live entries split among them.
func parseGroup(mf iceberg.ManifestFile, data []byte) (*groupContent, error) {
	h, ok := parseAvroHeader(data)
	if !ok {
		return nil, fmt.Errorf("%s: %w: not an Avro file", mf.FilePath(), ErrCorrupt)
	}
	gc := &groupContent{}
	raw := h.value(membersKey)
	if z := h.value(membersDeflateKey); raw == nil && z != nil {
		var err error
		if raw, err = inflateMembers(z); err != nil {
			return nil, fmt.Errorf("%s: %w: %s: %v", mf.FilePath(), ErrCorrupt, membersDeflateKey, err)
		}
	}
	if raw != nil {
		var err error
		if gc.members, err = decodeMembers(raw); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", mf.FilePath(), ErrCorrupt, err)
		}
	} else if liveFiles(mf) > 0 {
		return nil, fmt.Errorf("%s: %w: a group manifest without %s", mf.FilePath(), ErrCorrupt, membersKey)
	}
	live, err := readEntries(mf, data)
	if err != nil {
		return nil, err
	}
	for _, m := range gc.members {
		if m.files > len(live) {
			break
		}
		gc.entries = append(gc.entries, live[:m.files])
		live = live[m.files:]
	}
	if len(gc.entries) != len(gc.members) || len(live) != 0 {
		return nil, fmt.Errorf("%s: %w: its %s do not account for its live entries", mf.FilePath(), ErrCorrupt, membersKey)
	}
	return gc, nil
}

// readGroup reads a group manifest once per publish (it never changes
// under its name). A missing one is corrupt: its members' files would
// drop out of the table (a reconcile writes a damaged group anew from the
// pointers instead of reading it).
func (p *publisher) readGroup(ctx context.Context, mf iceberg.ManifestFile) (*groupContent, error) {
	p.pendingGroups(ctx)
	p.mu.Lock()
	gc, ok := p.groups[mf.FilePath()]
	p.mu.Unlock()
	if ok {
		return gc, nil
	}
	k, err := p.keyOf(mf.FilePath())
	if err != nil {
		return nil, fmt.Errorf("%w: manifest %v", ErrCorrupt, err)
	}
	var data []byte
	err = p.retryRead(ctx, func() (err error) {
		data, _, err = store.ReadAll(ctx, p.st, k)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w: the manifest is missing (pswap publish writes it anew from the pointers)", mf.FilePath(), ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", mf.FilePath(), err)
	}
	if gc, err = parseGroup(mf, data); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.groups[mf.FilePath()] = gc
	p.mu.Unlock()
	return gc, nil
}

// recorded is what the version s reflects of a partition: its member
// record in its group's manifest, or its manifest of its own (written
// before grouping); have is false when s has neither. A group manifest
// not read yet is read (recordedIn).
func (p *publisher) recorded(ctx context.Context, s *state, part string) (m member, have bool, err error) {
	return p.recordedIn(ctx, s, part, true)
}

// recordedIn is recorded, the newest record of part in s. With read, a
// group manifest with live files that this publish has not read yet is
// read (I/O); without it, only the group manifests already read count,
// and nothing fails.
func (p *publisher) recordedIn(ctx context.Context, s *state, part string, read bool) (m member, have bool, err error) {
	ph, holds := partHash(part), holder(s.refs, part)
	if r, ok := newestAppend(s, ph); ok {
		// Its append manifests are newer than its group's member (a
		// publish that writes the member anew folds them): no read.
		return member{part: part, seq: r.seq, gen: r.gen}, true, nil
	}
	for i, r := range s.refs {
		var rec member
		ok := false
		switch {
		case r.part == ph:
			rec, ok = member{part: part, seq: r.seq, gen: r.gen}, true
		case !holds(r):
		case read && liveFiles(s.list[i]) > 0:
			gc, err := p.readGroup(ctx, s.list[i])
			if err != nil {
				return member{}, false, err
			}
			rec, ok = gc.find(part)
		case !read:
			p.mu.Lock()
			gc := p.groups[s.list[i].FilePath()]
			p.mu.Unlock()
			if gc != nil {
				rec, ok = gc.find(part)
			}
		}
		if ok && (!have || rec.seq > m.seq) {
			m, have = rec, true
		}
	}
	return m, have, nil
}

// existing is a carried member's entries, as existing in a new manifest:
// they keep the snapshot and sequence numbers they were added with.
func existing(entries []iceberg.ManifestEntry) []iceberg.ManifestEntry {
	return restated(entries, iceberg.EntryStatusEXISTING, nil)
}

// deleted is a replaced member's entries, as deleted by this publish's
// snapshot (the data and file sequence numbers they were added with).
func (p *publisher) deleted(entries []iceberg.ManifestEntry) []iceberg.ManifestEntry {
	snap := p.snapshot
	return restated(entries, iceberg.EntryStatusDELETED, &snap)
}

// restated is entries with another status, in the snapshot snap (nil: each
// keeps its own), keeping the data and file sequence numbers they were
// added with.
func restated(entries []iceberg.ManifestEntry, status iceberg.ManifestEntryStatus, snap *int64) []iceberg.ManifestEntry {
	out := make([]iceberg.ManifestEntry, len(entries))
	for i, e := range entries {
		id := e.SnapshotID()
		if snap != nil {
			id = *snap
		}
		var dataSeq *int64
		if seq := e.SequenceNum(); seq >= 0 {
			dataSeq = &seq
		}
		out[i] = iceberg.NewManifestEntry(status, &id, dataSeq, e.FileSequenceNum(), e.DataFile())
	}
	return out
}

// groupUnit is a group's manifest to write: the updates of its members
// and the manifests it replaces (the group's, and its changed members'
// own manifests written before grouping). A partition dropped without a
// pointer whose manifest was its own is a unit of its own (id: its hash).
type groupUnit struct {
	id   string
	ups  []partUpdate
	olds []oldManifest
	// cold is the watermark of a cold manifest's unit (cold.go), "" for
	// a group's.
	cold string
	// deltas are appends of partitions of the unit that it folds in
	// (appends.go): their files added, the partitions' records theirs.
	deltas []*appendDelta
	// drop: the unit of a partition dropped without a pointer (its
	// manifests' entries recorded as deleted, its append manifests' too).
	drop bool
}

// groupOut is a group's encoded manifests: one, several for a cold
// manifest cut at coldCap, none when the group has nothing to record;
// puts[i] is nil when an earlier attempt wrote mfs[i].
type groupOut struct {
	mfs               []iceberg.ManifestFile
	puts              []*manifestPut
	delFiles, delRows int64
	// keptFiles, keptRows and keptSize count the files of appends'
	// generations that their partitions' old entries already listed:
	// carried as existing, not added (appendCarry).
	keptFiles, keptRows, keptSize int64
}

// encodeGroup encodes a group's new manifest: the members it carries
// (as existing entries), the generations of its changed members (added),
// and the files they replace (deleted), so that readers of the snapshot's
// changes see what a swap removed. A manifest is written once per
// publish and reused across rebases while it replaces the same manifests
// with the same generations in the same shape (its name says so).
func (p *publisher) encodeGroup(ctx context.Context, sh shape, un *groupUnit, damaged map[string]bool) (groupOut, error) {
	var out groupOut
	changed := map[string]bool{}
	var digest []string
	for _, u := range un.ups {
		changed[u.part] = true
		gen := ""
		if u.m != nil {
			gen = u.m.Generation
		}
		digest = append(digest, fmt.Sprintf("%s\x00%d\x00%s", u.part, u.seq, gen))
	}
	for _, d := range un.deltas {
		digest = append(digest, fmt.Sprintf("%s\x00%d\x00%s", d.u.part, d.u.seq, d.u.m.Generation))
	}
	type carried struct {
		m       member
		entries []iceberg.ManifestEntry // nil: the update's, added
		u       partUpdate
	}
	var (
		members []carried
		dels    []iceberg.ManifestEntry
	)
	ac := p.appendCarry(un.ups)
	// The records and entries of append manifests (appends.go) of members
	// carried: folded into their members.
	type folded struct {
		m       member
		entries []iceberg.ManifestEntry
	}
	apps := map[string]*folded{}
	fold := func(m member, es []iceberg.ManifestEntry) {
		a := apps[m.part]
		if a == nil {
			a = &folded{m: m}
			apps[m.part] = a
		} else if m.seq > a.m.seq {
			a.m.seq, a.m.gen = m.seq, m.gen
		}
		a.entries = append(a.entries, es...)
	}
	for _, o := range un.olds {
		digest = append(digest, o.mf.FilePath())
		switch {
		case damaged[o.ref.id()]:
			// Missing or truncated: its members are written anew from
			// their pointers; nothing of it can be recorded as deleted.
		case o.ref.app != "":
			gc, err := p.readGroup(ctx, o.mf)
			if err != nil {
				return groupOut{}, err
			}
			for i, m := range gc.members {
				if changed[m.part] || un.drop {
					gone := ac.keep(gc.entries[i])
					dels = append(dels, p.deleted(gone)...)
					for _, e := range gone {
						out.delFiles, out.delRows = out.delFiles+1, out.delRows+e.DataFile().Count()
					}
					continue
				}
				fold(m, existing(gc.entries[i]))
			}
		case o.ref.group != "":
			gc, err := p.readGroup(ctx, o.mf)
			if err != nil {
				return groupOut{}, err
			}
			for i, m := range gc.members {
				if changed[m.part] {
					gone := ac.keep(gc.entries[i])
					dels = append(dels, p.deleted(gone)...)
					for _, e := range gone {
						out.delFiles, out.delRows = out.delFiles+1, out.delRows+e.DataFile().Count()
					}
					continue
				}
				members = append(members, carried{m: m, entries: existing(gc.entries[i])})
			}
		default:
			if len(ac.paths) == 0 {
				out.delFiles += liveFiles(o.mf)
				out.delRows += o.mf.AddedRows() + o.mf.ExistingRows()
				d, err := p.deletedEntries(ctx, o.mf)
				if err != nil {
					return groupOut{}, err
				}
				dels = append(dels, d...)
				break
			}
			var live []iceberg.ManifestEntry
			err := p.retryRead(ctx, func() (err error) {
				live, err = p.liveEntries(ctx, o.mf)
				return err
			})
			if err != nil {
				return groupOut{}, err
			}
			gone := ac.keep(live)
			for _, e := range gone {
				out.delFiles, out.delRows = out.delFiles+1, out.delRows+e.DataFile().Count()
			}
			dels = append(dels, p.deleted(gone)...)
		}
	}
	for _, d := range un.deltas {
		es, err := p.addedEntries(ctx, sh.sc, sh.spec, d.u)
		if err != nil {
			return groupOut{}, err
		}
		fold(member{part: d.u.part, seq: d.u.seq, gen: d.u.m.Generation}, es)
	}
	for i := range members {
		if a := apps[members[i].m.part]; a != nil {
			members[i].entries = append(slices.Clip(members[i].entries), a.entries...)
			if a.m.seq > members[i].m.seq {
				members[i].m.seq, members[i].m.gen = a.m.seq, a.m.gen
			}
			delete(apps, members[i].m.part)
		}
	}
	for _, part := range slices.Sorted(maps.Keys(apps)) {
		// Appends whose partition's member is in no manifest of the unit
		// (its group's manifest damaged): their files alone.
		a := apps[part]
		members = append(members, carried{m: a.m, entries: a.entries})
	}
	for _, u := range un.ups {
		if u.m != nil && len(u.m.Files) > 0 {
			c := carried{m: member{part: u.part, seq: u.seq, gen: u.m.Generation, files: len(u.m.Files)}, u: u}
			if ks := ac.kept[u.part]; len(ks) > 0 {
				es, kf, kr, kb, err := p.appendEntries(ctx, sh, u, ks)
				if err != nil {
					return groupOut{}, err
				}
				c.entries = es
				out.keptFiles, out.keptRows, out.keptSize = out.keptFiles+kf, out.keptRows+kr, out.keptSize+kb
			}
			members = append(members, c)
		}
	}
	if len(members) == 0 && len(dels) == 0 {
		return out, nil
	}
	slices.SortFunc(members, func(a, b carried) int { return strings.Compare(a.m.part, b.m.part) })
	digest = append(digest, sh.digest)
	slices.Sort(digest)
	sum := partHash(strings.Join(digest, "\n"))[:8]
	// One manifest, or a cold unit's segments of at most coldCap entries
	// (cold.go), its deletions in the newest.
	cuts := []coldCut{{to: len(members)}}
	if un.cold != "" {
		vals, sizes := make([]string, len(members)), make([]int, len(members))
		for i, c := range members {
			d, _ := datedOf(c.m.part)
			vals[i], sizes[i] = d.value, c.m.files
			if c.entries != nil {
				sizes[i] = len(c.entries)
			}
		}
		// By value, then by name (a prefix's partitions sort by value
		// anyway), and cut.
		om, oz := slices.Clone(members), slices.Clone(sizes)
		for i, j := range sortedByValue(vals) {
			members[i], sizes[i] = om[j], oz[j]
		}
		cuts = coldCuts(vals, sizes, un.cold)
	}
	for ci, cut := range cuts {
		n := cut.to - cut.from
		key := groupManifestKey(un.id, n, p.snapshot, sum)
		if un.cold != "" {
			key = coldManifestKey(coldHashOf(un.id), cut.mark, n, p.snapshot, sum)
		}
		p.mu.Lock()
		mf := p.written[key]
		p.mu.Unlock()
		if mf != nil {
			out.mfs, out.puts = append(out.mfs, mf), append(out.puts, nil)
			continue
		}
		var entries []iceberg.ManifestEntry
		ms := make([]member, n)
		for i, c := range members[cut.from:cut.to] {
			es := c.entries
			if es == nil {
				var err error
				if es, err = p.addedEntries(ctx, sh.sc, sh.spec, c.u); err != nil {
					return groupOut{}, err
				}
			}
			ms[i] = c.m
			ms[i].files = len(es)
			entries = append(entries, es...)
		}
		if ci == len(cuts)-1 {
			entries = append(entries, dels...)
		}
		data, mf, err := p.writeManifest(key, sh, entries, ms, un.cold != "")
		if err != nil {
			return groupOut{}, fmt.Errorf("encode manifest %s: %w", key, err)
		}
		out.mfs, out.puts = append(out.mfs, mf), append(out.puts, &manifestPut{key: key, data: data, mf: mf})
	}
	return out, nil
}

// writeManifest encodes a group manifest of entries, with its members in
// the header (deflated for a cold manifest, which holds most of the
// table's: every engine's plan reads the header whole).
func (p *publisher) writeManifest(key string, sh shape, entries []iceberg.ManifestEntry, ms []member, cold bool) ([]byte, iceberg.ManifestFile, error) {
	var buf bytes.Buffer
	w, err := iceberg.NewManifestWriter(2, &buf, *sh.spec, sh.sc, p.snapshot)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		switch e.Status() {
		case iceberg.EntryStatusADDED:
			err = w.Add(e)
		case iceberg.EntryStatusEXISTING:
			err = w.Existing(e)
		default:
			err = w.Delete(e)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	data := buf.Bytes()
	if len(ms) > 0 {
		k, v := membersKey, encodeMembers(ms)
		if cold {
			k, v = membersDeflateKey, deflateMembers(v)
		}
		if data, err = withAvroMeta(data, k, v); err != nil {
			return nil, nil, err
		}
	}
	data = p.deterministic(data)
	mf, err := w.ToManifestFile(p.loc(key), int64(len(data)))
	return data, mf, err
}

// appendCarried is what the files of appends' generations (manifest kind
// append) carry over from their partitions' old entries.
type appendCarried struct {
	paths map[string]string                  // data file location -> partition, of the appends' files
	kept  map[string][]iceberg.ManifestEntry // partition -> its old entries still listed, as existing
}

// appendCarry collects the data file locations of the updates that are
// appends: their old entries for those files are carried as existing,
// and only the rest of their files are added (appendEntries). An append
// so publishes a snapshot that adds the run's files and deletes nothing.
func (p *publisher) appendCarry(ups []partUpdate) *appendCarried {
	ac := &appendCarried{paths: map[string]string{}, kept: map[string][]iceberg.ManifestEntry{}}
	for _, u := range ups {
		if u.m == nil || u.m.Kind != manifest.KindAppend {
			continue
		}
		for _, f := range swap.Files(p.st, u.m) {
			ac.paths[p.loc(f.Key)] = u.part
		}
	}
	return ac
}

// keep records the entries an append still lists as carried, and returns
// the others (replaced: to be recorded as deleted).
func (ac *appendCarried) keep(entries []iceberg.ManifestEntry) []iceberg.ManifestEntry {
	if len(ac.paths) == 0 {
		return entries
	}
	var gone []iceberg.ManifestEntry
	for _, e := range entries {
		if part, ok := ac.paths[e.DataFile().FilePath()]; ok {
			ac.kept[part] = append(ac.kept[part], existing([]iceberg.ManifestEntry{e})...)
			continue
		}
		gone = append(gone, e)
	}
	return gone
}

// appendEntries are an append's entries: its old entries still listed
// (kept, existing) and its other files, added. It returns the kept
// files' count, rows and size.
func (p *publisher) appendEntries(ctx context.Context, sh shape, u partUpdate, kept []iceberg.ManifestEntry) ([]iceberg.ManifestEntry, int64, int64, int64, error) {
	have := make(map[string]bool, len(kept))
	var rows, size int64
	for _, e := range kept {
		have[e.DataFile().FilePath()] = true
		rows += e.DataFile().Count()
		size += e.DataFile().FileSizeBytes()
	}
	nm := *u.m
	nm.Files = nil
	for i, f := range swap.Files(p.st, u.m) {
		if !have[p.loc(f.Key)] {
			nm.Files = append(nm.Files, u.m.Files[i])
		}
	}
	nu := u
	nu.m = &nm
	added, err := p.addedEntries(ctx, sh.sc, sh.spec, nu)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return append(slices.Clip(kept), added...), int64(len(kept)), rows, size, nil
}
