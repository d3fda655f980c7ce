package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/swap"
)

func init() { registerCommand(newStatusCmd) }

type statusCmd struct {
	*app
	from, to        string
	interval        string
	grain, layout   string
	requireComplete bool
	missingOnly     bool
}

func newStatusCmd(a *app) *cobra.Command {
	c := &statusCmd{app: a}
	cmd := &cobra.Command{
		Use:   "status --from START --to END [--grain day|hour|month] [--layout ...]",
		Short: "Which partitions of a date range are present or missing (did every day load?)",
		Long: `Check every partition of a time range: present (with its last commit time,
generation, rows and run id) or missing. The range is half-open like every
interval: --from is included, --to is not, so --from 2026-11-01 --to 2026-12-01
is November. Times are dates or months (midnight UTC: 2026-11 is
2026-11-01) or RFC 3339 times with an offset. The partitions are the
table's (its layout from table.json); --grain and --layout are for tables
written before pswap kept one.
One pointer read per partition and one of table.json; nothing is listed.

With --require-complete the exit status is 1 when any partition is missing
(or has corrupt metadata): a one-line audit for cron or CI. --missing prints
only the missing keys, one per line, for backfill loops.`,
		Example: `  # Did every day of November load?
  pswap status --table s3://lake/sales --from 2026-11-01 --to 2026-12-01 --require-complete

  # Hourly partitions of one day, as JSON
  pswap status --table s3://lake/events --from 2026-11-29 --to 2026-11-30 --grain hour --json

  # Backfill the gaps
  for key in $(pswap status --table ./lake/sales --from 2026-11-01 --to 2026-12-01 --missing); do
      echo "missing: $key"
  done`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	fl := cmd.Flags()
	fl.StringVar(&c.from, "from", "", "start of the range (included): 2026-11-01 or 2026-11-01T00:00:00Z")
	fl.StringVar(&c.to, "to", "", "end of the range (excluded)")
	fl.StringVarP(&c.interval, "interval", "i", "", "the range as one ISO 8601 interval instead of --from/--to (2026-11-01/P1M)")
	fl.StringVar(&c.grain, "grain", "", "partition grain: hour, day or month (default: the table's, else day, or the one --layout implies)")
	fl.StringVar(&c.layout, "layout", "", `partition layout: a grain name or columns such as "year=2006/month=01/day=02" (default: the table's, else dt=2006-01-02)`)
	fl.BoolVar(&c.requireComplete, "require-complete", false, "exit with status 1 if any partition is missing")
	fl.BoolVar(&c.missingOnly, "missing", false, "print only the keys of missing partitions, one per line")
	return cmd
}

// statusEntry is one partition in the --json document of status.
type statusEntry struct {
	Partition   string     `json:"partition"`
	Start       time.Time  `json:"start"`
	End         time.Time  `json:"end"`
	State       string     `json:"state"` // present, missing or corrupt
	Present     bool       `json:"present"`
	Generation  string     `json:"generation"`
	Seq         int64      `json:"seq"`
	RunID       string     `json:"run_id"`
	Rows        int64      `json:"rows"`
	CommittedAt *time.Time `json:"committed_at"`
	Error       string     `json:"error,omitempty"`
}

// statusJSON is the --json document of status.
type statusJSON struct {
	Table    string `json:"table"`
	Interval string `json:"interval"`
	Grain    string `json:"grain"`
	Layout   string `json:"layout"`
	// TimeZone is the table's time zone ("" for UTC): its days begin at
	// local midnight, and a date in --from/--to is a local day.
	TimeZone   string        `json:"time_zone,omitempty"`
	Expected   int           `json:"expected"`
	Present    int           `json:"present"`
	Missing    int           `json:"missing"`
	Corrupt    int           `json:"corrupt"`
	Complete   bool          `json:"complete"`
	Partitions []statusEntry `json:"partitions"`
	// Views is what each view of the table reflects of these partitions.
	Views []viewStateJSON `json:"views"`

	viewsLine string
}

// rangeInterval returns the range of --from/--to or --interval, parsed in
// the layout's time zone (a date is the table's local day).
func (c *statusCmd) rangeInterval(l partition.Layout) (partition.Interval, error) {
	switch {
	case c.interval != "" && (c.from != "" || c.to != ""):
		return partition.Interval{}, usagef("give --from/--to or --interval, not both")
	case c.interval != "":
		return l.ParseInterval(strings.TrimSpace(c.interval))
	case c.from == "" || c.to == "":
		return partition.Interval{}, usagef("status needs --from START and --to END (or --interval START/END)")
	case strings.Contains(c.from, "/") || strings.Contains(c.to, "/"):
		return partition.Interval{}, usagef("--from and --to take one time each")
	}
	return l.ParseInterval(strings.TrimSpace(c.from) + "/" + strings.TrimSpace(c.to))
}

func (c *statusCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	if _, err := c.rangeInterval(partition.Layout{}); err != nil {
		return err // refused before the table is read
	}
	l, err := parseLayout(c.grain, c.layout)
	if err != nil {
		return err
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		l, err := c.tableLayout(ctx, t, l)
		if err != nil {
			return err
		}
		iv, err := c.rangeInterval(l) // in the table's time zone
		if err != nil {
			return err
		}
		keys, err := l.Keys(iv)
		if err != nil {
			return err
		}
		entries, err := mapOrdered(ctx, keys, readConcurrency, func(ctx context.Context, k partition.Key) (statusEntry, error) {
			return statusOf(ctx, t, l, k)
		})
		if err != nil {
			return err
		}
		doc := statusJSON{Table: c.tableURL(), Interval: iv.String(), Grain: l.Grain.String(), Layout: l.String(), TimeZone: l.Zone,
			Expected: len(entries), Partitions: entries}
		var missing []string
		for _, e := range entries {
			switch e.State {
			case "present":
				doc.Present++
			case "missing":
				doc.Missing++
				missing = append(missing, e.Partition)
			default:
				doc.Corrupt++
				missing = append(missing, e.Partition)
			}
		}
		doc.Complete = doc.Present == doc.Expected
		if doc.Present == 0 && doc.Corrupt == 0 {
			if err := c.checkTable(ctx, t); err != nil {
				return err
			}
		}
		current := map[string]int64{}
		for _, e := range entries {
			if e.Present && e.Rows > 0 {
				current[e.Partition] = e.Seq
			}
		}
		doc.Views, doc.viewsLine = c.viewStates(ctx, t, current, "")
		switch {
		case c.json:
			err = printJSON(c.stdout, doc)
		case c.missingOnly:
			for _, k := range missing {
				fmt.Fprintln(c.stdout, k)
			}
		default:
			err = c.printHuman(doc)
		}
		if err != nil {
			return err
		}
		if c.requireComplete && !doc.Complete {
			err := fmt.Errorf("%d of %d partition(s) of %s not present: %s",
				len(missing), doc.Expected, doc.Interval, abbreviate(missing, 10))
			if cerr := corruptError(corruptOf(entries)); cerr != nil {
				// The corrupt ones count as gaps; say what is wrong with them.
				err = fmt.Errorf("%w; %w", err, cerr)
			}
			return &exitError{exitFailure, err}
		}
		return corruptError(corruptOf(entries))
	})
}

// tableLayout returns the layout status checks: the table's own (from its
// table.json) when neither --grain nor --layout is given, else the one
// given, which must then be the table's: a finer grain would list partitions
// the table can never have (96 "missing" quarter hours of a daily table),
// a coarser one none of those it has. A table without a time layout in a
// table.json (written before pswap kept one, or with other partition
// columns) takes the one given, or the default.
func (c *statusCmd) tableLayout(ctx context.Context, t *pswap.Table, given partition.Layout) (partition.Layout, error) {
	schema, err := t.Schema(ctx)
	switch {
	case errors.Is(err, pswap.ErrNotFound):
		return given, nil
	case err != nil:
		return partition.Layout{}, err
	}
	tl := schema.TimeLayout
	if tl == nil {
		return given, nil
	}
	if c.grain == "" && c.layout == "" {
		return *tl, nil
	}
	if given.String() != tl.String() {
		what := "--layout " + c.layout
		if c.layout == "" {
			what = "--grain " + c.grain
		}
		return partition.Layout{}, usagef("%s does not fit the table, whose partitions are %s (%s grain): "+
			"drop --grain and --layout to use the table's", what, tl, tl.Grain)
	}
	given.Zone = tl.Zone
	return given, nil
}

// corruptOf returns the entries whose pointer cannot be read.
func corruptOf(entries []statusEntry) []partitionJSON {
	var bad []partitionJSON
	for _, e := range entries {
		if e.State == stateCorrupt {
			bad = append(bad, partitionJSON{Partition: e.Partition, Error: e.Error})
		}
	}
	return bad
}

// statusOf reads one partition's pointer.
func statusOf(ctx context.Context, t *pswap.Table, l partition.Layout, k partition.Key) (statusEntry, error) {
	iv, err := l.Interval(k)
	if err != nil {
		return statusEntry{}, err
	}
	e := statusEntry{Partition: k.String(), Start: iv.Start, End: iv.End}
	b, err := swap.ReadPointer(ctx, t.Store(), e.Partition)
	switch {
	case errors.Is(err, pswap.ErrNoData):
		e.State = stateMissing
		return e, nil
	case errors.Is(err, pswap.ErrCorrupt):
		e.State, e.Error = stateCorrupt, err.Error()
		return e, nil
	case err != nil:
		return e, err
	}
	p := b.Pointer
	at := p.CommittedAt.UTC()
	e.State, e.Present = statePresent, true
	e.Generation, e.Seq, e.RunID, e.Rows, e.CommittedAt = p.Generation, p.Seq, p.RunID, p.Rows, &at
	return e, nil
}

func (c *statusCmd) printHuman(doc statusJSON) error {
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "PARTITION\tSTATE\tCOMMITTED\tROWS\tGENERATION\tRUN ID")
	for _, e := range doc.Partitions {
		if !e.Present {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\n", e.Partition, strings.ToUpper(e.State))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", e.Partition, e.State, timeText(*e.CommittedAt), e.Rows,
			e.Generation, orDash(e.RunID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	summary := fmt.Sprintf("%d of %d partitions present (%s, %s)", doc.Present, doc.Expected, doc.Interval, doc.Grain)
	if doc.Missing > 0 {
		summary += fmt.Sprintf("; %d missing", doc.Missing)
	}
	if doc.Corrupt > 0 {
		summary += fmt.Sprintf("; %d corrupt", doc.Corrupt)
	}
	if doc.viewsLine != "" {
		summary += "\n" + doc.viewsLine
	}
	_, err := fmt.Fprintln(c.stdout, summary)
	return err
}

// abbreviate joins up to n items and says how many more there are.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
