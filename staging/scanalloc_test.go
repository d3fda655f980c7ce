package staging

import (
	"context"
	"os"
	"path/filepath"
	"sync"
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

// TestConcurrentScansAgree: scans of one file with many row groups, at the
// same time on several goroutines (sharing the pooled buffers), all give
// the checksum of the rows.
func TestConcurrentScansAgree(t *testing.T) {
	rows := makeRows(20_000, 9)
	st, c := stageArrow(t, Options{RowGroupRows: 1500}, rows)
	path := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(path, fileBytes(t, st, c.Files[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1 {
		t.Fatalf("%d files, want 1", len(c.Files))
	}
	var wg sync.WaitGroup
	sums := make([]string, 8)
	errs := make([]error, len(sums))
	for g := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				f, err := os.Open(path)
				if err != nil {
					errs[g] = err
					return
				}
				var r RowScan
				errs[g] = r.Add(context.Background(), f, c.Files[0].Size, path)
				f.Close()
				_, sums[g] = r.Checksum()
			}
		}()
	}
	wg.Wait()
	for g, s := range sums {
		if errs[g] != nil || s != c.ContentChecksum {
			t.Errorf("scan %d: %s %v, want %s", g, s, errs[g], c.ContentChecksum)
		}
	}
}
