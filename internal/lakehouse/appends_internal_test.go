package lakehouse

import (
	"path"
	"testing"
)

// FuzzAppendName: an append manifest's name parses back to what it was
// written with, and a name that parses is the one its fields spell.
func FuzzAppendName(f *testing.F) {
	gen := "01900000-0000-7000-8000-000000000000"
	f.Add(path.Base(appendManifestKey("0123456789abcdef", "fedcba9876543210", 7, gen, 4, 12, 99, "0a1b2c3d")))
	f.Add("pswap-ap0123456789abcdef-fedcba9876543210-7-" + gen + "-4-12-99-0a1b2c3d.avro")
	f.Add("pswap-ap0123456789abcdef-fedcba9876543210-07-" + gen + "-4-12-99-0a1b2c3d.avro")
	f.Add("pswap-ap0123456789abcdef-fedcba9876543210-7-" + gen + "-0-12-99-0a1b2c3d.avro")
	f.Add("pswap-apXYZ.avro")
	f.Fuzz(func(t *testing.T, name string) {
		r, ok := parseManifestPath(name)
		if !ok || r.app == "" {
			return
		}
		if r.seq <= 0 || r.appN <= 0 || r.appTotal <= 0 || r.group != "" || r.part != "" || r.cold != "" {
			t.Fatalf("%q parsed to %+v", name, r)
		}
		if shared, cold := ManifestShape(name); !shared || cold {
			t.Fatalf("ManifestShape(%q) = %v, %v", name, shared, cold)
		}
		// The name is the one its fields spell, but for the snapshot and
		// digest, which it only carries.
		back, ok := parseManifestPath(path.Base(appendManifestKey(r.appGroup, r.app, r.seq, r.gen, r.appN, r.appTotal, 1, "00000000")))
		if !ok || back != r {
			t.Fatalf("%q: %+v, spelled again %+v (%v)", name, r, back, ok)
		}
	})
}

// mergeable merges a partition's append manifests as a counter of base
// appendFanout: after N appends it keeps N's digits' sum of manifests.
func TestMergeable(t *testing.T) {
	gen := "01900000-0000-7000-8000-000000000000"
	s := &state{}
	ph := partHash("dt=2026-11-29")
	for seq := int64(1); seq <= 300; seq++ {
		idx, n := mergeable(s, ph)
		drop := map[int]bool{}
		for _, i := range idx {
			drop[i] = true
		}
		var next state
		for i, r := range s.refs {
			if !drop[i] {
				next.refs = append(next.refs, r)
			}
		}
		next.refs = append(next.refs, manifestRef{app: ph, appGroup: ph, seq: seq, gen: gen, appN: n, appTotal: int(seq)})
		s = &next
		digits, held := 0, 0
		for v := seq; v > 0; v /= int64(appendFanout) {
			digits += int(v % int64(appendFanout))
		}
		for _, r := range s.refs {
			held += r.appN
		}
		if len(s.refs) != digits || held != int(seq) {
			t.Fatalf("after %d appends: %d manifests holding %d appends, want %d holding all", seq, len(s.refs), held, digits)
		}
	}
}
