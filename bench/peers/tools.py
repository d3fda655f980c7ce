"""The peers pswap is measured against, each behind the same three calls:

  create(req)    make an empty table partitioned by dt (only where the tool
                 needs a table declared first: the Iceberg catalogs)
  replace(req)   replace partition req["dt"] with the rows of req["input"]
                 (a Parquet file of sales rows, without a dt column)
  backfill(req)  replace every partition named in req["dts"] with the rows
                 of req["input"] (a Parquet file with a dt column)
  read(req)      the current table: {dt: [rows, sum(amount)]}

The way each tool replaces a partition is the one its documentation
recommends for that job:

  delta     delta-rs write_deltalake(mode="overwrite", predicate="dt = ...")
  pyiceberg PyIceberg Table.dynamic_partition_overwrite, SqlCatalog on SQLite
  spark     Spark SQL INSERT OVERWRITE with dynamic partition overwrite into
            an Iceberg table of a JDBC catalog on SQLite
  duckdb    COPY ... TO folder (PARTITION_BY (dt), OVERWRITE_OR_IGNORE,
            FILENAME_PATTERN 'data_{i}'): DuckDB's OVERWRITE removes the
            whole target folder, every other partition included, so the
            partition's files are overwritten in place instead
  pswap     (the CLI, driven by peers.py; read here through its Iceberg
            metadata with PyIceberg)

S3 settings come from the standard AWS environment (AWS_ENDPOINT_URL and
keys), which peers.py points at the counting proxy in front of MinIO.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration", "engines"))


def s3_env():
    return {
        "endpoint": os.environ["AWS_ENDPOINT_URL"],
        "key": os.environ["AWS_ACCESS_KEY_ID"],
        "secret": os.environ["AWS_SECRET_ACCESS_KEY"],
        "region": os.environ.get("AWS_REGION", "us-east-1"),
    }


def pyiceberg_s3_props():
    """PyIceberg's FileIO properties for the S3 endpoint of the environment."""
    e = s3_env()
    return {"s3.endpoint": e["endpoint"], "s3.access-key-id": e["key"], "s3.secret-access-key": e["secret"],
            "s3.region": e["region"], "s3.force-virtual-addressing": "false"}


def on_s3(req):
    return req["table"].startswith("s3://")


def with_dt(path, dt):
    """The rows of a Parquet file with the partition column added."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return t.append_column("dt", pa.array([dt] * t.num_rows, pa.string()))


def summarize(arrow_table):
    """{dt: [rows, sum(amount)]} of an Arrow table."""
    out = {}
    if arrow_table.num_rows == 0:
        return out
    g = arrow_table.group_by("dt").aggregate([("amount", "count"), ("amount", "sum")])
    for dt, n, s in zip(g["dt"].to_pylist(), g["amount_count"].to_pylist(), g["amount_sum"].to_pylist()):
        out[str(dt)] = [n, round(s, 2)]
    return out


# ------------------------------------------------------------------ delta-rs


class Delta:
    name = "delta"

    def _opts(self, req):
        if not on_s3(req):
            return None
        e = s3_env()
        return {
            "AWS_ENDPOINT_URL": e["endpoint"],
            "AWS_ACCESS_KEY_ID": e["key"],
            "AWS_SECRET_ACCESS_KEY": e["secret"],
            "AWS_REGION": e["region"],
            "AWS_ALLOW_HTTP": "true",
            # MinIO supports conditional PUT (If-None-Match): delta-rs
            # commits its log entries with it instead of a lock service.
            "aws_conditional_put": "etag",
        }

    def create(self, req):
        pass

    def replace(self, req):
        from deltalake import write_deltalake

        write_deltalake(
            req["table"], with_dt(req["input"], req["dt"]), mode="overwrite",
            predicate="dt = '%s'" % req["dt"], partition_by=["dt"], storage_options=self._opts(req),
        )

    def backfill(self, req):
        import pyarrow.parquet as pq
        from deltalake import write_deltalake

        dts = sorted(req["dts"])
        write_deltalake(
            req["table"], pq.read_table(req["input"]), mode="overwrite",
            predicate="dt >= '%s' AND dt <= '%s'" % (dts[0], dts[-1]), partition_by=["dt"],
            storage_options=self._opts(req),
        )

    def read(self, req):
        from deltalake import DeltaTable

        return summarize(DeltaTable(req["table"], storage_options=self._opts(req)).to_pyarrow_table(columns=["dt", "amount"]))


# ------------------------------------------------------------------ PyIceberg


class PyIceberg:
    name = "pyiceberg"

    def _catalog(self, req):
        from pyiceberg.catalog.sql import SqlCatalog

        props = {"uri": "sqlite:///" + req["catalog"], "warehouse": req["table"]}
        if on_s3(req):
            props.update(pyiceberg_s3_props())
        return SqlCatalog("peers", **props)

    def _table(self, req):
        return self._catalog(req).load_table("db.sales")

    def create(self, req):
        cat = self._catalog(req)
        cat.create_namespace_if_not_exists("db")
        schema = with_dt(req["input"], "x").schema
        t = cat.create_table_if_not_exists("db.sales", schema=schema, location=req["table"] + "/sales")
        if not t.spec().fields:
            with t.update_spec() as u:
                u.add_identity("dt")

    def replace(self, req):
        self._table(req).dynamic_partition_overwrite(with_dt(req["input"], req["dt"]))

    def backfill(self, req):
        import pyarrow.parquet as pq

        self._table(req).dynamic_partition_overwrite(pq.read_table(req["input"]))

    def read(self, req):
        return summarize(self._table(req).scan(selected_fields=("dt", "amount")).to_arrow())


# ------------------------------------------------------------------ Spark


class Spark:
    name = "spark"
    _session = None

    def session(self, req):
        if Spark._session is not None:
            return Spark._session
        from pyspark.sql import SparkSession

        jars = sorted(os.path.join(req["jars"], f) for f in os.listdir(req["jars"]) if f.endswith(".jar"))
        c = "spark.sql.catalog.cat"
        b = (
            SparkSession.builder.master("local[2]").appName("pswap-peers")
            .config("spark.jars", ",".join(jars))
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", req.get("memory", "2g"))
            .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
            .config(c, "org.apache.iceberg.spark.SparkCatalog")
            .config(c + ".type", "jdbc")
            .config(c + ".uri", "jdbc:sqlite:" + req["catalog"])
            .config(c + ".jdbc.schema-version", "V1")
            .config(c + ".warehouse", req["table"])
        )
        if on_s3(req):
            e = s3_env()
            b = (
                b.config(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
                .config(c + ".s3.endpoint", e["endpoint"])
                .config(c + ".s3.path-style-access", "true")
                .config(c + ".client.region", e["region"])
                .config(c + ".s3.access-key-id", e["key"])
                .config(c + ".s3.secret-access-key", e["secret"])
            )
        s = b.getOrCreate()
        s.sparkContext.setLogLevel("ERROR")
        Spark._session = s
        return s

    def create(self, req):
        s = self.session(req)
        s.sql("CREATE NAMESPACE IF NOT EXISTS cat.db")
        s.sql(
            "CREATE TABLE IF NOT EXISTS cat.db.sales USING iceberg PARTITIONED BY (dt) "
            "AS SELECT *, 'x' AS dt FROM parquet.`%s` WHERE false" % req["input"]
        )

    def replace(self, req):
        self.session(req).sql(
            "INSERT OVERWRITE cat.db.sales SELECT *, '%s' AS dt FROM parquet.`%s`" % (req["dt"], req["input"])
        )

    def backfill(self, req):
        self.session(req).sql("INSERT OVERWRITE cat.db.sales SELECT * FROM parquet.`%s`" % req["input"])

    def read(self, req):
        rows = self.session(req).sql(
            "SELECT dt, count(*), sum(amount) FROM cat.db.sales GROUP BY dt"
        ).collect()
        return {str(r[0]): [r[1], round(r[2], 2)] for r in rows}


# ------------------------------------------------------------------ DuckDB


class DuckDB:
    name = "duckdb"

    def con(self, req):
        import duckdb
        from reader import extension_file  # integration/engines: packaged extensions, loaded offline

        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        con.execute("LOAD '%s'" % extension_file("httpfs"))
        con.execute("SET TimeZone = 'UTC'")
        if on_s3(req):
            e = s3_env()
            con.execute(
                "CREATE SECRET peers (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL ?)",
                [e["key"], e["secret"], e["region"], e["endpoint"].split("://", 1)[-1].rstrip("/"),
                 e["endpoint"].startswith("https://")],
            )
        return con

    def _copy(self, req, select):
        self.con(req).execute(
            "COPY (%s) TO '%s' (FORMAT parquet, PARTITION_BY (dt), OVERWRITE_OR_IGNORE, FILENAME_PATTERN 'data_{i}')"
            % (select, req["table"])
        )

    def create(self, req):
        pass

    def replace(self, req):
        self._copy(req, "SELECT *, '%s' AS dt FROM read_parquet('%s')" % (req["dt"], req["input"]))

    def backfill(self, req):
        self._copy(req, "SELECT * FROM read_parquet('%s')" % req["input"])

    def read(self, req):
        rows = self.con(req).execute(
            "SELECT dt, count(*), sum(amount) FROM read_parquet('%s/*/*.parquet', hive_partitioning = true) GROUP BY dt"
            % req["table"]
        ).fetchall()
        return {str(r[0]): [r[1], round(r[2], 2)] for r in rows}


# ------------------------------------------------------------------ pswap (read side)


class Pswap:
    """pswap writes through its CLI (peers.py); this reads its table back
    through the Iceberg metadata pswap publishes, with PyIceberg."""

    name = "pswap"

    def read(self, req):
        from pyiceberg.io.pyarrow import PyArrowFileIO
        from pyiceberg.table import StaticTable

        props = pyiceberg_s3_props() if on_s3(req) else {}
        root = req["table"] if on_s3(req) else "file://" + req["table"]
        io = PyArrowFileIO(props)
        with io.new_input(root + "/metadata/version-hint.text").open() as f:
            v = f.read().decode().strip()
        t = StaticTable.from_metadata("%s/metadata/v%s.metadata.json" % (root, v), properties=props)
        return summarize(t.scan(selected_fields=("dt", "amount")).to_arrow())


TOOLS = {t.name: t for t in (Delta(), PyIceberg(), Spark(), DuckDB(), Pswap())}
