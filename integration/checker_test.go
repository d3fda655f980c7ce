package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// recorder is a testing.TB that records errors instead of failing, so that
// the checker itself can be tested: each tampering must be caught.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckerCatchesTampering: every invariant the checker defends fails
// the check when the store is tampered with behind pswap's back, and a
// clean table passes. Without this, a checker that sees nothing would make
// every other test here pass.
func TestCheckerCatchesTampering(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		const part = "dt=2026-11-29"
		for _, tc := range []struct {
			name   string
			duck   bool
			want   string // in the violation
			tamper func(t *testing.T, e *tableEnv, cur swap.FileRef)
		}{
			{"flipped byte", false, "checksum", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				data, _ := e.rawRead("sales/" + cur.Key)
				data[len(data)/2] ^= 0xff
				e.rawWrite(t, cur.Key, data)
			}},
			{"deleted file", false, "is missing", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				if err := e.st.Delete(ctx, cur.Key); err != nil {
					t.Fatal(err)
				}
			}},
			{"truncated file", false, "bytes, manifest says", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				data, _ := e.rawRead("sales/" + cur.Key)
				e.rawWrite(t, cur.Key, data[:len(data)-1])
			}},
			{"extra file in the generation", false, "does not name", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				e.rawWrite(t, strings.TrimSuffix(cur.Key, cur.Path)+"part-99999.parquet", []byte("PAR1"))
			}},
			{"object outside the root", false, "outside the table root", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				e.rawWrite(t, "../stray.json", []byte("{}"))
			}},
			{"sentinel changed", false, "sentinel", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				e.rawWrite(t, "../sales-x/dt=2026-11-29/_pswap/pointer.json", []byte("{}"))
			}},
			{"foreign key under the root", false, "not pswap's layout", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				e.rawWrite(t, part+"/data.csv", []byte("id\n1\n"))
			}},
			{"broken chain", false, "history", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				m, err := swap.ReadManifest(ctx, e.st, part, cur.Key[strings.Index(cur.Key, "/gen/")+5:][:36])
				if err != nil {
					t.Fatal(err)
				}
				if err := e.st.Delete(ctx, layout.ManifestKey(part, m.Parent)); err != nil {
					t.Fatal(err)
				}
				// A collected parent is fine; a parent that loops back is not.
				m2 := *m
				m2.Generation, m2.Parent = m.Parent, m.Generation
				data, err := manifest.Encode(&m2)
				if err != nil {
					t.Fatal(err)
				}
				e.rawWrite(t, layout.ManifestKey(part, m.Parent), data)
			}},
			{"multipart upload outside the root", false, "multipart upload", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				if e.kind != "minio" {
					t.Skip("S3 only")
				}
				if _, err := e.s3c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &e.bucket, Key: aws.String("lake/sales-x/big.parquet")}); err != nil {
					t.Fatal(err)
				}
			}},
			{"rows the files do not hold", true, "DuckDB counts", func(t *testing.T, e *tableEnv, cur swap.FileRef) {
				// A consistent manifest and pointer that overstate the rows:
				// only an independent reader notices.
				txn, err := swap.Begin(ctx, e.st, part, swap.Options{})
				if err != nil {
					t.Fatal(err)
				}
				data, _ := e.rawRead("sales/" + cur.Key)
				if _, err := e.st.Put(ctx, txn.DataPrefix()+"part-00000.parquet", data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				c := manifest.Content{ContentChecksum: "test-sum:" + strings.Repeat("ab", 16)}
				f := cur.File
				f.Rows++
				c.Add(f)
				if _, err := txn.Commit(ctx, c); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.duck && !duckAvailable() {
					t.Skip("DuckDB not installed")
				}
				e := e.fresh(t)
				mustCommitRows(t, e.st, part, 10, "a", pswap.CommitOptions{})
				r := mustCommitRows(t, e.st, part, 20, "b", pswap.CommitOptions{})
				mustCommitRows(t, e.st, "dt=2026-11-30", 5, "c", pswap.CommitOptions{})
				rec := &recorder{TB: t}
				e.check(rec, checkOpts{duck: tc.duck})
				if len(rec.errs) != 0 {
					t.Fatalf("clean table fails the check: %v", rec.errs)
				}
				snap, err := swap.Resolve(ctx, e.st, part)
				if err != nil || snap.Pointer.Generation != r.Generation {
					t.Fatal(err)
				}
				tc.tamper(t, e, snap.Files[0])
				rec = &recorder{TB: t}
				e.check(rec, checkOpts{duck: tc.duck})
				if len(rec.errs) == 0 || !strings.Contains(strings.Join(rec.errs, "\n"), tc.want) {
					t.Fatalf("tampering not caught (want %q): %v", tc.want, rec.errs)
				}
				totals.violations.Add(-int64(len(rec.errs))) // expected ones
			})
		}
	})
}

// fresh returns a new environment of the same kind as e.
func (e *tableEnv) fresh(t *testing.T) *tableEnv {
	switch e.kind {
	case "file":
		return newFileEnv(t)
	case "azurite":
		return newAzuriteEnv(t)
	}
	return newMinioEnv(t)
}

// TestCheckerSeesOutsideFileRoot: on file://, a write next to the lake (in
// the temporary directory that holds it) is caught too.
func TestCheckerSeesOutsideFileRoot(t *testing.T) {
	e := newFileEnv(t)
	mustCommitRows(t, e.st, "dt=2026-11-29", 3, "a", pswap.CommitOptions{})
	if err := os.WriteFile(filepath.Join(filepath.Dir(e.lake), "escaped.parquet"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	e.check(rec, checkOpts{})
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "../escaped.parquet") {
		t.Fatalf("got %v", rec.errs)
	}
	totals.violations.Add(-1)
}
