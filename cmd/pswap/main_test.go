package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/race"

	"github.com/parquet-go/parquet-go"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// TestMain makes the test binary double as the programs the scripts run:
// pswap itself, pswap-race (pswap with another run committing between its
// upload and its swap), and pswap-testgen (writes Parquet inputs).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pswap":      func() { os.Exit(Main()) },
		"pswap-race": func() { testHookBeforeCommit = interlope; os.Exit(Main()) },
		// pswap-race-same: the other run commits the row (1, "same").
		"pswap-race-same": func() { testHookBeforeCommit = interlopeSame; os.Exit(Main()) },
		"pswap-testgen":   func() { os.Exit(testgen(os.Args[1:])) },
	})
}

// TestScripts runs the CLI scripts against a local directory (file://).
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams(t, func(env *testscript.Env) string {
		return "file://" + filepath.ToSlash(filepath.Join(env.WorkDir, "lake", "sales"))
	}))
}

// TestScriptsS3 runs the same scripts against S3 (MinIO in scripts/test.sh),
// each under its own prefix of a fresh bucket.
func TestScriptsS3(t *testing.T) {
	if !testenv.S3Enabled() {
		t.Skip("S3 tests need MinIO: run scripts/test.sh, or set " + testenv.EnvS3 + "=1 and the AWS_* variables")
	}
	t.Parallel()
	base := testenv.S3URL(t)
	testscript.Run(t, scriptParams(t, func(env *testscript.Env) string {
		return base + "/" + strings.TrimPrefix(filepath.Base(env.WorkDir), "script-") + "/sales"
	}))
}

// TestScriptsGCS runs the same scripts against GCS (fake-gcs-server in
// scripts/test.sh), each under its own prefix of a fresh bucket.
func TestScriptsGCS(t *testing.T) {
	if !testenv.GCSEnabled() {
		t.Skip("GCS tests need fake-gcs-server: run scripts/test.sh, or set " + testenv.EnvGCS + "=1 and STORAGE_EMULATOR_HOST")
	}
	t.Parallel()
	base := testenv.GCSURL(t)
	testscript.Run(t, scriptParams(t, func(env *testscript.Env) string {
		return base + "/" + strings.TrimPrefix(filepath.Base(env.WorkDir), "script-") + "/sales"
	}))
}

// raceScripts are the store runs of the scripts whose pswap processes are
// the race-built test binary under -race: the local directory and S3.
// The GCS and Azure runs take the plain CLI scripts/test.sh builds
// ($PSWAP_TEST_CLI) for their pswap commands (pswap-race and the other
// hooked programs stay the test binary): the scripts run the same CLI code
// on every store, which the local and S3 runs check for data races, and
// the stores' own code is checked under -race by store/gcsstore's and
// store/azstore's tests and integration's GCS and Azure runs. A race-built
// pswap process costs about twice a plain one's CPU to start and several
// times its CPU to run, and the scripts start about 640 of them a store:
// the GCS and Azure runs were half of the package's CPU.
var raceScripts = map[string]bool{"TestScripts": true, "TestScriptsS3": true}

// plainCLIDir returns a folder holding pswap, a link to the plain CLI, for
// the store runs of the scripts that take it (see raceScripts): only under
// -race, and only when $PSWAP_TEST_CLI names the CLI; "" otherwise.
func plainCLIDir(t *testing.T) string {
	cli := os.Getenv("PSWAP_TEST_CLI")
	if !race.Enabled || cli == "" || raceScripts[t.Name()] {
		return ""
	}
	dir := t.TempDir()
	if err := os.Symlink(cli, filepath.Join(dir, "pswap")); err != nil {
		t.Fatal(err)
	}
	t.Logf("the scripts' pswap commands run the plain CLI %s (see raceScripts)", cli)
	return dir
}

// passEnv are the variables scripts inherit (the S3 settings; never
// printed by the scripts).
var passEnv = []string{
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_REQUEST_CHECKSUM_CALCULATION",
	"AWS_RESPONSE_CHECKSUM_VALIDATION", testenv.EnvS3,
	"STORAGE_EMULATOR_HOST", testenv.EnvGCS,
}

func scriptParams(t *testing.T, table func(*testscript.Env) string) testscript.Params {
	plainBin := plainCLIDir(t)
	return testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			if plainBin != "" {
				env.Setenv("PATH", plainBin+string(filepath.ListSeparator)+env.Getenv("PATH"))
			}
			for _, k := range passEnv {
				if v, ok := os.LookupEnv(k); ok {
					env.Setenv(k, v)
				}
			}
			env.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			// A binary built with -race sleeps a second at exit by default:
			// scripts run hundreds of pswap processes.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			env.Setenv("TABLE", table(env))
			examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "s3":
				return testenv.S3Enabled() && strings.Contains(t.Name(), "S3"), nil
			case "azure":
				return testenv.AzureEnabled() && strings.Contains(t.Name(), "Azure"), nil
			case "gcs":
				return testenv.GCSEnabled() && strings.Contains(t.Name(), "GCS"), nil
			case "bash":
				_, err := exec.LookPath("bash")
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"json":      cmdJSON,
			"errjson":   cmdErrJSON,
			"jsonset":   cmdJSONSet,
			"tamper":    cmdTamper,
			"exits":     cmdExits,
			"tablejson": cmdTableJSON, // tablejson_test.go
		},
	}
}

// cmdJSON checks fields of the JSON document on stdout:
//
//	json PATH WANT ...
//
// PATH is like .partitions[0].state (or . for the whole document). WANT is
// compared with a string value as is, and with any other value in its
// compact JSON form; a WANT starting with ~ is a regular expression. With
// !, the check must fail for every pair.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	checkJSON(ts, neg, args, "stdout")
}

// cmdErrJSON is json for the JSON document on stderr (errors under --json):
//
//	errjson .error.code conflict .error.exit 3
func cmdErrJSON(ts *testscript.TestScript, neg bool, args []string) {
	checkJSON(ts, neg, args, "stderr")
}

func checkJSON(ts *testscript.TestScript, neg bool, args []string, stream string) {
	if len(args) == 0 || len(args)%2 != 0 {
		ts.Fatalf("usage: json PATH WANT [PATH WANT ...]")
	}
	doc := streamJSON(ts, stream)
	for i := 0; i < len(args); i += 2 {
		got, err := jsonPath(doc, args[i])
		ok := err == nil && matchJSON(ts, got, args[i+1])
		if ok == neg {
			ts.Fatalf("json %s: got %s (%v), want %s%q", args[i], scalarText(got), err, map[bool]string{true: "not "}[neg], args[i+1])
		}
	}
}

// cmdExits runs a program and checks its exact exit status, keeping its
// stdout and stderr for the commands that follow:
//
//	exits STATUS PROGRAM [ARGS...]
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdJSONSet stores fields of the JSON document on stdout in variables:
//
//	jsonset VAR PATH ...
func cmdJSONSet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 || len(args)%2 != 0 {
		ts.Fatalf("usage: jsonset VAR PATH [VAR PATH ...]")
	}
	doc := stdoutJSON(ts)
	for i := 0; i < len(args); i += 2 {
		got, err := jsonPath(doc, args[i+1])
		ts.Check(err)
		ts.Setenv(args[i], scalarText(got))
	}
}

func stdoutJSON(ts *testscript.TestScript) any { return streamJSON(ts, "stdout") }

func streamJSON(ts *testscript.TestScript, stream string) any {
	var doc any
	text := ts.ReadFile(stream)
	if stream == "stderr" {
		// Warnings (one "pswap: warning:" line each, before anything else)
		// may precede the error document, as the README says.
		for strings.HasPrefix(text, "pswap: warning:") {
			_, text, _ = strings.Cut(text, "\n")
		}
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		ts.Fatalf("%s is not one JSON document: %v", stream, err)
	}
	return doc
}

func matchJSON(ts *testscript.TestScript, got any, want string) bool {
	text := scalarText(got)
	if re, ok := strings.CutPrefix(want, "~"); ok {
		m, err := regexp.MatchString(re, text)
		ts.Check(err)
		return m
	}
	return text == want
}

// scalarText is a string value as is, anything else in compact JSON.
func scalarText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var pathStep = regexp.MustCompile(`^(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\])`)

// jsonPath walks a decoded JSON document: .a.b[2].c, or len(.a.b) for the
// length of an array or object.
func jsonPath(doc any, path string) (any, error) {
	if inner, ok := strings.CutPrefix(path, "len("); ok && strings.HasSuffix(inner, ")") {
		v, err := jsonPath(doc, strings.TrimSuffix(inner, ")"))
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case []any:
			return float64(len(v)), nil
		case map[string]any:
			return float64(len(v)), nil
		}
		return nil, fmt.Errorf("%s: length of a scalar", path)
	}
	if path == "." {
		return doc, nil
	}
	cur := doc
	rest := path
	for rest != "" {
		m := pathStep.FindStringSubmatch(rest)
		if m == nil {
			return nil, fmt.Errorf("bad path %q at %q", path, rest)
		}
		rest = rest[len(m[0]):]
		switch {
		case m[1] != "":
			obj, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object before .%s", path, m[1])
			}
			if cur, ok = obj[m[1]]; !ok {
				return nil, fmt.Errorf("%s: no field %q", path, m[1])
			}
		default:
			arr, ok := cur.([]any)
			n, _ := strconv.Atoi(m[2])
			if !ok || n >= len(arr) {
				return nil, fmt.Errorf("%s: no element [%d]", path, n)
			}
			cur = arr[n]
		}
	}
	return cur, nil
}

// cmdTamper damages the current generation of a partition of $TABLE, on
// any store:
//
//	tamper flip|truncate|delete|manifest|pointer PARTITION
//
// flip changes one byte of the first data file (same size), truncate cuts
// it in half, delete removes it, manifest rewrites the manifest with other
// totals, pointer overwrites the pointer with garbage.
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper flip|truncate|delete|manifest|pointer|iceberg PARTITION")
	}
	ctx := context.Background()
	st, err := pswap.OpenStore(ctx, ts.Getenv("TABLE"), pswap.Options{})
	ts.Check(err)
	defer st.Close()
	snap, err := swap.Resolve(ctx, st, args[1])
	ts.Check(err)
	key := snap.Files[0].Key
	read := func(k string) []byte {
		rc, _, err := st.Get(ctx, k)
		ts.Check(err)
		defer rc.Close()
		data, err := io.ReadAll(rc)
		ts.Check(err)
		return data
	}
	switch args[0] {
	case "flip":
		data := read(key)
		data[len(data)/2] ^= 0xff
		_, err = st.Put(ctx, key, data, store.PutOptions{})
	case "truncate":
		data := read(key)
		_, err = st.Put(ctx, key, data[:len(data)/2], store.PutOptions{})
	case "delete":
		err = st.Delete(ctx, key)
	case "manifest":
		mk := layout.ManifestKey(args[1], snap.Manifest.Generation)
		data := read(mk)
		data = []byte(strings.Replace(string(data), `"rows": `, `"rows": 1`, 1))
		_, err = st.Put(ctx, mk, data, store.PutOptions{})
	case "pointer":
		_, err = st.Put(ctx, layout.PointerKey(args[1]), []byte("{not json"), store.PutOptions{})
	case "iceberg": // truncate the latest Iceberg metadata file
		_, v, lerr := lakehouse.Latest(ctx, st)
		ts.Check(lerr)
		data := read(lakehouse.MetadataKey(v))
		_, err = st.Put(ctx, lakehouse.MetadataKey(v), data[:len(data)/2], store.PutOptions{})
	default:
		ts.Fatalf("unknown tamper mode %q", args[0])
	}
	ts.Check(err)
}

// interlope commits a generation of another run to the partition: run as
// the hook between pswap-race's upload and its swap.
func interlope(ctx context.Context, part *pswap.Partition) error {
	return interlopeWith(ctx, part, "")
}

// interlopeSame is interlope with the CSV row (1, "same") whatever the run.
func interlopeSame(ctx context.Context, part *pswap.Partition) error {
	return interlopeWith(ctx, part, "same")
}

func interlopeWith(ctx context.Context, part *pswap.Partition, region string) error {
	runID := fmt.Sprintf("interloper-%d", time.Now().UnixNano())
	if region == "" {
		region = runID
	}
	w, err := part.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: runID}})
	if err != nil {
		return err
	}
	type row struct {
		ID     int64  `parquet:"id"`
		Region string `parquet:"region"`
	}
	if region == "same" {
		// As the CLI reads same.csv of conflict.txtar.
		err = w.AddReader(ctx, strings.NewReader("id,region\n1,same\n"), "same.csv", pswap.FormatCSV)
	} else {
		err = pswap.Write(w, row{ID: 1, Region: region})
	}
	if err != nil {
		return err
	}
	res, err := w.Commit(ctx)
	if err == nil && !res.Changed {
		err = errors.New("interloper: commit was a no-op")
	}
	return err
}

// testRow is the schema of the Parquet files pswap-testgen writes.
type testRow struct {
	ID     int64   `parquet:"id"`
	Amount float64 `parquet:"amount"`
	Region string  `parquet:"region"`
}

// otherRow is a different schema, for schema mismatch tests.
type otherRow struct {
	ID   int64  `parquet:"id"`
	Note string `parquet:"note"`
}

// testgen writes test inputs:
//
//	pswap-testgen parquet FILE ROWS [FIRST_ID]   rows of (id, amount, region)
//	pswap-testgen other FILE ROWS                rows of another schema (id, note)
//	pswap-testgen truncate SRC DST               the first half of SRC
func testgen(args []string) int {
	if len(args) == 3 && args[0] == "truncate" {
		data, err := os.ReadFile(args[1])
		if err == nil {
			err = os.WriteFile(args[2], data[:len(data)/2], 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pswap-testgen:", err)
			return 1
		}
		return 0
	}
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: pswap-testgen parquet|other FILE ROWS [FIRST_ID]")
		return 2
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	first := 1
	if len(args) > 3 {
		if first, err = strconv.Atoi(args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	if err := os.MkdirAll(filepath.Dir(args[1]), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "pswap-testgen:", err)
		return 1
	}
	regions := []string{"eu", "us", "apac"}
	switch args[0] {
	case "parquet":
		rows := make([]testRow, n)
		for i := range rows {
			id := first + i
			rows[i] = testRow{ID: int64(id), Amount: float64(id) * 1.25, Region: regions[id%len(regions)]}
		}
		err = parquet.WriteFile(args[1], rows)
	case "other":
		rows := make([]otherRow, n)
		for i := range rows {
			rows[i] = otherRow{ID: int64(first + i), Note: "n" + strconv.Itoa(i)}
		}
		err = parquet.WriteFile(args[1], rows)
	default:
		err = fmt.Errorf("unknown kind %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pswap-testgen:", err)
		return 1
	}
	return 0
}
