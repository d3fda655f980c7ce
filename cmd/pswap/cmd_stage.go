package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/filestore"
)

func init() { registerCommand(newStageCmd) }

const stageLong = `Upload inputs into a new generation of a partition without committing it,
and print the generation id. 'pswap commit --staged GEN' swaps it in later
(within the grace period, 24 hours): for example, upload first, run checks on
the files, then commit. Until then readers do not see it.

Inputs are as for commit: Parquet, CSV or JSON Lines files, folders, or - for
standard input with --input-format.

With --reserve, nothing is uploaded: the generation is reserved for an
external engine (Spark, Trino, DuckDB, Polars) to write Parquet files into,
and pswap prints its id and the URI of its data prefix, on one line. The
engine writes the partition's files under that prefix (no partitionBy: the
prefix is one partition); 'pswap commit --staged GEN' then adopts them where
they lie, reading only their footers. Until then no reader sees them.

A staged or reserved generation is fenced from the moment it was staged: if
another run commits the partition in between, 'commit --staged' is a
conflict (exit 3) unless --on-conflict overwrite.`

const stageExample = `  GEN=$(pswap stage --table s3://lake/sales --partition dt=2026-11-29 out/)
  # ... check the staged files ...
  pswap commit --table s3://lake/sales --partition dt=2026-11-29 --staged "$GEN"

  # Let an engine write the partition, then adopt its files
  read -r GEN PREFIX < <(pswap stage --reserve --table file:///data/sales --partition dt=2026-11-29)
  duckdb -c "COPY (SELECT ...) TO '$PREFIX/part-0.parquet'"
  pswap commit --table file:///data/sales --partition dt=2026-11-29 --staged "$GEN"`

type stageCmd struct {
	*app
	writeFlags
	reserve bool
	// The attempt record's run id and identity, as commit's flags give
	// them: the audit names a staged or reserved generation's run from the
	// start, before (or without) its commit --staged.
	runID, job, task, logicalDate string
}

// attemptOptions resolves --run-id (default $PSWAP_RUN_ID, else Airflow's
// dag_id/run_id), --job, --task and --logical-date (default Airflow's or
// Dagster's environment) into o, as commit resolves them.
func (c *stageCmd) attemptOptions(cmd *cobra.Command, o *pswap.CommitOptions) error {
	return resolveAttempt(cmd, c.getenv, attemptFlags{c.runID, c.job, c.task, c.logicalDate}, o)
}

func newStageCmd(a *app) *cobra.Command {
	c := &stageCmd{app: a}
	cmd := &cobra.Command{
		Use:     "stage (--partition KEY | --interval START/END) [flags] (PATH... | - | --reserve)",
		Short:   "Upload files as a new generation without committing it; prints its id",
		Long:    stageLong,
		Example: stageExample,
		RunE:    runE(c.run),
	}
	c.writeFlags.add(cmd)
	cmd.Flags().BoolVar(&c.reserve, "reserve", false, "reserve a generation for an external engine to write into (no inputs); prints its id and data prefix")
	fl := cmd.Flags()
	fl.StringVar(&c.runID, "run-id", "", "orchestrator run id, for the audit: its row names the run from the start (default $"+envRunID+", else Airflow's dag_id/run_id); commit --staged takes its own")
	fl.StringVar(&c.job, "job", "", "the orchestrator's job or DAG, for the audit (default $AIRFLOW_CTX_DAG_ID, else $DAGSTER_JOB_NAME)")
	fl.StringVar(&c.task, "task", "", "the orchestrator's task, op or asset, for the audit (default $AIRFLOW_CTX_TASK_ID)")
	fl.StringVar(&c.logicalDate, "logical-date", "", "the run's logical date, for the audit (default $AIRFLOW_CTX_LOGICAL_DATE, else $AIRFLOW_CTX_EXECUTION_DATE)")
	return cmd
}

// reserveJSON is the --json document of stage --reserve.
type reserveJSON struct {
	Table      string `json:"table"`
	Partition  string `json:"partition"`
	Generation string `json:"generation"`
	// Prefix is the URI of the data prefix (no trailing slash).
	Prefix string `json:"prefix"`
	// Path is the prefix as a local path, for file:// tables.
	Path string `json:"path,omitempty"`
}

func (c *stageCmd) runReserve(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if len(args) > 0 {
		return usagef("--reserve uploads nothing: give no inputs (the engine writes into the printed prefix)")
	}
	p, err := c.prepare(args, false)
	if err != nil {
		return err
	}
	// The run id and identity of the reservation's attempt record, as a
	// commit's.
	if err := c.attemptOptions(cmd, &p.wopts.Commit); err != nil {
		return err
	}
	return c.withWriteTable(ctx, c.mustExist, p.key, func(t *pswap.Table, part *pswap.Partition) error {
		res, err := part.Reserve(ctx, p.wopts.Commit)
		if err != nil {
			return err
		}
		uri := strings.TrimSuffix(t.Store().URI(res.Prefix), "/")
		local := ""
		if fs, ok := t.Store().(*filestore.Store); ok {
			local = filepath.Join(fs.Root(), filepath.FromSlash(strings.TrimSuffix(res.Prefix, "/")))
		}
		if c.json {
			return printJSON(c.stdout, reserveJSON{Table: c.tableURL(), Partition: p.key, Generation: res.Generation, Prefix: uri, Path: local})
		}
		// One line, so that 'read -r GEN PREFIX' takes both.
		fmt.Fprintln(c.resultOut(), res.Generation, uri)
		if isTerminal(c.stderr) {
			fmt.Fprintf(c.stderr, "reserved %s generation %s: write Parquet files under %s, then commit with --staged %s\n", p.key, res.Generation, uri, res.Generation)
		}
		return nil
	})
}

// stageJSON is the --json document of stage.
type stageJSON struct {
	Table           string `json:"table"`
	Partition       string `json:"partition"`
	Generation      string `json:"generation"`
	Rows            int64  `json:"rows"`
	Bytes           int64  `json:"bytes"`
	Files           int    `json:"files"`
	ContentChecksum string `json:"content_checksum"`
	// FilledColumns: as commit's (--fill-missing-nullable).
	FilledColumns []string `json:"filled_columns,omitempty"`
}

func (c *stageCmd) run(cmd *cobra.Command, args []string) error {
	if c.reserve {
		return c.runReserve(cmd, args)
	}
	ctx := cmd.Context()
	p, err := c.prepare(args, true)
	if err != nil {
		return err
	}
	c.retryOptions(&p.wopts.Commit)
	if err := c.attemptOptions(cmd, &p.wopts.Commit); err != nil { // the attempt record's, as a commit's
		return err
	}
	return c.withWriteTable(ctx, c.mustExist, p.key, func(t *pswap.Table, part *pswap.Partition) error {
		w, err := part.Begin(ctx, p.wopts)
		if err != nil {
			return err
		}
		if err := stageInputs(ctx, w, p, c.stdin, c.newProgress(p.inputs, "")); err != nil {
			_ = w.Abort(context.WithoutCancel(ctx))
			return err
		}
		gen, content, err := w.Stage(ctx)
		if err != nil {
			return err
		}
		c.noteCreated(w)
		c.warnFilled(w, "")
		if c.json {
			return printJSON(c.stdout, stageJSON{
				Table: c.tableURL(), Partition: p.key, Generation: gen, Rows: content.Rows,
				Bytes: content.Bytes, Files: len(content.Files), ContentChecksum: content.ContentChecksum,
				FilledColumns: c.filled,
			})
		}
		// The id alone on stdout, so that GEN=$(pswap stage ...) works.
		fmt.Fprintln(c.resultOut(), gen)
		if isTerminal(c.stderr) {
			fmt.Fprintf(c.stderr, "staged %s: %s, %s, %s; commit it with --staged %s\n", p.key,
				plural(content.Rows, "row"), plural(int64(len(content.Files)), "file"), humanBytes(content.Bytes), gen)
		}
		return nil
	})
}
