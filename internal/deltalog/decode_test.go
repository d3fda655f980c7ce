package deltalog

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeCommitRoundTrip(t *testing.T) {
	dtv := "2026-11-29"
	acts := []Action{
		{CommitInfo: &CommitInfo{Timestamp: 1, Operation: "WRITE", OperationParameters: map[string]string{"mode": "Overwrite"}}},
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &Metadata{ID: "id", Format: Format{Provider: "parquet"}, SchemaString: "{}", PartitionColumns: []string{"dt"}, Configuration: map[string]string{"a": "b"}}},
		{Txn: &Txn{AppID: "run", Version: 3}},
		{Remove: &Remove{Path: "dt=2026-11-29/_pswap/gen/a/p.parquet", DeletionTimestamp: 5, DataChange: true}},
		{Add: &Add{Path: "dt=2026-11-29/_pswap/gen/b/p%20q.parquet", PartitionValues: map[string]*string{"dt": &dtv}, Size: 10, ModificationTime: 4, DataChange: true,
			Stats: `{"numRecords":2}`, Tags: map[string]string{TagSeq: "2"}}},
	}
	data, err := EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCommit(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(acts) || got[5].Add.Path != acts[5].Add.Path || *got[5].Add.PartitionValues["dt"] != dtv || got[3].Txn.Version != 3 ||
		got[4].Remove.DeletionTimestamp != 5 || got[2].Metadata.PartitionColumns[0] != "dt" || got[1].Protocol.MinWriterVersion != 2 {
		t.Fatalf("round trip: %+v", got)
	}
}

func TestDecodeCommitRefuses(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true},"remove":{"path":"a","dataChange":true}}`, "exactly one"},
		{`{"add":{"path":"a","path":"b","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`, "duplicate"},
		{`{"add":{"partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`, "add.path: missing"},
		{`{"add":{"path":"a","partitionValues":{},"size":-1,"modificationTime":1,"dataChange":true}}`, "negative"},
		{`{"add":{"path":"a","partitionValues":{"dt":1},"size":1,"modificationTime":1,"dataChange":true}}`, "strings or nulls"},
		{`{"add":null}`, "null is not an action"},
		{`{"protocol":{"minReaderVersion":0,"minWriterVersion":2}}`, "versions start at 1"},
		{"{\"txn\":{\"appId\":\"a\",\"version\":1}}\n{\"txn\":", "line 2"},
		{"\xff", "UTF-8"},
	} {
		_, err := DecodeCommit([]byte(tc.doc))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want ErrCorrupt with %q", tc.doc, err, tc.want)
		}
	}
	// Another writer's fields and actions are read (ignored or named).
	acts, err := DecodeCommit([]byte(`{"commitInfo":{"operation":"VACUUM END","x":null}}` + "\n\n" +
		`{"domainMetadata":{"domain":"d"}}` + "\n" + `{"add":{"path":"a","partitionValues":{"dt":null},"size":1,"modificationTime":1,"dataChange":true,"deletionVector":{"x":1},"stats":null}}`))
	if err != nil || len(acts) != 3 || acts[1].Other != "domainMetadata" || acts[2].Add.Foreign != "deletionVector" {
		t.Fatalf("other writers' entries: %+v %v", acts, err)
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]string{"interval 7 days": "168h0m0s", "1 week": "168h0m0s", "interval 36 hours": "36h0m0s", "INTERVAL 1 minute": "1m0s"} {
		d, err := ParseInterval(in)
		if err != nil || d.String() != want {
			t.Errorf("%q: %v %v, want %s", in, d, err, want)
		}
	}
	for _, bad := range []string{"", "interval", "interval x days", "interval 1 fortnight", "interval -1 days"} {
		if _, err := ParseInterval(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
}

// FuzzDecodeCommit: the decoder never panics, and what it accepts it
// encodes and decodes to the same actions.
func FuzzDecodeCommit(f *testing.F) {
	f.Add([]byte(`{"add":{"path":"dt=1/_pswap/gen/a/p.parquet","partitionValues":{"dt":"1"},"size":1,"modificationTime":1,"dataChange":true,"stats":"{}","tags":{"pswap.seq":"1"}}}`))
	f.Add([]byte(`{"remove":{"path":"a","deletionTimestamp":1,"dataChange":true,"extendedFileMetadata":true,"size":3}}` + "\n" + `{"txn":{"appId":"r","version":2,"lastUpdated":3}}`))
	f.Add([]byte(`{"metaData":{"id":"i","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":["dt"],"configuration":{}}}` + "\n" + `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}}`))
	f.Add([]byte(`{"commitInfo":{"timestamp":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := DecodeCommit(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not match ErrCorrupt", err)
			}
			return
		}
		var ours []Action
		for _, a := range acts {
			if a.CommitInfo == nil && a.Other == "" {
				ours = append(ours, a)
			}
		}
		enc, err := EncodeCommit(ours)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeCommit(enc)
		if err != nil {
			t.Fatalf("re-decoding %q: %v", enc, err)
		}
		enc2, _ := EncodeCommit(again)
		if string(enc) != string(enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzDecodeCheckpoint: a checkpoint that does not read is ErrCorrupt,
// never a panic.
func FuzzDecodeCheckpoint(f *testing.F) {
	s := newState()
	s.Protocol = &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	s.Metadata = &Metadata{ID: "i", Format: Format{Provider: "parquet"}, SchemaString: "{}", PartitionColumns: []string{"dt"}}
	v := "1"
	s.Files["a"] = &Add{Path: "a", PartitionValues: map[string]*string{"dt": &v}, Size: 1, DataChange: true, Tags: map[string]string{TagSeq: "1"}}
	data, _, err := encodeCheckpoint(s, []*Remove{{Path: "b", DeletionTimestamp: 2}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeCheckpoint(data, 1); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not match ErrCorrupt", err)
		}
	})
}
