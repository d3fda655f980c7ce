package manifest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// appendFiles returns n files of distinct paths under sub.
func appendFiles(sub string, n int) []File {
	out := make([]File, n)
	for i := range out {
		out[i] = File{Path: fmt.Sprintf("%s/part-%05d.parquet", sub, i), Size: int64(100 + i), Rows: int64(10 + i), Checksum: sumA}
	}
	return out
}

// packedHead builds a head of n appends of k files each the way an append
// does (the base's head plus the run's files, then Pack), returning it, the
// segments it wrote (by id), and the plain manifest it stands for.
func packedHead(t testing.TB, n, k int) (*Manifest, map[string][]byte, *Manifest) {
	t.Helper()
	segs := map[string][]byte{}
	head := validManifest()
	head.Files, head.Rows, head.Bytes = nil, 0, 0
	head.Kind = KindAppend
	plain := *head
	for i := range n {
		for _, f := range appendFiles(fmt.Sprintf("run-%04d", i), k) {
			head.Add(f)
			plain.Add(f)
		}
		packed, err := head.Pack()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range packed {
			segs[p.Ref.ID] = p.Data
		}
	}
	return head, segs, &plain
}

func fetchFrom(segs map[string][]byte) SegmentFetcher {
	return func(_ context.Context, id string) ([]byte, error) {
		b, ok := segs[id]
		if !ok {
			return nil, errors.New("no such segment")
		}
		return b, nil
	}
}

// TestPackExpand: a head of 1,000 appends of 2 files stays small (a tail
// under SegmentFiles files, a few references), encodes as version 2.0,
// decodes to itself, and expands to the plain manifest of all the files in
// append order.
func TestPackExpand(t *testing.T) {
	head, segs, plain := packedHead(t, 1000, 2)
	if len(head.Files) >= SegmentFiles {
		t.Errorf("tail of %d files, want fewer than %d", len(head.Files), SegmentFiles)
	}
	if len(head.Segments) > 3*(SegmentFanout-1) {
		t.Errorf("%d references, want at most %d", len(head.Segments), 3*(SegmentFanout-1))
	}
	if head.FileCount() != 2000 || head.Rows != plain.Rows || head.Bytes != plain.Bytes {
		t.Fatalf("head counts %d files %d rows %d bytes, want 2000, %d, %d", head.FileCount(), head.Rows, head.Bytes, plain.Rows, plain.Bytes)
	}
	b := mustEncode(t, head)
	if !strings.Contains(string(b), `"version": "2.0"`) {
		t.Fatalf("a head does not encode as 2.0:\n%s", b)
	}
	if len(b) > 16<<10 {
		t.Errorf("head of 2,000 files encodes to %d bytes", len(b))
	}
	plainBytes := mustEncode(t, plain)
	t.Logf("head %d bytes (%d references, %d tail files), plain manifest %d bytes, %d segments written",
		len(b), len(head.Segments), len(head.Files), len(plainBytes), len(segs))
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Segments, head.Segments) || !reflect.DeepEqual(got.Files, head.Files) {
		t.Fatal("a head does not decode to itself")
	}
	if err := got.Expand(context.Background(), fetchFrom(segs)); err != nil {
		t.Fatal(err)
	}
	if got.Segmented() || !reflect.DeepEqual(got.Files, plain.Files) {
		t.Fatalf("expanded to %d files, want the %d of the plain manifest in order", len(got.Files), len(plain.Files))
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if eb := mustEncode(t, got); string(eb) != string(plainBytes) {
		t.Error("an expanded head does not encode as the plain manifest")
	}
}

// TestExpandRejects: a segment that is missing, altered, or of another
// partition fails the expansion (ErrInvalid for the last two).
func TestExpandRejects(t *testing.T) {
	head, segs, _ := packedHead(t, 40, 2)
	ctx := context.Background()
	some := head.Segments[0].ID

	missing := map[string][]byte{}
	for k, v := range segs {
		missing[k] = v
	}
	delete(missing, some)
	h := *head
	if err := h.Expand(ctx, fetchFrom(missing)); err == nil || !strings.Contains(err.Error(), "no such segment") {
		t.Errorf("missing segment: %v", err)
	}

	altered := map[string][]byte{}
	for k, v := range segs {
		altered[k] = v
	}
	altered[some] = []byte(strings.Replace(string(segs[some]), `"rows": 10`, `"rows": 11`, 1))
	h = *head
	if err := h.Expand(ctx, fetchFrom(altered)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("altered segment: %v", err)
	}

	other := *head
	other.Partition = "dt=2026-11-30"
	if err := other.Expand(ctx, fetchFrom(segs)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not the manifest's") {
		t.Errorf("segment of another partition: %v", err)
	}

	bad := *head
	bad.Rows++
	if err := bad.Validate(); err == nil {
		t.Error("a head whose totals disagree with its tail and segments validates")
	}
}

// TestHeadRefusedByVersion1: a head declares major version 2, which a
// reader of version 1 refuses (ErrUnsupportedVersion) instead of reading
// only its tail; a version 1.x document that carries segments is refused
// here too (an unknown field).
func TestHeadRefusedByVersion1(t *testing.T) {
	head, _, _ := packedHead(t, 20, 2)
	b := string(mustEncode(t, head))
	if _, err := Decode([]byte(strings.Replace(b, `"version": "2.0"`, `"version": "1.2"`, 1))); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "segments") {
		t.Errorf("1.2 with segments: %v", err)
	}
	// What version 1 readers do with a 2.0 document: checkVersion with
	// major 2 unknown.
	if _, err := checkVersion("pointer", SegmentedVersion); err == nil || !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("a reader of major 1 only: %v", err)
	}
}

func seedSegments(t testing.TB) map[string][]byte {
	head, segs, _ := packedHead(t, 300, 2)
	out := map[string][]byte{}
	for i, r := range head.Segments {
		out[fmt.Sprintf("level-%d-%d", r.Level, i)] = segs[r.ID]
	}
	return out
}

// FuzzDecodeSegment: a segment document that parses decodes under the
// reference of its own bytes and contents, under no other, and re-encodes
// to a document that decodes to the same segment.
func FuzzDecodeSegment(f *testing.F) {
	for _, s := range seedSegments(f) {
		f.Add(s)
		f.Add([]byte(strings.Replace(string(s), `"level": `, `"level": 1`, 1)))
		f.Add([]byte(strings.Replace(string(s), `"files": `, `"files": 1`, 1)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, perr := parseSegment(data)
		if perr != nil {
			if !errors.Is(perr, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", perr)
			}
			return
		}
		ref := s.ref(data)
		got, err := DecodeSegment(data, ref)
		if err != nil {
			t.Fatalf("does not decode under its own reference: %v", err)
		}
		wrong := ref
		wrong.Files++
		if _, err := DecodeSegment(data, wrong); !errors.Is(err, ErrInvalid) {
			t.Fatalf("decodes under a reference of other counts: %v", err)
		}
		b, ref2, err := EncodeSegment(got)
		if err != nil {
			t.Fatalf("a decoded segment does not encode: %v", err)
		}
		again, err := DecodeSegment(b, ref2)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
