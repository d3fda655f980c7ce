package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

var errLost = fmt.Errorf("injected lost reply: %w", store.ErrTransient)

// TestCreateOnce covers each way a create-if-absent PUT's outcome is
// settled: by its reply, or by reading the key back.
func TestCreateOnce(t *testing.T) {
	const key = "v/00001.json"
	ours, theirs := []byte("ours"), []byte("theirs")
	for _, tc := range []struct {
		name     string
		before   []byte // already at key
		inject   func(c storetest.Call) storetest.Fault
		won      bool
		errIs    error // nil: no error
		puts     int   // PUTs sent
		contents []byte
	}{
		{name: "clean", won: true, puts: 1, contents: ours},
		{name: "lost race", before: theirs, won: false, puts: 1, contents: theirs},
		{name: "lost reply", inject: func(c storetest.Call) storetest.Fault {
			if c.Op == "put" && c.N == 1 {
				return storetest.Fault{After: errLost}
			}
			return storetest.Fault{}
		}, won: true, puts: 1, contents: ours},
		{name: "lost reply, 503 on the read-back", inject: func(c storetest.Call) storetest.Fault {
			switch {
			case c.Op == "put" && c.N == 1:
				return storetest.Fault{After: errLost}
			case c.Op == "get" && c.N == 1:
				return storetest.Fault{Before: store.ErrTransient}
			}
			return storetest.Fault{}
		}, won: true, puts: 1, contents: ours},
		{name: "503 before applying", inject: func(c storetest.Call) storetest.Fault {
			if c.Op == "put" && c.N == 1 {
				return storetest.Fault{Before: store.ErrTransient}
			}
			return storetest.Fault{}
		}, won: true, puts: 2, contents: ours},
		{name: "our reply lost, then 412 on a retry", inject: func(c storetest.Call) storetest.Fault {
			if c.Op == "put" && c.N == 1 {
				return storetest.Fault{After: fmt.Errorf("412 after our own write: %w", store.ErrPrecondition)}
			}
			return storetest.Fault{}
		}, won: true, puts: 1, contents: ours},
		{name: "read-back keeps failing", inject: func(c storetest.Call) storetest.Fault {
			switch c.Op {
			case "put":
				return storetest.Fault{After: errLost}
			case "get":
				return storetest.Fault{Before: store.ErrTransient}
			}
			return storetest.Fault{}
		}, errIs: store.ErrTransient, puts: 1, contents: ours},
		{name: "denied", inject: func(c storetest.Call) storetest.Fault {
			return storetest.Fault{Before: store.ErrAccessDenied}
		}, errIs: store.ErrAccessDenied, puts: 1},
		{name: "503 every time", inject: func(c storetest.Call) storetest.Fault {
			if c.Op == "put" {
				return storetest.Fault{Before: store.ErrTransient}
			}
			return storetest.Fault{}
		}, errIs: store.ErrTransient, puts: retry.DefaultRequestAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				mem := memstore.New()
				if tc.before != nil {
					if _, err := mem.Put(ctx, key, tc.before, store.PutOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				puts := 0
				st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
					if c.Op == "put" {
						puts++
					}
					if tc.inject == nil {
						return storetest.Fault{}
					}
					return tc.inject(c)
				})
				won, err := retry.CreateOnce(ctx, retry.Request(0), st, key, ours, store.PutOptions{})
				if won != tc.won || (tc.errIs == nil) != (err == nil) || tc.errIs != nil && !errors.Is(err, tc.errIs) {
					t.Fatalf("won %v err %v, want %v and %v", won, err, tc.won, tc.errIs)
				}
				if puts != tc.puts {
					t.Fatalf("%d PUTs, want %d", puts, tc.puts)
				}
				got, _, err := store.ReadAll(ctx, mem, key)
				if tc.contents == nil {
					if !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("%q at key, want nothing", got)
					}
					return
				}
				if string(got) != string(tc.contents) {
					t.Fatalf("%q at key, want %q", got, tc.contents)
				}
			})
		})
	}
}

// TestIdempotent: a retryable error is retried up to the attempts, any
// other returned at once.
func TestIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		calls := 0
		err := retry.Request(3).Idempotent(ctx, func() error { calls++; return store.ErrTransient })
		if !errors.Is(err, store.ErrTransient) || calls != 3 {
			t.Fatalf("%v after %d calls, want 3", err, calls)
		}
		calls = 0
		err = retry.Request(3).Idempotent(ctx, func() error { calls++; return store.ErrNotFound })
		if !errors.Is(err, store.ErrNotFound) || calls != 1 {
			t.Fatalf("%v after %d calls, want 1", err, calls)
		}
	})
}
