package pswap

import (
	"time"

	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/swap"
)

// DeltaOptions tune the Delta Lake log (<table>/_delta_log/), the view a
// table has once Views.Delta is on (PublishOptions.Delta). The zero value
// works.
type DeltaOptions struct {
	// CheckpointInterval: a Parquet checkpoint every this many versions
	// (default: the table's delta.checkpointInterval, 10 for a new log).
	CheckpointInterval int
	// FileRetention and LogRetention go into a new log's configuration
	// (delta.deletedFileRetentionDuration, default 7 days: how long a
	// removed file stays for time travel and VACUUM, which `pswap gc`
	// respects; delta.logRetentionDuration, default 30 days).
	FileRetention, LogRetention time.Duration
}

func (o DeltaOptions) lib() deltalog.Options {
	return deltalog.Options{CheckpointInterval: o.CheckpointInterval, FileRetention: o.FileRetention,
		LogRetention: o.LogRetention, EngineInfo: swap.WriterVersion}
}
