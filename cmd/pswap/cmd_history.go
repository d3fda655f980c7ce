package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

func init() { registerCommand(newHistoryCmd) }

type historyCmd struct {
	*app
	sel   selector
	limit int
}

func newHistoryCmd(a *app) *cobra.Command {
	c := &historyCmd{app: a}
	cmd := &cobra.Command{
		Use:   "history (--partition KEY | --interval START/END) [--limit N]",
		Short: "Show the generations of a partition, newest first",
		Long: `Show the generations of a partition, newest first: the current one, then
each parent it replaced, with run ids, rows and commit times. Generations
whose manifests were garbage-collected end the chain (marked collected).
Any generation still listed (and not collected) can be restored with
'pswap rollback --to GEN'.`,
		Example: `  pswap history --table s3://lake/sales --partition dt=2026-11-29
  pswap history --table ./lake/sales --partition dt=2026-11-29 --limit 5 --json`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	c.sel.addFlags(cmd.Flags())
	cmd.Flags().IntVarP(&c.limit, "limit", "n", 0, "show at most N generations (0: all)")
	return cmd
}

// entryJSON is one generation in the --json document of history.
type entryJSON struct {
	Generation  string    `json:"generation"`
	Parent      string    `json:"parent"`
	RunID       string    `json:"run_id"`
	Rows        int64     `json:"rows"`
	Bytes       int64     `json:"bytes"`
	Files       int       `json:"files"`
	CreatedAt   time.Time `json:"created_at"`
	CommittedAt time.Time `json:"committed_at"`
	RollbackOf  string    `json:"rollback_of"`
	Current     bool      `json:"current"`
	Collected   bool      `json:"collected"`
}

// historyJSON is the --json document of history.
type historyJSON struct {
	Table       string      `json:"table"`
	Partition   string      `json:"partition"`
	Generations []entryJSON `json:"generations"`
}

func (c *historyCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	if c.limit < 0 {
		return usagef("--limit must not be negative")
	}
	key, err := c.sel.one()
	if err != nil {
		return err
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		part, err := t.Partition(key)
		if err != nil {
			return err
		}
		hist, err := part.History(ctx, c.limit)
		if err != nil {
			return err
		}
		doc := historyJSON{Table: c.tableURL(), Partition: key, Generations: make([]entryJSON, len(hist))}
		for i, e := range hist {
			doc.Generations[i] = entryJSON{Generation: e.Generation, Parent: e.Parent, RunID: e.RunID,
				Rows: e.Rows, Bytes: e.Bytes, Files: e.Files, CreatedAt: e.CreatedAt.UTC(),
				CommittedAt: e.CommittedAt.UTC(), RollbackOf: e.RollbackOf, Current: e.Current, Collected: e.Collected}
		}
		if c.json {
			return printJSON(c.stdout, doc)
		}
		tw := newTable(c.stdout)
		fmt.Fprintln(tw, "GENERATION\tCOMMITTED\tROWS\tBYTES\tFILES\tRUN ID\tNOTE")
		for _, e := range doc.Generations {
			if e.Collected {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tcollected\n", e.Generation)
				continue
			}
			note := ""
			if e.Current {
				note = "current"
			}
			if e.RollbackOf != "" {
				note = joinNote(note, "rollback to "+e.RollbackOf)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\n", e.Generation, timeText(e.CommittedAt), e.Rows,
				humanBytes(e.Bytes), e.Files, orDash(e.RunID), note)
		}
		return tw.Flush()
	})
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
