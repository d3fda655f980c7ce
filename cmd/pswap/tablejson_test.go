package main

import (
	"context"
	"os"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
)

// cmdTableJSON reads and writes the table's metadata document on any store:
//
//	tablejson save FILE      copy <table>/_pswap/table.json to FILE
//	tablejson same FILE      fail unless it still equals FILE
//	tablejson put FILE       replace it with FILE's bytes
//	tablejson truncate       cut it in half
//	tablejson absent         fail unless there is none
func cmdTableJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: tablejson save|same|put FILE | truncate | absent")
	}
	ctx := context.Background()
	st, err := pswap.OpenStore(ctx, ts.Getenv("TABLE"), pswap.Options{})
	ts.Check(err)
	defer st.Close()
	data, _, err := store.ReadAll(ctx, st, tablemeta.Key)
	if args[0] == "absent" {
		if err == nil {
			ts.Fatalf("table.json exists:\n%s", data)
		}
		return
	}
	if args[0] != "put" {
		ts.Check(err)
	}
	switch args[0] {
	case "save":
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), data, 0o644))
	case "same":
		want, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		if string(want) != string(data) {
			ts.Fatalf("table.json changed:\n%s\nwas\n%s", data, want)
		}
	case "put":
		b, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		_, err = st.Put(ctx, tablemeta.Key, b, store.PutOptions{})
		ts.Check(err)
	case "truncate":
		_, err = st.Put(ctx, tablemeta.Key, data[:len(data)/2], store.PutOptions{})
		ts.Check(err)
	default:
		ts.Fatalf("unknown tablejson mode %q", args[0])
	}
	if len(args) > 1 && args[0] == "save" {
		ts.Logf("table.json: %s", strings.TrimSpace(string(data)))
	}
}
