"""A daily load with pswap under Airflow 3: copy this file into your DAGs folder.

Each run extracts its data interval (never the wall clock), commits it as one
partition with the pswap package (`Table.commit(interval=START/END,
run_id=DAG/RUN)`), tells downstream consumers once per new generation, and
ends with a gap check.

    load (retried when retryable) -> notify (only when changed) -> gap_check (always)

What a pswap failure becomes in Airflow: `PswapError.retryable`, pswap's one
retry rule (docs/cli.md, "Exit status and retries"), decides. Retryable (the
store unreachable, the outcome unknown, gaps, a killed pswap): an error
Airflow retries with the same run id, which commits or finds the commit
landed. Not retryable (bad input, a mismatch, a conflict of this replacing
commit: another run committed the partition after this one began, and a
retry would start over from the newer data and replace it):
AirflowFailException, failed at once. Success includes the no-op of a retry
or a re-run (changed: false).

Settings (environment of the workers): SALES_TABLE (the pswap table URL),
SALES_SOURCE (the CSV with a `ts` column that extract() reads; replace
extract() with your own), SALES_NOTIFY_LOG (where notify() appends; post to
your webhook instead), SALES_RETRY_DELAY (seconds before the first retry,
doubled each time). The workers need the pswap package (`pip install` its
wheel, which carries the binary); S3 settings come from the AWS variables or
profile.
"""

import csv
import json
import os
import tempfile
from contextlib import contextmanager
from datetime import datetime, timedelta

import pendulum
import pswap
from airflow.sdk import CronDataIntervalTimetable, TriggerRule, dag, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

TABLE = pswap.Table(os.environ.get("SALES_TABLE", "s3://lake/sales"))
START = pendulum.datetime(2026, 11, 1, tz="UTC")


@contextmanager
def retry_rule():
    """Maps pswap's retry rule (PswapError.retryable) onto Airflow's."""
    try:
        yield
    except pswap.PswapError as e:
        msg = f"pswap {e.command} exited {e.exit_code}: {e}"
        if not e.retryable:
            raise AirflowFailException(msg) from e  # no retry: it would fail again, or replace a newer commit
        raise RuntimeError(msg) from e  # Airflow retries with backoff, with the same run id


def extract(start, end, out):
    """Writes the source rows with start <= ts < end to out (CSV). Replace with your export."""
    with open(os.environ["SALES_SOURCE"], newline="") as src, open(out, "w", newline="") as dst:
        rows = csv.DictReader(src)
        w = csv.DictWriter(dst, fieldnames=rows.fieldnames)
        w.writeheader()
        w.writerows(r for r in rows if start <= datetime.fromisoformat(r["ts"]) < end)


@dag(
    schedule=CronDataIntervalTimetable("@daily", timezone="UTC"),
    start_date=START,
    catchup=False,
    max_active_runs=1,
    default_args={
        "retries": 3,
        "retry_delay": timedelta(seconds=float(os.environ.get("SALES_RETRY_DELAY", "300"))),
        "retry_exponential_backoff": True,
        "max_retry_delay": timedelta(hours=1),
    },
)
def pswap_sales():
    @task
    def load(data_interval_start=None, data_interval_end=None, dag=None, run_id=None):
        start, end = data_interval_start, data_interval_end
        with tempfile.TemporaryDirectory() as tmp, retry_rule():
            out = os.path.join(tmp, "sales.csv")
            extract(start, end, out)  # or commit a pyarrow, pandas or Polars table straight from memory
            res = TABLE.commit(out, interval=f"{start.isoformat()}/{end.isoformat()}", run_id=f"{dag.dag_id}/{run_id}")
        return res.raw  # the --json document: what XCom stores

    @task
    def notify(result):
        if not result["changed"]:
            raise AirflowSkipException(f"{result['partition']}: {result['outcome']}, nothing new")
        # A webhook in real life; the receiver deduplicates on idempotency_key.
        with open(os.environ["SALES_NOTIFY_LOG"], "a") as f:
            f.write(json.dumps({k: result[k] for k in ("idempotency_key", "partition", "rows", "run_id")}) + "\n")

    @task(trigger_rule=TriggerRule.ALL_DONE, retries=0)
    def gap_check(data_interval_end=None):
        # From the table's first partition, not START: a table begins on its first load (catchup=False
        # runs no earlier day), and the days before it are no gaps.
        with retry_rule():
            end = data_interval_end.date().isoformat()
            present = [p.partition for p in TABLE.status(from_=START.date().isoformat(), to=end).partitions if p.present]
            if present:  # from the first, require every day
                first = min(present).split("=", 1)[1]
                return TABLE.status(from_=first, to=end, require_complete=True).raw

    notify(load()) >> gap_check()


pswap_sales()
