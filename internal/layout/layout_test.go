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
	// Both layouts classify alike: the table-level one (_pswap/p/<p>/) and
	// the legacy one (<p>/_pswap/).
	for _, meta := range []string{"_pswap/p/" + p + "/", p + "/_pswap/"} {
		for _, tc := range []struct {
			key  string
			kind layout.Kind
			gen  string
		}{
			{meta + "pointer.json", layout.KindPointer, ""},
			{meta + "manifests/" + g + ".json", layout.KindManifest, g},
			{meta + "gen/" + g + "/part-00000.parquet", layout.KindData, g},
			{meta + "gen/" + g + "/sub/dir/file", layout.KindData, g},
			{meta + "staged/" + g + ".json", layout.KindStaged, g},
			{meta + "manifests/" + g, layout.KindOther, ""},                                      // no .json
			{meta + "manifests/" + strings.ToUpper(g) + ".json", layout.KindOther, ""},           // not canonical
			{meta + "manifests/0190c2a4-0000-4000-8000-000000000000.json", layout.KindOther, ""}, // UUIDv4
			{meta + "gen/" + g, layout.KindOther, ""},                                            // no file
			{meta + "gen/" + g + "/", layout.KindOther, ""},                                      // empty file name
			{meta + "gen/not-a-uuid/f", layout.KindOther, ""},
			{meta + "staged/" + g + ".txt", layout.KindOther, ""},
			{meta + "attempts/" + g + ".txt", layout.KindOther, ""},
			{meta + "notes.txt", layout.KindOther, ""},
			{p + "/part-00000.parquet", layout.KindOther, ""},
			{p + "/hr=13/_pswap/pointer.json", layout.KindOther, ""},        // another partition
			{"_pswap/p/" + p + "/hr=13/pointer.json", layout.KindOther, ""}, // another partition
			{"dt=2026-11-30/_pswap/pointer.json", layout.KindOther, ""},
			{"_pswap/p/dt=2026-11-30/pointer.json", layout.KindOther, ""},
		} {
			k, gen := layout.Classify(p, tc.key)
			if k != tc.kind || gen != tc.gen {
				t.Errorf("layout.Classify(%q) = %v %q, want %v %q", tc.key, k, gen, tc.kind, tc.gen)
			}
		}
	}
}

// The keys of the table-level layout, spelled out: what delta-rs's and
// Spark's vacuums spare (a path starting with "_", a folder named "_...").
func TestKeys(t *testing.T) {
	const p = "dt=2026-11-29/hr=13"
	g := genID(1)
	for _, tc := range []struct{ got, want string }{
		{layout.PointerKey(p), "_pswap/p/dt=2026-11-29/hr=13/pointer.json"},
		{layout.ManifestKey(p, g), "_pswap/p/dt=2026-11-29/hr=13/manifests/" + g + ".json"},
		{layout.StagedKey(p, g), "_pswap/p/dt=2026-11-29/hr=13/staged/" + g + ".json"},
		{layout.DataPrefix(p, g), "_pswap/p/dt=2026-11-29/hr=13/gen/" + g + "/"},
		{layout.LegacyPointerKey(p), "dt=2026-11-29/hr=13/_pswap/pointer.json"},
		{layout.LegacyManifestKey(p, g), "dt=2026-11-29/hr=13/_pswap/manifests/" + g + ".json"},
		{layout.LegacyStagedKey(p, g), "dt=2026-11-29/hr=13/_pswap/staged/" + g + ".json"},
		{layout.LegacyDataPrefix(p, g), "dt=2026-11-29/hr=13/_pswap/gen/" + g + "/"},
		{layout.DataPrefixIn(p, g, 0), layout.LegacyDataPrefix(p, g)},
		{layout.DataPrefixIn(p, g, manifest.DataLayoutTable), layout.DataPrefix(p, g)},
		{layout.DataPrefixOf(&manifest.Manifest{Partition: p, Generation: genID(2), DataGeneration: g}), layout.LegacyDataPrefix(p, g)},
		{layout.DataPrefixOf(&manifest.Manifest{Partition: p, Generation: g, DataLayout: manifest.DataLayoutTable}), layout.DataPrefix(p, g)},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	for _, k := range []string{layout.PointerKey(p), layout.LegacyPointerKey(p)} {
		if part, ok := layout.PartitionOfPointerKey(k); !ok || part != p {
			t.Errorf("PartitionOfPointerKey(%q) = %q %v", k, part, ok)
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
		{"_pswap/p/dt=2026-11-29/pointer.json", "dt=2026-11-29", true},
		{"_pswap/p/dt=2026-11-29/hr=13/gen/x/y", "dt=2026-11-29/hr=13", true},
		{"_pswap/p/dt=2026-11-29/gen/x/hr=1/y", "dt=2026-11-29", true},
		{"_pswap/p/pointer.json", "", false},
		{"_pswap/table.json", "", false},
		{"_pswap/p/a b=1/pointer.json", "a b=1", false},
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
		"/_pswap/staged/" + g + ".json", "/_pswap/attempts/" + g + ".json", "/_pswap/gen//a", "/x", "",
	} {
		f.Add("dt=2026-11-29", "dt=2026-11-29"+s)
		f.Add("dt=2026-11-29", "_pswap/p/dt=2026-11-29"+strings.TrimPrefix(s, "/_pswap"))
	}
	f.Add("a=1/b=2", "a=1/b=2/_pswap/gen/"+g+"/../../pointer.json")
	f.Fuzz(func(t *testing.T, part, key string) {
		k, gen := layout.Classify(part, key)
		switch k {
		case layout.KindOther:
			return
		case layout.KindPointer:
			if (key != layout.PointerKey(part) && key != layout.LegacyPointerKey(part)) || gen != "" {
				t.Fatalf("pointer %q", key)
			}
			return
		}
		legacy := strings.HasPrefix(key, layout.LegacyMetaPrefix(part))
		if manifest.ValidateGenerationID(gen) != nil || !(legacy || strings.HasPrefix(key, layout.MetaPrefix(part))) {
			t.Fatalf("layout.Classify(%q, %q) = %v %q", part, key, k, gen)
		}
		dl := manifest.DataLayoutTable
		if legacy {
			dl = 0
		}
		switch k {
		case layout.KindManifest:
			if key != layout.ManifestKey(part, gen) && key != layout.LegacyManifestKey(part, gen) {
				t.Fatalf("manifest %q is not ManifestKey(%q)", key, gen)
			}
		case layout.KindData:
			if pre := layout.DataPrefixIn(part, gen, dl); !strings.HasPrefix(key, pre) || len(key) == len(pre) {
				t.Fatalf("data %q not under DataPrefix(%q)", key, gen)
			}
		case layout.KindStaged:
			if key != layout.StagedKey(part, gen) && key != layout.LegacyStagedKey(part, gen) {
				t.Fatalf("staged %q", key)
			}
		case layout.KindAttempt:
			if key != layout.AttemptKey(part, gen) {
				t.Fatalf("attempt %q is not AttemptKey(%q)", key, gen)
			}
		}
	})
}

// An attempt record lies in the table-level layout only, for a partition
// of either layout: the same name in a legacy _pswap folder is not one.
func TestClassifyAttempt(t *testing.T) {
	const p = "dt=2026-11-29/hr=13"
	g := genID(3)
	if got, want := layout.AttemptKey(p, g), "_pswap/p/"+p+"/attempts/"+g+".json"; got != want {
		t.Fatalf("AttemptKey = %q, want %q", got, want)
	}
	if k, gen := layout.Classify(p, layout.AttemptKey(p, g)); k != layout.KindAttempt || gen != g {
		t.Errorf("Classify(AttemptKey) = %v %q", k, gen)
	}
	if k, _ := layout.Classify(p, p+"/_pswap/attempts/"+g+".json"); k != layout.KindOther {
		t.Errorf("a legacy folder's attempts/ record: %v, want other", k)
	}
	if k, _ := layout.Classify(p, layout.AttemptsPrefix(p)+"x.json"); k != layout.KindOther {
		t.Errorf("attempts/x.json: %v, want other", k)
	}
}
