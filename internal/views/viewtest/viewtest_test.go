package viewtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/views/viewtest"
	"github.com/pswap/pswap/store"
)

// report logs the faults each case injected, for the conformance table.
func report(t *testing.T, known map[string]string) viewtest.Options {
	return viewtest.Options{Known: known, Report: func(driver, fault string, n int) {
		t.Logf("conformance: %s %s: %d", driver, fault, n)
	}}
}

func TestDelta(t *testing.T) {
	viewtest.Run(t, func() viewtest.Driver { return deltaDriver{} }, report(t, nil))
}

func TestIceberg(t *testing.T) {
	viewtest.Run(t, func() viewtest.Driver { return icebergDriver{} }, report(t, nil))
}

// deltaDriver adapts internal/deltalog.
type deltaDriver struct{}

func (deltaDriver) Name() string { return "delta" }

func (deltaDriver) PublishCommit(ctx context.Context, st store.Store, c viewtest.Commit) error {
	_, err := deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: c.Partition, Generation: c.Generation, Seq: c.Seq}, deltalog.Options{})
	return err
}

func (deltaDriver) Publish(ctx context.Context, st store.Store) error {
	_, err := deltalog.Publish(ctx, st, deltalog.Options{})
	return err
}

func (deltaDriver) Check(ctx context.Context, st store.Store) error {
	want, err := viewtest.Pointers(ctx, st)
	if err != nil {
		return err
	}
	s, err := deltalog.Load(ctx, st)
	if err != nil {
		return err
	}
	if s.Version < 0 {
		return errors.New("no Delta log")
	}
	files := map[string][]string{}
	for p, a := range s.Files {
		k, ok := deltalog.KeyOfPath(p)
		if !ok {
			return fmt.Errorf("add path %q", p)
		}
		part := a.Tags[deltalog.TagPartition]
		files[part] = append(files[part], k)
	}
	var sc struct {
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(s.Metadata.SchemaString), &sc); err != nil {
		return err
	}
	var cols []string
	for _, f := range sc.Fields {
		cols = append(cols, f.Name)
	}
	if err := want.Compare(files, cols); err != nil {
		return fmt.Errorf("version %d: %w", s.Version, err)
	}
	return nil
}

func (deltaDriver) IsVersion(key string) bool {
	name, ok := strings.CutPrefix(key, deltalog.LogDir)
	return ok && len(name) == 25 && strings.HasSuffix(name, ".json")
}

func (deltaDriver) Prefix() string { return deltalog.LogDir }

// Foreign appends a version with an add without pswap's tags, as another
// writer's INSERT would.
func (deltaDriver) Foreign(ctx context.Context, st store.Store) error {
	s, err := deltalog.Load(ctx, st)
	if err != nil {
		return err
	}
	foreign := `{"commitInfo":{"operation":"WRITE"}}` + "\n" +
		`{"add":{"path":"dt=2026-11-01/part-0.parquet","partitionValues":{"dt":"2026-11-01"},"size":1,"modificationTime":1,"dataChange":true}}` + "\n"
	_, err = st.Put(ctx, deltalog.CommitKey(s.Version+1), []byte(foreign), store.PutOptions{IfNoneMatch: true})
	return err
}

func (deltaDriver) ErrForeign() error { return deltalog.ErrForeign }

func (deltaDriver) DeleteNewest(ctx context.Context, st store.Store) error {
	s, err := deltalog.Load(ctx, st)
	if err != nil {
		return err
	}
	return st.Delete(ctx, deltalog.CommitKey(s.Version))
}

// icebergDriver adapts internal/lakehouse.
type icebergDriver struct{}

func (icebergDriver) Name() string { return "iceberg" }

func (icebergDriver) PublishCommit(ctx context.Context, st store.Store, c viewtest.Commit) error {
	// WaitForView: the suite's contract is a publish that brings the view
	// up to date (or fails); under the publish lease a commit may instead
	// be pending on another publisher, which the lease's own tests
	// (internal/lakehouse TestLease*) and the simulation cover.
	_, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: c.Partition, Generation: c.Generation, Seq: c.Seq}, lakehouse.Options{WaitForView: true})
	return err
}

func (icebergDriver) Publish(ctx context.Context, st store.Store) error {
	_, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
	return err
}

func ioOf(st store.Store) table.FSysF {
	return func(ctx context.Context) (iceio.IO, error) { return lakehouse.IO(ctx, st), nil }
}

func (icebergDriver) Check(ctx context.Context, st store.Store) error {
	want, err := viewtest.Pointers(ctx, st)
	if err != nil {
		return err
	}
	loc, v, err := lakehouse.Latest(ctx, st)
	if err != nil {
		return err
	}
	if loc == "" {
		return errors.New("no Iceberg metadata")
	}
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, ioOf(st), nil)
	if err != nil {
		return fmt.Errorf("open v%d: %w", v, err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan v%d: %w", v, err)
	}
	root := strings.TrimSuffix(tbl.Location(), "/") + "/"
	files := map[string][]string{}
	for _, task := range tasks {
		k, ok := strings.CutPrefix(task.File.FilePath(), root)
		if !ok {
			return fmt.Errorf("v%d names %s, outside the table %s", v, task.File.FilePath(), root)
		}
		part, _ := layout.PartitionOf(k)
		files[part] = append(files[part], k)
	}
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	if err := want.Compare(files, cols); err != nil {
		return fmt.Errorf("v%d: %w", v, err)
	}
	return nil
}

func (icebergDriver) IsVersion(key string) bool {
	_, ok := lakehouse.VersionOfKey(key)
	return ok
}

func (icebergDriver) Prefix() string { return lakehouse.MetadataPrefix }

func (icebergDriver) ErrForeign() error { return lakehouse.ErrForeign }

func (icebergDriver) DeleteNewest(ctx context.Context, st store.Store) error {
	_, v, err := lakehouse.Latest(ctx, st)
	if err != nil {
		return err
	}
	return st.Delete(ctx, lakehouse.MetadataKey(v))
}

// Foreign writes the next version as another engine would: a snapshot
// whose manifest list names a manifest that is not pswap's (a copy of
// pswap's first one under another engine's name).
func (icebergDriver) Foreign(ctx context.Context, st store.Store) error {
	_, v, err := lakehouse.Latest(ctx, st)
	if err != nil {
		return err
	}
	data, _, err := store.ReadAll(ctx, st, lakehouse.MetadataKey(v))
	if err != nil {
		return err
	}
	var md map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&md); err != nil {
		return err
	}
	root := strings.TrimSuffix(md["location"].(string), "/") + "/"
	keyOf := func(loc string) string { return strings.TrimPrefix(loc, root) }
	cur, _ := md["current-snapshot-id"].(json.Number).Int64()
	var snap map[string]any
	for _, s := range md["snapshots"].([]any) {
		if id, _ := s.(map[string]any)["snapshot-id"].(json.Number).Int64(); id == cur {
			snap = s.(map[string]any)
		}
	}
	listLoc := snap["manifest-list"].(string)
	ld, _, err := store.ReadAll(ctx, st, keyOf(listLoc))
	if err != nil {
		return err
	}
	list, err := iceberg.ReadManifestList(bytes.NewReader(ld))
	if err != nil {
		return err
	}
	next := cur + 1
	seq, _ := md["last-sequence-number"].(json.Number).Int64()
	seq++
	mf := list[0]
	mloc := mf.FilePath()[:strings.LastIndex(mf.FilePath(), "/")+1] + "foreign-engine-manifest.avro"
	if _, err := store.Copy(ctx, st, keyOf(mloc), keyOf(mf.FilePath()), store.CopyOptions{}); err != nil {
		return err
	}
	list[0] = iceberg.NewManifestFile(2, mloc, mf.Length(), mf.PartitionSpecID(), mf.SnapshotID()).
		SequenceNum(mf.SequenceNum(), mf.MinSequenceNum()).Content(mf.ManifestContent()).
		AddedFiles(mf.AddedDataFiles()).ExistingFiles(mf.ExistingDataFiles()).DeletedFiles(mf.DeletedDataFiles()).
		AddedRows(mf.AddedRows()).ExistingRows(mf.ExistingRows()).DeletedRows(mf.DeletedRows()).
		Partitions(mf.Partitions()).Build()
	var buf bytes.Buffer
	if err := iceberg.WriteManifestList(2, &buf, next, &cur, &seq, 0, list); err != nil {
		return err
	}
	newList := listLoc[:strings.LastIndex(listLoc, "/")+1] + "snap-foreign-engine.avro"
	if _, err := st.Put(ctx, keyOf(newList), buf.Bytes(), store.PutOptions{IfNoneMatch: true}); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	md["snapshots"] = append(md["snapshots"].([]any), map[string]any{
		"snapshot-id": next, "parent-snapshot-id": cur, "sequence-number": seq, "timestamp-ms": now,
		"manifest-list": newList, "summary": map[string]any{"operation": "append"}, "schema-id": snap["schema-id"],
	})
	md["current-snapshot-id"] = next
	md["last-sequence-number"] = seq
	md["last-updated-ms"] = now
	md["refs"] = map[string]any{"main": map[string]any{"snapshot-id": next, "type": "branch"}}
	if log, ok := md["snapshot-log"].([]any); ok {
		md["snapshot-log"] = append(log, map[string]any{"timestamp-ms": now, "snapshot-id": next})
	}
	out, err := json.Marshal(md)
	if err != nil {
		return err
	}
	if _, err := st.Put(ctx, lakehouse.MetadataKey(v+1), out, store.PutOptions{IfNoneMatch: true}); err != nil {
		return err
	}
	_, err = st.Put(ctx, lakehouse.VersionHintKey, fmt.Appendf(nil, "%d", v+1), store.PutOptions{})
	return err
}
