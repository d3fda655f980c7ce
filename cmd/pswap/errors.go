package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

// Exit statuses: the CLI contract scripts depend on.
const (
	exitOK       = 0 // success, including an idempotent no-op
	exitFailure  = 1 // anything else that went wrong
	exitUsage    = 2 // bad flags, arguments or input
	exitConflict = 3 // fenced out by a newer commit of another run
	exitMismatch = 4 // verify found the store disagreeing with a manifest
	// 128 + the signal number, as shells report a process killed by it.
	exitInterrupted = 130 // SIGINT (Ctrl-C)
	exitTerminated  = 143 // SIGTERM (a scheduler stopping the task)
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
	pswap.ErrSchemaMismatch,
	pswap.ErrPartitionMismatch, // both, like every type the table cannot hold, also match pswap.ErrBadInput
	store.ErrInvalidKey,
}

// exitCode maps an error to the exit status of the CLI contract.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ie *interruptError
	if errors.As(err, &ie) {
		return ie.code
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

// errorCode is the stable, machine-readable name of an error's kind: the
// "code" of the --json error document.
func errorCode(err error) string {
	var ie *interruptError
	switch {
	case errors.As(err, &ie):
		return "interrupted"
	case errors.Is(err, errTimeout):
		return "timeout"
	case errors.Is(err, pswap.ErrConflict):
		return "conflict"
	case errors.Is(err, pswap.ErrMismatch):
		return "mismatch"
	case errors.Is(err, pswap.ErrOutcomeUnknown):
		return "outcome_unknown"
	case noCredentials(err):
		return "no_credentials"
	case errors.Is(err, store.ErrAccessDenied):
		return "access_denied"
	case errors.Is(err, store.ErrBucketNotFound):
		return "bucket_not_found"
	case errors.Is(err, errNoTable):
		return "no_table"
	case errors.Is(err, pswap.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, pswap.ErrNoData):
		return "no_data"
	case errors.Is(err, filestore.ErrNoSpace):
		return "disk_full"
	case errors.Is(err, pswap.ErrStaleGeneration):
		return "stale_generation"
	case errors.Is(err, pswap.ErrGenerationNotFound):
		return "generation_not_found"
	case unreachableEndpoint(err) != "":
		return "unreachable"
	case errors.Is(err, store.ErrTransient):
		return "unavailable"
	}
	switch exitCode(err) {
	case exitUsage:
		var ce *cmdError
		if !errors.As(err, &ce) || isUsage(err) {
			return "usage"
		}
		return "bad_input"
	case exitMismatch:
		return "mismatch"
	}
	return "failure"
}

// isUsage reports whether err is a mistake in the command line itself.
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

// errorHint is advice for the errors whose fix lies outside pswap, or "".
// Credentials, missing buckets and unreachable endpoints get the advice of
// the table's kind of store (storeOf), since each takes its own variables.
func errorHint(err error, kind storeKind) string {
	var ie *interruptError
	switch {
	case errors.As(err, &ie):
		return "re-run the same command (with the same --run-id) to finish: it is safe to repeat"
	case errors.Is(err, errTimeout):
		return "the command did not finish in time: reading and converting the inputs, or the store's requests, took longer; " +
			"raise --timeout (or $" + envTimeout + "); --debug times every store request, to tell a slow store from a slow input"
	case noCredentials(err):
		return "give pswap AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), " +
			"AWS_PROFILE with a profile in ~/.aws/credentials or ~/.aws/config, or an instance or container role"
	case errors.Is(err, store.ErrAccessDenied):
		return accessHint(kind)
	case errors.Is(err, store.ErrBucketNotFound):
		return missingBucketHint(kind)
	case errors.Is(err, errNoTable):
		return "check the table URL for a typo; a table exists once something was committed to it"
	case errors.Is(err, pswap.ErrOutcomeUnknown):
		return "re-run the same command with the same --run-id: it commits if the first attempt did not land, and is a no-op if it did"
	case errors.Is(err, pswap.ErrConflict):
		// One rule (docs/cli.md, "Exit status and retries"): merge and
		// append rebase, so their retry loses nothing; a replace's would
		// replace the newer commit.
		return "another run committed this partition since this one began: a replacing commit or a rollback stops rather than replace it " +
			"(check 'pswap history --partition KEY', then re-run to replace it, or pass --on-conflict overwrite); " +
			"merge and commit --append rebase on it, so re-running them is safe"
	case errors.Is(err, filestore.ErrNoSpace):
		return "the disk that holds the table is full: free space on it (or point --table elsewhere), then re-run the same command " +
			"(with the same --run-id); nothing was half-written: every object goes to a temporary file first, and the partition still shows what it showed before"
	case errors.Is(err, swap.ErrCorruptPointer) || errors.Is(err, pswap.ErrCorruptBatchRecord):
		return corruptionHint(err)
	}
	if ep := unreachableEndpoint(err); ep != "" {
		return "nothing answers at " + ep + "; " + endpointHint(kind) + " and that the server is running"
	}
	return ""
}

// storeKind is the kind of store a table URL names, for the hints whose
// advice depends on it (errorHint).
type storeKind int

const (
	storeS3    storeKind = iota // s3://, and no table URL at all
	storeGCS                    // gs://
	storeAzure                  // az://, abfss://, wasbs://
	storeLocal                  // file:// or a path
)

// storeOf is the kind of store of the table URL u (an input URI takes the
// table's scheme, so it is the kind of every store a command touches).
func storeOf(u string) storeKind {
	u = strings.TrimSpace(u)
	scheme, _, ok := strings.Cut(u, "://")
	switch {
	case u == "":
		return storeS3
	case !ok || strings.EqualFold(scheme, "file"):
		return storeLocal
	case strings.EqualFold(scheme, "gs"):
		return storeGCS
	case azstore.IsURL(u):
		return storeAzure
	}
	return storeS3
}

// accessHint is the advice for a request the store refused (403).
func accessHint(kind storeKind) string {
	switch kind {
	case storeGCS:
		return "check the Google Cloud credentials (GOOGLE_APPLICATION_CREDENTIALS, or 'gcloud auth application-default login') " +
			"and that they may read and write the table's prefix, and read every input's bucket"
	case storeAzure:
		return "check the Azure credential (AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN) " +
			"and that it may read and write the table's container, and read every input's container"
	case storeLocal:
		return "check that this user may read and write the table's directory"
	}
	return "check the AWS credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...) and that they may read and write the table's prefix"
}

// missingBucketHint is the advice for a bucket (container, directory) that
// does not exist.
func missingBucketHint(kind storeKind) string {
	switch kind {
	case storeGCS:
		return "the bucket does not exist; create it first ('gcloud storage buckets create gs://NAME'), and check STORAGE_EMULATOR_HOST if you use an emulator"
	case storeAzure:
		return "the container does not exist; create it first ('az storage container create'), and check the storage account the URL or AZURE_STORAGE_ACCOUNT names"
	case storeLocal:
		return "the table's root directory does not exist; create it first"
	}
	return "the bucket (or local root directory) does not exist; create it first, and check AWS_ENDPOINT_URL and AWS_REGION"
}

// endpointHint is what to check when nothing answers at the store's
// endpoint.
func endpointHint(kind storeKind) string {
	switch kind {
	case storeGCS:
		return "check STORAGE_EMULATOR_HOST"
	case storeAzure:
		return "check the BlobEndpoint of AZURE_STORAGE_CONNECTION_STRING"
	}
	return "check AWS_ENDPOINT_URL (or the profile's endpoint_url)"
}

// corruptionHint is the repair advice for every kind of damaged object err
// names, a pointer's and a batch record's, joined: an audit that met both
// reports both, and each needs its own repair.
func corruptionHint(err error) string {
	var hints []string
	if errors.Is(err, swap.ErrCorruptPointer) {
		hints = append(hints, "a pointer (_pswap/p/KEY/pointer.json, or KEY/_pswap/pointer.json in a table not yet moved to that layout) "+
			"was damaged outside pswap, which never overwrites one it cannot read; "+
			"restore that object from the store's versioning or a backup (S3: copy its previous version back), "+
			"then 'pswap history --partition KEY' lists its generations for 'pswap rollback --to GEN'; "+
			"the partition's data is untouched (one manifest per generation under _pswap/p/KEY/manifests/)")
	}
	if errors.Is(err, pswap.ErrCorruptBatchRecord) {
		hints = append(hints, "a backfill's batch attempt record (_pswap/batches/ID.json, named above) was damaged outside pswap; "+
			"it holds no data, only the audit's run ids, identity and start times of that backfill's partitions: "+
			"restore it from the store's versioning or a backup, or delete it (the audit then shows those commits without their identity)")
	}
	return strings.Join(hints, ". Also: ")
}

// unreachableEndpoint returns the scheme and host of the endpoint that
// refused or never answered a connection ("http://127.0.0.1:9000"), or "".
func unreachableEndpoint(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return ""
	}
	var oe *net.OpError
	var de *net.DNSError
	if !(errors.As(ue.Err, &oe) && oe.Op == "dial") && !errors.As(ue.Err, &de) {
		return ""
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// noCredentials reports an S3 request that was never sent because the
// AWS credential chain found no credentials at all (no variables, no
// profile, no role): the SDK's error is about its last source, often an
// instance metadata service answering 403, which reads like access denied.
func noCredentials(err error) bool {
	return strings.Contains(err.Error(), "get identity: get credentials:")
}

// errorMessage is err's message, led by the endpoint when a connection
// failed (the SDK's wording buries it at the end), or by "no AWS
// credentials found" when there were none.
func errorMessage(err error) string {
	msg := err.Error()
	if noCredentials(err) {
		return "no AWS credentials found (environment, profiles, instance or container role): " + msg
	}
	if ep := unreachableEndpoint(err); ep != "" {
		why := "no connection"
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			why = oe.Err.Error()
			if _, after, ok := strings.Cut(why, ": "); ok {
				why = after // "connect: connection refused" -> "connection refused"
			}
		}
		msg = "cannot reach the store at " + ep + " (" + why + "): " + msg
	}
	return msg
}

// errorText is the message printed for err, with its hint on a line of its own.
func errorText(err error, kind storeKind) string {
	msg := errorMessage(err)
	if h := errorHint(err, kind); h != "" {
		msg += "\nhint: " + h
	}
	return msg
}

// errorDoc is the --json form of an error: {"error": {...}}, printed on
// stderr (stdout carries only results, so a caller that saves stdout never
// mistakes an error for a result).
type errorDoc struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Exit    int    `json:"exit"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func newErrorDoc(err error, code int, kind storeKind) errorDoc {
	return errorDoc{errorBody{Code: errorCode(err), Exit: code, Message: errorMessage(err), Hint: errorHint(err, kind)}}
}

// errTimeout: the command ran out of --timeout.
var errTimeout = errors.New("timed out")

// errNoTable: a reading command found nothing at all at the table root (no
// folder, no prefix, no partition): most often a typo in the URL.
var errNoTable = errors.New("no table")

// interruptError is a command cancelled by SIGINT or SIGTERM. state, when
// known, says what a reader of the partition now sees.
type interruptError struct {
	sig   string // "SIGINT" or "SIGTERM"
	code  int
	err   error
	state string
}

func (e *interruptError) Error() string {
	msg := "interrupted by " + e.sig
	if e.state != "" {
		msg += ": " + e.state
	}
	if e.err != nil && !errors.Is(e.err, context.Canceled) {
		msg += " (" + e.err.Error() + ")"
	}
	return msg
}
func (e *interruptError) Unwrap() error { return e.err }

// stateError adds what a reader of a partition now sees to the error of a
// command that stopped half-way (interrupted, timed out).
type stateError struct {
	err   error
	state string
}

func (e *stateError) Error() string { return e.err.Error() + "; " + e.state }
func (e *stateError) Unwrap() error { return e.err }
