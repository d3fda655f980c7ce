package main

import (
	"testing"

	"github.com/pswap/pswap"
)

// gc's summary names what it deletes: a local table's temporary files as
// such, with their size, not as multipart uploads of 0 B (issue 40, item
// 7); a multipart upload, whose size is not listed, without one.
func TestGCWhat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{what(0, 0, 0, 0, 0, 0, "", 0), " nothing"},
		{what(3, 1536, 1, 1, 0, 0, "", 0), " 3 objects (1.5 KiB): 1 generation, 1 orphan"},
		{what(0, 0, 0, 0, 1, 18<<20, pswap.GCUploadTempFile, 0), " 1 temporary upload file (18.0 MiB)"},
		{what(0, 0, 0, 0, 2, 0, pswap.GCUploadMultipart, 0), " 2 multipart uploads"},
		{what(2, 100, 1, 0, 1, 0, "", 1), " 2 objects (100 B): 1 generation; 1 multipart upload; 1 empty folder"},
		{what(0, 0, 0, 0, 0, 0, "", 2), " 2 empty folders"},
	} {
		if c.got != c.want {
			t.Errorf("what: %q, want %q", c.got, c.want)
		}
	}
}
