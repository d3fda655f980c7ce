package testenv

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/gcsstore"
)

// EnvGCS is the variable that enables GCS tests (on fake-gcs-server, which
// STORAGE_EMULATOR_HOST points at).
const EnvGCS = "PSWAP_TEST_GCS"

const gcsSkipMessage = "GCS tests need fake-gcs-server: run scripts/test.sh, or scripts/fakegcs.sh build and start " +
	"and load its env file (" + EnvGCS + "=1, STORAGE_EMULATOR_HOST)"

// GCSEnabled reports whether GCS tests are enabled (PSWAP_TEST_GCS set to
// anything but "", "0" or "false", and STORAGE_EMULATOR_HOST set: the tests
// create and delete buckets, which they do on an emulator only).
func GCSEnabled() bool {
	v := strings.TrimSpace(os.Getenv(EnvGCS))
	return v != "" && v != "0" && !strings.EqualFold(v, "false") && os.Getenv(gcsstore.EmulatorHostEnv) != ""
}

// GCSOptions returns the gcsstore options tests use: the emulator of the
// environment. It skips the test when GCS tests are not enabled.
func GCSOptions(t testing.TB) gcsstore.Options {
	t.Helper()
	if !GCSEnabled() {
		t.Skip(gcsSkipMessage)
	}
	return gcsstore.Options{}
}

// GCSBucket creates a fresh, empty bucket on the emulator and returns its
// name and a raw client. The bucket and what is left in it are deleted
// when the test ends.
func GCSBucket(t testing.TB) (string, *storage.Client) {
	t.Helper()
	opts := GCSOptions(t)
	ctx := context.Background()
	s, err := gcsstore.New(ctx, "pswap-bootstrap", "", opts)
	if err != nil {
		t.Fatalf("testenv: GCS client: %v", err)
	}
	c := s.Client()
	bucket := "pswap-test-" + randomHex(t, 8)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.Bucket(bucket).Create(cctx, "pswap-test", nil); err != nil {
		t.Fatalf("testenv: create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := DeleteGCSBucket(ctx, c, bucket); err != nil {
			t.Errorf("testenv: delete bucket %s: %v", bucket, err)
		}
		c.Close()
	})
	return bucket, c
}

// DeleteGCSBucket deletes a bucket's objects and then the bucket. A bucket
// that does not exist is not an error.
func DeleteGCSBucket(ctx context.Context, c *storage.Client, bucket string) error {
	b := c.Bucket(bucket)
	it := b.Objects(ctx, nil)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if errors.Is(err, storage.ErrBucketNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := b.Object(a.Name).Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
			return err
		}
	}
	if err := b.Delete(ctx); err != nil && !errors.Is(err, storage.ErrBucketNotExist) {
		return err
	}
	return nil
}

// GCSURL returns gs://bucket/prefix for a fresh bucket (see GCSBucket).
func GCSURL(t testing.TB) string {
	t.Helper()
	bucket, _ := GCSBucket(t)
	return "gs://" + bucket + "/" + testPrefix(t)
}

// GCS returns a store rooted at a prefix of a fresh bucket (see GCSBucket).
// The concrete type is *gcsstore.Store.
func GCS(t testing.TB) store.Store {
	t.Helper()
	return GCSStore(t)
}

// GCSStore is GCS returning the concrete type.
func GCSStore(t testing.TB) *gcsstore.Store {
	t.Helper()
	opts := GCSOptions(t)
	bucket, _ := GCSBucket(t)
	s, err := gcsstore.New(context.Background(), bucket, testPrefix(t), opts)
	if err != nil {
		t.Fatalf("testenv: gcsstore.New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
