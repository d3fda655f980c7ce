package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap"
)

func init() { registerCommand(newVerifyCmd) }

// verifyConcurrency bounds the partitions verified at once (each reads all
// of its files).
const verifyConcurrency = 4

type verifyCmd struct {
	*app
	sel        selector
	allowEmpty bool
	deep       bool
}

func newVerifyCmd(a *app) *cobra.Command {
	c := &verifyCmd{app: a}
	cmd := &cobra.Command{
		Use:   "verify [--partition KEY | --interval START/END]",
		Short: "Re-read the current generation(s) and check them against their manifests",
		Long: `Re-read every file of the current generation of a partition (or of every
partition of an interval, or of the whole table) and recompute its size,
SHA-256 checksum and Parquet row count, and check the pointer and manifest
against each other. Exit status 4 if anything disagrees (a tampered, truncated
or missing file, or corrupt metadata); 0 if everything matches. Checking
nothing at all (no committed partition) fails with status 1 unless
--allow-empty; a table URL with nothing under it always fails.

Each partition says what was checked: the files' bytes (size, sha256), the
footers' row counts and the page CRCs present, and, when its manifest
records a checksum over the rows (the default, --check full), every row
decoded against it (rows-decoded). A generation committed with --check
footer records a checksum over the bytes only, so a damaged page without a
CRC goes unnoticed unless --deep decodes every one of its pages
(pages-decoded). Adopted files are checked by their ETags, not read.`,
		Example: `  pswap verify --table s3://lake/sales --partition dt=2026-11-29
  pswap verify --table ./lake/sales --json    # every partition`,
		Args: cobra.NoArgs,
		RunE: runE(c.run),
	}
	c.sel.addFlags(cmd.Flags())
	cmd.Flags().BoolVar(&c.allowEmpty, "allow-empty", false, "succeed when there is nothing to check (no committed partition); by default that fails")
	cmd.Flags().BoolVar(&c.deep, "deep", false, "also decode every page of generations committed with --check footer (whose checksum is over bytes, not rows): a damaged page without a CRC is a mismatch (exit 4)")
	return cmd
}

// verifyJSON is the --json document of verify.
type verifyJSON struct {
	Table      string                `json:"table"`
	OK         bool                  `json:"ok"`
	Checked    int                   `json:"checked"`
	Failed     int                   `json:"failed"`
	Partitions []*pswap.VerifyReport `json:"partitions"`
}

func (c *verifyCmd) run(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	keys, err := c.sel.keys()
	if err != nil {
		return err
	}
	return c.withTable(ctx, func(t *pswap.Table) error {
		explicit := c.sel.partition != ""
		if !c.sel.given() {
			if keys, err = t.Partitions(ctx, ""); err != nil {
				return err
			}
		}
		reports, err := mapOrdered(ctx, keys, verifyConcurrency, func(ctx context.Context, k string) (*pswap.VerifyReport, error) {
			return verifyOne(ctx, t, k, explicit, pswap.VerifyOptions{Deep: c.deep})
		})
		if err != nil {
			return err
		}
		doc := verifyJSON{Table: c.tableURL(), OK: true, Partitions: []*pswap.VerifyReport{}}
		for _, r := range reports {
			if r == nil {
				continue
			}
			doc.Checked++
			if !r.OK {
				doc.Failed++
				doc.OK = false
			}
			doc.Partitions = append(doc.Partitions, r)
		}
		if doc.Checked == 0 {
			if err := c.checkTable(ctx, t); err != nil {
				return err
			}
			if !c.allowEmpty {
				return fmt.Errorf("verify checked nothing: no committed partition in %s%s; pass --allow-empty to accept that", c.tableURL(), c.sel.note())
			}
		}
		if c.json {
			if err := printJSON(c.stdout, doc); err != nil {
				return err
			}
		} else {
			c.printHuman(doc)
		}
		if !doc.OK {
			return &exitError{exitMismatch, fmt.Errorf("%d of %d partition(s) do not match their manifests: %w",
				doc.Failed, doc.Checked, pswap.ErrMismatch)}
		}
		return nil
	})
}

// verifyOne verifies one partition. Corrupt metadata is a finding, not a
// failure to verify; a partition with no data is skipped unless it was
// named explicitly.
func verifyOne(ctx context.Context, t *pswap.Table, key string, explicit bool, opts pswap.VerifyOptions) (*pswap.VerifyReport, error) {
	part, err := t.Partition(key)
	if err != nil {
		return nil, err
	}
	r, err := part.Verify(ctx, opts)
	switch {
	case err == nil, errors.Is(err, pswap.ErrMismatch) && r != nil:
		return r, nil
	case errors.Is(err, pswap.ErrNoData) && !explicit:
		return nil, nil
	case errors.Is(err, pswap.ErrCorrupt):
		return &pswap.VerifyReport{Partition: key, Problems: []pswap.Problem{{What: "metadata", Got: err.Error()}}, Checks: []string{}}, nil
	}
	return nil, err
}

func (c *verifyCmd) printHuman(doc verifyJSON) {
	for _, r := range doc.Partitions {
		if r.OK {
			fmt.Fprintf(c.stdout, "ok        %s generation %s: %s, %s, %s; %s\n", r.Partition, r.Generation,
				plural(int64(r.Files), "file"), plural(r.Rows, "row"), humanBytes(r.Bytes), checksText(r.Checks))
			continue
		}
		fmt.Fprintf(c.stdout, "MISMATCH  %s generation %s: %s\n", r.Partition, orDash(r.Generation), checksText(r.Checks))
		for _, p := range r.Problems {
			line := "  " + p.What
			if p.File != "" {
				line += " " + p.File
			}
			if p.Want != "" {
				line += ": want " + p.Want
			}
			if p.Got != "" && p.Want != "" {
				line += ", got " + p.Got
			} else if p.Got != "" {
				line += ": " + p.Got
			}
			fmt.Fprintln(c.stdout, line)
		}
	}
	fmt.Fprintf(c.stdout, "%d partition(s) checked, %d mismatched\n", doc.Checked, doc.Failed)
}

// checksText says what verify checked of a partition, and what it did not.
func checksText(checks []string) string {
	if len(checks) == 0 {
		return "nothing could be checked"
	}
	s := "checked " + strings.Join(checks, ", ")
	switch {
	case slices.Contains(checks, pswap.CheckETag):
		s += " (adopted files: their bytes are not read)"
	case !slices.Contains(checks, pswap.CheckRowsDecoded) && !slices.Contains(checks, pswap.CheckPagesDecoded):
		s += " (rows not decoded: committed with --check footer; --deep decodes every page)"
	}
	return s
}
