package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/store/s3store"
)

// Environment variables the CLI reads (besides the standard AWS ones).
const (
	envTable = "PSWAP_TABLE"  // default of --table
	envRunID = "PSWAP_RUN_ID" // default of --run-id
	// Set by Airflow in every task's environment; used for the default run
	// id when PSWAP_RUN_ID is not set.
	envAirflowDagID    = "AIRFLOW_CTX_DAG_ID"
	envAirflowDagRunID = "AIRFLOW_CTX_DAG_RUN_ID"
	envTimeout         = "PSWAP_TIMEOUT"      // default of --timeout
	envMaxAttempts     = "PSWAP_MAX_ATTEMPTS" // default of --max-attempts
)

// Retry bounds of the CLI. A request is retried by exactly one layer: in
// commit, stage and rollback, pswap's own loops (which resolve an unknown
// outcome by reading back, never by a blind re-send) with the SDK set to a
// single attempt; in the other commands, which have no loop of their own,
// the SDK's retryer. Either way a store that refuses connections fails in
// a few seconds, not the 30 s of 20 attempts of 3.
const (
	defaultMaxAttempts = 5
	maxRetryDelay      = 2 * time.Second
)

// commandConstructors build the subcommands of pswap. Each command lives in
// its own cmd_*.go file and adds its constructor from init() with
// registerCommand, so a new command (such as gc) needs no edit elsewhere.
var commandConstructors []func(*app) *cobra.Command

// registerCommand adds a subcommand constructor; call it from init().
func registerCommand(newCmd func(*app) *cobra.Command) {
	commandConstructors = append(commandConstructors, newCmd)
}

// app is the state one invocation of pswap shares between its commands:
// the streams, the environment, and the global flags.
type app struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// wrapStore, when set (only by tests), wraps the table's store, e.g. to
	// count requests.
	wrapStore func(store.Store) store.Store

	// signal returns the signal that interrupted the command, or nil.
	signal func() os.Signal
	// red removes credentials from everything printed (see redact.go).
	red *redactor

	// Global flags.
	table                string
	json                 bool
	checksumWhenRequired bool
	quiet                bool
	// result is stdout as the process got it, kept when --quiet discards
	// stdout: the values scripts capture (stage's generation id) still go
	// there.
	result      io.Writer
	debug       bool
	timeout     time.Duration
	maxAttempts int

	// delta is --delta (views.go).
	delta bool
	// waitView is --wait-view (cmd_publish.go): the publish after a write
	// returns once the Iceberg metadata holds it, even under another
	// publisher's lease.
	waitView bool
	// leaseFirst is --lease-first (cmd_publish.go): the publish after a
	// write takes the table's publish lease before it writes.
	leaseFirst bool
	// filled are the columns a write filled with NULL
	// (--fill-missing-nullable), for its report.
	filled []string

	// swapRetries is set by commands whose requests pswap's own loops
	// retry (see retryOptions): the SDK then makes a single attempt.
	swapRetries bool
	// catalogURL is --catalog; catalog the catalog it opened (nil: none),
	// catalogPublic its URL as the table records it.
	catalogURL    string
	catalog       catalog.Conn
	catalogPublic string
	logger        *slog.Logger
	cmdCtx        context.Context // the command's context under --timeout
}

// retryOptions applies --max-attempts to the options of a commit, stage or
// rollback, and makes pswap's loops the only layer that retries.
func (a *app) retryOptions(o *pswap.CommitOptions) {
	a.swapRetries = true
	o.MaxAttempts = a.maxAttempts
	o.MaxDelay = maxRetryDelay
}

// sdkLog is where the AWS SDK's log lines go: stderr, without the lines
// that only restate an error pswap reports itself (with no credentials
// anywhere, "WARN falling back to IMDSv1" precedes "no credentials found").
type sdkLog struct{ w io.Writer }

func (l sdkLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("falling back to IMDSv1")) {
		return len(p), nil
	}
	return l.w.Write(p)
}

// storeOptions are the store settings of the global flags.
func (a *app) storeOptions() pswap.Options {
	o := s3store.Options{
		ChecksumWhenRequired: a.checksumWhenRequired,
		RetryMaxAttempts:     a.maxAttempts,
		RetryMaxBackoff:      maxRetryDelay,
		Logger:               a.logger,
		LogOutput:            sdkLog{a.stderr}, // the SDK's warnings pass the redactor too
	}
	if a.swapRetries {
		o.RetryMaxAttempts = 1
	}
	az := azstore.Options{RetryMaxAttempts: o.RetryMaxAttempts, RetryMaxBackoff: maxRetryDelay, Logger: a.logger, Getenv: a.getenv}
	if a.red != nil {
		o.OnSecret = a.red.add
		az.OnSecret = a.red.add
	}
	g := gcsstore.Options{
		RetryMaxAttempts: o.RetryMaxAttempts,
		RetryMaxBackoff:  maxRetryDelay,
		Logger:           a.logger,
		OnSecret:         o.OnSecret,
	}
	return pswap.Options{S3: o, GCS: g, Azure: az}
}

// openTable opens --table (or $PSWAP_TABLE). A missing or malformed URL is
// a usage error.
func (a *app) openTable(ctx context.Context) (*pswap.Table, error) {
	u := strings.TrimSpace(a.table)
	if u == "" {
		u = strings.TrimSpace(a.getenv(envTable))
	}
	if u == "" {
		return nil, usagef("no table: pass --table URL (s3://bucket/prefix, file:///path or a path) or set %s", envTable)
	}
	a.table = u
	t, err := pswap.Open(ctx, u, a.storeOptions())
	if err != nil {
		// Opening does no I/O beyond loading the AWS configuration: what
		// fails here is the URL or the configuration.
		err = fmt.Errorf("open table %s: %w", redactURL(u), err)
		if !errors.Is(err, store.ErrAccessDenied) && !errors.Is(err, store.ErrBucketNotFound) {
			err = usageError{err}
		}
		return nil, err
	}
	if a.wrapStore != nil {
		t = pswap.NewTable(a.wrapStore(t.Store()))
	}
	return t, nil
}

// tableURL is the table URL for output, with any credentials removed.
func (a *app) tableURL() string { return redactURL(a.table) }

// withTable opens the table, runs f, and closes the table.
func (a *app) withTable(ctx context.Context, f func(*pswap.Table) error) error {
	t, err := a.openTable(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	err = f(t)
	if errors.Is(err, pswap.ErrNoData) && !errors.Is(err, errNoTable) {
		// "partition has no committed generation" of a table that is not
		// there at all: say that instead.
		if nt := a.checkTable(ctx, t); nt != nil {
			return nt
		}
	}
	return err
}

// checkTable returns an errNoTable error when nothing at all is stored under
// the table root (no folder, no object under the prefix): most often a typo
// in the URL, which must not look like a healthy empty table. Commands call
// it when they found nothing, so a table with data pays no request for it.
func (a *app) checkTable(ctx context.Context, t *pswap.Table) error {
	for _, err := range t.Store().List(ctx, "") {
		if err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("%w at %s: nothing is stored under it", errNoTable, a.tableURL())
}

// resultOut is where a command prints the value a script captures
// (GEN=$(pswap stage ...)): stdout, even under --quiet.
func (a *app) resultOut() io.Writer {
	if a.result != nil {
		return a.result
	}
	return a.stdout
}

// noteEmpty tells a human on stderr that a table holds no partition (yet).
func (a *app) noteEmpty(what string) {
	if !a.json && !a.quiet {
		fmt.Fprintf(a.stderr, "pswap: %s: no committed partition%s\n", a.tableURL(), what)
	}
}

// newApp returns an app on the process's streams and environment.
func newApp(ctx context.Context) *app {
	return &app{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		signal: func() os.Signal { return nil }}
}
