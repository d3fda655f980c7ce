"""Reads a pswap table's views on Google Cloud Storage (fake-gcs-server in
the tests) at every snapshot and version it published, and prints what each
engine sees, as one JSON object on stdout.

The request is one JSON object on stdin:

  {"table": "gs://bucket/prefix",           the table root (the Delta log's)
   "metadata": "gs://.../vN.metadata.json", the current Iceberg metadata
   "steps": [{"metadata": ..., "delta_version": N}, ...],  one per commit
   "files": ["gs://...parquet", ...],       the current data files
   "sum": "amount", "part_col": "dt", "part_value": "2026-12-02"}

and the answer, for each engine, the current table and each step:

  pyiceberg       StaticTable.from_metadata(gs://...) through gcsfs
                  (FsspecFileIO, gcs.service.host = the emulator, anonymous
                  token): rows and sum now, the files a filter on one
                  partition plans, and scan(snapshot_id) of every step's
                  snapshot (time travel on the current metadata);
  deltalake       DeltaTable(gs://...) through delta-rs's object store: a
                  service-account file whose gcs_base_url is the emulator
                  and disable_oauth true (object_store has no endpoint key
                  for GCS; this is how its own tests reach fake-gcs-server),
                  now and at every step's version;
  duckdb_iceberg  iceberg_scan of the current metadata (snapshot_from_id for
                  every step) through DuckDB's httpfs GCS support: the XML API
                  with an HMAC secret, path-style, at the emulator's address
                  (fake-gcs-server checks no signature);
  duckdb_delta    delta_scan of the table now;
  duckdb_files    read_parquet of the files `pswap files` lists.

Each answer is {"rows": n, "sum": s} (the plan adds "pruned_files" and
"pruned_rows"; delta-rs adds "files" and "version"); steps are in order.
The emulator's address comes from STORAGE_EMULATOR_HOST; it takes no
credentials, so there is no secret to print.

  python gcs_views.py < request.json
"""
import json
import os
import sys

# gcsfs (2026.10) asks the storage control API, over gRPC with TLS, whether
# a bucket is zonal or hierarchical before its first read; an emulator has
# no such API, and the probe waits out a 60-second timeout twice before
# falling back to the plain JSON API. The plain file system is what a
# flat bucket uses anyway.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")


def emulator():
    host = os.environ["STORAGE_EMULATOR_HOST"]
    return host if "://" in host else "http://" + host


def total(arrow, col):
    return {"rows": arrow.num_rows, "sum": sum(v for v in arrow.column(col).to_pylist() if v is not None)}


def pyiceberg(req):
    from pyiceberg.table import StaticTable

    props = {
        "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
        "gcs.service.host": emulator(),
        "gcs.oauth2.token": "anon",
        "gcs.project-id": "pswap",
    }
    col = req["sum"]
    t = StaticTable.from_metadata(req["metadata"], properties=props)
    out = total(t.scan().to_arrow(), col)
    pruned = list(t.scan(row_filter="%s == '%s'" % (req["part_col"], req["part_value"])).plan_files())
    out["pruned_files"] = len(pruned)
    out["pruned_rows"] = sum(f.file.record_count for f in pruned)
    steps = []
    for s in req["steps"]:
        snap = StaticTable.from_metadata(s["metadata"], properties=props).metadata.current_snapshot_id
        steps.append(dict(total(t.scan(snapshot_id=snap).to_arrow(), col), snapshot_id=snap))
    out["steps"] = steps
    return out


def deltalake(req, tmp):
    from deltalake import DeltaTable

    account = os.path.join(tmp, "fake-gcs-account.json")
    with open(account, "w") as f:
        json.dump({"gcs_base_url": emulator(), "disable_oauth": True,
                   "client_email": "", "private_key": "", "private_key_id": ""}, f)
    opts = {"google_service_account": account, "allow_http": "true"}
    col = req["sum"]
    dt = DeltaTable(req["table"], storage_options=opts)
    out = total(dt.to_pyarrow_table(), col)
    out["files"] = len(dt.file_uris())
    out["version"] = dt.version()
    out["steps"] = [total(DeltaTable(req["table"], version=s["delta_version"], storage_options=opts).to_pyarrow_table(), col)
                    for s in req["steps"]]
    return out


def duckdb_reads(req, steps_snapshots):
    import duckdb

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from reader import extension_file

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    for name in ("httpfs", "avro", "iceberg", "delta"):
        con.execute("LOAD '%s'" % extension_file(name))
    host = emulator().split("://", 1)[1].rstrip("/")
    # GCS through its S3-compatible XML API: DuckDB signs with an HMAC key,
    # which the emulator does not check.
    con.execute("CREATE SECRET fakegcs (TYPE gcs, KEY_ID 'emulator', SECRET 'emulator', ENDPOINT ?, URL_STYLE 'path', USE_SSL false)",
                [host])
    col = req["sum"]

    def one(sql, params=None):
        n, s = con.execute(sql, params or []).fetchone()
        return {"rows": n, "sum": s}

    out = {}
    meta = req["metadata"].replace("'", "''")
    ice = one("SELECT count(*), sum(%s) FROM iceberg_scan('%s')" % (col, meta))
    ice["steps"] = [one("SELECT count(*), sum(%s) FROM iceberg_scan('%s', snapshot_from_id => %d)" % (col, meta, snap))
                    for snap in steps_snapshots]
    out["duckdb_iceberg"] = ice
    out["duckdb_delta"] = one("SELECT count(*), sum(%s) FROM delta_scan('%s')" % (col, req["table"].replace("'", "''")))
    files = req.get("files") or []
    if files:
        out["duckdb_files"] = dict(one("SELECT count(*), sum(%s) FROM read_parquet(?)" % col, [files]), files=len(files))
    return out


def main():
    import tempfile

    req = json.load(sys.stdin)
    out = {"pyiceberg": pyiceberg(req)}
    with tempfile.TemporaryDirectory() as tmp:
        out["deltalake"] = deltalake(req, tmp)
    out.update(duckdb_reads(req, [s["snapshot_id"] for s in out["pyiceberg"]["steps"]]))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
