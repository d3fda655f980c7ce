package main

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// With no AWS credentials anywhere (no variables, no profile, and an
// instance metadata service that refuses, as on a laptop behind a proxy or
// a container without a role), the error says so and how to give them, not
// "access denied", and the SDK's "WARN falling back to IMDSv1" does not
// leak onto stderr. Nothing is sent to the S3 endpoint.
func TestNoCredentials(t *testing.T) {
	t.Parallel()
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer imds.Close()
	bin := pswapBinary(t)
	home := t.TempDir()
	for name, metadata := range map[string][]string{
		"imds-403":      {"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL},
		"imds-disabled": {"AWS_EC2_METADATA_DISABLED=true"},
	} {
		t.Run(name, func(t *testing.T) {
			var env []string
			for _, kv := range cleanEnv() {
				if !strings.HasPrefix(kv, "AWS_EC2_METADATA_DISABLED=") && !strings.HasPrefix(kv, "HOME=") {
					env = append(env, kv)
				}
			}
			env = append(env, metadata...)
			env = append(env, "HOME="+home, "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=http://127.0.0.1:1",
				"AWS_CONFIG_FILE="+home+"/none", "AWS_SHARED_CREDENTIALS_FILE="+home+"/none")
			for _, json := range []bool{false, true} {
				args := []string{"ls", "--table", "s3://bucket/sales"}
				if json {
					args = append(args, "--json")
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				var out, errb strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errb
				_ = cmd.Run()
				stderr := errb.String()
				if code := cmd.ProcessState.ExitCode(); code != exitFailure {
					t.Fatalf("exit %d, want 1: %s", code, stderr)
				}
				if strings.Contains(stderr, "IMDSv1") || strings.Contains(stderr, "WARN") {
					t.Errorf("the SDK's warning leaks: %s", stderr)
				}
				if !strings.Contains(stderr, "no AWS credentials found") || !strings.Contains(stderr, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
					t.Errorf("stderr does not say that no credentials were found and how to give them: %s", stderr)
				}
				if json && !strings.Contains(stderr, `"code": "no_credentials"`) {
					t.Errorf("--json: code is not no_credentials: %s", stderr)
				}
				if out.Len() != 0 {
					t.Errorf("stdout: %q", out.String())
				}
			}
		})
	}
}
