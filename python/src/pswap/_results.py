"""Typed results, built from the ``--json`` documents of the CLI.

Every result keeps the whole document as ``raw``, so that a field a newer
binary adds is still at hand. Times are timezone-aware ``datetime`` in UTC
(``None`` where the CLI prints ``null`` or an empty string).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    import pyarrow as pa

Doc = dict[str, Any]


def _time(v: Any) -> datetime | None:
    if not v:
        return None
    s = str(v)
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    t = datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _str(v: Any) -> str:
    return "" if v is None else str(v)


def _int(v: Any) -> int:
    return 0 if v is None else int(v)


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _list(v: Any) -> list[Any]:
    return list(v or [])


def _dict(v: Any) -> dict[str, Any]:
    return dict(v or {})


# The converter of each field type the results use, by the annotation's
# text (``from __future__ import annotations`` keeps annotations as text,
# and ``int | None`` cannot be evaluated before Python 3.10). A list of
# results (``list[MergedPartition]``) is converted element by element.
_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "str": _str,
    "int": _int,
    "bool": bool,
    "int | None": _opt_int,
    "datetime | None": _time,
    "list[str]": _list,
    "list[dict[str, Any]]": _list,
    "dict[str, Any]": _dict,
}

R = TypeVar("R", bound="_FromJSON")


class _FromJSON:
    """A result built from the CLI's ``--json`` document by its fields."""

    @classmethod
    def from_json(cls: type[R], d: Doc) -> R:
        """Builds the result from the CLI's ``--json`` document.

        Each field takes the document's member of the same name, converted
        by the field's type; a member that is absent or ``null`` gives the
        type's zero (``""``, ``0``, ``False``, an empty list) or ``None``
        for an optional one. ``raw`` is the whole document.
        """
        kwargs = {name: conv(d.get(name)) for name, conv in _fields(cls)}
        return cls(raw=d, **kwargs)  # type: ignore[call-arg]


_FIELDS: dict[type, list[tuple[str, Callable[[Any], Any]]]] = {}


def _fields(cls: type) -> list[tuple[str, Callable[[Any], Any]]]:
    """The converters of a result class's fields but ``raw``, made once."""
    if cls not in _FIELDS:
        _FIELDS[cls] = [(f.name, _converter(cls, f.type)) for f in dataclasses.fields(cls) if f.name != "raw"]
    return _FIELDS[cls]


def _converter(cls: type, annotation: Any) -> Callable[[Any], Any]:
    """The converter of one field's annotation (a TypeError names one no converter handles)."""
    a = str(annotation)
    if a in _CONVERTERS:
        return _CONVERTERS[a]
    if a.startswith("list[") and a.endswith("]"):
        elem = globals().get(a[len("list["):-1])
        if isinstance(elem, type) and issubclass(elem, _FromJSON):
            conv = elem.from_json
            return lambda v: [conv(e) for e in v or []]
    raise TypeError(f"{cls.__name__}: no converter from --json for a field of type {a}")


def _rows_table(rows: list[Any]) -> pa.Table:
    """A pyarrow Table of dataclass rows (their ``raw`` left out)."""
    import pyarrow as pa

    dicts = [{k: v for k, v in dataclasses.asdict(r).items() if k != "raw"} for r in rows]
    if not rows:
        return pa.table({})
    return pa.Table.from_pylist(dicts)


@dataclass(frozen=True)
class CommitResult(_FromJSON):
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


@dataclass(frozen=True)
class DryRunResult(_FromJSON):
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


@dataclass(frozen=True)
class StageResult(_FromJSON):
    """A generation uploaded by ``stage``, for ``commit(staged=generation)``."""

    table: str
    partition: str
    generation: str
    rows: int
    bytes: int
    files: int
    content_checksum: str
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class MergedPartition(_FromJSON):
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


@dataclass(frozen=True)
class MergeResult(_FromJSON):
    """The result of ``merge``: one entry per partition the input touched."""

    table: str
    input_rows: int
    partitions: list[MergedPartition]
    committed: int
    unchanged: int
    failed: int
    exit: int
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ViewResult(_FromJSON):
    """One view of a ``publish``: Iceberg metadata, the Delta log, a catalog."""

    view: str
    name: str
    published: bool
    changed: bool
    version: int | None
    location: str
    error: str
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class PublishResult(_FromJSON):
    """The result of ``publish`` (``changed`` false: already up to date)."""

    table: str
    metadata_location: str
    version: int
    snapshot_id: int
    changed: bool
    partitions: int
    views: list[ViewResult]
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class PartitionStatus(_FromJSON):
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


@dataclass(frozen=True)
class StatusResult(_FromJSON):
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

    def to_arrow(self) -> pa.Table:
        """The partitions as a pyarrow Table, one row each."""
        return _rows_table(self.partitions)


@dataclass(frozen=True)
class Generation(_FromJSON):
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


@dataclass(frozen=True)
class HistoryResult(_FromJSON):
    """The result of ``history``: a partition's generations, newest first."""

    table: str
    partition: str
    generations: list[Generation]
    raw: Doc = field(default_factory=dict, repr=False)

    def to_arrow(self) -> pa.Table:
        """The generations as a pyarrow Table, newest first."""
        return _rows_table(self.generations)


@dataclass(frozen=True)
class DataFile(_FromJSON):
    """One data file of ``files``: ``checksum`` is ``sha256:<hex>``."""

    partition: str
    generation: str
    path: str
    uri: str
    size: int
    rows: int
    checksum: str
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class FilesResult(_FromJSON):
    """The result of ``files``: the current data files of the selection."""

    table: str
    partitions: list[str]
    rows: int
    bytes: int
    files: list[DataFile]
    raw: Doc = field(default_factory=dict, repr=False)

    @property
    def uris(self) -> list[str]:
        """The files' URIs, for an engine to read."""
        return [f.uri for f in self.files]

    def to_arrow(self) -> pa.Table:
        """The files as a pyarrow Table, one row each."""
        return _rows_table(self.files)


@dataclass(frozen=True)
class VerifiedPartition(_FromJSON):
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


@dataclass(frozen=True)
class VerifyResult(_FromJSON):
    """The result of ``verify`` (a mismatch raises :class:`MismatchError` carrying it)."""

    table: str
    ok: bool
    checked: int
    failed: int
    partitions: list[VerifiedPartition]
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class GcResult(_FromJSON):
    """The result of ``gc``; ``partitions`` and ``totals`` as the CLI prints them."""

    table: str
    dry_run: bool
    keep: int
    partitions: list[dict[str, Any]]
    totals: dict[str, Any]
    raw: Doc = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class AuditRow(_FromJSON):
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


@dataclass(frozen=True)
class AuditResult(_FromJSON):
    """The result of ``audit``: one row per attempt."""

    table: str
    rows: list[AuditRow]
    raw: Doc = field(default_factory=dict, repr=False)

    def to_arrow(self) -> pa.Table:
        """The attempts as a pyarrow Table, one row each."""
        return _rows_table(self.rows)
