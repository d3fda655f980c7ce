package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// The secrets the sweep plants; none may appear in any output.
var sweepSecrets = []string{
	"AKIAUSERINFO0SWEEP",        // access key id in a URL's userinfo
	"TopSecretPw-userinfo-9876", // password in a URL's userinfo
	"envSecret-0123456789abcd",  // AWS_SECRET_ACCESS_KEY
	"sessTok-ABCDEFGHIJKLMNOP",  // AWS_SESSION_TOKEN
	"deadbeefcafe0123456789ff",  // a presigned URL's signature
	"pgUrlPw-Sweep-7788",        // password in a catalog URL's userinfo
	"pgPass-Sweep-0451",         // PGPASSWORD
	"catTok-Sweep-ABCDEF",       // PSWAP_CATALOG_TOKEN
	"catCredSecret-Sweep-1234",  // the secret of PSWAP_CATALOG_CREDENTIAL
}

// sweepInput is one bad input: extra environment and a table URL ("" for
// $PSWAP_TABLE only), plus extra arguments.
type sweepInput struct {
	name  string
	table string
	env   []string
	extra []string
}

// TestNoSecretInAnyOutput runs every command of pswap (as found in the
// command tree, so new commands are swept too) under each bad input, as a
// real process, and greps its stdout and stderr for every planted secret.
func TestNoSecretInAnyOutput(t *testing.T) {
	t.Parallel()
	bin := pswapBinary(t)
	dir := t.TempDir()
	input := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(input, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secretEnv := []string{
		"AWS_ACCESS_KEY_ID=AKIAEXAMPLEKEY0000", "AWS_SECRET_ACCESS_KEY=" + sweepSecrets[2],
		"AWS_SESSION_TOKEN=" + sweepSecrets[3], "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		// A dead endpoint (nothing listens on port 1), tried twice.
		"AWS_ENDPOINT_URL=http://127.0.0.1:1", "PSWAP_MAX_ATTEMPTS=2",
	}
	userinfo := sweepSecrets[0] + ":" + sweepSecrets[1] + "@"
	presigned := "https://b.s3.amazonaws.com/x.csv?X-Amz-Credential=" + sweepSecrets[0] +
		"&X-Amz-Security-Token=" + sweepSecrets[3] + "&X-Amz-Signature=" + sweepSecrets[4]
	inputs := []sweepInput{
		{name: "s3 userinfo", table: "s3://" + userinfo + "bucket/sales"},
		{name: "s3 userinfo, --json", table: "s3://" + userinfo + "bucket/sales", extra: []string{"--json"}},
		{name: "userinfo without password", table: "s3://" + sweepSecrets[1] + "@bucket/sales"},
		{name: "file userinfo", table: "file://" + userinfo + "localhost/tmp/sales"},
		{name: "userinfo in $PSWAP_TABLE", env: []string{"PSWAP_TABLE=s3://" + userinfo + "bucket/sales"}},
		{name: "dead endpoint, secret env", table: "s3://bucket/sales", env: secretEnv},
		{name: "dead endpoint, --debug", table: "s3://bucket/sales", env: secretEnv, extra: []string{"--debug"}},
		{name: "dead endpoint, --json", table: "s3://bucket/sales", env: secretEnv, extra: []string{"--json"}},
		{name: "presigned URL as input", table: "file://" + filepath.ToSlash(filepath.Join(dir, "t")), extra: []string{presigned}},
		{name: "mistyped scheme with userinfo", table: "s3:/" + userinfo + "bucket/sales", env: secretEnv},
		// A catalog nobody answers for (port 1), with its password in the
		// URL and in PGPASSWORD; the user "pswap" is no secret.
		{name: "postgres catalog password", table: "file://" + filepath.ToSlash(filepath.Join(dir, "t")), env: []string{
			"PSWAP_CATALOG=sql+postgres://pswap:" + sweepSecrets[5] + "@127.0.0.1:1/lake?catalog=lake&namespace=daily&table=sales",
			"PGPASSWORD=" + sweepSecrets[6]}},
		{name: "postgres catalog, PGPASSWORD", table: "file://" + filepath.ToSlash(filepath.Join(dir, "t")), env: []string{
			"PSWAP_CATALOG=sql+postgres://pswap@127.0.0.1:1/lake?catalog=lake&namespace=daily&table=sales",
			"PGPASSWORD=" + sweepSecrets[6]}, extra: []string{"--debug"}},
		{name: "REST catalog token and credential", table: "file://" + filepath.ToSlash(filepath.Join(dir, "t")), env: []string{
			"PSWAP_CATALOG=rest+http://127.0.0.1:1/cat?warehouse=w&namespace=daily&table=sales",
			"PSWAP_CATALOG_TOKEN=" + sweepSecrets[7], "PSWAP_CATALOG_CREDENTIAL=client-id:" + sweepSecrets[8]}, extra: []string{"--json"}},
	}
	if testenv.S3Enabled() {
		// A real server, wrong secret: access denied on every request.
		inputs = append(inputs, sweepInput{name: "wrong secret on MinIO", table: testenv.S3URL(t) + "/sweep/sales",
			env: []string{"AWS_ENDPOINT_URL=" + os.Getenv("AWS_ENDPOINT_URL"), "AWS_ACCESS_KEY_ID=" + os.Getenv("AWS_ACCESS_KEY_ID"),
				"AWS_REGION=" + os.Getenv("AWS_REGION"), "AWS_SECRET_ACCESS_KEY=" + sweepSecrets[2],
				"AWS_SESSION_TOKEN=" + sweepSecrets[3], "PSWAP_MAX_ATTEMPTS=1"},
			extra: []string{"--debug"}})
	}

	root := newRoot(&app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{},
		getenv: func(string) string { return "" }})
	var cmds []*cobra.Command
	for _, c := range root.Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			cmds = append(cmds, c)
		}
	}
	var mu sync.Mutex
	checked := 0
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, c := range cmds {
		for _, in := range inputs {
			args := sweepArgs(c, in, input)
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				cmd := exec.Command(bin, args...)
				cmd.Env = append(cleanEnv(), in.env...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				_ = cmd.Run()
				text := out.String()
				for _, s := range sweepSecrets {
					if strings.Contains(text, s) {
						t.Errorf("pswap %s (%s): output contains the secret %q:\n%s", strings.Join(args, " "), in.name, s, text)
					}
				}
				mu.Lock()
				checked++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if checked != len(cmds)*len(inputs) || len(cmds) < 10 {
		t.Fatalf("checked %d runs of %d commands x %d inputs", checked, len(cmds), len(inputs))
	}
	t.Logf("redaction sweep: %d commands x %d bad inputs = %d runs, no secret printed", len(cmds), len(inputs), checked)
}

// sweepArgs builds a command line that gets as far as the command allows
// with the input: the flags each command needs, taken from its flag set.
func sweepArgs(c *cobra.Command, in sweepInput, file string) []string {
	args := []string{c.Name()}
	if in.table != "" {
		args = append(args, "--table", in.table)
	}
	fl := c.Flags()
	if fl.Lookup("partition") != nil {
		args = append(args, "--partition", "dt=2026-11-29")
	}
	switch {
	case fl.Lookup("from") != nil:
		args = append(args, "--from", "2026-11-01", "--to", "2026-11-03")
	case fl.Lookup("to") != nil:
		args = append(args, "--to", "01a23181-7e71-7023-923d-5380f8a6a352")
	}
	args = append(args, in.extra...)
	if strings.Contains(c.Use, "PATH") && !strings.Contains(strings.Join(in.extra, " "), "https://") {
		args = append(args, file)
	}
	return args
}

// cleanEnv is the process environment without any AWS_ or PSWAP_
// variable, so that a developer's or CI's settings never mix in.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "PSWAP_") {
			out = append(out, kv)
		}
	}
	return append(out, "GORACE=atexit_sleep_ms=0", "AWS_EC2_METADATA_DISABLED=true")
}
