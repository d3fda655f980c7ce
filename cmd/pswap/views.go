package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
)

// envDelta turns the Delta view on when "1", "true", "yes" or "on" (the
// default of --delta).
const envDelta = "PSWAP_DELTA"

// addDeltaFlag adds --delta to the commands that publish.
func addDeltaFlag(a *app, cmd *cobra.Command) {
	def := false
	switch strings.ToLower(strings.TrimSpace(a.getenv(envDelta))) {
	case "1", "true", "yes", "on":
		def = true
	}
	cmd.Flags().BoolVar(&a.delta, "delta", def, "turn the table's Delta Lake log (_delta_log/) on: recorded in the table, so every later writer publishes it too ($"+envDelta+"=1 sets the default to true; 'pswap views' lists and turns views off)")
}

// enable is the views this command's flags turn on (--delta, --catalog).
func (a *app) enable() pswap.Views {
	v := pswap.Views{Delta: a.delta}
	if u := a.catalogArg(); u != "" {
		v.Catalogs = []string{u}
	}
	return v
}

// viewJSON is one view's outcome in a command's --json document.
type viewJSON struct {
	View      string `json:"view"`
	Name      string `json:"name,omitempty"` // a catalog's name and table
	Published bool   `json:"published"`
	Changed   bool   `json:"changed"`
	Version   *int64 `json:"version,omitempty"`
	// From is the version a catalog named before this command moved it
	// (changed; 0: it registered the table).
	From     *int64 `json:"from,omitempty"`
	Location string `json:"location,omitempty"`
	Error    string `json:"error,omitempty"`
	// State is "pending" when the view does not hold the commit yet: the
	// writer holding the table's publish lease writes the version that
	// does, the next after PendingAfter (the latest it had written).
	State        string `json:"state,omitempty"`
	PendingAfter *int64 `json:"pending_after,omitempty"`
}

// viewsJSON are the fields of a command's --json document that report the
// publish of each view: views (every view the table has), and for the
// Delta view the fields it had before views were the table's.
type viewsJSON struct {
	Views             []viewJSON `json:"views,omitempty"`
	DeltaPublished    *bool      `json:"delta_published,omitempty"`
	DeltaVersion      *int64     `json:"delta_version,omitempty"`
	DeltaPublishError string     `json:"delta_publish_error,omitempty"`
}

func viewsDoc(vs []pswap.ViewPublication) viewsJSON {
	var d viewsJSON
	for _, v := range vs {
		j := viewJSON{View: v.View, Published: v.Published, Changed: v.Changed, Location: v.Location}
		if v.View == pswap.ViewCatalog {
			j.Name = v.Name
		}
		if v.Version >= 0 {
			j.Version = &v.Version
		}
		if v.View == pswap.ViewCatalog && v.Changed {
			j.From = &v.From
		}
		if v.Err != nil {
			j.Error = v.Err.Error()
		}
		if v.Pending {
			j.State = "pending"
			if j.Version != nil {
				j.PendingAfter = j.Version
			} else {
				zero := int64(0)
				j.PendingAfter = &zero
			}
		}
		d.Views = append(d.Views, j)
		if v.View == pswap.ViewDelta {
			d.DeltaPublished, d.DeltaVersion, d.DeltaPublishError = &j.Published, j.Version, j.Error
		}
	}
	return d
}

// viewLines are the text output's lines of the views beside Iceberg's,
// and Iceberg's when pending.
func viewLines(vs []pswap.ViewPublication) []string {
	var out []string
	for _, v := range vs {
		if v.Pending && v.View == pswap.ViewIceberg {
			after := "its next version"
			if v.Version > 0 {
				after = fmt.Sprintf("its next version after v%d", v.Version)
			}
			out = append(out, "Iceberg metadata: pending: another writer holds the table's publish lease, and "+after+" holds this commit (--wait-view waits for it)")
		}
		if !v.Published {
			continue
		}
		switch v.View {
		case pswap.ViewDelta:
			out = append(out, fmt.Sprintf("Delta log: version %d", v.Version))
		case pswap.ViewCatalog:
			out = append(out, fmt.Sprintf("catalog %s: version %d", v.Name, v.Version))
		}
	}
	return out
}

// catalogRemedy is what fixes a catalog's refusal that no publish can
// fix (catalog.ErrCatalogForeign, ErrNoNamespace, a bad URL): until then
// every publish is refused the same way.
func catalogRemedy(err error) string {
	if errors.Is(err, catalog.ErrCatalogForeign) {
		return "a publish cannot fix a name clash: drop or rename the catalog's table of that name, " +
			"or give this table another name in the catalog ('pswap views disable catalog URL', then " +
			"'pswap views enable catalog' with another table= in the URL)"
	}
	return "a publish cannot fix this: fix the catalog or its URL as the error says; the next commit or 'pswap publish' then updates the catalog"
}

// viewName names a view in messages.
func viewName(v pswap.ViewPublication) string {
	switch v.View {
	case pswap.ViewIceberg:
		return "the Iceberg metadata"
	case pswap.ViewDelta:
		return "the Delta log"
	default:
		return "the catalog " + v.Name
	}
}

// warnViews says on stderr which views a publish after a write (what:
// "commit", "commits", "merge") could not bring up to date: the write
// stands, and the next publish converges them.
func (a *app) warnViews(what string, vs []pswap.ViewPublication, recorded error) {
	iceberg := false
	for _, v := range vs {
		iceberg = iceberg || v.View == pswap.ViewIceberg && v.Published
	}
	for _, v := range vs {
		switch {
		case v.Err == nil:
		case v.View == pswap.ViewCatalog && errors.Is(v.Err, pswap.ErrBadInput):
			// A name clash, a missing namespace, a catalog that cannot be
			// opened: no publish fixes it, so say what does.
			written := ""
			if iceberg {
				written = " and the Iceberg metadata reflects it"
			}
			fmt.Fprintf(a.stderr, "pswap: warning: the %s stands%s, but %s did not take it: %s\nhint: %s\n", what, written, viewName(v), v.Err, catalogRemedy(v.Err))
		default:
			fmt.Fprintf(a.stderr, "pswap: warning: the %s stands, but %s was not published: %s\nhint: run 'pswap publish' to bring it up to date\n", what, viewName(v), v.Err)
		}
	}
	if recorded != nil {
		fmt.Fprintf(a.stderr, "pswap: warning: the table's views could not be recorded in its table.json (published all the same): %s\n", recorded)
	}
}

// publishOptions are the options of a command's publishes: the views its
// flags turn on, its catalog, retries and the prefetch pf (nil: none).
func (a *app) publishOptions(pf *pswap.Prefetch) pswap.PublishOptions {
	o := pswap.PublishOptions{Prefetch: pf, Enable: a.enable(), OpenCatalog: a.openTableCatalog, WaitForView: a.waitView, LeaseFirst: a.leaseFirst}
	if a.maxAttempts > 0 {
		o.Retries = a.maxAttempts - 1
	}
	return o
}

// recordViews turns on the views the flags name without publishing
// (--publish=false): the next publish brings them up to date.
func (a *app) recordViews(ctx context.Context, t *pswap.Table) {
	add := a.enable()
	if !add.Delta && len(add.Catalogs) == 0 {
		return
	}
	cur, err := t.Views(ctx)
	if err == nil {
		cur.Delta = cur.Delta || add.Delta
		cur.Catalogs = append(cur.Catalogs, add.Catalogs...)
		_, err = t.SetViews(ctx, cur)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "pswap: warning: the views --delta/--catalog name were not turned on: %s\n", err)
	}
}

// viewStates reads what each view of t reflects of current (each
// partition's pointer sequence number, partitions with rows) for status
// and show: the views' JSON, and one text line ("" when t has no view).
// With part (show), each view says the sequence number it reflects of
// that partition instead of the table's version. A view whose state
// cannot be read says why; it fails nothing.
func (a *app) viewStates(ctx context.Context, t *pswap.Table, current map[string]int64, part string) ([]viewStateJSON, string) {
	states, err := t.ViewStates(ctx, current, a.publishOptions(nil))
	if err != nil {
		return []viewStateJSON{{View: "?", Error: err.Error()}}, "views: unknown (" + err.Error() + ")"
	}
	out := make([]viewStateJSON, 0, len(states))
	var parts []string
	for _, s := range states {
		j := stateJSON(s)
		name := s.View
		if s.View == pswap.ViewCatalog {
			name = "catalog " + s.Name
		}
		state := "current"
		switch {
		case s.Err != nil:
			state = "unknown (" + j.Error + ")"
		case !s.Current():
			state = "behind (run 'pswap publish')"
		}
		switch {
		case part != "" && s.View != pswap.ViewCatalog:
			j.Version, j.Location = nil, ""
			if seq, ok := s.Seqs[part]; ok {
				j.Seq = &seq
				name += fmt.Sprintf(" (seq %d)", seq)
			}
		case part != "":
			j.Version, j.Location = nil, ""
		case j.Version != nil:
			name += fmt.Sprintf(" v%d", *j.Version)
		}
		out = append(out, j)
		parts = append(parts, name+" "+state)
	}
	if len(parts) == 0 {
		return out, ""
	}
	return out, "views: " + strings.Join(parts, "; ")
}

// stateJSON is a view's state in a --json document (views, status, show).
func stateJSON(s pswap.ViewState) viewStateJSON {
	j := viewStateJSON{View: s.View, Current: s.Current(), Location: s.Location, Behind: s.Behind, Lag: s.Lag}
	if s.View == pswap.ViewCatalog {
		j.Name = s.Name
	}
	if s.Version >= 0 {
		j.Version = &s.Version
	}
	if s.Err != nil {
		j.Error = s.Err.Error()
	}
	return j
}
