// Command libcommit commits one existing Parquet file with the library
// (Open, Begin, AddPath, Commit: the default full check, no publish) n
// times in one process, and prints each commit's wall time and the CPU
// time (user + system) the process spent on it. The first commit pays what
// a fresh process pays (fresh memory, the store client's first
// connections); the later ones run warm. Against `pswap commit`'s CPU it
// tells what the CLI process adds to the library's work.
//
//	libcommit -table s3://bucket/prefix [-n 3] [-check full|footer] FILE
//
// S3 settings come from the standard AWS environment, as for pswap.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/staging"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "libcommit:", err)
		os.Exit(1)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// minorFaults is the process's minor page faults so far: fresh memory
// touched (or file pages mapped) costs one each.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

func run(ctx context.Context) error {
	table := flag.String("table", "", "the table's URL (s3://bucket/prefix)")
	n := flag.Int("n", 3, "commits in this process")
	check := flag.String("check", "full", "the existing file's check: full or footer")
	flag.Parse()
	if *table == "" || flag.NArg() != 1 {
		return fmt.Errorf("usage: libcommit -table URL [-n N] [-check full|footer] FILE")
	}
	path := flag.Arg(0)
	wo := pswap.WriteOptions{}
	switch *check {
	case "full":
	case "footer":
		wo.Staging.Check = staging.CheckFooter
	default:
		return fmt.Errorf("-check: %q is neither full nor footer", *check)
	}
	start := cpuTime()
	t, err := pswap.Open(ctx, *table, pswap.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("open cpu %.3f\n", (cpuTime() - start).Seconds())
	for i := range *n {
		p, err := t.Partition(fmt.Sprintf("dt=2026-11-29/libcommit=%d-%d", time.Now().UnixNano(), i))
		if err != nil {
			return err
		}
		c0, w0, f0 := cpuTime(), time.Now(), minorFaults()
		w, err := p.Begin(ctx, wo)
		if err != nil {
			return err
		}
		if err := w.AddPath(ctx, path, pswap.FormatParquet); err != nil {
			_ = w.Abort(ctx)
			return err
		}
		if _, err := w.Commit(ctx); err != nil {
			return err
		}
		fmt.Printf("commit %d wall %.3f cpu %.3f faults %d\n", i, time.Since(w0).Seconds(), (cpuTime() - c0).Seconds(), minorFaults()-f0)
	}
	fmt.Printf("total cpu %.3f\n", cpuTime().Seconds())
	return nil
}
