package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/s3store"
)

func init() { registerCommand(newFilesCmd) }

type filesCmd struct {
	*app
	sel    selector
	format string
}

func newFilesCmd(a *app) *cobra.Command {
	c := &filesCmd{app: a}
	cmd := &cobra.Command{
		Use:   "files [--partition KEY | --interval START/END] [--format uris|json|duckdb]",
		Short: "List the data files of the current generation(s), for query engines",
		Long: `List the data files of the current generation of a partition, of every
partition of an interval (partitions with no data are skipped), or of the
whole table. The list comes from the manifests, never from listing data
prefixes, so it is exactly one complete generation per partition.

Formats:
  uris    one location per line (default), as engines open it: s3://bucket/key
          and file:///path with the key as stored (a partition folder such
          as region=eu%2Fwest is not encoded a second time)
  json    a JSON document (the same as --json)
  duckdb  a DuckDB query over the files, ready to pipe into the duckdb CLI:
          SELECT * FROM read_parquet([...], hive_partitioning = true,
          union_by_name = true); for an s3:// table it first loads httpfs
          and creates a secret for the bucket from the AWS credential chain
          (with the region, and the endpoint and URL style of a custom
          endpoint such as MinIO). No credential is printed.`,
		Example: `  pswap files --table s3://lake/sales --partition dt=2026-11-29
  pswap files --table ./lake/sales --interval 2026-11-01/2026-12-01 --format duckdb | duckdb
  pswap files --table s3://lake/sales --json`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	c.sel.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&c.format, "format", "f", "uris", "output format: uris, json or duckdb")
	return cmd
}

// fileJSON is one data file in the --json document of files.
type fileJSON struct {
	Partition  string `json:"partition"`
	Generation string `json:"generation"`
	Path       string `json:"path"`
	URI        string `json:"uri"`
	Size       int64  `json:"size"`
	Rows       int64  `json:"rows"`
	Checksum   string `json:"checksum"`
}

// filesJSON is the --json document of files.
type filesJSON struct {
	Table      string     `json:"table"`
	Partitions []string   `json:"partitions"`
	Rows       int64      `json:"rows"`
	Bytes      int64      `json:"bytes"`
	Files      []fileJSON `json:"files"`
}

func (c *filesCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	format := strings.ToLower(c.format)
	switch format {
	case "uris", "json", "duckdb":
	default:
		return usagef("unknown --format %q (want uris, json or duckdb)", c.format)
	}
	if c.json {
		format = "json"
	}
	keys, err := c.sel.keys()
	if err != nil {
		return err
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		if !c.sel.given() {
			if keys, err = t.Partitions(ctx, ""); err != nil {
				return err
			}
		}
		snaps, err := mapOrdered(ctx, keys, readConcurrency, func(ctx context.Context, k string) (*pswap.Snapshot, error) {
			part, err := t.Partition(k)
			if err != nil {
				return nil, err
			}
			s, err := part.Current(ctx)
			if errors.Is(err, pswap.ErrNoData) {
				// Not committed: a gap in a range, or the one partition
				// asked for. One rule for --partition and --interval: an
				// empty selection of an existing table is an answer
				// (exit 0), noted on stderr.
				return nil, nil
			}
			return s, err
		})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(snaps, func(s *pswap.Snapshot) bool { return s != nil }) {
			if err := c.checkTable(ctx, t); err != nil {
				return err
			}
			defer c.noteEmpty(c.sel.note())
		}
		doc := filesJSON{Table: c.tableURL(), Partitions: []string{}, Files: []fileJSON{}}
		for _, s := range snaps {
			if s == nil {
				continue
			}
			m := s.Manifest
			doc.Partitions = append(doc.Partitions, m.Partition)
			doc.Rows += m.Rows
			doc.Bytes += m.Bytes
			for _, f := range s.Files {
				doc.Files = append(doc.Files, fileJSON{Partition: m.Partition, Generation: m.Generation,
					Path: f.Key, URI: f.URI, Size: f.Size, Rows: f.Rows, Checksum: f.Checksum})
			}
		}
		switch format {
		case "json":
			return printJSON(c.stdout, doc)
		case "duckdb":
			if len(doc.Files) == 0 {
				// Like the other formats: nothing to print (noted on
				// stderr), so that "| duckdb" runs nothing.
				return nil
			}
			_, err := fmt.Fprint(c.stdout, duckdbS3Setup(t)+duckdbQuery(doc.Files))
			return err
		}
		for _, f := range doc.Files {
			fmt.Fprintln(c.stdout, engineLocation(f.URI))
		}
		return nil
	})
}

// engineLocation returns the location a query engine opens for a file's
// URI: a file:// URI's path behind "file://", not percent-encoded, which is
// what DuckDB, Spark and PyArrow open (DuckDB finds no file at the encoded
// form: region=eu%252Fwest for the folder region=eu%2Fwest), and the form
// of an s3:// location, which is the bucket and key as stored.
func engineLocation(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return "file://" + u.Path
	}
	return uri
}

// duckdbQuery returns a DuckDB query over the files. Local files are given
// as paths; the partition columns come from the Hive-style keys in the
// paths, and files whose schemas differ in column order or in columns added
// later are read by name.
func duckdbQuery(files []fileJSON) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM read_parquet([\n")
	for i, f := range files {
		loc := f.URI
		if u, err := url.Parse(f.URI); err == nil && u.Scheme == "file" {
			loc = u.Path
		}
		b.WriteString("  " + sqlString(loc))
		if i < len(files)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("], hive_partitioning = true, union_by_name = true);\n")
	return b.String()
}

// duckS3 is what DuckDB needs to reach an S3 table's bucket.
type duckS3 struct {
	bucket, region string
	endpoint       string // host[:port] of a custom endpoint, or ""
	useSSL         bool
	pathStyle      bool
}

// duckdbS3Setup returns the statements that let DuckDB read an s3:// table
// (none for other stores): httpfs, and a secret for the bucket that takes
// its credentials from the standard AWS chain (environment, profiles,
// instance roles) as pswap does, so no key is ever printed, with the
// region, and the endpoint and URL style of a custom (S3-compatible)
// endpoint.
func duckdbS3Setup(t *pswap.Table) string {
	st, ok := t.Store().(*s3store.Store)
	if !ok {
		return ""
	}
	o := st.Client().Options()
	d := duckS3{bucket: st.Bucket(), region: o.Region, useSSL: true, pathStyle: o.UsePathStyle}
	if o.BaseEndpoint != nil && *o.BaseEndpoint != "" {
		if u, err := url.Parse(*o.BaseEndpoint); err == nil && u.Host != "" {
			d.endpoint = u.Host
			d.useSSL = u.Scheme != "http"
		}
	}
	return d.setup()
}

func (d duckS3) setup() string {
	var b strings.Builder
	b.WriteString("INSTALL httpfs;\nLOAD httpfs;\n")
	// The credential_chain provider lives in the aws extension.
	b.WriteString("INSTALL aws;\nLOAD aws;\n")
	b.WriteString("CREATE OR REPLACE SECRET pswap (\n  TYPE s3,\n  PROVIDER credential_chain,\n")
	b.WriteString("  SCOPE " + sqlString("s3://"+d.bucket) + ",\n")
	b.WriteString("  REGION " + sqlString(d.region))
	if d.endpoint != "" {
		b.WriteString(",\n  ENDPOINT " + sqlString(d.endpoint))
		b.WriteString(",\n  USE_SSL " + fmt.Sprint(d.useSSL))
	}
	if d.pathStyle {
		b.WriteString(",\n  URL_STYLE 'path'")
	}
	b.WriteString("\n);\n")
	return b.String()
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
