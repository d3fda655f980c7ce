package staging

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store/filestore"
)

// filesList renders the files of c under root as a DuckDB list literal.
func filesList(root string, c manifest.Content) string {
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, duckcheck.Quote(filepath.Join(root, filepath.FromSlash(testPrefix+f.Path))))
	}
	return "[" + strings.Join(paths, ", ") + "]"
}

// TestDuckDBReadsStagedFiles: DuckDB, an independent reader, sees the rows,
// sums, nulls, timestamps, decimals and types that were written, for both
// writers and several files.
func TestDuckDBReadsStagedFiles(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	ctx := context.Background()
	rows := makeRows(20000, 31)
	want := totalsOf(rows)
	for name, write := range map[string]func(*Stager) error{
		"structs": func(s *Stager) error { return Write(s, rows...) },
		"arrow": func(s *Stager) error {
			rec := toRecord(rows)
			defer rec.Release()
			return s.WriteRecord(rec)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fs, err := filestore.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := New(ctx, fs, testPrefix, Options{TargetFileSize: 256 << 10})
			if err := write(s); err != nil {
				t.Fatal(err)
			}
			c, err := s.Finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Files) < 2 {
				t.Fatalf("%d files, want several", len(c.Files))
			}
			src := "read_parquet(" + filesList(dir, c) + ", hive_partitioning = false)"
			res, err := duckcheck.Run(ctx, `SELECT count(*) AS n, sum(id) AS sid, sum(small) AS ss, sum(u) AS su,
				sum(price) AS sp, count(*) - count(score) AS nscore, count(*) - count(name) AS nname,
				epoch_us(min("at")) AS mina, epoch_us(max("at")) AS maxa, sum(score) AS sscore,
				count(*) FILTER (WHERE name = '') AS nempty FROM `+src,
				"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "+src+")")
			if err != nil {
				t.Fatal(err)
			}
			r := res.All[0][0]
			wantEmpty := 0
			for _, x := range rows {
				if x.Name != nil && *x.Name == "" {
					wantEmpty++
				}
			}
			expect := map[string]any{
				"n": fmt.Sprint(want.rows), "sid": fmt.Sprint(want.sumID), "ss": fmt.Sprint(want.sumSmall),
				"su": fmt.Sprint(want.sumU), "sp": fmt.Sprintf("%.2f", float64(want.sumPrice)/100),
				"nscore": fmt.Sprint(want.nullScores), "nname": fmt.Sprint(want.nullNames),
				"mina": fmt.Sprint(want.minAt), "maxa": fmt.Sprint(want.maxAt), "nempty": fmt.Sprint(wantEmpty),
			}
			for k, v := range expect {
				if fmt.Sprint(r[k]) != v {
					t.Errorf("%s = %v, want %v", k, r[k], v)
				}
			}
			if f, ok := r["sscore"].(float64); !ok || f-want.sumScore > 1e-6 || want.sumScore-f > 1e-6 {
				t.Errorf("sum(score) = %v, want %v", r["sscore"], want.sumScore)
			}

			var desc []string
			for _, x := range res.All[1] {
				desc = append(desc, fmt.Sprintf("%v %v", x["column_name"], x["column_type"]))
			}
			wantDesc := "id BIGINT, small TINYINT, u UINTEGER, f32 FLOAT, score DOUBLE, name VARCHAR, flag BOOLEAN, " +
				"at TIMESTAMP WITH TIME ZONE, day DATE, price DECIMAL(18,2), blob BLOB"
			if got := strings.Join(desc, ", "); got != wantDesc {
				t.Errorf("DuckDB sees\n%s\nwant\n%s", got, wantDesc)
			}
		})
	}
}

// TestDuckDBWrittenFileHasSameChecksum: a file DuckDB writes with the same
// values has the same content checksum as the rows written as structs.
func TestDuckDBWrittenFileHasSameChecksum(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "duck.parquet")
	_, err := duckcheck.Run(ctx, `COPY (SELECT * FROM (VALUES
		(1::BIGINT, 'ant', 1.5::DOUBLE, true, TIMESTAMPTZ '2026-11-29 10:00:00+00', DATE '2026-11-29'),
		(2::BIGINT, NULL, 2.25::DOUBLE, false, TIMESTAMPTZ '2026-11-29 10:00:00.5+00', NULL),
		(NULL, 'b,e"e', NULL, true, TIMESTAMPTZ '2026-11-29 12:00:00+00', DATE '2026-11-30')
	) AS t(id, name, score, flag, "at", day)) TO `+duckcheck.Quote(path)+` (FORMAT parquet)`)
	if err != nil {
		t.Fatal(err)
	}
	_, want := stageTextStructs(t)
	st, s := newMem(t, Options{})
	if err := s.AddParquetFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	got := finish(t, s)
	checkContentBy(t, st, got, 3, "")
	if got.Schema != want.Schema || got.ContentChecksum != want.ContentChecksum {
		t.Errorf("DuckDB file: schema\n%s\nchecksum %s\nwant\n%s\n%s", got.Schema, got.ContentChecksum, want.Schema, want.ContentChecksum)
	}
}
