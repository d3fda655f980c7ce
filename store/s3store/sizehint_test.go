package s3store

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/pswap/pswap/store"
)

// TestWriterSizeHint: a write told it holds more than one part creates its
// multipart upload at once, before the first byte (the round trip overlaps
// the reading of the first part); the object is the same. A hint within
// one part changes nothing, and a hint that turns out wrong (the object
// fits one Put) aborts the upload it created.
func TestWriterSizeHint(t *testing.T) {
	t.Parallel()
	type hinter interface{ SizeHint(int64) }
	for _, c := range []struct {
		name       string
		hint, size int
		want       []string
	}{
		{"multipart", 3 * MinPartSize, 3*MinPartSize - 5,
			[]string{"CreateMultipartUpload", "UploadPart", "UploadPart", "UploadPart", "CompleteMultipartUpload"}},
		{"within a part", MinPartSize, MinPartSize, []string{"PutObject"}},
		{"wrong hint", 3 * MinPartSize, 1000, []string{"CreateMultipartUpload", "PutObject", "AbortMultipartUpload"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			created := make(chan struct{}, 1)
			f := newFake(t, func(w http.ResponseWriter, r request) bool {
				if r.kind() == "CreateMultipartUpload" {
					created <- struct{}{}
				}
				return false
			})
			s := f.store(t, Options{})
			w, err := s.NewWriter(context.Background(), "gen/a.bin", store.WriterOptions{PartSize: MinPartSize, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			h, ok := w.(hinter)
			if !ok {
				t.Fatalf("%T has no SizeHint", w)
			}
			h.SizeHint(int64(c.hint))
			if c.want[0] == "CreateMultipartUpload" {
				select {
				case <-created:
				case <-time.After(30 * time.Second):
					t.Fatal("no CreateMultipartUpload before the first byte")
				}
			}
			data := randomBytes(c.size)
			if _, err := w.(io.ReaderFrom).ReadFrom(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := f.kinds(); !slices.Equal(got, c.want) {
				t.Errorf("requests %v, want %v", got, c.want)
			}
			var body []byte
			if ups := f.requests("UploadPart"); len(ups) > 0 {
				for _, u := range ups {
					body = append(body, u.Body...)
				}
			} else {
				body = f.requests("PutObject")[0].Body
			}
			if !bytes.Equal(body, data) {
				t.Errorf("sent %d bytes, want the %d written", len(body), len(data))
			}
		})
	}
}
