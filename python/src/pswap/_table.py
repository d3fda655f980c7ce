"""``Table``: a pswap table at a URL, and the CLI's commands as methods."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ._data import Data, arrow_feeder, parquet_feeder, paths_of
from ._run import Option, duration, flags, run
from ._results import (
    AuditResult,
    CommitResult,
    DryRunResult,
    FilesResult,
    GcResult,
    HistoryResult,
    MergeResult,
    PublishResult,
    StageResult,
    StatusResult,
    VerifyResult,
)


class Table:
    """A pswap table: ``s3://bucket/prefix``, ``file:///path`` or a path.

    Every method runs the ``pswap`` binary once, with the CLI's guarantees
    (one partition swapped atomically; a run id makes a retry a no-op), and
    returns a typed result built from its ``--json``. Keyword options are
    the CLI's flags: ``run_id="daily/2026-11-29"`` is ``--run-id``,
    ``evolve_schema=True`` is ``--evolve-schema``, ``publish=False`` is
    ``--publish=false``; a failure raises a :class:`pswap.PswapError`
    subclass (``retryable`` says whether the same call may succeed).

    Args:
        url: the table URL.
        binary: the pswap binary to run (default: the one the wheel
            installed, see :func:`pswap.find_binary`).
        env: variables added to the binary's environment (``AWS_*``, ...).
        timeout: ``--timeout`` of every call.
        max_attempts: ``--max-attempts`` of every call.
    """

    def __init__(self, url: str | os.PathLike[str], *, binary: str | None = None,
                 env: Mapping[str, str] | None = None, timeout: timedelta | None = None,
                 max_attempts: int | None = None) -> None:
        self.url = os.fspath(url)
        self.binary = binary
        self.env = dict(env) if env is not None else None
        self._common: dict[str, Option] = {"timeout": timeout, "max_attempts": max_attempts}

    def __repr__(self) -> str:
        return f"pswap.Table({self.url!r})"

    def _run(self, command: str, options: Mapping[str, Option], *, inputs: list[str] | None = None,
             data: Any = None, merge: bool = False, ok_exits: tuple[int, ...] = ()) -> Any:
        args = [command, "--table", self.url, *flags({**self._common, **options})]
        feed = None
        if data is not None:
            paths = paths_of(data)
            if paths is not None:
                inputs = paths
            else:
                feed = parquet_feeder(data) if merge else arrow_feeder(data)
                args.append("--input-format=" + ("parquet" if merge else "arrow"))
                inputs = ["-"]
        if inputs:
            args += ["--", *inputs]
        _, doc = run(args, binary=self.binary, env=self.env, feed=feed, ok_exits=ok_exits)
        return doc

    def commit(self, data: Data = None, *, partition: str | None = None, interval: str | None = None,
               run_id: str | None = None, **options: Option) -> CommitResult:
        """Commits ``data`` as the partition's new generation, atomically.

        Args:
            data: a pyarrow Table, RecordBatch or RecordBatchReader, a
                pandas or Polars DataFrame (streamed to the binary as Arrow,
                no temporary file), or paths of Parquet, CSV or JSON Lines
                files or folders. None with ``staged=GEN`` or
                ``partitioned=FOLDER``.
            partition: the key, ``dt=2026-11-29``; or give ``interval``.
            interval: the run's ISO 8601 interval, ``2026-11-29/P1D``.
            run_id: the orchestrator's run id: the same run again is a no-op.
            **options: other flags of ``pswap commit`` (``on_conflict``,
                ``evolve_schema``, ``schema``, ``allow_empty``, ``force``,
                ``publish``, ``delta``, ``catalog``, ...).

        Returns:
            The generation now current and whether this call ``changed`` it.
        """
        if options.get("dry_run"):
            raise TypeError("use Table.dry_run for a dry run")
        doc = self._run("commit", {"partition": partition, "interval": interval, "run_id": run_id, **options},
                        data=data)
        return CommitResult.from_json(doc)

    def dry_run(self, data: Data, *, partition: str | None = None, interval: str | None = None,
                run_id: str | None = None, **options: Option) -> DryRunResult:
        """Reports what :meth:`commit` would do with the same arguments; writes nothing."""
        doc = self._run("commit", {"partition": partition, "interval": interval, "run_id": run_id,
                                   "dry_run": True, **options}, data=data)
        return DryRunResult.from_json(doc)

    def stage(self, data: Data = None, *, partition: str | None = None, interval: str | None = None,
              **options: Option) -> StageResult:
        """Uploads ``data`` as a generation without committing it.

        ``commit(partition=..., staged=result.generation)`` commits it later,
        from any process. Takes the inputs of :meth:`commit`.
        """
        doc = self._run("stage", {"partition": partition, "interval": interval, **options}, data=data)
        return StageResult.from_json(doc)

    def merge(self, data: Data, *, key: str | list[str], partition: str | None = None,
              interval: str | None = None, run_id: str | None = None, **options: Option) -> MergeResult:
        """Upserts ``data`` into the partitions it touches, on the ``key`` columns.

        Arrow data goes to the binary as one Parquet stream (merge reads
        its input more than once). Other flags of ``pswap merge`` as keyword
        options (``delete_when``, ``dedupe``, ``time_column``, ...).
        """
        keys = key if isinstance(key, str) else ",".join(key)
        doc = self._run("merge", {"key": keys, "partition": partition, "interval": interval,
                                  "run_id": run_id, **options}, data=data, merge=True)
        return MergeResult.from_json(doc)

    def rollback(self, *, to: str, partition: str | None = None, interval: str | None = None,
                 run_id: str | None = None, **options: Option) -> CommitResult:
        """Makes the generation ``to`` (see :meth:`history`) current again."""
        doc = self._run("rollback", {"to": to, "partition": partition, "interval": interval,
                                     "run_id": run_id, **options})
        return CommitResult.from_json(doc)

    def status(self, *, from_: str | None = None, to: str | None = None, interval: str | None = None,
               **options: Option) -> StatusResult:
        """Every partition of the range ``[from_, to)``: present, missing or corrupt.

        ``require_complete=True`` raises on a gap; ``result.to_arrow()``
        gives the partitions as a pyarrow Table.
        """
        doc = self._run("status", {"from_": from_, "to": to, "interval": interval, **options})
        return StatusResult.from_json(doc)

    def history(self, *, partition: str | None = None, interval: str | None = None,
                limit: int | None = None, **options: Option) -> HistoryResult:
        """A partition's generations, newest first (``to_arrow()`` as a Table)."""
        doc = self._run("history", {"partition": partition, "interval": interval, "limit": limit, **options})
        return HistoryResult.from_json(doc)

    def files(self, *, partition: str | None = None, interval: str | None = None,
              **options: Option) -> FilesResult:
        """The current data files of a partition or an interval, with checksums."""
        doc = self._run("files", {"partition": partition, "interval": interval, **options})
        return FilesResult.from_json(doc)

    def verify(self, *, partition: str | None = None, interval: str | None = None,
               **options: Option) -> VerifyResult:
        """Checks the files against their manifests (sizes, checksums, rows).

        Raises:
            MismatchError: the store disagrees; its ``document`` is the
                report (:meth:`VerifyResult.from_json` reads it).
        """
        doc = self._run("verify", {"partition": partition, "interval": interval, **options})
        return VerifyResult.from_json(doc)

    def gc(self, *, keep: int | None = None, min_age: timedelta | None = None, dry_run: bool | None = None,
           **options: Option) -> GcResult:
        """Deletes retired generations and orphans (``dry_run=True``: only lists them)."""
        doc = self._run("gc", {"keep": keep, "min_age": None if min_age is None else duration(min_age),
                               "dry_run": dry_run, **options})
        return GcResult.from_json(doc)

    def publish(self, **options: Option) -> PublishResult:
        """Brings the table's views (Iceberg metadata, Delta log, catalogs) up to date."""
        doc = self._run("publish", dict(options))
        return PublishResult.from_json(doc)

    def audit(self, *, partition: str | None = None, from_: str | None = None, to: str | None = None,
              interval: str | None = None, **options: Option) -> AuditResult:
        """Every attempt on the table's partitions (``to_arrow()`` as a Table).

        ``publish=True`` writes them into the audit's Iceberg table
        instead (its result is in ``raw``).
        """
        doc = self._run("audit", {"partition": partition, "from_": from_, "to": to, "interval": interval,
                                  **options})
        return AuditResult.from_json(doc)
