"""The exception hierarchy: one class per ``--json`` error code.

The binary reports an error as ``{"error": {"code", "exit", "message",
"hint"}}`` on stderr. :func:`error_from` turns it into an exception of the
class of its ``code``, so that a scheduler can act on the class, or on
:attr:`PswapError.retryable`, without parsing messages.
"""

from __future__ import annotations

from typing import Any, ClassVar


class PswapError(Exception):
    """An error the ``pswap`` binary reported.

    Attributes:
        code: the stable error code of ``--json`` (``"conflict"``, ...).
        exit_code: the binary's exit status.
        message: the error message (credentials already redacted).
        hint: advice for errors whose fix lies outside pswap, or ``""``.
        stderr: everything the binary wrote on stderr (warnings included).
    """

    #: Whether running the same call again (same run id) can succeed.
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, code: str = "failure", exit_code: int = 1,
                 hint: str = "", stderr: str = "") -> None:
        super().__init__(message + (f"\nhint: {hint}" if hint else ""))
        self.code = code
        self.exit_code = exit_code
        self.message = message
        self.hint = hint
        self.stderr = stderr
        #: The JSON document the binary printed on stdout despite failing
        #: (verify's report with a mismatch), else None.
        self.document: Any = None


class RetryableError(PswapError):
    """A failure that the same call, with the same run id, may get past."""

    retryable: ClassVar[bool] = True


class FatalError(PswapError):
    """A failure that the same call fails again: fix something first."""

    retryable: ClassVar[bool] = False


class UsageError(FatalError):
    """Exit 2, code ``usage``: a mistake in the call itself (a bad option)."""


class BadInputError(FatalError):
    """Exit 2, code ``bad_input``: the data or a key the table does not accept."""


class MismatchError(FatalError):
    """Exit 4: ``verify`` found the store disagreeing with a manifest."""


class ConflictError(RetryableError):
    """Exit 3: another run committed the partition since this call began.

    Nothing was changed. Calling again begins afresh from the newer
    generation and replaces it (as ``on_conflict="overwrite"`` would); a
    scheduler that must keep the other run's commit treats this as final
    (the Airflow and Dagster examples do).
    """


class OutcomeUnknownError(RetryableError):
    """The store stopped answering at the swap: call again with the same run id.

    The same call commits if the first attempt did not land, and is a
    no-op if it did.
    """


class UnavailableError(RetryableError):
    """Codes ``unavailable`` and ``unreachable``: the store failed or did not answer."""


class TimeoutError(RetryableError):  # noqa: A001 - pswap.TimeoutError, as the code names it
    """Code ``timeout``: the call ran out of its ``timeout``."""


class InterruptedError(RetryableError):  # noqa: A001
    """Code ``interrupted``: the binary was stopped by SIGINT or SIGTERM (or killed)."""


class NoTableError(FatalError):
    """Code ``no_table``: nothing is stored at the table URL (a typo?)."""


class NoDataError(FatalError):
    """Code ``no_data``: the partition was never committed."""


class AccessDeniedError(FatalError):
    """Code ``access_denied``: the credentials may not read or write the table."""


class NoCredentialsError(FatalError):
    """Code ``no_credentials``: the AWS credential chain found none."""


class BucketNotFoundError(FatalError):
    """Code ``bucket_not_found``: the bucket (or local root folder) does not exist."""


class CorruptError(FatalError):
    """Code ``corrupt``: metadata on the store was damaged outside pswap."""


class DiskFullError(FatalError):
    """Code ``disk_full``: a local table's disk is full; nothing was half-written."""


class StaleGenerationError(FatalError):
    """Code ``stale_generation``."""


class GenerationNotFoundError(FatalError):
    """Code ``generation_not_found``: no such generation (see ``history``)."""


_BY_CODE: dict[str, type[PswapError]] = {
    "usage": UsageError,
    "bad_input": BadInputError,
    "conflict": ConflictError,
    "mismatch": MismatchError,
    "outcome_unknown": OutcomeUnknownError,
    "unavailable": UnavailableError,
    "unreachable": UnavailableError,
    "timeout": TimeoutError,
    "interrupted": InterruptedError,
    "no_table": NoTableError,
    "no_data": NoDataError,
    "access_denied": AccessDeniedError,
    "no_credentials": NoCredentialsError,
    "bucket_not_found": BucketNotFoundError,
    "corrupt": CorruptError,
    "disk_full": DiskFullError,
    "stale_generation": StaleGenerationError,
    "generation_not_found": GenerationNotFoundError,
}

_BY_EXIT: dict[int, type[PswapError]] = {
    2: BadInputError,
    3: ConflictError,
    4: MismatchError,
    130: InterruptedError,
    143: InterruptedError,
}


def error_class(code: str, exit_code: int) -> type[PswapError]:
    """Returns the exception class of an error code, else of an exit status.

    A code this package does not know (from a newer binary) falls back to
    the exit status: 1 is a :class:`RetryableError` (the CLI's exit 1 is
    the status worth a retry), any other a :class:`FatalError`.
    """
    cls = _BY_CODE.get(code) or _BY_EXIT.get(exit_code)
    if cls is not None:
        return cls
    if exit_code == 1 or exit_code < 0:  # negative: killed by a signal
        return RetryableError
    return FatalError
