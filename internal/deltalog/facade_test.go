package deltalog_test

import (
	"context"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/store"
)

// deltaPub is what a Delta publish of one commit did.
type deltaPub struct {
	Published  bool
	Version    int64
	Checkpoint bool
	Err        error
}

// publishDelta publishes the Delta log of a commit's result alone (the
// facade publishes it with the table's other views), with the commit's
// manifest: no GET of it, as after a writer's commit.
func publishDelta(ctx context.Context, st store.Store, res pswap.Result, opts deltalog.Options) deltaPub {
	r, err := deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}, opts)
	return deltaPub{Published: err == nil, Version: r.Version, Checkpoint: r.Checkpoint, Err: err}
}
