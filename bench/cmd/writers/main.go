// Command writers measures concurrent writers of distinct partitions of one
// table on S3, each its own `pswap commit` process, all started at once,
// with the Iceberg publish on and with --publish=false, alternating, in the
// same run: commits per second, requests per commit (through the s3count
// proxy when -s3count is given), CPU per commit of the pswap processes, and
// whether every commit with the publish was in the view when its process
// returned (the version its --json reports holds its generation), or how
// many returned pending (the publish lease's holder writes their version)
// and the longest until a version held one, and the
// final view holds every partition (a reconcile afterwards writes nothing).
//
//	writers -pswap BIN [-s3count BIN] [-base BIN] [-lease-first] -table s3://bucket/prefix [-writers 8,32,64] [-rounds 2] [-rows 10000]
//
// S3 settings come from the standard AWS environment, as for pswap. It
// prints one line per measurement and a summary with the load average.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "writers:", err)
		os.Exit(1)
	}
}

type row struct {
	ID     int64   `parquet:"id"`
	Name   string  `parquet:"name"`
	Amount float64 `parquet:"amount"`
}

type outcome struct {
	ok      bool
	pending bool // its Iceberg view said "pending" (the publish lease's holder writes its version)
	version int
	err     string
	cpu     time.Duration
	end     time.Duration // since the start of the writers
}

type measure struct {
	mode     string
	writers  int
	publish  bool
	wall     time.Duration
	ok       int
	requests int
	cpu      time.Duration
	inView   int           // with the publish: commits whose reported version holds them
	pending  int           // with the publish: commits returned pending
	lagMax   time.Duration // the longest from a pending commit's return to the version that holds it
	lagLost  int           // pending commits no version written in the run holds
	final    bool
	versions int
	load     string
	ops      map[string]int // requests by operation
	ends     []time.Duration
	trace    string // with -trace: the writers' requests by what they touch
	// serverCPU is the CPU time the store's server spent (MINIO_PID's
	// process, when that is set; 0 otherwise).
	serverCPU time.Duration
}

// serverCPU reads the CPU time (user and system) of the process MINIO_PID
// names, 0 when it is not set or not readable (another machine's server).
func serverCPU() time.Duration {
	pid := os.Getenv("MINIO_PID")
	if pid == "" {
		return 0
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)       // utime, in clock ticks
	k, _ := strconv.ParseInt(f[12], 10, 64)       // stime
	return time.Duration(u+k) * time.Second / 100 // USER_HZ is 100 on Linux
}

func run(ctx context.Context) error {
	bin := flag.String("pswap", "", "the pswap binary")
	base := flag.String("base", "", "a baseline pswap binary (optional): also measured with the publish (and with --lease-first under -lease-first: base-lease-first), in the same rounds")
	counter := flag.String("s3count", "", "the s3count binary (optional: requests per commit)")
	table := flag.String("table", "", "s3://bucket/prefix under which each measurement makes a table")
	writersF := flag.String("writers", "8,32,64", "writers at once")
	rounds := flag.Int("rounds", 2, "rounds of each measurement")
	rows := flag.Int("rows", 10000, "rows per writer")
	verbose := flag.Bool("v", false, "print the requests by operation")
	leaseFirst := flag.Bool("lease-first", false, "also measure -pswap with the publish and --lease-first, in the same rounds")
	traceF := flag.String("trace", "", "write every request to this file (a logging proxy in front of the store) and print its counts by what it touches")
	only := flag.String("modes", "", "measure only these modes with the publish (comma-separated: publish, lease-first, base-publish, base-lease-first; no-publish is always measured)")
	flag.Parse()
	if *bin == "" || *table == "" {
		return fmt.Errorf("usage: writers -pswap BIN -table s3://bucket/prefix [-s3count BIN] [-writers 8,32,64] [-rounds 2] [-rows 10000]")
	}
	dir, err := os.MkdirTemp("", "writers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, "in.parquet")
	rs := make([]row, *rows)
	for i := range rs {
		rs[i] = row{ID: int64(i), Name: "name-" + strconv.Itoa(i%977), Amount: float64(i) / 7}
	}
	if err := parquet.WriteFile(input, rs); err != nil {
		return err
	}
	env := os.Environ()
	if *counter != "" {
		endpoint, stop, err := startCounter(*counter)
		if err != nil {
			return err
		}
		defer stop()
		env = append(env, "AWS_ENDPOINT_URL="+endpoint)
		countURL = endpoint + "/-/counts"
	}
	var tr *tracer
	if *traceF != "" {
		upstream := os.Getenv("AWS_ENDPOINT_URL")
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "AWS_ENDPOINT_URL="); ok {
				upstream = v // the counter's, when one runs
			}
		}
		var endpoint string
		if tr, endpoint, err = startTracer(*traceF, upstream); err != nil {
			return err
		}
		defer tr.close()
		env = append(env, "AWS_ENDPOINT_URL="+endpoint)
	}
	var ns []int
	for _, s := range strings.Split(*writersF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-writers %q", *writersF)
		}
		ns = append(ns, n)
	}
	var all []measure
	perGroup := 0 // measurements of one round and writer count
	for r := range *rounds {
		for _, n := range ns {
			type mode struct {
				name  string
				bin   string
				pub   bool
				extra []string
			}
			order := []mode{{"publish", *bin, true, nil}, {"no-publish", *bin, false, nil}}
			if *leaseFirst {
				order = append(order, mode{"lease-first", *bin, true, []string{"--lease-first"}})
			}
			if *base != "" {
				order = append(order, mode{"base-publish", *base, true, nil})
				if *leaseFirst {
					order = append(order, mode{"base-lease-first", *base, true, []string{"--lease-first"}})
				}
			}
			if *only != "" {
				keep := strings.Split(*only, ",")
				order = slices.DeleteFunc(order, func(m mode) bool { return m.name != "no-publish" && !slices.Contains(keep, m.name) })
			}
			perGroup = len(order)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, md := range order {
				pub := md.pub
				t := fmt.Sprintf("%s/r%d-w%d-%s-%d", strings.TrimSuffix(*table, "/"), r, n, md.name, time.Now().UnixNano())
				tr.begin(fmt.Sprintf("r%d-w%d-%s-seed", r, n, md.name))
				m, err := measureOnce(ctx, md.bin, env, t, input, n, pub, md.extra, tr)
				if err != nil {
					return err
				}
				m.mode = md.name
				all = append(all, m)
				fmt.Printf("round %d writers %2d %-12s wall %6.2f s  commits/s %6.2f  ok %d/%d  req/commit %5.1f  cpu/commit %.3f s  server cpu/commit %.3f s  in view on return %d  pending %d (max lag %.1f s, never in a version %d)  final exact %v  versions %d  load %s\n",
					r, n, md.name, m.wall.Seconds(), float64(m.ok)/m.wall.Seconds(), m.ok, n, float64(m.requests)/float64(n), m.cpu.Seconds()/float64(n), m.serverCPU.Seconds()/float64(n), m.inView, m.pending, m.lagMax.Seconds(), m.lagLost, m.final, m.versions, m.load)
				if *verbose {
					fmt.Printf("    requests by operation: %v\n", m.ops)
					slices.Sort(m.ends)
					k := len(m.ends)
					fmt.Printf("    writers ended at (s): min %.2f p25 %.2f p50 %.2f p75 %.2f p90 %.2f max %.2f\n", m.ends[0].Seconds(), m.ends[k/4].Seconds(), m.ends[k/2].Seconds(), m.ends[3*k/4].Seconds(), m.ends[9*k/10].Seconds(), m.ends[k-1].Seconds())
				}
				if tr != nil {
					fmt.Printf("    requests of the writers by what they touch:\n%s", m.trace)
				}
			}
		}
	}
	fmt.Println("\nratio to --publish=false of the same round (commits/s):")
	k := perGroup
	rate := func(m measure) float64 { return float64(m.ok) / m.wall.Seconds() }
	for i := 0; i+k <= len(all); i += k {
		var nopub measure
		for _, m := range all[i : i+k] {
			if m.mode == "no-publish" {
				nopub = m
			}
		}
		for _, m := range all[i : i+k] {
			if m.mode != "no-publish" {
				fmt.Printf("  writers %2d %-12s %6.2f / %6.2f = %.2fx  (load %s)\n", m.writers, m.mode, rate(m), rate(nopub), rate(m)/rate(nopub), m.load)
			}
		}
	}
	return nil
}

var countURL string

type countDoc struct {
	Requests int            `json:"requests"`
	Ops      map[string]int `json:"ops"`
}

func countsDoc() countDoc {
	var c countDoc
	if countURL == "" {
		return c
	}
	resp, err := http.Get(countURL)
	if err != nil {
		return c
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&c)
	return c
}

func startCounter(bin string) (string, func(), error) {
	cmd := exec.Command(bin, "-upstream", os.Getenv("AWS_ENDPOINT_URL"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return "", nil, fmt.Errorf("s3count: %w", err)
	}
	return strings.TrimSpace(line), func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }, nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return f[0]
}

func measureOnce(ctx context.Context, bin string, env []string, table, input string, n int, pub bool, extra []string, tr *tracer) (measure, error) {
	m := measure{writers: n, publish: pub, load: loadavg()}
	// The table exists and is published before the writers start.
	seed := exec.CommandContext(ctx, bin, "commit", "--table", table, "--partition", "dt=2026-09-30", "--run-id", "seed", input)
	seed.Env = env
	if out, err := seed.CombinedOutput(); err != nil {
		return m, fmt.Errorf("seed %s: %v: %s", table, err, out)
	}
	st, err := s3store.Open(ctx, table, s3store.Options{})
	if err != nil {
		return m, err
	}
	_, before, err := lakehouse.Latest(ctx, st)
	if err != nil {
		return m, err
	}
	tr.begin(strings.TrimSuffix(tr.current(), "-seed"))
	c0 := countsDoc()
	s0 := serverCPU()
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		dt := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02")
		args := []string{"commit", "--table", table, "--partition", "dt=" + dt, "--run-id", "c-" + dt, "--json", input}
		if !pub {
			args = append(args, "--publish=false")
		}
		args = append(args, extra...)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			return m, err
		}
		wg.Go(func() {
			err := cmd.Wait()
			o := outcome{ok: err == nil, end: time.Since(start)}
			if cmd.ProcessState != nil {
				o.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			if err != nil {
				o.err = strings.TrimSpace(stderr.String())
			}
			o.version = reportedVersion(stdout.Bytes())
			o.pending = bytes.Contains(stdout.Bytes(), []byte(`"state": "pending"`))
			outs[i] = o
		})
	}
	wg.Wait()
	m.wall = time.Since(start)
	c1 := countsDoc()
	m.serverCPU = serverCPU() - s0
	m.trace = tr.summary()
	tr.begin("after")
	m.requests = c1.Requests - c0.Requests
	m.ops = map[string]int{}
	for op, k := range c1.Ops {
		if d := k - c0.Ops[op]; d > 0 {
			m.ops[op] = d
		}
	}
	for i, o := range outs {
		m.ends = append(m.ends, o.end)
		m.cpu += o.cpu
		if o.ok {
			m.ok++
		} else {
			fmt.Fprintf(os.Stderr, "writer %d failed: %s\n", i, o.err)
		}
		if pub && o.ok && o.version > 0 {
			dt := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02")
			if holds(ctx, st, o.version, "dt="+dt) {
				m.inView++
			}
		}
	}
	_, after, err := lakehouse.Latest(ctx, st)
	if err != nil {
		return m, err
	}
	m.versions = after - before
	// A pending commit's lag: from its process's return to the store's
	// time of the first version that holds it (MinIO on this machine: one
	// clock; Last-Modified in whole seconds).
	for i, o := range outs {
		if !pub || !o.ok || !o.pending {
			continue
		}
		m.pending++
		dt := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02")
		found := false
		for v := before + 1; v <= after; v++ {
			if holds(ctx, st, v, "dt="+dt) {
				if a, err := st.Stat(ctx, lakehouse.MetadataKey(v)); err == nil {
					m.lagMax = max(m.lagMax, a.ModTime.Sub(start.Add(o.end)))
				}
				found = true
				break
			}
		}
		if !found {
			m.lagLost++
		}
	}
	if pub {
		// The view is exact when a reconcile finds nothing to write.
		r, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
		m.final = err == nil && !r.Changed && r.Partitions == n+1
	} else {
		m.final = true
	}
	return m, nil
}

// reportedVersion is the Iceberg version a commit's --json names (its
// metadata_location's vN.metadata.json), 0 for none.
func reportedVersion(out []byte) int {
	var doc struct {
		MetadataLocation string `json:"metadata_location"`
	}
	if json.Unmarshal(out, &doc) != nil {
		return 0
	}
	base := doc.MetadataLocation[strings.LastIndexByte(doc.MetadataLocation, '/')+1:]
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(base, "v"), ".metadata.json"))
	return n
}

// holds reports whether version v of the table's Iceberg metadata records
// partition part (each partition is committed once here: at any sequence
// number is this commit).
func holds(ctx context.Context, st store.Store, v int, part string) bool {
	_, ok, err := lakehouse.RecordedSeq(ctx, st, v, part)
	return err == nil && ok
}
