package swap_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

const spart = "dt=2026-11-29"

// stageOnly begins a transaction, writes n files and records them as staged.
func stageOnly(t *testing.T, st store.Store, seed string, n int) (string, manifest.Content) {
	t.Helper()
	txn, err := swap.Begin(ctx, st, spart, swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := stage(t, txn, n, seed)
	if err := txn.Stage(ctx, c); err != nil {
		t.Fatal(err)
	}
	return txn.Generation(), c
}

func stagedExists(t *testing.T, st store.Store, gen string) bool {
	t.Helper()
	_, err := st.Stat(ctx, layout.StagedKey(spart, gen))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestCommitStagedOnceThenNoop(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		gen, c := stageOnly(t, st, "a", 3)
		if _, err := swap.Resolve(ctx, st, spart); !errors.Is(err, swap.ErrNoData) {
			t.Fatalf("staged generation visible before its commit: %v", err)
		}
		r, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{RunID: "r1"}, nil)
		if err != nil || !r.Changed || r.Generation != gen || r.Rows != c.Rows || r.Outcome != swap.Committed {
			t.Fatalf("commit staged: %+v %v", r, err)
		}
		checkInvariants(t, st, spart)
		if stagedExists(t, st, gen) {
			t.Fatal("the staged record outlived its commit")
		}
		for range 2 {
			again, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{}, nil)
			if err != nil || again.Changed || again.Outcome != swap.AlreadyCommitted || again.Generation != gen {
				t.Fatalf("re-run of a successful commit --staged: %+v %v", again, err)
			}
		}
		// Still a no-op once another commit replaced it.
		later := mustCommit(t, st, spart, "b", swap.Options{})
		again, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{}, nil)
		if err != nil || again.Changed || again.Generation != later.Generation || again.Staged != gen {
			t.Fatalf("re-run after a later commit: %+v %v", again, err)
		}
		if _, err := swap.CommitStaged(ctx, st, spart, manifest.NewGenerationID(), swap.Options{}, nil); !errors.Is(err, swap.ErrGenerationNotFound) {
			t.Fatalf("never staged: %v", err)
		}
	})
}

func TestCommitStagedFencedFromStageTime(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		first := mustCommit(t, st, spart, "base", swap.Options{})
		gen, _ := stageOnly(t, st, "staged", 2)
		other := mustCommit(t, st, spart, "other", swap.Options{RunID: "other-run"})

		_, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{}, nil)
		if !errors.Is(err, swap.ErrConflict) {
			t.Fatalf("commit of a generation staged before another run's commit: %v, want ErrConflict", err)
		}
		snap := checkInvariants(t, st, spart)
		if snap.Pointer.Generation != other.Generation || snap.Pointer.Parent != first.Generation {
			t.Fatalf("conflict changed the pointer: %+v", snap.Pointer)
		}
		// Nothing of the staged generation was removed: it can be retried.
		if !stagedExists(t, st, gen) || !dataGens(t, st, spart)[gen] {
			t.Fatal("a fenced-out staged generation lost its record or files")
		}
		if _, err := st.Stat(ctx, layout.ManifestKey(spart, gen)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused attempt left its manifest: %v", err)
		}
		r, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{OnConflict: swap.Overwrite}, nil)
		if err != nil || !r.Changed || r.Staged != gen {
			t.Fatalf("overwrite: %+v %v", r, err)
		}
		snap = checkInvariants(t, st, spart)
		if snap.Manifest.DataGen() != gen || snap.Manifest.Parent != other.Generation {
			t.Fatalf("overwrite committed %+v", snap.Manifest)
		}
	})
}

// A staged generation whose content equals its recorded base is a no-op
// only while that base is current: judged on a moved pointer it is a conflict.
func TestCommitStagedIdenticalOnlyOnCurrentBase(t *testing.T) {
	st := memstore.New()
	mustCommit(t, st, spart, "same", swap.Options{})
	gen, _ := stageOnly(t, st, "same", 2)
	mustCommit(t, st, spart, "moved", swap.Options{})
	if _, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{}, nil); !errors.Is(err, swap.ErrConflict) {
		t.Fatalf("identical to a stale base: %v, want ErrConflict", err)
	}
	gen2, _ := stageOnly(t, st, "moved", 2)
	r, err := swap.CommitStaged(ctx, st, spart, gen2, swap.Options{}, nil)
	if err != nil || r.Changed || r.Outcome != swap.Identical {
		t.Fatalf("identical to the current base: %+v %v", r, err)
	}
}

// A commit that died after writing its manifest, or after swapping the
// pointer but before removing the record, converges when run again.
func TestCommitStagedRerunAfterCrash(t *testing.T) {
	died := errors.New("process killed")
	for _, at := range []string{"pointer", "record"} {
		t.Run(at, func(t *testing.T) {
			mem := memstore.New()
			mustCommit(t, mem, spart, "base", swap.Options{})
			gen, c := stageOnly(t, mem, "staged", 2)
			faulty := storetest.NewFaulty(mem, func(call storetest.Call) storetest.Fault {
				switch {
				case at == "pointer" && call.Op == "put" && call.Key == layout.PointerKey(spart):
					return storetest.Fault{Before: fmt.Errorf("%w: %w", store.ErrAccessDenied, died)}
				case at == "record" && call.Op == "delete" && call.Key == layout.StagedKey(spart, gen):
					return storetest.Fault{Before: died}
				}
				return storetest.Fault{}
			})
			_, err := swap.CommitStaged(ctx, faulty, spart, gen, swap.Options{}, nil)
			if at == "pointer" && !errors.Is(err, died) {
				t.Fatalf("first run: %v", err)
			}
			if !stagedExists(t, mem, gen) {
				t.Fatal("record gone after the crash")
			}
			r, err := swap.CommitStaged(ctx, mem, spart, gen, swap.Options{}, nil)
			if err != nil || r.Staged != gen || r.Rows != c.Rows {
				t.Fatalf("re-run: %+v %v", r, err)
			}
			if at == "pointer" && !r.Changed || at == "record" && (r.Changed || r.Outcome != swap.AlreadyCommitted) {
				t.Fatalf("re-run after a crash at the %s: %+v", at, r)
			}
			snap := checkInvariants(t, mem, spart)
			if snap.Manifest.DataGen() != gen {
				t.Fatalf("current generation %s holds data of %s, want %s", snap.Manifest.Generation, snap.Manifest.DataGen(), gen)
			}
			if stagedExists(t, mem, gen) {
				t.Fatal("record left after the re-run")
			}
		})
	}
}

func TestCommitStagedMissingFileRefused(t *testing.T) {
	st := memstore.New()
	gen, c := stageOnly(t, st, "a", 3)
	if err := st.Delete(ctx, layout.DataPrefix(spart, gen)+c.Files[1].Path); err != nil {
		t.Fatal(err)
	}
	_, err := swap.CommitStaged(ctx, st, spart, gen, swap.Options{}, nil)
	if !errors.Is(err, swap.ErrGenerationNotFound) || !strings.Contains(err.Error(), c.Files[1].Path) {
		t.Fatalf("commit with a file gone: %v", err)
	}
	if _, err := swap.Resolve(ctx, st, spart); !errors.Is(err, swap.ErrNoData) {
		t.Fatalf("something was committed: %v", err)
	}
}

func TestCheckFiles(t *testing.T) {
	st := memstore.New()
	gen := manifest.NewGenerationID()
	prefix := layout.DataPrefix(spart, gen)
	c := swaptest.Stage(t, st, prefix, 2, "x")
	a, err := st.Stat(ctx, prefix+c.Files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	etag, _ := manifest.ETagChecksum(a.ETag)
	files := append([]manifest.File(nil), c.Files...)
	files[0].Checksum = etag
	oldest, err := swap.CheckFiles(ctx, st, spart, gen, manifest.DataLayoutTable, files)
	if err != nil || oldest.IsZero() || oldest.After(time.Now()) {
		t.Fatalf("CheckFiles: %v, oldest %v", err, oldest)
	}
	// Same size, new version: an etag checksum notices.
	if _, err := st.Put(ctx, prefix+files[0].Path, []byte(strings.Repeat("y", int(files[0].Size))), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := swap.CheckFiles(ctx, st, spart, gen, manifest.DataLayoutTable, files); !errors.Is(err, swap.ErrGenerationNotFound) || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("replaced file: %v", err)
	}
	files[0].Checksum = c.Files[0].Checksum
	files[1].Size++
	if _, err := swap.CheckFiles(ctx, st, spart, gen, manifest.DataLayoutTable, files); !errors.Is(err, swap.ErrGenerationNotFound) || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("size changed: %v", err)
	}
}

// A reservation holds no content: the commit asks the adopt func, which
// sees the reservation's data prefix.
func TestReserveAndAdopt(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		res, err := swap.Reserve(ctx, st, spart, swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Prefix != layout.DataPrefix(spart, res.Generation) || res.Base.Pointer != nil {
			t.Fatalf("reservation %+v", res)
		}
		var c manifest.Content
		adopt := func(_ context.Context, s store.Store, prefix string) (manifest.Content, time.Time, error) {
			if prefix != res.Prefix {
				return manifest.Content{}, time.Time{}, fmt.Errorf("adopt asked for %s, want %s", prefix, res.Prefix)
			}
			c = swaptest.Stage(t, s, prefix, 2, "engine")
			return c, time.Time{}, nil
		}
		if _, err := swap.CommitStaged(ctx, st, spart, res.Generation, swap.Options{}, nil); err == nil {
			t.Fatal("a reservation committed without an adopt func")
		}
		r, err := swap.CommitStaged(ctx, st, spart, res.Generation, swap.Options{}, adopt)
		if err != nil || !r.Changed || r.Generation != res.Generation || r.Rows != c.Rows {
			t.Fatalf("adopt: %+v %v", r, err)
		}
		checkInvariants(t, st, spart)
		failing := func(context.Context, store.Store, string) (manifest.Content, time.Time, error) {
			return manifest.Content{}, time.Time{}, errors.New("not parquet")
		}
		res2, err := swap.Reserve(ctx, st, spart, swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := swap.CommitStaged(ctx, st, spart, res2.Generation, swap.Options{}, failing); err == nil || !strings.Contains(err.Error(), "not parquet") {
			t.Fatalf("failed adoption: %v", err)
		}
		if snap := checkInvariants(t, st, spart); snap.Pointer.Generation != res.Generation {
			t.Fatalf("a failed adoption changed the pointer to %s", snap.Pointer.Generation)
		}
	})
}

// A reservation older than the grace period is refused.
func TestReservationStale(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	st := memstore.New(memstore.Options{Now: func() time.Time { return now }})
	res, err := swap.Reserve(ctx, st, spart, swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(25 * time.Hour)
	adopt := func(_ context.Context, s store.Store, prefix string) (manifest.Content, time.Time, error) {
		return swaptest.Stage(t, s, prefix, 1, "late"), time.Time{}, nil
	}
	if _, err := swap.CommitStaged(ctx, st, spart, res.Generation, swap.Options{}, adopt); !errors.Is(err, swap.ErrStaleGeneration) {
		t.Fatalf("stale reservation: %v", err)
	}
	if _, err := swap.Resolve(ctx, st, spart); !errors.Is(err, swap.ErrNoData) {
		t.Fatalf("stale reservation committed: %v", err)
	}
}

// Records of an earlier version (a manifest document, no fence) still commit.
func TestCommitStagedLegacyRecord(t *testing.T) {
	st := memstore.New()
	txn, err := swap.Begin(ctx, st, spart, swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Such a record, and its data, lie in the legacy layout.
	c := swaptest.Stage(t, st, layout.LegacyDataPrefix(spart, txn.Generation()), 2, "legacy")
	m := &manifest.Manifest{Partition: spart, Generation: txn.Generation(), Content: c,
		CreatedAt: txn.Began(), CommittedAt: txn.Began(), Writer: "pswap/0.1.0"}
	data, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, layout.LegacyStagedKey(spart, m.Generation), data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := swap.CommitStaged(ctx, st, spart, m.Generation, swap.Options{}, nil)
	if err != nil || !r.Changed || r.Generation != m.Generation {
		t.Fatalf("legacy record: %+v %v", r, err)
	}
}

func TestDecodeStagedRejects(t *testing.T) {
	gen := manifest.NewGenerationID()
	good := &swap.StagedRecord{Format: swap.FormatStaged, Version: manifest.Version, Partition: spart,
		Generation: gen, Reserved: true, StagedAt: time.Now().UTC()}
	data, err := swap.EncodeStaged(good)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := swap.DecodeStaged(data); err != nil || r.Generation != gen || !r.Reserved {
		t.Fatalf("round trip: %+v %v", r, err)
	}
	for name, mut := range map[string]func(r *swap.StagedRecord){
		"format":        func(r *swap.StagedRecord) { r.Format = "x" },
		"version":       func(r *swap.StagedRecord) { r.Version = "2.0" },
		"partition":     func(r *swap.StagedRecord) { r.Partition = "../x" },
		"generation":    func(r *swap.StagedRecord) { r.Generation = "nope" },
		"content":       func(r *swap.StagedRecord) { r.Content = &manifest.Content{} },
		"etag-no-base":  func(r *swap.StagedRecord) { r.BaseETag = "abc" },
		"no-staged-at":  func(r *swap.StagedRecord) { r.StagedAt = time.Time{} },
		"no-content":    func(r *swap.StagedRecord) { r.Reserved = false },
		"control-etag":  func(r *swap.StagedRecord) { r.BaseETag = "a\nb"; r.Base = &manifest.Pointer{} },
		"invalid-base":  func(r *swap.StagedRecord) { r.BaseETag = "abc"; r.Base = &manifest.Pointer{} },
		"base-elsewise": func(r *swap.StagedRecord) { r.BaseETag = "abc"; r.Base = otherPointer() },
	} {
		r := *good
		mut(&r)
		if _, err := swap.EncodeStaged(&r); !errors.Is(err, manifest.ErrInvalid) {
			t.Errorf("%s: encode %v, want ErrInvalid", name, err)
		}
	}
	for _, bad := range []string{"", "{", "[]", `{"format":"pswap-staged"}`, string(data) + "{}"} {
		if _, err := swap.DecodeStaged([]byte(bad)); !errors.Is(err, manifest.ErrInvalid) {
			t.Errorf("decode %q: %v, want ErrInvalid", bad, err)
		}
	}
}

func otherPointer() *manifest.Pointer {
	return &manifest.Pointer{Format: manifest.FormatPointer, Version: manifest.Version, Partition: "dt=2026-01-01",
		Generation: manifest.NewGenerationID(), Seq: 1, ContentChecksum: "x:0011223344556677", CommittedAt: time.Now().UTC()}
}

func FuzzDecodeStaged(f *testing.F) {
	good, _ := swap.EncodeStaged(&swap.StagedRecord{Format: swap.FormatStaged, Version: manifest.Version,
		Partition: spart, Generation: manifest.NewGenerationID(), Reserved: true, StagedAt: time.Now().UTC()})
	f.Add(good)
	withStats, _ := swap.EncodeStaged(&swap.StagedRecord{Format: swap.FormatStaged, Version: manifest.Version,
		Partition: spart, Generation: manifest.NewGenerationID(), StagedAt: time.Now().UTC(),
		Content: &manifest.Content{Rows: 2, Bytes: 10, ContentChecksum: "x:0011223344556677",
			Files: []manifest.File{{Path: "a.parquet", Size: 10, Rows: 2, Checksum: "sha256:" + strings.Repeat("b", 64),
				Columns: []manifest.ColumnStats{{Name: "id", Size: 5, Values: 2, Nulls: 0, Type: "long", Min: "1", Max: "2"}}}}}})
	f.Add(withStats)
	f.Add([]byte(`{"format":"pswap-manifest"}`))
	f.Add([]byte(`{"format":"pswap-staged","version":"1.0","partition":"dt=x","generation":"0","content":{"files":[{"path":"../a"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := swap.DecodeStaged(data)
		if err != nil {
			return
		}
		// Whatever decodes names a valid partition and generation, and its
		// files (if any) stay inside the generation's prefix.
		if err := manifest.ValidateGenerationID(r.Generation); err != nil {
			t.Fatalf("decoded an invalid generation %q", r.Generation)
		}
		if r.Content != nil {
			for _, fl := range r.Content.Files {
				if err := manifest.ValidateFilePath(fl.Path); err != nil {
					t.Fatalf("decoded a bad file path %q", fl.Path)
				}
			}
		}
	})
}

// TestDecodeStagedStrict: a staged record is read as strictly as a manifest
// (duplicate keys, names in another case, null, unknown fields refused; a
// newer minor version's additions ignored), and what earlier encoders wrote
// (an empty generation's "files": null, a base pointer without "files")
// still reads.
func TestDecodeStagedStrict(t *testing.T) {
	base := otherPointer()
	base.Partition = spart
	rec := &swap.StagedRecord{Format: swap.FormatStaged, Version: manifest.Version, Partition: spart,
		Generation: manifest.NewGenerationID(), Base: base, BaseETag: `"e1"`, StagedAt: time.Now().UTC(),
		Content: &manifest.Content{ContentChecksum: "x:0011223344556677"}}
	data, err := swap.EncodeStaged(rec)
	if err != nil {
		t.Fatal(err)
	}
	g := string(data)
	if !strings.Contains(g, `"files": null`) || !strings.Contains(g, `"files": 0`) {
		t.Fatalf("the encoding changed; this test needs new seeds:\n%s", g)
	}
	r, err := swap.DecodeStaged(data)
	if err != nil || r.Base == nil || r.Base.Seq != 1 || r.BaseETag != `"e1"` || r.Content == nil || len(r.Content.Files) != 0 {
		t.Fatalf("round trip: %+v %v", r, err)
	}
	rep := func(old, new string) string {
		if !strings.Contains(g, old) {
			t.Fatalf("record lacks %q:\n%s", old, g)
		}
		return strings.Replace(g, old, new, 1)
	}
	if _, err := swap.DecodeStaged([]byte(rep(`"files": 0,`, ``))); err != nil {
		t.Errorf("a base without files: %v", err)
	}
	if r, err := swap.DecodeStaged([]byte(rep(`"version": "1.0",`, `"version": "1.7", "lease": {"until": 3},`))); err != nil || r.Generation != rec.Generation {
		t.Errorf("a newer minor version: %+v %v", r, err)
	}
	for name, c := range map[string]struct{ doc, want string }{
		"duplicate key":   {rep(`"base_etag"`, `"base_etag": "x", "base_etag"`), "base_etag: duplicate key"},
		"name case":       {rep(`"partition": "dt`, `"Partition": "dt`), "Partition: unknown field"},
		"null":            {rep(`"base_etag": "\"e1\"",`, `"base_etag": null,`), "base_etag: null is not allowed"},
		"unknown":         {rep(`"staged_at"`, `"x": 1, "staged_at"`), "x: unknown field"},
		"unknown in base": {rep(`"seq": 1,`, `"seq": 1, "lease": 2,`), "base.lease: unknown field"},
		"seq not integer": {rep(`"seq": 1,`, `"seq": 1.5,`), "base.seq: must be an integer"},
		"trailing":        {g + "{}", "trailing data"},
		"not utf8":        {rep(`"staged_at"`, "\"staged\xff_at\""), "not valid UTF-8"},
	} {
		_, err := swap.DecodeStaged([]byte(c.doc))
		if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", name, err, c.want)
		}
	}
}

// TestStagedRecordCarriesColumnStats: a staged record keeps its files'
// column statistics (version 1.2), so that the manifest of its commit
// records them and the publish after it reads no footer; a record of 1.0
// still refuses files[].columns as unknown, and a tampered statistic is
// refused naming the field.
func TestStagedRecordCarriesColumnStats(t *testing.T) {
	cols := []manifest.ColumnStats{
		{Name: "id", Size: 52, Values: 2, Nulls: 0, Type: "long", Min: "1", Max: "2"},
		{Name: "note", Size: 70, Values: 2, Nulls: -1},
	}
	rec := &swap.StagedRecord{Format: swap.FormatStaged, Version: manifest.Version, Partition: spart,
		Generation: manifest.NewGenerationID(), StagedAt: time.Now().UTC(),
		Content: &manifest.Content{Rows: 2, Bytes: 10, ContentChecksum: "x:0011223344556677",
			Files: []manifest.File{{Path: "part-0.parquet", Size: 10, Rows: 2, Checksum: "sha256:" + strings.Repeat("a", 64), Columns: cols}}}}
	data, err := swap.EncodeStaged(rec)
	if err != nil {
		t.Fatal(err)
	}
	g := string(data)
	if !strings.Contains(g, `"version": "1.2"`) {
		t.Fatalf("a record with statistics is not version 1.2:\n%s", g)
	}
	r, err := swap.DecodeStaged(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Content.Files[0].Columns; !reflect.DeepEqual(got, cols) {
		t.Fatalf("columns after a round trip: %+v, want %+v", got, cols)
	}
	if rec.Version != manifest.Version {
		t.Fatalf("encoding changed the record's version to %q", rec.Version)
	}
	// Without statistics the record stays 1.0, as earlier versions read it.
	rec.Content.Files[0].Columns = nil
	plain, err := swap.EncodeStaged(rec)
	if err != nil || !strings.Contains(string(plain), `"version": "1.0"`) || strings.Contains(string(plain), "columns") {
		t.Fatalf("a record without statistics:\n%s %v", plain, err)
	}
	for name, c := range map[string]struct{ doc, want string }{
		"columns in 1.0":   {strings.Replace(g, `"version": "1.2"`, `"version": "1.0"`, 1), "columns: unknown field"},
		"duplicate column": {strings.Replace(g, `"name": "note"`, `"name": "id"`, 1), "duplicates"},
		"negative nulls":   {strings.Replace(g, `"nulls": 0`, `"nulls": -3`, 1), "nulls: negative"},
		"empty bound":      {strings.Replace(g, `"min": "1"`, `"min": ""`, 1), "min: empty"},
	} {
		if c.doc == g {
			t.Fatalf("%s: the encoding changed; this test needs new seeds:\n%s", name, g)
		}
		_, err := swap.DecodeStaged([]byte(c.doc))
		if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", name, err, c.want)
		}
	}
	// A newer minor's additions inside a file are ignored.
	if _, err := swap.DecodeStaged([]byte(strings.Replace(strings.Replace(g, `"version": "1.2"`, `"version": "1.9"`, 1), `"columns": [`, `"lease": 1, "columns": [`, 1))); err != nil {
		t.Errorf("a newer minor version: %v", err)
	}
}
