package main

import (
	"context"
	"fmt"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/swap"
)

// dryRunJSON is the --json document of commit --dry-run.
type dryRunJSON struct {
	Table             string `json:"table"`
	Partition         string `json:"partition"`
	DryRun            bool   `json:"dry_run"`
	Outcome           string `json:"outcome"` // pswap.DryRun's: would-commit, same-run or identical
	Changed           bool   `json:"changed"` // whether a real commit would change the partition
	Rows              int64  `json:"rows"`
	Bytes             int64  `json:"bytes"`
	Files             int    `json:"files"`
	RunID             string `json:"run_id"`
	CurrentGeneration string `json:"current_generation"`
}

// runDry reports what commit would do, and writes nothing to the table
// (Partition.DryRun): it reads the partition's pointer, converts the inputs
// in memory (the same staging as a commit: rows, bytes, content checksum),
// and compares. Skipped, like a real commit, when the run id already
// committed.
func (c *commitCmd) runDry(ctx context.Context, part *pswap.Partition, p prepared) error {
	doc := dryRunJSON{Table: c.tableURL(), Partition: p.key, DryRun: true, RunID: p.wopts.Commit.RunID}
	d, err := part.DryRun(ctx, p.wopts, func(w *pswap.Writer) error {
		return stageInputs(ctx, w, p, c.stdin, c.newProgress(p.inputs, "reading"))
	})
	if err != nil {
		return err
	}
	doc.CurrentGeneration, doc.Outcome = d.Current, string(d.Outcome)
	doc.Changed = d.Outcome == pswap.WouldCommit
	doc.Rows, doc.Bytes, doc.Files = d.Rows, d.Bytes, d.Files
	if d.Outcome == swap.SameRun {
		doc.Rows, doc.Bytes = d.CurrentRows, d.CurrentBytes
	}
	return c.printDryRun(doc)
}

// warnRetryDiffers says on stderr when a retry of a run that already
// committed (the same-run no-op) was given other input than what that run
// committed: the no-op keeps the run's rows, which is right for a retry
// and wrong for a clear meant to pick up fixed upstream data. A forced dry
// run compares the inputs with the run's generation (DryRun.InputDiffers);
// it never changes the outcome, and a failure to tell is silent.
func (c *commitCmd) warnRetryDiffers(ctx context.Context, part *pswap.Partition, p prepared) {
	if len(p.inputs) == 0 || p.wopts.Commit.RunID == "" {
		return
	}
	opts := p.wopts
	opts.Commit.Force = true
	d, err := part.DryRun(ctx, opts, func(w *pswap.Writer) error {
		return stageInputs(ctx, w, p, c.stdin, c.newProgress(p.inputs, "reading"))
	})
	if err != nil || d.RunGeneration == "" || !d.InputDiffers {
		return
	}
	fmt.Fprintf(c.stderr, "pswap: warning: run %q already committed %s (generation %s, %s), and its input now differs (%s): "+
		"this retry is a no-op that keeps what the run committed; to commit the new input pass --force (or use a new --run-id)\n",
		p.wopts.Commit.RunID, p.key, d.RunGeneration, plural(d.RunRows, "row"), plural(d.Rows, "row"))
}

func (c *commitCmd) printDryRun(doc dryRunJSON) error {
	if c.json {
		return printJSON(c.stdout, doc)
	}
	facts := fmt.Sprintf("%s, %s, %s", plural(doc.Rows, "row"), plural(int64(doc.Files), "file"), humanBytes(doc.Bytes))
	var line string
	switch doc.Outcome {
	case string(swap.SameRun):
		line = fmt.Sprintf("dry run: unchanged %s: run %q already committed it (no-op); current generation %s", doc.Partition, doc.RunID, doc.CurrentGeneration)
	case string(swap.Identical):
		line = fmt.Sprintf("dry run: unchanged %s: same content as the current generation %s (no-op; --force commits anyway); %s", doc.Partition, doc.CurrentGeneration, facts)
	default:
		replaces := "the first generation"
		if doc.CurrentGeneration != "" {
			replaces = "replacing generation " + doc.CurrentGeneration
		}
		line = fmt.Sprintf("dry run: would commit %s (%s); %s; nothing was written", doc.Partition, replaces, facts)
	}
	_, err := fmt.Fprintln(c.stdout, line)
	return err
}
