package azstore

import "github.com/pswap/pswap/store"

var (
	errPrecondition = store.ErrPrecondition
	errNotFound     = store.ErrNotFound
	errBucket       = store.ErrBucketNotFound
	errTransient    = store.ErrTransient
	errDenied       = store.ErrAccessDenied
)
