"""Fixtures: a fresh table URL per test, on a local folder and on MinIO.

MinIO runs when $PSWAP_TEST_S3_URL names a bucket (s3://bucket) and the
AWS_* variables of scripts/minio.sh are set; the binary reads them itself.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator

import pytest


def _s3_base() -> str | None:
    return os.environ.get("PSWAP_TEST_S3_URL") or None


@pytest.fixture(params=["file", "s3"])
def table_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A URL where no table is yet: a local folder, or a prefix on MinIO."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name)[:60] + "-" + uuid.uuid4().hex[:8]
    if request.param == "file":
        yield str(tmp_path_factory.mktemp("lake") / name)
        return
    base = _s3_base()
    if base is None:
        pytest.skip("MinIO: set PSWAP_TEST_S3_URL and the AWS_* variables (integration/python does)")
    yield f"{base.rstrip('/')}/{name}/sales"
