"""Reads Parquet files with DuckDB and prints rows and sum(amount) per dt as JSON.

The URIs (a JSON list on stdin, file:// or s3://) are those `pswap files`
lists; dt comes from their Hive-style paths. DuckDB and its extensions are the
engines' (integration/engines/reader.py loads them offline; on S3 it creates
the secret from the AWS variables).
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engines"))
import reader  # noqa: E402

uris = json.load(sys.stdin)
out = {}
if uris:
    rows = reader.duck().execute(
        "SELECT dt::VARCHAR, count(*), sum(amount) FROM read_parquet(?, hive_partitioning = true) GROUP BY dt",
        [uris],
    ).fetchall()
    out = {"dt=" + dt: {"rows": n, "sum": s} for dt, n, s in rows}
print(json.dumps(out))
