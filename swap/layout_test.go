package swap_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// genID returns a valid, deterministic generation id for tests.
func genID(i int) string { return fmt.Sprintf("%08x-abcd-7000-8000-%012x", i+1, i+1) }

func TestClassify(t *testing.T) {
	const p = "dt=2026-11-29"
	g := genID(0)
	for _, tc := range []struct {
		key  string
		kind swap.Kind
		gen  string
	}{
		{p + "/_pswap/pointer.json", swap.KindPointer, ""},
		{p + "/_pswap/manifests/" + g + ".json", swap.KindManifest, g},
		{p + "/_pswap/gen/" + g + "/part-00000.parquet", swap.KindData, g},
		{p + "/_pswap/gen/" + g + "/sub/dir/file", swap.KindData, g},
		{p + "/_pswap/staged/" + g + ".json", swap.KindStaged, g},
		{p + "/_pswap/manifests/" + g, swap.KindOther, ""},                                      // no .json
		{p + "/_pswap/manifests/" + strings.ToUpper(g) + ".json", swap.KindOther, ""},           // not canonical
		{p + "/_pswap/manifests/0190c2a4-0000-4000-8000-000000000000.json", swap.KindOther, ""}, // UUIDv4
		{p + "/_pswap/gen/" + g, swap.KindOther, ""},                                            // no file
		{p + "/_pswap/gen/" + g + "/", swap.KindOther, ""},                                      // empty file name
		{p + "/_pswap/gen/not-a-uuid/f", swap.KindOther, ""},
		{p + "/_pswap/staged/" + g + ".txt", swap.KindOther, ""},
		{p + "/_pswap/notes.txt", swap.KindOther, ""},
		{p + "/part-00000.parquet", swap.KindOther, ""},
		{p + "/hr=13/_pswap/pointer.json", swap.KindOther, ""}, // another partition
		{"dt=2026-11-30/_pswap/pointer.json", swap.KindOther, ""},
	} {
		k, gen := swap.Classify(p, tc.key)
		if k != tc.kind || gen != tc.gen {
			t.Errorf("swap.Classify(%q) = %v %q, want %v %q", tc.key, k, gen, tc.kind, tc.gen)
		}
	}
}

func TestPartitionOf(t *testing.T) {
	for _, tc := range []struct {
		key, part string
		ok        bool
	}{
		{"dt=2026-11-29/_pswap/pointer.json", "dt=2026-11-29", true},
		{"dt=2026-11-29/hr=13/_pswap/gen/x/y", "dt=2026-11-29/hr=13", true},
		{"dt=2026-11-29/_pswap/gen/x/hr=1/_pswap/y", "dt=2026-11-29", true},
		{"_pswap/pointer.json", "", false},
		{"dt=2026-11-29/part-0.parquet", "", false},
		{"not a partition/_pswap/pointer.json", "not a partition", false},
	} {
		part, ok := swap.PartitionOf(tc.key)
		if ok != tc.ok || (ok && part != tc.part) {
			t.Errorf("swap.PartitionOf(%q) = %q %v, want %q %v", tc.key, part, ok, tc.part, tc.ok)
		}
	}
}

func FuzzClassify(f *testing.F) {
	g := genID(7)
	for _, s := range []string{
		"/_pswap/pointer.json", "/_pswap/manifests/" + g + ".json", "/_pswap/gen/" + g + "/a",
		"/_pswap/staged/" + g + ".json", "/_pswap/gen//a", "/x", "",
	} {
		f.Add("dt=2026-11-29", "dt=2026-11-29"+s)
	}
	f.Add("a=1/b=2", "a=1/b=2/_pswap/gen/"+g+"/../../pointer.json")
	f.Fuzz(func(t *testing.T, part, key string) {
		k, gen := swap.Classify(part, key)
		switch k {
		case swap.KindOther:
			return
		case swap.KindPointer:
			if key != swap.PointerKey(part) || gen != "" {
				t.Fatalf("pointer %q", key)
			}
			return
		}
		if manifest.ValidateGenerationID(gen) != nil || !strings.HasPrefix(key, swap.MetaPrefix(part)) {
			t.Fatalf("swap.Classify(%q, %q) = %v %q", part, key, k, gen)
		}
		switch k {
		case swap.KindManifest:
			if key != swap.ManifestKey(part, gen) {
				t.Fatalf("manifest %q is not ManifestKey(%q)", key, gen)
			}
		case swap.KindData:
			if !strings.HasPrefix(key, swap.DataPrefix(part, gen)) || len(key) == len(swap.DataPrefix(part, gen)) {
				t.Fatalf("data %q not under DataPrefix(%q)", key, gen)
			}
		case swap.KindStaged:
			if key != swap.StagedKey(part, gen) {
				t.Fatalf("staged %q", key)
			}
		}
	})
}
