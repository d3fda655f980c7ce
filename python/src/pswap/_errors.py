"""The exception hierarchy: one class per ``--json`` error code.

The binary reports an error as ``{"error": {"code", "exit", "message",
"hint"}}`` on stderr. :func:`error_class` gives the exception class of its
``code`` (and, for a conflict, of the command), so that a scheduler can act
on the class, or on :attr:`PswapError.retryable`, without parsing messages.

Which failures are retryable is one rule, the table "Exit status and
retries" of the CLI's documentation (docs/cli.md); a test checks
:func:`error_class` against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar


class PswapError(Exception):
    """An error the ``pswap`` binary reported.

    Attributes:
        code: the stable error code of ``--json`` (``"conflict"``, ...).
        exit_code: the binary's exit status.
        message: the error message (credentials already redacted).
        hint: advice for errors whose fix lies outside pswap, or ``""``.
        stderr: everything the binary wrote on stderr (warnings included).
        command: the command that failed as the retry rule names it
            (``"commit"``, ``"commit --append"``, ``"merge"``, ...), or ``""``.
    """

    #: Whether running the same call again (same run id) can succeed.
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, code: str = "failure", exit_code: int = 1,
                 hint: str = "", stderr: str = "", command: str = "") -> None:
        super().__init__(message + (f"\nhint: {hint}" if hint else ""))
        self.code = code
        self.exit_code = exit_code
        self.message = message
        self.hint = hint
        self.stderr = stderr
        self.command = command
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


class ConflictError(PswapError):
    """Exit 3: another run committed the partition since this call began.

    Nothing was changed. Whether a retry is safe depends on the command,
    so the error raised is one of two subclasses: :class:`ReplaceConflictError`
    (final) or :class:`RebaseConflictError` (retryable). Catch this class
    for both.
    """


class ReplaceConflictError(ConflictError, FatalError):
    """A conflict of a replacing ``commit`` or of ``rollback``: final.

    The call began from a generation another run has since replaced.
    Calling again would begin afresh from the newer generation and replace
    it; look at :meth:`Table.history` and call again deliberately (or with
    ``on_conflict="overwrite"``) only if this run's data should win.
    """


class RebaseConflictError(ConflictError, RetryableError):
    """A conflict of ``merge`` or ``commit(append=True)``: retryable.

    Both rebase on the newer generation already; exit 3 means they lost
    the race every time, and calling again rebases once more, losing
    nothing.
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


#: The commands whose conflict is retryable: they rebase on the newer
#: generation (``command`` as :func:`command_of` names it).
REBASING_COMMANDS = frozenset({"merge", "commit --append"})


def command_of(args: Sequence[str]) -> str:
    """The command of a CLI argument list as the retry rule names it:
    ``"commit --append"`` for an append, else the subcommand (``"merge"``)."""
    if not args:
        return ""
    if args[0] == "commit" and ("--append" in args or "--append=true" in args):
        return "commit --append"
    return args[0]


def error_class(code: str, exit_code: int, command: str = "") -> type[PswapError]:
    """Returns the exception class of an error code, else of an exit status.

    A conflict's class depends on ``command`` (see :func:`command_of`):
    :class:`RebaseConflictError` for a command in
    :data:`REBASING_COMMANDS`, else :class:`ReplaceConflictError`. A code
    this package does not know (from a newer binary) falls back to the exit
    status: 1 is a :class:`RetryableError` (the CLI's exit 1 is the status
    worth a retry), any other a :class:`FatalError`.
    """
    cls = _BY_CODE.get(code) or _BY_EXIT.get(exit_code)
    if cls is ConflictError:
        return RebaseConflictError if command in REBASING_COMMANDS else ReplaceConflictError
    if cls is not None:
        return cls
    if exit_code == 1 or exit_code < 0:  # negative: killed by a signal
        return RetryableError
    return FatalError
