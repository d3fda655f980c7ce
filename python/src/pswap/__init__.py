"""pswap from Python: one partition committed atomically, with typed results.

The package runs the ``pswap`` binary that its wheel carries (the Go
binary stays the one engine): Arrow data streams to it on standard input,
results come back as dataclasses built from ``--json``, and exit codes as
exceptions a scheduler can act on::

    import pswap
    t = pswap.Table("s3://lake/sales")
    res = t.commit(df, interval="2026-11-29/P1D", run_id="daily/2026-11-29")
    if res.changed:
        notify(res.idempotency_key)
"""

from ._binary import find_binary
from ._data import Data
from ._errors import (
    AccessDeniedError,
    BadInputError,
    BucketNotFoundError,
    ConflictError,
    CorruptError,
    DiskFullError,
    FatalError,
    GenerationNotFoundError,
    InterruptedError,
    MismatchError,
    NoCredentialsError,
    NoDataError,
    NoTableError,
    OutcomeUnknownError,
    PswapError,
    RebaseConflictError,
    ReplaceConflictError,
    RetryableError,
    StaleGenerationError,
    TimeoutError,
    UnavailableError,
    UsageError,
)
from ._results import (
    AuditResult,
    AuditRow,
    CommitResult,
    DataFile,
    DryRunResult,
    FilesResult,
    GcResult,
    Generation,
    HistoryResult,
    MergedPartition,
    MergeResult,
    PartitionStatus,
    PublishResult,
    StageResult,
    StatusResult,
    VerifiedPartition,
    VerifyResult,
    ViewResult,
)
from ._table import Table
from ._version import __version__

__all__ = [
    "AccessDeniedError", "AuditResult", "AuditRow", "BadInputError", "BucketNotFoundError", "CommitResult",
    "ConflictError", "CorruptError", "Data", "DataFile", "DiskFullError", "DryRunResult", "FatalError",
    "FilesResult", "GcResult", "Generation", "GenerationNotFoundError", "HistoryResult", "InterruptedError",
    "MergeResult", "MergedPartition", "MismatchError", "NoCredentialsError", "NoDataError", "NoTableError",
    "OutcomeUnknownError", "PartitionStatus", "PswapError", "PublishResult", "RebaseConflictError",
    "ReplaceConflictError", "RetryableError",
    "StaleGenerationError", "StageResult", "StatusResult", "Table", "TimeoutError", "UnavailableError",
    "UsageError", "VerifiedPartition", "VerifyResult", "ViewResult", "__version__", "find_binary",
]
