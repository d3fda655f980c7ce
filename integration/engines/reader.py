"""The engines' side of integration/engines: one long-lived process that
reads pswap tables with Spark (Java Iceberg), PyIceberg and DuckDB's iceberg
extension, as their users would, and answers in canonical JSON.

Requests come one JSON document a line on stdin, answers go one a line on
stdout ({"ok": ...} or {"error": "..."}). The Go tests start one process per
test package, so the JVM starts once (at the package's start: the "warm"
request; or on the first Spark request).

A table is named by its root ("table": a local path or s3://bucket/prefix)
and its current metadata file ("metadata"). Each engine opens it the way
the README says:
  spark      file: spark.read.format("iceberg").load(root), which reads
             metadata/version-hint.text (Hadoop tables); s3: a JDBC catalog
             (SQLite) with S3FileIO, the table registered from its metadata
             file (system.register_table).
  pyiceberg  StaticTable.from_metadata(metadata), with the S3 properties
             (s3.endpoint, keys) on MinIO.
  catalogs   ("catalog_scan") Spark with a JDBC catalog and PyIceberg's
             SqlCatalog read the table by name from a SQL catalog (SQLite
             or PostgreSQL) that pswap commits to.
  rest       ("rest_scan") Spark (type=rest), PyIceberg's RestCatalog and
             DuckDB (ATTACH ... TYPE iceberg, ENDPOINT) read the table by
             name from the Iceberg REST catalog pswap commits to.
  duckdb     iceberg_scan(root) (file: reads the version hint) or
             iceberg_scan(metadata) (s3, with an S3 secret from the
             environment).

Values are made canonical so that the engines' answers compare exactly:
integers, floats (repr), decimals and booleans as strings, dates and
timestamps in ISO form (zoned timestamps in UTC), bytes in hex, structs as
objects, maps as objects keyed by the key's canonical form, lists as lists.
"""

import datetime
import decimal
import importlib
import json
import os
import sys
import traceback

os.environ.setdefault("TZ", "UTC")

_spark = None
_duck = None
_registered = {}


def canon(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return v.isoformat(timespec="microseconds")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, datetime.time):
        return v.isoformat(timespec="microseconds")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return {str(k): canon(x) for k, x in v.items()}
    if isinstance(v, list) and v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        return {canon(k): canon(x) for k, x in v}  # an Arrow map
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    return str(v)


def rows_of(arrow_table):
    return [{k: canon(v) for k, v in row.items()} for row in arrow_table.to_pylist()]


# ---------------------------------------------------------------- DuckDB


def duck():
    global _duck
    if _duck is None:
        import duckdb

        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        for name in ("avro", "iceberg", "httpfs", "delta"):
            con.execute("LOAD '%s'" % extension_file(name))
        con.execute("SET TimeZone = 'UTC'")
        endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
        if endpoint:
            use_ssl = endpoint.startswith("https://")
            host = endpoint.split("://", 1)[-1].rstrip("/")
            con.execute(
                "CREATE SECRET minio (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL ?)",
                [
                    os.environ["AWS_ACCESS_KEY_ID"],
                    os.environ["AWS_SECRET_ACCESS_KEY"],
                    os.environ.get("AWS_REGION", "us-east-1"),
                    host,
                    use_ssl,
                ],
            )
        _duck = con
    return _duck


def extension_file(name):
    mod = importlib.import_module("duckdb_extension_" + name)
    base = os.path.join(os.path.dirname(mod.__file__), "extensions")
    for root, _, files in os.walk(base):
        for f in files:
            if f.endswith(".duckdb_extension"):
                return os.path.join(root, f)
    raise RuntimeError("no %s extension in %s" % (name, base))


def duck_source(req):
    src = req["table"] if not req["table"].startswith("s3://") else req["metadata"]
    args = ["'%s'" % src.replace("'", "''")]
    if req.get("snapshot_id") is not None:
        args.append("snapshot_from_id => %d" % int(req["snapshot_id"]))
    return "iceberg_scan(%s)" % ", ".join(args)


def duck_scan(req):
    sql = "SELECT * FROM " + duck_source(req)
    if req.get("filter"):
        sql += " WHERE " + req["filter"]
    return rows_of(duck().execute(sql).fetch_arrow_table())


def duck_sql(req):
    return rows_of(duck().execute(req["sql"]).fetch_arrow_table())


# ---------------------------------------------------------------- PyIceberg


def pyice_table(req):
    from pyiceberg.table import StaticTable

    props = {}
    if req["metadata"].startswith("s3://"):
        props = {
            "s3.endpoint": os.environ["AWS_ENDPOINT_URL"],
            "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
            "s3.force-virtual-addressing": "false",
        }
    return StaticTable.from_metadata(req["metadata"], properties=props)


def pyice_scan(req):
    t = pyice_table(req)
    kw = {}
    if req.get("snapshot_id") is not None:
        kw["snapshot_id"] = int(req["snapshot_id"])
    if req.get("filter"):
        kw["row_filter"] = req["filter"]
    return rows_of(t.scan(**kw).to_arrow())


def pyice_plan(req):
    t = pyice_table(req)
    kw = {}
    if req.get("filter"):
        kw["row_filter"] = req["filter"]
    return sorted(task.file.file_path for task in t.scan(**kw).plan_files())


# ---------------------------------------------------------------- Spark


def spark():
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession

        jars = sorted(
            os.path.join(os.environ["PSWAP_ENGINE_JARS"], f)
            for f in os.listdir(os.environ["PSWAP_ENGINE_JARS"])
            if f.endswith(".jar")
        )
        b = (
            SparkSession.builder.master("local[2]")
            .appName("pswap-engines")
            .config("spark.jars", ",".join(jars))
            .config(
                "spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,io.delta.sql.DeltaSparkSessionExtension",
            )
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            # Delta's log replay: 50 tasks a snapshot by default, which
            # costs seconds a read on 2 cores.
            .config("spark.databricks.delta.snapshotPartitions", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "1g")
        )
        endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
        if endpoint:
            # S3 tables are read through a JDBC catalog (SQLite) with
            # Iceberg's S3FileIO, each registered from its metadata file.
            import tempfile

            db = os.path.join(tempfile.mkdtemp(prefix="pswap-engines-"), "catalog.db")
            c = "spark.sql.catalog.s3cat"
            b = (
                b.config(c, "org.apache.iceberg.spark.SparkCatalog")
                .config(c + ".type", "jdbc")
                .config(c + ".uri", "jdbc:sqlite:" + db)
                .config(c + ".jdbc.schema-version", "V1")
                .config(c + ".warehouse", "s3://unused/warehouse")
                .config(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
                .config(c + ".s3.endpoint", endpoint)
                .config(c + ".s3.path-style-access", "true")
                .config(c + ".client.region", os.environ.get("AWS_REGION", "us-east-1"))
                .config(c + ".s3.access-key-id", os.environ["AWS_ACCESS_KEY_ID"])
                .config(c + ".s3.secret-access-key", os.environ["AWS_SECRET_ACCESS_KEY"])
            )
        _spark = b.getOrCreate()
        _spark.sparkContext.setLogLevel("ERROR")
        if endpoint:
            _spark.sql("CREATE NAMESPACE IF NOT EXISTS s3cat.db")
    return _spark


def spark_name(req):
    """The name Spark reads the table by: its path (file) or a registered
    name in the in-memory catalog (s3), re-registered when the metadata
    file changed."""
    s = spark()
    if not req["table"].startswith("s3://"):
        return req["table"]
    _registered.setdefault("n", 0)
    name = _registered.get(req["metadata"])
    if name is None:
        # A fresh name per metadata file: a registration is never changed.
        _registered["n"] += 1
        name = "s3cat.db.t%d" % _registered["n"]
        s.sql(
            "CALL s3cat.system.register_table(table => '%s', metadata_file => '%s')"
            % (name[len("s3cat."):], req["metadata"])
        )
        _registered[req["metadata"]] = name
    return name


def spark_df(req, suffix=""):
    s = spark()
    name = spark_name(req)
    snap = req.get("snapshot_id")
    if name.startswith("s3cat."):
        if suffix:
            return s.table(name + "." + suffix)
        if snap is not None:
            return s.sql("SELECT * FROM %s VERSION AS OF %d" % (name, int(snap)))
        return s.table(name)
    r = s.read.format("iceberg")
    if snap is not None:
        r = r.option("versionAsOf", str(int(snap)))
    return r.load(name + ("#" + suffix if suffix else ""))


def spark_scan(req):
    df = spark_df(req)
    if req.get("filter"):
        df = df.where(req["filter"])
    return rows_of(df.toArrow())


def spark_plan(req):
    """The data files Java Iceberg plans for the filter (manifest and
    partition pruning, as Spark's scan does)."""
    s = spark()
    jvm = s._jvm
    name = spark_name(req)
    if name.startswith("s3cat."):
        table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(s._jsparkSession, name)
    else:
        conf = s._jsparkSession.sessionState().newHadoopConf()
        table = jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(name)
    scan = table.newScan()
    if req.get("filter"):
        col, val = req["plan_eq"]
        if table.schema().findType(col).typeId().toString() in ("INTEGER", "LONG"):
            val = int(val)
        scan = scan.filter(jvm.org.apache.iceberg.expressions.Expressions.equal(col, val))
    files = []
    it = scan.planFiles().iterator()
    while it.hasNext():
        files.append(it.next().file().location())
    return sorted(files)


def spark_meta(req):
    return rows_of(spark_df(req, req["meta"]).toArrow())


def spark_append(req):
    """A user's append to the table with Spark (DataFrame API, path table)."""
    s = spark()
    df = s.sql(req["sql"])
    df.write.format("iceberg").mode("append").save(spark_name(req))
    return None


def _java_table(req):
    s = spark()
    if req.get("name"):  # by its name in a catalog the session has
        return s, s._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(s._jsparkSession, req["name"])
    name = spark_name(req)
    if name.startswith("s3cat."):
        return s, s._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(s._jsparkSession, name)
    conf = s._jsparkSession.sessionState().newHadoopConf()
    return s, s._jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(name)


def spark_orphans(req):
    """What a user's remove_orphan_files deletes (the Spark action behind the
    procedure), with a cut-off in the future so that age protects nothing."""
    s, table = _java_table(req)
    actions = s._jvm.org.apache.iceberg.spark.actions.SparkActions.get(s._jsparkSession)
    cutoff = s._jvm.java.lang.System.currentTimeMillis() + 3600 * 1000
    action = actions.deleteOrphanFiles(table).olderThan(cutoff)
    if req["table"].startswith("s3://"):
        action = action.usePrefixListing(True)  # S3FileIO lists; Hadoop has no s3 file system here
    res = action.execute()
    out = []
    it = res.orphanFileLocations().iterator()
    while it.hasNext():
        out.append(it.next())
    return sorted(out)


def spark_expire(req):
    """A user's expire_snapshots keeping only the current snapshot."""
    s, table = _java_table(req)
    actions = s._jvm.org.apache.iceberg.spark.actions.SparkActions.get(s._jsparkSession)
    cutoff = s._jvm.java.lang.System.currentTimeMillis() + 3600 * 1000
    res = actions.expireSnapshots(table).expireOlderThan(cutoff).retainLast(1).execute()
    return {"deleted_data_files": res.deletedDataFilesCount(), "deleted_manifests": res.deletedManifestsCount(),
            "deleted_manifest_lists": res.deletedManifestListsCount()}


def spark_changes(req):
    """Java Iceberg's changelog scan between two snapshots (what Spark's
    changelog views and incremental readers use): the data files it reports
    as inserted and as deleted."""
    _, table = _java_table(req)
    scan = table.newIncrementalChangelogScan().fromSnapshotExclusive(int(req["from"])).toSnapshot(int(req["to"]))
    out = {"INSERT": [], "DELETE": []}
    it = scan.planFiles().iterator()
    while it.hasNext():
        task = it.next()
        out[task.operation().toString()].append(task.file().location())
    return out


def spark_write_parquet(req):
    """Spark's own Parquet writer, as a user's job writes a partitioned
    dataset: df.write.partitionBy(...).parquet(path)."""
    spark().sql(req["sql"]).write.mode("overwrite").partitionBy(*req["partition_by"]).parquet(req["path"])
    return None


def spark_sql(req):
    s = spark()
    sql = req["sql"].replace("{table}", spark_name(req))
    return rows_of(s.sql(sql).toArrow())


# ---------------------------------------------------------------- catalogs


def _catalog_uris(req):
    """The JDBC and SQLAlchemy URIs of the SQL catalog a request names:
    {"sqlite": path} or {"postgres": "host:port/db", "user": ...,
    "password": ...} (without them, PGUSER and PGPASSWORD, as the server's
    env file sets)."""
    c = req["catalog"]
    if "sqlite" in c:
        return "jdbc:sqlite:" + c["sqlite"], "sqlite:///" + c["sqlite"], {}
    hostport, db = c["postgres"].split("/", 1)
    user = c.get("user") or os.environ["PGUSER"]
    password = c.get("password") or os.environ["PGPASSWORD"]
    return (
        "jdbc:postgresql://%s/%s" % (hostport, db),
        "postgresql+psycopg2://%s:%s@%s/%s" % (user, password, hostport, db),
        {"user": user, "password": password},
    )


def spark_catalog_scan(req):
    """The table read by name, as a Spark user with a JDBC catalog named
    like the catalog's catalog_name would: SELECT * FROM name.ns.table.
    The catalog caches no table, so that each read sees the latest commit."""
    s = spark()
    name = req["catalog"]["name"]
    jdbc, _, creds = _catalog_uris(req)
    c = "spark.sql.catalog." + name
    if s.conf.get(c, None) is None:
        s.conf.set(c + ".type", "jdbc")
        s.conf.set(c + ".uri", jdbc)
        s.conf.set(c + ".warehouse", req["catalog"]["warehouse"])
        s.conf.set(c + ".jdbc.schema-version", "V1")
        s.conf.set(c + ".cache-enabled", "false")
        for k, v in creds.items():
            s.conf.set(c + ".jdbc." + k, v)
        s.conf.set(c, "org.apache.iceberg.spark.SparkCatalog")
    return rows_of(s.table("%s.%s" % (name, req["name"])).toArrow())


def pyice_catalog_scan(req):
    """The table read by name through PyIceberg's SqlCatalog."""
    from pyiceberg.catalog.sql import SqlCatalog

    _, uri, _ = _catalog_uris(req)
    cat = SqlCatalog(req["catalog"]["name"], uri=uri, warehouse="file://" + req["catalog"]["warehouse"])
    try:
        return rows_of(cat.load_table(req["name"]).scan().to_arrow())
    finally:
        cat.engine.dispose()


def _s3_props():
    return {
        "s3.endpoint": os.environ["AWS_ENDPOINT_URL"],
        "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
        "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
    }


def spark_rest_scan(req):
    """The table read by name from an Iceberg REST catalog, as a Spark user
    would: spark.sql.catalog.NAME.type=rest, SELECT * FROM NAME.ns.table.
    The catalog caches no table, so that each read sees the latest commit."""
    s = spark()
    r = req["rest"]
    c = "spark.sql.catalog." + r["name"]
    if s.conf.get(c, None) is None:
        s.conf.set(c + ".type", "rest")
        s.conf.set(c + ".uri", r["uri"])
        s.conf.set(c + ".token", r["token"])
        s.conf.set(c + ".cache-enabled", "false")
        s.conf.set(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        s.conf.set(c + ".s3.path-style-access", "true")
        s.conf.set(c + ".client.region", os.environ.get("AWS_REGION", "us-east-1"))
        for k, v in _s3_props().items():
            if k != "s3.region":
                s.conf.set(c + "." + k, v)
        s.conf.set(c, "org.apache.iceberg.spark.SparkCatalog")
    return rows_of(s.table("%s.%s" % (r["name"], req["name"])).toArrow())


def pyice_rest_scan(req):
    """The table read by name through PyIceberg's RestCatalog."""
    from pyiceberg.catalog.rest import RestCatalog

    r = req["rest"]
    props = dict(_s3_props(), **{"s3.force-virtual-addressing": "false"})
    cat = RestCatalog(r["name"], uri=r["uri"], token=r["token"], **props)
    return rows_of(cat.load_table(req["name"]).scan().to_arrow())


def duck_rest_scan(req):
    """The table read by name from the REST catalog ATTACHed in DuckDB
    (TYPE iceberg, ENDPOINT), with the S3 secret of duck() for the data."""
    con = duck()
    r = req["rest"]
    name = r["name"]
    if name not in _registered:
        con.execute("CREATE SECRET %s_auth (TYPE iceberg, TOKEN ?)" % name, [r["token"]])
        q = lambda v: "'%s'" % v.replace("'", "''")  # noqa: E731 - ATTACH takes no parameters
        con.execute(
            "ATTACH %s AS %s (TYPE iceberg, ENDPOINT %s, SECRET %s_auth)"
            % (q(r.get("warehouse") or ""), name, q(r["uri"]), name)
        )
        _registered[name] = True
    return rows_of(con.execute("SELECT * FROM %s.%s" % (name, req["name"])).fetch_arrow_table())


# ---------------------------------------------------------------- oracle


def oracle(req):
    """The current rows as DuckDB reads them straight from the data files
    that `pswap files --format json` lists, with the partition columns
    taken from each file's partition key."""
    con = duck()
    parts = []
    for f in req["files"]:
        path = f["path"].replace("'", "''")
        cols = [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet('%s')" % path).fetchall()]
        extra = []
        for k, v in f["partition"].items():
            if k not in cols:
                extra.append("'%s' AS \"%s\"" % (v.replace("'", "''"), k))
        sel = "*" + "".join(", " + e for e in extra)
        parts.append("SELECT %s FROM read_parquet('%s')" % (sel, path))
    if not parts:
        return []
    sql = " UNION ALL BY NAME ".join(parts)
    return rows_of(con.execute(sql).fetch_arrow_table())


# ---------------------------------------------------------------- Delta Lake
#
# The Delta log pswap publishes beside the Iceberg metadata (_delta_log/),
# read by the table's root as the README says: delta-rs
# (deltalake.DeltaTable), Polars (read_delta), DuckDB (delta_scan) and
# Spark (format("delta").load, file: only: Spark's Delta reads S3 through
# hadoop-aws, which the engines do not install). "version" time-travels.


def delta_storage():
    endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
    if not endpoint:
        return None
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }


def delta_rs_table(req):
    from deltalake import DeltaTable

    kw = {}
    if req.get("version") is not None:
        kw["version"] = int(req["version"])
    if req["table"].startswith("s3://"):
        kw["storage_options"] = delta_storage()
    return DeltaTable(req["table"], **kw)


def deltars_scan(req):
    return {"version": delta_rs_table(req).version(), "rows": rows_of(delta_rs_table(req).to_pyarrow_table())}


def deltars_vacuum(req):
    """A user's VACUUM with no retention: what it deletes (and, in dry
    runs, would delete). full: list the whole table (delta-rs's full mode)
    instead of the tombstones only."""
    dt = delta_rs_table(req)
    return sorted(
        dt.vacuum(
            retention_hours=0,
            enforce_retention_duration=False,
            dry_run=bool(req.get("dry_run")),
            full=bool(req.get("full")),
        )
    )


def polars_scan(req):
    import polars as pl

    kw = {}
    if req.get("version") is not None:
        kw["version"] = int(req["version"])
    if req["table"].startswith("s3://"):
        kw["storage_options"] = delta_storage()
    return rows_of(pl.read_delta(req["table"], **kw).to_arrow())


def duck_delta_scan(req):
    sql = "SELECT * FROM delta_scan('%s')" % req["table"].replace("'", "''")
    return rows_of(duck().execute(sql).fetch_arrow_table())


def spark_delta_scan(req):
    r = spark().read.format("delta")
    if req.get("version") is not None:
        r = r.option("versionAsOf", int(req["version"]))
    return [{k: canon(v) for k, v in row.asDict(recursive=True).items()} for row in r.load(req["table"]).collect()]


def spark_delta_vacuum(req):
    s = spark()
    s.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    path = req["table"].replace("`", "``")
    return [canon(r[0]) for r in s.sql("VACUUM delta.`%s` RETAIN 0 HOURS" % path).collect()]


OPS = {
    ("deltars", "scan"): deltars_scan,
    ("deltars", "vacuum"): deltars_vacuum,
    ("polars", "scan"): polars_scan,
    ("duckdb", "delta_scan"): duck_delta_scan,
    ("spark", "delta_scan"): spark_delta_scan,
    ("spark", "delta_vacuum"): spark_delta_vacuum,
    ("duckdb", "scan"): duck_scan,
    ("duckdb", "sql"): duck_sql,
    ("pyiceberg", "scan"): pyice_scan,
    ("pyiceberg", "plan"): pyice_plan,
    ("spark", "scan"): spark_scan,
    ("spark", "plan"): spark_plan,
    ("spark", "meta"): spark_meta,
    ("spark", "sql"): spark_sql,
    ("spark", "append"): spark_append,
    ("spark", "write_parquet"): spark_write_parquet,
    ("spark", "orphans"): spark_orphans,
    ("spark", "expire"): spark_expire,
    ("spark", "changes"): spark_changes,
    ("spark", "catalog_scan"): spark_catalog_scan,
    ("pyiceberg", "catalog_scan"): pyice_catalog_scan,
    ("spark", "rest_scan"): spark_rest_scan,
    ("pyiceberg", "rest_scan"): pyice_rest_scan,
    ("duckdb", "rest_scan"): duck_rest_scan,
    ("oracle", "rows"): oracle,
    ("python", "exec"): lambda req: exec(req["code"], {}),
}


def versions():
    import duckdb
    import pyiceberg
    import pyspark
    import deltalake
    import polars

    return {
        "duckdb": duckdb.__version__,
        "pyiceberg": pyiceberg.__version__,
        "pyspark": pyspark.__version__,
        "deltalake": deltalake.__version__,
        "polars": polars.__version__,
    }


def main():
    # Engines' chatter goes to stderr, never into the answers: Python's
    # prints and, through file descriptor 1, the JVM's (Delta's VACUUM
    # prints a summary line) and native libraries'.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if req.get("op") == "versions":
                ans = {"ok": versions()}
            elif req.get("op") == "warm":
                # The Go side's prewarm: start Spark's JVM and DuckDB
                # while its first tests build and commit their tables.
                spark()
                duck()
                ans = {"ok": True}
            else:
                fn = OPS.get((req["engine"], req["op"]))
                if fn is None:
                    raise ValueError("unknown request %s/%s" % (req.get("engine"), req.get("op")))
                ans = {"ok": fn(req)}
        except Exception as e:  # noqa: BLE001 - every failure goes back to the test
            msg = "%s: %s" % (type(e).__name__, e)
            ans = {"error": msg[:4000], "trace": traceback.format_exc()[-4000:]}
        out.write(json.dumps(ans) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
