package main

import (
	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
)

// attemptFlags are the values of --run-id, --job, --task and
// --logical-date, the flags that name an attempt in its record and the
// audit (commit and stage take them alike).
type attemptFlags struct {
	runID, job, task, logicalDate string
}

// resolveAttempt resolves the attempt flags into o: --run-id (default
// $PSWAP_RUN_ID, else Airflow's dag_id/run_id), --job, --task and
// --logical-date (default Airflow's or Dagster's environment), each
// checked as a run id is.
func resolveAttempt(cmd *cobra.Command, getenv func(string) string, f attemptFlags, o *pswap.CommitOptions) error {
	o.RunID = f.runID
	if !cmd.Flags().Changed("run-id") {
		o.RunID = defaultRunID(getenv)
	}
	if err := manifest.ValidateRunID(o.RunID); err != nil {
		return usagef("--run-id: %w", err)
	}
	o.Identity = pswap.IdentityFromEnv(getenv)
	for _, id := range []struct {
		name string
		val  string
		dst  *string
	}{{"job", f.job, &o.Identity.Job}, {"task", f.task, &o.Identity.Task}, {"logical-date", f.logicalDate, &o.Identity.LogicalDate}} {
		if cmd.Flags().Changed(id.name) {
			*id.dst = id.val
		}
		if err := manifest.ValidateRunID(*id.dst); err != nil {
			return usagef("--%s: %w", id.name, err)
		}
	}
	return nil
}
