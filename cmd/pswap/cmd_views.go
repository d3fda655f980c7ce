package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

func init() { registerCommand(newViewsCmd) }

type viewsCmd struct {
	*app
	requireCurrent bool
}

func newViewsCmd(a *app) *cobra.Command {
	c := &viewsCmd{app: a}
	cmd := &cobra.Command{
		Use:   "views [enable|disable VIEW [CATALOG-URL]]",
		Short: "List the table's views and how current they are; turn views on or off",
		Long: `A table's views are what engines read instead of the pointers: its Iceberg
metadata (iceberg, on for every table), its Delta Lake log (delta) and the
Iceberg catalogs it is registered in (catalog URL). They belong to the
table: its table.json records them, and every writer (commit, merge,
rollback, adopt, gc, a Go program) publishes every view the table has,
with no flag. A view that could not be published says so (a warning, and
"views" in --json) and the next publish converges it.

Without arguments, views lists each view with its version and whether it
reflects every partition's pointer ("current") or which partitions it
lags ("behind"); --require-current exits 1 when one is behind.

  views enable delta            turn the Delta log on and publish it now
  views enable catalog URL      register the table in a catalog (the URL is
                                recorded without a password: credentials
                                come from the environment, as for --catalog)
  views disable delta|iceberg   stop publishing that view (its files stay)
  views disable catalog URL     stop moving that catalog's entry

commit --delta and --catalog (and $PSWAP_DELTA, $PSWAP_CATALOG) turn views
on the same way.`,
		Example: `  pswap views --table s3://lake/sales
  pswap views --table s3://lake/sales enable delta
  pswap views --table s3://lake/sales enable catalog 'sql+postgres://pswap@db:5432/lake?catalog=lake&namespace=db&table=sales'
  pswap views --table s3://lake/sales --require-current --json`,
		Args: cobra.MaximumNArgs(3),
		RunE: runE(c.run),
	}
	cmd.Flags().BoolVar(&c.requireCurrent, "require-current", false, "exit 1 when a view is behind the pointers")
	return cmd
}

// viewStateJSON is one view in the --json document of views.
type viewStateJSON struct {
	View     string   `json:"view"`
	Name     string   `json:"name,omitempty"`
	Current  bool     `json:"current"`
	Version  *int64   `json:"version,omitempty"`
	Seq      *int64   `json:"seq,omitempty"` // show: the partition's pointer the view reflects
	Location string   `json:"location,omitempty"`
	Behind   []string `json:"behind,omitempty"`
	Lag      string   `json:"lag,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// viewsListJSON is the --json document of views.
type viewsListJSON struct {
	Table string `json:"table"`
	// Recorded: the table's table.json records its views (false for a
	// table written before views were recorded: the next publish does).
	Recorded bool            `json:"recorded"`
	Views    []viewStateJSON `json:"views"`
	Current  bool            `json:"current"`
}

func (c *viewsCmd) run(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	return c.withTable(ctx, func(t *pswap.Table) error {
		if len(args) > 0 {
			if err := c.change(ctx, t, args); err != nil {
				return err
			}
		}
		return c.list(ctx, t)
	})
}

// change turns a view on or off, as args say.
func (c *viewsCmd) change(ctx context.Context, t *pswap.Table, args []string) error {
	verb, view := args[0], ""
	if len(args) > 1 {
		view = args[1]
	}
	if verb != "enable" && verb != "disable" {
		return usagef("views %s: want enable or disable", verb)
	}
	var url string
	switch {
	case view == "catalog" && len(args) == 3:
		url = strings.TrimSpace(args[2])
		pub, err := pswap.PublicCatalogURL(url)
		if err != nil {
			return usagef("views %s catalog: %w", verb, err)
		}
		url = pub
	case view == "catalog":
		return usagef("views %s catalog: give the catalog's URL", verb)
	case (view == "delta" || view == "iceberg") && len(args) == 2:
	default:
		return usagef("views %s: want iceberg, delta or catalog URL", verb)
	}
	v, err := t.Views(ctx)
	if err != nil {
		return err
	}
	on := verb == "enable"
	switch view {
	case "iceberg":
		v.Iceberg = on
	case "delta":
		v.Delta = on
	case "catalog":
		cats := v.Catalogs[:0:0]
		for _, u := range v.Catalogs {
			if u != url {
				cats = append(cats, u)
			}
		}
		if on {
			cats = append(cats, url)
		}
		v.Catalogs = cats
	}
	if _, err := t.SetViews(ctx, v); err != nil {
		return err
	}
	if !on {
		return nil
	}
	// A view just turned on is published at once.
	r, err := t.Publish(ctx, c.publishOptions(nil))
	c.warnViews("change", r.Views, r.ViewsRecorded)
	if err != nil {
		return fmt.Errorf("views %s %s: recorded, but not published: %w", verb, view, err)
	}
	return nil
}

// list prints the views and their state.
func (c *viewsCmd) list(ctx context.Context, t *pswap.Table) error {
	v, err := t.Views(ctx)
	if err != nil {
		return err
	}
	states, err := t.ViewStates(ctx, nil, c.publishOptions(nil))
	if err != nil {
		return err
	}
	doc := viewsListJSON{Table: c.tableURL(), Recorded: v.Recorded, Current: true}
	for _, s := range states {
		j := stateJSON(s)
		doc.Current = doc.Current && j.Current
		doc.Views = append(doc.Views, j)
	}
	if c.json {
		if err := printJSON(c.stdout, doc); err != nil {
			return err
		}
	} else {
		c.printStates(doc)
	}
	if c.requireCurrent && !doc.Current {
		return &exitError{exitFailure, fmt.Errorf("a view of the table is behind its pointers (run 'pswap publish')")}
	}
	return nil
}

func (c *viewsCmd) printStates(doc viewsListJSON) {
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "VIEW\tSTATE\tVERSION\tDETAIL")
	for _, v := range doc.Views {
		name, state, version := v.View, "current", "-"
		if v.View == pswap.ViewCatalog {
			name = "catalog " + v.Name
		}
		if v.Version != nil {
			version = fmt.Sprint(*v.Version)
		}
		detail := v.Location
		switch {
		case v.Error != "":
			state, detail = "unknown", v.Error
		case len(v.Behind) > 0:
			state, detail = "behind", fmt.Sprintf("%s behind: %s", plural(int64(len(v.Behind)), "partition"), strings.Join(v.Behind, ", "))
		case v.Lag != "":
			state, detail = "behind", v.Lag
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, state, version, orDash(detail))
	}
	tw.Flush()
	if !doc.Recorded {
		fmt.Fprintln(c.stdout, "(the table's table.json does not record its views yet: the next publish records these)")
	}
}
