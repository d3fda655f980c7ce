package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pswap/pswap"
)

// The conflict hint follows the one retry rule (docs/cli.md, "Exit status
// and retries"): a replace stops rather than replace the newer commit, while
// merge and append rebase, so re-running them is safe. It once told every
// command, merge included, to "re-run to replace it".
func TestConflictHintFollowsRetryRule(t *testing.T) {
	h := errorHint(fmt.Errorf("commit dt=2026-12-01: %w", pswap.ErrConflict), storeS3)
	for _, want := range []string{"stops rather than replace it", "pswap history", "merge and commit --append rebase", "re-running them is safe"} {
		if !strings.Contains(h, want) {
			t.Errorf("conflict hint %q lacks %q", h, want)
		}
	}
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "Exit status and retries") {
		t.Errorf("docs/cli.md has no \"Exit status and retries\" table for the hint to follow")
	}
}
