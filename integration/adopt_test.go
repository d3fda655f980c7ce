package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/testenv"
)

// Engines writing where pswap adopts: DuckDB into a reservation, killed
// engines and killed commits, and a 90-partition backfill from DuckDB's
// PARTITION_BY output.

type reserveJSON struct {
	Generation string `json:"generation"`
	Prefix     string `json:"prefix"`
	Path       string `json:"path"`
}

func (e *tableEnv) reserve(t *testing.T, part string) reserveJSON {
	t.Helper()
	r := e.runCLI(t, "stage", "--reserve", "--table", e.url, "--partition", part, "--json")
	if r.code != 0 {
		t.Fatalf("stage --reserve: %d %s", r.code, r.stderr)
	}
	var res reserveJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Path == "" {
		t.Fatalf("stage --reserve printed %q: %v", r.stdout, err)
	}
	// The engine creates the folder, as Spark and DuckDB's PARTITION_BY do.
	if err := os.MkdirAll(res.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	return res
}

func needDuck(t *testing.T) {
	t.Helper()
	duckcheck.SkipIfUnavailable(t)
}

// rowsSQL are the rows DuckDB writes: ids lo..hi-1, with a name and a
// fractional amount, so that a read-back compares every column.
func rowsSQL(lo, hi int) string {
	return fmt.Sprintf("SELECT i::BIGINT AS id, 'name-' || i AS name, i / 8.0 AS amount FROM range(%d, %d) t(i)", lo, hi)
}

// fingerprint is DuckDB's count and order-independent hash of rows.
func fingerprint(t *testing.T, from string) string {
	t.Helper()
	rows, err := duckQuery("SELECT count(*)::VARCHAR AS n, sum(hash(id, name, amount))::VARCHAR AS h FROM " + from)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(rows[0]["n"], "/", rows[0]["h"])
}

// committedFiles are the current generation's file URIs as a DuckDB list.
func committedFiles(t *testing.T, e *tableEnv, part string) string {
	t.Helper()
	tb, err := pswap.Open(context.Background(), e.url, pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	p, _ := tb.Partition(part)
	snap, err := p.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var q []string
	for _, f := range snap.Files {
		q = append(q, duckcheck.Quote(strings.TrimPrefix(f.URI, "file://")))
	}
	return "read_parquet([" + strings.Join(q, ", ") + "])"
}

// TestDuckDBWritesIntoReservation: DuckDB COPYs into a reserved generation
// of a file:// table; commit --staged adopts the files, and DuckDB reads the
// committed rows back exactly.
func TestDuckDBWritesIntoReservation(t *testing.T) {
	t.Parallel()
	needDuck(t)
	e := newFileEnv(t)
	part := "dt=2026-09-01"
	res := e.reserve(t, part)
	for i, r := range [][2]int{{0, 5000}, {5000, 12000}} {
		if _, err := duckQuery(fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", rowsSQL(r[0], r[1]),
			duckcheck.Quote(filepath.Join(res.Path, fmt.Sprintf("part-%d.parquet", i))))); err != nil {
			t.Fatal(err)
		}
	}
	c := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--staged", res.Generation, "--json")
	if c.code != 0 {
		t.Fatalf("commit --staged: %d %s", c.code, c.stderr)
	}
	if cj := c.commit(t); !cj.Changed || cj.Rows != 12000 || cj.Generation != res.Generation {
		t.Fatalf("commit --staged: %+v", cj)
	}
	want := fingerprint(t, "("+rowsSQL(0, 12000)+")")
	if got := fingerprint(t, committedFiles(t, e, part)); got != want {
		t.Fatalf("DuckDB reads back %s, wrote %s", got, want)
	}
	if v := e.runCLI(t, "verify", "--table", e.url, "--partition", part); v.code != 0 {
		t.Fatalf("verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
}

// TestEngineKilledMidWrite: an engine died half-way through writing a
// reservation, leaving complete files and one cut short (DuckDB writes in
// place, so a killed COPY leaves a file without its footer). commit
// --staged refuses it naming that file (exit 2) and commits nothing; once
// the engine is re-run and finishes, the commit is read back whole.
func TestEngineKilledMidWrite(t *testing.T) {
	t.Parallel()
	needDuck(t)
	e := newFileEnv(t)
	part := "dt=2026-09-02"
	res := e.reserve(t, part)
	write := func(i, lo, hi int) string {
		p := filepath.Join(res.Path, fmt.Sprintf("part-%d.parquet", i))
		if _, err := duckQuery(fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", rowsSQL(lo, hi), duckcheck.Quote(p))); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(0, 0, 3000)
	write(1, 3000, 6000)
	cut := write(2, 6000, 9000)
	b, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--staged", res.Generation)
	if c.code != 2 || !strings.Contains(c.stderr, "part-2.parquet") {
		t.Fatalf("commit of a half-written reservation: %d %q", c.code, c.stderr)
	}
	if s := e.runCLI(t, "show", "--table", e.url, "--partition", part); s.code != 1 {
		t.Fatalf("something was committed: %d %s", s.code, s.stdout)
	}
	write(2, 6000, 9000) // the engine's retry finishes
	c = e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--staged", res.Generation, "--json")
	if c.code != 0 || c.commit(t).Rows != 9000 {
		t.Fatalf("commit after the engine finished: %d %s %s", c.code, c.stdout, c.stderr)
	}
	if got, want := fingerprint(t, committedFiles(t, e, part)), fingerprint(t, "("+rowsSQL(0, 9000)+")"); got != want {
		t.Fatalf("read back %s, want %s", got, want)
	}
}

// TestKilledAdoptionConverges kills `commit --staged` of adopted files at
// random moments; running it again always converges: the reservation is
// committed once, read back whole, and verify passes.
func TestKilledAdoptionConverges(t *testing.T) {
	t.Parallel()
	needDuck(t)
	e := newFileEnv(t)
	rng := newRand(t)
	rounds := scale(4, 30)
	outcomes := map[string]int{}
	for round := range rounds {
		part := fmt.Sprintf("dt=2026-10-%02d", round+1)
		res := e.reserve(t, part)
		for i := range 4 {
			lo := round*100000 + i*2000
			if _, err := duckQuery(fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", rowsSQL(lo, lo+2000),
				duckcheck.Quote(filepath.Join(res.Path, fmt.Sprintf("part-%d.parquet", i))))); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{"commit", "--table", e.url, "--partition", part, "--staged", res.Generation, "--json"}
		p := startProc(t, e.cli(t, args...))
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		p.kill()
		first := p.wait()
		again := e.runCLI(t, args...)
		if again.code != 0 {
			t.Fatalf("round %d: re-run after a kill (first exit %d): %d %s", round, first.code, again.code, again.stderr)
		}
		cj := again.commit(t)
		outcomes[fmt.Sprintf("first exit %d, re-run %s", first.code, cj.Outcome)]++
		if cj.Rows != 8000 {
			t.Fatalf("round %d: %+v", round, cj)
		}
		lo := round * 100000
		if got, want := fingerprint(t, committedFiles(t, e, part)), fingerprint(t, "("+rowsSQL(lo, lo+8000)+")"); got != want {
			t.Fatalf("round %d: read back %s, want %s", round, got, want)
		}
		if v := e.runCLI(t, "verify", "--table", e.url, "--partition", part); v.code != 0 {
			t.Fatalf("round %d: verify: %s", round, v.stdout)
		}
	}
	t.Logf("killed commits of adopted files, then re-run: %v", outcomes)
}

type partitionedJSON struct {
	Partitions []struct {
		Partition string `json:"partition"`
		Changed   bool   `json:"changed"`
		Outcome   string `json:"outcome"`
		Rows      int64  `json:"rows"`
		Exit      int    `json:"exit"`
	} `json:"partitions"`
	Committed, Unchanged, Failed, Exit int
}

// TestBackfill90Partitions: DuckDB writes 90 days with PARTITION_BY; one
// `commit --partitioned` commits them all, timed against 90 separate
// commits of the same folders; then a backfill killed midway is re-run:
// the landed partitions are no-ops and the rest commit.
func TestBackfill90Partitions(t *testing.T) {
	t.Parallel()
	needDuck(t)
	days := scale(90, 90)
	out := filepath.Join(t.TempDir(), "out")
	if _, err := duckQuery(fmt.Sprintf(`COPY (SELECT i::BIGINT AS id, 'name-' || i AS name, i / 8.0 AS amount,
		(DATE '2026-09-01' + (i %% %d)::INTEGER) AS dt FROM range(0, %d) t(i)) TO %s (FORMAT parquet, PARTITION_BY (dt))`,
		days, days*500, duckcheck.Quote(out))); err != nil {
		t.Fatal(err)
	}
	one := newFileEnv(t)
	t0 := time.Now()
	r := one.runCLI(t, "commit", "--table", one.url, "--partitioned", out, "--run-id", "backfill", "--json")
	single := time.Since(t0)
	var doc partitionedJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Committed != days {
		t.Fatalf("commit --partitioned: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The baseline, one process per partition: a sample of them unless
	// PSWAP_STRESS (each costs a process start, which -race makes slow).
	sepN := scale(15, days)
	sep := newFileEnv(t)
	t0 = time.Now()
	for d := range sepN {
		key := "dt=" + time.Date(2026, 9, 1+d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
		if r := sep.runCLI(t, "commit", "--table", sep.url, "--partition", key, "--run-id", "backfill/"+key, filepath.Join(out, key)); r.code != 0 {
			t.Fatalf("separate commit %s: %d %s", key, r.code, r.stderr)
		}
	}
	separate := time.Since(t0)
	perSep, perOne := separate/time.Duration(sepN), single/time.Duration(days)
	t.Logf("%d partitions: one commit --partitioned %v (%v a partition); %d separate commits %v (%v each, %v for %d): %.1fx",
		days, single.Round(time.Millisecond), perOne.Round(time.Microsecond), sepN, separate.Round(time.Millisecond),
		perSep.Round(time.Millisecond), (perSep * time.Duration(days)).Round(time.Millisecond), days, perSep.Seconds()/perOne.Seconds())
	key := "dt=2026-09-15"
	if got, want := fingerprint(t, committedFiles(t, one, key)), fingerprint(t, fmt.Sprintf("read_parquet(%s)", duckcheck.Quote(filepath.Join(out, key, "*.parquet")))); got != want {
		t.Fatalf("%s read back %s, want %s", key, got, want)
	}

	// Killed midway, then re-run.
	k := newFileEnv(t)
	args := []string{"commit", "--table", k.url, "--partitioned", out, "--run-id", "backfill", "--parallel", "2", "--json"}
	p := startProc(t, k.cli(t, args...))
	time.Sleep(single * 2 / 5)
	p.kill()
	p.wait()
	tb, err := pswap.Open(context.Background(), k.url, pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	landed, err := tb.Partitions(context.Background(), "")
	tb.Close()
	if err != nil {
		t.Fatal(err)
	}
	r = k.runCLI(t, args...)
	doc = partitionedJSON{}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("re-run after the kill: %d %s %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("backfill killed after %v: %d partitions had landed; the re-run: %d committed, %d unchanged (same-run no-ops)",
		(single * 2 / 5).Round(time.Millisecond), len(landed), doc.Committed, doc.Unchanged)
	if doc.Unchanged != len(landed) || doc.Committed+doc.Unchanged != days {
		t.Fatalf("re-run: %d committed + %d unchanged, %d had landed, want %d in all", doc.Committed, doc.Unchanged, len(landed), days)
	}
	for _, pj := range doc.Partitions {
		if !pj.Changed && pj.Outcome != "same-run" {
			t.Fatalf("%s: unchanged as %s, want same-run", pj.Partition, pj.Outcome)
		}
	}
	if v := k.runCLI(t, "verify", "--table", k.url); v.code != 0 {
		t.Fatalf("verify after the re-run: %s", v.stdout)
	}
}

// TestPartitionedFromS3: Spark-style partitionBy output already in a bucket
// (markers included) is committed by one `commit --partitioned s3://...`,
// server-side; the re-run is a no-op for every partition.
func TestPartitionedFromS3(t *testing.T) {
	t.Parallel()
	if !testenv.S3Enabled() {
		t.Skip("MinIO not configured (" + testenv.EnvS3 + "); scripts/test.sh starts one")
	}
	e := newMinioEnv(t)
	ctx := context.Background()
	put := func(key string, body []byte) {
		if _, err := e.s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &e.bucket, Key: &key, Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	type sale struct {
		ID   int64  `parquet:"id"`
		Name string `parquet:"name"`
	}
	days := 5
	for d := range days {
		for f := range 2 {
			rows := make([]sale, 100)
			for i := range rows {
				rows[i] = sale{ID: int64(d*1000 + f*100 + i), Name: "n"}
			}
			var buf bytes.Buffer
			if err := parquet.Write(&buf, rows); err != nil {
				t.Fatal(err)
			}
			put(fmt.Sprintf("spark-out/dt=2026-09-%02d/part-%05d-abc.c000.snappy.parquet", d+1, f), buf.Bytes())
		}
	}
	put("spark-out/_SUCCESS", nil)
	src := "s3://" + e.bucket + "/spark-out"
	r := e.runCLI(t, "commit", "--table", e.url, "--partitioned", src, "--run-id", "spark-backfill", "--json")
	var doc partitionedJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Committed != days {
		t.Fatalf("commit --partitioned s3://: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, p := range doc.Partitions {
		if p.Rows != 200 {
			t.Fatalf("%s: %d rows, want 200", p.Partition, p.Rows)
		}
	}
	r = e.runCLI(t, "commit", "--table", e.url, "--partitioned", src, "--run-id", "spark-backfill", "--json")
	doc = partitionedJSON{}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Unchanged != days {
		t.Fatalf("re-run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if v := e.runCLI(t, "verify", "--table", e.url); v.code != 0 {
		t.Fatalf("verify: %s %s", v.stdout, v.stderr)
	}
}

// TestDuckDBKilledWhileWriting kills a real DuckDB process (SIGKILL) while
// it COPYs file after file into a reservation. commit --staged then either
// refuses the file the kill cut short (exit 2, naming it, nothing
// committed) or commits; whatever it commits is read back whole: every
// committed file complete, as DuckDB reads it from where the engine left it.
func TestDuckDBKilledWhileWriting(t *testing.T) {
	t.Parallel()
	needDuck(t)
	e := newFileEnv(t)
	part := "dt=2026-09-05"
	res := e.reserve(t, part)
	var stmts []string
	for i := range 40 {
		stmts = append(stmts, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", rowsSQL(i*200000, (i+1)*200000),
			duckcheck.Quote(filepath.Join(res.Path, fmt.Sprintf("part-%02d.parquet", i)))))
	}
	kctx, kill := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := duckcheck.Run(kctx, stmts...); done <- err }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ents, _ := os.ReadDir(res.Path)
		if len(ents) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	kill()
	if err := <-done; err == nil {
		t.Skip("DuckDB finished all 40 files before the kill")
	}
	ents, _ := os.ReadDir(res.Path)
	args := []string{"commit", "--table", e.url, "--partition", part, "--staged", res.Generation, "--json"}
	c := e.runCLI(t, args...)
	refused := ""
	if c.code == 2 {
		// The file the kill cut short: named, and nothing committed.
		for _, en := range ents {
			if strings.Contains(c.stderr, en.Name()) {
				refused = en.Name()
			}
		}
		if refused == "" {
			t.Fatalf("commit refused the killed write without naming a file: %s", c.stderr)
		}
		if s := e.runCLI(t, "show", "--table", e.url, "--partition", part); s.code != 1 {
			t.Fatalf("a refused commit made something visible: %s", s.stdout)
		}
		// The operator removes the partial file (or re-runs the engine) and commits.
		if err := os.Remove(filepath.Join(res.Path, refused)); err != nil {
			t.Fatal(err)
		}
		c = e.runCLI(t, args...)
	}
	if c.code != 0 {
		t.Fatalf("commit after the kill: %d %s", c.code, c.stderr)
	}
	cj := c.commit(t)
	var files []string
	for _, en := range ents {
		if en.Name() != refused {
			files = append(files, duckcheck.Quote(filepath.Join(res.Path, en.Name())))
		}
	}
	want := fingerprint(t, "read_parquet(["+strings.Join(files, ", ")+"])")
	if got := fingerprint(t, committedFiles(t, e, part)); got != want || !strings.HasPrefix(got, fmt.Sprint(cj.Rows)+"/") {
		t.Fatalf("committed %d rows, read back %s, files on disk hold %s", cj.Rows, got, want)
	}
	if cj.Rows%200000 != 0 {
		t.Fatalf("committed %d rows: not whole files of 200,000", cj.Rows)
	}
	t.Logf("DuckDB killed after %d file(s) appeared; commit refused %q first; committed %d rows in whole files", len(ents), refused, cj.Rows)
	if v := e.runCLI(t, "verify", "--table", e.url, "--partition", part); v.code != 0 {
		t.Fatalf("verify: %s", v.stdout)
	}
}
