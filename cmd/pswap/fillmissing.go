package main

import (
	"fmt"
	"strings"

	"github.com/pswap/pswap"
)

// fillMissingFlag is the flag of commit, stage and merge that accepts
// inputs lacking nullable columns (TableOptions.FillMissingNullable). Its
// name says what it does and where it stops: it fills, with NULL, only
// columns that are missing, and only nullable ones (a NOT NULL column is
// never filled), so that it reads as a deliberate choice in a backfill
// script rather than a general leniency ("--allow-missing" would suggest
// any column).
const fillMissingFlag = "fill-missing-nullable"

const fillMissingUsage = "accept inputs that lack nullable columns of the table (extracts from before --evolve-schema added them) and write NULL in them; " +
	"a warning names the columns (filled_columns in --json); NOT NULL columns are never filled"

// warnFilled records the columns a write filled with NULL for the report
// and warns about them on stderr (what names the partition, or "").
func (a *app) warnFilled(w *pswap.Writer, what string) {
	if w == nil {
		return
	}
	a.noteFilled(w.Filled(), what)
}

func (a *app) noteFilled(filled []string, what string) {
	if len(filled) == 0 {
		return
	}
	a.filled = filled
	if what != "" {
		what = " of " + what
	}
	fmt.Fprintf(a.stderr, "pswap: warning: the input%s lacks the nullable column(s) %s of the table: written as NULL (--%s)\n",
		what, quoteAll(filled), fillMissingFlag)
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
