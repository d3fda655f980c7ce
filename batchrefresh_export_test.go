package pswap

import "time"

// SetBatchRefresh sets how long a backfill's batch record goes unwritten
// while the backfill runs (audit.BatchRefresh), and returns a func that
// restores it.
func SetBatchRefresh(d time.Duration) (restore func()) {
	old := batchRefresh
	batchRefresh = d
	return func() { batchRefresh = old }
}
