package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRESTCatalogSecrets: a REST catalog that refuses the credentials,
// and quotes them back in its error (the bearer token it was sent, the
// client secret, the token it issued itself), fails the publication with
// an error naming the refusal, exit 0 with published false, and no secret
// appears in pswap's output, with --json or --debug. (The real server's
// refusals are tested in package catalog; this one is hostile on purpose.)
func TestRESTCatalogSecrets(t *testing.T) {
	t.Parallel()
	const (
		token  = "bearerTok-7f3a9c2e11d0"
		secret = "clientSecret-5b8e4d6a90"
		issued = "issuedTok-c4e2a7f1b3d9"
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/oauth/tokens" {
			_ = r.ParseForm()
			if r.Form.Get("client_secret") == secret && r.Form.Get("client_id") == "good" {
				fmt.Fprintf(w, `{"access_token": %q, "token_type": "bearer"}`, issued)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error": "invalid_client", "error_description": "bad secret %s for %s"}`, r.Form.Get("client_secret"), r.Form.Get("client_id"))
			return
		}
		w.WriteHeader(http.StatusForbidden)
		msg, _ := json.Marshal("not allowed with " + r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"error": {"message": %s, "type": "ForbiddenException", "code": 403}}`, msg)
	}))
	defer srv.Close()
	bin := pswapBinary(t)
	dir := t.TempDir()
	input := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(input, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "rest+" + srv.URL + "/?namespace=db&table=sales"
	for i, c := range []struct {
		env   string
		extra []string
	}{
		{"PSWAP_CATALOG_TOKEN=" + token, []string{"--json"}},
		{"PSWAP_CATALOG_TOKEN=" + token, []string{"--debug"}},
		{"PSWAP_CATALOG_CREDENTIAL=bad:" + secret, []string{"--json"}},
		{"PSWAP_CATALOG_CREDENTIAL=good:" + secret, []string{"--debug"}},
	} {
		args := append([]string{"commit", "--table", filepath.Join(dir, fmt.Sprint("t", i)), "--partition", "dt=1", "--catalog", url}, c.extra...)
		cmd := exec.Command(bin, append(args, input)...)
		cmd.Env = append(cleanEnv(), c.env)
		out, err := cmd.CombinedOutput()
		text := string(out)
		if err != nil || !strings.Contains(text, "refused the credentials") {
			t.Errorf("%s pswap %s: %v, want exit 0 and the refusal named:\n%s", c.env, strings.Join(args, " "), err, text)
		}
		if c.extra[0] == "--json" && !strings.Contains(text, `"published": false`) {
			t.Errorf("%s: not published false:\n%s", c.env, text)
		}
		for _, s := range []string{token, secret, issued} {
			if strings.Contains(text, s) {
				t.Errorf("%s: the output shows the secret %q:\n%s", c.env, s, text)
			}
		}
	}
}
