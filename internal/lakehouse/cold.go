package lakehouse

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/partition"
)

// Cold manifests. The groups of a date column (group.go) keep a plan of
// one partition cheap for engines that prune by the manifest list, but a
// plan of the whole table still opens one manifest per month, and an
// engine that prunes nothing by the list (DuckDB) opens every one of them
// for any query. So, as Iceberg's own manifest merging does, the groups
// older than the newest (keepHot) are merged into the cold manifests of
// their prefix (the partition columns before the date column, none for a
// table partitioned by date only): a table of daily partitions is the
// newest month's manifest and one cold manifest per coldCap files.
//
// A cold manifest is named after its prefix (coldHash), its watermark
// (the newest group value it holds: 2026-10, or 2026-10-29 for groups of
// a day), its number of members, the snapshot and a digest:
// pswap-c<cold>-<202610>-<members>-<snapshot>-<digest>.avro. Its members
// are in its Avro header like a group's. A partition of the prefix whose
// group value is at most the newest watermark belongs to a cold manifest
// (unitOf, coldOf), every other to its group's: the names alone say where
// a partition is, no manifest is read to know it.
//
// When a merge happens: in a reconcile (`pswap publish`, which reads every
// group's manifest anyway), and in the publish of a commit that starts a
// new group (the first commit of a month): it then reads the manifests of
// the other groups (the hot ones, one or two per prefix) to know their
// values, and merges all but the newest into the newest cold manifest,
// which it writes anew (cut at coldCap). That is once a month per prefix,
// a few more requests and one cold manifest's bytes.
//
// A cold manifest holds at most coldCap entries (files), cut between
// group values: a publish that would write one larger writes it as
// several, each named after the newest value it holds, the newest keeping
// the unit's watermark. So a prefix's cold manifests are segments of its
// groups' values: a partition belongs to the one with the smallest
// watermark at or after its value (coldOf), the first one holding every
// older value. A backfill of a cold partition, and the merge of a month,
// read and write one segment, never much more than coldCap entries: a
// commit's publish is constant in the table's size in bytes as in
// requests (9; 11 for the first commit of a month). Iceberg records a
// replaced file as deleted in a rewrite of the manifest that holds it, so
// a segment is what such a publish must read and write; Spark's merged
// manifests (8 MB by default) cost the same. Engines prune segments by
// the manifest list's partition summaries (PyIceberg, Spark and DuckDB
// open one for a one-partition query); a whole-table plan opens every
// segment and the hot manifest (4 at 10,000 daily partitions).
//
// Cold manifests were named pswap-m... until segments (one per prefix);
// a segment is named pswap-c..., which a pswap of one cold manifest per
// prefix refuses as another writer's (it would rewrite two segments as
// one), and both names are read.

// membersDeflateKey is the Avro header key of a cold manifest's members:
// membersKey's document, deflated (RFC 1951), in standard base64 (PyIceberg
// reads every header value as UTF-8 and fails on any other bytes). A cold
// manifest lists most of the table's partitions, and every engine reads
// the header whole.
const membersDeflateKey = "pswap.members.deflate"

// membersLevel is deflateMembers' level: a document of 4,096 members
// (their generations' UUIDs, which do not compress, are most of it)
// deflates to 104 KB at level 2 in 8 ms, to 99 KB at level 9 in 70 ms, a
// third of a cold publish's CPU.
const membersLevel = 2

// deflateMembers compresses a members document.
func deflateMembers(doc []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, membersLevel) // a valid level: no error
	_, _ = w.Write(doc)                         // a bytes.Buffer does not fail
	_ = w.Close()
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// maxMembersDoc bounds an inflated members document (decodeMembers'
// limit).
const maxMembersDoc = 64 << 20

// inflateMembers decompresses a members document, at most maxMembersDoc
// bytes of it.
func inflateMembers(b64 []byte) ([]byte, error) {
	z, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil {
		return nil, err
	}
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	doc, err := io.ReadAll(io.LimitReader(r, maxMembersDoc+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > maxMembersDoc {
		return nil, fmt.Errorf("more than %d bytes inflated", maxMembersDoc)
	}
	return doc, nil
}

// keepHot is how many of the newest groups of each prefix stay out of its
// cold manifest (a variable for the tests, which make a table of the
// layout before cold manifests with it).
var keepHot = 1

// coldCap bounds a cold manifest's entries (a variable for the tests).
// 16,384 entries of a table of a few columns are about 0.8 MB: what a
// publish reads and writes at most for a cold partition. A table of 10,000
// daily partitions of a file each keeps one cold manifest, so DuckDB, which
// opens every manifest for any query, opens 2 (4 with a cap of 4,096, for a
// cold publish of 0.2 MB instead of 0.47 MB at that size: issue 41's goal
// of at most 2 manifests for a one-partition query weighed more).
var coldCap = 16384

// dated is where a partition stands among the dated groups of its table.
type dated struct {
	cold  string // coldHash of its prefix: the cold manifest it may belong to
	value string // its group's date value: 2026-11, or 2026-11-29
}

// datedOf is a partition's prefix and group value, or false for a
// partition without a date column (a group of its own, never cold). The
// value is groupOf's: the date cut to its month, or to its day when the
// partition is finer than a day.
func datedOf(part string) (dated, bool) {
	k, err := partition.Parse(part)
	if err != nil {
		return dated{}, false
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
		var prefix strings.Builder
		for _, pc := range cols[:i] {
			fmt.Fprintf(&prefix, "%q=%q/", pc.Name, pc.Value)
		}
		return dated{cold: partHash("cold:" + prefix.String() + fmt.Sprintf("%q", c.Name)), value: v}, true
	}
	return dated{}, false
}

// covers reports whether r is a cold manifest of d's prefix and
// granularity whose watermark is at or after d's value: a candidate to
// hold d's partition (coldOf picks the one that does).
func covers(r manifestRef, d dated) bool {
	return r.cold != "" && r.group == d.cold && len(r.cold) == len(d.value) && d.value <= r.cold
}

// coldOf returns the index in refs of the cold manifest that holds the
// partitions of d: of those that cover d, the one with the smallest
// watermark; -1 if none does.
func coldOf(refs []manifestRef, d dated) int {
	best := -1
	for i, r := range refs {
		if covers(r, d) && (best < 0 || r.cold < refs[best].cold) {
			best = i
		}
	}
	return best
}

// coldID is a cold manifest's unit id (manifestRef.id): its prefix's
// hash and its watermark, as the segments of a prefix share the hash.
func coldID(hash, watermark string) string { return hash + "/" + watermark }

// coldHashOf is the prefix hash of a cold unit's id.
func coldHashOf(id string) string {
	h, _, _ := strings.Cut(id, "/")
	return h
}

// holder returns whether a manifest of refs holds part's record: the
// manifest of part's group, or the cold manifest that holds it (coldOf).
func holder(refs []manifestRef, part string) func(manifestRef) bool {
	gh := groupHash(part)
	cold := ""
	if d, ok := datedOf(part); ok {
		if i := coldOf(refs, d); i >= 0 {
			cold = refs[i].id()
		}
	}
	return func(r manifestRef) bool {
		return r.group != "" && (r.cold == "" && r.group == gh || r.cold != "" && r.id() == cold)
	}
}

// unitOf is the manifest a publish after s writes part into: the cold
// manifest of s that holds it (its unit id and watermark), or its
// group's.
func unitOf(s *state, part string) (id, cold string) {
	if d, ok := datedOf(part); ok {
		if i := coldOf(s.refs, d); i >= 0 {
			return s.refs[i].id(), s.refs[i].cold
		}
	}
	return groupHash(part), ""
}

// watermarkOf reads a cold manifest name's watermark: 202611 is 2026-11,
// 20261129 is 2026-11-29.
func watermarkOf(digits string) (string, bool) {
	if len(digits) != 6 && len(digits) != 8 {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	v := digits[:4] + "-" + digits[4:6]
	if len(digits) == 8 {
		v += "-" + digits[6:]
	}
	return v, true
}

// coldManifestKey names a cold manifest (see parseColdName).
func coldManifestKey(cold, watermark string, members int, snapshot int64, digest string) string {
	return fmt.Sprintf("%s/pswap-c%s-%s-%d-%d-%s.avro", MetadataDir, cold, strings.ReplaceAll(watermark, "-", ""), members, snapshot, digest)
}

// mergeCold decides which groups a publish after s merges into their
// prefix's newest cold manifest, and changes units so: a merged group's
// updates move to that cold manifest's unit (made if s has none), whose watermark
// becomes the newest value merged. It returns the merged groups' ids
// with the cold manifest each went into; the caller hands their
// manifests in s to that unit (to carry their members). It merges only
// in a reconcile, or when units start a group that s does not have; it
// then reads the manifests of s's groups (a reconcile has read them
// already), keeps the newest keepHot groups of each prefix, and merges
// the others.
func (p *publisher) mergeCold(ctx context.Context, s *state, units map[string]*groupUnit) (map[string]string, error) {
	inList := map[string]bool{}
	for i, r := range s.refs {
		if r.group != "" && liveFiles(s.list[i]) > 0 {
			inList[r.group] = true
		}
	}
	type hot struct {
		id string
		d  dated
	}
	hots := map[string]*hot{}
	trigger := p.repair
	for _, id := range slices.Sorted(maps.Keys(units)) {
		un := units[id]
		if un.cold != "" || len(un.ups) == 0 {
			continue
		}
		d, ok := datedOf(un.ups[0].part)
		if !ok {
			continue
		}
		if !inList[id] {
			trigger = true
		}
		hots[id] = &hot{id: id, d: d}
	}
	if !trigger {
		return nil, nil
	}
	var idx []int
	for i, r := range s.refs {
		if r.group != "" && r.cold == "" && liveFiles(s.list[i]) > 0 && !s.damaged[r.group] {
			idx = append(idx, i)
		}
	}
	contents := make([]*groupContent, len(idx))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.opts.Concurrency)
	for j, i := range idx {
		g.Go(func() (err error) {
			contents[j], err = p.readGroup(gctx, s.list[i])
			return err
		})
	}
	if err := g.Wait(); errors.Is(err, ErrCorrupt) {
		// A group's manifest is missing or damaged: no merge now (the
		// publish carries it as it would have; a reconcile writes it
		// anew from the pointers, and merges then).
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	for j, i := range idx {
		r, gc := s.refs[i], contents[j]
		if len(gc.members) == 0 {
			continue
		}
		d, ok := datedOf(gc.members[0].part)
		if !ok {
			continue
		}
		if hots[r.group] == nil {
			hots[r.group] = &hot{id: r.group, d: d}
		}
	}
	byCold := map[string][]*hot{}
	for _, h := range hots {
		byCold[h.d.cold] = append(byCold[h.d.cold], h)
	}
	into := map[string]string{}
	for _, prefix := range slices.Sorted(maps.Keys(byCold)) {
		hs := byCold[prefix]
		// Newest first.
		slices.SortFunc(hs, func(a, b *hot) int { return cmp.Or(strings.Compare(b.d.value, a.d.value), strings.Compare(a.id, b.id)) })
		// The merged groups go into the newest segment (their values are
		// after its watermark), which encodeGroup cuts at coldCap.
		mark, id := "", coldID(prefix, "")
		for _, r := range s.refs {
			if r.cold != "" && r.group == prefix && r.cold > mark {
				mark, id = r.cold, r.id()
			}
		}
		width := len(mark)
		if width == 0 {
			width = len(hs[0].d.value)
		}
		kept := 0
		un := units[id]
		for _, h := range hs {
			if len(h.d.value) != width {
				continue // another granularity: left as it is
			}
			if kept < keepHot {
				kept++
				continue
			}
			if un == nil {
				un = &groupUnit{id: id, cold: mark}
				units[id] = un
			}
			un.cold = max(un.cold, h.d.value)
			if hu := units[h.id]; hu != nil {
				un.ups = append(un.ups, hu.ups...)
				delete(units, h.id)
			}
			into[h.id] = id
		}
	}
	return into, nil
}

// unitID is unitOf's id.
func unitID(s *state, part string) string {
	id, _ := unitOf(s, part)
	return id
}

// coldCut is one manifest of a cold unit's: its members from..to (in
// sortedByValue's order) and its watermark.
type coldCut struct {
	from, to int
	mark     string
}

// coldCuts cuts a cold unit's members, of the group values vals (in
// ascending order) and sizes entries each, into runs of at most coldCap
// entries, never between two members of one value (a value larger than
// coldCap is a run of its own). A run's watermark is its newest value,
// the last run's the unit's (mark): the runs hold what the unit held.
func coldCuts(vals []string, sizes []int, mark string) []coldCut {
	var cuts []coldCut
	from, n := 0, 0
	for i := 0; i < len(vals); {
		j, k := i, 0
		for ; j < len(vals) && vals[j] == vals[i]; j++ {
			k += sizes[j]
		}
		if n > 0 && n+k > coldCap {
			cuts = append(cuts, coldCut{from: from, to: i, mark: vals[i-1]})
			from, n = i, 0
		}
		n += k
		i = j
	}
	return append(cuts, coldCut{from: from, to: len(vals), mark: mark})
}

// sortedByValue sorts vals (stably, so that members of one value stay in
// name order) and returns the old index of each.
func sortedByValue(vals []string) []int {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(vals[a], vals[b]) })
	sorted := make([]string, len(vals))
	for i, j := range idx {
		sorted[i] = vals[j]
	}
	copy(vals, sorted)
	return idx
}
