package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap"
)

// The partitions every bad-input case starts from: P has two generations,
// Q one.
const (
	badP = "dt=2026-11-29"
	badQ = "dt=2026-11-30"
)

// badSeed is what a case can refer to.
type badSeed struct {
	g1, g2, q string // generations: P's first and current, Q's
	dir       string // local scratch directory (inputs)
}

// badCmd is one CLI invocation and what the contract says it must do.
type badCmd struct {
	args   []string // after "pswap"; {table}, {P}, {Q}, {G1}, {G2}, {dir} are replaced
	code   int      // exit status
	stderr string   // regexp the error must match (it names the problem)
}

// badCase is one bad input: an optional tampering of the store, an
// environment, and the commands that must fail cleanly.
type badCase struct {
	name     string
	minio    bool     // S3-level: only on MinIO
	stress   bool     // only under PSWAP_STRESS (slow: retried for long)
	env      []string // added to the CLI environment ({proxy} is the proxy's URL)
	tamper   func(t *testing.T, e *tableEnv, s *badSeed)
	cmds     []badCmd
	tampered bool // the case breaks the table on purpose: skip the invariant check
}

func cmd(code int, stderr string, args ...string) badCmd {
	return badCmd{args: args, code: code, stderr: stderr}
}

// editManifest rewrites the current manifest of P (or the pointer, with
// pointer set) as generic JSON.
func editJSON(t *testing.T, e *tableEnv, key string, edit func(doc map[string]any)) {
	t.Helper()
	data, err := e.rawRead("sales/" + key)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	e.rawWrite(t, key, out)
}

func editFile0(field string, value any) func(doc map[string]any) {
	return func(doc map[string]any) {
		doc["files"].([]any)[0].(map[string]any)[field] = value
	}
}

// readers are the commands that read a partition's current generation.
func readers(code int, stderr string) []badCmd {
	return []badCmd{
		cmd(code, stderr, "show", "--table", "{table}", "--partition", "{P}"),
		cmd(code, stderr, "files", "--table", "{table}", "--partition", "{P}", "--format", "uris"),
		cmd(4, stderr, "verify", "--table", "{table}", "--partition", "{P}"),
	}
}

// TestBadInput feeds pswap bad input, each case its own test: path
// traversal in keys, manifests and pointers; tampered manifests and
// pointers (paths out of the table, wrong checksums, truncated JSON,
// unknown versions, mismatches); corrupt Parquet pages; a missing bucket;
// wrong credentials; a store that is down. Each must end with the
// contract's exit status and an error naming the problem, never print a
// secret, and change nothing visible (the raw listing and every pointer
// are byte for byte the same). Cases the CLI scripts already cover
// (malformed keys, empty and unparsable inputs, schema mismatches) are
// not repeated here.
func TestBadInput(t *testing.T) {
	t.Parallel()
	secret := "wrong-Secret-Value-0123456789"
	cases := []badCase{
		// Path traversal.
		{name: "table URL with ..", cmds: []badCmd{
			cmd(2, `\.\.`, "ls", "--table", "s3://bucket/lake/../etc"),
			cmd(2, `\.\.`, "commit", "--table", "s3://bucket/a/../../b", "--partition", "{P}", "{dir}/a.csv"),
		}},
		{name: "rollback and staged ids with ..", cmds: []badCmd{
			cmd(2, `generation`, "rollback", "--table", "{table}", "--partition", "{P}", "--to", "../../{G1}"),
			cmd(2, `generation`, "commit", "--table", "{table}", "--partition", "{P}", "--staged", "../{G1}"),
			cmd(2, `generation`, "commit", "--table", "{table}", "--partition", "{P}", "--staged", "{G1}/../../x"),
		}},
		{name: "gc and ls prefixes with ..", cmds: []badCmd{
			cmd(2, `\.\.|invalid`, "gc", "--table", "{table}", "--prefix", "../"),
			cmd(2, `\.\.|invalid`, "gc", "--table", "{table}", "--prefix", "dt=2026-11-29/../../x"),
		}},
		{name: "run id with control characters", cmds: []badCmd{
			cmd(2, `run.id`, "commit", "--table", "{table}", "--partition", "{P}", "--run-id", "a\nb", "{dir}/a.csv"),
			cmd(2, `run.id`, "commit", "--table", "{table}", "--partition", "{P}", "--run-id", "a\x1b[31mb", "{dir}/a.csv"),
		}},
		{name: "manifest file path out of the table", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), editFile0("path", "../../../../../../../etc/passwd"))
		}, cmds: readers(1, `corrupt.*path|path.*corrupt`)},
		{name: "manifest file path absolute", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), editFile0("path", "/etc/passwd"))
		}, cmds: readers(1, `corrupt`)},
		{name: "manifest file path into another generation", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), editFile0("path", "../"+s.g1+"/part-00000.parquet"))
		}, cmds: readers(1, `corrupt`)},
		{name: "manifest file path with a control character", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), editFile0("path", "part\x00.parquet"))
		}, cmds: readers(1, `corrupt`)},

		// Tampered manifests and pointers.
		{name: "manifest with a wrong checksum", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), editFile0("checksum", "sha256:"+strings.Repeat("0", 64)))
		}, cmds: []badCmd{cmd(4, `checksum`, "verify", "--table", "{table}", "--partition", "{P}")}},
		{name: "manifest with a malformed checksum", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), editFile0("checksum", "md5:abc"))
		}, cmds: readers(1, `corrupt.*checksum|checksum`)},
		{name: "manifest truncated", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			data, _ := e.rawRead("sales/" + layout.ManifestKey(badP, s.g2))
			e.rawWrite(t, layout.ManifestKey(badP, s.g2), data[:len(data)/2])
		}, cmds: append(readers(1, `corrupt`), cmd(1, `corrupt`, "history", "--table", "{table}", "--partition", "{P}"))},
		{name: "manifest of an unknown version", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), func(doc map[string]any) { doc["version"] = "2.0" })
		}, cmds: readers(1, `version`)},
		{name: "manifest of another partition", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			data, _ := e.rawRead("sales/" + layout.ManifestKey(badQ, s.q))
			e.rawWrite(t, layout.ManifestKey(badP, s.g2), data)
		}, cmds: readers(1, `corrupt`)},
		{name: "manifest that disagrees with the pointer", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.ManifestKey(badP, s.g2), func(doc map[string]any) {
				doc["rows"] = doc["rows"].(float64) + 1
				doc["files"].([]any)[0].(map[string]any)["rows"] = doc["files"].([]any)[0].(map[string]any)["rows"].(float64) + 1
			})
		}, cmds: readers(1, `corrupt.*(match|rows)`)},
		{name: "pointer truncated", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			data, _ := e.rawRead("sales/" + layout.PointerKey(badP))
			e.rawWrite(t, layout.PointerKey(badP), data[:len(data)-9])
		}, cmds: append(readers(1, `corrupt`),
			cmd(1, `corrupt`, "history", "--table", "{table}", "--partition", "{P}"),
			cmd(1, `corrupt`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"),
			cmd(1, `corrupt`, "rollback", "--table", "{table}", "--partition", "{P}", "--to", "{G1}"))},
		{name: "pointer of an unknown version", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.PointerKey(badP), func(doc map[string]any) { doc["version"] = "9.1" })
		}, cmds: append(readers(1, `version`),
			cmd(1, `version`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"))},
		{name: "pointer naming a generation with ..", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.PointerKey(badP), func(doc map[string]any) { doc["generation"] = "../../../dt=2026-11-30/_pswap/manifests/" + s.q })
		}, cmds: append(readers(1, `corrupt.*generation|generation`),
			cmd(1, `corrupt`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"))},
		{name: "pointer naming a missing manifest", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			editJSON(t, e, layout.PointerKey(badP), func(doc map[string]any) { doc["generation"] = "01a20000-0000-7000-8000-000000000000" })
		}, cmds: readers(1, `missing|not found`)},
		{name: "pointer of another partition", tampered: true, tamper: func(t *testing.T, e *tableEnv, s *badSeed) {
			data, _ := e.rawRead("sales/" + layout.PointerKey(badQ))
			e.rawWrite(t, layout.PointerKey(badP), data)
		}, cmds: append(readers(1, `corrupt.*partition`),
			cmd(1, `corrupt`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"))},

		// Data.
		{name: "Parquet with corrupt compressed pages", cmds: []badCmd{
			// On a table of its own: on {table}, whose schema has other
			// columns, the footer's schema would be refused first.
			cmd(2, `corrupt parquet.*pages\.parquet`, "commit", "--table", "{dir}/pages-table", "--partition", "{P}", "{dir}/pages.parquet"),
			// After a CSV of other columns, the footer's schema is refused
			// first: a file's footer is checked before any page is read.
			cmd(2, `schema mismatch.*pages\.parquet`, "stage", "--table", "{table}", "--partition", "{Q}", "{dir}/a.csv", "{dir}/pages.parquet"),
		}},

		// The store itself.
		{name: "missing bucket", minio: true, cmds: []badCmd{
			cmd(1, `bucket`, "commit", "--table", "s3://pswap-no-such-bucket-7c1e/t", "--partition", "{P}", "{dir}/a.csv"),
			cmd(1, `bucket`, "ls", "--table", "s3://pswap-no-such-bucket-7c1e/t"),
			cmd(1, `bucket`, "show", "--table", "s3://pswap-no-such-bucket-7c1e/t", "--partition", "{P}"),
			cmd(1, `bucket`, "gc", "--table", "s3://pswap-no-such-bucket-7c1e/t"),
			cmd(1, `bucket`, "stage", "--table", "s3://pswap-no-such-bucket-7c1e/t", "--partition", "{P}", "{dir}/a.csv"),
		}},
		{name: "wrong secret key", minio: true, env: []string{"AWS_SECRET_ACCESS_KEY=" + secret}, cmds: []badCmd{
			cmd(1, `access denied`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"),
			cmd(1, `access denied`, "commit", "--table", "{table}", "--partition", "{P}", "--json", "{dir}/a.csv"),
			cmd(1, `access denied`, "ls", "--table", "{table}"),
			cmd(1, `access denied`, "history", "--table", "{table}", "--partition", "{P}"),
			cmd(1, `access denied`, "rollback", "--table", "{table}", "--partition", "{P}", "--to", "{G1}"),
			cmd(1, `access denied`, "gc", "--table", "{table}", "--json"),
			cmd(1, `access denied`, "verify", "--table", "{table}"),
		}},
		{name: "wrong access key id", minio: true, env: []string{"AWS_ACCESS_KEY_ID=AKIAWRONGWRONGWRONG"}, cmds: []badCmd{
			cmd(1, `access denied`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"),
			cmd(1, `access denied`, "show", "--table", "{table}", "--partition", "{P}"),
		}},
		// A commit retries a refused connection for about half a minute
		// (transient, by the protocol) before it gives up.
		{name: "store down", minio: true, env: []string{"AWS_ENDPOINT_URL=http://127.0.0.1:1"}, cmds: []badCmd{
			cmd(1, `127\.0\.0\.1:1.*refused|refused.*127\.0\.0\.1:1`, "commit", "--table", "{table}", "--partition", "{P}", "{dir}/a.csv"),
			cmd(1, `refused`, "ls", "--table", "{table}"),
			cmd(1, `refused`, "gc", "--table", "{table}"),
		}},
		{name: "store down for rollback and verify", minio: true, stress: true, env: []string{"AWS_ENDPOINT_URL=http://127.0.0.1:1"}, cmds: []badCmd{
			cmd(1, `refused`, "rollback", "--table", "{table}", "--partition", "{P}", "--to", "{G1}"),
			cmd(1, `refused`, "verify", "--table", "{table}"),
		}},
	}
	var n atomic.Int64
	forEachStore(t, func(t *testing.T, e0 *tableEnv) {
		runConcurrently(t, 4, cases, func(tc badCase) string { return tc.name }, func(t *testing.T, tc badCase) {
			if tc.minio && e0.kind != "minio" {
				t.Skip("S3 only")
			}
			if tc.stress && !stress() {
				t.Skip("slow; PSWAP_STRESS=1 runs it")
			}
			if tc.tampered && e0.kind != "file" && !stress() {
				t.Skip("metadata decoding does not depend on the store: file:// only (PSWAP_STRESS=1 runs it on MinIO too)")
			}
			e := e0.fresh(t)
			s := seedBad(t, e)
			if tc.tamper != nil {
				tc.tamper(t, e, s)
			}
			before := e.rawState(t)
			repl := strings.NewReplacer("{table}", e.url, "{P}", badP, "{Q}", badQ, "{G1}", s.g1, "{G2}", s.g2, "{dir}", s.dir)
			e.extraEnv = tc.env
			for _, c := range tc.cmds {
				args := make([]string, len(c.args))
				for i, a := range c.args {
					args[i] = repl.Replace(a)
				}
				r := e.runCLI(t, args...)
				n.Add(1)
				totals.badInputs.Add(1)
				what := strings.Join(args, " ")
				if r.elapsed > 5*time.Second {
					t.Logf("pswap %s took %s", what, r.elapsed.Round(time.Millisecond))
				}
				if r.code != c.code {
					t.Errorf("pswap %s: exit %d, want %d\nstderr: %s", what, r.code, c.code, r.stderr)
				}
				// verify names each mismatch in its report on stdout.
				out := r.stderr
				if c.code == 4 {
					out = r.stdout + r.stderr
				}
				if !regexp.MustCompile("(?is)" + c.stderr).MatchString(out) {
					t.Errorf("pswap %s: its output does not name the problem (want /%s/):\n%s", what, c.stderr, out)
				}
				// Errors go to stderr; only verify (its report) and gc
				// (the partial report of what it did) print on failure.
				if r.stdout != "" && r.code != 0 && r.code != 4 && args[0] != "gc" {
					t.Errorf("pswap %s: exit %d but printed on stdout: %s", what, r.code, r.stdout)
				}
				for _, sec := range []string{secret, os.Getenv("AWS_SECRET_ACCESS_KEY")} {
					if len(sec) >= 4 && strings.Contains(r.stdout+r.stderr, sec) {
						t.Errorf("pswap %s: a secret key appears in its output", what)
					}
				}
			}
			e.extraEnv = nil
			// A write that failed after it started uploading leaves its
			// attempt record, saying it failed (the audit's row of it:
			// TestAuditAttempts): that, and nothing else, may change.
			if after := e.rawState(t); !slices.Equal(withoutAttempts(before), withoutAttempts(after)) {
				t.Errorf("bad input changed the store:\nbefore %v\nafter  %v", before, after)
			}
			if !tc.tampered {
				e.check(t, checkOpts{expect: []string{badP, badQ}})
			}
			if e.kind == "minio" {
				if _, err := e.s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("pswap-no-such-bucket-7c1e")}); err == nil {
					t.Errorf("a command created the missing bucket")
				}
			}
		})
	})
	t.Logf("%d bad inputs tried: each its contract's exit status, an error naming the problem, no secret printed, nothing changed", n.Load())
}

// seedBad commits P twice and Q once, and writes the local inputs.
func seedBad(t *testing.T, e *tableEnv) *badSeed {
	t.Helper()
	s := &badSeed{dir: t.TempDir()}
	s.g1 = mustCommitRows(t, e.st, badP, 3, "g1", pswap.CommitOptions{RunID: "g1"}).Generation
	s.g2 = mustCommitRows(t, e.st, badP, 4, "g2", pswap.CommitOptions{RunID: "g2"}).Generation
	s.q = mustCommitRows(t, e.st, badQ, 5, "q", pswap.CommitOptions{RunID: "q"}).Generation
	writeCSVInput(t, s.dir, "a.csv", 3, "a")
	// A Parquet file whose footer is intact but whose snappy-compressed
	// pages are not.
	if err := os.WriteFile(filepath.Join(s.dir, "pages.parquet"), corruptPages(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	pagesOnce sync.Once
	pagesData []byte
)

// corruptPages returns a snappy-compressed Parquet file (staged by pswap
// from a CSV, on a scratch table) with bytes flipped inside its data
// pages; its footer is intact. Made once per run.
func corruptPages(t *testing.T) []byte {
	t.Helper()
	pagesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pswap-pages-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		f, err := os.Create(filepath.Join(dir, "big.csv"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, "id,note")
		for i := range 20000 {
			fmt.Fprintf(f, "%d,note-%d-%s\n", i, i%97, strings.Repeat("x", i%13))
		}
		f.Close()
		scratch := &tableEnv{url: "file://" + filepath.ToSlash(filepath.Join(dir, "t"))}
		if r := scratch.runCLI(t, "commit", "--table", scratch.url, "--partition", "dt=2000-01-01", filepath.Join(dir, "big.csv")); r.code != 0 {
			t.Fatalf("%d %s", r.code, r.stderr)
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "t", filepath.FromSlash(layout.GenerationsPrefix("dt=2000-01-01")), "*", "part-00000.parquet"))
		if len(matches) != 1 {
			t.Fatalf("staged files: %v", matches)
		}
		data, err := os.ReadFile(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		for i := 200; i < 2000 && i < len(data)/2; i += 5 {
			data[i] ^= 0x5a
		}
		pagesData = data
	})
	if pagesData == nil {
		t.Fatal("no corrupt Parquet file")
	}
	return pagesData
}

// rawState is the table seen from outside, for before/after comparisons:
// every key with its size, and the content hash of every JSON object.
func (e *tableEnv) rawState(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, o := range e.rawList(t) {
		s := fmt.Sprintf("%s (%d)", o.key, o.size)
		if strings.HasSuffix(o.key, ".json") {
			data, _ := e.rawRead(o.key)
			sum := sha256.Sum256(data)
			s += " " + hex.EncodeToString(sum[:6])
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Regression (fixed in cmd/pswap): when the whole collection failed before
// any partition was seen (access denied, store down, missing bucket),
// `pswap gc --json` exited 1 but printed a report whose totals.errors was 0
// ("partitions": [], "errors": 0), which a script reading the document
// takes for a clean run.
func TestGCJSONCountsAFailedListing(t *testing.T) {
	e := minioOnly(t)
	e.extraEnv = []string{"AWS_SECRET_ACCESS_KEY=wrong-Secret-Value-0123456789"}
	r := e.runCLI(t, "gc", "--table", e.url, "--json")
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout == "" {
		return
	}
	var doc struct {
		Totals struct {
			Errors int `json:"errors"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
	if doc.Totals.Errors == 0 {
		t.Fatalf("exit 1, but the JSON report says totals.errors = 0:\n%s", r.stdout)
	}
}

// withoutAttempts is a rawState without the attempt records (and the file
// store's lock files beside them).
func withoutAttempts(state []string) []string {
	return slices.DeleteFunc(slices.Clone(state), func(s string) bool { return strings.Contains(s, "/attempts/") })
}
