"""Reading a table back: its files with pyarrow, and the engines' reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import pswap


def _fs(uri: str) -> tuple[Any, str]:
    from pyarrow import fs

    if uri.startswith("s3://"):
        s3 = fs.S3FileSystem(endpoint_override=os.environ["AWS_ENDPOINT_URL"],
                             access_key=os.environ["AWS_ACCESS_KEY_ID"],
                             secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                             region=os.environ.get("AWS_REGION", "us-east-1"))
        return s3, uri[len("s3://"):]
    if uri.startswith("file://"):
        return fs.LocalFileSystem(), uri[len("file://"):]
    return fs.LocalFileSystem(), uri


def read_partition(t: pswap.Table, partition: str) -> pa.Table:
    """The partition's current rows, read from the files ``files`` lists."""
    parts = []
    for f in t.files(partition=partition).files:
        filesystem, path = _fs(f.uri)
        parts.append(pq.read_table(path, filesystem=filesystem))
    return pa.concat_tables(parts) if parts else pa.table({})


def rows(table: pa.Table, *columns: str) -> list[tuple[Any, ...]]:
    """The table's rows as sorted tuples of the columns."""
    cols = [table.column(c).to_pylist() for c in columns]
    return sorted(zip(*cols), key=repr)


ENGINE_READ = r"""
import json, os, sys
kind, table, metadata = sys.argv[1:4]
s3 = table.startswith("s3://")
if kind == "pyiceberg":
    from pyiceberg.table import StaticTable
    props = {}
    if s3:
        props = {"s3.endpoint": os.environ["AWS_ENDPOINT_URL"], "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
                 "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
                 "s3.region": os.environ.get("AWS_REGION", "us-east-1"), "s3.force-virtual-addressing": "false"}
    at = StaticTable.from_metadata(metadata, properties=props).scan().to_arrow()
else:
    from deltalake import DeltaTable
    opts = None
    if s3:
        opts = {"AWS_ENDPOINT_URL": os.environ["AWS_ENDPOINT_URL"], "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
                "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
                "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"), "AWS_ALLOW_HTTP": "true"}
    at = DeltaTable(table, storage_options=opts).to_pyarrow_table()
print(json.dumps({c: [repr(v) for v in at.column(c).to_pylist()] for c in at.column_names}))
"""


def engine_read(kind: str, table: str, metadata: str) -> dict[str, list[str]]:
    """The table's columns as an engine reads them (values as repr), through
    the engines' environment ($PSWAP_ENGINES_PYTHON): PyIceberg from the
    Iceberg metadata, delta-rs from the Delta log."""
    py = os.environ["PSWAP_ENGINES_PYTHON"]
    p = subprocess.run([py, "-c", ENGINE_READ, kind, table, metadata], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise AssertionError(f"{kind} failed to read {table}: {p.stderr[-2000:]}")
    out: dict[str, list[str]] = json.loads(p.stdout)
    return out
