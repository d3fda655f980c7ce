package lakehouse_test

import (
	"testing"

	"github.com/pswap/pswap/internal/lakehouse"
)

// ManifestShape is the one rule for what a manifest's name makes it, which
// the simulation's checker shares: a copy of it there knew only the cold
// manifests before segments (pswap-m…) and took every segment for a
// foreign manifest.
func TestManifestShape(t *testing.T) {
	for _, c := range []struct {
		loc          string
		shared, cold bool
	}{
		{"s3://b/t/metadata/pswap-g5148e9ed6c49de34-1-2185320064818455726-7bc92a63.avro", true, false},
		{"metadata/pswap-c5148e9ed6c49de34-202610-3-2185320064818455726-7bc92a63.avro", true, true},
		{"pswap-m5148e9ed6c49de34-202610-3-2185320064818455726-7bc92a63.avro", true, true},
		{"pswap-c5148e9ed6c49de34-2026x0-3-2185320064818455726-7bc92a63.avro", false, false},
		{"metadata/0f1e2d3c-m0.avro", false, false},
		{"metadata/pswap-g5148e9ed6c49de34-1-2185320064818455726-7bc92a63.json", false, false},
	} {
		shared, cold := lakehouse.ManifestShape(c.loc)
		if shared != c.shared || cold != c.cold {
			t.Errorf("ManifestShape(%q) = %v, %v; want %v, %v", c.loc, shared, cold, c.shared, c.cold)
		}
	}
}
