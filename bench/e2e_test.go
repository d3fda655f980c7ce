package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pswap/pswap"
)

// endToEnd compares, round by round, pswap writing the rows from Go
// structs (encode, upload, commit) with the naive pipeline (DuckDB COPY to
// a local file, then one PutObject) and with one raw PutObject of pswap's
// own Parquet bytes.
func (r *reporter) endToEnd() {
	ctx, e, n := r.ctx, r.e, r.rows
	r.printf("\n## 1–3. End to end: %d rows from the producer to S3\n", n)
	haveDuck := r.needDuckDB()
	t, err := e.table(ctx, "e2e")
	if err != nil {
		r.t.Fatal(err)
	}
	r.duckFile = filepath.Join(r.tmp, "sales.parquet")
	var (
		pswapD, naiveD, copyD, putD, rawD []float64
		raw                               []byte
		last                              writeResult
	)
	for round := range r.rounds {
		for _, step := range rotate(3, round) {
			switch step {
			case 0:
				w, err := writeSales(ctx, t, e, fmt.Sprintf("dt=2026-11-29/round=%d", round), n, pswap.WriteOptions{})
				if err != nil {
					r.t.Fatalf("pswap write: %v", err)
				}
				pswapD = append(pswapD, w.dur.Seconds())
				last = w
				if raw == nil {
					if raw, err = readGeneration(ctx, t, fmt.Sprintf("dt=2026-11-29/round=%d", round)); err != nil {
						r.t.Fatal(err)
					}
				}
			case 1:
				if !haveDuck {
					continue
				}
				c, err := duckCopy(ctx, r.duckFile, n)
				if err != nil {
					r.t.Fatalf("DuckDB COPY: %v", err)
				}
				p, err := e.putFile(ctx, fmt.Sprintf("naive/round=%d/sales.parquet", round), r.duckFile)
				if err != nil {
					r.t.Fatalf("naive PUT: %v", err)
				}
				copyD, putD = append(copyD, c.Seconds()), append(putD, p.Seconds())
				naiveD = append(naiveD, (c + p).Seconds())
			case 2:
				// Round 0 runs pswap first (rotate), so raw holds its bytes.
				d, err := e.putBytes(ctx, fmt.Sprintf("raw/round=%d/sales.parquet", round), raw)
				if err != nil {
					r.t.Fatalf("raw PUT: %v", err)
				}
				rawD = append(rawD, d.Seconds())
			}
		}
	}
	tb := &Table{Header: []string{"pipeline", "seconds", "rows/s (median)", "Parquet size"}}
	tb.Add("pswap (Go structs → S3, atomic commit)", Summarize(pswapD).Format(2),
		rate(n, pswapD), mib(last.res.Bytes))
	if haveDuck {
		fi, _ := os.Stat(r.duckFile)
		tb.Add("naive: DuckDB COPY → local file", Summarize(copyD).Format(2), rate(n, copyD), mib(fi.Size()))
		tb.Add("naive: one PutObject of that file", Summarize(putD).Format(2), "", "")
		tb.Add("naive total", Summarize(naiveD).Format(2), rate(n, naiveD), "")
	}
	tb.Add("raw: one PutObject of pswap's bytes", Summarize(rawD).Format(2), "", mib(int64(len(raw))))
	r.table(tb)
	rt := &Table{Header: []string{"ratio (per round)", "median (min–max)", "goal"}}
	if haveDuck {
		rt.Add("pswap / naive", Summarize(Ratios(pswapD, naiveD)).Format(2), "≤ 0.80")
	}
	rt.Add("pswap / raw PUT", Summarize(Ratios(pswapD, rawD)).Format(2), "")
	r.table(rt)
	r.printf("pswap's requests for one write (last round): %s — %d files, %d rows.\n",
		reqString(last.reqs), last.res.Files, last.res.Rows)
	r.printf("The naive time counts DuckDB's COPY statement only (measured inside DuckDB, without its start-up) plus the PutObject.\n")
}

// rate is the median rows per second over durations in seconds.
func rate(n int64, secs []float64) string {
	s := Summarize(secs)
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%.2fM", float64(n)/s.Median/1e6)
}
