package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
)

// invoke runs pswap in-process with the given environment and returns its
// exit status, stdout and stderr.
func invoke(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{ctx: context.Background(), stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] }}
	code := run(a, args)
	return code, out.String(), errb.String()
}

func TestExitCode(t *testing.T) {
	wrap := func(err error) error { return &cmdError{fmt.Errorf("context: %w", err)} }
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"cobra error", errors.New(`unknown command "x" for "pswap"`), exitUsage},
		{"usage", &cmdError{usagef("no table")}, exitUsage},
		{"conflict", wrap(pswap.ErrConflict), exitConflict},
		{"mismatch", wrap(pswap.ErrMismatch), exitMismatch},
		{"explicit", &cmdError{&exitError{exitFailure, pswap.ErrNoData}}, exitFailure},
		{"no data", wrap(pswap.ErrNoData), exitFailure},
		{"outcome unknown", wrap(pswap.ErrOutcomeUnknown), exitFailure},
		{"stale", wrap(pswap.ErrStaleGeneration), exitFailure},
		{"generation not found", wrap(pswap.ErrGenerationNotFound), exitFailure},
		{"access denied", wrap(store.ErrAccessDenied), exitFailure},
		{"bucket not found", wrap(store.ErrBucketNotFound), exitFailure},
		{"transient", wrap(store.ErrTransient), exitFailure},
		{"bad input", wrap(pswap.ErrBadInput), exitUsage},
		{"bad url", wrap(pswap.ErrBadURL), exitUsage},
		{"invalid key", wrap(partition.ErrInvalidKey), exitUsage},
		{"invalid interval", wrap(partition.ErrInvalidInterval), exitUsage},
		{"unaligned", wrap(partition.ErrUnaligned), exitUsage},
		{"schema mismatch", wrap(staging.ErrSchemaMismatch), exitUsage},
		{"staging bad input", wrap(staging.ErrBadInput), exitUsage},
		{"corrupt parquet", wrap(staging.ErrCorrupt), exitUsage},
		// Corrupt metadata on the store is a failure even if its cause
		// mentions a malformed key.
		{"corrupt metadata", wrap(fmt.Errorf("%w: %w", pswap.ErrCorrupt, partition.ErrInvalidKey)), exitFailure},
		{"other", wrap(errors.New("boom")), exitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	env := map[string]string{
		"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
		"AWS_SESSION_TOKEN":     "FwoGZXIvYXdzEJr",
		"MINIO_ROOT_PASSWORD":   "abc", // too short to redact safely
	}
	getenv := func(k string) string { return env[k] }
	red := newRedactor(getenv, []string{"ls", "--table", "s3://AKIAFAKE:TopSecretPw@mybucket/sales"})
	tests := []struct{ in, want string }{
		{`invalid bucket name "AKIAFAKE:TopSecretPw@mybucket"`, `invalid bucket name "[REDACTED]@mybucket"`},
		{"user AKIAFAKE, password TopSecretPw", "user [REDACTED], password [REDACTED]"},
		{"Authorization: AWS4-HMAC-SHA256 Credential=AKIA/x, Signature=deadbeef", "Authorization: [REDACTED]"},
		{"plain message", "plain message"},
		{"key wJalrXUtnFEMI/K7MDENG leaked", "key [REDACTED] leaked"},
		{"token=FwoGZXIvYXdzEJr;", "token=[REDACTED];"},
		{"open s3://AKIA:secret@bucket/x", "open s3://[REDACTED]@bucket/x"},
		{"GET https://u:p@host/b?X-Amz-Signature=abcdef&X-Amz-Credential=AKIA%2F", "GET https://u:[REDACTED]@host/b?X-Amz-Signature=[REDACTED]&X-Amz-Credential=[REDACTED]"},
		{"abc stays", "abc stays"},
		{"s3://bucket/a@b is no userinfo", "s3://bucket/a@b is no userinfo"},
	}
	for _, tt := range tests {
		if got := red.String(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDefaultRunID(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{envRunID: "r1"}, "r1"},
		{map[string]string{envRunID: " r1 ", envAirflowDagID: "d", envAirflowDagRunID: "x"}, "r1"},
		{map[string]string{envAirflowDagID: "sales", envAirflowDagRunID: "scheduled__2026-11-29T00:00:00+00:00"}, "sales/scheduled__2026-11-29T00:00:00+00:00"},
		{map[string]string{envAirflowDagID: "sales"}, ""},
		{map[string]string{envAirflowDagRunID: "manual__1"}, ""},
	}
	for _, tt := range tests {
		if got := defaultRunID(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("defaultRunID(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestRowSniffer(t *testing.T) {
	tests := []struct {
		in   string
		skip int
		want bool
	}{
		{"", 0, false},
		{"\n \t\r\n", 0, false},
		{"{}", 0, true},
		{"\n\n{\"a\":1}\n", 0, true},
		{"", 1, false},
		{"id,name", 1, false},
		{"id,name\n", 1, false},
		{"id,name\r\n\r\n  \n", 1, false},
		{"id,name\n1,a", 1, true},
		{"id,name\n\n1,a\n", 1, true},
	}
	for _, tt := range tests {
		// Read in tiny chunks so that state carries across reads.
		s := &rowSniffer{r: &oneByteReader{strings.NewReader(tt.in)}, skipLines: tt.skip}
		got, err := io.ReadAll(s)
		if err != nil || string(got) != tt.in {
			t.Fatalf("sniffer changed the input %q: %q, %v", tt.in, got, err)
		}
		if s.hasRows != tt.want {
			t.Errorf("rowSniffer(%q, skip %d).hasRows = %v, want %v", tt.in, tt.skip, s.hasRows, tt.want)
		}
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {1 << 62, "4.0 EiB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestMapOrdered(t *testing.T) {
	ctx := context.Background()
	items := make([]int, 50)
	for i := range items {
		items[i] = i
	}
	got, err := mapOrdered(ctx, items, 4, func(_ context.Context, i int) (string, error) {
		return fmt.Sprint(i * i), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s != fmt.Sprint(i*i) {
			t.Fatalf("result %d = %q, want %d", i, s, i*i)
		}
	}
	boom := errors.New("boom")
	_, err = mapOrdered(ctx, items, 4, func(_ context.Context, i int) (int, error) {
		if i == 7 {
			return 0, boom
		}
		return i, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want boom", err)
	}
	if got, err := mapOrdered(ctx, []int(nil), 4, func(context.Context, int) (int, error) { return 0, nil }); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, err)
	}
}

func TestSelector(t *testing.T) {
	tests := []struct {
		sel     selector
		want    []string
		wantErr error
	}{
		{selector{}, nil, nil},
		{selector{partition: "dt=2026-11-29"}, []string{"dt=2026-11-29"}, nil},
		{selector{partition: "dt=2026-11-29/hr=07"}, []string{"dt=2026-11-29/hr=07"}, nil},
		{selector{interval: "2026-11-28/2026-11-30"}, []string{"dt=2026-11-28", "dt=2026-11-29"}, nil},
		{selector{interval: "2026-11-29T22:00:00Z/PT2H", grain: "hour"}, []string{"dt=2026-11-29/hr=22", "dt=2026-11-29/hr=23"}, nil},
		{selector{interval: "2026-11-01/P2M", grain: "month"}, []string{"month=2026-11", "month=2026-12"}, nil},
		{selector{interval: "2026-11-29/P1D", layout: "y=2006/m=01/d=02"}, []string{"y=2026/m=11/d=29"}, nil},
		{selector{partition: "../etc"}, nil, partition.ErrInvalidKey},
		{selector{interval: "2026-11-29"}, nil, partition.ErrInvalidInterval},
		{selector{interval: "2026-11-29T12:00:00Z/PT1H"}, nil, partition.ErrUnaligned},
		{selector{interval: "2026-11-29/P1D", grain: "minute"}, nil, partition.ErrInvalidLayout},
	}
	for _, tt := range tests {
		got, err := tt.sel.keys()
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%+v: error %v, want %v", tt.sel, err, tt.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%+v: keys %v, %v; want %v", tt.sel, got, err, tt.want)
		}
	}
	// Contradictory flags are usage errors.
	for _, sel := range []selector{
		{partition: "dt=2026-11-29", interval: "2026-11-29/P1D"},
		{partition: "dt=2026-11-29", grain: "day"},
	} {
		var ue usageError
		if _, err := sel.keys(); !errors.As(err, &ue) {
			t.Errorf("%+v: error %v, want a usage error", sel, err)
		}
	}
	// one() needs exactly one partition.
	if _, err := (&selector{interval: "2026-11-28/2026-11-30"}).one(); !errors.Is(err, partition.ErrUnaligned) {
		t.Errorf("one() of two days: %v", err)
	}
	if k, err := (&selector{interval: "2026-11-29T13:00:00+01:00/PT1H", grain: "hour"}).one(); err != nil || k != "dt=2026-11-29/hr=12" {
		t.Errorf("one() of an hour with an offset = %q, %v", k, err)
	}
}

// FuzzSelector checks that whatever the flags, every key a selector accepts
// is a canonical partition key that stays inside the table (I6).
func FuzzSelector(f *testing.F) {
	f.Add("dt=2026-11-29", "", "", "")
	f.Add("", "2026-11-29/2026-12-01", "", "")
	f.Add("", "2026-11-29T13:00:00Z/PT3H", "hour", "")
	f.Add("", "2026-11-01/P1M", "", "month")
	f.Add("", "2026-11-29/P1D", "", "year=2006/month=01/day=02")
	f.Add("../x=1", "", "", "")
	f.Add("dt=%2e%2e", "", "", "")
	f.Add("", "2026-11-29/P1D", "", "dt=../2006")
	f.Fuzz(func(t *testing.T, part, interval, grain, lay string) {
		sel := selector{partition: part, interval: interval, grain: grain, layout: lay}
		keys, err := sel.keys()
		if err != nil {
			return
		}
		if len(keys) > partition.MaxKeys {
			t.Fatalf("%d keys", len(keys))
		}
		for _, k := range keys {
			if err := partition.Validate(k); err != nil {
				t.Fatalf("selector %+v gave invalid key %q: %v", sel, k, err)
			}
			if err := store.ValidateKey(layout.PointerKey(k)); err != nil {
				t.Fatalf("selector %+v gave key %q whose pointer key is invalid: %v", sel, k, err)
			}
		}
	})
}

// FuzzJSONPath keeps the test helper's path parser from panicking.
func FuzzJSONPath(f *testing.F) {
	doc := map[string]any{"a": []any{map[string]any{"b": "x"}}, "n": 1.0}
	for _, s := range []string{".", ".a[0].b", "len(.a)", ".n", ".a[9]", "len(.n)", "..", ".a[", "len("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		_, _ = jsonPath(doc, path)
	})
}

func TestDuckDBQuery(t *testing.T) {
	q := duckdbQuery([]fileJSON{
		{URI: "file:///lake/sales/dt=2026-11-29/_pswap/gen/g/part-00000.parquet"},
		{URI: "s3://bucket/it's/part-00001.parquet"},
	})
	want := "SELECT * FROM read_parquet([\n" +
		"  '/lake/sales/dt=2026-11-29/_pswap/gen/g/part-00000.parquet',\n" +
		"  's3://bucket/it''s/part-00001.parquet'\n" +
		"], hive_partitioning = true, union_by_name = true);\n"
	if q != want {
		t.Errorf("duckdbQuery =\n%s\nwant\n%s", q, want)
	}
}

func TestDuckdbS3Setup(t *testing.T) {
	for _, tc := range []struct {
		d    duckS3
		want string
	}{
		{duckS3{bucket: "lake", region: "eu-west-1", useSSL: true}, "INSTALL httpfs;\nLOAD httpfs;\nINSTALL aws;\nLOAD aws;\n" +
			"CREATE OR REPLACE SECRET pswap (\n  TYPE s3,\n  PROVIDER credential_chain,\n  SCOPE 's3://lake',\n  REGION 'eu-west-1'\n);\n"},
		{duckS3{bucket: "pswap", region: "us-east-1", endpoint: "127.0.0.1:9000", pathStyle: true}, "INSTALL httpfs;\nLOAD httpfs;\nINSTALL aws;\nLOAD aws;\n" +
			"CREATE OR REPLACE SECRET pswap (\n  TYPE s3,\n  PROVIDER credential_chain,\n  SCOPE 's3://pswap',\n  REGION 'us-east-1',\n" +
			"  ENDPOINT '127.0.0.1:9000',\n  USE_SSL false,\n  URL_STYLE 'path'\n);\n"},
	} {
		if got := tc.d.setup(); got != tc.want {
			t.Errorf("setup(%+v) =\n%s\nwant\n%s", tc.d, got, tc.want)
		}
	}
}

// TestFilesDuckDB runs the query that `files --format duckdb` prints in
// DuckDB, a reader that shares no code with pswap: it must see exactly the
// committed rows of the current generations, with the partition column.
func TestFilesDuckDB(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	dir := t.TempDir()
	table := filepath.Join(dir, "lake", "sales")
	// In this order: the first commit's CSV makes amount a double in the
	// table schema, and the second day's whole numbers are promoted to it
	// (the other order is refused: a double does not fit an int64 column).
	for _, d := range []struct{ day, rows string }{
		{"2026-11-28", "id,amount\n1,1.5\n2,2.5\n"},
		{"2026-11-29", "id,amount\n3,10\n4,20\n5,30\n"},
	} {
		day, rows := d.day, d.rows
		in := filepath.Join(dir, day+".csv")
		if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := invoke(t, nil, "", "commit", "--table", table, "--partition", "dt="+day, in); code != 0 {
			t.Fatalf("commit %s: exit %d: %s", day, code, stderr)
		}
	}
	// Replace one day: the old generation's files must not be read.
	in := filepath.Join(dir, "new.csv")
	if err := os.WriteFile(in, []byte("id,amount\n6,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := invoke(t, nil, "", "commit", "--table", table, "--partition", "dt=2026-11-28", in); code != 0 {
		t.Fatalf("replace: exit %d: %s", code, stderr)
	}
	code, query, stderr := invoke(t, nil, "", "files", "--table", table, "--format", "duckdb")
	if code != 0 {
		t.Fatalf("files: exit %d: %s", code, stderr)
	}
	rows, err := duckcheck.Query(context.Background(),
		"SELECT dt::VARCHAR AS dt, count(*) AS n, sum(amount) AS total FROM ("+strings.TrimSuffix(strings.TrimSpace(query), ";")+") GROUP BY dt ORDER BY dt")
	if err != nil {
		t.Fatalf("DuckDB on %s: %v", query, err)
	}
	got := fmt.Sprint(rows)
	want := "[map[dt:2026-11-28 n:1 total:100] map[dt:2026-11-29 n:3 total:60]]"
	if got != want {
		t.Errorf("DuckDB sees %s, want %s", got, want)
	}
}

// TestNoProgressWithoutTerminal: progress bars only on a terminal, never
// with --json.
func TestNoProgressWithoutTerminal(t *testing.T) {
	var buf bytes.Buffer
	a := &app{stderr: &buf}
	if bar := a.newProgress([]input{{path: "x", size: 10}}, "uploading"); bar != nil {
		t.Error("progress bar on a buffer")
	}
	a = &app{stderr: os.Stderr, json: true}
	if bar := a.newProgress([]input{{path: "x", size: 10}}, "uploading"); bar != nil {
		t.Error("progress bar with --json")
	}
}

// TestInProcess drives a whole cycle through run() with an injected
// environment: the run id comes from Airflow's variables.
func TestInProcess(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":1}`+"\n"+`{"id":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{envTable: "file://" + filepath.ToSlash(filepath.Join(dir, "t")),
		envAirflowDagID: "dag", envAirflowDagRunID: "run-1"}
	code, out, stderr := invoke(t, env, "", "commit", "--json", "--interval", "2026-11-29/P1D", in)
	if code != 0 || !strings.Contains(out, `"run_id": "dag/run-1"`) || !strings.Contains(out, `"changed": true`) {
		t.Fatalf("commit: exit %d, stdout %s, stderr %s", code, out, stderr)
	}
	code, out, _ = invoke(t, env, "", "commit", "--json", "--interval", "2026-11-29/P1D", in)
	if code != 0 || !strings.Contains(out, `"outcome": "same-run"`) {
		t.Fatalf("re-run: exit %d, stdout %s", code, out)
	}
	code, out, stderr = invoke(t, env, `{"id":3}`, "commit", "--partition", "dt=2026-11-30", "--input-format", "jsonl", "-")
	if code != 0 || !strings.HasPrefix(out, "committed dt=2026-11-30") {
		t.Fatalf("stdin: exit %d, stdout %s, stderr %s", code, out, stderr)
	}
	code, _, stderr = invoke(t, nil, "", "ls")
	if code != exitUsage || !strings.Contains(stderr, "no table") {
		t.Fatalf("ls without a table: exit %d, %s", code, stderr)
	}
}

func TestCtxReader(t *testing.T) {
	data := strings.Repeat("0123456789abcdef", 1000)
	r := newCtxReader(context.Background(), strings.NewReader(data))
	var got []byte
	for i := 1; ; i++ {
		buf := make([]byte, 1+(i*37)%300) // sizes that shrink and grow
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != data {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(data))
	}
	// A read blocked on an idle pipe gives up when the context ends.
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	cr := newCtxReader(ctx, pr)
	errc := make(chan error, 1)
	go func() { _, err := cr.Read(make([]byte, 10)); errc <- err }()
	stop := errors.New("stop")
	cancel(stop)
	if err := <-errc; !errors.Is(err, stop) {
		t.Fatalf("blocked read after cancel: %v, want the cause", err)
	}
}

// The progress bar names each input's phase, and its first frame's speed
// is measured from when the phase began, not from the first update (which
// showed gigabytes per second for a file that took a second).
func TestProgressPhasesAndFirstSpeed(t *testing.T) {
	var buf bytes.Buffer
	inputs := []input{{path: "dir/a.csv", size: 1 << 20, format: pswap.FormatCSV}, {path: "b.parquet", size: 1 << 20, format: pswap.FormatParquet}}
	bar := newProgressTo(&buf, inputs, "")
	if got := bar.phase(inputs[0]); got != "converting a.csv" {
		t.Errorf("phase of a CSV input: %q", got)
	}
	if got := bar.phase(inputs[1]); got != "uploading b.parquet" {
		t.Errorf("phase of a Parquet input: %q", got)
	}
	if got := bar.phase(input{path: stdinArg, size: -1, format: pswap.FormatJSONL}); got != "converting stdin" {
		t.Errorf("phase of stdin: %q", got)
	}
	if got := newProgressTo(&buf, inputs, "reading").phase(inputs[1]); got != "reading b.parquet" {
		t.Errorf("phase with a fixed verb: %q", got)
	}
	// The first update comes when a first file is uploaded: no frame
	// before it.
	time.Sleep(200 * time.Millisecond) // the upload of the first MiB took at least this long
	if err := bar.Add64(1 << 20); err != nil {
		t.Fatal(err)
	}
	frames := strings.Split(buf.String(), "\r")
	frame := frames[len(frames)-1]
	// 1 MiB in >= 200ms is at most 5 MiB/s; a bar timed from its first
	// update would show thousands.
	m := regexp.MustCompile(`\(([0-9.]+) ([kKMGTPE]?i?B)/s\)`).FindStringSubmatch(frame)
	if m == nil {
		t.Fatalf("no speed in the first frame: %q", frame)
	}
	rate, _ := strconv.ParseFloat(m[1], 64)
	scale := map[string]float64{"B": 1, "kB": 1e3, "KiB": 1 << 10, "MB": 1e6, "MiB": 1 << 20, "GB": 1e9, "GiB": 1 << 30}
	if f, ok := scale[m[2]]; !ok || rate*f > 6e6 {
		t.Errorf("first frame shows %s %s/s for 1 MiB in over 200ms (at most 5.2 MB/s): %q", m[1], m[2], frame)
	}
	time.Sleep(150 * time.Millisecond) // past the throttle
	bar.Describe(bar.phase(inputs[1]))
	if frames := strings.Split(buf.String(), "\r"); !strings.Contains(frames[len(frames)-1], "uploading b.parquet") {
		t.Errorf("frame does not name the phase: %q", frames[len(frames)-1])
	}
}

// FuzzRedact: a known secret never survives redaction, wherever it sits in
// a message and whatever surrounds it.
func FuzzRedact(f *testing.F) {
	f.Add("open s3://", "TopSecretPw", "@bucket/x failed")
	f.Add("", "wJalrXUtnFEMI", "")
	f.Add("X-Amz-Signature=", "deadbeef", "&x=1")
	f.Fuzz(func(t *testing.T, before, secret, after string) {
		if len(secret) < minSecret || strings.TrimFunc(secret, func(r rune) bool {
			return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		}) != "" {
			return // secrets are credentials: letters and digits here
		}
		r := newRedactor(func(k string) string {
			if k == "AWS_SECRET_ACCESS_KEY" {
				return secret
			}
			return ""
		}, nil)
		if out := r.String(before + secret + after); strings.Contains(out, secret) {
			t.Fatalf("redact(%q) = %q: the secret survived", before+secret+after, out)
		}
		// Through the line writer, written in two pieces split inside it.
		var buf bytes.Buffer
		w := newRedactWriter(r, &buf)
		msg := before + secret + after + "\n"
		cut := len(before) + len(secret)/2
		w.Write([]byte(msg[:cut]))
		w.Write([]byte(msg[cut:]))
		w.Flush()
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("redactWriter(%q) = %q: the secret survived", msg, buf.String())
		}
	})
}
