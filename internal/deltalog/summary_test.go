package deltalog

import (
	"errors"
	"strings"
	"testing"
)

// filesOf is n adds whose sizes sum to bytes.
func filesOf(n int, bytes int64) []*Add {
	out := make([]*Add, n)
	for i := range out {
		out[i] = &Add{}
	}
	if n > 0 {
		out[0].Size = bytes
	}
	return out
}

// summaryState is a state of two partitions and its partitions.
func summaryState() (*State, map[string]*part) {
	s := newState()
	s.Version = 20
	s.Protocol = &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	s.Metadata = &Metadata{ID: "i", Format: Format{Provider: "parquet"}, SchemaString: `{"type":"struct","fields":[]}`,
		PartitionColumns: []string{"dt"}, Configuration: map[string]string{"delta.checkpointInterval": "10"}}
	parts := map[string]*part{
		"dt=2026-11-01": {seq: 3, gen: "01a24912-302e-7b0c-b8bc-2c6758e82f39", files: filesOf(2, 300)},
		"dt=2026-11-02": {seq: 9, gen: "01a24912-303e-7b0c-a181-716690bf08b5", files: filesOf(40, 6000)},
	}
	return s, parts
}

// TestSummaryRoundTrip: a summary decodes to what was encoded; one
// under another version's key, with a partition named twice, or with a
// field it does not know is ErrCorrupt.
func TestSummaryRoundTrip(t *testing.T) {
	s, parts := summaryState()
	data, err := encodeSummary(s, parts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSummary(data, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := summaryParts(parts)
	if len(got.parts) != len(want) || got.version != 20 || got.metadata.SchemaString != s.Metadata.SchemaString ||
		!sameProtocol(*got.protocol, *s.Protocol) || got.metadata.Configuration["delta.checkpointInterval"] != "10" {
		t.Fatalf("decoded %+v", got)
	}
	for k, v := range want {
		if got.parts[k] != v {
			t.Fatalf("partition %s: %+v, want %+v", k, got.parts[k], v)
		}
	}
	packed, err := packSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := unpackSummary(packed, 20); err != nil || string(doc) != string(data) {
		t.Fatalf("unpack: %v", err)
	}
	if _, err := unpackSummary(data, 20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unpack of a summary not compressed: %v, want ErrCorrupt", err)
	}
	if v, ok := parseSummaryKey(summaryKey(20)); !ok || v != 20 {
		t.Fatalf("parseSummaryKey(%s) = %d, %v", summaryKey(20), v, ok)
	}
	first := `{"partition":"dt=2026-11-01"`
	for name, bad := range map[string]string{
		"other version": string(data),
		"twice":         strings.Replace(string(data), `{"partition":"dt=2026-11-02"`, first, 1),
		"unknown field": strings.Replace(string(data), `"format"`, `"extra":1,"format"`, 1),
		"no files":      strings.Replace(string(data), `"files":2`, `"files":0`, 1),
		"truncated":     string(data[:len(data)/2]),
	} {
		v := int64(20)
		if name == "other version" {
			v = 30
		}
		if _, err := decodeSummary([]byte(bad), v); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzDecodeSummary: a summary either is ErrCorrupt or encodes again to
// one that decodes to the same.
func FuzzDecodeSummary(f *testing.F) {
	s, parts := summaryState()
	data, err := encodeSummary(s, parts)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/3])
	f.Add([]byte(`{"format":"pswap-delta-summary","version":"1.0","delta_version":20,"protocol":{"minReaderVersion":1,"minWriterVersion":2},"metaData":{"id":"i","format":{"provider":"parquet"},"schemaString":"{}","partitionColumns":[]},"partitions":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := decodeSummary(data, 20)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not match ErrCorrupt", err)
			}
			return
		}
		s := newState()
		s.Version, s.Protocol, s.Metadata = sum.version, sum.protocol, sum.metadata
		parts := map[string]*part{}
		for k, v := range sum.parts {
			parts[k] = &part{seq: v.seq, gen: v.gen, files: filesOf(v.files, v.bytes)}
		}
		enc, err := encodeSummary(s, parts)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeSummary(enc, 20)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if len(again.parts) != len(sum.parts) || again.metadata.SchemaString != sum.metadata.SchemaString {
			t.Fatalf("not stable: %+v, %+v", sum, again)
		}
		for k, v := range sum.parts {
			if again.parts[k] != v {
				t.Fatalf("partition %s: %+v, then %+v", k, v, again.parts[k])
			}
		}
	})
}

// summaryParts is parts as a summary holds them.
func summaryParts(parts map[string]*part) map[string]partSummary {
	out := make(map[string]partSummary, len(parts))
	for name, p := range parts {
		out[name] = partSummary{gen: p.gen, seq: p.seq, files: len(p.files), bytes: p.bytes()}
	}
	return out
}
