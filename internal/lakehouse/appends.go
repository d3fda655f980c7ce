package lakehouse

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Append manifests. The publish of an append (a generation of kind
// append whose parent is what the view records of its partition) writes
// no group manifest: it writes one small manifest of the run's files
// alone (added), named after the partition, the append's pointer
// sequence number and generation, how many appends it holds and how many
// files the partition has after it:
//
//	pswap-ap<group>-<partition>-<seq>-<generation>-<appends>-<files>-<snapshot>-<digest>.avro
//
// and a manifest list that carries every other manifest's record as it
// was (no manifest of the partition's earlier files is read or written).
// Its Avro header lists its one member (pswap.members, as a group's), the
// partition at the append's sequence number and generation: a
// partition's record is its newest append manifest's if it has any, else
// its group's member (recordedIn), and its files are the group member's
// and those of its append manifests. The run's files are the last ones of
// the generation's file list: the files the head (manifest 2.0) adds to
// its parent's count, which the newest append manifest's name gives (or
// the group member's), read from the head's tail and, when the tail is
// shorter, from its newest segments only (lastFiles): the publish of an
// append never expands the head.
//
// Bounded merging: a partition's append manifests are merged as a
// counter of base appendFanout: when a new append finds appendFanout-1
// manifests of one append each, it writes one manifest of appendFanout
// appends (their entries carried as existing, its own added) instead, and
// so on up the levels (mergeable). A partition of N appends has at most
// (appendFanout-1) log N append manifests, each file is rewritten at most
// log N times, and an append reads at most appendFanout-1 manifests per
// level it merges (beside the pointer, readReplaced): on average one GET
// and a constant number of entries written per append.
//
// Append manifests live beside their group's manifest while it is hot:
// any publish that writes the group's manifest anew (another partition's
// commit in the group, a replace of the partition, a merge of the group
// into its cold manifest) folds the group's append manifests into it (the
// carried partitions' entries as existing, a replaced partition's as
// deleted), so the manifest list holds append manifests of the hot
// groups only. The publish of an append to a partition of a cold manifest,
// to a partition whose view lags more than one append, or whose
// partition's manifests a reconcile found damaged, takes the path of any
// commit (the group's manifest written anew, the files the view already
// lists carried as existing: appendCarry).

// appendFanout is the base of the merging of append manifests (a variable
// for the tests).
var appendFanout = 4

// appendID is an append manifest's manifestRef.id.
func appendID(partHash string, seq int64) string { return fmt.Sprintf("ap:%s:%d", partHash, seq) }

// appendManifestKey names an append manifest (see parseAppendName).
func appendManifestKey(group, part string, seq int64, gen string, appends, files int, snapshot int64, digest string) string {
	return fmt.Sprintf("%s/pswap-ap%s-%s-%d-%s-%d-%d-%d-%s.avro", MetadataDir, group, part, seq, gen, appends, files, snapshot, digest)
}

// parseAppendName reads the rest of an append manifest's name:
// <group16>-<part16>-<seq>-<generation>-<appends>-<files>-<snapshot>-<digest8>.
func parseAppendName(name string) (manifestRef, bool) {
	f := strings.Split(name, "-")
	if len(f) != 12 || len(f[0]) != 16 || len(f[1]) != 16 || len(f[11]) != 8 {
		return manifestRef{}, false
	}
	for _, h := range []string{f[0], f[1], f[11]} {
		if _, err := hex.DecodeString(h); err != nil || strings.ToLower(h) != h {
			return manifestRef{}, false
		}
	}
	num := func(s string) (int64, bool) {
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil && v > 0 && strconv.FormatInt(v, 10) == s
	}
	seq, ok1 := num(f[2])
	n, ok2 := num(f[8])
	total, ok3 := num(f[9])
	_, ok4 := num(f[10])
	gen := strings.Join(f[3:8], "-")
	if !ok1 || !ok2 || !ok3 || !ok4 || n > 1<<30 || total > manifest.MaxFiles || manifest.ValidateGenerationID(gen) != nil {
		return manifestRef{}, false
	}
	return manifestRef{app: f[1], appGroup: f[0], seq: seq, gen: gen, appN: int(n), appTotal: int(total)}, true
}

// appendsOf is the indices in s of ph's append manifests, oldest first.
func appendsOf(s *state, ph string) []int {
	var out []int
	for i, r := range s.refs {
		if r.app == ph {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		switch sa, sb := s.refs[a].seq, s.refs[b].seq; {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	})
	return out
}

// newestAppend is the record of ph's newest append manifest in s.
func newestAppend(s *state, ph string) (manifestRef, bool) {
	var best manifestRef
	for _, r := range s.refs {
		if r.app == ph && r.seq > best.seq {
			best = r
		}
	}
	return best, best.app != ""
}

// mergeable is the indices in s of the append manifests of ph that the
// next append manifest of ph merges (oldest first), and how many appends
// that manifest then holds: the trailing run of appendFanout-1 manifests
// of one append, then of appendFanout appends, and so on.
func mergeable(s *state, ph string) ([]int, int) {
	apps := appendsOf(s, ph)
	var out []int
	n, i := 1, len(apps)
	for appendFanout > 1 {
		j := i
		for j > 0 && s.refs[apps[j-1]].appN == n {
			j--
		}
		if i-j < appendFanout-1 {
			break
		}
		j = i - (appendFanout - 1)
		out = append(apps[j:i:i], out...)
		i, n = j, n*appendFanout
	}
	return out, n
}

// readMergeable starts reading the append manifests of part that its
// next append manifest would merge, beside the reads of a publish's plan
// (readReplaced); it reports whether part has append manifests (its
// group's manifest is then read only if the publish turns out to need it).
func (p *publisher) readMergeable(ctx context.Context, g *errgroup.Group, s *state, part string) bool {
	ph := partHash(part)
	if _, ok := newestAppend(s, ph); !ok {
		return false
	}
	idx, _ := mergeable(s, ph)
	for _, i := range idx {
		mf := s.list[i]
		g.Go(func() error {
			if ctx.Err() == nil {
				_, _ = p.readGroup(ctx, mf)
			}
			return nil
		})
	}
	return true
}

// appendDelta is an append that a publish writes as an append manifest:
// u's manifest holds the run's files alone (its rows and bytes theirs),
// total and rows are the generation's (every file of the partition).
type appendDelta struct {
	u     partUpdate
	total int
	rows  int64
}

// appendDeltaOf returns the append manifest's delta of u, or nil when u
// takes the path of any commit: not an append, an append whose parent is
// not what s records of its partition, a partition of a cold manifest, of
// a manifest of its own (written before grouping) or with a damaged
// manifest.
func (p *publisher) appendDeltaOf(ctx context.Context, s *state, u partUpdate) (*appendDelta, error) {
	if u.drop != "" || u.m == nil || u.m.Kind != manifest.KindAppend || u.m.Parent == "" {
		return nil, nil
	}
	id, cold := unitOf(s, u.part)
	if cold != "" || s.damaged[id] {
		return nil, nil
	}
	ph := partHash(u.part)
	for _, r := range s.refs {
		if r.part == ph || r.app == ph && s.damaged[r.id()] {
			return nil, nil
		}
	}
	var parent member
	parentFiles := 0
	if r, ok := newestAppend(s, ph); ok {
		parent, parentFiles = member{part: u.part, seq: r.seq, gen: r.gen}, r.appTotal
	} else {
		gh := groupHash(u.part)
		found := false
		for i, r := range s.refs {
			if r.group != gh || r.cold != "" || liveFiles(s.list[i]) == 0 {
				continue
			}
			gc, err := p.readGroup(ctx, s.list[i])
			if err != nil {
				return nil, err
			}
			if m, ok := gc.find(u.part); ok {
				parent, parentFiles, found = m, m.files, true
			}
		}
		if !found {
			return nil, nil
		}
	}
	k := u.m.FileCount() - parentFiles
	if parent.gen != u.m.Parent || parent.seq >= u.seq || k <= 0 {
		return nil, nil
	}
	files, err := p.lastFiles(ctx, u.m, k)
	if err != nil {
		return nil, err
	}
	run := *u.m
	run.Segments, run.Content = nil, manifest.Content{Schema: u.m.Schema, ContentChecksum: u.m.ContentChecksum}
	for _, f := range files {
		run.Add(f)
	}
	d := &appendDelta{u: u, total: u.m.FileCount(), rows: u.m.Rows}
	d.u.m = &run
	return d, nil
}

// lastFiles is the last k files of m's file list: from its tail, and for
// a head whose tail is shorter, from its newest segments (the right edge
// of the segment tree: a few GETs at most, never the whole list).
func (p *publisher) lastFiles(ctx context.Context, m *manifest.Manifest, k int) ([]manifest.File, error) {
	if k <= len(m.Files) {
		return slices.Clone(m.Files[len(m.Files)-k:]), nil
	}
	need := k - len(m.Files)
	prefix := layout.DataPrefixOf(m)
	var chunks [][]manifest.File // newest first
	var walk func(refs []manifest.SegmentRef) error
	walk = func(refs []manifest.SegmentRef) error {
		for i := len(refs) - 1; i >= 0 && need > 0; i-- {
			r := refs[i]
			key := manifest.SegmentKey(prefix, r.ID)
			var data []byte
			err := p.retryRead(ctx, func() (err error) {
				data, _, err = store.ReadAll(ctx, p.st, key)
				return err
			})
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%s generation %s: segment %s: %w: %w", m.Partition, m.Generation, key, swap.ErrCorrupt, err)
			}
			if err != nil {
				return fmt.Errorf("read segment %s: %w", key, err)
			}
			seg, err := manifest.DecodeSegment(data, r)
			if err != nil {
				return fmt.Errorf("%s generation %s: segment %s: %w: %w", m.Partition, m.Generation, key, swap.ErrCorrupt, err)
			}
			if seg.Level == 0 {
				take := min(need, len(seg.Files))
				chunks = append(chunks, seg.Files[len(seg.Files)-take:])
				need -= take
				continue
			}
			if err := walk(seg.Segments); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m.Segments); err != nil {
		return nil, err
	}
	if need > 0 {
		return nil, fmt.Errorf("%s generation %s: %w: its segments hold fewer files than it counts", m.Partition, m.Generation, swap.ErrCorrupt)
	}
	out := make([]manifest.File, 0, k)
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	return append(out, m.Files...), nil
}

// commitManifest is the manifest of the generation a PublishCommit
// publishes: given, else read. An append's head (manifest 2.0) whose
// parent is rec, what the view records of the partition, is returned as
// it is (the publish needs the run's files only: appendDeltaOf); any other
// is expanded, as p.manifest does.
func (p *publisher) commitManifest(ctx context.Context, part, gen string, given *manifest.Manifest, rec member, have bool) (*manifest.Manifest, error) {
	if given != nil {
		return given, nil
	}
	p.mu.Lock()
	m := p.manifests[gen]
	p.mu.Unlock()
	if m != nil {
		return m, nil
	}
	err := p.retryRead(ctx, func() (err error) {
		m, _, err = swap.ReadManifestHead(ctx, p.st, part, gen)
		return err
	})
	if err != nil {
		return nil, err
	}
	if m.Segmented() && m.Kind == manifest.KindAppend && have && rec.gen == m.Parent {
		return m, nil // not cached: p.manifest's are expanded
	}
	if err := p.retryRead(ctx, func() error { return swap.ExpandManifest(ctx, p.st, m) }); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.manifests[gen] = m
	p.mu.Unlock()
	return m, nil
}

// resolveAppends splits ups into the appends written as append manifests
// (by partition) and the others, whose heads it expands: every other path
// lists a generation's files whole.
func (p *publisher) resolveAppends(ctx context.Context, s *state, ups []partUpdate) ([]partUpdate, map[string]*appendDelta, error) {
	out := slices.Clone(ups)
	deltas := map[string]*appendDelta{}
	for i, u := range out {
		d, err := p.appendDeltaOf(ctx, s, u)
		if err != nil {
			return nil, nil, err
		}
		if d != nil {
			deltas[u.part] = d
			out[i] = d.u
			continue
		}
		if u.m != nil && u.m.Segmented() {
			m := *u.m
			m.Files = slices.Clone(u.m.Files)
			m.Segments = slices.Clone(u.m.Segments)
			if err := p.retryRead(ctx, func() error { return swap.ExpandManifest(ctx, p.st, &m) }); err != nil {
				return nil, nil, err
			}
			out[i].m = &m
		}
	}
	return out, deltas, nil
}

// appendUnit is an append manifest to write: the delta and the append
// manifests of its partition it merges.
type appendUnit struct {
	d    *appendDelta
	olds []oldManifest
	n    int // the appends it holds
}

// encodeAppend encodes an append manifest: the merged manifests' entries
// as existing (their snapshots and sequence numbers kept), the run's files
// added. It is reused across rebases while it merges the same manifests
// in the same shape (its name says so).
func (p *publisher) encodeAppend(ctx context.Context, sh shape, au *appendUnit) (groupOut, error) {
	u := au.d.u
	slices.SortFunc(au.olds, func(a, b oldManifest) int {
		switch {
		case a.ref.seq < b.ref.seq:
			return -1
		case a.ref.seq > b.ref.seq:
			return 1
		}
		return 0
	})
	digest := []string{fmt.Sprintf("%s\x00%d\x00%s", u.part, u.seq, u.m.Generation), sh.digest}
	for _, o := range au.olds {
		digest = append(digest, o.mf.FilePath())
	}
	sum := partHash(strings.Join(digest, "\n"))[:8]
	key := appendManifestKey(groupHash(u.part), partHash(u.part), u.seq, u.m.Generation, au.n, au.d.total, p.snapshot, sum)
	p.mu.Lock()
	mf := p.written[key]
	p.mu.Unlock()
	if mf != nil {
		return groupOut{mfs: []iceberg.ManifestFile{mf}, puts: []*manifestPut{nil}}, nil
	}
	var entries []iceberg.ManifestEntry
	for _, o := range au.olds {
		gc, err := p.readGroup(ctx, o.mf)
		if err != nil {
			return groupOut{}, err
		}
		for _, es := range gc.entries {
			entries = append(entries, existing(es)...)
		}
	}
	added, err := p.addedEntries(ctx, sh.sc, sh.spec, u)
	if err != nil {
		return groupOut{}, err
	}
	entries = append(entries, added...)
	ms := []member{{part: u.part, seq: u.seq, gen: u.m.Generation, files: len(entries)}}
	data, mf, err := p.writeManifest(key, sh, entries, ms, false)
	if err != nil {
		return groupOut{}, fmt.Errorf("encode manifest %s: %w", key, err)
	}
	return groupOut{mfs: []iceberg.ManifestFile{mf}, puts: []*manifestPut{{key: key, data: data, mf: mf}}}, nil
}

// appendsDamaged reports whether a reconcile found one of ph's append
// manifests damaged: the partition is then written anew from its pointer.
func appendsDamaged(s *state, ph string) bool {
	for _, r := range s.refs {
		if r.app == ph && s.damaged[r.id()] {
			return true
		}
	}
	return false
}
