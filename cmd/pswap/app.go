package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
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

	// Global flags.
	table                string
	json                 bool
	checksumWhenRequired bool
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
	t, err := pswap.Open(ctx, u, pswap.Options{S3: s3store.Options{ChecksumWhenRequired: a.checksumWhenRequired}})
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
	return f(t)
}

// newApp returns an app on the process's streams and environment.
func newApp(ctx context.Context) *app {
	return &app{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
}
