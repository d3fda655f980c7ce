"""Reads a pswap table's views on Azure Blob Storage (Azurite in the tests)
and prints what each engine sees, as one JSON object on stdout:

  pyiceberg  StaticTable.from_metadata(abfss://...metadata.json) through
             adlfs (FsspecFileIO), with the connection string: rows, the
             sum of a column, and the files a filter on one partition plans;
  deltalake  DeltaTable(abfss://...) through delta-rs's object store
             (use_emulator with AZURITE_BLOB_STORAGE_URL): rows, sum, files.

  duckdb     read_parquet of the data files `pswap files` lists, as az://
             URLs, through DuckDB's azure extension with the connection
             string: rows and sum. (Its abfss:// reads go to the Data Lake
             endpoint, which Azurite does not have, so iceberg_scan of the
             metadata cannot be pointed at the emulator.)

  python azure_views.py METADATA_LOCATION TABLE_LOCATION SUM_COLUMN PART_COLUMN PART_VALUE [FILE...]

The account, key and connection string come from the environment
(AZURE_STORAGE_*), the emulator's URL from AZURITE_BLOB_ENDPOINT; nothing
secret is printed.
"""
import json
import os
import sys


def main():
    metadata, table, col, part_col, part_value = sys.argv[1:6]
    out = {}

    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(metadata, properties={
        "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
        "adls.connection-string": os.environ["AZURE_STORAGE_CONNECTION_STRING"],
        "adls.account-name": os.environ["AZURE_STORAGE_ACCOUNT"],
    })
    arrow = t.scan().to_arrow()
    pruned = list(t.scan(row_filter="%s == '%s'" % (part_col, part_value)).plan_files())
    out["pyiceberg"] = {"rows": arrow.num_rows, "sum": sum(arrow.column(col).to_pylist()),
                        "pruned_files": len(pruned), "pruned_rows": sum(f.file.record_count for f in pruned)}

    from deltalake import DeltaTable

    endpoint = os.environ["AZURITE_BLOB_ENDPOINT"]  # http://HOST:PORT/ACCOUNT
    os.environ["AZURITE_BLOB_STORAGE_URL"] = endpoint.rsplit("/", 1)[0]
    dt = DeltaTable(table, storage_options={
        "account_name": os.environ["AZURE_STORAGE_ACCOUNT"],
        "account_key": os.environ["AZURE_STORAGE_KEY"],
        "use_emulator": "true",
        "allow_http": "true",
    })
    d = dt.to_pyarrow_table()
    out["deltalake"] = {"rows": d.num_rows, "sum": sum(d.column(col).to_pylist()), "files": len(dt.file_uris()),
                        "version": dt.version()}
    files = sys.argv[6:]
    if files:
        import duckdb

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from reader import extension_file

        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        con.execute("LOAD '%s'" % extension_file("azure"))
        con.execute("CREATE SECRET azurite (TYPE azure, CONNECTION_STRING ?)", [os.environ["AZURE_STORAGE_CONNECTION_STRING"]])
        n, total = con.execute("SELECT count(*), sum(%s) FROM read_parquet(?)" % col, [files]).fetchone()
        out["duckdb"] = {"rows": n, "sum": total, "files": len(files)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
