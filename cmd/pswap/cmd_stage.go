package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

func init() { registerCommand(newStageCmd) }

const stageLong = `Upload inputs into a new generation of a partition without committing it,
and print the generation id. 'pswap commit --staged GEN' swaps it in later
(within the grace period, 24 hours): for example, upload first, run checks on
the files, then commit. Until then readers do not see it.

Inputs are as for commit: Parquet, CSV or JSON Lines files, folders, or - for
standard input with --input-format.`

const stageExample = `  GEN=$(pswap stage --table s3://lake/sales --partition dt=2026-11-29 out/)
  # ... check the staged files ...
  pswap commit --table s3://lake/sales --partition dt=2026-11-29 --staged "$GEN"`

type stageCmd struct {
	*app
	writeFlags
}

func newStageCmd(a *app) *cobra.Command {
	c := &stageCmd{app: a}
	cmd := &cobra.Command{
		Use:     "stage (--partition KEY | --interval START/END) [flags] PATH... | -",
		Short:   "Upload files as a new generation without committing it; prints its id",
		Long:    stageLong,
		Example: stageExample,
		RunE:    runE(c.run),
	}
	c.writeFlags.add(cmd)
	return cmd
}

// stageJSON is the --json document of stage.
type stageJSON struct {
	Table           string `json:"table"`
	Partition       string `json:"partition"`
	Generation      string `json:"generation"`
	Rows            int64  `json:"rows"`
	Bytes           int64  `json:"bytes"`
	Files           int    `json:"files"`
	ContentChecksum string `json:"content_checksum"`
}

func (c *stageCmd) run(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	p, err := c.prepare(args, true)
	if err != nil {
		return err
	}
	c.retryOptions(&p.wopts.Commit)
	return c.withTable(ctx, func(t *pswap.Table) error {
		part, err := t.Partition(p.key)
		if err != nil {
			return err
		}
		w, err := part.Begin(ctx, p.wopts)
		if err != nil {
			return err
		}
		if err := stageInputs(ctx, w, p, c.stdin, c.newProgress(p.inputs, "staging")); err != nil {
			_ = w.Abort(context.WithoutCancel(ctx))
			return err
		}
		gen, content, err := w.Stage(ctx)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(c.stdout, stageJSON{
				Table: c.tableURL(), Partition: p.key, Generation: gen, Rows: content.Rows,
				Bytes: content.Bytes, Files: len(content.Files), ContentChecksum: content.ContentChecksum,
			})
		}
		// The id alone on stdout, so that GEN=$(pswap stage ...) works.
		fmt.Fprintln(c.stdout, gen)
		if isTerminal(c.stderr) {
			fmt.Fprintf(c.stderr, "staged %s: %s, %s, %s; commit it with --staged %s\n", p.key,
				plural(content.Rows, "row"), plural(int64(len(content.Files)), "file"), humanBytes(content.Bytes), gen)
		}
		return nil
	})
}
