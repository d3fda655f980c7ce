package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

// commitsPerRound is how many commits each round of the commit overhead
// measures per file count.
const commitsPerRound = 5

// commitOverhead measures the commit alone (Begin + Commit: the pointer
// read, the manifest and the pointer swap) for generations of 1, 10 and
// 100 pre-staged files, counting the requests on the wire, next to a plain
// PutObject of a pointer-sized object in the same round. The staging of
// the files is neither timed nor counted.
func (r *reporter) commitOverhead() {
	ctx, e := r.ctx, r.e
	r.printf("\n## 5. Commit overhead\n")
	st, err := s3store.New(ctx, e.bucket, "commit", e.opts)
	if err != nil {
		r.t.Fatal(err)
	}
	tb := &Table{Header: []string{"files", "client", "requests per commit", "commit latency ms", "commit / plain PUT (per round)"}}
	small := make([]byte, 400)
	run := func(label string, files int, cold bool) {
		var lat, ratios []float64
		reqs := map[string]int{}
		count := 0
		for round := range r.rounds {
			var commitMs, putMs []float64
			for i := range commitsPerRound {
				s := store.Store(st)
				if cold {
					// A fresh store, as a new `pswap commit` process has:
					// its clock has not seen a server response yet.
					if s, err = s3store.New(ctx, e.bucket, "commit", e.opts); err != nil {
						r.t.Fatal(err)
					}
				}
				part := fmt.Sprintf("dt=2026-11-29/files=%d/client=%s", files, label)
				d, req, err := timedCommit(ctx, e, s, part, files, fmt.Sprintf("%d-%d", round, i))
				if err != nil {
					r.t.Fatal(err)
				}
				commitMs = append(commitMs, d.Seconds()*1000)
				for k, v := range req {
					reqs[k] += v
				}
				count++
				p, err := e.putBytes(ctx, fmt.Sprintf("plain/%s/%d/%d/%d", label, files, round, i), small)
				if err != nil {
					r.t.Fatal(err)
				}
				putMs = append(putMs, p.Seconds()*1000)
			}
			lat = append(lat, commitMs...)
			ratios = append(ratios, Summarize(commitMs).Median/Summarize(putMs).Median)
		}
		per := map[string]int{}
		var parts []string
		for k, v := range reqs {
			per[k] = v / count
			if v%count != 0 {
				parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(v)/float64(count)))
			}
		}
		desc := fmt.Sprintf("%.2f (%s)", float64(total(reqs))/float64(count), reqString(per))
		if len(parts) > 0 {
			desc += " uneven: " + strings.Join(parts, ", ")
		}
		tb.Add(fmt.Sprint(files), label, desc, Summarize(lat).Format(1), Summarize(ratios).Format(2))
	}
	for _, files := range []int{1, 10, 100} {
		run("warm", files, false)
	}
	run("cold", 1, true)
	r.table(tb)
	r.printf("warm: a long-lived store (library use); cold: a fresh store per commit, as in a new CLI process. " +
		"The plain PUT is one PutObject of 400 bytes on the same client. Goal: ≤ 3 requests beyond the data, independent of the file count.\n")
}

// timedCommit begins a transaction, stages n small files (untimed,
// uncounted) and commits: it returns the time and the requests of Begin
// plus Commit.
func timedCommit(ctx context.Context, e *s3env, st store.Store, part string, n int, seed string) (time.Duration, map[string]int, error) {
	before := e.http.Counts()
	start := time.Now()
	txn, err := swap.Begin(ctx, st, part, swap.Options{})
	if err != nil {
		return 0, nil, err
	}
	begin := time.Since(start)
	reqs := Diff(e.http.Counts(), before)
	var c manifest.Content
	h := sha256.New()
	for i := range n {
		body := fmt.Appendf(nil, "%s/%d/%s", seed, i, strings.Repeat("y", 100))
		name := fmt.Sprintf("part-%05d.parquet", i)
		if _, err := st.Put(ctx, txn.DataPrefix()+name, body, store.PutOptions{IfNoneMatch: true}); err != nil {
			return 0, nil, err
		}
		sum := sha256.Sum256(body)
		c.Add(manifest.File{Path: name, Size: int64(len(body)), Rows: 1, Checksum: manifest.SHA256Checksum(sum[:])})
		h.Write(body)
	}
	c.ContentChecksum = fmt.Sprintf("bench:%x", h.Sum(nil)[:16])
	before = e.http.Counts()
	start = time.Now()
	if _, err := txn.Commit(ctx, c); err != nil {
		return 0, nil, err
	}
	d := begin + time.Since(start)
	for k, v := range Diff(e.http.Counts(), before) {
		reqs[k] += v
	}
	return d, reqs, nil
}
