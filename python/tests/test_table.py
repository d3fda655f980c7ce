"""The pswap package against a real binary, on a local folder and on MinIO."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import pswap
from helpers import engine_read, read_partition, rows

DAY = "dt=2026-11-29"


def sample(n: int = 1000, first: int = 0) -> pa.Table:
    ids = list(range(first, first + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "amount": pa.array([i / 4 for i in ids], pa.float64()),
        "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in ids], pa.string()),
    })


def expected(t: pa.Table) -> list[tuple[Any, ...]]:
    return rows(t, "id", "amount", "name")


def _reader(t: pa.Table) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=128))


def _pandas(t: pa.Table) -> Any:
    return t.to_pandas()


def _polars(t: pa.Table) -> Any:
    import polars as pl

    return pl.from_arrow(t)


def _batch(t: pa.Table) -> pa.RecordBatch:
    return t.combine_chunks().to_batches()[0]


def _parquet(t: pa.Table, d: Path) -> str:
    p = d / "in.parquet"
    pq.write_table(t, p)
    return str(p)


def _csv(t: pa.Table, d: Path) -> Path:
    p = d / "in.csv"
    pacsv.write_csv(t, p)
    return p  # a PathLike


KINDS = {
    "pyarrow.Table": lambda t, d: t,
    "RecordBatch": lambda t, d: _batch(t),
    "RecordBatchReader": lambda t, d: _reader(t),
    "pandas": lambda t, d: _pandas(t),
    "polars": lambda t, d: _polars(t),
    "parquet path": _parquet,
    "csv PathLike": _csv,
    "list of paths": lambda t, d: [_parquet(t, d)],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_input_kind(table_url: str, kind: str, tmp_path: Path) -> None:
    t = pswap.Table(table_url)
    data = sample(1000)
    res = t.commit(KINDS[kind](data, tmp_path), partition=DAY, run_id="r1")
    assert (res.changed, res.outcome, res.rows, res.run_id) == (True, "committed", 1000, "r1")
    assert res.idempotency_key == f"{DAY}@{res.generation}"
    got = read_partition(t, DAY)
    assert expected(got) == expected(data)


def test_engines_read_exactly(table_url: str) -> None:
    if not os.environ.get("PSWAP_ENGINES_PYTHON"):
        pytest.skip("needs the engines' environment: $PSWAP_ENGINES_PYTHON")
    t = pswap.Table(table_url)
    data = sample(2500)
    res = t.commit(_reader(data), partition=DAY, run_id="r1", delta=True)
    assert res.published and res.metadata_location
    want = {"id": [repr(v) for v in sorted(data.column("id").to_pylist())]}
    for kind in ("pyiceberg", "deltars"):
        cols = engine_read(kind, table_url, res.metadata_location)
        order = sorted(range(len(cols["id"])), key=lambda i: int(cols["id"][i]))
        got = {c: [cols[c][i] for i in order] for c in ("id", "amount", "name")}
        assert got["id"] == want["id"], kind
        assert got["amount"] == [repr(v / 4) for v in range(2500)], kind
        assert got["name"] == [repr(None if i % 7 == 0 else f"n{i}") for i in range(2500)], kind
        assert cols["dt"] == ["datetime.date(2026, 11, 29)"] * 2500, kind


def test_retry_is_a_noop(table_url: str) -> None:
    t = pswap.Table(table_url)
    first = t.commit(sample(), interval="2026-11-29/P1D", run_id="daily/2026-11-29")
    again = t.commit(sample(), interval="2026-11-29/P1D", run_id="daily/2026-11-29")
    assert (again.changed, again.outcome, again.generation) == (False, "same-run", first.generation)
    assert again.run_generation == first.generation
    assert len(t.history(partition=DAY).generations) == 1  # nothing new was written


def test_conflict_raises_conflict_error(table_url: str) -> None:
    """Another run commits while this call streams its data: exit 3,
    ConflictError, and the other run's rows stay. The call replaces the
    partition, so the conflict is final (a retry would replace the other
    run's commit): ReplaceConflictError, not retryable."""
    t = pswap.Table(table_url)
    t.commit(sample(10), partition=DAY, run_id="first")
    big = sample(200_000)
    other: dict[str, pswap.CommitResult] = {}

    def batches() -> Iterator[pa.RecordBatch]:
        chunks = big.to_batches(max_chunksize=50_000)
        yield chunks[0]  # more than a pipe holds: the binary has begun and is reading
        yield chunks[1]
        other["res"] = t.commit(sample(5, 10_000), partition=DAY, run_id="other")
        yield from chunks[2:]

    with pytest.raises(pswap.ConflictError) as ei:
        t.commit(pa.RecordBatchReader.from_batches(big.schema, batches()), partition=DAY, run_id="late")
    e = ei.value
    assert (e.exit_code, e.code, e.retryable) == (3, "conflict", False)
    assert isinstance(e, pswap.ReplaceConflictError) and isinstance(e, pswap.FatalError)
    assert not isinstance(e, pswap.RetryableError)
    cur = t.history(partition=DAY).generations[0]
    assert cur.current and cur.generation == other["res"].generation and cur.rows == 5


def test_bad_input_is_not_retryable(table_url: str) -> None:
    t = pswap.Table(table_url)
    ok = t.commit(sample(10), partition=DAY, run_id="r1")
    with pytest.raises(pswap.BadInputError) as ei:
        t.commit(pa.table({"id": ["x"], "amount": [1.0], "name": ["a"]}), partition=DAY, run_id="r2")
    assert ei.value.exit_code == 2 and not ei.value.retryable and '"id"' in ei.value.message
    with pytest.raises(pswap.BadInputError, match="not name=value"):
        t.commit(sample(10), partition="not a key", run_id="r3")
    with pytest.raises(pswap.UsageError):
        t.commit(sample(10), partition=DAY, no_such_flag=True)
    with pytest.raises(pswap.BadInputError, match="empty input"):
        t.commit(sample(0), partition=DAY, run_id="r4")
    # The binary refuses a large input at its first batch and stops
    # reading: the error is its own, not a broken pipe.
    with pytest.raises(pswap.BadInputError, match='column "id" is string'):
        t.commit(pa.table({"id": ["x" * 50] * 500_000, "amount": [1.0] * 500_000, "name": ["a"] * 500_000}),
                 partition=DAY, run_id="r5")
    with pytest.raises(pswap.NoDataError):
        t.history(partition="dt=2026-01-01")
    assert t.history(partition=DAY).generations[0].generation == ok.generation


def test_failing_producer_commits_nothing(table_url: str) -> None:
    """A RecordBatchReader that raises half-way: the exception propagates
    and the binary commits nothing (it never sees the end of the stream)."""
    t = pswap.Table(table_url)
    data = sample(1000)

    def batches() -> Iterator[pa.RecordBatch]:
        yield data.to_batches()[0]
        raise RuntimeError("upstream failed")

    with pytest.raises(RuntimeError, match="upstream failed"):
        t.commit(pa.RecordBatchReader.from_batches(data.schema, batches()), partition=DAY, run_id="r1")
    st = t.status(from_="2026-11-29", to="2026-11-30") if _table_exists(t) else None
    assert st is None or st.missing == 1


def _table_exists(t: pswap.Table) -> bool:
    try:
        t.status(from_="2026-11-29", to="2026-11-30")
        return True
    except pswap.NoTableError:
        return False


KILLED_CHILD = r"""
import sys, time, pyarrow as pa, pswap
url, marker = sys.argv[1:3]
n = 400_000
t = pa.table({"id": pa.array(range(n), pa.int64())})
def batches():
    for i, b in enumerate(t.to_batches(max_chunksize=100_000)):
        yield b
        if i == 1:
            open(marker, "w").write("streaming")
            time.sleep(600)  # SIGKILLed here, the binary half-way through its input
pswap.Table(url).commit(pa.RecordBatchReader.from_batches(t.schema, batches()), partition="dt=2026-11-29", run_id="kill/1")
"""


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_the_python_parent_then_the_same_call_converges(table_url: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-c", KILLED_CHILD, table_url, str(marker)])
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert child.poll() is None, "the child exited before streaming"
        assert time.monotonic() < deadline, "the child never started streaming"
        time.sleep(0.05)
    binaries = _children(child.pid)
    assert binaries, "the binary is not running"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    # The binary sees its input end without the end-of-stream marker: it
    # refuses the shorter stream and exits, committing nothing.
    for pid in binaries:
        while os.path.exists(f"/proc/{pid}") and _state(pid) not in ("Z", ""):
            assert time.monotonic() < deadline + 60, "the binary did not exit"
            time.sleep(0.05)
    t = pswap.Table(table_url)
    assert not _table_exists(t) or t.status(from_="2026-11-29", to="2026-11-30").missing == 1
    # The same call again converges: it commits all rows, once.
    data = pa.table({"id": pa.array(range(400_000), pa.int64())})
    res = t.commit(data, partition=DAY, run_id="kill/1")
    assert (res.changed, res.rows) == (True, 400_000)
    again = t.commit(data, partition=DAY, run_id="kill/1")
    assert (again.changed, again.outcome, again.generation) == (False, "same-run", res.generation)
    assert read_partition(t, DAY).num_rows == 400_000


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def test_commands_and_arrow_views(table_url: str) -> None:
    t = pswap.Table(table_url)
    c1 = t.commit(sample(10), partition=DAY, run_id="r1")
    c2 = t.commit(sample(20), partition=DAY, run_id="r2")
    t.commit(sample(5), partition="dt=2026-11-30", run_id="r1")

    st = t.status(from_="2026-11-28", to="2026-12-01")
    assert (st.expected, st.present, st.missing, st.complete) == (3, 2, 1, False)
    at = st.to_arrow()
    assert at.num_rows == 3 and at.column("state").to_pylist() == ["missing", "present", "present"]
    assert at.schema.field("committed_at").type == pa.timestamp("us", tz="UTC")
    with pytest.raises(pswap.PswapError) as ei:
        t.status(from_="2026-11-28", to="2026-12-01", require_complete=True)
    assert ei.value.exit_code == 1

    h = t.history(partition=DAY)
    assert [g.generation for g in h.generations] == [c2.generation, c1.generation]
    assert h.to_arrow().column("rows").to_pylist() == [20, 10]

    f = t.files(interval="2026-11-29/P2D")
    assert f.rows == 25 and f.to_arrow().num_rows == len(f.files) == 2
    assert all(x.checksum.startswith("sha256:") for x in f.files)

    rb = t.rollback(partition=DAY, to=c1.generation)
    assert rb.changed and rb.rows == 10
    assert read_partition(t, DAY).num_rows == 10

    v = t.verify()
    assert v.ok and v.checked == 2

    p = t.publish()
    assert p.metadata_location and not p.changed  # every commit published already

    a = t.audit()
    assert a.to_arrow().num_rows == len(a.rows) >= 4
    assert {r.run_id for r in a.rows} >= {"r1", "r2"}

    g = t.gc(dry_run=True, keep=0)
    assert g.dry_run

    s = t.stage(sample(3), partition="dt=2026-12-01")
    assert s.rows == 3 and s.generation
    res = t.commit(partition="dt=2026-12-01", staged=s.generation)
    assert res.changed and res.generation == s.generation

    dr = t.dry_run(sample(3), partition="dt=2026-12-02")
    assert dr.outcome == "would-commit" and dr.rows == 3


def test_merge_from_pandas(table_url: str) -> None:
    t = pswap.Table(table_url)
    t.commit(sample(10), partition=DAY, run_id="r1")
    upd = pa.table({"id": pa.array([3, 100], pa.int64()), "amount": [99.0, 1.0], "name": ["x", "y"]}).to_pandas()
    m = t.merge(upd, key="id", partition=DAY, run_id="m1")
    assert (m.committed, m.failed) == (1, 0)
    p = m.partitions[0]
    assert (p.upserts, p.rows) == (2, 11)
    got = {r[0]: r[1] for r in rows(read_partition(t, DAY), "id", "amount")}
    assert got[3] == 99.0 and got[100] == 1.0 and len(got) == 11


def test_python_m_pswap_runs_the_cli() -> None:
    p = subprocess.run([sys.executable, "-m", "pswap", "version", "--json"], capture_output=True, text=True,
                       check=True)
    v = json.loads(p.stdout)
    assert v["version"] == "pswap/" + pswap.__version__ or pswap.__version__.endswith("+dev")
    bad = subprocess.run([sys.executable, "-m", "pswap", "no-such-command"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2


def test_error_classes() -> None:
    from pswap._errors import error_class

    assert error_class("conflict", 3, "commit") is pswap.ReplaceConflictError
    assert error_class("conflict", 3, "merge") is pswap.RebaseConflictError
    assert error_class("outcome_unknown", 1) is pswap.OutcomeUnknownError
    assert error_class("bad_input", 2) is pswap.BadInputError
    assert error_class("a_newer_code", 1) is pswap.RetryableError  # exit 1: worth a retry, as the CLI says
    assert issubclass(error_class("a_newer_code", 2), pswap.FatalError)
    assert error_class("a_newer_code", 5) is pswap.FatalError
    assert error_class("", -9) is pswap.RetryableError  # killed
    assert pswap.OutcomeUnknownError.retryable and not pswap.BadInputError.retryable
    assert not pswap.MismatchError.retryable and pswap.UnavailableError.retryable


@pytest.mark.skipif(not os.environ.get("PSWAP_EXPECT_WHEEL"), reason="checks an installed wheel")
def test_installed_from_the_wheel() -> None:
    import sysconfig

    assert "site-packages" in pswap.__file__, pswap.__file__
    assert not os.environ.get("PSWAP_BINARY")
    assert os.path.dirname(pswap.find_binary()) == sysconfig.get_path("scripts")
    out = subprocess.run([pswap.find_binary(), "version", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["version"] == "pswap/" + pswap.__version__
    assert os.path.exists(os.path.join(os.path.dirname(pswap.__file__), "py.typed"))
