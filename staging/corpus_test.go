package staging

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store/filestore"
)

//go:generate go run ./internal/corpusgen testdata/corpus

// corpusRefused lists the corpus files that must be refused, and how.
var corpusRefused = map[string]error{
	"rle-dict-uncompressed-corrupt-checksum.parquet": ErrPageChecksum,
}

// corpusNoHyparquet and corpusNoDuckDB list files that reader cannot
// read (its own limits, not the file's).
var (
	corpusNoHyparquet = map[string]string{
		"datapage_v2_empty_datapage.snappy.parquet": "invalid snappy length header (it decompresses the empty page)",
	}
	corpusNoDuckDB = map[string]string{
		"map_no_value.parquet": "MAP_KEY_VALUE requires two children",
	}
)

type corpusCase struct {
	name, path     string
	dataset        string // for generated files: rows equal across the dataset
	writer, feat   string
	content        manifest.Content
	staged         string // the staged copy
	err            error
	codecs, encods string
}

// TestCorpus ingests every file of testdata/corpus (the same rows written
// by DuckDB, Arrow, parquet-go and Polars in every codec, encoding and page
// version: see internal/corpusgen) and testdata/parquet-testing (files of
// other writers, from Apache's conformance corpus), commits each through
// a Stager on a file store, and reads the staged copy back with DuckDB and
// hyparquet: the row counts agree, and the files of one dataset have one
// content checksum in pswap and one row checksum in hyparquet.
// PSWAP_CORPUS_TABLE=1 prints the corpus table.
func TestCorpus(t *testing.T) {
	ctx := context.Background()
	var cases []*corpusCase
	for _, d := range []string{"testdata/corpus", "testdata/parquet-testing"} {
		paths, err := filepath.Glob(filepath.Join(d, "*.parquet"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no corpus in %s: %v", d, err)
		}
		for _, p := range paths {
			c := &corpusCase{name: filepath.Base(p), path: p, writer: "other (parquet-testing)", feat: strings.TrimSuffix(filepath.Base(p), ".parquet")}
			if parts := strings.Split(c.name, "."); d == "testdata/corpus" && len(parts) == 4 {
				c.dataset, c.writer, c.feat = parts[0], parts[1], parts[2]
			}
			cases = append(cases, c)
		}
	}
	dir := t.TempDir()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		c.codecs, c.encods = footerFacts(c.path)
		prefix := fmt.Sprintf("dt=corpus/_pswap/gen/%04d/", i)
		s := New(ctx, fs, prefix, Options{})
		if c.err = s.AddParquetFile(ctx, c.path); c.err != nil {
			if want, ok := corpusRefused[c.name]; !ok || !errors.Is(c.err, want) {
				t.Errorf("%s: %v", c.name, c.err)
			} else if !strings.Contains(c.err.Error(), c.name) {
				t.Errorf("%s: error does not name the file: %v", c.name, c.err)
			}
			continue
		}
		if _, refuse := corpusRefused[c.name]; refuse {
			t.Errorf("%s: accepted, want %v", c.name, corpusRefused[c.name])
		}
		if c.content, err = s.Finish(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(c.content.Files) == 1 {
			c.staged = filepath.Join(dir, filepath.FromSlash(prefix+c.content.Files[0].Path))
		}
	}
	// Generated datasets: one checksum per dataset.
	sums := map[string]map[string][]string{}
	for _, c := range cases {
		if c.dataset == "" || c.err != nil {
			continue
		}
		if sums[c.dataset] == nil {
			sums[c.dataset] = map[string][]string{}
		}
		sums[c.dataset][c.content.ContentChecksum] = append(sums[c.dataset][c.content.ContentChecksum], c.name)
	}
	for ds, m := range sums {
		if len(m) != 1 {
			t.Errorf("dataset %s has %d content checksums: %v", ds, len(m), m)
		}
	}
	if len(sums) < 2 {
		t.Errorf("%d generated datasets, want nested and flat", len(sums))
	}

	// Independent readers, on the staged copies.
	var staged []*corpusCase
	for _, c := range cases {
		if c.staged != "" {
			staged = append(staged, c)
		} else if c.err == nil && c.content.Rows != 0 {
			t.Errorf("%s: %d rows but %d files", c.name, c.content.Rows, len(c.content.Files))
		}
	}
	if err := duckcheck.Available(); err != nil {
		t.Skipf("skipping the independent readers: %v", err)
	}
	var sql []string
	var duck []*corpusCase
	for _, c := range staged {
		if _, no := corpusNoDuckDB[c.name]; no {
			continue
		}
		duck = append(duck, c)
		sql = append(sql, "SELECT count(*) AS n FROM read_parquet("+duckcheck.Quote(c.staged)+", hive_partitioning = false)")
	}
	res, err := duckcheck.Run(ctx, sql...)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range duck {
		if got := res.All[i][0]["n"]; got != fmt.Sprint(c.content.Rows) {
			t.Errorf("%s: DuckDB counts %v rows, pswap %d", c.name, got, c.content.Rows)
		}
	}
	duckcheck.SkipIfHyparquetUnavailable(t)
	paths := make([]string, len(staged))
	for i, c := range staged {
		paths[i] = c.staged
	}
	files, errs, err := duckcheck.ReadParquetFiles(ctx, paths...)
	if err != nil {
		t.Fatal(err)
	}
	hsums := map[string]map[string][]string{}
	for i, c := range staged {
		if errs[i] != nil {
			if _, known := corpusNoHyparquet[c.name]; !known {
				t.Errorf("%s: %v", c.name, errs[i])
			}
			continue
		}
		if n := int64(len(files[i].Rows)); n != c.content.Rows || files[i].NumRows != c.content.Rows {
			t.Errorf("%s: hyparquet reads %d rows (footer %d), pswap %d", c.name, n, files[i].NumRows, c.content.Rows)
		}
		if c.dataset != "" {
			if hsums[c.dataset] == nil {
				hsums[c.dataset] = map[string][]string{}
			}
			sum := files[i].Checksum()
			hsums[c.dataset][sum] = append(hsums[c.dataset][sum], c.name)
		}
	}
	for ds, m := range hsums {
		if len(m) != 1 {
			t.Errorf("hyparquet: dataset %s has %d row checksums: %v", ds, len(m), m)
		}
	}
	if os.Getenv("PSWAP_CORPUS_TABLE") != "" {
		sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
		fmt.Println("| file | writer | feature | codec | encodings | pswap | rows |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, c := range cases {
			outcome := "ok"
			if c.err != nil {
				outcome = "refused: " + c.err.Error()
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %d |\n", c.name, c.writer, c.feat, c.codecs, c.encods, outcome, c.content.Rows)
		}
	}
}

// footerFacts lists the codecs and encodings a file's footer names.
func footerFacts(path string) (codecs, encodings string) {
	f, err := os.Open(path)
	if err != nil {
		return "?", "?"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "?", "?"
	}
	r, err := pqscan.Open(f, fi.Size())
	if err != nil {
		return "?", "?"
	}
	defer r.Close()
	cs, es := map[string]bool{}, map[string]bool{}
	md := r.MetaData()
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				continue
			}
			cs[strings.ToLower(cc.Compression().String())] = true
			for _, e := range cc.Encodings() {
				es[e.String()] = true
			}
		}
	}
	return joinKeys(cs), joinKeys(es)
}

func joinKeys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}
