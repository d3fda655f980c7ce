package swap_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// A pointer that does not decode, or names another partition, is one
// error: ErrCorruptPointer (and ErrCorrupt, of kind corrupt), from
// ReadPointer and in the listing; CorruptPointersError names each
// partition, the first ten of them.
func TestCorruptPointerIsOneError(t *testing.T) {
	st := memstore.New(memstore.Options{})
	commitMany(t, st, []string{"dt=2026-11-01", "dt=2026-11-02"}, 1, 1)
	for key, body := range map[string]string{
		layout.PointerKey("dt=2026-11-01"): "{not json",
		layout.PointerKey("dt=2026-11-02"): "",
	} {
		if _, err := st.Put(ctx, key, []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := swap.ReadPointer(ctx, st, "dt=2026-11-01")
	if !errors.Is(err, swap.ErrCorruptPointer) || !errors.Is(err, swap.ErrCorrupt) || !errors.Is(err, errkind.ErrCorrupt) {
		t.Errorf("ReadPointer of a damaged pointer: %v, want ErrCorruptPointer", err)
	}
	listed, err := swap.ListPointers(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	var bad []swap.CorruptPointer
	for _, l := range listed {
		if !errors.Is(l.Err, swap.ErrCorruptPointer) {
			t.Errorf("%s listed with %v, want ErrCorruptPointer", l.Partition, l.Err)
		}
		bad = append(bad, swap.CorruptPointer{Partition: l.Partition, Err: l.Err})
	}
	err = swap.CorruptPointersError(bad, "every other partition was read")
	if !errors.Is(err, swap.ErrCorruptPointer) || !errors.Is(err, errkind.ErrCorrupt) {
		t.Errorf("CorruptPointersError: %v, want ErrCorruptPointer", err)
	}
	for _, want := range []string{"2 partition(s)", "\n  dt=2026-11-01: ", "\n  dt=2026-11-02: ", "every other partition was read"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CorruptPointersError says %q, without %q", err, want)
		}
	}
	if swap.CorruptPointersError(nil, "x") != nil {
		t.Error("CorruptPointersError of none is not nil")
	}
	many := make([]swap.CorruptPointer, 13)
	for i := range many {
		many[i] = swap.CorruptPointer{Partition: fmt.Sprintf("dt=2026-11-%02d", i+1), Err: swap.ErrCorruptPointer}
	}
	msg := swap.CorruptPointersError(many, "x").Error()
	if !strings.Contains(msg, "dt=2026-11-10:") || strings.Contains(msg, "dt=2026-11-11:") || !strings.Contains(msg, "and 3 more") {
		t.Errorf("13 partitions: %s", msg)
	}
}
