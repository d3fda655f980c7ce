package testenv

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/pswap/pswap/store"
)

func TestS3SkipsWithoutEnv(t *testing.T) {
	t.Setenv(EnvS3, "")
	for name, f := range map[string]func(testing.TB){
		"S3":     func(t testing.TB) { S3(t) },
		"S3URL":  func(t testing.TB) { S3URL(t) },
		"Client": func(t testing.TB) { S3Client(t) },
	} {
		var skipped bool
		var reached bool
		t.Run(name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			f(t)
			reached = true
		})
		if !skipped || reached {
			t.Errorf("%s: skipped=%v reached=%v, want a skip", name, skipped, reached)
		}
	}
}

func TestS3Enabled(t *testing.T) {
	for _, tc := range []struct {
		val  string
		want bool
	}{{"", false}, {"0", false}, {"false", false}, {"FALSE", false}, {" ", false}, {"1", true}, {"yes", true}, {"true", true}} {
		t.Setenv(EnvS3, tc.val)
		if got := S3Enabled(); got != tc.want {
			t.Errorf("S3Enabled() with %s=%q = %v, want %v", EnvS3, tc.val, got, tc.want)
		}
	}
}

type named struct {
	testing.TB
	name string
}

func (n named) Name() string { return n.name }

func TestTestPrefix(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"TestFoo", "root/testfoo"},
		{"TestFoo/sub_case#01", "root/testfoo-sub_case-01"},
		{"Test Ünïcode/..", "root/test--n-code"},
		{"////", "root/test"},
		{strings.Repeat("a", 100), "root/" + strings.Repeat("a", 60)},
	} {
		got := testPrefix(named{t, tc.name})
		if got != tc.want {
			t.Errorf("testPrefix(%q) = %q, want %q", tc.name, got, tc.want)
		}
		if err := store.ValidatePrefix(got); err != nil {
			t.Errorf("testPrefix(%q) = %q is not a valid prefix: %v", tc.name, got, err)
		}
	}
}

func TestS3BucketIsFreshAndCleanedUp(t *testing.T) {
	c := S3Client(t)
	ctx := context.Background()
	var first string
	t.Run("use", func(t *testing.T) {
		b1, _ := S3Bucket(t)
		b2, _ := S3Bucket(t)
		if b1 == b2 {
			t.Fatalf("two calls gave the same bucket %s", b1)
		}
		first = b1
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &b1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Contents) != 0 {
			t.Fatalf("fresh bucket has %d objects", len(out.Contents))
		}
		// Leave an object and an unfinished multipart upload behind.
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &b1, Key: aws.String("a/b"), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &b1, Key: aws.String("c")}); err != nil {
			t.Fatal(err)
		}
	})
	_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &first})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFound" {
		t.Fatalf("bucket %s after cleanup: HeadBucket err = %v, want NotFound", first, err)
	}
}

func TestS3URLAndStore(t *testing.T) {
	u := S3URL(t)
	if !strings.HasPrefix(u, "s3://pswap-test-") || !strings.HasSuffix(u, "/root/tests3urlandstore") {
		t.Fatalf("S3URL = %q", u)
	}
	s := S3Store(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	b, _, err := store.ReadAll(ctx, s, "k")
	if err != nil || string(b) != "v" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	if !strings.HasSuffix(s.URI("k"), "/root/tests3urlandstore/k") {
		t.Fatalf("URI = %q", s.URI("k"))
	}
}
