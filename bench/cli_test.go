package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/bench/internal/link"
)

// commitFile compares committing an existing Parquet file (DuckDB's file
// of the rows) with a plain upload of it: the pswap CLI against a minimal
// CLI doing one PutObject (both as processes, start-up included), the
// library (AddPath + Commit) against PutObject in process, and the two
// processes again behind a modelled link (every request body through one
// shared 100 MB/s limit, about one S3 PUT stream), where the check should
// hide behind the upload.
func (r *reporter) commitFile() {
	ctx, e := r.ctx, r.e
	r.printf("\n## 4. Committing an existing Parquet file\n")
	if r.duckFile == "" {
		if !r.needDuckDB() {
			return
		}
		r.duckFile = r.tmp + "/sales.parquet"
		if _, err := duckCopy(ctx, r.duckFile, r.rows); err != nil {
			r.t.Fatal(err)
		}
	}
	fi, err := os.Stat(r.duckFile)
	if err != nil {
		r.t.Fatal(err)
	}
	pswapBin := r.binary(envPswap, "github.com/pswap/pswap/cmd/pswap")
	putBin := r.binary(envS3Put, "github.com/pswap/pswap/bench/cmd/s3put")
	t, err := e.table(ctx, "lib")
	if err != nil {
		r.t.Fatal(err)
	}
	var cliD, putCliD, libD, putLibD, cliCPU, putCPU []float64
	var cliOut struct {
		Rows  int64 `json:"rows"`
		Files int   `json:"files"`
	}
	for round := range r.rounds {
		for _, step := range rotate(4, round) {
			part := fmt.Sprintf("dt=2026-11-29/round=%d", round)
			switch step {
			case 0:
				var out bytes.Buffer
				d, cpu, err := timeCmdCPU(ctx, &out, pswapBin, "commit", "--json", "--run-id", "",
					"--table", "s3://"+e.bucket+"/cli", "--partition", part, r.duckFile)
				if err != nil {
					r.t.Fatal(err)
				}
				cliCPU = append(cliCPU, cpu.Seconds())
				if err := json.Unmarshal(out.Bytes(), &cliOut); err != nil {
					r.t.Fatalf("pswap commit --json: %v: %s", err, out.String())
				}
				cliD = append(cliD, d.Seconds())
			case 1:
				d, cpu, err := timeCmdCPU(ctx, nil, putBin, fmt.Sprintf("s3://%s/put-cli/round=%d/sales.parquet", e.bucket, round), r.duckFile)
				if err != nil {
					r.t.Fatal(err)
				}
				putCPU = append(putCPU, cpu.Seconds())
				putCliD = append(putCliD, d.Seconds())
			case 2:
				d, err := commitPath(r, t, part, r.duckFile)
				if err != nil {
					r.t.Fatal(err)
				}
				libD = append(libD, d.Seconds())
			case 3:
				d, err := e.putFile(ctx, fmt.Sprintf("put-lib/round=%d/sales.parquet", round), r.duckFile)
				if err != nil {
					r.t.Fatal(err)
				}
				putLibD = append(putLibD, d.Seconds())
			}
		}
	}
	if cliOut.Rows != r.rows {
		r.t.Errorf("pswap commit reported %d rows, want %d", cliOut.Rows, r.rows)
	}
	// The same two processes behind a modelled link: every request body
	// through one shared limit of linkMBps (about one S3 PUT stream).
	link := newLinkProxy(r.t, os.Getenv("AWS_ENDPOINT_URL"), linkMBps*1e6)
	linkEnv := []string{"AWS_ENDPOINT_URL=" + link}
	var cliLinkD, putLinkD []float64
	for round := range r.rounds {
		for _, step := range rotate(2, round) {
			if step == 0 {
				d, _, err := timeCmdCPUEnv(ctx, linkEnv, nil, pswapBin, "commit", "--run-id", "",
					"--table", "s3://"+e.bucket+"/cli", "--partition", fmt.Sprintf("dt=2026-11-29/round=link-%d", round), r.duckFile)
				if err != nil {
					r.t.Fatal(err)
				}
				cliLinkD = append(cliLinkD, d.Seconds())
			} else {
				d, _, err := timeCmdCPUEnv(ctx, linkEnv, nil, putBin, fmt.Sprintf("s3://%s/put-link/round=%d/sales.parquet", e.bucket, round), r.duckFile)
				if err != nil {
					r.t.Fatal(err)
				}
				putLinkD = append(putLinkD, d.Seconds())
			}
		}
	}
	r.printf("\nFile: %s, %d rows, written by DuckDB.\n", mib(fi.Size()), r.rows)
	tb := &Table{Header: []string{"upload", "seconds", "ratio to plain upload (per round)", "goal", "client CPU, s"}}
	tb.Add("`pswap commit` (process)", Summarize(cliD).Format(2), Summarize(Ratios(cliD, putCliD)).Format(2), "≤ 1.25", Summarize(cliCPU).Format(2))
	tb.Add("`s3put` (process, one PutObject)", Summarize(putCliD).Format(2), "1", "", Summarize(putCPU).Format(2))
	tb.Add("library: Begin + AddPath + Commit", Summarize(libD).Format(2), Summarize(Ratios(libD, putLibD)).Format(2), "≤ 1.25", "")
	tb.Add("library: one PutObject of the file", Summarize(putLibD).Format(2), "1", "", "")
	tb.Add(fmt.Sprintf("*modelled:* `pswap commit`, one %.0f MB/s link", linkMBps), Summarize(cliLinkD).Format(2), Summarize(Ratios(cliLinkD, putLinkD)).Format(2), "", "")
	tb.Add("*modelled:* `s3put`, the same link", Summarize(putLinkD).Format(2), "1", "", "")
	r.table(tb)
}

// linkMBps is the modelled link of section 4's last rows, in MB/s.
const linkMBps = 100.0

// newLinkProxy starts a reverse proxy to the S3 endpoint upstream that
// sends every request body through one shared limit of bytesPerSec (the
// in-process form of bench/cmd/s3link) and returns its URL; it stops
// with the test.
func newLinkProxy(tb testing.TB, upstream string, bytesPerSec float64) string {
	tb.Helper()
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		tb.Fatalf("the S3 endpoint %q: %v", upstream, err)
	}
	srv := httptest.NewServer(link.Proxy(u, bytesPerSec))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// commitPath commits one local file as a new generation of part.
func commitPath(r *reporter, t *pswap.Table, part, path string) (time.Duration, error) {
	return commitPathWith(r, t, part, path, pswap.WriteOptions{})
}

// timeCmdCPU runs a command to completion and returns its wall time and
// the CPU time (user and system) the process used: on a machine shared
// with other work the wall times swing with the load, the CPU a process
// needs much less.
func timeCmdCPU(ctx context.Context, stdout io.Writer, name string, args ...string) (wall, cpu time.Duration, err error) {
	return timeCmdCPUEnv(ctx, nil, stdout, name, args...)
}

// timeCmdCPUEnv is timeCmdCPU with env (NAME=value) added to the
// process's environment.
func timeCmdCPUEnv(ctx context.Context, env []string, stdout io.Writer, name string, args ...string) (wall, cpu time.Duration, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = stdout
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if err != nil {
		return wall, 0, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, strings.TrimSpace(stderr.String()))
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}
