package s3store

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/pswap/pswap/store"
)

// crc32Of is the base64 of data's CRC32 (IEEE), as S3's checksum header.
func crc32Of(data []byte) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc32.ChecksumIEEE(data))
	return base64.StdEncoding.EncodeToString(b[:])
}

// A part is signed as UNSIGNED-PAYLOAD over plain HTTP (the SDK hashes no
// part with SHA-256), and still carries its checksum in a signed header,
// which the store checks: the CRC32 of its bytes, or their Content-MD5 in
// the when_required mode. The other requests are signed as before.
func TestPartsSignedAsUnsignedPayload(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"when_required", Options{ChecksumWhenRequired: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "")
			f := newFake(t, nil)
			s := f.store(t, tc.opts)
			ctx := context.Background()
			w, err := s.NewWriter(ctx, "big", store.WriterOptions{PartSize: MinPartSize})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(randomBytes(2*MinPartSize + 10)); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			parts := f.requests("UploadPart")
			if len(parts) != 3 {
				t.Fatalf("%d parts, want 3", len(parts))
			}
			for _, r := range parts {
				if sha := r.Header.Get("X-Amz-Content-Sha256"); sha != "UNSIGNED-PAYLOAD" {
					t.Errorf("part %s: X-Amz-Content-Sha256 %q, want UNSIGNED-PAYLOAD", r.Query.Get("partNumber"), sha)
				}
				signed := strings.ToLower(r.Header.Get("Authorization"))
				if tc.opts.ChecksumWhenRequired {
					if r.Header.Get("Content-Md5") == "" || !strings.Contains(signed, "content-md5") {
						t.Errorf("part %s: Content-MD5 %q not sent or not signed (%s)", r.Query.Get("partNumber"), r.Header.Get("Content-Md5"), signed)
					}
					continue
				}
				if got, want := r.Header.Get("X-Amz-Checksum-Crc32"), crc32Of(r.Body); got != want || !strings.Contains(signed, "x-amz-checksum-crc32") {
					t.Errorf("part %s: CRC32 header %q (the body's %q), signed: %s", r.Query.Get("partNumber"), got, want, signed)
				}
			}
			for _, kind := range []string{"CreateMultipartUpload", "CompleteMultipartUpload"} {
				for _, r := range f.requests(kind) {
					if sha := r.Header.Get("X-Amz-Content-Sha256"); sha == "UNSIGNED-PAYLOAD" {
						t.Errorf("%s signed as UNSIGNED-PAYLOAD", kind)
					}
				}
			}
		})
	}
}
