package main

import (
	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
)

func init() { registerCommand(newRollbackCmd) }

type rollbackCmd struct {
	*app
	sel     selector
	to      string
	runID   string
	publish bool
}

func newRollbackCmd(a *app) *cobra.Command {
	c := &rollbackCmd{app: a}
	cmd := &cobra.Command{
		Use:   "rollback (--partition KEY | --interval START/END) --to GEN",
		Short: "Make an earlier generation of a partition current again",
		Long: `Make an earlier generation of a partition current again. The rollback is
itself a new generation (recorded in history with "rollback to GEN") that
reuses the old generation's files, swapped in with the same conditional PUT
as a commit: it fails with exit status 3 if another run commits the
partition meanwhile. The old generation's files must still exist (not
garbage-collected). Rolling back to the current generation is a no-op.`,
		Example: `  pswap history --table s3://lake/sales --partition dt=2026-11-29
  pswap rollback --table s3://lake/sales --partition dt=2026-11-29 --to 0193a1b2-...`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	c.sel.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&c.to, "to", "", "the generation to restore (see 'pswap history')")
	cmd.Flags().StringVar(&c.runID, "run-id", "", "run id recorded in the rollback's manifest")
	addPublishFlag(a, cmd, &c.publish)
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func (c *rollbackCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	key, err := c.sel.one()
	if err != nil {
		return err
	}
	if err := manifest.ValidateGenerationID(c.to); err != nil {
		return usagef("--to: %w", err)
	}
	if err := manifest.ValidateRunID(c.runID); err != nil {
		return usagef("--run-id: %w", err)
	}
	// The identity of the rollback's attempt record: Airflow's or
	// Dagster's environment, as a commit's.
	o := pswap.CommitOptions{RunID: c.runID, Identity: pswap.IdentityFromEnv(c.getenv)}
	c.retryOptions(&o) // before opening the table: the SDK then retries nothing
	return c.withTable(ctx, func(t *pswap.Table) error {
		part, err := t.Partition(key)
		if err != nil {
			return err
		}
		// The publish's first reads overlap with the rollback's requests.
		pf := prefetchPublish(ctx, c.publish, t, part)
		res, err := part.Rollback(ctx, c.to, o)
		if err != nil {
			pf.Stop()
			return err
		}
		return c.printResult(res, "rolled back", c.publishAfter(ctx, c.publish, part, res, nil, pf))
	})
}
