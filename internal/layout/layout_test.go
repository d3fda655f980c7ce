package layout_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/manifest"
)

// genID returns a valid, deterministic generation id for tests.
func genID(i int) string { return fmt.Sprintf("%08x-abcd-7000-8000-%012x", i+1, i+1) }

func TestClassify(t *testing.T) {
	const p = "dt=2026-11-29"
	g := genID(0)
	for _, tc := range []struct {
		key  string
		kind layout.Kind
		gen  string
	}{
		{p + "/_pswap/pointer.json", layout.KindPointer, ""},
		{p + "/_pswap/manifests/" + g + ".json", layout.KindManifest, g},
		{p + "/_pswap/gen/" + g + "/part-00000.parquet", layout.KindData, g},
		{p + "/_pswap/gen/" + g + "/sub/dir/file", layout.KindData, g},
		{p + "/_pswap/staged/" + g + ".json", layout.KindStaged, g},
		{p + "/_pswap/manifests/" + g, layout.KindOther, ""},                                      // no .json
		{p + "/_pswap/manifests/" + strings.ToUpper(g) + ".json", layout.KindOther, ""},           // not canonical
		{p + "/_pswap/manifests/0190c2a4-0000-4000-8000-000000000000.json", layout.KindOther, ""}, // UUIDv4
		{p + "/_pswap/gen/" + g, layout.KindOther, ""},                                            // no file
		{p + "/_pswap/gen/" + g + "/", layout.KindOther, ""},                                      // empty file name
		{p + "/_pswap/gen/not-a-uuid/f", layout.KindOther, ""},
		{p + "/_pswap/staged/" + g + ".txt", layout.KindOther, ""},
		{p + "/_pswap/notes.txt", layout.KindOther, ""},
		{p + "/part-00000.parquet", layout.KindOther, ""},
		{p + "/hr=13/_pswap/pointer.json", layout.KindOther, ""}, // another partition
		{"dt=2026-11-30/_pswap/pointer.json", layout.KindOther, ""},
	} {
		k, gen := layout.Classify(p, tc.key)
		if k != tc.kind || gen != tc.gen {
			t.Errorf("layout.Classify(%q) = %v %q, want %v %q", tc.key, k, gen, tc.kind, tc.gen)
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
		part, ok := layout.PartitionOf(tc.key)
		if ok != tc.ok || (ok && part != tc.part) {
			t.Errorf("layout.PartitionOf(%q) = %q %v, want %q %v", tc.key, part, ok, tc.part, tc.ok)
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
		k, gen := layout.Classify(part, key)
		switch k {
		case layout.KindOther:
			return
		case layout.KindPointer:
			if key != layout.PointerKey(part) || gen != "" {
				t.Fatalf("pointer %q", key)
			}
			return
		}
		if manifest.ValidateGenerationID(gen) != nil || !strings.HasPrefix(key, layout.MetaPrefix(part)) {
			t.Fatalf("layout.Classify(%q, %q) = %v %q", part, key, k, gen)
		}
		switch k {
		case layout.KindManifest:
			if key != layout.ManifestKey(part, gen) {
				t.Fatalf("manifest %q is not ManifestKey(%q)", key, gen)
			}
		case layout.KindData:
			if !strings.HasPrefix(key, layout.DataPrefix(part, gen)) || len(key) == len(layout.DataPrefix(part, gen)) {
				t.Fatalf("data %q not under DataPrefix(%q)", key, gen)
			}
		case layout.KindStaged:
			if key != layout.StagedKey(part, gen) {
				t.Fatalf("staged %q", key)
			}
		}
	})
}
