package staging

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pswap/pswap/internal/pqscan"
)

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
				var r pqscan.RowScan
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
