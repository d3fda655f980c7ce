package swap_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/pswap/pswap/swap"
)

// FuzzDecodeRunRecord: a run record decodes, or fails with ErrCorrupt;
// what decodes encodes back to a document that decodes to the same.
func FuzzDecodeRunRecord(f *testing.F) {
	ok, err := swap.EncodeRunRecord(&swap.RunRecord{Partition: "dt=2026-11-29", RunID: "hourly__13",
		Since: time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC), Generation: "01938a3c-7b2e-7c1d-9a4f-0123456789ab"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ok)
	f.Add(bytes.Replace(ok, []byte(`"1.0"`), []byte(`"2.0"`), 1))
	f.Add(bytes.Replace(ok, []byte(`"run_id"`), []byte(`"run"`), 1))
	f.Add([]byte(`{"format":"pswap-run","version":"1.0","partition":"dt=1","run_id":"r","since":"2026-11-29T13:00:00Z"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := swap.DecodeRunRecord(data)
		if err != nil {
			if !errors.Is(err, swap.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		enc, err := swap.EncodeRunRecord(r)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", r, err)
		}
		r2, err := swap.DecodeRunRecord(enc)
		if err != nil || *r2 != *r {
			t.Fatalf("round trip: %+v -> %+v (%v)", r, r2, err)
		}
	})
}
