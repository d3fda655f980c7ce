package s3store_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// BenchmarkCopyVsUpload copies an object server-side and compares it with
// a plain client-side upload of the same bytes (NewWriter, 8 MiB parts),
// counting the requests of each on the wire. The size is
// PSWAP_BENCH_COPY_MIB (default 64; the figure is 1024):
//
//	PSWAP_BENCH_COPY_MIB=1024 go test ./store/s3store -run '^$' -bench CopyVsUpload -benchtime 1x
func BenchmarkCopyVsUpload(b *testing.B) {
	mib := 64
	if v, err := strconv.Atoi(os.Getenv("PSWAP_BENCH_COPY_MIB")); err == nil && v > 0 {
		mib = v
	}
	size := int64(mib) << 20
	ctx := context.Background()
	var reqs atomic.Int64
	opts := testenv.S3Options(b)
	opts.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.Proxy = func(*http.Request) (*url.URL, error) { reqs.Add(1); return nil, nil }
	})
	bucket, _ := testenv.S3Bucket(b)
	s, err := s3store.New(ctx, bucket, "bench", opts)
	if err != nil {
		b.Fatal(err)
	}
	var upload, copyPlain, copyCond time.Duration
	var upReqs, plainReqs, condReqs int64
	for i := 0; i < b.N; i++ {
		key := "in/" + strconv.Itoa(i)
		reqs.Store(0)
		t0 := time.Now()
		w, err := s.NewWriter(ctx, key, store.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyN(w, rand.NewChaCha8([32]byte{byte(i)}), size); err != nil {
			b.Fatal(err)
		}
		a, err := w.Commit()
		if err != nil {
			b.Fatal(err)
		}
		upload += time.Since(t0)
		upReqs += reqs.Load()

		reqs.Store(0)
		t0 = time.Now()
		if _, err := s.CopyFrom(ctx, "gen/plain/"+strconv.Itoa(i), bucket, s.Prefix()+key, a.Size, store.CopyOptions{SourceIfMatch: a.ETag}); err != nil {
			b.Fatal(err)
		}
		copyPlain += time.Since(t0)
		plainReqs += reqs.Load()

		reqs.Store(0)
		t0 = time.Now()
		if _, err := s.CopyFrom(ctx, "gen/cond/"+strconv.Itoa(i), bucket, s.Prefix()+key, a.Size, store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true}); err != nil {
			b.Fatal(err)
		}
		copyCond += time.Since(t0)
		condReqs += reqs.Load()
	}
	n := float64(b.N)
	b.ReportMetric(float64(mib), "MiB")
	b.ReportMetric(upload.Seconds()/n, "upload-s")
	b.ReportMetric(float64(upReqs)/n, "upload-reqs")
	b.ReportMetric(copyPlain.Seconds()/n, "copyobject-s")
	b.ReportMetric(float64(plainReqs)/n, "copyobject-reqs")
	b.ReportMetric(copyCond.Seconds()/n, "copy-if-none-match-s")
	b.ReportMetric(float64(condReqs)/n, "copy-if-none-match-reqs")
	b.ReportMetric(upload.Seconds()/copyCond.Seconds(), "upload/copy")
}
