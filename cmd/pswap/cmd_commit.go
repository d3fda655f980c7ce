package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/swap"
)

func init() { registerCommand(newCommitCmd) }

const commitLong = `Upload local data as one new generation of a partition and swap it in
atomically. Inputs are Parquet files (validated and copied as they are), CSV
files with a header row, or JSON Lines files (both converted to Parquet),
folders of such files (hidden and _-prefixed entries skipped), or - for
standard input (with --input-format; --input-format arrow reads an Arrow IPC
stream batch by batch, as the Python package sends it). All inputs must
share one schema.

The partition comes from --partition KEY, or from --interval START/END (the
run's data interval) with --grain/--layout; an interval must cover exactly
one partition. Days begin at midnight UTC unless the table has a time zone:
--time-zone Europe/Berlin on the commit that creates the table makes its
days begin at local midnight (23 or 25 hours on DST days; keys are local
dates), and every later --interval commit must give the same zone.

A commit replaces the partition as a whole and is idempotent:
  - with a run id, re-running the same run is a no-op (changed=false) and
    skips the upload entirely once that run has committed;
  - content identical to the current generation is a no-op unless --force;
  - if another run committed the partition after this one began, the
    commit fails with exit status 3 and changes nothing, unless
    --on-conflict overwrite (last writer wins).

A Parquet input is checked before its upload is committed: with --check full
(the default) its footer, every page CRC present, and every page decoded and
every row hashed into the content checksum, so a corrupt page is refused and
the same rows in a differently encoded file are identical content. With
--check footer only the footer and the page CRCs are checked, nothing is
decoded (about the cost of a plain upload): the content checksum is then
over the files' bytes (files-sha256), so only the same bytes are identical
content, and a damaged page without a CRC is not caught.

The run id defaults to $PSWAP_RUN_ID, else to "$AIRFLOW_CTX_DAG_ID/$AIRFLOW_CTX_DAG_RUN_ID"
when Airflow sets them. Pass --run-id "" to commit without one.`

const commitExample = `  # One day from a folder of Parquet files
  pswap commit --table s3://lake/sales --partition dt=2026-11-29 out/

  # From an orchestrator: the interval names the partition, the run id makes
  # retries and replays no-ops
  pswap commit --table s3://lake/sales --interval 2026-11-29/2026-11-30 \
      --run-id "scheduled__2026-11-29" out/

  # Days that begin at local midnight (an Airflow DAG in Europe/Berlin)
  pswap commit --table s3://lake/sales --time-zone Europe/Berlin \
      --interval 2026-12-06T00:00:00+01:00/P1D out/

  # Hourly partitions (dt=2026-11-29/hr=13)
  pswap commit --table s3://lake/events --interval 2026-11-29T13:00:00Z/PT1H --grain hour events.jsonl

  # From a pipe
  psql -c "\copy (SELECT ...) TO STDOUT CSV HEADER" | \
      pswap commit --table s3://lake/sales --partition dt=2026-11-29 --input-format csv -

  # Commit a generation uploaded earlier by 'pswap stage'
  pswap commit --table s3://lake/sales --partition dt=2026-11-29 --staged 0193...`

// writeFlags are the flags commit and stage share.
type writeFlags struct {
	sel         selector
	inputFormat string
	compression string
	allowEmpty  bool
	evolve      bool
	fillMissing bool
	check       string
	mustExist   bool
	schema      string
}

func (f *writeFlags) add(cmd *cobra.Command) {
	f.sel.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&f.inputFormat, "input-format", "", "format of the inputs: csv, jsonl, parquet or arrow (an Arrow IPC stream; default: by file extension; required for -)")
	cmd.Flags().StringVar(&f.compression, "compression", "snappy", "compression of converted Parquet files: snappy, zstd, gzip or none")
	cmd.Flags().BoolVar(&f.allowEmpty, "allow-empty", false, "accept inputs without a single row: the partition becomes empty (present, 0 rows)")
	cmd.Flags().BoolVar(&f.evolve, "evolve-schema", false, "let the inputs add columns to the table's schema (as nullable columns; without it a new column fails with exit status 2)")
	cmd.Flags().BoolVar(&f.fillMissing, fillMissingFlag, false, fillMissingUsage)
	cmd.Flags().StringVar(&f.schema, "schema", "", "declare column types up front: amount=double,qty=int, or a JSON file ({\"amount\": \"double\"}, a list of {name, type}, or a table.json); the first commit records them, later ones must match")
	cmd.Flags().BoolVar(&f.mustExist, "must-exist", false, "refuse to create a table: fail (exit 1, no_table) unless a table is at the URL (its _pswap/table.json, or a partition of a table written before table.json existed), so that a typo in --table cannot start a new table (also: $"+envCreate+"=0)")
	cmd.Flags().StringVar(&f.check, "check", "full", "how Parquet inputs are checked: full (every page decoded, rows hashed: the same rows in any encoding are a no-op) or footer (footer and page CRCs only, nothing decoded: about the cost of a plain upload; only the same bytes are a no-op)")
}

// parseCompression parses --compression.
func parseCompression(s string) (staging.Compression, error) {
	switch strings.ToLower(s) {
	case "", "snappy":
		return staging.Snappy, nil
	case "zstd":
		return staging.Zstd, nil
	case "gzip":
		return staging.Gzip, nil
	case "none", "uncompressed":
		return staging.Uncompressed, nil
	}
	return 0, usagef("unknown --compression %q (want snappy, zstd, gzip or none)", s)
}

// parseSchemaFlag reads --schema: a JSON file (a path that exists, or ends
// in .json), else a NAME=TYPE list. "" declares nothing.
func parseSchemaFlag(v string) (pswap.ColumnTypes, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return pswap.ColumnTypes{}, nil
	}
	if fi, err := os.Stat(v); err == nil && !fi.IsDir() || strings.HasSuffix(strings.ToLower(v), ".json") {
		data, err := os.ReadFile(v)
		if err != nil {
			return pswap.ColumnTypes{}, usagef("--schema: %w", err)
		}
		cols, err := pswap.DecodeColumnTypes(data)
		if err != nil {
			return pswap.ColumnTypes{}, usagef("--schema %s: %w", v, err)
		}
		return cols, nil
	}
	cols, err := pswap.ParseColumnTypes(v)
	if err != nil {
		return pswap.ColumnTypes{}, usagef("--schema: %w", err)
	}
	return cols, nil
}

// prepared is what commit and stage resolve before touching the store.
type prepared struct {
	key        string
	inputs     []input
	wopts      pswap.WriteOptions
	allowEmpty bool
}

// prepare resolves the partition, the inputs and the staging options.
// Every mistake surfaces here, before anything is uploaded.
func (f *writeFlags) prepare(args []string, needInputs bool) (prepared, error) {
	var p prepared
	var err error
	if p.key, err = f.sel.one(); err != nil {
		return p, err
	}
	format, err := parseInputFormat(f.inputFormat)
	if err != nil {
		return p, err
	}
	comp, err := parseCompression(f.compression)
	if err != nil {
		return p, err
	}
	p.wopts.Staging.Compression = comp
	if p.wopts.Staging.Check, err = staging.ParseCheck(f.check); err != nil {
		return p, usagef("--check: unknown %q (want full or footer)", f.check)
	}
	p.allowEmpty = f.allowEmpty
	p.wopts.Commit.AllowEmpty = f.allowEmpty
	p.wopts.Table.EvolveSchema = f.evolve
	p.wopts.Table.FillMissingNullable = f.fillMissing
	if p.wopts.Table.Declare, err = parseSchemaFlag(f.schema); err != nil {
		return p, err
	}
	if f.sel.interval != "" {
		// A table created by this commit records the layout the interval
		// was mapped with (checked by f.sel.one above).
		if l, err := f.sel.parsedLayout(); err == nil {
			p.wopts.Table.Layout = &l
		}
	}
	if needInputs {
		if p.inputs, err = expandInputs(args, format); err != nil {
			return p, err
		}
	}
	return p, nil
}

type commitCmd struct {
	*app
	writeFlags
	runID      string
	onConflict string
	force      bool
	staged     string
	dryRun     bool
	verifyRows bool
	appendRun  bool // --append: add the inputs to the partition's rows, once per run id
	// cmd_objects.go
	partitioned string
	parallel    int
	publish     bool
	// The orchestrator's identity of the attempt, for the audit
	// (pswap.Identity; defaults from Airflow's or Dagster's environment).
	job, task, logicalDate string
}

func newCommitCmd(a *app) *cobra.Command {
	c := &commitCmd{app: a}
	cmd := &cobra.Command{
		Use:     "commit (--partition KEY | --interval START/END) [flags] PATH... | -",
		Short:   "Upload files as a new generation of a partition and swap it in atomically",
		Long:    commitLong,
		Example: commitExample,
		RunE:    runE(c.run),
	}
	c.writeFlags.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&c.runID, "run-id", "", "orchestrator run id: attempts with the same run id are one run (default $"+envRunID+", else Airflow's dag_id/run_id)")
	fl.StringVar(&c.onConflict, "on-conflict", "fail", "when another run committed since this one began: fail (exit 3) or overwrite")
	fl.BoolVar(&c.force, "force", false, "commit even if the content is identical or this run id already committed")
	fl.StringVar(&c.staged, "staged", "", "commit the generation GEN uploaded earlier by 'pswap stage', or adopt the files an engine wrote into it after 'pswap stage --reserve' (no inputs)")
	fl.BoolVar(&c.dryRun, "dry-run", false, "report what the commit would do (would-commit, same-run or identical; rows, bytes) and write nothing")
	fl.BoolVar(&c.appendRun, "append", false, "add the inputs to the partition's current rows instead of replacing them, exactly once per --run-id (a re-run is a no-op, however many appends landed since)")
	c.addRemoteFlags(fl) // cmd_objects.go
	fl.BoolVar(&c.verifyRows, "verify-rows", false, "with --staged on a reservation: read the adopted files in full and compare rows, not store checksums, to decide whether the content is identical")
	addPublishFlag(a, cmd, &c.publish)
	fl.StringVar(&c.job, "job", "", "the orchestrator's job or DAG, for the audit (default $AIRFLOW_CTX_DAG_ID, else $DAGSTER_JOB_NAME)")
	fl.StringVar(&c.task, "task", "", "the orchestrator's task, op or asset, for the audit (default $AIRFLOW_CTX_TASK_ID)")
	fl.StringVar(&c.logicalDate, "logical-date", "", "the run's logical date, for the audit (default $AIRFLOW_CTX_LOGICAL_DATE, else $AIRFLOW_CTX_EXECUTION_DATE)")
	return cmd
}

// defaultRunID is the run id when --run-id is not given: $PSWAP_RUN_ID, else
// Airflow's "<dag_id>/<dag_run_id>", else none.
func defaultRunID(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv(envRunID)); v != "" {
		return v
	}
	dag, run := strings.TrimSpace(getenv(envAirflowDagID)), strings.TrimSpace(getenv(envAirflowDagRunID))
	if dag != "" && run != "" {
		return dag + "/" + run
	}
	return ""
}

// commitOptions resolves --run-id, --on-conflict and --force.
func (c *commitCmd) commitOptions(cmd *cobra.Command) (pswap.CommitOptions, error) {
	var o pswap.CommitOptions
	policy, err := swap.ParsePolicy(c.onConflict)
	if err != nil {
		return o, usageError{err}
	}
	c.retryOptions(&o)
	o.OnConflict = policy
	o.Force = c.force
	err = resolveAttempt(cmd, c.getenv, attemptFlags{c.runID, c.job, c.task, c.logicalDate}, &o)
	return o, err
}

func (c *commitCmd) run(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if c.staged != "" && len(args) > 0 {
		return usagef("--staged commits an uploaded generation: give no inputs")
	}
	if c.staged != "" && c.dryRun {
		return usagef("--dry-run needs inputs, not --staged")
	}
	if c.appendRun && (c.staged != "" || c.dryRun || c.partitioned != "" || hasStoreURI(args) || c.onConflict != "fail") {
		return usagef("--append takes local inputs (or -) and none of --staged, --dry-run, --partitioned, s3:// inputs or --on-conflict (an append never overwrites)")
	}
	if c.staged != "" {
		if err := manifest.ValidateGenerationID(c.staged); err != nil {
			return usagef("--staged: %w", err)
		}
	}
	if c.schema != "" && (c.staged != "" || hasStoreURI(args)) {
		return usagef("--schema types local inputs as they are converted; files committed as they are (--staged, s3:// objects) cannot be")
	}
	if c.partitioned != "" || hasStoreURI(args) {
		return c.runRemote(cmd, args) // cmd_objects.go
	}
	p, err := c.prepare(args, c.staged == "")
	if err != nil {
		return err
	}
	paceGCForCopies(p.inputs)
	if p.wopts.Commit, err = c.commitOptions(cmd); err != nil {
		return err
	}
	p.wopts.Commit.AllowEmpty = p.allowEmpty
	if c.appendRun && p.wopts.Commit.RunID == "" {
		return usagef("--append needs a run id (--run-id, $%s or Airflow's): it is what makes a re-run a no-op", envRunID)
	}
	return c.withWriteTable(ctx, c.mustExist, p.key, func(t *pswap.Table, part *pswap.Partition) error {
		if c.dryRun {
			return c.runDry(ctx, part, p)
		}
		var (
			res pswap.Result
			w   *pswap.Writer
			pf  *pswap.Prefetch
		)
		gen := c.staged
		if c.staged != "" {
			// The publish's first reads overlap with the staged commit's.
			pf = prefetchPublish(ctx, c.publish, t, part)
			res, err = part.CommitStaged(ctx, c.staged, p.wopts.Commit, pswap.AdoptOptions{VerifyRows: c.verifyRows})
		} else {
			if c.publish {
				// The writer reads what its publish starts from while the
				// data uploads (WriteOptions.Prefetch).
				p.wopts.Prefetch = &pswap.PublishOptions{LeaseFirst: c.leaseFirst}
			}
			res, w, err = c.write(ctx, part, p, &gen)
		}
		if err != nil {
			pf.Stop()
			if ctx.Err() != nil {
				// Interrupted or out of time: say what readers now see.
				return visibleAfter(ctx, part, gen, p.wopts.Commit.RunID, err)
			}
			return err
		}
		c.noteCreated(w)
		c.warnFilled(w, "")
		verb := "committed"
		if c.appendRun {
			verb = "appended"
		}
		return c.printResult(res, verb, c.publishAfter(ctx, c.publish, part, res, w, pf))
	})
}

// envCreate: PSWAP_CREATE=0 makes commit and stage refuse to create a
// table, as --must-exist does.
const envCreate = "PSWAP_CREATE"

// mustExistTable resolves --must-exist and $PSWAP_CREATE: whether a write
// must refuse to create a table.
func (a *app) mustExistTable(flag bool) (bool, error) {
	if flag {
		return true, nil
	}
	switch v := strings.ToLower(strings.TrimSpace(a.getenv(envCreate))); v {
	case "", "1", "true", "yes":
		return false, nil
	case "0", "false", "no":
		return true, nil
	default:
		return false, usagef("$%s: %q is neither 0 (refuse to create tables) nor 1", envCreate, v)
	}
}

// withWriteTable runs f on the table of a write: --must-exist (or
// $PSWAP_CREATE=0) resolved, partition key parsed (none when key is ""),
// then the table required to exist when it must.
func (a *app) withWriteTable(ctx context.Context, mustExist bool, key string, f func(*pswap.Table, *pswap.Partition) error) error {
	must, err := a.mustExistTable(mustExist)
	if err != nil {
		return err
	}
	return a.withTable(ctx, func(t *pswap.Table) error {
		var part *pswap.Partition
		if key != "" {
			if part, err = t.Partition(key); err != nil {
				return err
			}
		}
		if err := a.requireTable(ctx, t, must); err != nil {
			return err
		}
		return f(t, part)
	})
}

// requireTable fails with errNoTable when must is set and the table's own
// marker is not there (pswap.Table.Exists: its _pswap/table.json, or an old
// table's partition pointer; other objects under the URL are no table):
// the write would create a new table, most often because of a typo in the
// URL. It costs one GET of table.json, only when asked for.
func (a *app) requireTable(ctx context.Context, t *pswap.Table, must bool) error {
	if !must {
		return nil
	}
	ok, err := t.Exists(ctx)
	if err != nil {
		return err
	}
	if !ok {
		if err := t.CheckNewTable(ctx, false); err != nil {
			return err // a wrong URL (inside a table, above tables): exit 2
		}
		return fmt.Errorf("%w at %s: no _pswap/table.json and no partition under it; --must-exist (or %s=0) refuses to create a table",
			errNoTable, a.tableURL(), envCreate)
	}
	return nil
}

// committer names the run that committed a generation, for messages.
func committer(runID string) string {
	if runID == "" {
		return "a commit without a run id"
	}
	return fmt.Sprintf("run %q", runID)
}

// noteCreated says on stderr that a write created the table, which is
// what a typo in --table does: the data went somewhere new. --quiet
// silences it.
func (a *app) noteCreated(w *pswap.Writer) {
	if w != nil && w.CreatedTable() && !a.quiet {
		fmt.Fprintf(a.stderr, "pswap: note: created a new table at %s (there was no table there before; --must-exist or %s=0 refuses that)\n", a.tableURL(), envCreate)
	}
}

// write stages the inputs and commits them, or skips everything when the
// run id already committed.
func (c *commitCmd) write(ctx context.Context, part *pswap.Partition, p prepared, gen *string) (pswap.Result, *pswap.Writer, error) {
	begin := part.Begin
	if c.appendRun {
		begin = part.Append
	}
	w, err := begin(ctx, p.wopts)
	if err != nil {
		return pswap.Result{}, nil, err
	}
	*gen = w.Generation()
	if w.AlreadyCommitted() {
		// Our run id already committed here: nothing to upload, and the
		// commit is the SameRun no-op describing the current generation.
		res, err := w.Commit(ctx)
		if err == nil && res.Outcome == swap.SameRun && !c.appendRun {
			c.warnRetryDiffers(ctx, part, p)
		}
		return res, w, err
	}
	if err := stageInputs(ctx, w, p, c.stdin, c.newProgress(p.inputs, "")); err != nil {
		_ = w.Abort(context.WithoutCancel(ctx))
		return pswap.Result{}, nil, err
	}
	if testHookBeforeCommit != nil {
		if err := testHookBeforeCommit(ctx, part); err != nil {
			_ = w.Abort(context.WithoutCancel(ctx))
			return pswap.Result{}, nil, err
		}
	}
	res, err := w.Commit(ctx)
	return res, w, err
}

// visibleAfter adds to the error of a commit that stopped half-way what a
// reader of the partition now sees: the previous generation (nothing was
// committed) or this run's (the swap landed before the interrupt). The
// pointer is read back with a fresh, short deadline.
func visibleAfter(ctx context.Context, part *pswap.Partition, gen, runID string, err error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	b, rerr := swap.ReadPointer(rctx, part.Table().Store(), part.Key())
	key := part.Key()
	var state string
	landed := false
	switch p := b.Pointer; {
	case rerr != nil && !errors.Is(rerr, pswap.ErrNoData):
		state = fmt.Sprintf("could not read %s back to see which generation is current (%v)", key, rerr)
	case p != nil && (p.Generation == gen || runID != "" && p.RunID == runID):
		landed = true
		state = fmt.Sprintf("the commit landed: %s now shows generation %s of this run", key, p.Generation)
	case p == nil:
		state = fmt.Sprintf("nothing was committed: %s still has no data", key)
	default:
		state = fmt.Sprintf("nothing was committed: %s still shows generation %s, the one before this run", key, p.Generation)
	}
	if !landed && errors.Is(err, pswap.ErrOutcomeUnknown) {
		// The PUT may still be applied after this read (a store can
		// apply a request whose client has gone): say so, not only what
		// readers see now.
		state += "; but the swap was in flight when interrupted and may still land: re-run the same command to settle it"
	}
	return &stateError{err: err, state: state}
}

// errEmpty refuses inputs without rows: an empty extract is more often an
// upstream failure than an empty day, and committing it would replace the
// partition's data with nothing.
var errEmpty = fmt.Errorf("%w: the inputs hold no rows (empty input); pass --allow-empty to make the partition empty", pswap.ErrBadInput)

// stageInputs stages the inputs and refuses an empty result unless allowed.
func stageInputs(ctx context.Context, w adder, p prepared, stdin io.Reader, bar *progress) error {
	hasRows, err := addInputs(ctx, w, p.inputs, stdin, bar)
	if err != nil {
		return err
	}
	if !hasRows && !p.allowEmpty {
		return errEmpty
	}
	return nil
}

// testHookBeforeCommit, when set (only by tests), runs after the inputs are
// staged and before the commit: tests use it to commit another run's
// generation in between and so provoke a conflict.
var testHookBeforeCommit func(ctx context.Context, part *pswap.Partition) error

// resultJSON is the --json document of commit and rollback.
type resultJSON struct {
	Table          string `json:"table"`
	Partition      string `json:"partition"`
	Generation     string `json:"generation"`
	Changed        bool   `json:"changed"`
	Outcome        string `json:"outcome"`
	Rows           int64  `json:"rows"`
	Bytes          int64  `json:"bytes"`
	Files          int    `json:"files"`
	RunID          string `json:"run_id"`
	CommittedBy    string `json:"committed_by"`   // the run id of Generation
	RunGeneration  string `json:"run_generation"` // same-run: the generation RunID committed
	IdempotencyKey string `json:"idempotency_key"`
	Seq            int64  `json:"seq"`
	Staged         string `json:"staged_generation"`
	// Published: every view of the table (views) reflects this commit;
	// MetadataLocation is the Iceberg vN.metadata.json ("" when not
	// published).
	Published        bool   `json:"published"`
	MetadataLocation string `json:"metadata_location"`
	// PublishError says why Published is false after a publish that
	// failed (every view's error; views says which).
	PublishError string `json:"publish_error,omitempty"`
	// FilledColumns are the nullable columns the inputs lacked, written
	// as NULL (--fill-missing-nullable).
	FilledColumns []string `json:"filled_columns,omitempty"`
	viewsJSON
}

func (a *app) printResult(res pswap.Result, verb string, pub pswap.Publication) error {
	if a.json {
		var perr string
		if pub.Err != nil {
			perr = pub.Err.Error()
		}
		return printJSON(a.stdout, resultJSON{
			Table: a.tableURL(), Partition: res.Partition, Generation: res.Generation,
			Changed: res.Changed, Outcome: string(res.Outcome), Rows: res.Rows, Bytes: res.Bytes,
			Files: res.Files, RunID: res.RunID, CommittedBy: res.CommittedBy, RunGeneration: res.RunGeneration,
			IdempotencyKey: res.IdempotencyKey, Seq: res.Seq,
			Staged: res.Staged, Published: pub.Published, MetadataLocation: pub.MetadataLocation,
			PublishError: perr, viewsJSON: viewsDoc(pub.Views), FilledColumns: a.filled,
		})
	}
	facts := fmt.Sprintf("%s, %s, %s", plural(res.Rows, "row"), plural(int64(res.Files), "file"), humanBytes(res.Bytes))
	var line string
	switch res.Outcome {
	case swap.Committed:
		line = fmt.Sprintf("%s %s: generation %s (seq %d); %s", verb, res.Partition, res.Generation, res.Seq, facts)
	case swap.Superseded:
		line = fmt.Sprintf("%s %s: generation %s, since replaced by a later commit", verb, res.Partition, res.Staged)
	case swap.SameRun:
		line = fmt.Sprintf("unchanged %s: run %q already committed generation %s (no-op); ", res.Partition, res.RunID, res.Generation)
		if res.RunGeneration != "" && res.RunGeneration != res.Generation {
			// Other runs committed since (a backfill): the current
			// generation is theirs, not this run's.
			line = fmt.Sprintf("unchanged %s: run %q already committed generation %s (no-op); the current generation %s was committed since by %s; ",
				res.Partition, res.RunID, res.RunGeneration, res.Generation, committer(res.CommittedBy))
		}
		line += facts
	case swap.AlreadyCommitted:
		line = fmt.Sprintf("unchanged %s: staged generation %s was already committed (no-op); current generation %s; %s", res.Partition, res.Staged, res.Generation, facts)
	case swap.Identical:
		hint := ""
		if verb == "committed" {
			hint = "; --force commits anyway"
		}
		line = fmt.Sprintf("unchanged %s: same content as the current generation %s (no-op%s); %s", res.Partition, res.Generation, hint, facts)
	default:
		line = fmt.Sprintf("%s %s: %s generation %s; %s", verb, res.Partition, res.Outcome, res.Generation, facts)
	}
	if ice, ok := pub.View(pswap.ViewIceberg); ok && ice.Published {
		line += fmt.Sprintf("\nIceberg metadata: %s", pub.MetadataLocation)
	}
	for _, l := range viewLines(pub.Views) {
		line += "\n" + l
	}
	_, err := fmt.Fprintln(a.stdout, line)
	return err
}
