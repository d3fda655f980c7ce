package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/staging"
)

// Inputs that are not local files: objects already in the table's object
// store (s3://, gs://, az://…, copied server-side), and Hive-partitioned output (--partitioned) that commits
// many partitions in one command.

func (c *commitCmd) addRemoteFlags(fl *pflag.FlagSet) {
	fl.StringVar(&c.partitioned, "partitioned", "", "commit every key=value folder of this local folder or prefix in the table's store (s3:// on S3, gs:// on GCS, az://, abfss:// or wasbs:// on Azure; copied server-side) as its own partition, each atomically: an engine's PARTITION_BY / partitionBy output")
	fl.IntVar(&c.parallel, "parallel", 4, "with --partitioned: partitions committed at once")
}

// hasStoreURI reports whether any input is a store URI (see isStoreURI).
func hasStoreURI(args []string) bool { return slices.ContainsFunc(args, isStoreURI) }

// isStoreURI reports whether an input names objects in an object store
// (scheme://…, any scheme but file://), which Partition.CommitObjects
// copies server-side, rather than a local file for Writer.AddPath. Only
// the table's store's scheme is accepted (s3:// on S3, gs:// on GCS, az://,
// abfss:// or wasbs:// on Azure): CommitObjects refuses another, naming
// the accepted one, so that s3a:// or a GCS URI given for an S3 table is
// told apart from a missing local file.
func isStoreURI(s string) bool { return pswap.IsStoreURI(s) }

// firstStoreURI returns the first store URI of args, for messages.
func firstStoreURI(args []string) string {
	if i := slices.IndexFunc(args, isStoreURI); i >= 0 {
		return redactURL(args[i])
	}
	return ""
}

func (c *commitCmd) runRemote(cmd *cobra.Command, args []string) error {
	if c.staged != "" || c.dryRun {
		return usagef("--staged and --dry-run take no store inputs (s3://, gs://, az://…) and no --partitioned")
	}
	if c.partitioned != "" {
		return c.runPartitioned(cmd, args)
	}
	for _, a := range args {
		if !isStoreURI(a) {
			return usagef("input %s is local but others are objects in a store (%s): commit them separately", a, firstStoreURI(args))
		}
	}
	ctx := cmd.Context()
	p, err := c.prepare(nil, false)
	if err != nil {
		return err
	}
	if p.wopts.Commit, err = c.commitOptions(cmd); err != nil {
		return err
	}
	p.wopts.Commit.AllowEmpty = p.allowEmpty
	return c.withWriteTable(ctx, c.mustExist, p.key, func(t *pswap.Table, part *pswap.Partition) error {
		// The publish's first reads overlap with the copies and the commit.
		pf := prefetchPublish(ctx, c.publish, t, part)
		res, err := part.CommitObjects(ctx, args, p.wopts)
		if err != nil {
			pf.Stop()
			return err
		}
		return c.printResult(res, "committed", c.publishAfter(ctx, c.publish, part, res, nil, pf))
	})
}

// partOutcomeJSON is one partition's outcome in the --partitioned report.
type partOutcomeJSON struct {
	Partition  string `json:"partition"`
	Source     string `json:"source"`
	Changed    bool   `json:"changed"`
	Outcome    string `json:"outcome"`
	Generation string `json:"generation,omitempty"`
	Rows       int64  `json:"rows"`
	Bytes      int64  `json:"bytes"`
	Files      int    `json:"files"`
	RunID      string `json:"run_id"`
	Error      string `json:"error,omitempty"`
	Exit       int    `json:"exit"`
}

// partitionedJSON is the --json document of commit --partitioned.
type partitionedJSON struct {
	Table      string            `json:"table"`
	Source     string            `json:"source"`
	Partitions []partOutcomeJSON `json:"partitions"`
	Committed  int               `json:"committed"`
	Unchanged  int               `json:"unchanged"`
	Failed     int               `json:"failed"`
	Exit       int               `json:"exit"`
	// Published: every view of the table reflects every partition's
	// pointer (a publish of the whole table follows the commits; false
	// with --publish=false or when it failed: PublishError says why).
	Published        bool   `json:"published"`
	MetadataLocation string `json:"metadata_location,omitempty"`
	PublishError     string `json:"publish_error,omitempty"`
	viewsJSON
}

// runPartitioned commits every key=value folder under --partitioned as its
// own partition, in parallel (bounded), each with its own run id derived
// from the given one, so that running the whole command again after a
// crash is a no-op for the partitions that landed.
func (c *commitCmd) runPartitioned(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if len(args) > 0 {
		return usagef("--partitioned takes its partitions from the folder: give no other inputs")
	}
	if c.sel.given() {
		return usagef("--partitioned takes the partitions from the folder names: drop --partition/--interval")
	}
	if c.parallel < 1 {
		return usagef("--parallel must be at least 1")
	}
	base := strings.TrimRight(c.partitioned, "/")
	remote := isStoreURI(base)
	opts, err := c.commitOptions(cmd)
	if err != nil {
		return err
	}
	opts.AllowEmpty = c.allowEmpty
	comp, err := parseCompression(c.compression)
	if err != nil {
		return err
	}
	declare, err := parseSchemaFlag(c.schema)
	if err != nil {
		return err
	}
	if len(declare.Names()) > 0 && remote {
		return usagef("--schema types local inputs as they are converted; objects in a store (%s) are committed as they are", redactURL(base))
	}
	return c.withWriteTable(ctx, c.mustExist, "", func(t *pswap.Table, _ *pswap.Partition) error {
		po := pswap.PartitionedOptions{
			Write:    pswap.WriteOptions{Commit: opts, Table: pswap.TableOptions{Declare: declare}, Staging: staging.Options{Compression: comp}},
			Parallel: c.parallel,
		}
		if c.publish {
			// One publish of the whole table after the commits: it brings
			// every partition to its pointer in every view, the ones that
			// were unchanged (a lagging publish converges) and failed too.
			pub := c.publishOptions(nil)
			po.Publish = &pub
		}
		res, err := t.CommitPartitioned(ctx, base, po)
		if err != nil {
			return err
		}
		doc := partitionedJSON{Table: c.tableURL(), Source: redactURL(c.partitioned), Committed: res.Committed, Unchanged: res.Unchanged, Failed: res.Failed}
		for _, p := range res.Partitions {
			pj := partOutcomeJSON{Partition: p.Partition, Source: redactURL(p.Source), RunID: p.RunID}
			if p.Err != nil {
				pj.Outcome, pj.Error, pj.Exit = "failed", p.Err.Error(), exitCode(&cmdError{p.Err})
			} else {
				r := p.Result
				pj.Changed, pj.Outcome, pj.Generation = r.Changed, string(r.Outcome), r.Generation
				pj.Rows, pj.Bytes, pj.Files = r.Rows, r.Bytes, r.Files
			}
			doc.Partitions = append(doc.Partitions, pj)
			doc.Exit = max(doc.Exit, pj.Exit)
		}
		var lines []string
		if r := res.Published; r != nil {
			c.warnViews("commits", r.Views, r.ViewsRecorded)
			doc.viewsJSON, lines = viewsDoc(r.Views), viewLines(r.Views)
			if res.PublishErr != nil {
				doc.PublishError = res.PublishErr.Error()
			} else {
				doc.Published = r.MetadataLocation != "" || len(r.Views) > 0
			}
			doc.MetadataLocation = r.MetadataLocation
		} else {
			c.recordViews(ctx, t)
		}
		if err := c.printPartitioned(doc, strings.Join(lines, "\n")); err != nil {
			return err
		}
		if doc.Exit != 0 {
			return &exitError{doc.Exit, fmt.Errorf("%d of %d partition(s) failed (exit status %d, the worst of them)", doc.Failed, len(doc.Partitions), doc.Exit)}
		}
		return nil
	})
}

// printPartitioned prints a --partitioned commit's outcome: the JSON
// document, or a line per partition and the totals (delta: the Delta
// log's line, "" for none).
func (c *commitCmd) printPartitioned(doc partitionedJSON, views string) error {
	if c.json {
		return printJSON(c.stdout, doc)
	}
	for _, p := range doc.Partitions {
		switch {
		case p.Exit != 0:
			fmt.Fprintf(c.stdout, "failed %s: %s\n", p.Partition, p.Error)
		case p.Changed:
			fmt.Fprintf(c.stdout, "committed %s: generation %s; %s, %s\n", p.Partition, p.Generation, plural(p.Rows, "row"), plural(int64(p.Files), "file"))
		default:
			fmt.Fprintf(c.stdout, "unchanged %s: %s (no-op)\n", p.Partition, p.Outcome)
		}
	}
	fmt.Fprintf(c.stdout, "%d partition(s): %d committed, %d unchanged, %d failed\n", len(doc.Partitions), doc.Committed, doc.Unchanged, doc.Failed)
	if doc.MetadataLocation != "" {
		fmt.Fprintf(c.stdout, "Iceberg metadata: %s\n", doc.MetadataLocation)
	}
	if views != "" {
		fmt.Fprintln(c.stdout, views)
	}
	return nil
}
