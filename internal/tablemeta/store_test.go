package tablemeta

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
)

// stores runs f on every backend: memory, file, and S3 on MinIO (skipped
// unless PSWAP_TEST_S3 is set).
func stores(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("mem", func(t *testing.T) { f(t, memstore.New()) })
	t.Run("file", func(t *testing.T) {
		st, err := filestore.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f(t, st)
	})
	t.Run("s3", func(t *testing.T) { f(t, testenv.S3(t)) })
}

func TestStoreCreateReadUpdate(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if _, _, err := Read(ctx, st); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read of a table without metadata: %v", err)
		}
		a := tableFor(t, "dt=2026-11-29", nil)
		cur, tag, created, err := Create(ctx, st, a)
		if err != nil || !created || tag == "" || !cur.Schema.Equal(a.Schema) {
			t.Fatalf("create: %v %v %q", err, created, tag)
		}
		// A second creator with another schema gets the first one back.
		b := a.Clone()
		b.Schema.Fields[0].Name = "w"
		cur, tag2, created, err := Create(ctx, st, b)
		if err != nil || created || !cur.Schema.Equal(a.Schema) || tag2 != tag {
			t.Fatalf("second create: %v created=%v %s", err, created, cur.Schema)
		}
		// Two evolvers from the same version: exactly one wins.
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := a.Clone()
				e.SchemaID++
				e.LastColumnID++
				e.Schema.Fields = append(e.Schema.Fields, Field{ID: e.LastColumnID, Name: "c" + string(rune('a'+i)), Type: StringType, Nullable: true})
				_, errs[i] = Update(ctx, st, e, tag)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrChanged):
				t.Fatalf("update: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d evolvers won", won)
		}
		got, _, err := Read(ctx, st)
		if err != nil || got.SchemaID != 1 || len(got.Schema.Fields) != 2 {
			t.Fatalf("after the race: %v %+v", err, got)
		}
	})
}

func TestStoreReadTampered(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		good, _ := Encode(tableFor(t, "dt=2026-11-29", nil))
		for _, bad := range [][]byte{good[:len(good)-9], []byte(strings.Replace(string(good), `"long"`, `"lung"`, 1))} {
			if _, err := st.Put(ctx, Key, bad, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			_, _, err := Read(ctx, st)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), st.URI(Key)) {
				t.Fatalf("tampered document: %v", err)
			}
			// Create never overwrites it.
			if _, _, _, err := Create(ctx, st, tableFor(t, "dt=2026-11-29", nil)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("create over a tampered document: %v", err)
			}
			data, _, _ := store.ReadAll(ctx, st, Key)
			if string(data) != string(bad) {
				t.Fatal("tampered document was replaced")
			}
		}
	})
}

func TestUpdateNeedsTag(t *testing.T) {
	st := memstore.New()
	tb, _ := New([]PartitionColumn{{Name: "dt", Type: StringType}}, arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}}, nil))
	if _, err := Update(context.Background(), st, tb, ""); err == nil {
		t.Fatal("update without a tag")
	}
}
