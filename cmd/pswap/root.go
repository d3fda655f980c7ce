package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

const rootLong = `pswap writes one partition of a table to an object store (S3, S3-compatible,
or a local directory) atomically and idempotently: the data goes under a fresh
generation prefix, a write-once manifest describes it, and the partition's
pointer is swapped with a conditional PUT. Retries, replays and backfills never
leave a half-written or doubled partition; readers see one whole generation.

Tables are URLs: s3://bucket/prefix, file:///abs/path, or a plain path.
S3 settings come from the standard AWS environment (AWS_ENDPOINT_URL,
AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...);
a custom endpoint implies path-style addressing.

Environment:
  PSWAP_TABLE      default for --table
  PSWAP_RUN_ID     default for commit --run-id; when unset and Airflow's
                   AIRFLOW_CTX_DAG_ID and AIRFLOW_CTX_DAG_RUN_ID are set,
                   the run id is "<dag_id>/<dag_run_id>"

Output: human-readable text, or with --json exactly one JSON document on
stdout. Errors always go to stderr as text.

Exit status:
  0  success, including an idempotent no-op (changed=false)
  1  failure (store unreachable, access denied, no data, corrupt metadata,
     status --require-complete found gaps, ...)
  2  usage or bad input (flags, malformed partition key or interval, empty,
     corrupt or mismatched input files)
  3  conflict: another run committed the partition since this one began
  4  verify found a mismatch between the store and a manifest`

const rootExample = `  # Commit a day of data (files, folders, or - for stdin) as one generation
  pswap commit --table s3://lake/sales --partition dt=2026-11-29 out/

  # The same from an orchestrator: the partition comes from the run's interval
  pswap commit --table s3://lake/sales --interval 2026-11-29/2026-11-30 \
      --run-id "$RUN_ID" out/*.parquet

  # Inspect
  pswap ls --table s3://lake/sales
  pswap show --table s3://lake/sales --partition dt=2026-11-29
  pswap status --table s3://lake/sales --from 2026-11-01 --to 2026-12-01`

// newRoot builds the command tree for one invocation.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "pswap",
		Short:         "Atomic, idempotent partition writes to object stores",
		Long:          rootLong,
		Example:       rootExample,
		SilenceErrors: true,
		SilenceUsage:  true,
		// With no subcommand, print help (exit 0); unknown ones are usage errors.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.table, "table", "", "table URL: s3://bucket/prefix, file:///path or a path (default $"+envTable+")")
	pf.BoolVar(&a.json, "json", false, "print one JSON document on stdout")
	pf.BoolVar(&a.checksumWhenRequired, "checksum-when-required", false,
		"S3: send and check checksums only where the API requires them (for S3-compatible servers that reject the SDK's default CRC checksums)")
	for _, newCmd := range commandConstructors {
		root.AddCommand(newCmd(a))
	}
	addCompletions(a, root)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" && c.Example == "" {
			c.Example = "  pswap completion bash > /etc/bash_completion.d/pswap\n" +
				"  pswap completion zsh > \"${fpath[1]}/_pswap\"\n" +
				"  pswap completion fish > ~/.config/fish/completions/pswap.fish"
		}
	}
	return root
}

// run executes one invocation and returns its exit status.
func run(a *app, args []string) int {
	out := bufio.NewWriter(a.stdout)
	a.stdout = out
	root := newRoot(a)
	root.SetArgs(args)
	err := root.ExecuteContext(a.ctx)
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = &cmdError{fmt.Errorf("write output: %w", ferr)}
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	fmt.Fprintf(a.stderr, "pswap: %s\n", redact(errorText(err), a.getenv))
	if code == exitUsage && isCobraUsage(err) {
		fmt.Fprintln(a.stderr, "Run 'pswap --help' for usage.")
	}
	return code
}

// Main runs pswap with the process's arguments, streams and environment,
// and returns the exit status. SIGINT and SIGTERM cancel the context: an
// interrupted commit changes nothing visible (or, if the swap may have
// landed, reports an unknown outcome that re-running resolves).
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(newApp(ctx), os.Args[1:])
}

func main() { os.Exit(Main()) }

// isCobraUsage reports whether err came from cobra's flag or argument
// parsing rather than from a command.
func isCobraUsage(err error) bool {
	var ue usageError
	var ce *cmdError
	return errors.As(err, &ue) || !errors.As(err, &ce)
}
