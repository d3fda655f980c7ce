package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// Outcomes of commit --dry-run besides swap's same-run and identical.
const outcomeWouldCommit = "would-commit"

// dryRunJSON is the --json document of commit --dry-run.
type dryRunJSON struct {
	Table             string `json:"table"`
	Partition         string `json:"partition"`
	DryRun            bool   `json:"dry_run"`
	Outcome           string `json:"outcome"` // would-commit, same-run or identical
	Changed           bool   `json:"changed"` // whether a real commit would change the partition
	Rows              int64  `json:"rows"`
	Bytes             int64  `json:"bytes"`
	Files             int    `json:"files"`
	RunID             string `json:"run_id"`
	CurrentGeneration string `json:"current_generation"`
}

// runDry reports what commit would do, and writes nothing to the table:
// it reads the partition's pointer, converts the inputs into a memory
// store (the same staging as a commit: rows, bytes, content checksum), and
// compares. Skipped, like a real commit, when the run id already committed.
func (c *commitCmd) runDry(ctx context.Context, part *pswap.Partition, p prepared) error {
	doc := dryRunJSON{Table: c.tableURL(), Partition: p.key, DryRun: true, RunID: p.wopts.Commit.RunID}
	base, err := swap.ReadPointer(ctx, part.Table().Store(), p.key)
	if err != nil && !errors.Is(err, pswap.ErrNoData) {
		return err
	}
	cur := base.Pointer
	if cur != nil {
		doc.CurrentGeneration = cur.Generation
	}
	// The same check as Begin's (it also knows the pointer's recent run
	// ids); Begin only reads, and Abort of an empty generation deletes nothing.
	w, err := part.Begin(ctx, p.wopts)
	if err != nil {
		return err
	}
	already := w.AlreadyCommitted()
	if err := w.Abort(ctx); err != nil {
		return err
	}
	if already {
		doc.Outcome = string(swap.SameRun)
		if cur != nil {
			doc.Rows, doc.Bytes = cur.Rows, cur.Bytes
		}
		return c.printDryRun(doc)
	}
	if cur != nil && staging.ChecksumAlgo(cur.ContentChecksum) == staging.ChecksumRowSum {
		// As Begin does on the real table: a generation committed before
		// colsum128 compares by its own algorithm.
		p.wopts.Staging.LegacyChecksum = true
	}
	mem := pswap.NewTable(memstore.New())
	mpart, err := mem.Partition(p.key)
	if err != nil {
		return err
	}
	mw, err := mpart.Begin(ctx, p.wopts)
	if err != nil {
		return err
	}
	if err := stageInputs(ctx, mw, p, c.stdin, c.newProgress(p.inputs, "reading")); err != nil {
		return err
	}
	_, content, err := mw.Stage(ctx)
	if err != nil {
		return err
	}
	doc.Rows, doc.Bytes, doc.Files = content.Rows, content.Bytes, len(content.Files)
	switch {
	case cur != nil && !p.wopts.Commit.Force && content.SameContent(cur.ContentChecksum, cur.Rows):
		doc.Outcome = string(swap.Identical)
	default:
		doc.Outcome, doc.Changed = outcomeWouldCommit, true
	}
	return c.printDryRun(doc)
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
