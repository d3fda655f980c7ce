package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pswap/pswap/swap"
)

// TestRetryDefaultsDocumented: the CLI's retry bounds and the library's
// differ on purpose (issue 40 item 9); --help and the README state both,
// as the code has them.
func TestRetryDefaultsDocumented(t *testing.T) {
	lib := swap.Options{}.WithDefaults()
	root := newRoot(&app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{},
		getenv: func(string) string { return "" }})
	f := root.PersistentFlags().Lookup("max-attempts")
	if f.DefValue != fmt.Sprint(defaultMaxAttempts) {
		t.Errorf("--max-attempts default %s, want %d", f.DefValue, defaultMaxAttempts)
	}
	for _, want := range []string{"capped at " + maxRetryDelay.String(), fmt.Sprintf("library's defaults are %d attempts and a %s cap", lib.MaxAttempts, lib.MaxDelay)} {
		if !strings.Contains(f.Usage, want) {
			t.Errorf("--max-attempts help %q does not say %q", f.Usage, want)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{
		fmt.Sprintf("default %d) |", defaultMaxAttempts),
		fmt.Sprintf("Backoff is capped at %d s", int(maxRetryDelay.Seconds())),
		fmt.Sprintf("`CommitOptions` retries %d times with backoff capped at %d s", lib.MaxAttempts, int(lib.MaxDelay.Seconds())),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
