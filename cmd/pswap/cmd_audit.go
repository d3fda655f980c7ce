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
	"github.com/pswap/pswap/partition"
)

func init() { registerCommand(newAuditCmd) }

type auditCmd struct {
	*app
	sel        selector
	from, to   string
	format     string
	output     string
	publish    bool
	auditTable string
}

func newAuditCmd(a *app) *cobra.Command {
	c := &auditCmd{app: a}
	cmd := &cobra.Command{
		Use:   "audit [--from S --to E | --partition KEY | --interval I] [--format table|json|csv|parquet] [--output FILE] | --publish",
		Short: "Every attempt on the table: commits, merges, rollbacks, and attempts that never committed",
		Long: `List every attempt pswap can know of from the store, one row each: the
committed generations, manifests that never became current, and attempts
that staged and never committed.

Each row's kind says what the attempt was:
  commit       a commit of new data (commit, commit --staged, --partitioned)
  merge        a merge (upsert by key) into the partition
  rollback     a rollback to an earlier generation
  staged       an attempt that staged and never committed
  pointer      a partition whose pointer cannot be read (state corrupt)
and its state where it ended, as the store tells it now:
  current      the partition's current generation
  superseded   committed, then replaced by a later commit (superseded_by, superseded_at)
  rolled-back  committed, then replaced by a rollback
  failed       wrote its manifest, never became current; or ended with an
               error before its commit (its attempt record says which)
  no-op        ended without a change: its run had committed, or its
               content was the current one (noop_of: the generation it found)
  staged       staged or reserved, may still be committed
  uncommitted  started (files uploaded, or its attempt record alone) without
               a manifest: killed or failed, or still running
  abandoned    never committed and past the 24 h grace period: never will be
  unknown      a manifest behind a garbage-collected generation
  corrupt      the partition's pointer cannot be read: its attempts cannot be
               told apart until it is repaired (every other partition is
               audited; the command then exits 1)
A backfill's batch record (one per commit --partitioned run) that cannot
be read stops nothing either: every row is printed without what it told
(its partitions' identity, start times, no-ops and dead attempts), then the
command exits 1 naming it.
Its status says the same in the orchestrator's words: started, succeeded,
failed, abandoned or no-op. An attempt that never ended is failed once a
later attempt of its run ended (the retry of a killed task).

Every attempt of pswap commit (and stage, merge) writes a small record
beside its first upload: its run id, its orchestrator identity (--job,
--task, --logical-date; by default Airflow's or Dagster's environment) and
its start. The audit reads it, so that an attempt killed before its
manifest still has its run id, job, task and start time.

Nothing but the store is read: per partition one listing of its _pswap
folder and one GET per manifest, staged record and attempt record.

--from/--to (or --interval with a range) audits the table's partitions
of that range, --partition one partition; without them, every partition
(found by walking the key=value folders, so a partition where an attempt
died before anything committed is found too).

--publish writes the whole audit into an Iceberg table of its own beside
the table (<table>__audit, or --audit-table URL), partitioned by the day
each data partition starts on, each day replaced atomically by pswap's
own commit (a no-op when its rows did not change), then publishes its
Iceberg metadata: DuckDB, Spark, PyIceberg and Trino query it. Runs may
overlap (one after each commit): an older audit never replaces a newer
one. Each day is committed only if no other run published it since this
one began reading the table; a day another run published meanwhile is read
again and re-derived ("rederived" in --json), and one that other runs keep
publishing is left to them after 5 rounds ("superseded": not written by
this run, not counted as changed; the next run brings it up to date).`,
		Example: `  pswap audit --table ./lake/sales --from 2026-11-01 --to 2026-12-01
  pswap audit --table s3://lake/sales --partition dt=2026-11-28 --format json
  pswap audit --table s3://lake/sales --format parquet --output audit.parquet
  pswap audit --table s3://lake/sales --publish        # s3://lake/sales__audit, an Iceberg table`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	fl := cmd.Flags()
	c.sel.addFlags(fl)
	fl.StringVar(&c.from, "from", "", "start of the range of partitions (included): 2026-11-01")
	fl.StringVar(&c.to, "to", "", "end of the range (excluded)")
	fl.StringVar(&c.format, "format", "table", "output format: table, json, csv or parquet")
	fl.StringVarP(&c.output, "output", "o", "", "write the output to FILE instead of stdout")
	fl.BoolVar(&c.publish, "publish", false, "write the audit into its Iceberg table (<table>__audit) instead of printing it")
	fl.StringVar(&c.auditTable, "audit-table", "", "with --publish: the audit table's URL (default: the table's URL with __audit appended)")
	return cmd
}

// auditJSON is the --format json document of audit.
type auditJSON struct {
	Table string           `json:"table"`
	Rows  []pswap.AuditRow `json:"rows"`
}

// auditPublishJSON is the --json document of audit --publish.
type auditPublishJSON struct {
	Table      string `json:"table"`
	AuditTable string `json:"audit_table"`
	Rows       int    `json:"rows"`
	Partitions int    `json:"partitions"`
	Changed    int    `json:"changed"`
	Emptied    int    `json:"emptied"`
	// Rederived are the days another overlapping run published after this
	// one began reading, read again and re-derived; Superseded the days
	// other runs kept publishing, which this run left to them.
	Rederived        int    `json:"rederived"`
	Superseded       int    `json:"superseded"`
	MetadataLocation string `json:"metadata_location"`
}

func (c *auditCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	if c.json && !cmd.Flags().Changed("format") {
		c.format = "json"
	}
	switch c.format {
	case "table", "json", "csv", "parquet":
	default:
		return usagef("--format %q: want table, json, csv or parquet", c.format)
	}
	ranged := c.from != "" || c.to != ""
	if ranged && c.sel.given() {
		return usagef("give --from/--to, --partition or --interval, not two of them")
	}
	if ranged && (c.from == "" || c.to == "") {
		return usagef("--from and --to go together")
	}
	if c.publish {
		if ranged || c.sel.given() || c.output != "" || cmd.Flags().Changed("format") {
			return usagef("--publish writes the whole audit into its table: drop --from/--to, --partition, --interval, --format and --output")
		}
		return c.runPublish(ctx)
	}
	if c.auditTable != "" {
		return usagef("--audit-table goes with --publish")
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		parts, err := c.partitions(ctx, t)
		if err != nil {
			return err
		}
		rows, err := t.Audit(ctx, pswap.AuditOptions{Partitions: parts})
		corrupt := errors.Is(err, pswap.ErrCorrupt) && rows != nil
		if err != nil && !corrupt {
			return err
		}
		if len(rows) == 0 && parts == nil {
			if err := c.checkTable(ctx, t); err != nil {
				return err
			}
		}
		if perr := c.print(rows); perr != nil {
			return perr
		}
		// A partition whose pointer cannot be read has its row of state
		// corrupt in the report, printed in full: then exit 1, as ls does.
		return err
	})
}

// partitions returns the partitions the flags name (nil: all of them).
func (c *auditCmd) partitions(ctx context.Context, t *pswap.Table) ([]string, error) {
	if c.sel.given() {
		keys, err := c.sel.keys()
		if err != nil {
			return nil, err
		}
		if keys == nil {
			keys = []string{}
		}
		return keys, nil
	}
	if c.from == "" {
		return nil, nil
	}
	if strings.Contains(c.from, "/") || strings.Contains(c.to, "/") {
		return nil, usagef("--from and --to take one time each")
	}
	span := strings.TrimSpace(c.from) + "/" + strings.TrimSpace(c.to)
	if _, err := partition.ParseInterval(span); err != nil {
		return nil, err // refused before the table is read
	}
	l, err := parseLayout("", "")
	if err != nil {
		return nil, err
	}
	schema, err := t.Schema(ctx)
	switch {
	case err == nil:
		if tl := schema.TimeLayout; tl != nil {
			l = *tl
		}
	case !errors.Is(err, pswap.ErrNotFound):
		return nil, err
	}
	iv, err := l.ParseInterval(span) // a date is the table's local day
	if err != nil {
		return nil, err
	}
	ks, err := l.Keys(iv)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	return out, nil
}

func (c *auditCmd) print(rows []pswap.AuditRow) (err error) {
	w := c.stdout
	if c.output != "" {
		f, err := os.Create(c.output)
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		defer func() {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("--output: %w", cerr)
			}
		}()
		w = f
	}
	if rows == nil {
		rows = []pswap.AuditRow{}
	}
	switch c.format {
	case "json":
		return printJSON(w, auditJSON{Table: c.tableURL(), Rows: rows})
	case "csv":
		return pswap.AuditRows(rows).WriteCSV(w)
	case "parquet":
		return pswap.AuditRows(rows).WriteParquet(w)
	}
	return printAuditTable(w, rows)
}

func printAuditTable(w io.Writer, rows []pswap.AuditRow) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "PARTITION\tGENERATION\tKIND\tSTATE\tSTATUS\tRUN ID\tJOB/TASK\tROWS\tFILES\tCREATED\tCOMMITTED\tSUPERSEDED BY\tWHY")
	num := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	for _, r := range rows {
		created, committed := "-", "-"
		if r.CreatedAt != nil {
			created = timeText(*r.CreatedAt)
		}
		if r.CommittedAt != nil {
			committed = timeText(*r.CommittedAt)
		}
		job := r.Job
		if r.Task != "" {
			job += "/" + r.Task
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Partition, r.Generation, r.Kind, r.State,
			orDash(r.Status), orDash(r.RunID), orDash(job), num(r.Rows), num(r.Files), created, committed, orDash(r.SupersededBy), orDash(r.Why))
	}
	return tw.Flush()
}

func (c *auditCmd) runPublish(ctx context.Context) error {
	return c.withTable(ctx, func(t *pswap.Table) error {
		dstURL := c.auditTable
		if dstURL == "" {
			var err error
			if dstURL, err = pswap.AuditTableURL(c.table); err != nil {
				return usageError{err}
			}
		}
		if strings.TrimRight(dstURL, "/") == strings.TrimRight(c.table, "/") {
			return usagef("--audit-table is the table itself: give the audit its own table")
		}
		dst, err := pswap.Open(ctx, dstURL, c.storeOptions())
		if err != nil {
			return usageError{fmt.Errorf("open the audit table %s: %w", redactURL(dstURL), err)}
		}
		defer dst.Close()
		pub, err := t.PublishAudit(ctx, dst, pswap.AuditPublishOptions{})
		corrupt := errors.Is(err, pswap.ErrCorrupt) && (pub.Corrupt > 0 || pub.UnreadableRecords > 0)
		if err != nil && !corrupt {
			if errors.Is(err, pswap.ErrNoData) {
				if nt := c.checkTable(ctx, t); nt != nil {
					return nt
				}
			}
			return err
		}
		doc := auditPublishJSON{Table: c.tableURL(), AuditTable: redactURL(dstURL), Rows: pub.Rows, Partitions: pub.Partitions,
			Changed: pub.Changed, Emptied: pub.Emptied, Rederived: pub.Rederived, Superseded: pub.Superseded,
			MetadataLocation: pub.Publish.MetadataLocation}
		if doc.Superseded > 0 {
			fmt.Fprintf(c.stderr, "pswap: warning: %s of the audit table kept being published by other runs of audit --publish while this one read: "+
				"this run left them to those (an older audit never replaces a newer one); run it again to bring them up to date\n",
				plural(int64(doc.Superseded), "day"))
		}
		if c.json {
			if perr := printJSON(c.stdout, doc); perr != nil {
				return perr
			}
			return err // a corrupt partition's row was published; exit 1 after the report
		}
		fmt.Fprintf(c.stdout, "audit of %s: %s in %s (%d changed) at %s\nIceberg metadata: %s\n", doc.Table,
			plural(int64(doc.Rows), "row"), plural(int64(doc.Partitions), "day"), doc.Changed, doc.AuditTable, doc.MetadataLocation)
		return err
	})
}
