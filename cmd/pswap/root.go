package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pswap/pswap/internal/editdist"
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
  PSWAP_TABLE        default for --table
  PSWAP_RUN_ID       default for commit --run-id; when unset and Airflow's
                     AIRFLOW_CTX_DAG_ID and AIRFLOW_CTX_DAG_RUN_ID are set,
                     the run id is "<dag_id>/<dag_run_id>"
  AIRFLOW_CTX_DAG_ID, AIRFLOW_CTX_TASK_ID, AIRFLOW_CTX_LOGICAL_DATE (else
  AIRFLOW_CTX_EXECUTION_DATE), AIRFLOW_CTX_DAG_RUN_ID; else DAGSTER_JOB_NAME,
  DAGSTER_RUN_ID     the attempt's identity in the audit (job, task,
                     logical_date, job_run_id): defaults of commit --job,
                     --task, --logical-date
  PSWAP_CREATE=0     commit and stage refuse to create a table (--must-exist)
  PSWAP_PUBLISH=0    writes do not publish the table's views (--publish=false)
  PSWAP_DELTA=1      turn the table's Delta Lake log on (--delta)
  PSWAP_CATALOG      default for --catalog: an Iceberg catalog URL
  PSWAP_CATALOG_TOKEN       a REST catalog's bearer token
  PSWAP_CATALOG_CREDENTIAL  a REST catalog's OAuth2 client_id:client_secret
  PSWAP_TIMEOUT      default for --timeout
  PSWAP_MAX_ATTEMPTS default for --max-attempts
  PSWAP_DEBUG_FASTSCAN=1  report on stderr each Parquet row group that the
                     fast checksum scan hands to the Arrow reader (debugging)
  AWS_*              the S3 client's settings and credentials (above)
  GOOGLE_APPLICATION_CREDENTIALS, STORAGE_EMULATOR_HOST
                     gs:// tables: Application Default Credentials, or an
                     emulator (host:port)
  AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with
  AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN   az:// and abfss:// tables
  PG*                a PostgreSQL catalog's settings: PGPASSWORD, PGSSLMODE, ...
  GOGC               Go's garbage-collector target; when unset, commit of
                     local Parquet files only runs at 400, the rest at 100
  Never printed: the values of AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
  AWS_SECURITY_TOKEN, MINIO_ROOT_PASSWORD, PGPASSWORD, PSWAP_CATALOG_TOKEN,
  PSWAP_CATALOG_CREDENTIAL, AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN,
  AZURE_STORAGE_CONNECTION_STRING, and GCS access tokens and keys.

Output: human-readable text, or with --json exactly one JSON document on
stdout. Errors go to stderr: as text, or with --json as one JSON document
{"error": {"code", "exit", "message", "hint"}}. No credential is ever
printed: every line of output passes one redactor.

Exit status:
  0    success, including an idempotent no-op (changed=false)
  1    failure (store unreachable, access denied, no data, no table at the
       URL, corrupt metadata, status --require-complete found gaps, ...)
  2    usage or bad input (flags, mistyped URL, malformed partition key or
       interval, empty, corrupt or mismatched input files)
  3    conflict: another run committed the partition since this one began
  4    verify found a mismatch between the store and a manifest
  130  interrupted by SIGINT; 143 by SIGTERM (an interrupted commit leaves
       the old generation or the new one visible, and says which)`

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
func init() {
	// Subcommands with hooks of their own still run the root's.
	cobra.EnableTraverseRunHooks = true
}

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "pswap",
		Short:         "Atomic, idempotent partition writes to object stores",
		Long:          rootLong,
		Example:       rootExample,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Distance 2: "comit" -> "commit", "stauts" -> "status".
		SuggestionsMinimumDistance: 2,
		// With no subcommand, print help (exit 0); unknown ones are usage errors.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{suggestFlag(c, err)} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.table, "table", "", "table URL: s3://bucket/prefix, file:///path or a path (default $"+envTable+")")
	pf.BoolVar(&a.json, "json", false, "print one JSON document on stdout")
	pf.BoolVar(&a.checksumWhenRequired, "checksum-when-required", false,
		"S3: send and check checksums only where the API requires them (for S3-compatible servers that reject the SDK's default CRC checksums)")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print nothing on success (no result line, no progress) but the ids that scripts capture (stage); errors still go to stderr")
	pf.BoolVar(&a.debug, "debug", false, "log every store request (method, path, status, attempt) on stderr, credentials redacted")
	pf.DurationVar(&a.timeout, "timeout", 0, "give up after this long, e.g. 30s or 10m (default $"+envTimeout+", else no limit)")
	pf.IntVar(&a.maxAttempts, "max-attempts", defaultMaxAttempts, "attempts at each store request before giving up, 1 to 100, with backoff capped at 2s ($"+envMaxAttempts+" sets the default; the Go library's defaults are 10 attempts and a 5s cap)")
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
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

// run executes one invocation and returns its exit status. Everything it
// prints passes the redactor.
func run(a *app, args []string) int {
	a.red = newRedactor(a.getenv, args)
	stderr := newRedactWriter(a.red, a.stderr)
	stdout := newRedactWriter(a.red, a.stdout)
	out := bufio.NewWriter(stdout)
	a.stderr = stderr
	a.stdout = out
	if a.signal == nil {
		a.signal = func() os.Signal { return nil }
	}
	defer stderr.Flush()

	err := execute(a, args)
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = &cmdError{fmt.Errorf("write output: %w", ferr)}
	}
	if ferr := stdout.Flush(); err == nil && ferr != nil {
		err = &cmdError{fmt.Errorf("write output: %w", ferr)}
	}
	if sig := a.signal(); sig != nil && err != nil {
		err = interrupted(sig, err)
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if !a.json && isCobraUsage(err) {
		// A flag error may stop parsing before --json was seen.
		a.json = hasFlag(args, "json")
	}
	if a.json {
		_ = printJSON(a.stderr, newErrorDoc(err, code, storeOf(a.table)))
		return code
	}
	fmt.Fprintf(a.stderr, "pswap: %s\n", errorText(err, storeOf(a.table)))
	if code == exitUsage && isCobraUsage(err) {
		fmt.Fprintln(a.stderr, "Run 'pswap --help' for usage.")
	}
	return code
}

// execute parses the command line and runs the command under --timeout.
func execute(a *app, args []string) error {
	root := newRoot(a)
	root.SetArgs(args)
	if err := unknownCommand(root, args); err != nil {
		// Before cobra, which would first complain about the flags that
		// belong to the command the user meant.
		a.json = hasFlag(args, "json")
		return err
	}
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.globalEnv(cmd); err != nil {
			return err
		}
		if err := a.openCatalog(cmd); err != nil {
			return err
		}
		if a.quiet && !a.json {
			a.result, a.stdout = a.stdout, io.Discard
		}
		if a.debug {
			a.logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		if a.timeout > 0 {
			tctx, tcancel := context.WithTimeoutCause(ctx, a.timeout, fmt.Errorf("%w after %s (--timeout)", errTimeout, a.timeout))
			context.AfterFunc(ctx, tcancel)
			a.cmdCtx = tctx
			cmd.SetContext(tctx)
		}
		return nil
	}
	err := root.ExecuteContext(ctx)
	a.closeCatalog()
	if err != nil && a.cmdCtx != nil {
		if cause := context.Cause(a.cmdCtx); errors.Is(cause, errTimeout) {
			return &cmdError{fmt.Errorf("%w: %w", cause, err)}
		}
	}
	return err
}

// globalEnv applies $PSWAP_TIMEOUT and $PSWAP_MAX_ATTEMPTS to the flags not
// given, and checks the bounds.
func (a *app) globalEnv(cmd *cobra.Command) error {
	fl := cmd.Flags()
	if v := strings.TrimSpace(a.getenv(envTimeout)); v != "" && !fl.Changed("timeout") {
		d, err := time.ParseDuration(v)
		if err != nil {
			return usagef("$%s: %q is not a duration (e.g. 30s, 10m)", envTimeout, v)
		}
		a.timeout = d
	}
	if v := strings.TrimSpace(a.getenv(envMaxAttempts)); v != "" && !fl.Changed("max-attempts") {
		n, err := strconv.Atoi(v)
		if err != nil {
			return usagef("$%s: %q is not a number", envMaxAttempts, v)
		}
		a.maxAttempts = n
	}
	if a.timeout < 0 {
		return usagef("--timeout must not be negative")
	}
	if a.maxAttempts < 1 || a.maxAttempts > 100 {
		return usagef("--max-attempts must be 1 to 100, not %d", a.maxAttempts)
	}
	return nil
}

// interrupted turns the error of a command cancelled by a signal into the
// interruption it is (never "bad input").
func interrupted(sig os.Signal, err error) error {
	ie := &interruptError{sig: "SIGINT", code: exitInterrupted, err: err}
	if sig == syscall.SIGTERM {
		ie.sig, ie.code = "SIGTERM", exitTerminated
	}
	var se *stateError
	if errors.As(err, &se) {
		ie.state, ie.err = se.state, se.err
	}
	return ie
}

// Main runs pswap with the process's arguments, streams and environment,
// and returns the exit status. The first SIGINT or SIGTERM cancels the
// command, which stops cleanly and exits 130 (SIGINT) or 143 (SIGTERM); an
// interrupted commit changes nothing visible, or reports that its swap
// landed. A second signal exits at once.
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var got atomic.Value
	go func() {
		s := <-sigs
		got.Store(s)
		cancel()
		s = <-sigs
		fmt.Fprintln(os.Stderr, "pswap: interrupted twice: exiting at once")
		if s == syscall.SIGTERM {
			os.Exit(exitTerminated)
		}
		os.Exit(exitInterrupted)
	}()
	a := newApp(ctx)
	a.signal = func() os.Signal {
		s, _ := got.Load().(os.Signal)
		return s
	}
	return run(a, os.Args[1:])
}

func main() { os.Exit(Main()) }

// isCobraUsage reports whether err came from cobra's flag or argument
// parsing rather than from a command.
func isCobraUsage(err error) bool {
	var ue usageError
	var ce *cmdError
	return errors.As(err, &ue) || !errors.As(err, &ce)
}

// unknownCommand returns a usage error when the first argument that is not
// a global flag names no command: "unknown command "comit"; did you mean
// "commit"?".
func unknownCommand(root *cobra.Command, args []string) error {
	name := ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return nil
		}
		if strings.HasPrefix(arg, "-") {
			flagName := strings.TrimLeft(arg, "-")
			if strings.Contains(flagName, "=") {
				continue
			}
			f := root.PersistentFlags().Lookup(flagName)
			if f == nil && len(flagName) == 1 {
				f = root.PersistentFlags().ShorthandLookup(flagName)
			}
			if f != nil && f.Value.Type() != "bool" {
				i++ // the flag's value
			}
			continue
		}
		name = arg
		break
	}
	if name == "" {
		return nil
	}
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return nil
		}
	}
	if name == "help" || strings.HasPrefix(name, "__") {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if sugg := root.SuggestionsFor(name); len(sugg) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", sugg[0])
	}
	return usageError{errors.New(msg)}
}

// hasFlag reports whether a boolean flag is among args.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--"+name || a == "--"+name+"=true" {
			return true
		}
	}
	return false
}

// suggestFlag adds to cobra's "unknown flag: --partiton" the command's flag
// closest to it: "; did you mean --partition?".
func suggestFlag(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" {
		return err
	}
	best, bestDist := "", 3 // at most 2 edits, or a prefix of 3+ letters
	seen := func(f *pflag.Flag) {
		d := editdist.Levenshtein(name, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			d = min(d, 1)
		}
		if d < bestDist && !f.Hidden {
			best, bestDist = f.Name, d
		}
	}
	c.LocalFlags().VisitAll(seen)
	c.InheritedFlags().VisitAll(seen)
	if best == "" {
		return err
	}
	return fmt.Errorf("%w; did you mean --%s?", err, best)
}
