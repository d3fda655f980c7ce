package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// EnvS3 is the variable that enables S3 tests.
const EnvS3 = "PSWAP_TEST_S3"

// skipMessage tells how to run the S3 tests.
const skipMessage = "S3 tests need MinIO: run scripts/test.sh, or set " + EnvS3 +
	"=1 and AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY for an S3-compatible server"

// S3Enabled reports whether S3 tests are enabled (PSWAP_TEST_S3 set to
// anything but "", "0" or "false").
func S3Enabled() bool {
	v := strings.TrimSpace(os.Getenv(EnvS3))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// S3Options returns the s3store options tests use: the standard AWS chain
// from the environment. It skips the test when S3 tests are not enabled.
func S3Options(t testing.TB) s3store.Options {
	t.Helper()
	if !S3Enabled() {
		t.Skip(skipMessage)
	}
	return s3store.Options{}
}

// S3Client returns a raw S3 client for tests that must reach a bucket
// directly (to corrupt an object, list multipart uploads, and so on).
// It skips the test when S3 tests are not enabled.
func S3Client(t testing.TB) *s3.Client {
	t.Helper()
	c, err := s3store.NewClient(context.Background(), S3Options(t))
	if err != nil {
		t.Fatalf("testenv: S3 client: %v", err)
	}
	return c
}

// S3Bucket creates a fresh, empty bucket with a unique name and returns its
// name and a raw client. The bucket, with whatever is left in it (objects
// and multipart uploads), is deleted when the test ends.
func S3Bucket(t testing.TB) (string, *s3.Client) {
	t.Helper()
	c := S3Client(t)
	bucket := "pswap-test-" + randomHex(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("testenv: create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := DeleteBucket(ctx, c, bucket); err != nil {
			t.Errorf("testenv: delete bucket %s: %v", bucket, err)
		}
	})
	return bucket, c
}

// S3URL returns s3://bucket/prefix for a fresh bucket (see S3Bucket), for
// tests that open a store by URL, such as CLI tests.
func S3URL(t testing.TB) string {
	t.Helper()
	bucket, _ := S3Bucket(t)
	return "s3://" + bucket + "/" + testPrefix(t)
}

// S3 returns a store rooted at a prefix of a fresh bucket (see S3Bucket).
// The concrete type is *s3store.Store.
func S3(t testing.TB) store.Store {
	t.Helper()
	return S3Store(t)
}

// S3Store is S3 returning the concrete type, for tests of S3-only features.
func S3Store(t testing.TB) *s3store.Store {
	t.Helper()
	opts := S3Options(t)
	bucket, _ := S3Bucket(t)
	s, err := s3store.New(context.Background(), bucket, testPrefix(t), opts)
	if err != nil {
		t.Fatalf("testenv: s3store.New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// testPrefix is a root prefix derived from the test name, so that objects
// in a leftover bucket tell which test wrote them.
func testPrefix(t testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 60 {
		name = name[:60]
	}
	if name == "" {
		name = "test"
	}
	return "root/" + name
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("testenv: random: %v", err)
	}
	return hex.EncodeToString(b)
}

// DeleteBucket aborts the bucket's multipart uploads, deletes its objects
// and then the bucket. A bucket that does not exist is not an error.
func DeleteBucket(ctx context.Context, c *s3.Client, bucket string) error {
	var errs []error
	up := s3.NewListMultipartUploadsPaginator(c, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	for up.HasMorePages() {
		page, err := up.NextPage(ctx)
		if err != nil {
			if isNoSuchBucket(err) {
				return nil
			}
			return err
		}
		for _, u := range page.Uploads {
			_, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: &bucket, Key: u.Key, UploadId: u.UploadId,
			})
			errs = append(errs, err)
		}
	}
	objs := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket})
	for objs.HasMorePages() {
		page, err := objs.NextPage(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Contents))
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &bucket, Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, e := range out.Errors {
			errs = append(errs, errors.New(aws.ToString(e.Key)+": "+aws.ToString(e.Code)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
	return err
}

func isNoSuchBucket(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket"
}
