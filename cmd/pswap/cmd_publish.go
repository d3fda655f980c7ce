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

It publishes every view the table has ('pswap views' lists them): the
Iceberg metadata, the Delta Lake log (<table>/_delta_log/) and the
catalogs the table is registered in. --delta (or $PSWAP_DELTA=1) turns the
Delta log on for the table, creating it: delta-rs, Polars, DuckDB
(delta_scan) and Spark read the table's folder as a Delta table (see the
README, "Delta Lake"); --catalog registers the table in a catalog. Both
are recorded in the table, so every later writer publishes them too. The
command fails when a view could not be published, after saying what was.`,
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
	viewsJSON
}

func (c *publishCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	return c.withTable(ctx, func(t *pswap.Table) error {
		r, err := t.Publish(ctx, c.publishOptions(nil))
		if r.ViewsRecorded != nil {
			fmt.Fprintf(c.stderr, "pswap: warning: the table's views could not be recorded in its table.json (published all the same): %s\n", r.ViewsRecorded)
		}
		if c.json {
			if perr := printJSON(c.stdout, publishJSON{
				Table: c.tableURL(), MetadataLocation: r.MetadataLocation, Version: r.Version,
				SnapshotID: r.SnapshotID, Changed: r.Changed, Partitions: r.Partitions, Rebases: r.Rebases,
				HintFixed: r.HintFixed, HintWas: r.HintWas, Repairs: r.Repairs, viewsJSON: viewsDoc(r.Views),
			}); perr != nil {
				return perr
			}
		} else {
			c.printPublish(r)
		}
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	})
}

// printPublish is publish's text output.
func (c *publishCmd) printPublish(r pswap.PublishResult) {
	for _, v := range r.Views {
		if !v.Published {
			continue
		}
		switch v.View {
		case pswap.ViewDelta:
			verb := "Delta log published"
			if !v.Changed {
				verb = "Delta log up to date"
			}
			fmt.Fprintf(c.stdout, "%s: version %d\n", verb, v.Version)
		case pswap.ViewCatalog:
			switch {
			case v.Changed && v.From > 0:
				fmt.Fprintf(c.stdout, "catalog %s: moved from version %d to version %d\n", v.Name, v.From, v.Version)
			case v.Changed:
				fmt.Fprintf(c.stdout, "catalog %s: registered at version %d\n", v.Name, v.Version)
			default:
				fmt.Fprintf(c.stdout, "catalog %s: version %d\n", v.Name, v.Version)
			}
		}
	}
	ice, ok := r.View(pswap.ViewIceberg)
	if !ok || !ice.Published && r.MetadataLocation == "" {
		return // off, or nothing published (the error says why)
	}
	if r.MetadataLocation == "" {
		fmt.Fprintln(c.stdout, "nothing to publish: the table has no partition with data")
		return
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
	verb := "published"
	if !r.Changed {
		// "up to date" only when the publish found every view so: not
		// when it moved another view, nor when one was not published
		// (the error follows).
		verb = "up to date"
		for _, v := range r.Views {
			if v.Changed || v.Err != nil {
				verb = "Iceberg metadata unchanged"
			}
		}
	}
	fmt.Fprintf(c.stdout, "%s: %s (%s)\n", verb, r.MetadataLocation, plural(int64(r.Partitions), "partition"))
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
	cmd.Flags().BoolVar(&a.waitView, "wait-view", false, "return only once the Iceberg metadata holds the commit, even while another writer holds the table's publish lease (default: under a live holder the view says \"pending\", and that writer's next version holds the commit)")
	cmd.Flags().BoolVar(&a.leaseFirst, "lease-first", false, "take the table's publish lease before publishing, as one of many writers started at once should (default: publish at once, and take the lease only after losing the race for the next version, or in a burst)")
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

// publishAfter publishes a successful commit or rollback to every view of
// the table, from pf (nil: none; a writer's publish uses the writer's
// own); with on false (--publish=false) it only records the views the
// flags turn on. It never fails the command: a view not published is a
// warning, and the JSON says published=false.
func (a *app) publishAfter(ctx context.Context, on bool, part *pswap.Partition, res pswap.Result, w *pswap.Writer, pf *pswap.Prefetch) pswap.Publication {
	if !on {
		pf.Stop()
		a.recordViews(ctx, part.Table())
		return pswap.Publication{}
	}
	var pub pswap.Publication
	if w != nil {
		pub = w.Publish(ctx, a.publishOptions(pf))
	} else {
		pub = part.Publish(ctx, res, a.publishOptions(pf))
	}
	a.warnViews("commit", pub.Views, pub.ViewsRecorded)
	return pub
}
