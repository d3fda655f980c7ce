package views

import (
	"context"

	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
)

// IcebergDriver publishes the Iceberg metadata (internal/lakehouse).
type IcebergDriver struct {
	// Options are lakehouse's, without a Catalog (the pipeline publishes
	// catalogs itself). A Prefetch serves the first attempt only.
	Options lakehouse.Options
}

// Name is Iceberg.
func (d *IcebergDriver) Name() string { return Iceberg }

// PublishCommit implements Driver.
func (d *IcebergDriver) PublishCommit(ctx context.Context, st store.Store, c Commit) (Result, error) {
	r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: c.Partition, Generation: c.Generation,
		Seq: c.Seq, Manifest: c.Manifest, Table: c.Table, SwappedAt: c.SwappedAt}, d.once())
	return icebergResult(r), err
}

// Reconcile implements Driver.
func (d *IcebergDriver) Reconcile(ctx context.Context, st store.Store) (Result, error) {
	r, err := lakehouse.Publish(ctx, st, d.once())
	return icebergResult(r), err
}

// once returns the options of an attempt: a prefetch serves one.
func (d *IcebergDriver) once() lakehouse.Options {
	o := d.Options
	o.Catalog = nil
	d.Options.Prefetch = nil
	return o
}

// Reflected implements Driver.
func (d *IcebergDriver) Reflected(ctx context.Context, st store.Store, parts []string) (Reflection, error) {
	v, loc, seqs, err := lakehouse.Reflected(ctx, st, parts)
	r := Reflection{Version: -1, Location: loc, Seqs: seqs}
	if v > 0 {
		r.Version = int64(v)
	}
	return r, err
}

func icebergResult(r lakehouse.Result) Result {
	v := int64(r.Version)
	if r.MetadataLocation == "" {
		v = -1
	}
	return Result{Changed: r.Changed, Version: v, Location: r.MetadataLocation, Rebases: r.Rebases, Pending: r.Pending, Iceberg: &r}
}

// DeltaDriver publishes the Delta Lake log (internal/deltalog).
type DeltaDriver struct {
	Options deltalog.Options
}

// Name is Delta.
func (d *DeltaDriver) Name() string { return Delta }

// PublishCommit implements Driver.
func (d *DeltaDriver) PublishCommit(ctx context.Context, st store.Store, c Commit) (Result, error) {
	r, err := deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: c.Partition, Generation: c.Generation,
		Seq: c.Seq, Manifest: c.Manifest}, d.Options)
	return deltaResult(r), err
}

// Reconcile implements Driver.
func (d *DeltaDriver) Reconcile(ctx context.Context, st store.Store) (Result, error) {
	r, err := deltalog.Publish(ctx, st, d.Options)
	return deltaResult(r), err
}

// Reflected implements Driver.
func (d *DeltaDriver) Reflected(ctx context.Context, st store.Store, _ []string) (Reflection, error) {
	v, seqs, err := deltalog.Reflected(ctx, st)
	return Reflection{Version: v, Seqs: seqs}, err
}

func deltaResult(r deltalog.Result) Result {
	return Result{Changed: r.Changed, Version: r.Version, Rebases: r.Rebases, Delta: &r}
}
