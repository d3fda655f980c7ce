package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store/s3store"
)

// Inputs that are not local files: objects already in S3 (copied
// server-side), and Hive-partitioned output (--partitioned) that commits
// many partitions in one command.

func (c *commitCmd) addRemoteFlags(fl *pflag.FlagSet) {
	fl.StringVar(&c.partitioned, "partitioned", "", "commit every key=value folder of this local folder or s3:// prefix (an engine's PARTITION_BY / partitionBy output) as its own partition, each atomically")
	fl.IntVar(&c.parallel, "parallel", 4, "with --partitioned: partitions committed at once")
}

// hasStoreURI reports whether any input is an s3:// URI.
func hasStoreURI(args []string) bool { return slices.ContainsFunc(args, isStoreURI) }

// isStoreURI reports whether an input names objects in S3 (s3://…), which
// Partition.CommitObjects copies server-side, rather than a local file for
// Writer.AddPath.
func isStoreURI(s string) bool { return strings.HasPrefix(strings.ToLower(s), "s3://") }

func (c *commitCmd) runRemote(cmd *cobra.Command, args []string) error {
	if c.staged != "" || c.dryRun {
		return usagef("--staged and --dry-run take no s3:// inputs and no --partitioned")
	}
	if c.partitioned != "" {
		return c.runPartitioned(cmd, args)
	}
	for _, a := range args {
		if !isStoreURI(a) {
			return usagef("input %s is local but others are s3:// objects: commit them separately", a)
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
		return usagef("--schema types local inputs as they are converted; s3:// objects are committed as they are")
	}
	return c.withWriteTable(ctx, c.mustExist, "", func(t *pswap.Table, _ *pswap.Partition) error {
		var parts map[string]string // key -> local folder or s3:// prefix
		if remote {
			parts, err = remotePartitions(ctx, t, base)
		} else {
			parts, err = localPartitions(base)
		}
		if err != nil {
			return err
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range parts {
				if !yield(k) {
					return
				}
			}
		})
		if err := checkLayout(ctx, t, keys); err != nil {
			return err
		}
		wo := pswap.WriteOptions{Commit: opts, Table: pswap.TableOptions{Declare: declare}}
		out := c.commitPartitions(ctx, t, keys, parts, remote, wo, comp)
		doc := partitionedJSON{Table: c.tableURL(), Source: redactURL(c.partitioned), Partitions: out}
		var lines []string
		if c.publish {
			// One publish of the whole table after the commits: it brings
			// every partition to its pointer in every view, the ones that
			// were unchanged (a lagging publish converges) and failed too.
			r, err := t.Publish(ctx, c.publishOptions(nil))
			c.warnViews("commits", r.Views, r.ViewsRecorded)
			doc.viewsJSON, lines = viewsDoc(r.Views), viewLines(r.Views)
			if err != nil {
				doc.PublishError = err.Error()
			} else {
				doc.Published = r.MetadataLocation != "" || len(r.Views) > 0
			}
			doc.MetadataLocation = r.MetadataLocation
		} else {
			c.recordViews(ctx, t)
		}
		for _, p := range out {
			switch {
			case p.Exit != 0:
				doc.Failed++
			case p.Changed:
				doc.Committed++
			default:
				doc.Unchanged++
			}
			doc.Exit = max(doc.Exit, p.Exit)
		}
		if err := c.printPartitioned(doc, strings.Join(lines, "\n")); err != nil {
			return err
		}
		if doc.Exit != 0 {
			return &exitError{doc.Exit, fmt.Errorf("%d of %d partition(s) failed (exit status %d, the worst of them)", doc.Failed, len(out), doc.Exit)}
		}
		return nil
	})
}

// commitPartitions commits each partition of keys from its source in
// parts, --parallel at a time, each with the run id RUN/<partition>.
func (c *commitCmd) commitPartitions(ctx context.Context, t *pswap.Table, keys []string, parts map[string]string, remote bool, wo pswap.WriteOptions, comp staging.Compression) []partOutcomeJSON {
	out := make([]partOutcomeJSON, len(keys))
	sem := make(chan struct{}, c.parallel)
	var wg sync.WaitGroup
	for i, key := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			o := wo
			if o.Commit.RunID != "" {
				o.Commit.RunID += "/" + key
			}
			res, err := commitOne(ctx, t, key, parts[key], remote, o, comp)
			pj := partOutcomeJSON{Partition: key, Source: redactURL(parts[key]), RunID: o.Commit.RunID}
			if err != nil {
				pj.Outcome, pj.Error, pj.Exit = "failed", err.Error(), exitCode(&cmdError{err})
			} else {
				pj.Changed, pj.Outcome, pj.Generation = res.Changed, string(res.Outcome), res.Generation
				pj.Rows, pj.Bytes, pj.Files = res.Rows, res.Bytes, res.Files
			}
			out[i] = pj
		})
	}
	wg.Wait()
	return out
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

// commitOne commits one partition's folder (local) or prefix (S3).
func commitOne(ctx context.Context, t *pswap.Table, key, src string, remote bool, wo pswap.WriteOptions, comp staging.Compression) (pswap.Result, error) {
	part, err := t.Partition(key)
	if err != nil {
		return pswap.Result{}, err
	}
	if remote {
		return part.CommitObjects(ctx, []string{src + "/"}, wo)
	}
	wo.Staging.Compression = comp
	w, err := part.Begin(ctx, wo)
	if err != nil {
		return pswap.Result{}, err
	}
	if w.AlreadyCommitted() {
		// Our run id committed here before: nothing to upload, and the
		// commit is the SameRun no-op describing the current generation.
		return w.Commit(ctx)
	}
	if err := w.AddPath(ctx, src, pswap.FormatAuto); err != nil {
		w.Abort(context.WithoutCancel(ctx))
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

// hiveNullPartition is the folder value Spark and Hive write the rows of a
// null partition key under.
const hiveNullPartition = "__HIVE_DEFAULT_PARTITION__"

// partitionKeyOf turns a folder path relative to the --partitioned root
// into a partition key: every segment must be key=value. Values are read
// with their %XX escapes decoded, as the engines that wrote them escape
// (Spark and Hive escape ':' and '=', others also a space, a comma or in
// lower case hex), and the key is their canonical form.
func partitionKeyOf(rel string) (string, error) {
	for _, seg := range strings.Split(rel, "/") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" || v == "" {
			return "", fmt.Errorf("%w: folder %s is not a key=value partition folder (%q)", pswap.ErrBadInput, rel, seg)
		}
		if v == hiveNullPartition {
			return "", fmt.Errorf("%w: folder %s holds the rows whose %s is null (%s is Spark's and Hive's folder for a null partition value), and a partition key cannot be null: "+
				"fill or filter the nulls before writing (Spark: df.na.fill or df.where(\"%s IS NOT NULL\")), or remove the folder to commit the others; nothing was committed",
				pswap.ErrBadInput, rel, k, hiveNullPartition, k)
		}
	}
	k, err := partition.Parse(rel)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", rel, err)
	}
	return k.String(), nil
}

// addPartition records that folder holds partition key, refusing a second
// folder of the same partition (two spellings of one value, such as a%3Ab
// and a%3ab): committing one would drop the other's rows.
func addPartition(parts map[string]string, key, folder string) error {
	if prev, ok := parts[key]; ok && prev != folder {
		return fmt.Errorf("%w: folders %s and %s are the same partition %s (their values differ only in how they are escaped): merge them, nothing was committed",
			pswap.ErrBadInput, prev, folder, key)
	}
	parts[key] = folder
	return nil
}

// localPartitions finds the partition folders of a local folder: the
// folders that directly hold data files (hidden and _-prefixed entries
// skipped, as the engines' markers are).
func localPartitions(root string) (map[string]string, error) {
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: --partitioned %s: not a folder", pswap.ErrBadInput, root)
	}
	parts := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if _, ferr := formatOf(name); ferr != nil {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		if dir == "." {
			return fmt.Errorf("%w: %s lies directly in %s, outside any key=value partition folder", pswap.ErrBadInput, p, root)
		}
		key, err := partitionKeyOf(filepath.ToSlash(dir))
		if err != nil {
			return err
		}
		return addPartition(parts, key, filepath.Dir(p))
	})
	if err != nil {
		if !errors.Is(err, pswap.ErrBadInput) && !errors.Is(err, partition.ErrInvalidKey) {
			err = fmt.Errorf("%w: %v", pswap.ErrBadInput, err)
		}
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: --partitioned %s holds no key=value folder with data files", pswap.ErrBadInput, root)
	}
	return parts, nil
}

// remotePartitions lists an s3:// prefix once and groups its data objects
// by folder.
func remotePartitions(ctx context.Context, t *pswap.Table, base string) (map[string]string, error) {
	st, ok := t.Store().(*s3store.Store)
	if !ok {
		return nil, fmt.Errorf("%w: an s3:// --partitioned source is copied server-side, which needs an s3:// table", pswap.ErrBadInput)
	}
	bucket, key, err := s3store.ParseURL(base + "/")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pswap.ErrBadInput, err)
	}
	src, err := st.Sibling(bucket, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pswap.ErrBadInput, err)
	}
	prefix := strings.TrimSuffix(key, "/")
	if prefix != "" {
		prefix += "/"
	}
	parts := map[string]string{}
	for a, err := range src.List(ctx, prefix) {
		if err != nil {
			return nil, fmt.Errorf("--partitioned %s: %w", redactURL(base), err)
		}
		rel := strings.TrimPrefix(a.Key, prefix)
		if pswap.IsEngineMarker(rel) {
			continue
		}
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			return nil, fmt.Errorf("%w: %s lies directly under %s, outside any key=value partition folder", pswap.ErrBadInput, src.URI(a.Key), redactURL(base))
		}
		k, err := partitionKeyOf(rel[:i])
		if err != nil {
			return nil, err
		}
		if err := addPartition(parts, k, base+"/"+rel[:i]); err != nil {
			return nil, err
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: --partitioned %s holds no key=value folder with data objects", pswap.ErrBadInput, redactURL(base))
	}
	return parts, nil
}

// checkLayout checks the partition folders against each other (the same
// columns, in the same order) and against the table's layout when it has
// one (<table>/_pswap/table.json), before anything is committed.
func checkLayout(ctx context.Context, t *pswap.Table, keys []string) error {
	cols := func(k string) string {
		var names []string
		for _, seg := range strings.Split(k, "/") {
			n, _, _ := strings.Cut(seg, "=")
			names = append(names, n)
		}
		return strings.Join(names, "/")
	}
	for _, k := range keys[1:] {
		if cols(k) != cols(keys[0]) {
			return fmt.Errorf("%w: partition folders %s and %s have different columns", pswap.ErrBadInput, keys[0], k)
		}
	}
	schema, err := t.Schema(ctx)
	if errors.Is(err, pswap.ErrNotFound) {
		// No table document yet: the committed partitions show the layout.
		existing, err := t.Partitions(ctx, "")
		if err != nil {
			return err
		}
		if len(existing) > 0 && cols(existing[0]) != cols(keys[0]) {
			return fmt.Errorf("%w: partition folder %s does not fit the table's layout (it has partitions such as %s)", pswap.ErrBadInput, keys[0], existing[0])
		}
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := schema.CheckKey(k); err != nil {
			return fmt.Errorf("%w: partition folder %s: %w", pswap.ErrBadInput, k, err)
		}
	}
	return nil
}
