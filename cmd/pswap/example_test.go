package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// pswapMain runs one pswap command line in-process on a buffer, as a
// shell would run the binary, and returns its exit status and stdout.
func pswapMain(env map[string]string, args ...string) (int, string) {
	var out, errb strings.Builder
	a := &app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] }}
	return run(a, args), out.String()
}

// A daily load from a shell script: commit each day's file with the run's
// interval and run id; a retry is a no-op (exit status 0, changed=false);
// status finds the day that did not load, and --require-complete turns the
// gap into exit status 1.
func Example() {
	dir, _ := os.MkdirTemp("", "pswap-example")
	defer os.RemoveAll(dir)
	env := map[string]string{"PSWAP_TABLE": filepath.Join(dir, "lake", "sales")}
	for _, day := range []string{"2026-11-27", "2026-11-29"} {
		in := filepath.Join(dir, day+".csv")
		os.WriteFile(in, []byte("order_id,amount\n1,9.50\n2,3.25\n"), 0o644)
		code, _ := pswapMain(env, "commit", "--interval", day+"/P1D", "--run-id", "daily/"+day, in)
		fmt.Println("commit", day, "exit", code)
	}
	code, out := pswapMain(env, "commit", "--interval", "2026-11-29/P1D", "--run-id", "daily/2026-11-29", "--json",
		filepath.Join(dir, "2026-11-29.csv"))
	fmt.Println("retry exit", code, strings.Contains(out, `"changed": false`), strings.Contains(out, `"outcome": "same-run"`))

	_, out = pswapMain(env, "status", "--from", "2026-11-27", "--to", "2026-11-30", "--missing")
	fmt.Print("missing: ", out)
	code, _ = pswapMain(env, "status", "--from", "2026-11-27", "--to", "2026-11-30", "--require-complete")
	fmt.Println("require-complete exit", code)
	// Output:
	// commit 2026-11-27 exit 0
	// commit 2026-11-29 exit 0
	// retry exit 0 true true
	// missing: dt=2026-11-28
	// require-complete exit 1
}
