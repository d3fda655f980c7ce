"""The results' one converter from ``--json`` (no binary needed)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pytest

import pswap
from pswap import _results


def _result_classes() -> list[type[Any]]:
    return [c for c in vars(_results).values()
            if isinstance(c, type) and dataclasses.is_dataclass(c) and issubclass(c, _results._FromJSON)]


def test_every_result_field_has_a_converter() -> None:
    classes = _result_classes()
    assert len(classes) >= 18
    for c in classes:
        names = [n for n, _ in _results._fields(c)]
        assert names == [f.name for f in dataclasses.fields(c) if f.name != "raw"]


def test_fields_converted_by_type() -> None:
    doc: dict[str, Any] = {
        "table": "s3://lake/sales", "input_rows": "12", "committed": 2, "unchanged": None, "exit": 0,
        "partitions": [
            {"partition": "dt=2026-11-01", "changed": True, "rows": 5, "error": None, "future": "x"},
            {"partition": "dt=2026-11-02"},
        ],
        "newer_field": {"a": 1},
    }
    r = pswap.MergeResult.from_json(doc)
    assert r.table == "s3://lake/sales" and r.input_rows == 12 and r.committed == 2
    assert r.unchanged == 0 and r.failed == 0  # null and absent: the zero
    assert r.raw is doc
    p0, p1 = r.partitions
    assert isinstance(p0, _results.MergedPartition)
    assert (p0.partition, p0.changed, p0.rows, p0.error, p0.raw["future"]) == ("dt=2026-11-01", True, 5, "", "x")
    assert (p1.changed, p1.outcome, p1.rows) == (False, "", 0)

    s = _results.PartitionStatus.from_json({"partition": "dt=1", "start": "2026-11-01T00:00:00Z",
                                             "end": "2026-11-02T00:00:00", "committed_at": ""})
    assert s.start == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert s.end == datetime(2026, 11, 2, tzinfo=timezone.utc)  # no offset: UTC
    assert s.committed_at is None

    v = _results.ViewResult.from_json({"view": "iceberg", "version": "3"})
    assert v.version == 3 and _results.ViewResult.from_json({}).version is None

    g = _results.GcResult.from_json({"partitions": [{"p": 1}], "totals": None})
    assert g.partitions == [{"p": 1}] and g.totals == {}
    f = _results.FilesResult.from_json({"partitions": ["dt=1"], "files": [{"uri": "s3://b/k", "size": 3}]})
    assert f.partitions == ["dt=1"] and f.uris == ["s3://b/k"] and f.files[0].size == 3


def test_unknown_field_type_is_named() -> None:
    @dataclass(frozen=True)
    class Odd(_results._FromJSON):
        when: float
        raw: dict[str, Any] = field(default_factory=dict)

    with pytest.raises(TypeError, match="Odd.*float"):
        Odd.from_json({"when": 1.5})
