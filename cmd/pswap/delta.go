package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

// envDelta turns publishing the Delta Lake log on when "1", "true", "yes"
// or "on" (the default of --delta).
const envDelta = "PSWAP_DELTA"

// addDeltaFlag adds --delta to commit, rollback and publish.
func addDeltaFlag(a *app, cmd *cobra.Command) {
	def := false
	switch strings.ToLower(strings.TrimSpace(a.getenv(envDelta))) {
	case "1", "true", "yes", "on":
		def = true
	}
	cmd.Flags().BoolVar(&a.delta, "delta", def, "also publish the table's Delta Lake log (_delta_log/) ($"+envDelta+"=1 sets the default to true)")
}

// deltaJSON are the fields of a command's --json document that report the
// Delta publish (absent without --delta).
type deltaJSON struct {
	DeltaPublished    *bool  `json:"delta_published,omitempty"`
	DeltaVersion      *int64 `json:"delta_version,omitempty"`
	DeltaPublishError string `json:"delta_publish_error,omitempty"`
}

func deltaDoc(p *pswap.DeltaPublication) deltaJSON {
	if p == nil {
		return deltaJSON{}
	}
	d := deltaJSON{DeltaPublished: &p.Published}
	if p.Version >= 0 {
		d.DeltaVersion = &p.Version
	}
	if p.Err != nil {
		d.DeltaPublishError = p.Err.Error()
	}
	return d
}

// publishDeltaAfter publishes a commit or rollback's Delta version when
// --delta is on (nil otherwise). It never fails the command: a failure is
// a warning, and the JSON says delta_published=false.
func (a *app) publishDeltaAfter(ctx context.Context, part *pswap.Partition, res pswap.Result, w *pswap.Writer) *pswap.DeltaPublication {
	if !a.delta {
		return nil
	}
	var pub pswap.DeltaPublication
	if w != nil {
		pub = w.PublishDelta(ctx, pswap.DeltaOptions{})
	} else {
		pub = part.PublishDelta(ctx, res, pswap.DeltaOptions{})
	}
	if pub.Err != nil {
		fmt.Fprintf(a.stderr, "pswap: warning: the commit stands, but the Delta log was not published: %s\nhint: run 'pswap publish --delta' to bring it up to date\n", pub.Err)
	}
	return &pub
}

// publishDeltaTable reconciles the whole table's Delta log (publish,
// commit --partitioned) when --delta is on.
func (a *app) publishDeltaTable(ctx context.Context, t *pswap.Table) (*pswap.DeltaPublication, pswap.DeltaResult) {
	if !a.delta {
		return nil, pswap.DeltaResult{Version: -1}
	}
	r, err := t.PublishDelta(ctx, pswap.DeltaOptions{})
	pub := &pswap.DeltaPublication{Published: err == nil && r.Version >= 0, Version: r.Version, Rebases: r.Rebases, Checkpoint: r.Checkpoint, Err: err}
	if err != nil {
		fmt.Fprintf(a.stderr, "pswap: warning: the Delta log was not published: %s\n", err)
	}
	return pub, r
}

// deltaLine is the text output's line for a Delta publish ("" for none).
func deltaLine(p *pswap.DeltaPublication) string {
	if p == nil || !p.Published {
		return ""
	}
	return fmt.Sprintf("Delta log: version %d", p.Version)
}
