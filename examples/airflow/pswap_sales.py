"""A daily load with pswap under Airflow 3: copy this file into your DAGs folder.

Each run extracts its data interval (never the wall clock), commits it as one
partition with `pswap commit --interval START/END --run-id DAG/RUN`, tells
downstream consumers once per new generation, and ends with a gap check.

    load (retried on exit 1) -> notify (only when changed) -> gap_check (always)

What pswap's exit status becomes in Airflow (README, "Exit status"):
  0  success, also the no-op of a retry or a re-run (changed: false)
  1  store unreachable, outcome unknown, gaps: an error Airflow retries
  2  bad input: AirflowFailException, failed at once (a retry reads the same input)
  3  conflict, another run committed the partition after this one began:
     failed at once; a retry would start over from the newer data and replace it
  4  verify found a mismatch: failed at once

Settings (environment of the workers): SALES_TABLE (the pswap table URL),
SALES_SOURCE (the CSV with a `ts` column that extract() reads; replace
extract() with your own), SALES_NOTIFY_LOG (where notify() appends; post to
your webhook instead), SALES_RETRY_DELAY (seconds before the first retry,
doubled each time). pswap must be on the workers' PATH; S3 settings come from
the AWS variables or profile.
"""

import csv
import json
import os
import subprocess
import tempfile
from datetime import datetime, timedelta

import pendulum
from airflow.sdk import CronDataIntervalTimetable, TriggerRule, dag, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

TABLE = os.environ.get("SALES_TABLE", "s3://lake/sales")
START = pendulum.datetime(2026, 11, 1, tz="UTC")


def pswap(*args):
    """Runs `pswap ARGS --json` and returns its JSON; maps its exit status onto Airflow's."""
    p = subprocess.run(["pswap", *args, "--table", TABLE, "--json"], capture_output=True, text=True)
    if p.returncode == 0:
        return json.loads(p.stdout)
    msg = f"pswap {args[0]} exited {p.returncode}: {p.stderr.strip()}"
    if p.returncode in (2, 3, 4):
        raise AirflowFailException(msg)  # no retry: the same input or the newer commit fails it again
    raise RuntimeError(msg)  # 1 (and a killed pswap): Airflow retries with backoff


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
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sales.csv")
            extract(start, end, out)
            return pswap("commit", "--interval", f"{start.isoformat()}/{end.isoformat()}",
                         "--run-id", f"{dag.dag_id}/{run_id}", out)

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
        first = min(p["partition"] for p in pswap("ls")["partitions"]).split("=", 1)[1]
        return pswap("status", "--from", first, "--to", data_interval_end.date().isoformat(), "--require-complete")

    notify(load()) >> gap_check()


pswap_sales()
