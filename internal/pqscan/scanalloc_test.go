package pqscan

import (
	"testing"
	"unsafe"
)

// TestPoolAllocator: buffers handed out are zeroed and 64-byte aligned even
// when they are reused, and Reallocate keeps the content and zeroes what
// it adds.
func TestPoolAllocator(t *testing.T) {
	a := &poolAllocator{}
	for round := range 3 {
		for _, n := range []int{1, 63, 64, 65, 1000, 4096, 100_000, 1 << 20} {
			b := a.Allocate(n)
			if len(b) != n {
				t.Fatalf("Allocate(%d): len %d", n, len(b))
			}
			if p := uintptr(unsafe.Pointer(&b[0])); p%64 != 0 {
				t.Fatalf("Allocate(%d): address %#x not 64-byte aligned", n, p)
			}
			for i, x := range b {
				if x != 0 {
					t.Fatalf("round %d: Allocate(%d)[%d] = %d, want 0", round, n, i, x)
				}
			}
			for i := range b {
				b[i] = 0xaa
			}
			b = a.Reallocate(n+n/2+1, b)
			for i, x := range b {
				if want := byte(0xaa); i >= n {
					want = 0
					if x != want {
						t.Fatalf("Reallocate(%d) from %d: [%d] = %#x, want 0", n+n/2+1, n, i, x)
					}
				} else if x != want {
					t.Fatalf("Reallocate(%d) from %d: [%d] = %#x, want 0xaa", n+n/2+1, n, i, x)
				}
			}
			for i := range b {
				b[i] = 0x55
			}
			a.Free(b)
		}
	}
	a.Free(make([]byte, 100)) // not one of ours: ignored
	if b := a.Allocate(0); len(b) != 0 {
		t.Fatalf("Allocate(0): len %d", len(b))
	}
}
