package pswap_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

type kindRow struct {
	ID int64 `parquet:"id"`
}

// Every kind of error, provoked through the facade and checked with
// errors.Is against the facade's sentinels alone (issue 11: one set of
// errors shared by every layer).
func TestErrorKindsThroughFacade(t *testing.T) {
	kinds := map[string]error{
		"bad input": pswap.ErrBadInput, "corrupt": pswap.ErrCorrupt, "not found": pswap.ErrNotFound,
		"conflict": pswap.ErrConflict, "outcome unknown": pswap.ErrOutcomeUnknown,
	}
	// only checks that err matches exactly the kind want (and the extra
	// sentinels), and no other kind.
	only := func(t *testing.T, err error, want string, also ...error) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error, want %s", want)
		}
		for name, k := range kinds {
			if got := errors.Is(err, k); got != (name == want) {
				t.Errorf("errors.Is(%q, pswap.Err %s) = %v", err, name, got)
			}
		}
		for _, s := range also {
			if !errors.Is(err, s) {
				t.Errorf("errors.Is(%q, %v) = false", err, s)
			}
		}
	}
	newTable := func() (*pswap.Table, *memstore.Store) {
		mem := memstore.New()
		return pswap.NewTable(mem), mem
	}
	commit := func(t *testing.T, p *pswap.Partition, opts pswap.CommitOptions, rows ...kindRow) (pswap.Result, error) {
		t.Helper()
		w, err := p.Begin(ctx, pswap.WriteOptions{Commit: opts})
		if err != nil {
			return pswap.Result{}, err
		}
		if err := pswap.Write(w, rows...); err != nil {
			t.Fatal(err)
		}
		return w.Commit(ctx)
	}

	t.Run("bad input", func(t *testing.T) {
		table, _ := newTable()
		p, _ := table.Partition("dt=2026-11-29")
		// A malformed CSV row, reported by staging.
		w, err := p.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = w.AddReader(ctx, strings.NewReader("id,amount\n1,2\n3\n"), "day.csv", pswap.FormatCSV)
		only(t, err, "bad input")
		w.Abort(ctx)
		// An invalid partition key, reported by the partition parser.
		_, err = table.Partition("dt=2026-11-29/../x")
		only(t, err, "bad input", pswap.ErrInvalidKey)
		// An invalid store key, reported by the store.
		_, _, err = store.ReadAll(ctx, table.Store(), "../outside")
		only(t, err, "bad input", pswap.ErrInvalidKey)
		// An empty commit, refused by swap.
		_, err = commit(t, p, pswap.CommitOptions{})
		only(t, err, "bad input", pswap.ErrEmptyCommit)
		// A bad table URL.
		_, err = pswap.Open(ctx, "nosuch://bucket/x", pswap.Options{})
		only(t, err, "bad input", pswap.ErrBadURL)
		// An unknown conflict policy.
		_, err = pswap.ParsePolicy("sometimes")
		only(t, err, "bad input")
	})

	t.Run("corrupt", func(t *testing.T) {
		table, mem := newTable()
		p, _ := table.Partition("dt=2026-11-29")
		if _, err := commit(t, p, pswap.CommitOptions{}, kindRow{1}); err != nil {
			t.Fatal(err)
		}
		key := layout.PointerKey("dt=2026-11-29")
		data, a, _ := store.ReadAll(ctx, mem, key)
		if _, err := mem.Put(ctx, key, []byte(strings.Replace(string(data), `"seq": 1`, `"seq": 0`, 1)), store.PutOptions{IfMatch: a.ETag}); err != nil {
			t.Fatal(err)
		}
		_, err := p.Current(ctx)
		only(t, err, "corrupt")
	})

	t.Run("not found", func(t *testing.T) {
		table, _ := newTable()
		p, _ := table.Partition("dt=2026-11-29")
		_, err := p.Current(ctx)
		only(t, err, "not found", pswap.ErrNoData)
		if _, err := commit(t, p, pswap.CommitOptions{}, kindRow{1}); err != nil {
			t.Fatal(err)
		}
		_, err = p.Rollback(ctx, "01939f00-1111-7222-b333-444455556666", pswap.CommitOptions{})
		only(t, err, "not found", pswap.ErrGenerationNotFound)
		_, _, err = store.ReadAll(ctx, table.Store(), "nothing/here")
		only(t, err, "not found")
	})

	t.Run("conflict", func(t *testing.T) {
		table, _ := newTable()
		p, _ := table.Partition("dt=2026-11-29")
		slow, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "slow"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(slow, kindRow{1}); err != nil {
			t.Fatal(err)
		}
		if _, err := commit(t, p, pswap.CommitOptions{RunID: "fast"}, kindRow{2}); err != nil {
			t.Fatal(err)
		}
		_, err = slow.Commit(ctx)
		only(t, err, "conflict")
	})

	t.Run("outcome unknown", func(t *testing.T) {
		down := fmt.Errorf("dial: %w: connection refused", store.ErrTransient)
		faulty := storetest.NewFaulty(memstore.New(), func(c storetest.Call) storetest.Fault {
			if strings.HasSuffix(c.Key, "pointer.json") && (c.Op == "put" || (c.Op == "get" && c.N > 1)) {
				return storetest.Fault{Before: down}
			}
			return storetest.Fault{}
		})
		p, _ := pswap.NewTable(faulty).Partition("dt=2026-11-29")
		_, err := commit(t, p, pswap.CommitOptions{RunID: "r", MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, kindRow{1})
		only(t, err, "outcome unknown")
		if !pswap.IsRetryable(err) {
			t.Errorf("IsRetryable(%v) = false: re-running resolves an unknown outcome", err)
		}
	})

	t.Run("retryable", func(t *testing.T) {
		for _, tc := range []struct {
			err  error
			want bool
		}{
			{fmt.Errorf("get: %w", store.ErrTransient), true},
			{pswap.ErrBadInput, false},
			{pswap.ErrNoData, false},
			{swap.ErrConflict, false},
			{store.ErrAccessDenied, false},
			{context.Canceled, false},
		} {
			if got := pswap.IsRetryable(tc.err); got != tc.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		}
	})
}

// The table schema's refusals are bad input, and no retry can fix them.
func TestTableSchemaErrorsAreBadInput(t *testing.T) {
	for _, e := range []error{tablemeta.ErrSchemaMismatch, tablemeta.ErrPartitionMismatch, tablemeta.ErrUnsupportedType} {
		err := fmt.Errorf("commit: %w: column x", e)
		if !errors.Is(err, pswap.ErrBadInput) || pswap.IsRetryable(err) {
			t.Errorf("%v: bad input %v, retryable %v", e, errors.Is(err, pswap.ErrBadInput), pswap.IsRetryable(err))
		}
	}
	if pswap.IsRetryable(fmt.Errorf("read table.json: %w", tablemeta.ErrUnsupportedVersion)) {
		t.Error("an unsupported table.json version is retryable")
	}
}
