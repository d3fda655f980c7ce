package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the store requests of a dynamic completion.
const completionTimeout = 5 * time.Second

// enumCompletions are the values of flags that take one of a fixed set,
// by flag name, for every command that has such a flag.
var enumCompletions = map[string][]string{
	"on-conflict":  {"fail", "overwrite"},
	"compression":  {"snappy", "zstd", "gzip", "none"},
	"input-format": {"csv", "jsonl", "parquet", "arrow"},
	"grain":        {"hour", "day", "month"},
	"layout":       {"day", "hour", "month", "dt=2006-01-02", "dt=2006-01-02/hr=15", "year=2006/month=01/day=02"},
}

// addCompletions registers shell completions for the flags of every
// subcommand: fixed values for enum flags, and the table's committed
// partitions for --partition. Commands that registered their own keep them.
func addCompletions(a *app, root *cobra.Command) {
	for _, c := range root.Commands() {
		for name, values := range enumCompletions {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		if c.Name() == "files" {
			_ = c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"uris", "json", "duckdb"}, cobra.ShellCompDirectiveNoFileComp))
		}
		if c.Flags().Lookup("partition") != nil {
			_ = c.RegisterFlagCompletionFunc("partition", a.completePartitions)
		}
	}
}

// completePartitions lists the committed partitions that start with what
// was typed so far (best effort: nothing when the table cannot be read).
func (a *app) completePartitions(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	t, err := a.openTable(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer t.Close()
	keys, err := t.Partitions(ctx, toComplete)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return keys, cobra.ShellCompDirectiveNoFileComp
}
