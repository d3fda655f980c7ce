package s3store

import (
	"context"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// unsignedPayload is the request option of an UploadPart: its body is
// signed as UNSIGNED-PAYLOAD, so the SDK does not hash each part with
// SHA-256 for the signature over plain HTTP (over HTTPS it already signs
// parts so, with a trailing checksum). The part's integrity on the way is
// still checked by the store: the CRC32 checksum header (the default) or
// Content-MD5 (ChecksumWhenRequired), a header the signature covers, which
// the store verifies against the bytes it received before it accepts the
// part. What an HTTP part gives up is the signature's binding of its body:
// over plain HTTP a party on the path, who can read every byte anyway,
// could replace a part by one of the same checksum. The file's own
// SHA-256 (staging's) and the content checksum in its manifest are
// unchanged, and `pswap verify` checks them against the store's bytes.
// The SHA-256 of each part was about a tenth of a commit's CPU (half the
// hashing of an existing file's commit to MinIO over loopback).
func unsignedPayload(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, addUnsignedPayload)
}

// unsignedPayloadID names the middleware in the operation's stack.
const unsignedPayloadID = "pswapUnsignedPayload"

// addUnsignedPayload sets the payload hash before the checksum middleware
// (Finalize) reads it: set, the SDK computes the checksum alone, and the
// signer takes the hash as given.
func addUnsignedPayload(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc(unsignedPayloadID, func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
		return next.HandleBuild(v4.SetPayloadHash(ctx, "UNSIGNED-PAYLOAD"), in)
	}), middleware.After)
}
