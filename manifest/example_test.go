package manifest_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/manifest"
)

func ExampleEncode() {
	data := []byte("id,amount\n1,9.99\n")
	sum := sha256.Sum256(data)
	var c manifest.Content
	c.Add(manifest.File{
		Path:     "part-00000.parquet",
		Size:     int64(len(data)),
		Rows:     1,
		Checksum: manifest.SHA256Checksum(sum[:]),
	})
	c.ContentChecksum = "xxh3-128-set:00112233445566778899aabbccddeeff"

	m := &manifest.Manifest{
		Partition:   "dt=2026-11-29",
		Generation:  "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b", // normally manifest.NewGenerationID()
		RunID:       "backfill-2026-11-29",
		Content:     c,
		CreatedAt:   time.Date(2026, 11, 29, 14, 2, 3, 0, time.UTC),
		CommittedAt: time.Date(2026, 11, 29, 14, 2, 9, 500_000_000, time.UTC),
		Writer:      "pswap/0.1.0",
	}
	b, err := manifest.Encode(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(b))
	// Output:
	// {
	//   "format": "pswap-manifest",
	//   "version": "1.0",
	//   "partition": "dt=2026-11-29",
	//   "generation": "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
	//   "run_id": "backfill-2026-11-29",
	//   "created_at": "2026-11-29T14:02:03Z",
	//   "committed_at": "2026-11-29T14:02:09.5Z",
	//   "writer": "pswap/0.1.0",
	//   "rows": 1,
	//   "bytes": 17,
	//   "content_checksum": "xxh3-128-set:00112233445566778899aabbccddeeff",
	//   "files": [
	//     {"path": "part-00000.parquet", "size": 17, "rows": 1, "checksum": "sha256:ae45b160639d08572c6f71060e189598e1e25d4d48daf0e3e027a459b516fd94"}
	//   ]
	// }
}

func ExampleDecode() {
	doc := `{
  "format": "pswap-manifest",
  "version": "1.0",
  "partition": "dt=2026-11-29/hr=13",
  "generation": "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
  "parent": "0193a1b0-0000-7000-8000-000000000001",
  "created_at": "2026-11-29T15:02:03+01:00",
  "committed_at": "2026-11-29T14:05:07Z",
  "writer": "pswap/0.1.0",
  "rows": 3,
  "bytes": 300,
  "content_checksum": "xxh3-128-set:00112233445566778899aabbccddeeff",
  "files": [
    {"path": "part-00000.parquet", "size": 100, "rows": 1, "checksum": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
    {"path": "part-00001.parquet", "size": 200, "rows": 2, "checksum": "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"}
  ]
}`
	m, err := manifest.Decode([]byte(doc))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Partition, m.Generation)
	fmt.Println("files under gen/" + m.DataGen() + "/")
	for _, f := range m.Files {
		fmt.Println(" ", f.Path, f.Size, f.Rows)
	}
	fmt.Println("created", m.CreatedAt) // converted to UTC
	// Output:
	// dt=2026-11-29/hr=13 0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b
	// files under gen/0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b/
	//   part-00000.parquet 100 1
	//   part-00001.parquet 200 2
	// created 2026-11-29 14:02:03 +0000 UTC
}

// Decode refuses documents that are damaged, tampered with or of an unknown
// version, naming the field and the problem.
func ExampleDecode_errors() {
	for _, doc := range []string{
		`{"format": "pswap-manifest", "version": "3.0"}`,
		`{"format": "pswap-manifest", "version": "1.0", "partition": "dt=2026-11-29"`,
		`{"format": "pswap-manifest", "version": "1.0", "version": "1.1"}`,
		`{"format": "pswap-manifest", "version": "1.0", "partition": "dt=2026-11-29",
		  "generation": "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
		  "created_at": "2026-11-29T14:02:03Z", "committed_at": "2026-11-29T14:05:07Z", "writer": "",
		  "rows": 1, "bytes": 1, "content_checksum": "xxh3-128-set:00112233445566778899aabbccddeeff",
		  "files": [{"path": "../../other-table/x.parquet", "size": 1, "rows": 1,
		    "checksum": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}]}`,
	} {
		_, err := manifest.Decode([]byte(doc))
		fmt.Println(err)
		fmt.Println("  invalid:", errors.Is(err, manifest.ErrInvalid),
			"unsupported version:", errors.Is(err, manifest.ErrUnsupportedVersion))
	}
	// Output:
	// manifest: version "3.0": unsupported major version 3 (this reader knows 1 and 2): written by a newer pswap (format 3.0); upgrade pswap to read it
	//   invalid: true unsupported version: true
	// manifest: document: truncated JSON
	//   invalid: true unsupported version: false
	// manifest: version: duplicate key
	//   invalid: true unsupported version: false
	// manifest: files[0].path "../../other-table/x.parquet": escapes the generation prefix
	//   invalid: true unsupported version: false
}

func ExampleManifest_PointerAfter() {
	first := &manifest.Manifest{
		Partition:   "dt=2026-11-29",
		Generation:  "0193a1b0-0000-7000-8000-000000000001",
		RunID:       "daily/2026-11-29",
		Content:     manifest.Content{ContentChecksum: "xxh3-128-set:ffeeddccbbaa99887766554433221100"},
		CreatedAt:   time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC),
		CommittedAt: time.Date(2026, 11, 29, 1, 0, 5, 0, time.UTC),
	}
	backfill := &manifest.Manifest{
		Partition:   "dt=2026-11-29",
		Generation:  "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
		Parent:      first.Generation,
		RunID:       "backfill/2026-11-29",
		Content:     manifest.Content{ContentChecksum: "xxh3-128-set:00112233445566778899aabbccddeeff"},
		CreatedAt:   time.Date(2026, 11, 29, 14, 2, 3, 0, time.UTC),
		CommittedAt: time.Date(2026, 11, 29, 14, 2, 9, 0, time.UTC),
	}
	// The backfill replaces the first commit: its pointer remembers both.
	p := backfill.PointerAfter(first.PointerAfter(nil))
	b, err := manifest.EncodePointer(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(b))
	_, found := p.FindRun("daily/2026-11-29")
	fmt.Println("daily run committed here:", found)
	// Output:
	// {
	//   "format": "pswap-pointer",
	//   "version": "1.1",
	//   "partition": "dt=2026-11-29",
	//   "generation": "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
	//   "seq": 2,
	//   "parent": "0193a1b0-0000-7000-8000-000000000001",
	//   "run_id": "backfill/2026-11-29",
	//   "rows": 0,
	//   "bytes": 0,
	//   "files": 0,
	//   "content_checksum": "xxh3-128-set:00112233445566778899aabbccddeeff",
	//   "committed_at": "2026-11-29T14:02:09Z",
	//   "history": [
	//     {"generation": "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b", "run_id": "backfill/2026-11-29", "committed_at": "2026-11-29T14:02:09Z", "rows": 0},
	//     {"generation": "0193a1b0-0000-7000-8000-000000000001", "run_id": "daily/2026-11-29", "committed_at": "2026-11-29T01:00:05Z", "rows": 0}
	//   ]
	// }
	// daily run committed here: true
}

func ExampleNewGenerationID() {
	a := manifest.NewGenerationID()
	b := manifest.NewGenerationID()
	fmt.Println(manifest.ValidateGenerationID(a) == nil, len(a))
	fmt.Println("later sorts later:", a < b)
	// Output:
	// true 36
	// later sorts later: true
}
