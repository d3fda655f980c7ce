package lakehouse

import (
	"errors"
	"strings"
	"testing"
)

func TestGroupOf(t *testing.T) {
	for _, c := range []struct{ part, group string }{
		{"dt=2026-11-29", "group:dt=2026-11"},
		{"dt=2026-11-01", "group:dt=2026-11"},
		{"dt=2026-11-29/hr=13", "group:dt=2026-11-29"},                     // finer than a day: by day
		{"hour=2026-11-29T13", "group:hour=2026-11-29"},                    // a time in the value
		{"region=eu/dt=2026-11-29", "group:region=eu/dt=2026-11"},          // the columns before the date stay
		{"region=eu/dt=2026-11-29/hr=01", "group:region=eu/dt=2026-11-29"}, //
		{"region=eu", "region=eu"},                                         // no date: a group of its own
		{"n=20261129", "n=20261129"},
	} {
		if got := groupOf(c.part); got != c.group {
			t.Errorf("groupOf(%s) = %s, want %s", c.part, got, c.group)
		}
	}
	if groupHash("dt=2026-11-29") != groupHash("dt=2026-11-30") || groupHash("dt=2026-11-30") == groupHash("dt=2026-12-01") {
		t.Fatal("days of a month share a group, days of two months do not")
	}
}

func TestGroupManifestNames(t *testing.T) {
	key := groupManifestKey(groupHash("dt=2026-11-29"), 30, 123456789, "0a1b2c3d")
	r, ok := parseManifestPath("s3://b/t/" + key)
	if !ok || r.group != groupHash("dt=2026-11-29") || r.members != 30 || r.part != "" {
		t.Fatalf("parseManifestPath(%s) = %+v, %v", key, r, ok)
	}
	if !IsMetadataKey(key) {
		t.Fatalf("%s is not a metadata key", key)
	}
	for _, bad := range []string{
		"pswap-gXYZ-1-2-0a1b2c3d.avro", "pswap-g0123456789abcdef-x-2-0a1b2c3d.avro",
		"pswap-g0123456789abcdef-01-2-0a1b2c3d.avro", "pswap-g0123456789abcdef-1-2-0a1b.avro",
		"pswap-g0123456789abcdef-1-2-0a1b2c3d-9.avro", "pswap-g0123456789abcdef--1-2-0a1b2c3d.avro",
	} {
		if r, ok := parseManifestPath(bad); ok {
			t.Errorf("parseManifestPath(%s) = %+v, want refused", bad, r)
		}
	}
}

func TestMembersRoundTrip(t *testing.T) {
	ms := []member{{"dt=2026-11-01", 3, "01a236f9-5b67-7d21-a665-185ef63ff48d", 2}, {"dt=2026-11-02", 1, "01a236f9-5b82-7243-a0c4-c8eecd6395ad", 1}}
	got, err := decodeMembers(encodeMembers(ms))
	if err != nil || len(got) != 2 || got[0] != ms[0] || got[1] != ms[1] {
		t.Fatalf("decodeMembers(encodeMembers(%v)) = %v, %v", ms, got, err)
	}
	for _, bad := range []string{
		`{"version":"1","members":[{"partition":"dt=2026-11-02","seq":1,"generation":"g","files":1},{"partition":"dt=2026-11-01","seq":1,"generation":"g","files":1}]}`, // out of order
		`{"version":"1","members":[{"partition":"dt=2026-11-01","seq":1,"generation":"g","files":1},{"partition":"dt=2026-11-01","seq":2,"generation":"g","files":1}]}`, // twice
		`{"version":"1","members":[{"partition":"../x","seq":1,"generation":"g","files":1}]}`,
		`{"version":"1","members":[{"partition":"dt=2026-11-01","seq":0,"generation":"g","files":1}]}`,
		`{"version":"1","members":[{"partition":"dt=2026-11-01","seq":1,"generation":"g","files":0}]}`,
		`{"version":"1","members":[{"partition":"dt=2026-11-01","seq":1,"generation":"g","files":1,"x":1}]}`,
		`{"version":"2","members":[]}`,
		`{"version":"1"}`,
		`{"version":"1","members":[]} x`,
	} {
		if _, err := decodeMembers([]byte(bad)); !errors.Is(err, errMembers) {
			t.Errorf("decodeMembers(%s): %v, want errMembers", bad, err)
		}
	}
}

// FuzzMembers: a group manifest's members header never panics the
// decoder, and what it accepts encodes back to a document it reads the same.
func FuzzMembers(f *testing.F) {
	f.Add(encodeMembers([]member{{"dt=2026-11-01", 3, "g1", 2}}))
	f.Add([]byte(`{"version":"1","members":[]}`))
	f.Add([]byte(`{"version":"1","members":[{"partition":"dt=2026-11-01","seq":1,"generation":"g","files":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := decodeMembers(data)
		if err != nil {
			if !errors.Is(err, errMembers) {
				t.Fatalf("error %v does not match errMembers", err)
			}
			return
		}
		again, err := decodeMembers(encodeMembers(ms))
		if err != nil || len(again) != len(ms) {
			t.Fatalf("re-encoded members do not read back: %v", err)
		}
		for i := range ms {
			if again[i] != ms[i] || strings.Contains(ms[i].part, "..") {
				t.Fatalf("member %d: %+v, then %+v", i, ms[i], again[i])
			}
		}
	})
}
