package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
)

func init() { registerCommand(newMergeCmd) }

const mergeLong = `Upsert rows into the partitions they belong to, keyed by one or more
columns. The new generation of each partition the input touches is its
current rows whose key is not in the input, plus the input's rows; with
--delete-when COL=VAL a row whose COL reads VAL removes its key instead (and
is not written). Partitions the input does not touch are not read or written.

Rows are routed by the table's partition columns, which the input then holds
(dt,order_id,... for a dt=2006-01-02 table; they are not written as data), or
with --time-column by a timestamp column through the table's layout.
--partition/--interval restricts the merge to one partition: a row routed
elsewhere is refused (exit 2, naming it); an input without partition column
then goes there as a whole.

Each partition swaps atomically and independently, fenced on the generation
it read. If another run swapped it in between, the merge is derived again
from the new current generation and the same input (never a lost update,
never a blind overwrite), up to --max-rebases times, then exit 3. With a run
id each partition commits as RUN/<partition>: re-running after a crash merges
only what did not land, and re-running a merge that landed is a no-op.

Bad input changes nothing: a key twice in one partition (exit 2 naming it,
unless --dedupe first|last), a key column missing or null, a row that cannot
be routed, a schema the table does not accept.

Memory: the input's key set (about 60 bytes a key) and a row group of the
current generation at a time per partition merged; the input is converted to
Parquet in a temporary folder first.`

const mergeExample = `  # Late updates of orders: upsert by order_id into the days they belong to
  pswap merge --table s3://lake/sales --key order_id --run-id "$RUN_ID" changes.csv

  # A change log with deletes; the last change of a key wins
  pswap merge --table s3://lake/sales --key tenant,order_id --delete-when op=D --dedupe last cdc/

  # Route by a timestamp column, restricted to one day
  pswap merge --table s3://lake/sales --key order_id --time-column sold_at \
      --interval 2026-11-29/2026-11-30 late.parquet`

type mergeCmd struct {
	*app
	sel         selector
	key         string
	deleteWhen  string
	dedupe      string
	timeColumn  string
	runID       string
	inputFormat string
	compression string
	maxRebases  int
	parallel    int
	mustExist   bool
	publish     bool
	evolve      bool
	fillMissing bool
	force       bool
}

func newMergeCmd(a *app) *cobra.Command {
	c := &mergeCmd{app: a}
	cmd := &cobra.Command{
		Use:     "merge --key COLS [--delete-when COL=VAL] [--dedupe first|last] [--partition KEY | --interval START/END] [flags] PATH... | -",
		Short:   "Upsert rows into their partitions by a natural key, each partition swapped atomically",
		Long:    mergeLong,
		Example: mergeExample,
		RunE:    runE(c.run),
	}
	fl := cmd.Flags()
	c.sel.addFlags(fl)
	fl.StringVar(&c.key, "key", "", "the key columns, comma-separated: order_id, or tenant,order_id (required)")
	fl.StringVar(&c.deleteWhen, "delete-when", "", "COL=VAL: a row whose COL reads VAL deletes its key (e.g. op=D); COL is not written unless it is a column of the table")
	fl.StringVar(&c.dedupe, "dedupe", "", "a key the input holds twice in one partition: keep the first or the last row (default: refuse, exit 2)")
	fl.StringVar(&c.timeColumn, "time-column", "", "route rows by this timestamp column through the table's layout instead of by partition columns")
	fl.StringVar(&c.runID, "run-id", "", "orchestrator run id; each partition commits as RUN/<partition> (default $"+envRunID+", else Airflow's dag_id/run_id)")
	fl.StringVar(&c.inputFormat, "input-format", "", "format of the inputs: csv, jsonl or parquet (default: by file extension; required for -)")
	fl.StringVar(&c.compression, "compression", "snappy", "compression of the new Parquet files: snappy, zstd, gzip or none")
	fl.IntVar(&c.maxRebases, "max-rebases", 5, "attempts of a partition repeated after a conflict (re-derived from the new generation) or a transient failure, then exit 3")
	fl.IntVar(&c.parallel, "parallel", 4, "partitions merged at once")
	fl.BoolVar(&c.mustExist, "must-exist", false, "refuse to create a table (also: $"+envCreate+"=0)")
	fl.BoolVar(&c.evolve, "evolve-schema", false, "let the input add columns to the table's schema (as nullable columns, NULL in the current rows; without it a new column fails with exit status 2)")
	fl.BoolVar(&c.fillMissing, fillMissingFlag, false, fillMissingUsage)
	fl.BoolVar(&c.force, "force", false, "merge again the partitions this run id already merged (a corrected input re-run under the same --run-id), and commit even when the merge changes nothing")
	addPublishFlag(a, cmd, &c.publish)
	return cmd
}

// mergePartJSON is one partition's outcome in merge's report.
type mergePartJSON struct {
	Partition  string `json:"partition"`
	Changed    bool   `json:"changed"`
	Outcome    string `json:"outcome"`
	Generation string `json:"generation,omitempty"`
	Rows       int64  `json:"rows"`
	Upserts    int64  `json:"upserts"`
	Deletes    int64  `json:"deletes"`
	Kept       int64  `json:"kept"`
	Removed    int64  `json:"removed"`
	Rebases    int    `json:"rebases"`
	RunID      string `json:"run_id"`
	Error      string `json:"error,omitempty"`
	Exit       int    `json:"exit"`
	// FilledColumns are the nullable columns the input lacked, written
	// as NULL (--fill-missing-nullable).
	FilledColumns []string `json:"filled_columns,omitempty"`
	// InputDiffers: the run id already merged the partition (same-run)
	// and this input would change it; --force merges it.
	InputDiffers bool `json:"input_differs,omitempty"`
}

// mergeJSON is merge's --json document.
type mergeJSON struct {
	Table      string          `json:"table"`
	InputRows  int64           `json:"input_rows"`
	Partitions []mergePartJSON `json:"partitions"`
	Committed  int             `json:"committed"`
	Unchanged  int             `json:"unchanged"`
	Failed     int             `json:"failed"`
	Exit       int             `json:"exit"`
	// Published: the Iceberg metadata reflects every merged partition
	// (each is published after the merge; false with --publish=false or
	// when a publish failed: PublishError says why).
	Published        bool   `json:"published"`
	MetadataLocation string `json:"metadata_location,omitempty"`
	PublishError     string `json:"publish_error,omitempty"`
	viewsJSON
}

func (c *mergeCmd) run(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	// The library's checks, one flag at a time so that the error names it.
	var o pswap.MergeOptions
	for _, k := range strings.Split(c.key, ",") {
		o.Keys = append(o.Keys, strings.TrimSpace(k))
	}
	if err := o.Validate(); err != nil {
		return usagef("--key: %w", err)
	}
	o.DeleteWhen = c.deleteWhen
	if err := o.Validate(); err != nil {
		return usagef("--delete-when: %w", err)
	}
	o.Dedupe = c.dedupe
	if err := o.Validate(); err != nil {
		return usagef("%w", err)
	}
	if c.maxRebases < 0 || c.parallel < 1 {
		return usagef("--max-rebases must be at least 0 and --parallel at least 1")
	}
	var (
		key string
		err error
	)
	if c.sel.given() {
		if key, err = c.sel.one(); err != nil {
			return err
		}
	}
	format, err := parseInputFormat(c.inputFormat)
	if err != nil {
		return err
	}
	if format == pswap.FormatArrow {
		return usagef("merge reads its input more than once: give it Parquet, CSV or JSON Lines, not --input-format arrow")
	}
	comp, err := parseCompression(c.compression)
	if err != nil {
		return err
	}
	c.retryOptions(&o.Commit)
	o.Commit.RunID = c.runID
	if !cmd.Flags().Changed("run-id") {
		o.Commit.RunID = defaultRunID(c.getenv)
	}
	if err := manifest.ValidateRunID(o.Commit.RunID); err != nil {
		return usagef("--run-id: %w", err)
	}
	o.TimeColumn, o.Partition = c.timeColumn, key
	o.Format, o.Staging.Compression = format, comp
	o.MaxRebases, o.Parallel = c.maxRebases, c.parallel
	o.Table.EvolveSchema, o.Table.FillMissingNullable = c.evolve, c.fillMissing
	o.Commit.Force = c.force
	if o.MaxRebases == 0 {
		o.MaxRebases = -1 // the library's 0 is its default
	}
	paths, cleanup, err := c.mergeInputs(args, format)
	defer cleanup()
	if err != nil {
		return err
	}
	return c.withWriteTable(ctx, c.mustExist, "", func(t *pswap.Table, _ *pswap.Partition) error {
		res, err := t.Merge(ctx, paths, o)
		if len(res.Partitions) == 0 {
			return err // bad input: nothing was written
		}
		doc := mergeJSON{Table: c.tableURL(), InputRows: res.InputRows}
		for _, p := range res.Partitions {
			pj := mergePartJSON{Partition: p.Partition, RunID: p.RunID, Upserts: p.Upserts, Deletes: p.Deletes,
				Kept: p.Kept, Removed: p.Removed, Rebases: p.Rebases, FilledColumns: p.Filled, InputDiffers: p.InputDiffers}
			c.noteFilled(p.Filled, p.Partition)
			if p.InputDiffers {
				fmt.Fprintf(c.stderr, "pswap: warning: run %q already merged %s, and this input would change it: "+
					"this retry is a no-op that keeps what the run merged; to merge the new input pass --force (or use a new --run-id)\n", p.RunID, p.Partition)
			}
			if p.Err != nil {
				pj.Outcome, pj.Error, pj.Exit = "failed", p.Err.Error(), exitCode(&cmdError{p.Err})
				doc.Failed++
			} else {
				pj.Changed, pj.Outcome, pj.Generation, pj.Rows = p.Result.Changed, string(p.Result.Outcome), p.Result.Generation, p.Result.Rows
				if pj.Changed {
					doc.Committed++
				} else {
					doc.Unchanged++
				}
			}
			doc.Exit = max(doc.Exit, pj.Exit)
			doc.Partitions = append(doc.Partitions, pj)
		}
		if c.publish {
			c.publishMerged(ctx, t, res, &doc)
		} else {
			c.recordViews(ctx, t)
		}
		if c.json {
			if err := printJSON(c.stdout, doc); err != nil {
				return err
			}
		} else if !c.quiet {
			for _, p := range doc.Partitions {
				switch {
				case p.Exit != 0:
					fmt.Fprintf(c.stdout, "failed %s: %s\n", p.Partition, p.Error)
				case p.Changed:
					fmt.Fprintf(c.stdout, "merged %s: generation %s; %s (%d kept, %d upserted, %d removed)\n",
						p.Partition, p.Generation, plural(p.Rows, "row"), p.Kept, p.Upserts, p.Removed)
				default:
					fmt.Fprintf(c.stdout, "unchanged %s: %s (no-op)\n", p.Partition, p.Outcome)
				}
			}
			fmt.Fprintf(c.stdout, "%d partition(s): %d merged, %d unchanged, %d failed\n", len(doc.Partitions), doc.Committed, doc.Unchanged, doc.Failed)
		}
		if doc.Exit != 0 {
			return &exitError{doc.Exit, fmt.Errorf("%d of %d partition(s) failed (exit status %d, the worst of them)", doc.Failed, len(doc.Partitions), doc.Exit)}
		}
		return nil
	})
}

// publishMerged publishes each partition the merge committed or found
// current (a lagging publish converges) to every view of the table, one
// after another, as commit publishes its partition (publishAfter): a
// merge touches a few partitions of a table that may have many, so each
// costs a publish of its own (its group's manifest), never a reading of
// every pointer. A view is published when it is for every partition. A
// failure is a warning; the merge stands.
func (c *mergeCmd) publishMerged(ctx context.Context, t *pswap.Table, res pswap.MergeResult, doc *mergeJSON) {
	var (
		errs  []string
		views []pswap.ViewPublication // each view's outcome, its first failure kept
	)
	for _, p := range res.Partitions {
		if p.Err != nil {
			continue
		}
		part, err := t.Partition(p.Partition)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		pub := c.publishAfter(ctx, c.publish, part, p.Result, nil, nil)
		views = mergeViews(views, pub.Views)
		if pub.Err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", p.Partition, pub.Err))
		}
		if pub.MetadataLocation != "" {
			doc.MetadataLocation = pub.MetadataLocation
		}
	}
	doc.viewsJSON = viewsDoc(views)
	if len(errs) > 0 {
		doc.PublishError = strings.Join(errs, "; ")
		return
	}
	doc.Published = len(views) > 0
}

// mergeViews adds one partition's view outcomes to the merge's: a view's
// later outcome replaces an earlier one unless that one failed.
func mergeViews(acc, next []pswap.ViewPublication) []pswap.ViewPublication {
	for _, n := range next {
		i := slices.IndexFunc(acc, func(a pswap.ViewPublication) bool { return a.View == n.View && a.Name == n.Name })
		switch {
		case i < 0:
			acc = append(acc, n)
		case acc[i].Err == nil:
			acc[i] = n
		}
	}
	return acc
}

// mergeInputs resolves the arguments to paths; standard input ("-") is
// spooled to a temporary file first (the merge reads its input more than
// once).
func (c *mergeCmd) mergeInputs(args []string, format pswap.Format) ([]string, func(), error) {
	noop := func() {}
	ins, err := expandInputs(args, format)
	if err != nil {
		return nil, noop, err
	}
	var paths []string
	var tmp string
	for _, in := range ins {
		if in.path != stdinArg {
			paths = append(paths, in.path)
			continue
		}
		// Named as the library names a merge's scratch folder
		// (pswap-merge-<pid>-*), so that the next merge removes it when a
		// kill left it behind.
		dir, err := os.MkdirTemp("", fmt.Sprintf("pswap-merge-%d-stdin-*", os.Getpid()))
		if err != nil {
			return nil, noop, err
		}
		tmp = dir
		p := filepath.Join(dir, "stdin."+strings.ToLower(string(format)))
		f, err := os.Create(p)
		if err != nil {
			return nil, func() { os.RemoveAll(dir) }, err
		}
		_, err = io.Copy(f, newCtxReader(c.ctx, c.stdin))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, func() { os.RemoveAll(dir) }, fmt.Errorf("%w: read stdin: %v", pswap.ErrBadInput, err)
		}
		paths = append(paths, p)
	}
	return paths, func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}, nil
}
