package main

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/swap"
)

func init() { registerCommand(newGCCmd) }

type gcCmd struct {
	*app
	sel          selector
	prefix       string
	keep         int
	minAge       time.Duration
	retention    time.Duration // of Iceberg snapshots (unset: --min-age)
	retentionSet bool          // --snapshot-retention given (0: the current snapshot only)
	orphanAge    time.Duration
	commitWindow time.Duration
	concurrency  int
	dryRun       bool
}

func newGCCmd(a *app) *cobra.Command {
	c := &gcCmd{app: a}
	cmd := &cobra.Command{
		Use:   "gc [--partition KEY | --interval START/END | --prefix KEYPREFIX] [--keep N] [--min-age DUR] [--orphan-age DUR] [--dry-run]",
		Short: "Delete old generations, orphaned uploads and abandoned multipart uploads",
		Long: `Delete what no reader can still be reading and no writer can still commit,
in every partition of the table (or the ones named):

  - retired generations beyond the --keep most recent ones (kept for
    rollback) that were replaced more than --min-age ago (readers that
    resolved them before may still be reading);
  - orphans: generations that were staged but never committed (crashed or
    refused runs, 'pswap stage' never committed), once all their objects
    are older than --orphan-age plus --commit-window;
  - multipart uploads abandoned for as long; on a local table, the
    temporary files (.pswap-tmp) and empty generation folders that
    interrupted writes left, once as old.

The current generation, the data any kept generation uses (a rollback
reuses an older generation's files), and the partition's pointer are never
deleted. Ages come from the store's own clock and timestamps, not this
machine's. The pointer is read again right before each batch of deletions;
if a commit or rollback landed meanwhile, the partition is planned again.

--orphan-age must be at least the writers' grace period (24 hours): a writer
refuses to commit a generation staged longer ago than that, which is what
keeps GC from deleting a slow writer's files under it.

--dry-run prints exactly the keys that would be deleted and deletes
nothing. --json prints per-partition counts, bytes freed and generations
kept and deleted (with the keys in a dry run).`,
		Example: `  # What would a collection of the whole table delete?
  pswap gc --table s3://lake/sales --dry-run

  # Collect one partition, keeping three generations for rollback
  pswap gc --table s3://lake/sales --partition dt=2026-11-29 --keep 3

  # A month of partitions, as JSON for a script
  pswap gc --table s3://lake/sales --prefix dt=2026-11- --json`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	fs := cmd.Flags()
	addCatalogFlag(a, cmd)
	c.sel.addFlags(fs)
	fs.StringVar(&c.prefix, "prefix", "", "only partitions whose key starts with this (e.g. dt=2026-11-)")
	fs.IntVar(&c.keep, "keep", pswap.DefaultGCKeep, "retired generations kept for rollback, newest first (0: none)")
	fs.DurationVar(&c.minAge, "min-age", pswap.DefaultGCMinAge, "keep every generation retired less than this long ago, for readers still reading it (0: none)")
	fs.DurationVar(&c.retention, "snapshot-retention", 0, "keep the files of Iceberg snapshots younger than this, and expire older snapshots (default: --min-age; 0: the current snapshot only, which is always kept)")
	fs.DurationVar(&c.orphanAge, "orphan-age", pswap.DefaultGCOrphanAge, "delete uncommitted generations and multipart uploads older than this (plus --commit-window); at least the writers' grace period (0: none, warned about)")
	fs.DurationVar(&c.commitWindow, "commit-window", pswap.DefaultGCCommitWindow, "longest time a writer takes from its grace-period check to its pointer swap, or a publisher from its pointer read to its snapshot; what was retired that recently is kept (0: none, warned about)")
	fs.IntVar(&c.concurrency, "concurrency", pswap.DefaultGCConcurrency, "partitions collected at once")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print exactly what would be deleted; delete nothing")
	return cmd
}

// gcJSON is the --json document of gc.
type gcJSON struct {
	Table        string `json:"table"`
	DryRun       bool   `json:"dry_run"`
	Keep         int    `json:"keep"`
	MinAge       string `json:"min_age"`
	OrphanAge    string `json:"orphan_age"`
	CommitWindow string `json:"commit_window"`
	// SnapshotRetention is the effective retention of Iceberg snapshots
	// (--snapshot-retention, else --min-age); MetadataMinAge the age under
	// which the snapshot expiry never deletes a metadata file.
	SnapshotRetention string              `json:"snapshot_retention"`
	MetadataMinAge    string              `json:"metadata_min_age"`
	Partitions        []pswap.GCPartition `json:"partitions"`
	Totals            pswap.GCTotals      `json:"totals"`
	// BatchRecordKeys are the backfills' batch attempt records that a dry
	// run would delete (a real run: counted in totals.batch_records).
	BatchRecordKeys []string `json:"batch_record_keys,omitempty"`
}

// options checks the flags and returns the library's options.
func (c *gcCmd) options() (pswap.GCOptions, error) {
	switch {
	case c.keep < 0:
		return pswap.GCOptions{}, usagef("--keep %d: must be 0 or more", c.keep)
	case c.minAge < 0:
		return pswap.GCOptions{}, usagef("--min-age %s: must be 0 or more", c.minAge)
	case c.orphanAge < 0:
		return pswap.GCOptions{}, usagef("--orphan-age %s: must be 0 or more", c.orphanAge)
	case c.commitWindow < 0:
		return pswap.GCOptions{}, usagef("--commit-window %s: must be 0 or more", c.commitWindow)
	case c.retention < 0:
		return pswap.GCOptions{}, usagef("--snapshot-retention %s: must be 0 or more", c.retention)
	case c.concurrency < 1:
		return pswap.GCOptions{}, usagef("--concurrency %d: must be at least 1", c.concurrency)
	case c.prefix != "" && c.sel.given():
		return pswap.GCOptions{}, usagef("--prefix and --partition/--interval are mutually exclusive")
	}
	if err := (pswap.GCOptions{Prefix: c.prefix}).Validate(); err != nil {
		return pswap.GCOptions{}, usagef("--prefix: %w", err)
	}
	o := pswap.GCOptions{Keep: c.keep, MinAge: c.minAge, OrphanAge: c.orphanAge, CommitWindow: c.commitWindow,
		DryRun: c.dryRun, Concurrency: c.concurrency, Prefix: c.prefix, SnapshotRetention: c.libRetention(),
		// One retry layer: gc has no loop of its own, the SDK retries
		// each request, so the Iceberg reads make one attempt each at
		// pswap's layer.
		MaxAttempts: 1}
	// Every flag's 0 means none. The library's zero values mean
	// "default": "none" is pswap.GCNone there.
	if o.Keep == 0 {
		o.Keep = pswap.GCNone
	}
	if o.MinAge == 0 {
		o.MinAge = pswap.GCNone
	}
	if o.OrphanAge == 0 {
		o.OrphanAge = pswap.GCNone
	}
	if o.CommitWindow == 0 {
		o.CommitWindow = pswap.GCNone
	}
	return o, nil
}

func (c *gcCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	c.retentionSet = cmd.Flags().Changed("snapshot-retention")
	opts, err := c.options()
	if err != nil {
		return err
	}
	if opts.Partitions, err = c.sel.keys(); err != nil {
		return err
	}
	if c.orphanAge < swap.DefaultGracePeriod {
		fmt.Fprintf(c.stderr, "pswap: warning: --orphan-age %s is shorter than the writers' grace period (%s): "+
			"a slow writer's staged files may be deleted while it can still commit them\n", c.orphanAge, swap.DefaultGracePeriod)
	}
	switch {
	case c.commitWindow == 0:
		fmt.Fprintf(c.stderr, "pswap: warning: --commit-window 0: a generation retired while a commit or an Iceberg publish is under way "+
			"may be deleted under it; use 0 only when nothing writes to the table\n")
	case c.commitWindow < pswap.DefaultPublishMaxElapsed:
		// A publish lands within MaxElapsed of its pointer reads (or plans
		// again): a shorter window lets gc delete a generation that a slow
		// publish goes on to name, and readers fail until the next one.
		fmt.Fprintf(c.stderr, "pswap: warning: --commit-window %s is shorter than an Iceberg publish may take (%s from its pointer reads to its version): "+
			"a generation retired meanwhile may be deleted while a slow publish still names it, and readers of the Iceberg metadata fail until the next publish\n",
			c.commitWindow, pswap.DefaultPublishMaxElapsed)
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		// The table's catalogs (--catalog records one): the library
		// brings each to the latest version first (nothing is deleted if
		// one cannot be), and the expiry's version goes to the first
		// before any metadata is deleted.
		c.recordViews(ctx, t)
		opts.OpenCatalog = c.openTableCatalog
		bar := c.newGCProgress()
		opts.OnPartition = func(pswap.GCPartition) {
			if bar != nil {
				_ = bar.Add(1)
			}
		}
		rep, runErr := t.GC(ctx, opts)
		if bar != nil {
			_ = bar.Finish()
		}
		if runErr != nil && rep.Partitions == nil && rep.Totals.Partitions == 0 && rep.Totals.Errors == 0 {
			// Stopped before any partition (the catalog): nothing to print.
			return fmt.Errorf("gc: %w", runErr)
		}
		if err := c.print(rep.Partitions, rep.Totals, rep.BatchRecordKeys); err != nil {
			return err
		}
		if runErr != nil {
			return fmt.Errorf("gc: %w", runErr)
		}
		if rep.ExpireErr != nil {
			fmt.Fprintf(c.stderr, "pswap: warning: expiring old Iceberg snapshots failed: %v\n", rep.ExpireErr)
		}
		return nil
	})
}

// newGCProgress returns a partition counter on stderr, or nil when
// progress must not be shown (--json, or stderr not a terminal).
func (c *gcCmd) newGCProgress() *progressbar.ProgressBar {
	if c.json || !isTerminal(c.stderr) {
		return nil
	}
	return progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(c.stderr),
		progressbar.OptionSetDescription("gc: partitions"),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// snapshotRetention is the retention of Iceberg snapshots the run uses:
// --snapshot-retention, else --min-age (0: the current snapshot only).
func (c *gcCmd) snapshotRetention() time.Duration {
	if c.retention > 0 || c.retentionSet {
		return c.retention
	}
	return c.minAge
}

// libRetention is gc.CollectOptions.SnapshotRetention: an explicit
// --snapshot-retention 0 keeps the current snapshot only, as every other
// flag's 0 means none (the library's 0 means "as MinAge").
func (c *gcCmd) libRetention() time.Duration {
	if c.retentionSet && c.retention == 0 {
		return time.Nanosecond
	}
	return c.retention
}

// keptText says why GC kept a generation, in the flags' words.
func (c *gcCmd) keptText(why string) string {
	switch why {
	case pswap.GCKeptCurrent:
		return "current"
	case pswap.GCKeptForRollback:
		return fmt.Sprintf("within --keep %d (kept for rollback)", c.keep)
	case pswap.GCKeptMinAge:
		return fmt.Sprintf("retired less than --min-age %s ago (readers may still read it)", c.minAge)
	case pswap.GCKeptCommitWindow:
		return fmt.Sprintf("inside the commit window: retired less than --commit-window %s before gc read the Iceberg snapshots, or since "+
			"(a publish may be naming it)", c.commitWindow)
	case pswap.GCKeptSnapshot:
		return fmt.Sprintf("named by an Iceberg snapshot younger than the snapshot retention %s, or the current one", c.snapshotRetention())
	case pswap.GCKeptClockSlack:
		return "retired within the store clock's resolution of now (a few seconds): not yet old"
	case pswap.GCKeptUnknownAge:
		return "when it was retired cannot be told (a newer generation's manifest is gone): taken as young"
	}
	return why
}

func (c *gcCmd) print(reports []pswap.GCPartition, totals pswap.GCTotals, batchKeys []string) error {
	if c.json {
		doc := gcJSON{Table: c.tableURL(), DryRun: c.dryRun, Keep: c.keep, MinAge: c.minAge.String(),
			OrphanAge: c.orphanAge.String(), CommitWindow: c.commitWindow.String(),
			SnapshotRetention: c.snapshotRetention().String(), MetadataMinAge: pswap.DefaultMetadataMinAge.String(),
			Partitions: reports, Totals: totals, BatchRecordKeys: batchKeys}
		if !c.dryRun { // the keys of a real run can be many: counts only
			doc.BatchRecordKeys = nil
			doc.Partitions = make([]pswap.GCPartition, len(reports))
			for i, r := range reports {
				r.Keys, r.UploadKeys = nil, nil
				doc.Partitions[i] = r
			}
		}
		if doc.Partitions == nil {
			doc.Partitions = []pswap.GCPartition{}
		}
		return printJSON(c.stdout, doc)
	}
	verb := "deleted"
	if c.dryRun {
		verb = "would delete"
	}
	single := len(reports) == 1
	for _, r := range reports {
		if r.Error != "" {
			fmt.Fprintf(c.stdout, "%s: failed: %s\n", r.Partition, r.Error)
			continue
		}
		if r.Objects == 0 && r.Uploads == 0 && len(r.EmptyFolders) == 0 && !single {
			continue // nothing to say about a clean partition of many
		}
		young := ""
		if n := len(r.OrphansKept); n > 0 {
			young = fmt.Sprintf(" and %s younger than --orphan-age", plural(int64(n), "uncommitted generation"))
		}
		fmt.Fprintf(c.stdout, "%s: %s%s; kept %s%s\n", r.Partition, verb, what(r.Objects, r.Bytes, len(r.Collected), len(r.Orphans), r.Uploads, r.UploadBytes, r.UploadKind, len(r.EmptyFolders)),
			plural(int64(len(r.Kept)), "generation"), young)
		for _, g := range r.Kept {
			fmt.Fprintf(c.stdout, "  kept %s: %s\n", g, c.keptText(r.KeptReasons[g]))
		}
		if c.dryRun {
			for _, k := range r.Keys {
				fmt.Fprintf(c.stdout, "  %s\n", k)
			}
			for _, k := range r.UploadKeys {
				fmt.Fprintf(c.stdout, "  %s (%s)\n", k, uploadKind(r.UploadKind))
			}
			for _, f := range r.EmptyFolders {
				fmt.Fprintf(c.stdout, "  %s (empty folder)\n", f)
			}
		}
	}
	if len(batchKeys) > 0 {
		fmt.Fprintf(c.stdout, "backfills' batch attempt records: %s %s (every partition's attempt they name is collected or was never reached)\n",
			verb, plural(int64(len(batchKeys)), "record"))
		if c.dryRun {
			for _, k := range batchKeys {
				fmt.Fprintf(c.stdout, "  %s\n", k)
			}
		}
	}
	kind, folders := "", 0
	for _, r := range reports {
		kind = cmp.Or(kind, r.UploadKind)
		folders += len(r.EmptyFolders)
	}
	fmt.Fprintf(c.stdout, "total: %s, %s%s\n", plural(int64(totals.Partitions), "partition"), verb,
		what(totals.Objects, totals.Bytes, totals.Collected, totals.Orphans, totals.Uploads, totals.UploadBytes, kind, folders))
	fmt.Fprintf(c.stdout, "rules: --keep %d, --min-age %s, --commit-window %s, --orphan-age %s; Iceberg: snapshots younger than %s kept "+
		"(--snapshot-retention, else --min-age; the current one always), metadata files younger than %s never deleted\n",
		c.keep, c.minAge, c.commitWindow, c.orphanAge, c.snapshotRetention(), pswap.DefaultMetadataMinAge)
	return nil
}

// what describes a deletion: " 3 objects (1.2 KiB): 1 generation, 1
// orphan", then the uploads: "; 2 temporary upload files (18.0 MiB)" (a
// multipart upload's size is not known), then "; 1 empty folder".
func what(objects int, bytes int64, generations, orphans, uploads int, uploadBytes int64, kind string, folders int) string {
	if objects == 0 && uploads == 0 && folders == 0 {
		return " nothing"
	}
	var s string
	if objects > 0 {
		var parts []string
		if generations > 0 {
			parts = append(parts, plural(int64(generations), "generation"))
		}
		if orphans > 0 {
			parts = append(parts, plural(int64(orphans), "orphan"))
		}
		s = fmt.Sprintf(" %s (%s)", plural(int64(objects), "object"), humanBytes(bytes))
		if len(parts) > 0 {
			s += ": " + strings.Join(parts, ", ")
		}
	}
	if uploads > 0 {
		if s != "" {
			s += ";"
		}
		s += " " + plural(int64(uploads), uploadKind(kind))
		if uploadBytes > 0 {
			s += " (" + humanBytes(uploadBytes) + ")"
		}
	}
	if folders > 0 {
		if s != "" {
			s += ";"
		}
		s += " " + plural(int64(folders), "empty folder")
	}
	return s
}

// uploadKind names the uploads of a report (GCPartition.UploadKind).
func uploadKind(kind string) string { return cmp.Or(kind, pswap.GCUploadMultipart) }
