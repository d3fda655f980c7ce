package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
)

// Exit statuses: the CLI contract scripts depend on.
const (
	exitOK       = 0 // success, including an idempotent no-op
	exitFailure  = 1 // anything else that went wrong
	exitUsage    = 2 // bad flags, arguments or input
	exitConflict = 3 // fenced out by a newer commit of another run
	exitMismatch = 4 // verify found the store disagreeing with a manifest
)

// usageError is a mistake in how pswap was called: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error (exit status 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// cmdError marks an error returned by a command's own code, as opposed to
// one from cobra's flag and argument parsing (which are usage errors).
type cmdError struct{ err error }

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// exitError carries an explicit exit status (e.g. status --require-complete
// finding gaps, verify finding a mismatch).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// runE adapts a command body so that its errors are told apart from cobra's.
func runE(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f(cmd, args); err != nil {
			return &cmdError{err}
		}
		return nil
	}
}

// badInput are the sentinels that mean the caller's input is wrong.
var badInput = []error{
	pswap.ErrBadInput,
	pswap.ErrBadURL,
	partition.ErrInvalidKey,
	partition.ErrInvalidInterval,
	partition.ErrUnaligned,
	partition.ErrInvalidLayout,
	staging.ErrSchemaMismatch,
	staging.ErrBadInput,
	staging.ErrCorrupt,
	staging.ErrUnsupported,
	store.ErrInvalidKey,
}

// exitCode maps an error to the exit status of the CLI contract.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ce *cmdError
	if !errors.As(err, &ce) {
		return exitUsage // from cobra: unknown command or flag, bad arguments
	}
	switch {
	case errors.Is(err, pswap.ErrConflict):
		return exitConflict
	case errors.Is(err, pswap.ErrMismatch):
		return exitMismatch
	case errors.Is(err, pswap.ErrCorrupt):
		// Corrupt metadata on the store is not the caller's input, even
		// when the decoder's error names a malformed key.
		return exitFailure
	}
	for _, s := range badInput {
		if errors.Is(err, s) {
			return exitUsage
		}
	}
	return exitFailure
}

// errorText is the message printed for err, with a hint for the errors
// whose fix lies outside pswap.
func errorText(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, store.ErrAccessDenied):
		msg += "\nhint: check the AWS credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...) and that they may read and write the table's prefix"
	case errors.Is(err, store.ErrBucketNotFound):
		msg += "\nhint: the bucket (or local root directory) does not exist; create it first, and check AWS_ENDPOINT_URL and AWS_REGION"
	case errors.Is(err, pswap.ErrOutcomeUnknown):
		msg += "\nhint: re-run the same command with the same --run-id: it commits if the first attempt did not land, and is a no-op if it did"
	case errors.Is(err, pswap.ErrConflict):
		msg += "\nhint: another run committed this partition since this one began; re-run to replace it, or pass --on-conflict overwrite"
	}
	return msg
}

var (
	// userinfo in URLs (s3://key:secret@bucket, https://user:pass@host).
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@`)
	// Signed query parameters of presigned URLs.
	signedParam = regexp.MustCompile(`(?i)(X-Amz-(?:Security-Token|Signature|Credential)=)[^&\s"']+`)
)

// secretEnv are variables whose values must never be printed.
var secretEnv = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "MINIO_ROOT_PASSWORD"}

// redact removes credentials from a message: the values of the secret AWS
// variables, URL userinfo and presigned-URL signatures.
func redact(s string, getenv func(string) string) string {
	for _, name := range secretEnv {
		if v := strings.TrimSpace(getenv(name)); len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	s = urlUserinfo.ReplaceAllString(s, "${1}[REDACTED]@")
	return signedParam.ReplaceAllString(s, "${1}[REDACTED]")
}

// redactURL removes userinfo from a URL for display.
func redactURL(u string) string { return urlUserinfo.ReplaceAllString(u, "${1}[REDACTED]@") }
