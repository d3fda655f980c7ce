package layout

import "testing"

// FuzzParseBatchKey: a key parses as a batch record's only if BatchKey
// gives it back.
func FuzzParseBatchKey(f *testing.F) {
	f.Add(BatchKey("01900000-0000-7000-8000-000000000001"))
	f.Add("_pswap/batches/x.json")
	f.Add("_pswap/batches/01900000-0000-7000-8000-000000000001.json/x")
	f.Fuzz(func(t *testing.T, key string) {
		if id, ok := ParseBatchKey(key); ok && BatchKey(id) != key {
			t.Fatalf("ParseBatchKey(%q) = %q, which BatchKey spells %q", key, id, BatchKey(id))
		}
	})
}

func TestParseBatchKey(t *testing.T) {
	const id = "01900000-0000-7000-8000-000000000001"
	if got, ok := ParseBatchKey(BatchKey(id)); !ok || got != id {
		t.Fatalf("ParseBatchKey(BatchKey(%s)) = %q, %v", id, got, ok)
	}
	for _, k := range []string{"_pswap/batches/x.json", "_pswap/batches/" + id, "_pswap/fold/" + id + ".json"} {
		if _, ok := ParseBatchKey(k); ok {
			t.Errorf("ParseBatchKey(%q): a batch record's key", k)
		}
	}
}
