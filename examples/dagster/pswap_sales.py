"""A daily-partitioned asset committed with pswap under Dagster: copy into your code location.

The partition key is the pswap partition: each materialization of day D
extracts [D, D+1) (from the partition's time window, never the wall clock)
and commits it with `pswap commit --interval START/END --run-id RUN`, where
RUN is the Dagster run that started the attempt chain (its root run), so a
step retry or a re-execution of the run is a no-op that uploads nothing.

    sales (retried on exit 1; checks: verified, complete) -> sales_notification (only when changed)

What pswap's exit status becomes in Dagster (README, "Exit status"):
  0  success, also the no-op of a retry or a re-execution (changed: false)
  1  store unreachable, outcome unknown: Failure the RetryPolicy retries
  2  bad input: Failure(allow_retries=False), failed at once
  3  conflict, another run committed the partition after this one began:
     failed at once; a retry would start over from the newer data and replace it
  4  verify found a mismatch: failed at once (a failed check, in the checks)

Settings (environment): SALES_TABLE (the pswap table URL), SALES_SOURCE (the
CSV with a `ts` column that extract() reads; replace extract() with your
own), SALES_NOTIFY_LOG (where the notification is appended; post to your
webhook instead), SALES_RETRY_DELAY (seconds before the first retry, doubled
each time). pswap must be on PATH; S3 settings come from the AWS variables.
"""

import csv
import json
import os
import subprocess
import tempfile
from datetime import datetime

import dagster as dg

TABLE = os.environ.get("SALES_TABLE", "s3://lake/sales")
START = "2026-11-01"  # the first partition Dagster offers; the table may begin on any later day
daily = dg.DailyPartitionsDefinition(start_date=START, timezone="UTC")


def pswap(*args):
    """Runs `pswap ARGS --json` and returns its JSON; maps its exit status onto Dagster's."""
    p = subprocess.run(["pswap", *args, "--table", TABLE, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        # 1 (and a killed pswap) is worth a retry; the same input or the newer commit fails 2, 3, 4 again.
        raise dg.Failure(f"pswap {args[0]} exited {p.returncode}: {p.stderr.strip()}",
                         allow_retries=p.returncode not in (2, 3, 4))
    return json.loads(p.stdout)


def check(name, *args):
    """An asset check that passes when `pswap ARGS` exits 0."""
    try:
        pswap(*args)
        return dg.AssetCheckResult(check_name=name, passed=True)
    except dg.Failure as e:
        return dg.AssetCheckResult(check_name=name, passed=False, metadata={"error": e.description})


def gap_check(end):
    """The gap check: every day from the table's first partition up to end is there.

    It starts at the table's first day, not at START: a table begins on the first day
    materialized, and the days before it are no gaps.
    """
    try:
        first = min(p["partition"] for p in pswap("ls")["partitions"]).split("=", 1)[1]
    except dg.Failure as e:
        return dg.AssetCheckResult(check_name="complete", passed=False, metadata={"error": e.description})
    return check("complete", "status", "--from", first, "--to", end, "--require-complete")


def extract(start, end, out):
    """Writes the source rows with start <= ts < end to out (CSV). Replace with your export."""
    with open(os.environ["SALES_SOURCE"], newline="") as src, open(out, "w", newline="") as dst:
        rows = csv.DictReader(src)
        w = csv.DictWriter(dst, fieldnames=rows.fieldnames)
        w.writeheader()
        w.writerows(r for r in rows if start <= datetime.fromisoformat(r["ts"]) < end)


@dg.asset(
    partitions_def=daily,
    retry_policy=dg.RetryPolicy(max_retries=3, delay=float(os.environ.get("SALES_RETRY_DELAY", "300")),
                                backoff=dg.Backoff.EXPONENTIAL),
    check_specs=[dg.AssetCheckSpec("verified", asset="sales"), dg.AssetCheckSpec("complete", asset="sales")],
)
def sales(context: dg.AssetExecutionContext):
    start, end = context.partition_time_window
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sales.csv")
        extract(start, end, out)
        run_id = context.run.root_run_id or context.run_id
        result = pswap("commit", "--interval", f"{start.isoformat()}/{end.isoformat()}",
                       "--run-id", f"dagster/{run_id}", out)
    yield dg.Output(result, metadata={k: result[k] for k in
                                      ("changed", "outcome", "rows", "idempotency_key", "staged_generation")})
    yield check("verified", "verify", "--partition", result["partition"])
    yield gap_check(end.date().isoformat())


@dg.asset(partitions_def=daily, output_required=False)
def sales_notification(sales):
    """Tells downstream consumers once per new generation; the receiver deduplicates on idempotency_key."""
    if sales["changed"]:
        with open(os.environ["SALES_NOTIFY_LOG"], "a") as f:
            f.write(json.dumps({k: sales[k] for k in ("idempotency_key", "partition", "rows", "run_id")}) + "\n")
        yield dg.Output(None, metadata={"idempotency_key": sales["idempotency_key"]})


sales_job = dg.define_asset_job("sales_job", selection=[sales, sales_notification], partitions_def=daily)
defs = dg.Definitions(assets=[sales, sales_notification], jobs=[sales_job])
