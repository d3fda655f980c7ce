package restcat

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/pswap/pswap/catalog"
)

const uuid = "7a9d3c2e-4b1f-4e8a-9c6d-1f2e3d4c5b6a"

// doc is a table's metadata JSON with schemas 0..schemas-1 and the given
// snapshots, main naming the last one.
func doc(schemas int, snaps ...int64) []byte {
	m := map[string]any{
		"format-version": 2, "table-uuid": uuid, "location": "s3://b/t", "last-column-id": 2 + schemas,
		"current-schema-id": schemas - 1, "default-spec-id": 0, "default-sort-order-id": 0,
		"partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}},
		"sort-orders":     []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"properties":      map[string]string{"k": fmt.Sprint(len(snaps))},
	}
	var ss, sn []any
	for i := range schemas {
		ss = append(ss, map[string]any{"type": "struct", "schema-id": i, "fields": []any{}})
	}
	for _, id := range snaps {
		sn = append(sn, map[string]any{"snapshot-id": id, "sequence-number": id, "timestamp-ms": id, "manifest-list": "s3://b/t/metadata/l.avro"})
	}
	m["schemas"], m["snapshots"] = ss, sn
	if len(snaps) > 0 {
		m["current-snapshot-id"] = snaps[len(snaps)-1]
		m["refs"] = map[string]any{"main": map[string]any{"snapshot-id": snaps[len(snaps)-1], "type": "branch"}}
	}
	data, _ := json.Marshal(m)
	return data
}

func mustParse(t *testing.T, data []byte) *table {
	t.Helper()
	tb, err := parseTable(data)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// actions lists a request's update actions, and its requirements' types
// with the ref's snapshot.
func actions(req map[string]any) (ups []string, reqs []string) {
	for _, u := range req["updates"].([]update) {
		ups = append(ups, u["action"].(string))
	}
	for _, r := range req["requirements"].([]update) {
		reqs = append(reqs, fmt.Sprintf("%v=%v/%v", r["type"], r["uuid"], r["snapshot-id"]))
	}
	return ups, reqs
}

// TestCommitRequest: the commit is the difference between the catalog's
// table and pswap's version, under the table's uuid and main's snapshot.
func TestCommitRequest(t *testing.T) {
	cur := mustParse(t, doc(1, 1, 2))
	next := mustParse(t, doc(2, 2, 3, 4)) // a new schema, two snapshots, 1 expired
	req, err := commitRequest(cur, next, "s3://b/t/metadata/v7.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	ups, reqs := actions(req)
	want := []string{"add-schema", "set-current-schema", "add-snapshot", "add-snapshot", "set-snapshot-ref", "remove-snapshots", "set-properties"}
	if !slices.Equal(ups, want) {
		t.Fatalf("updates %v, want %v", ups, want)
	}
	if !slices.Equal(reqs, []string{"assert-table-uuid=" + uuid + "/<nil>", "assert-ref-snapshot-id=<nil>/2"}) {
		t.Fatalf("requirements %v", reqs)
	}
	u := req["updates"].([]update)
	if u[1]["schema-id"] != -1 || !slices.Equal(u[5]["snapshot-ids"].([]int64), []int64{1}) || u[4]["snapshot-id"] != int64(4) {
		t.Fatalf("updates %v", u)
	}
	props := u[6]["updates"].(map[string]string)
	if props[PropMetadataLocation] != "s3://b/t/metadata/v7.metadata.json" || props["k"] != "3" {
		t.Fatalf("set-properties %v", props)
	}

	// A table without snapshots yet: main is required absent (null).
	req, err = commitRequest(mustParse(t, doc(1)), next, "s3://b/t/metadata/v2.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, reqs := actions(req); reqs[1] != "assert-ref-snapshot-id=<nil>/<nil>" {
		t.Fatalf("requirements %v", reqs)
	}
}

// TestCommitRequestForeign: another table (uuid, location) or a current
// snapshot that is none of pswap's is refused before anything is sent.
func TestCommitRequestForeign(t *testing.T) {
	next := mustParse(t, doc(1, 1, 2))
	other := mustParse(t, doc(1, 1))
	other.uuid = "00000000-0000-0000-0000-000000000000"
	moved := mustParse(t, doc(1, 1))
	moved.location = "s3://b/elsewhere"
	foreignSnap := mustParse(t, doc(1, 1, 99))
	for name, cur := range map[string]*table{"uuid": other, "location": moved, "snapshot": foreignSnap} {
		if _, err := commitRequest(cur, next, "s3://b/t/metadata/v3.metadata.json"); !errors.Is(err, catalog.ErrCatalogForeign) {
			t.Errorf("%s: %v, want ErrCatalogForeign", name, err)
		}
	}
}

// TestPswapLocation: the property names the version only under the
// table's location; otherwise the catalog's own file stands (foreign).
func TestPswapLocation(t *testing.T) {
	tb := mustParse(t, doc(1, 1))
	tb.metadataLocation = "s3://b/t/metadata/00003-x.metadata.json"
	if got := tb.pswapLocation(); got != tb.metadataLocation {
		t.Fatal(got)
	}
	tb.props[PropMetadataLocation] = "s3://b/t/metadata/v3.metadata.json"
	if got := tb.pswapLocation(); got != "s3://b/t/metadata/v3.metadata.json" {
		t.Fatal(got)
	}
	tb.props[PropMetadataLocation] = "s3://b/other/metadata/v3.metadata.json"
	if got := tb.pswapLocation(); got != tb.metadataLocation {
		t.Fatal(got)
	}
}

// FuzzParseTable: a catalog's reply is external input. Any bytes either
// parse into a table with a uuid and a location, from which a commit to
// itself is computed without panic, or are refused; never a panic.
func FuzzParseTable(f *testing.F) {
	f.Add(doc(1, 1, 2))
	f.Add(doc(2))
	f.Add([]byte(`{"table-uuid":"u","location":"l","snapshots":[{"snapshot-id":"x"}]}`))
	f.Add([]byte(`{"table-uuid":"u","location":"l","refs":{"main":{"snapshot-id":5}},"schemas":[{}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := parseTable(data)
		if err != nil {
			return
		}
		if tb.uuid == "" || tb.location == "" {
			t.Fatalf("parsed %q into %+v", data, tb)
		}
		req, err := commitRequest(tb, tb, "loc")
		if err != nil {
			if !errors.Is(err, catalog.ErrCatalogForeign) {
				t.Fatalf("commit to itself: %v", err)
			}
			return
		}
		if _, err := json.Marshal(req); err != nil {
			t.Fatalf("the request does not encode: %v", err)
		}
	})
}

// FuzzErrorReply: a catalog's error body is external input: any bytes
// decode into an error that says its status, on one line.
func FuzzErrorReply(f *testing.F) {
	f.Add(409, []byte(`{"error":{"message":"Requirement failed","type":"CommitFailedException","code":409}}`))
	f.Add(401, []byte(`{"error":"invalid_client","error_description":"bad"}`))
	f.Add(500, []byte("<html>gateway</html>"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := errorReply(status, body)
		msg := e.Error()
		if e.status != status || len(e.msg) > 303 {
			t.Fatalf("%d %q: %+v", status, body, e)
		}
		for _, r := range e.msg {
			if r == '\n' {
				t.Fatalf("a multi-line message: %q", msg)
			}
		}
	})
}
