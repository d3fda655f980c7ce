package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/swap"
)

func init() { registerCommand(newLsCmd) }

type lsCmd struct {
	*app
	prefix string
}

func newLsCmd(a *app) *cobra.Command {
	c := &lsCmd{app: a}
	cmd := &cobra.Command{
		Use:   "ls [--prefix KEYPREFIX]",
		Short: "List the committed partitions of a table",
		Long: `List the committed partitions of a table (or of the part of it whose keys
start with --prefix), each with its current generation, sequence number,
rows, bytes, commit time and run id. It lists the table's folders (one
request per 1,000 partitions, never the data files) and reads each
partition's pointer.`,
		Example: `  pswap ls --table s3://lake/sales
  pswap ls --table ./lake/sales --prefix dt=2026-11- --json`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	cmd.Flags().StringVar(&c.prefix, "prefix", "", "only partitions whose key starts with this (e.g. dt=2026-11-)")
	return cmd
}

// partitionJSON is one partition's pointer in --json documents.
type partitionJSON struct {
	Partition   string     `json:"partition"`
	State       string     `json:"state"` // present, or corrupt: its pointer cannot be read
	Generation  string     `json:"generation"`
	Seq         int64      `json:"seq"`
	RunID       string     `json:"run_id"`
	Rows        int64      `json:"rows"`
	Bytes       int64      `json:"bytes"`
	CommittedAt *time.Time `json:"committed_at"` // null when corrupt
	Error       string     `json:"error"`        // what is wrong with a corrupt one ("" otherwise)
}

// lsJSON is the --json document of ls.
type lsJSON struct {
	Table      string          `json:"table"`
	Partitions []partitionJSON `json:"partitions"`
}

func (c *lsCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	return c.withTable(ctx, func(t *pswap.Table) error {
		// The table's layout from table.json (one GET): the listing then
		// reads pointers only at the layout's depth (not one per day
		// folder of an hourly table), lists no folder of another layout,
		// and leaves out the walk for legacy partitions on a table that
		// cannot hold them (one listing of the root). One retry layer: ls
		// has no loop of its own, the SDK retries each request (up to
		// --max-attempts), so that GET and the listing's pointer reads
		// make a single attempt each.
		opts, err := swap.TableListOptionsWith(ctx, t.Store(), swap.ListOptions{MaxAttempts: 1})
		if err != nil {
			return err
		}
		listed, err := swap.ListPointersWith(ctx, t.Store(), c.prefix, opts)
		if err != nil {
			return err
		}
		if len(listed) == 0 {
			if err := c.checkTable(ctx, t); err != nil {
				return err
			}
			defer c.noteEmpty(prefixNote(c.prefix))
		}
		parts := make([]partitionJSON, 0, len(listed))
		var corrupt []partitionJSON
		for _, l := range listed {
			if l.Err != nil {
				// Damage stays where it is: the other partitions are
				// listed, and the command fails at the end.
				p := partitionJSON{Partition: l.Partition, State: stateCorrupt, Error: l.Err.Error()}
				corrupt = append(corrupt, p)
				parts = append(parts, p)
				continue
			}
			p := l.Pointer
			at := p.CommittedAt.UTC()
			parts = append(parts, partitionJSON{Partition: l.Partition, State: statePresent, Generation: p.Generation, Seq: p.Seq,
				RunID: p.RunID, Rows: p.Rows, Bytes: p.Bytes, CommittedAt: &at})
		}
		if err := c.printLs(parts); err != nil {
			return err
		}
		return corruptError(corrupt)
	})
}

func (c *lsCmd) printLs(parts []partitionJSON) error {
	if c.json {
		return printJSON(c.stdout, lsJSON{Table: c.tableURL(), Partitions: parts})
	}
	if len(parts) == 0 {
		return nil
	}
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "PARTITION\tGENERATION\tSEQ\tROWS\tBYTES\tCOMMITTED\tRUN ID")
	for _, p := range parts {
		if p.State == stateCorrupt {
			fmt.Fprintf(tw, "%s\tCORRUPT\t-\t-\t-\t-\t-\n", p.Partition)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", p.Partition, p.Generation, p.Seq, p.Rows,
			humanBytes(p.Bytes), timeText(*p.CommittedAt), orDash(p.RunID))
	}
	return tw.Flush()
}

// States of a partition in ls and status.
const (
	statePresent = "present"
	stateMissing = "missing"
	stateCorrupt = "corrupt"
)

// corruptError is the error that ends a listing which found partitions
// whose pointer cannot be read (nil when there are none): swap's one error
// for them (ErrCorruptPointer, as the audit's), exit 1, code "corrupt",
// naming each with what is wrong, and a hint on how to repair it
// (errorHint). The report was printed in full before it.
func corruptError(bad []partitionJSON) error {
	list := make([]swap.CorruptPointer, len(bad))
	for i, p := range bad {
		list[i] = swap.CorruptPointer{Partition: p.Partition, Err: errors.New(p.Error)}
	}
	return swap.CorruptPointersError(list, "every other partition was read")
}

// prefixNote qualifies "no committed partition" by a --prefix.
func prefixNote(prefix string) string {
	if prefix == "" {
		return ""
	}
	return fmt.Sprintf(" whose key starts with %q", prefix)
}
