// Package swaptest helps tests of the layers that commit generations (swap,
// gc) stage small, valid generations without a Parquet writer.
package swaptest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// Stage writes n small files named part-00000.parquet... under prefix (a
// generation's data prefix), create-if-absent, and returns their content
// description: file i holds a payload derived from seed and i and counts
// i+1 rows; the content checksum hashes the payloads, so equal seeds give
// equal content.
func Stage(t testing.TB, st store.Store, prefix string, n int, seed string) manifest.Content {
	t.Helper()
	var c manifest.Content
	rowsum := sha256.New()
	for i := range n {
		body := fmt.Appendf(nil, "%s/file-%d/%s", seed, i, strings.Repeat("x", i*10))
		name := fmt.Sprintf("part-%05d.parquet", i)
		if _, err := st.Put(context.Background(), prefix+name, body, store.PutOptions{IfNoneMatch: true}); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		c.Add(manifest.File{Path: name, Size: int64(len(body)), Rows: int64(i + 1), Checksum: manifest.SHA256Checksum(sum[:])})
		rowsum.Write(body)
	}
	c.ContentChecksum = fmt.Sprintf("test-sum:%x", rowsum.Sum(nil)[:16])
	return c
}
