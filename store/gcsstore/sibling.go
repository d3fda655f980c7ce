package gcsstore

import (
	"context"
	"fmt"

	"github.com/pswap/pswap/store"
)

// Sibling returns a store on another bucket (and root prefix) that shares
// s's client, credentials and settings: to list, read and copy from any
// bucket the credentials reach. Closing it closes nothing (the client is
// s's). A missing bucket shows up as store.ErrBucketNotFound on its first
// request, as with New.
func (s *Store) Sibling(bucket, prefix string) (*Store, error) {
	root, err := rootIn(bucket, prefix)
	if err != nil {
		return nil, err
	}
	return s.sharing(s.client.Bucket(bucket), bucket, root), nil
}

// CopyFrom copies the object srcKey of bucket srcBucket (a full object
// name, not relative to this store's root: any bucket the credentials can
// read, this one included) to the key dst of this store with the rewrite
// API, as Copy does within the bucket: the bytes never leave GCS, the
// source is pinned to opts.SourceIfMatch (a generation) and the
// destination created only if absent with opts.IfNoneMatch. Errors name
// the source.
func (s *Store) CopyFrom(ctx context.Context, dst, srcBucket, srcKey string, opts store.CopyOptions) (store.Attrs, error) {
	if err := validateBucket(srcBucket); err != nil {
		return store.Attrs{}, err
	}
	srcURI := "gs://" + srcBucket + "/" + srcKey
	if err := store.ValidateKey(srcKey); err != nil {
		return store.Attrs{}, fmt.Errorf("gcsstore: copy from %s: %w", srcURI, err)
	}
	a, err := s.copyObject(ctx, dst, s.client.Bucket(srcBucket).Object(srcKey), srcURI, opts)
	if err != nil {
		return store.Attrs{}, fmt.Errorf("copy from %s: %w", srcURI, err)
	}
	return a, nil
}
