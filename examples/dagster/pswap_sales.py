"""A daily-partitioned asset committed with pswap under Dagster: copy into your code location.

The partition key is the pswap partition: each materialization of day D
extracts [D, D+1) (from the partition's time window, never the wall clock)
and commits it with the pswap package (`Table.commit(interval=START/END,
run_id=RUN)`), where RUN is the Dagster run that started the attempt chain
(its root run), so a step retry or a re-execution of the run is a no-op that
uploads nothing.

    sales (retried when retryable; checks: verified, complete) -> sales_notification (only when changed)

What a pswap failure becomes in Dagster: `PswapError.retryable`, pswap's one
retry rule (docs/cli.md, "Exit status and retries"), decides. Retryable (the
store unreachable, the outcome unknown, a killed pswap): a Failure the
RetryPolicy retries, with the same run id. Not retryable (bad input, a
mismatch, a conflict of this replacing commit: another run committed the
partition after this one began, and a retry would start over from the newer
data and replace it): Failure(allow_retries=False), failed at once. In the
checks, any failure is a failed check. Success includes the no-op of a retry
or a re-execution (changed: false).

Settings (environment): SALES_TABLE (the pswap table URL), SALES_SOURCE (the
CSV with a `ts` column that extract() reads; replace extract() with your
own), SALES_NOTIFY_LOG (where the notification is appended; post to your
webhook instead), SALES_RETRY_DELAY (seconds before the first retry, doubled
each time). The code location needs the pswap package (`pip install` its wheel,
which carries the binary); S3 settings come from the AWS variables.
"""

import csv
import json
import os
import tempfile
from datetime import datetime

import dagster as dg
import pswap

TABLE = pswap.Table(os.environ.get("SALES_TABLE", "s3://lake/sales"))
START = "2026-11-01"  # the first partition Dagster offers; the table may begin on any later day
daily = dg.DailyPartitionsDefinition(start_date=START, timezone="UTC")


def call(method, **kwargs):
    """Calls TABLE.method(**kwargs); maps pswap's retry rule (PswapError.retryable) onto Dagster's."""
    try:
        return getattr(TABLE, method)(**kwargs)
    except pswap.PswapError as e:
        raise dg.Failure(f"pswap {e.command} exited {e.exit_code}: {e}", allow_retries=e.retryable) from e


def check(name, method, **kwargs):
    """An asset check that passes when TABLE.method(**kwargs) succeeds."""
    try:
        call(method, **kwargs)
        return dg.AssetCheckResult(check_name=name, passed=True)
    except dg.Failure as e:
        return dg.AssetCheckResult(check_name=name, passed=False, metadata={"error": e.description})


def gap_check(end):
    """The gap check: every day from the table's first partition up to end is there.

    It starts at the table's first day, not at START: a table begins on the first day
    materialized, and the days before it are no gaps.
    """
    try:
        present = [p.partition for p in call("status", from_=START, to=end).partitions if p.present]
    except dg.Failure as e:
        return dg.AssetCheckResult(check_name="complete", passed=False, metadata={"error": e.description})
    if not present:
        return dg.AssetCheckResult(check_name="complete", passed=True)  # an empty table has no gaps
    first = min(present).split("=", 1)[1]
    return check("complete", "status", from_=first, to=end, require_complete=True)


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
        result = call("commit", data=out, interval=f"{start.isoformat()}/{end.isoformat()}",
                      run_id=f"dagster/{run_id}").raw  # the --json document
    yield dg.Output(result, metadata={k: result[k] for k in
                                      ("changed", "outcome", "rows", "idempotency_key", "staged_generation")})
    yield check("verified", "verify", partition=result["partition"])
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
