package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// A part signed as UNSIGNED-PAYLOAD is still checked by the store: on a
// real MinIO, behind a proxy that flips one byte of the second part on the
// way (same length), the write fails and no object appears; without the
// flip the same write lands whole. So the part's checksum header, not the
// SHA-256 of the signature, is what verifies the bytes, in both checksum
// modes.
func TestUnsignedPartsStillVerified(t *testing.T) {
	for _, whenRequired := range []bool{false, true} {
		name := "crc32"
		if whenRequired {
			name = "content-md5"
		}
		t.Run(name, func(t *testing.T) {
			opts := testenv.S3Options(t)
			bucket, _ := testenv.S3Bucket(t)
			target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
			if err != nil {
				t.Fatal(err)
			}
			var flip atomic.Bool
			rp := httputil.NewSingleHostReverseProxy(target)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut && r.URL.Query().Get("partNumber") == "2" && flip.Load() {
					body, err := io.ReadAll(r.Body)
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadGateway)
						return
					}
					body[len(body)/2] ^= 0x40
					r.Body = io.NopCloser(bytes.NewReader(body))
				}
				rp.ServeHTTP(w, r)
			}))
			defer srv.Close()
			opts.Endpoint = srv.URL
			opts.ChecksumWhenRequired = whenRequired
			ctx := context.Background()
			st, err := s3store.New(ctx, bucket, "unsigned-"+name, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			data := make([]byte, 2*s3store.MinPartSize+100)
			_, _ = rand.Read(data)
			write := func(key string) error {
				w, err := st.NewWriter(ctx, key, store.WriterOptions{PartSize: s3store.MinPartSize})
				if err != nil {
					return err
				}
				if _, err := w.Write(data); err != nil {
					return err
				}
				_, err = w.Commit()
				return err
			}
			flip.Store(true)
			if err := write("flipped"); err == nil {
				t.Fatal("a part altered on the way was accepted")
			}
			if _, err := st.Stat(ctx, "flipped"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("after the refused part: Stat = %v, want not found", err)
			}
			flip.Store(false)
			if err := write("whole"); err != nil {
				t.Fatal(err)
			}
			rc, _, err := st.Get(ctx, "whole")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
			}
		})
	}
}
