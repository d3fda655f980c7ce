package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/nodeenv"
	"github.com/pswap/pswap/internal/testing/srcdir"
)

// polarsDir is the folder of the Polars peer (package.json, write.mjs).
func polarsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(srcdir.Of(file), "polars")
}

// polarsAvailable reports whether node and nodejs-polars are installed
// (npm ci in bench/polars); only a missing node (nodeenv.ErrNoNode) lets
// the Polars test skip.
func polarsAvailable() error {
	_, err := nodeenv.Find(polarsDir(), "nodejs-polars")
	return err
}

// polarsResult is what write.mjs prints.
type polarsResult struct {
	Rows    int64   `json:"rows"`
	WriteMs float64 `json:"write_ms"`
	Bytes   int64   `json:"bytes"`
}

// polarsWrite has Polars read src into a DataFrame and write it to dst, and
// returns the time of writeParquet alone, measured inside node.
func polarsWrite(ctx context.Context, src, dst string) (time.Duration, polarsResult, error) {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, polarsResult{}, err
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(polarsDir(), "write.mjs"), src, dst)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, polarsResult{}, fmt.Errorf("polars: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r polarsResult
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, polarsResult{}, fmt.Errorf("polars: bad output %q: %w", out, err)
	}
	return time.Duration(r.WriteMs * float64(time.Millisecond)), r, nil
}

// The Polars peer writes the same rows: DuckDB reads back from Polars' file
// exactly the rows of the bench's generator.
func TestPolarsWritesTheBenchRows(t *testing.T) {
	nodeenv.Require(t, "Polars", polarsAvailable())
	duckcheck.SkipIfUnavailable(t)
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "duck.parquet"), filepath.Join(dir, "polars.parquet")
	const n = 20000
	if _, err := duckCopy(ctx, src, n); err != nil {
		t.Fatal(err)
	}
	d, r, err := polarsWrite(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows != n || r.Bytes <= 0 || d <= 0 {
		t.Fatalf("polars: %+v in %v", r, d)
	}
	res, err := duckcheck.Query(ctx, fmt.Sprintf(`SELECT count(*) AS n FROM (
		SELECT * FROM read_parquet(%s) EXCEPT ALL SELECT * FROM (%s)
		UNION ALL
		SELECT * FROM (%s) EXCEPT ALL SELECT * FROM read_parquet(%s))`,
		duckcheck.Quote(dst), SalesSQL(n), SalesSQL(n), duckcheck.Quote(dst)))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res[0]["n"]); got != "0" {
		t.Fatalf("%s rows differ between Polars' file and the generator", got)
	}
	cnt, err := duckcheck.Query(ctx, "SELECT count(*) AS n FROM read_parquet("+duckcheck.Quote(dst)+")")
	if err != nil || fmt.Sprint(cnt[0]["n"]) != fmt.Sprint(n) {
		t.Fatalf("count %v, %v", cnt, err)
	}
}
