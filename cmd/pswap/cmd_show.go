package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

func init() { registerCommand(newShowCmd) }

type showCmd struct {
	*app
	sel selector
}

func newShowCmd(a *app) *cobra.Command {
	c := &showCmd{app: a}
	cmd := &cobra.Command{
		Use:   "show (--partition KEY | --interval START/END)",
		Short: "Show the current generation of a partition",
		Long: `Show the current generation of a partition: its id, sequence number, run id,
when it was committed, its rows, bytes and files, and its parent. It reads
the pointer and the manifest (two requests, no listing); --json also reads
table.json, for the generation's columns with their field ids, types and
nullability. A partition that was
never committed is an error (exit status 1).`,
		Example: `  pswap show --table s3://lake/sales --partition dt=2026-11-29
  pswap show --table ./lake/sales --interval 2026-11-29/P1D --json`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	c.sel.addFlags(cmd.Flags())
	return cmd
}

// showJSON is the --json document of show.
type showJSON struct {
	Table           string    `json:"table"`
	Partition       string    `json:"partition"`
	Generation      string    `json:"generation"`
	Seq             int64     `json:"seq"`
	RunID           string    `json:"run_id"`
	Parent          string    `json:"parent"`
	RollbackOf      string    `json:"rollback_of"`
	DataGeneration  string    `json:"data_generation"`
	CreatedAt       time.Time `json:"created_at"`
	CommittedAt     time.Time `json:"committed_at"`
	Rows            int64     `json:"rows"`
	Bytes           int64     `json:"bytes"`
	Files           int       `json:"files"`
	ContentChecksum string    `json:"content_checksum"`
	// Schema is the generation's columns as the table's metadata
	// (table.json) types them: null for a table without one (written
	// before pswap kept it); SchemaText is the manifest's textual form.
	Schema     []pswap.Column `json:"schema"`
	SchemaText string         `json:"schema_text"`
	Writer     string         `json:"writer"`
	// Views is what each view of the table reflects of this partition.
	Views []viewStateJSON `json:"views"`
}

// generationSchema returns the columns of a generation: the table's
// columns that its manifest's schema names (a generation from before a
// schema evolution lacks the columns added since), in the table's order;
// nil when the table has no table.json.
func generationSchema(schema *pswap.TableSchema, text string) []pswap.Column {
	if schema == nil {
		return nil
	}
	names := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		// Arrow's form: "    - amount: type=float64, nullable".
		if rest, ok := strings.CutPrefix(line, "    - "); ok {
			if name, _, ok := strings.Cut(rest, ": type="); ok {
				names[name] = true
			}
		}
	}
	cols := []pswap.Column{}
	for _, f := range schema.Columns {
		if len(names) == 0 || names[f.Name] {
			cols = append(cols, f)
		}
	}
	return cols
}

func (c *showCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	key, err := c.sel.one()
	if err != nil {
		return err
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		part, err := t.Partition(key)
		if err != nil {
			return err
		}
		snap, err := part.Current(ctx)
		if err != nil {
			return err
		}
		m := snap.Manifest
		current := map[string]int64{}
		if len(snap.Files) > 0 {
			current[key] = snap.Pointer.Seq
		}
		views, viewsLine := c.viewStates(ctx, t, current, key)
		doc := showJSON{Views: views,
			Table: c.tableURL(), Partition: m.Partition, Generation: m.Generation, Seq: snap.Pointer.Seq,
			RunID: m.RunID, Parent: m.Parent, RollbackOf: m.RollbackOf, DataGeneration: m.DataGen(),
			CreatedAt: m.CreatedAt.UTC(), CommittedAt: m.CommittedAt.UTC(), Rows: m.Rows, Bytes: m.Bytes,
			Files: len(m.Files), ContentChecksum: m.ContentChecksum, SchemaText: m.Schema, Writer: m.Writer,
		}
		if c.json {
			schema, err := t.Schema(ctx)
			switch {
			case errors.Is(err, pswap.ErrCorrupt):
				// The partition is still shown: the damage is table.json's.
				fmt.Fprintf(c.stderr, "pswap: warning: the table's schema cannot be read (schema is null): %v\n", err)
			case err != nil && !errors.Is(err, pswap.ErrNotFound):
				return err
			}
			doc.Schema = generationSchema(schema, m.Schema)
			return printJSON(c.stdout, doc)
		}
		tw := newTable(c.stdout)
		row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
		row("table", doc.Table)
		row("partition", doc.Partition)
		row("generation", doc.Generation)
		row("seq", fmt.Sprint(doc.Seq))
		row("run id", orDash(doc.RunID))
		row("committed", timeText(doc.CommittedAt))
		row("created", timeText(doc.CreatedAt))
		row("rows", fmt.Sprint(doc.Rows))
		row("bytes", fmt.Sprintf("%d (%s)", doc.Bytes, humanBytes(doc.Bytes)))
		row("files", fmt.Sprint(doc.Files))
		row("parent", orDash(doc.Parent))
		if doc.RollbackOf != "" {
			row("rollback of", doc.RollbackOf)
		}
		row("checksum", doc.ContentChecksum)
		row("writer", doc.Writer)
		if viewsLine != "" {
			row("views", strings.TrimPrefix(viewsLine, "views: "))
		}
		return tw.Flush()
	})
}
