"""Typed results, built from the ``--json`` documents of the CLI.

Every result keeps the whole document as ``raw``, so that a field a newer
binary adds is still at hand. Times are timezone-aware ``datetime`` in UTC
(``None`` where the CLI prints ``null`` or an empty string).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pyarrow as pa

Doc = dict[str, Any]
T = TypeVar("T")


def _time(v: Any) -> datetime | None:
    if not v:
        return None
    s = str(v)
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    t = datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _str(d: Doc, k: str) -> str:
    v = d.get(k)
    return "" if v is None else str(v)


def _int(d: Doc, k: str) -> int:
    v = d.get(k)
    return int(v) if v is not None else 0


def _bool(d: Doc, k: str) -> bool:
    return bool(d.get(k))


def _rows_table(rows: list[Any]) -> pa.Table:
    """A pyarrow Table of dataclass rows (their ``raw`` left out)."""
    import pyarrow as pa

    dicts = [{k: v for k, v in dataclasses.asdict(r).items() if k != "raw"} for r in rows]
    if not rows:
        return pa.table({})
    return pa.Table.from_pylist(dicts)


@dataclass(frozen=True)
class CommitResult:
    """The result of ``commit`` and ``rollback``.

    ``changed`` is true when this call swapped in a new generation: fire
    side effects only then, and hand ``idempotency_key`` to receivers.
    ``outcome`` is ``committed``, ``superseded``, ``same-run`` or
    ``identical`` (the last two are no-ops).
    """

    table: str
    partition: str
    generation: str
    changed: bool
    outcome: str
    rows: int
    bytes: int
    files: int
    run_id: str
    committed_by: str
    run_generation: str
    idempotency_key: str
    seq: int
    staged_generation: str
    published: bool
    metadata_location: str
    filled_columns: list[str] = field(default_factory=list)
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> CommitResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), partition=_str(d, "partition"), generation=_str(d, "generation"),
                   changed=_bool(d, "changed"), outcome=_str(d, "outcome"), rows=_int(d, "rows"),
                   bytes=_int(d, "bytes"), files=_int(d, "files"), run_id=_str(d, "run_id"),
                   committed_by=_str(d, "committed_by"), run_generation=_str(d, "run_generation"),
                   idempotency_key=_str(d, "idempotency_key"), seq=_int(d, "seq"),
                   staged_generation=_str(d, "staged_generation"), published=_bool(d, "published"),
                   metadata_location=_str(d, "metadata_location"),
                   filled_columns=list(d.get("filled_columns") or []), raw=d)


@dataclass(frozen=True)
class DryRunResult:
    """What a commit would do (``Table.dry_run``); nothing was written.

    ``outcome`` is ``would-commit``, ``identical`` or ``same-run``.
    """

    table: str
    partition: str
    outcome: str
    changed: bool
    rows: int
    bytes: int
    files: int
    run_id: str
    current_generation: str
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> DryRunResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), partition=_str(d, "partition"), outcome=_str(d, "outcome"),
                   changed=_bool(d, "changed"), rows=_int(d, "rows"), bytes=_int(d, "bytes"),
                   files=_int(d, "files"), run_id=_str(d, "run_id"),
                   current_generation=_str(d, "current_generation"), raw=d)


@dataclass(frozen=True)
class StageResult:
    """A generation uploaded by ``stage``, for ``commit(staged=generation)``."""

    table: str
    partition: str
    generation: str
    rows: int
    bytes: int
    files: int
    content_checksum: str
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> StageResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), partition=_str(d, "partition"), generation=_str(d, "generation"),
                   rows=_int(d, "rows"), bytes=_int(d, "bytes"), files=_int(d, "files"),
                   content_checksum=_str(d, "content_checksum"), raw=d)


@dataclass(frozen=True)
class MergedPartition:
    """One partition of a ``merge``."""

    partition: str
    changed: bool
    outcome: str
    generation: str
    rows: int
    upserts: int
    deletes: int
    kept: int
    removed: int
    rebases: int
    run_id: str
    error: str
    exit: int
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> MergedPartition:
        """Builds the row from the CLI's ``--json`` document."""
        return cls(partition=_str(d, "partition"), changed=_bool(d, "changed"), outcome=_str(d, "outcome"),
                   generation=_str(d, "generation"), rows=_int(d, "rows"), upserts=_int(d, "upserts"),
                   deletes=_int(d, "deletes"), kept=_int(d, "kept"), removed=_int(d, "removed"),
                   rebases=_int(d, "rebases"), run_id=_str(d, "run_id"), error=_str(d, "error"),
                   exit=_int(d, "exit"), raw=d)


@dataclass(frozen=True)
class MergeResult:
    """The result of ``merge``: one entry per partition the input touched."""

    table: str
    input_rows: int
    partitions: list[MergedPartition]
    committed: int
    unchanged: int
    failed: int
    exit: int
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> MergeResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), input_rows=_int(d, "input_rows"),
                   partitions=[MergedPartition.from_json(p) for p in d.get("partitions") or []],
                   committed=_int(d, "committed"), unchanged=_int(d, "unchanged"), failed=_int(d, "failed"),
                   exit=_int(d, "exit"), raw=d)


@dataclass(frozen=True)
class ViewResult:
    """One view of a ``publish``: Iceberg metadata, the Delta log, a catalog."""

    view: str
    name: str
    published: bool
    changed: bool
    version: int | None
    location: str
    error: str
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> ViewResult:
        """Builds the row from the CLI's ``--json`` document."""
        v = d.get("version")
        return cls(view=_str(d, "view"), name=_str(d, "name"), published=_bool(d, "published"),
                   changed=_bool(d, "changed"), version=None if v is None else int(v),
                   location=_str(d, "location"), error=_str(d, "error"), raw=d)


@dataclass(frozen=True)
class PublishResult:
    """The result of ``publish`` (``changed`` false: already up to date)."""

    table: str
    metadata_location: str
    version: int
    snapshot_id: int
    changed: bool
    partitions: int
    views: list[ViewResult]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> PublishResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), metadata_location=_str(d, "metadata_location"),
                   version=_int(d, "version"), snapshot_id=_int(d, "snapshot_id"), changed=_bool(d, "changed"),
                   partitions=_int(d, "partitions"),
                   views=[ViewResult.from_json(v) for v in d.get("views") or []], raw=d)


@dataclass(frozen=True)
class PartitionStatus:
    """One partition of a ``status`` range: ``present``, ``missing`` or ``corrupt``."""

    partition: str
    start: datetime | None
    end: datetime | None
    state: str
    present: bool
    generation: str
    seq: int
    run_id: str
    rows: int
    committed_at: datetime | None
    error: str
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> PartitionStatus:
        """Builds the row from the CLI's ``--json`` document."""
        return cls(partition=_str(d, "partition"), start=_time(d.get("start")), end=_time(d.get("end")),
                   state=_str(d, "state"), present=_bool(d, "present"), generation=_str(d, "generation"),
                   seq=_int(d, "seq"), run_id=_str(d, "run_id"), rows=_int(d, "rows"),
                   committed_at=_time(d.get("committed_at")), error=_str(d, "error"), raw=d)


@dataclass(frozen=True)
class StatusResult:
    """The result of ``status``: every partition of a half-open range."""

    table: str
    interval: str
    grain: str
    layout: str
    expected: int
    present: int
    missing: int
    corrupt: int
    complete: bool
    partitions: list[PartitionStatus]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> StatusResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), interval=_str(d, "interval"), grain=_str(d, "grain"),
                   layout=_str(d, "layout"), expected=_int(d, "expected"), present=_int(d, "present"),
                   missing=_int(d, "missing"), corrupt=_int(d, "corrupt"), complete=_bool(d, "complete"),
                   partitions=[PartitionStatus.from_json(p) for p in d.get("partitions") or []], raw=d)

    def to_arrow(self) -> pa.Table:
        """The partitions as a pyarrow Table, one row each."""
        return _rows_table(self.partitions)


@dataclass(frozen=True)
class Generation:
    """One generation of a partition's ``history``."""

    generation: str
    parent: str
    run_id: str
    rows: int
    bytes: int
    files: int
    created_at: datetime | None
    committed_at: datetime | None
    rollback_of: str
    current: bool
    collected: bool
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> Generation:
        """Builds the row from the CLI's ``--json`` document."""
        return cls(generation=_str(d, "generation"), parent=_str(d, "parent"), run_id=_str(d, "run_id"),
                   rows=_int(d, "rows"), bytes=_int(d, "bytes"), files=_int(d, "files"),
                   created_at=_time(d.get("created_at")), committed_at=_time(d.get("committed_at")),
                   rollback_of=_str(d, "rollback_of"), current=_bool(d, "current"),
                   collected=_bool(d, "collected"), raw=d)


@dataclass(frozen=True)
class HistoryResult:
    """The result of ``history``: a partition's generations, newest first."""

    table: str
    partition: str
    generations: list[Generation]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> HistoryResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), partition=_str(d, "partition"),
                   generations=[Generation.from_json(g) for g in d.get("generations") or []], raw=d)

    def to_arrow(self) -> pa.Table:
        """The generations as a pyarrow Table, newest first."""
        return _rows_table(self.generations)


@dataclass(frozen=True)
class DataFile:
    """One data file of ``files``: ``checksum`` is ``sha256:<hex>``."""

    partition: str
    generation: str
    path: str
    uri: str
    size: int
    rows: int
    checksum: str
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> DataFile:
        """Builds the row from the CLI's ``--json`` document."""
        return cls(partition=_str(d, "partition"), generation=_str(d, "generation"), path=_str(d, "path"),
                   uri=_str(d, "uri"), size=_int(d, "size"), rows=_int(d, "rows"),
                   checksum=_str(d, "checksum"), raw=d)


@dataclass(frozen=True)
class FilesResult:
    """The result of ``files``: the current data files of the selection."""

    table: str
    partitions: list[str]
    rows: int
    bytes: int
    files: list[DataFile]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> FilesResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), partitions=list(d.get("partitions") or []), rows=_int(d, "rows"),
                   bytes=_int(d, "bytes"), files=[DataFile.from_json(f) for f in d.get("files") or []], raw=d)

    @property
    def uris(self) -> list[str]:
        """The files' URIs, for an engine to read."""
        return [f.uri for f in self.files]

    def to_arrow(self) -> pa.Table:
        """The files as a pyarrow Table, one row each."""
        return _rows_table(self.files)


@dataclass(frozen=True)
class VerifiedPartition:
    """One partition of ``verify``; ``problems`` are ``{file, what, want, got}``."""

    partition: str
    generation: str
    files: int
    rows: int
    bytes: int
    ok: bool
    problems: list[dict[str, Any]]
    checks: list[str]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> VerifiedPartition:
        """Builds the row from the CLI's ``--json`` document."""
        return cls(partition=_str(d, "partition"), generation=_str(d, "generation"), files=_int(d, "files"),
                   rows=_int(d, "rows"), bytes=_int(d, "bytes"), ok=_bool(d, "ok"),
                   problems=list(d.get("problems") or []), checks=list(d.get("checks") or []), raw=d)


@dataclass(frozen=True)
class VerifyResult:
    """The result of ``verify`` (a mismatch raises :class:`MismatchError` carrying it)."""

    table: str
    ok: bool
    checked: int
    failed: int
    partitions: list[VerifiedPartition]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> VerifyResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), ok=_bool(d, "ok"), checked=_int(d, "checked"),
                   failed=_int(d, "failed"),
                   partitions=[VerifiedPartition.from_json(p) for p in d.get("partitions") or []], raw=d)


@dataclass(frozen=True)
class GcResult:
    """The result of ``gc``; ``partitions`` and ``totals`` as the CLI prints them."""

    table: str
    dry_run: bool
    keep: int
    partitions: list[dict[str, Any]]
    totals: dict[str, Any]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> GcResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), dry_run=_bool(d, "dry_run"), keep=_int(d, "keep"),
                   partitions=list(d.get("partitions") or []), totals=dict(d.get("totals") or {}), raw=d)


@dataclass(frozen=True)
class AuditRow:
    """One attempt of the audit: ``state`` and ``why`` say what became of it."""

    partition: str
    generation: str
    run_id: str
    kind: str
    state: str
    rows: int
    bytes: int
    files: int
    created_at: datetime | None
    committed_at: datetime | None
    superseded_by: str
    superseded_at: datetime | None
    parent: str
    data_generation: str
    rollback_of: str
    why: str
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> AuditRow:
        """Builds the row from the CLI's ``--json`` document."""
        return cls(partition=_str(d, "partition"), generation=_str(d, "generation"), run_id=_str(d, "run_id"),
                   kind=_str(d, "kind"), state=_str(d, "state"), rows=_int(d, "rows"), bytes=_int(d, "bytes"),
                   files=_int(d, "files"), created_at=_time(d.get("created_at")),
                   committed_at=_time(d.get("committed_at")), superseded_by=_str(d, "superseded_by"),
                   superseded_at=_time(d.get("superseded_at")), parent=_str(d, "parent"),
                   data_generation=_str(d, "data_generation"), rollback_of=_str(d, "rollback_of"),
                   why=_str(d, "why"), raw=d)


@dataclass(frozen=True)
class AuditResult:
    """The result of ``audit``: one row per attempt."""

    table: str
    rows: list[AuditRow]
    raw: Doc = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Doc) -> AuditResult:
        """Builds the result from the CLI's ``--json`` document."""
        return cls(table=_str(d, "table"), rows=[AuditRow.from_json(r) for r in d.get("rows") or []], raw=d)

    def to_arrow(self) -> pa.Table:
        """The attempts as a pyarrow Table, one row each."""
        return _rows_table(self.rows)
