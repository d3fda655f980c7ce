package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap/catalog"
)

// TestRedactSecretsOnly: the redactor replaces passwords, tokens and
// signatures, and never a user name, an ordinary word or a run id, whatever
// the URLs in the arguments and environment name (issue 40 item 1).
func TestRedactSecretsOnly(t *testing.T) {
	for _, user := range []string{"pswap", "lake", "daily"} {
		t.Run(user, func(t *testing.T) {
			env := map[string]string{
				envCatalog:   "sql+postgres://" + user + "@db.internal:5432/lake?catalog=lake&namespace=daily&table=sales_pg",
				envTable:     "s3://lake/daily/sales_pg",
				"PGUSER":     user,
				"PGPASSWORD": "pg-Pass-0451",
			}
			args := []string{"commit", "--table", "file:///data/" + user + "/sales_pg", "--run-id", "backfill@2026-11-28",
				"--catalog", "sql+postgres://" + user + "@db.internal/lake", "--partition", "dt=2026-11-27", user + "@2026-11-27.csv"}
			red := newRedactor(func(k string) string { return env[k] }, args)
			// Output that names the user everywhere, and must pass unchanged.
			for _, in := range []string{
				"pswap: note: created a new table at file:///data/" + user + "/sales_pg",
				`{"table": "s3://lake/` + user + `/sales_pg", "run_id": "` + user + `/2026-11-27"}`,
				"dt=2026-11-27/_pswap/gen/01a2/part-00000.parquet",
				"unchanged dt=2026-11-27: run \"backfill@2026-11-28\" already committed",
				"--catalog sql+postgres://user@host:port/dbname and sql+postgres://" + user + "@db.internal:5432/lake",
				"daily lake pswap " + user + "@2026-11-27.csv",
			} {
				if got := red.String(in); got != in {
					t.Errorf("redact(%q) = %q: changed output that holds no secret", in, got)
				}
			}
			// Secrets still go.
			for in, want := range map[string]string{
				"connect: password pg-Pass-0451 refused":                 "connect: password [REDACTED] refused",
				"sql+postgres://" + user + ":hunter22@db/lake?x=1":       "sql+postgres://" + user + ":[REDACTED]@db/lake?x=1",
				"https://" + user + ":pw@host/x":                         "https://" + user + ":[REDACTED]@host/x",
				"s3://AKIAFAKEKEY0:SecretKey9@bucket/x":                  "s3://[REDACTED]@bucket/x",
				"GET /x?X-Amz-Signature=abc123&X-Amz-Date=20261127":      "GET /x?X-Amz-Signature=[REDACTED]&X-Amz-Date=20261127",
				"sql+postgres://" + user + ":[REDACTED]@db already done": "sql+postgres://" + user + ":[REDACTED]@db already done",
			} {
				if got := red.String(in); got != want {
					t.Errorf("redact(%q) = %q, want %q", in, got, want)
				}
			}
		})
	}
}

// TestRedactURLPasswords: the password of a URL among the arguments is
// replaced wherever it appears (also alone, and percent-decoded), its user
// never; for a store's scheme the whole userinfo is a key pair.
func TestRedactURLPasswords(t *testing.T) {
	args := []string{
		"--catalog=sql+postgres://lake:Pa%2Fss-w0rd@db/x",
		"--table", "s3:/AKIAMISTYPED1:MistypedSecret@bucket/x", // mistyped scheme
		"rest+https://daily:RestSecret77@cat/x",
		"s3://lake@bucket/x", // too short for a key: a typo, not a secret
	}
	red := newRedactor(func(string) string { return "" }, args)
	for in, want := range map[string]string{
		"wrong password Pa/ss-w0rd for lake":      "wrong password [REDACTED] for lake",
		"wrong password Pa%2Fss-w0rd for lake":    "wrong password [REDACTED] for lake",
		"daily RestSecret77":                      "daily [REDACTED]",
		"bucket AKIAMISTYPED1:MistypedSecret@b":   "bucket [REDACTED]@b",
		"key AKIAMISTYPED1 secret MistypedSecret": "key [REDACTED] secret [REDACTED]",
		"the lake holds lake@bucket":              "the lake holds lake@bucket",
	} {
		if got := red.String(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := red.String("s3://lake@bucket/x"); !strings.Contains(got, "s3://[REDACTED]@bucket") {
		t.Errorf("redact(s3://lake@bucket/x) = %q: a store URL's userinfo is shown", got)
	}
}

// TestOutputSameWithCatalogVariable runs every command of pswap (each as
// text and --json, and its --help) on a table whose path, run ids and
// catalog all name the users "pswap", "lake" and "daily", once without
// $PSWAP_CATALOG and once with it set to a PostgreSQL catalog of each user
// (plus $PGPASSWORD): the output must be byte-identical, and hold no
// [REDACTED] at all, since none of it is a secret (issue 40 item 1).
// Commands that take --catalog are given a SQLite catalog on the command
// line in every run, so the variable changes nothing but what the
// redactor knows; every case runs once before the comparison, so that
// commands that write (commit, rollback, merge) compare their no-op repeat.
func TestOutputSameWithCatalogVariable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pswap", "lake", "daily")
	table := "file://" + filepath.ToSlash(filepath.Join(dir, "sales_pg"))
	cat := "sql+sqlite://" + filepath.Join(dir, "cat.db") + "?catalog=lake&namespace=daily&table=sales_pg&create-namespace=true"
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("pswap@a.csv", "id,v\n1,lake\n2,daily\n")
	b := write("b.csv", "id,v\n3,pswap\n")
	m := write("m.csv", "id,v\n1,merged\n")
	base := map[string]string{}
	must := func(args ...string) string {
		t.Helper()
		code, out, errOut := invoke(t, base, "", args...)
		if code != exitOK {
			t.Fatalf("pswap %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	must("commit", "--table", table, "--partition", "dt=2026-11-27", "--run-id", "daily/2026-11-27", "--catalog", cat, a)
	var first resultJSON
	if err := json.Unmarshal([]byte(must("show", "--table", table, "--partition", "dt=2026-11-27", "--json")), &first); err != nil {
		t.Fatal(err)
	}
	must("commit", "--table", table, "--partition", "dt=2026-11-27", "--run-id", "backfill@2026-11-28", "--catalog", cat, b)
	must("commit", "--table", table, "--partition", "dt=2026-11-28", "--run-id", "lake@2026-11-28", "--catalog", cat, b)

	cases := [][]string{
		{"ls"},
		{"show", "--partition", "dt=2026-11-27"},
		{"files"},
		{"files", "--format", "uris"},
		{"history", "--partition", "dt=2026-11-27"},
		{"status", "--from", "2026-11-26", "--to", "2026-11-30"},
		{"verify"},
		{"audit"},
		{"gc", "--dry-run", "--catalog", cat},
		{"publish", "--catalog", cat},
		{"commit", "--partition", "dt=2026-11-27", "--run-id", "backfill@2026-11-28", "--catalog", cat, b},
		{"commit", "--partition", "dt=2026-11-29", "--run-id", "pswap@2026-11-29", "--catalog", cat, a},
		{"rollback", "--partition", "dt=2026-11-27", "--to", first.Generation, "--run-id", "daily@rollback", "--catalog", cat},
		{"merge", "--key", "id", "--partition", "dt=2026-11-28", "--run-id", "lake@merge", "--catalog", cat, m},
		{"stage", "--partition", "dt=2026-11-30", a},
		{"views"},
		{"version"},
	}
	// Every command is among the cases, so that a new one is compared too.
	root := newRoot(&app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{},
		getenv: func(string) string { return "" }})
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !slices.ContainsFunc(cases, func(args []string) bool { return args[0] == c.Name() }) {
			t.Errorf("command %s is not among the cases", c.Name())
		}
		cases = append(cases, []string{c.Name(), "--help"})
	}
	// stage's generation id is new on every run: the one field compared
	// apart from the bytes.
	genID := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}`)
	for _, args := range cases {
		for _, asJSON := range []bool{false, true} {
			args := append([]string{args[0], "--table", table}, args[1:]...)
			if asJSON {
				args = append(args, "--json")
			}
			name := strings.Join(args, " ")
			run := func(env map[string]string) string {
				code, out, errOut := invoke(t, env, "", args...)
				text := fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
				if args[0] == "stage" {
					text = genID.ReplaceAllString(text, "GEN")
				}
				return text
			}
			run(base) // commands that write do it here; the runs below repeat them
			want := run(base)
			if strings.Contains(want, redacted) || !strings.HasPrefix(want, "exit 0\n") {
				t.Errorf("pswap %s:\n%s", name, want)
				continue
			}
			for _, user := range []string{"pswap", "lake", "daily"} {
				env := map[string]string{
					envCatalog:       "sql+postgres://" + user + "@db.internal:5432/lake?catalog=lake&namespace=daily&table=sales_pg",
					"PGUSER":         user,
					"PGPASSWORD":     "pg-Pass-0451-" + user,
					catalog.EnvToken: "catalog-Token-0451",
				}
				if got := run(env); got != want {
					t.Errorf("pswap %s: the output differs with $%s of user %s:\n--- without\n%s\n--- with\n%s", name, envCatalog, user, want, got)
				}
			}
		}
	}
}

// FuzzRedactURLPassword: the password of a catalog URL among the
// arguments never survives redaction, and its user name always does.
func FuzzRedactURLPassword(f *testing.F) {
	f.Add("pswap", "hunter22", "sql+postgres")
	f.Add("lake", "Pa55word", "rest+https")
	f.Add("daily", "s3cr3tToken", "https")
	alnum := func(s string) bool {
		return s != "" && strings.TrimFunc(s, func(r rune) bool {
			return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		}) == ""
	}
	f.Fuzz(func(t *testing.T, user, pass, scheme string) {
		if !alnum(user) || !alnum(pass) || len(pass) < minSecret || strings.Contains(user, pass) || strings.Contains(pass, user) ||
			!isURLScheme(scheme) || !hasUsers(scheme) {
			return
		}
		red := newRedactor(func(string) string { return "" }, []string{"--catalog", scheme + "://" + user + ":" + pass + "@db.internal/lake"})
		for _, msg := range []string{"password " + pass + " refused", scheme + "://" + user + ":" + pass + "@h/x", "x" + pass + "y"} {
			if out := red.String(msg); strings.Contains(out, pass) {
				t.Fatalf("redact(%q) = %q: the password survived", msg, out)
			}
		}
		if msg := "user " + user + " at " + scheme + "://" + user + "@h/" + user; red.String(msg) != msg {
			t.Fatalf("redact(%q) = %q: a user name was replaced", msg, red.String(msg))
		}
	})
}

// TestRedactGCSCredentials: the shapes of Google Cloud credentials go (an
// access token, a signed URL's signature and credential, a resumable upload
// session id, a key file's private key), and so does userinfo pasted into a
// gs:// URL, while a gs:// table URL and the names around it stay.
func TestRedactGCSCredentials(t *testing.T) {
	red := newRedactor(func(string) string { return "" }, []string{"--table", "gs://sa-key:Secret-0451@lake/sales"})
	for in, want := range map[string]string{
		"Authorization: Bearer ya29.a0AfB_byC-x.y_z":                          "Authorization: [REDACTED]",
		"token ya29.a0AfB_byC-x.y_z expired":                                  "token [REDACTED] expired",
		"GET /lake/o?X-Goog-Signature=0a1b2c&X-Goog-Credential=sa%40p&x=1":    "GET /lake/o?X-Goog-Signature=[REDACTED]&X-Goog-Credential=[REDACTED]&x=1",
		"PUT /upload/storage/v1/b/lake/o?uploadType=resumable&upload_id=ADPy": "PUT /upload/storage/v1/b/lake/o?uploadType=resumable&upload_id=[REDACTED]",
		`{"type": "service_account", "private_key_id": "abc123", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}`: `{"type": "service_account", "private_key_id": "[REDACTED]", "private_key": "[REDACTED]"}`,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----":                                                                     "[REDACTED]",
		"open gs://sa-key:Secret-0451@lake/sales":                                                                                                  "open gs://[REDACTED]@lake/sales",
		"password Secret-0451 quoted alone":                                                                                                        "password [REDACTED] quoted alone",
	} {
		if got := red.String(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{
		"pswap: note: created a new table at gs://lake/daily/sales",
		"gcs request method=PUT host=storage.googleapis.com path=/upload/storage/v1/b/lake/o status=200",
		"dt=2026-11-27/_pswap/gen/01a2/part-00000.parquet ya29 yak.ya29",
	} {
		if got := red.String(in); got != in {
			t.Errorf("redact(%q) = %q: changed output that holds no secret", in, got)
		}
	}
}
