"""The read side at scale (issue 29 item 2): how long Spark, PyIceberg and
DuckDB take to plan a query of a table of many partitions, and how many
requests they send, on a pswap table (one manifest per partition) against
the same rows written by Spark into an Iceberg table (Iceberg's own
manifest merging), both on MinIO through the counting proxy.

  python plan.py --pswap BIN --salessql BIN --jars DIR --work DIR --proxy URL [--partitions 1000] [--cache DIR]

With --cache, the Spark-written table (its objects and the location of its
metadata) is kept in DIR after the first run, keyed by the rows, the number
of partitions and the bucket, and later runs upload it instead of running
the CTAS again (1,000 partitions take minutes of Spark, 10,000 far more).

Each query runs --rounds times per table, alternating the two tables; a
query is a count(*) of the whole table and of one partition (Spark and
DuckDB answer a count from the metadata where they can; PyIceberg's is
plan_files()).
"""

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

import duckdb

import tools
from harness import Harness
from report import table


def parse():
    a = argparse.ArgumentParser()
    for f in ("--pswap", "--salessql", "--jars", "--work", "--proxy"):
        a.add_argument(f, required=True)
    a.add_argument("--bucket", default="pswap")
    a.add_argument("--partitions", type=int, default=1000)
    a.add_argument("--rows", type=int, default=100, help="rows per partition")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--cache", default="", help="keep the Spark-written table here between runs")
    a.add_argument("--skip-pswap-write", action="store_true", help="write and cache only the Spark table, then stop")
    return a.parse_args()


def log(msg):
    print("plan.py: " + msg, file=sys.stderr, flush=True)


def make_input(args):
    """The input folder (one subfolder per day) and a key for the cache of
    the Spark-written table: the rows' generator, the partitions, the bucket."""
    folder = os.path.join(args.work, "plan-input")
    sql = subprocess.run([args.salessql, str(args.partitions * args.rows)], check=True, capture_output=True, text=True).stdout
    days = "strftime(DATE '2026-11-29' - CAST(id %% %d AS INTEGER), '%%Y-%%m-%%d')" % args.partitions
    # Sorted by dt, on one thread: one file per partition, as the
    # Spark-written table has (unsorted, DuckDB writes two files for most
    # of 10,000 partitions, on one thread as on two: 19,901 files, and the
    # pswap table would plan twice the entries).
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.execute("COPY (SELECT * FROM (SELECT *, %s AS dt FROM (%s)) ORDER BY dt) TO '%s' (FORMAT parquet, PARTITION_BY (dt), OVERWRITE)" % (days, sql, folder))
    key = hashlib.sha256(("%s\n%s\n%s" % (sql, days, args.bucket)).encode()).hexdigest()[:16]
    return folder, key


def s3fs():
    from pyarrow import fs

    e = tools.s3_env()
    scheme, host = e["endpoint"].split("://", 1)
    return fs.S3FileSystem(access_key=e["key"], secret_key=e["secret"], region=e["region"],
                           endpoint_override=host, scheme=scheme, force_virtual_addressing=False)


def cached_spark(args, key, spark_req):
    """The Spark-written table from --cache (uploaded to the store), or None."""
    if not args.cache:
        return None
    d = os.path.join(args.cache, "spark-%d-%s" % (args.partitions, key))
    loc_file = os.path.join(d, "metadata_location")
    if not os.path.exists(loc_file):
        return None
    from pyarrow import fs

    start = time.perf_counter()
    fs.copy_files(os.path.join(d, "objects"), spark_req["table"][len("s3://"):], destination_filesystem=s3fs(),
                  use_threads=True)
    log("uploaded the cached Spark-written table in %.1fs" % (time.perf_counter() - start))
    with open(loc_file) as f:
        loc = f.read().strip()
    with open(os.path.join(d, "write_seconds")) as f:
        took = float(f.read())
    return loc, took


def cache_spark(args, key, spark_req, loc, took):
    if not args.cache:
        return
    from pyarrow import fs

    d = os.path.join(args.cache, "spark-%d-%s" % (args.partitions, key))
    tmp = d + ".tmp"
    subprocess.run(["rm", "-rf", tmp], check=True)
    os.makedirs(os.path.join(tmp, "objects"))
    fs.copy_files(spark_req["table"][len("s3://"):], os.path.join(tmp, "objects"), source_filesystem=s3fs(), use_threads=True)
    with open(os.path.join(tmp, "metadata_location"), "w") as f:
        f.write(loc + "\n")
    with open(os.path.join(tmp, "write_seconds"), "w") as f:
        f.write("%.3f\n" % took)
    subprocess.run(["rm", "-rf", d], check=True)
    os.rename(tmp, d)
    log("cached the Spark-written table in %s" % d)


def write_pswap(args, folder):
    t = "s3://%s/plan/pswap-%d" % (args.bucket, args.partitions)
    start = time.perf_counter()
    subprocess.run([args.pswap, "commit", "-q", "--table", t, "--partitioned", folder, "--parallel", "8", "--run-id", ""], check=True)
    took = time.perf_counter() - start
    meta = json.loads(subprocess.run([args.pswap, "publish", "--json", "--table", t], check=True, capture_output=True, text=True).stdout)
    return t, meta.get("metadata_location"), took


def write_spark(args, folder, spark_req):
    s = tools.Spark().session(spark_req)
    s.sql("CREATE NAMESPACE IF NOT EXISTS cat.db")
    start = time.perf_counter()
    # Sorted by dt, so that one data file is open at a time, and a heap of
    # 6 GiB: 1,000 partitions in one job exhaust 2 GiB.
    s.sql("CREATE TABLE cat.db.plan USING iceberg PARTITIONED BY (dt) "
          "TBLPROPERTIES ('write.spark.fanout.enabled' = 'false', 'write.distribution-mode' = 'range') "
          "AS SELECT * FROM parquet.`%s` ORDER BY dt" % folder)
    took = time.perf_counter() - start
    con = sqlite3.connect(spark_req["catalog"])
    loc = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_name = 'plan'").fetchone()[0]
    return loc, took


def publish_costs(args, h, folder, one):
    """The requests and time of a commit's publish on the pswap table: a
    commit with --publish=false of one partition, then one with the publish
    of the partition next to it, the difference the publish's. Of the
    newest month (hot), of a partition in the middle (cold: its manifest
    holds most of the table), and the first commit of a new month (it
    merges the month before into the cold manifest)."""
    t = "s3://%s/plan/pswap-%d" % (args.bucket, args.partitions)
    src = os.path.join(folder, "dt=" + one)
    src = os.path.join(src, sorted(os.listdir(src))[0])

    def day(back):
        return duckdb.sql("SELECT strftime(DATE '2026-11-29' - %d, '%%Y-%%m-%%d')" % back).fetchone()[0]

    def run(dt, publish):
        before = h.counts()
        start = time.perf_counter()
        subprocess.run([args.pswap, "commit", "-q", "--table", t, "--partition", "dt=" + dt, "--run-id", "",
                        "--publish=%s" % ("true" if publish else "false"), src], check=True)
        took = time.perf_counter() - start
        return took, h.diff(h.counts(), before)["requests"]

    rows = []
    mid = args.partitions // 2
    for name, a, b in (("hot (newest month)", day(1), day(2)), ("cold (a middle day)", day(mid + 1), day(mid + 2)),
                       ("a new month's first", "2026-12-01", "2026-12-02")):
        ta, ra = run(a, False)
        tb, rb = run(b, True)
        rows.append([name, "%d" % ra, "%d" % rb, "%d" % (rb - ra), "%.2f" % ta, "%.2f" % tb])
    return rows


def manifests(meta_loc, props):
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(meta_loc, properties=props)
    snap = t.current_snapshot()
    ms = snap.manifests(t.io)
    return "%d (%.1f MB)" % (len(ms), sum(m.manifest_length for m in ms) / 1e6)


def main():
    args = parse()
    os.makedirs(args.work, exist_ok=True)
    h = Harness(args.pswap, args.jars, args.proxy, args.work)
    props = tools.pyiceberg_s3_props()
    log("writing %d partitions of %d rows" % (args.partitions, args.rows))
    folder, key = make_input(args)
    spark_req = {"tool": "spark", "table": "s3://%s/plan/spark-%d" % (args.bucket, args.partitions),
                 "catalog": os.path.join(args.work, "plan-catalog.db"), "jars": args.jars,
                 "memory": "6g"}
    cached = cached_spark(args, key, spark_req)
    if cached is None:
        spark_meta, spark_write = write_spark(args, folder, spark_req)
        log("Spark wrote in %.1fs: %s" % (spark_write, spark_meta))
        cache_spark(args, key, spark_req, spark_meta, spark_write)
    else:
        spark_meta, spark_write = cached
        s = tools.Spark().session(spark_req)
        s.sql("CREATE NAMESPACE IF NOT EXISTS cat.db")
        s.sql("CALL cat.system.register_table(table => 'db.plan', metadata_file => '%s')" % spark_meta)
    if args.skip_pswap_write:
        return
    _, pswap_meta, pswap_write = write_pswap(args, folder)
    log("pswap wrote in %.1fs: %s" % (pswap_write, pswap_meta))
    metas = {"pswap": pswap_meta, "spark": spark_meta}
    s = tools.Spark().session(spark_req)
    s.sql("CREATE NAMESPACE IF NOT EXISTS cat.db")
    s.sql("CALL cat.system.register_table(table => 'db.plan_pswap', metadata_file => '%s')" % pswap_meta)
    names = {"pswap": "cat.db.plan_pswap", "spark": "cat.db.plan"}
    con = tools.DuckDB().con({"table": "s3://x"})
    from reader import extension_file

    for ext in ("avro", "iceberg"):
        con.execute("LOAD '%s'" % extension_file(ext))
    # Every query reads the store as a fresh process would (DuckDB caches
    # remote files in memory by default, and would count no requests).
    con.execute("SET enable_external_file_cache = false")
    # A partition in the middle of the range, for the pruned query.
    one = duckdb.sql("SELECT strftime(DATE '2026-11-29' - %d, '%%Y-%%m-%%d')" % (args.partitions // 2)).fetchone()[0]

    def pyice(meta, filt):
        from pyiceberg.table import StaticTable

        t = StaticTable.from_metadata(meta, properties=props)
        kw = {"row_filter": "dt = '%s'" % one} if filt else {}
        return len(list(t.scan(**kw).plan_files()))

    def duck(meta, filt):
        where = " WHERE dt = '%s'" % one if filt else ""
        return con.execute("SELECT count(*) FROM iceberg_scan('%s')%s" % (meta, where)).fetchone()[0]

    def spark(name, filt):
        where = " WHERE dt = '%s'" % one if filt else ""
        s.sql("REFRESH TABLE %s" % name)
        return s.sql("SELECT count(*) FROM %s%s" % (name, where)).collect()[0][0]

    engines = {
        "PyIceberg plan_files": lambda w, f: pyice(metas[w], f),
        "DuckDB count(*)": lambda w, f: duck(metas[w], f),
        "Spark count(*)": lambda w, f: spark(names[w], f),
    }
    for fn in engines.values():  # untimed: imports, first connections
        for w in ("pswap", "spark"):
            fn(w, True)
    res = {}
    for eng, fn in engines.items():
        for filt in (False, True):
            for r in range(args.rounds):
                for w in (("pswap", "spark") if r % 2 == 0 else ("spark", "pswap")):
                    before = h.counts()
                    start = time.perf_counter()
                    got = fn(w, filt)
                    took = time.perf_counter() - start
                    c = h.diff(h.counts(), before)
                    res.setdefault((eng, filt, w), []).append((took, c["requests"], got))
            log("%s %s done" % (eng, "one partition" if filt else "whole table"))
    pub_rows = publish_costs(args, h, folder, one)
    rows = []
    for eng in engines:
        for filt in (False, True):
            p, sp = res[(eng, filt, "pswap")], res[(eng, filt, "spark")]
            ratio = [a[0] / b[0] for a, b in zip(p, sp)]
            rows.append([eng, "one partition" if filt else "whole table",
                         "%.2f" % statistics.median(x[0] for x in p), "%.0f" % statistics.median(x[1] for x in p),
                         "%.2f" % statistics.median(x[0] for x in sp), "%.0f" % statistics.median(x[1] for x in sp),
                         "%.2f (%.2f–%.2f)" % (statistics.median(ratio), min(ratio), max(ratio)),
                         "%s / %s" % (p[0][2], sp[0][2])])
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("### Planning a table of %d partitions on MinIO: pswap's metadata against Spark's\n" % args.partitions)
    print("Manifests in the current snapshot: pswap %s, Spark %s. Writing the table: pswap `commit --partitioned --parallel 8` %.1f s, "
          "Spark CTAS %.1f s. %d rounds, alternating the tables; load average %s.\n"
          % (manifests(pswap_meta, props), manifests(spark_meta, props), pswap_write, spark_write, args.rounds, load))
    print(table(["engine", "query", "pswap s", "pswap requests", "Spark-written s", "Spark-written requests",
                 "x (pswap / Spark-written)", "answer (pswap / Spark)"], rows))
    print("\nA commit of one partition of the pswap table (after the queries), without and with its publish; the "
          "difference is the publish's requests (the CLI's defaults otherwise).\n")
    print(table(["commit of", "requests --publish=false", "requests with the publish", "the publish's requests",
                 "s --publish=false", "s with the publish"], pub_rows))


if __name__ == "__main__":
    main()
