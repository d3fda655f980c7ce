package lakehouse

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestColdManifestNames(t *testing.T) {
	d, ok := datedOf("region=eu/dt=2026-11-29")
	if !ok || d.value != "2026-11" {
		t.Fatalf("datedOf = %+v, %v", d, ok)
	}
	key := coldManifestKey(d.cold, "2026-10", 300, 123456789, "0a1b2c3d")
	r, ok := parseManifestPath("s3://b/t/" + key)
	if !ok || r.group != d.cold || r.cold != "2026-10" || r.members != 300 || r.part != "" {
		t.Fatalf("parseManifestPath(%s) = %+v, %v", key, r, ok)
	}
	if !IsMetadataKey(key) {
		t.Fatalf("%s is not a metadata key", key)
	}
	// A cold manifest written before segments (pswap-m...) reads as one.
	if r, ok := parseManifestPath("metadata/pswap-m" + d.cold + "-202610-300-123456789-0a1b2c3d.avro"); !ok || r.cold != "2026-10" || r.members != 300 || r.id() != coldID(d.cold, "2026-10") {
		t.Fatalf("a cold manifest named before segments: %+v, %v", r, ok)
	}
	day := coldManifestKey(d.cold, "2026-10-31", 1, 1, "0a1b2c3d")
	if r, ok := parseManifestPath(day); !ok || r.cold != "2026-10-31" {
		t.Fatalf("parseManifestPath(%s) = %+v, %v", day, r, ok)
	}
	for _, bad := range []string{
		"pswap-m0123456789abcdef-2026-1-2-0a1b2c3d.avro", "pswap-m0123456789abcdef-20261-1-2-0a1b2c3d.avro",
		"pswap-m0123456789abcdef-2026ab-1-2-0a1b2c3d.avro", "pswap-m0123456789abcdef-202611-1-2-0a1b.avro",
		"pswap-m0123456789abcdef-202611-1-2.avro", "pswap-mXYZ-202611-1-2-0a1b2c3d.avro", "pswap-m-202611.avro",
	} {
		if r, ok := parseManifestPath(bad); ok {
			t.Errorf("parseManifestPath(%s) = %+v, want refused", bad, r)
		}
	}
}

// A cold manifest holds the partitions of its prefix and granularity up
// to its watermark, no other.
func TestColdCovers(t *testing.T) {
	eu, _ := datedOf("region=eu/dt=2026-10-01")
	cold := manifestRef{group: eu.cold, cold: "2026-10", members: 3}
	for _, c := range []struct {
		part string
		want bool
	}{
		{"region=eu/dt=2026-10-31", true},
		{"region=eu/dt=2025-01-31", true},
		{"region=eu/dt=2026-11-01", false},       // newer than the watermark
		{"region=us/dt=2026-10-01", false},       // another prefix
		{"region=eu/dt=2026-10-01/hr=01", false}, // groups of a day: another granularity
		{"region=eu", false},                     // no date
		{"dt=2026-10-01", false},                 // no prefix: another cold manifest
	} {
		d, ok := datedOf(c.part)
		if got := ok && covers(cold, d); got != c.want {
			t.Errorf("covers(%s) = %v, want %v", c.part, got, c.want)
		}
		if got := holder([]manifestRef{cold}, c.part)(cold); got != c.want {
			t.Errorf("holder(%s) = %v, want %v", c.part, got, c.want)
		}
	}
	s := &state{refs: []manifestRef{cold}}
	if id, w := unitOf(s, "region=eu/dt=2026-09-09"); id != coldID(eu.cold, "2026-10") || w != "2026-10" {
		t.Fatalf("unitOf a cold partition = %s %s", id, w)
	}
	if id, w := unitOf(s, "region=eu/dt=2026-11-09"); id != groupHash("region=eu/dt=2026-11-09") || w != "" {
		t.Fatalf("unitOf a hot partition = %s %s", id, w)
	}
}

func TestMembersDeflateRoundTrip(t *testing.T) {
	ms := []member{{"dt=2026-11-01", 3, "01a236f9-5b67-7d21-a665-185ef63ff48d", 2}, {"dt=2026-11-02", 1, "01a236f9-5b82-7243-a0c4-c8eecd6395ad", 1}}
	doc, err := inflateMembers(deflateMembers(encodeMembers(ms)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMembers(doc)
	if err != nil || len(got) != 2 || got[0] != ms[0] || got[1] != ms[1] {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	// PyIceberg reads every Avro header value as UTF-8.
	if z := deflateMembers(encodeMembers(ms)); !utf8.Valid(z) {
		t.Fatalf("the deflated members are not UTF-8: %q", z)
	}
	if _, err := inflateMembers([]byte("not deflate")); err == nil {
		t.Fatal("inflateMembers accepted garbage")
	}
}

// FuzzColdMembers: a cold manifest's deflated members header either
// inflates and decodes, or fails with an error; never a panic.
func FuzzColdMembers(f *testing.F) {
	good := deflateMembers(encodeMembers([]member{{"dt=2026-11-01", 3, "01a236f9-5b67-7d21-a665-185ef63ff48d", 2}}))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(deflateMembers([]byte(`{"version":"1","members":[{"partition":"../x","seq":1,"generation":"g","files":1}]}`)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, z []byte) {
		doc, err := inflateMembers(z)
		if err != nil {
			return
		}
		if len(doc) > maxMembersDoc {
			t.Fatalf("inflated %d bytes", len(doc))
		}
		_, _ = decodeMembers(doc)
	})
}

// The cold manifests of a prefix are segments: a partition belongs to the
// one with the smallest watermark at or after its value, the first one
// holding every older value; holder names that one only.
func TestColdSegments(t *testing.T) {
	d, _ := datedOf("dt=2026-10-01")
	old := manifestRef{group: d.cold, cold: "2025-12", members: 300}
	mid := manifestRef{group: d.cold, cold: "2026-06", members: 180}
	top := manifestRef{group: d.cold, cold: "2026-10", members: 120}
	refs := []manifestRef{top, old, mid} // any order
	s := &state{refs: refs}
	for _, c := range []struct {
		part string
		want manifestRef
	}{
		{"dt=2019-03-04", old},
		{"dt=2025-12-31", old},
		{"dt=2026-01-01", mid},
		{"dt=2026-06-30", mid},
		{"dt=2026-07-01", top},
		{"dt=2026-10-31", top},
	} {
		if id, w := unitOf(s, c.part); id != c.want.id() || w != c.want.cold {
			t.Errorf("unitOf(%s) = %s %s, want %s", c.part, id, w, c.want.id())
		}
		holds := holder(refs, c.part)
		for _, r := range refs {
			if got := holds(r); got != (r == c.want) {
				t.Errorf("holder(%s)(%s) = %v", c.part, r.cold, got)
			}
		}
	}
	if id, w := unitOf(s, "dt=2026-11-01"); id != groupHash("dt=2026-11-01") || w != "" {
		t.Errorf("unitOf a hot partition = %s %s", id, w)
	}
	if old.id() == mid.id() || mid.id() == top.id() {
		t.Fatalf("segments share an id: %s %s %s", old.id(), mid.id(), top.id())
	}
}

// coldCuts cuts at coldCap entries, between values only; the last run
// keeps the unit's watermark, the others take their newest value.
func TestColdCuts(t *testing.T) {
	defer func(c int) { coldCap = c }(coldCap)
	coldCap = 4
	vals := []string{"2026-01", "2026-01", "2026-02", "2026-03", "2026-03", "2026-03", "2026-03", "2026-03", "2026-04"}
	sizes := []int{1, 2, 1, 1, 1, 1, 1, 1, 2}
	got := coldCuts(vals, sizes, "2026-05")
	want := []coldCut{{0, 3, "2026-02"}, {3, 8, "2026-03"}, {8, 9, "2026-05"}}
	if !slices.Equal(got, want) {
		t.Fatalf("coldCuts = %v, want %v (a value of 5 entries is a run of its own)", got, want)
	}
	if got := coldCuts(vals[:2], sizes[:2], "2026-01"); !slices.Equal(got, []coldCut{{0, 2, "2026-01"}}) {
		t.Fatalf("under the cap: %v", got)
	}
	if got := coldCuts(nil, nil, "2026-01"); !slices.Equal(got, []coldCut{{0, 0, "2026-01"}}) {
		t.Fatalf("no members (deletions only): %v", got)
	}
	v := []string{"b", "a", "c", "a"}
	if idx := sortedByValue(v); !slices.Equal(v, []string{"a", "a", "b", "c"}) || !slices.Equal(idx, []int{1, 3, 0, 2}) {
		t.Fatalf("sortedByValue: %v %v", v, idx)
	}
}
