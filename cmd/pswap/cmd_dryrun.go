package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
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
	if cur != nil && checksum.Algo(cur.ContentChecksum) == checksum.RowSum {
		// As Begin does on the real table: a generation committed before
		// colsum128 compares by its own algorithm.
		p.wopts.Staging.LegacyChecksum = true
	}
	content, err := c.stageInMemory(ctx, part.Table(), p)
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

// stageInMemory converts the inputs as a commit would, into a memory store
// holding a copy of the table's metadata (so that CSV and JSON Lines are
// read with the table's types and inputs promoted as a commit does), and
// returns what a commit would stage (rows, bytes, content checksum).
func (c *commitCmd) stageInMemory(ctx context.Context, t *pswap.Table, p prepared) (manifest.Content, error) {
	mst := memstore.New()
	meta, err := tablemeta.Load(ctx, t.Store())
	switch {
	case err == nil:
		if _, _, _, err := tablemeta.Create(ctx, mst, meta); err != nil {
			return manifest.Content{}, err
		}
	case !errors.Is(err, pswap.ErrNotFound):
		return manifest.Content{}, err
	}
	mem := pswap.NewTable(mst)
	mpart, err := mem.Partition(p.key)
	if err != nil {
		return manifest.Content{}, err
	}
	mw, err := mpart.Begin(ctx, p.wopts)
	if err != nil {
		return manifest.Content{}, err
	}
	if err := stageInputs(ctx, mw, p, c.stdin, c.newProgress(p.inputs, "reading")); err != nil {
		return manifest.Content{}, err
	}
	_, content, err := mw.Stage(ctx)
	return content, err
}

// warnRetryDiffers says on stderr when a retry of a run that already
// committed (the same-run no-op) was given other input than what that run
// committed: the no-op keeps the run's rows, which is right for a retry
// and wrong for a clear meant to pick up fixed upstream data. It reads the
// run's manifest (found in the pointer's history) and converts the inputs
// in memory; it never changes the outcome, and a failure to tell is
// silent.
func (c *commitCmd) warnRetryDiffers(ctx context.Context, part *pswap.Partition, p prepared) {
	if len(p.inputs) == 0 || p.wopts.Commit.RunID == "" {
		return
	}
	base, err := swap.ReadPointer(ctx, part.Table().Store(), p.key)
	if err != nil || base.Pointer == nil {
		return
	}
	var gen string
	var rows int64
	for _, h := range base.Pointer.History {
		if h.RunID == p.wopts.Commit.RunID {
			gen, rows = h.Generation, h.Rows
			break
		}
	}
	if gen == "" {
		return
	}
	m, err := swap.ReadManifest(ctx, part.Table().Store(), p.key, gen)
	if err != nil && !errors.Is(err, pswap.ErrNotFound) {
		return
	}
	if m != nil && checksum.Algo(m.ContentChecksum) == checksum.RowSum {
		p.wopts.Staging.LegacyChecksum = true
	}
	content, err := c.stageInMemory(ctx, part.Table(), p)
	if err != nil {
		return
	}
	same := content.Rows == rows
	if m != nil && checksum.Algo(m.ContentChecksum) == checksum.Algo(content.ContentChecksum) ||
		m != nil && len(content.Equivalent) > 0 {
		same = content.SameContent(m.ContentChecksum, m.Rows)
	}
	if !same {
		fmt.Fprintf(c.stderr, "pswap: warning: run %q already committed %s (generation %s, %s), and its input now differs (%s): "+
			"this retry is a no-op that keeps what the run committed; to commit the new input pass --force (or use a new --run-id)\n",
			p.wopts.Commit.RunID, p.key, gen, plural(rows, "row"), plural(content.Rows, "row"))
	}
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
