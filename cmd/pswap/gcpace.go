package main

import (
	"os"
	"runtime/debug"

	"github.com/pswap/pswap"
)

// copyGCPercent is the garbage collector's target (GOGC) of a commit whose
// inputs are all local Parquet files.
const copyGCPercent = 400

// paceGCForCopies raises the garbage collector's target for a commit of
// local Parquet files only, unless GOGC is set. Such a commit copies each
// file as it is while its pages are checked: its heap is part buffers and
// the scan's page buffers, taken once and reused, and little garbage.
// Growing from a fresh process's few MB to those ~90 MB, the default target
// (100) collected at every doubling, seven times in a commit of a 75 MiB
// file, two of them with 16-40 ms of assists while the check held both
// cores; at 400 the commit spends ~0.025 CPU-s less (issue 41) for 3 MiB
// more peak RSS, since the buffers, not garbage, make the heap. Any other
// input (CSV, JSON Lines, Arrow, standard input) keeps the default; a
// Parquet file that has to be converted (Options.Conform) runs at 400 too.
func paceGCForCopies(inputs []input) {
	if len(inputs) == 0 || os.Getenv("GOGC") != "" {
		return
	}
	for _, in := range inputs {
		if in.format != pswap.FormatParquet || in.path == stdinArg {
			return
		}
	}
	debug.SetGCPercent(copyGCPercent)
}
