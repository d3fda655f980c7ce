package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

func init() { registerCommand(newPublishCmd) }

// envPublish turns publishing after commit and rollback off when "0",
// "false" or "no" (the default of --publish).
const envPublish = "PSWAP_PUBLISH"

type publishCmd struct{ *app }

func newPublishCmd(a *app) *cobra.Command {
	c := &publishCmd{app: a}
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Bring the table's Iceberg metadata up to date with every partition",
		Long: `Bring the table's Iceberg v2 metadata (<table>/metadata/vN.metadata.json and
version-hint.text) up to date with the current generation of every
partition: one GET per partition, no listing of data. Idempotent: when the
metadata already reflects every pointer, nothing is written. commit and
rollback publish on their own (unless --publish=false or $PSWAP_PUBLISH=0);
run publish after a failed publish, or to repair the metadata.

It repairs what it finds damaged and says what it did ("repaired: ...",
--json "repairs", "hint_fixed"): a version-hint.text that is missing, behind
or names a missing version; a manifest that is missing or truncated; a
latest version that does not parse or whose manifest list is lost (a new
version is rebuilt from the pointers); a table moved to another folder.
A current snapshot written by another engine (a Spark INSERT) is refused,
naming it and how to recover.

Spark, Trino, DuckDB (iceberg_scan) and pyiceberg read the table from the
printed metadata location (see the README, "Iceberg").

With --delta (or $PSWAP_DELTA=1) it also brings the table's Delta Lake log
(<table>/_delta_log/) up to date, creating it on a table that has none:
delta-rs, Polars, DuckDB (delta_scan) and Spark read the table's folder as
a Delta table (see the README, "Delta Lake").`,
		Example: `  pswap publish --table s3://lake/sales
  duckdb -c "SELECT count(*) FROM iceberg_scan('$(pswap publish --table s3://lake/sales --json | jq -r .metadata_location)')"`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	addCatalogFlag(a, cmd)
	addDeltaFlag(a, cmd)
	return cmd
}

// publishJSON is the --json document of publish.
type publishJSON struct {
	Table            string `json:"table"`
	MetadataLocation string `json:"metadata_location"`
	Version          int    `json:"version"`
	SnapshotID       int64  `json:"snapshot_id"`
	Changed          bool   `json:"changed"`
	Partitions       int    `json:"partitions"`
	Rebases          int    `json:"rebases"`
	// HintFixed: version-hint.text lagged (it named HintWas, 0 when it was
	// missing or unreadable) and now names Version.
	// Repairs says what the publish found damaged and rebuilt from the
	// pointers (a version that does not parse, a lost manifest list).
	Repairs   []string `json:"repairs,omitempty"`
	HintFixed bool     `json:"hint_fixed"`
	HintWas   int      `json:"hint_was,omitempty"`
	deltaJSON
}

func (c *publishCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	return c.withTable(ctx, func(t *pswap.Table) (rerr error) {
		// With --delta the Delta log is reconciled at the same time
		// (delta.go); its failure fails the command too, after the report.
		var (
			dpub *pswap.DeltaPublication
			dres pswap.DeltaResult
			done = make(chan struct{})
		)
		go func() { defer close(done); dpub, dres = c.publishDeltaTable(ctx, t) }()
		r, err := t.Publish(ctx, c.publishOptions(nil))
		<-done
		if dpub != nil && dpub.Err != nil {
			defer func() {
				if rerr == nil {
					rerr = fmt.Errorf("publish the Delta log: %w", dpub.Err)
				}
			}()
		}
		if err != nil && r.MetadataLocation == "" {
			return fmt.Errorf("publish Iceberg metadata: %w", err)
		}
		if err != nil {
			// Published, but not every partition (an unreadable pointer),
			// or the catalog lags: say what was published, then fail.
			perr := err
			defer func() { rerr = fmt.Errorf("publish Iceberg metadata: %w", perr) }()
		}
		if c.json {
			return printJSON(c.stdout, publishJSON{
				Table: c.tableURL(), MetadataLocation: r.MetadataLocation, Version: r.Version,
				SnapshotID: r.SnapshotID, Changed: r.Changed, Partitions: r.Partitions, Rebases: r.Rebases,
				HintFixed: r.HintFixed, HintWas: r.HintWas, Repairs: r.Repairs, deltaJSON: deltaDoc(dpub),
			})
		}
		verb := "published"
		if !r.Changed {
			verb = "up to date"
		}
		if dpub != nil && dpub.Published {
			dverb := "Delta log published"
			if !dres.Changed {
				dverb = "Delta log up to date"
			}
			fmt.Fprintf(c.stdout, "%s: version %d (%s)\n", dverb, dres.Version, plural(int64(dres.Partitions), "partition"))
		}
		if r.MetadataLocation == "" {
			_, err = fmt.Fprintln(c.stdout, "nothing to publish: the table has no partition with data")
			return err
		}
		for _, rep := range r.Repairs {
			fmt.Fprintf(c.stdout, "repaired: %s\n", rep)
		}
		if r.HintFixed {
			was := "missing"
			if r.HintWas > 0 {
				was = fmt.Sprintf("named version %d", r.HintWas)
			}
			fmt.Fprintf(c.stdout, "version-hint.text lagged (%s): it now names version %d\n", was, r.Version)
		}
		_, err = fmt.Fprintf(c.stdout, "%s: %s (%s)\n", verb, r.MetadataLocation, plural(int64(r.Partitions), "partition"))
		return err
	})
}

// addPublishFlag adds --publish to commit and rollback.
func addPublishFlag(a *app, cmd *cobra.Command, on *bool) {
	def := true
	switch strings.ToLower(strings.TrimSpace(a.getenv(envPublish))) {
	case "0", "false", "no", "off":
		def = false
	}
	addCatalogFlag(a, cmd)
	addDeltaFlag(a, cmd)
	cmd.Flags().BoolVar(on, "publish", def, "publish the table's Iceberg metadata after the swap ($"+envPublish+"=0 sets the default to false)")
}

// prefetchPublish starts the first reads of the publish that follows a
// commit or rollback (Table.StartPrefetch) when --publish is on, so
// that they overlap with the commit's requests; nil when it is off.
func prefetchPublish(ctx context.Context, on bool, t *pswap.Table, part *pswap.Partition) *pswap.Prefetch {
	if !on {
		return nil
	}
	return t.StartPrefetch(ctx, pswap.PublishOptions{}, part.Key())
}

// publishAfter publishes a successful commit or rollback, from pf (nil:
// none; a writer's publish uses the writer's own). It never fails the
// command: a failure is a warning, and the JSON says published=false.
func (a *app) publishAfter(ctx context.Context, on bool, part *pswap.Partition, res pswap.Result, w *pswap.Writer, pf *pswap.Prefetch) pswap.Publication {
	if a.delta {
		// The Delta log (delta.go), at the same time as the Iceberg
		// metadata: neither reads what the other writes.
		done := make(chan struct{})
		go func() { defer close(done); a.deltaPub = a.publishDeltaAfter(ctx, part, res, w) }()
		defer func() { <-done }()
	}
	if !on {
		pf.Stop()
		return pswap.Publication{}
	}
	var pub pswap.Publication
	if w != nil {
		pub = w.Publish(ctx, a.publishOptions(pf))
	} else {
		pub = part.Publish(ctx, res, a.publishOptions(pf))
	}
	if pub.Err != nil {
		fmt.Fprintf(a.stderr, "pswap: warning: the commit stands, but the Iceberg metadata was not published: %s\nhint: run 'pswap publish' to bring it up to date\n", pub.Err)
	}
	return pub
}
