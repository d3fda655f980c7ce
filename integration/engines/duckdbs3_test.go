package engines

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// TestFilesDuckDBOverS3: the SQL of `pswap files --format duckdb` on an
// s3:// table runs in DuckDB (httpfs, the credential chain from the
// environment) against MinIO to exactly the rows pswap lists, and never
// holds the secret.
func TestFilesDuckDBOverS3(t *testing.T) {
	if !testenv.S3Enabled() {
		t.Skip("S3 tests need MinIO: run scripts/test.sh")
	}
	url := testenv.S3URL(t)
	tb := &table{t: t, store: "minio", url: url, root: url, dir: t.TempDir()}
	data := filepath.Join(repoRoot(), "examples", "data")
	for _, d := range []string{"2026-11-27", "2026-11-28", "2026-11-29"} {
		tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
	}
	cur := tb.record("three days")
	sql := tb.run("files", "--format", "duckdb")
	if secret := os.Getenv("AWS_SECRET_ACCESS_KEY"); secret == "" || strings.Contains(sql, secret) {
		t.Fatalf("files --format duckdb printed the secret key (or there is none to test with)")
	}
	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	run := `import duckdb, json, sys
con = duckdb.connect()
stmts = [s for s in sys.stdin.read().split(";") if s.strip()]
for s in stmts[:-1]:
    con.execute(s)
rows = con.execute(stmts[-1]).fetch_arrow_table().to_pylist()
print(json.dumps([{k: str(v) for k, v in r.items()} for r in rows]))
`
	cmd := exec.Command(filepath.Join(dir, "venv", "bin", "python"), "-c", run)
	cmd.Env = append(os.Environ(), "HOME="+duckHome(t), "TZ=UTC")
	cmd.Stdin = strings.NewReader(sql)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB running pswap files --format duckdb: %v\n%s\nSQL:\n%s", err, tail(stderr.String(), 2000), sql)
	}
	var rows []map[string]string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	var want int
	for _, f := range cur.files {
		want += int(f.Rows)
	}
	perDay := map[string]int{}
	for _, r := range rows {
		perDay[r["dt"]]++
	}
	if len(rows) != want || len(cur.rows) != want || len(perDay) != 3 {
		t.Fatalf("DuckDB read %d rows over %d days (%v), want %d over 3", len(rows), len(perDay), perDay, want)
	}
}
