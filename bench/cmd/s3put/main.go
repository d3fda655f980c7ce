// Command s3put uploads one local file to S3 with a single plain
// PutObject: the upload a hand-written pipeline would do, used by the
// benchmarks as the baseline of `pswap commit`.
//
//	s3put s3://bucket/key FILE
//
// S3 settings come from the standard AWS environment (AWS_ENDPOINT_URL,
// credentials, region), as for pswap.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap/store/s3store"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "s3put:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: s3put s3://bucket/key FILE")

// parseTarget splits s3://bucket/key.
func parseTarget(u string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not an s3:// URL", errUsage, u)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || key == "" {
		return "", "", fmt.Errorf("%w: %q needs a bucket and a key", errUsage, u)
	}
	return bucket, key, nil
}

func run(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return errUsage
	}
	bucket, key, err := parseTarget(args[0])
	if err != nil {
		return err
	}
	f, err := os.Open(args[1])
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	client, err := s3store.NewClient(ctx, s3store.Options{})
	if err != nil {
		return err
	}
	_, err = client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: f, ContentLength: aws.Int64(fi.Size()),
	})
	if err != nil {
		return fmt.Errorf("put s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}
