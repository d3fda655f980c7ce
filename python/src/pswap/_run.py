"""Running the binary: arguments from keyword options, Arrow on stdin, errors."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import IO, Any, Union

from ._binary import find_binary
from ._errors import PswapError, command_of, error_class

#: A value of a keyword option: a flag's value, True/False for a boolean
#: flag, None to leave the flag out, a sequence for a flag given repeatedly.
Option = Union[str, int, float, bool, timedelta, datetime, Sequence[str], None]


def duration(v: timedelta) -> str:
    """A timedelta as a Go duration (``90s``)."""
    return f"{v.total_seconds():g}s"


def flags(options: Mapping[str, Option]) -> list[str]:
    """Turns keyword options into CLI flags: ``run_id="x"`` is ``--run-id x``.

    A trailing underscore is dropped (``from_`` is ``--from``); True is the
    bare flag, False ``--flag=false``, None leaves the flag out.
    """
    out: list[str] = []
    for key, v in options.items():
        if v is None:
            continue
        name = "--" + key.rstrip("_").replace("_", "-")
        if isinstance(v, bool):
            out.append(name if v else name + "=false")
        elif isinstance(v, timedelta):
            out.append(f"{name}={duration(v)}")
        elif isinstance(v, datetime):
            out.append(f"{name}={v.isoformat()}")
        elif isinstance(v, (str, int, float)):
            out.append(f"{name}={v}")
        else:
            out.extend(f"{name}={x}" for x in v)
    return out


def _drain(f: IO[bytes], sink: list[bytes]) -> threading.Thread:
    def run() -> None:
        sink.append(f.read())
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def run(args: Sequence[str], *, binary: str | None = None, env: Mapping[str, str] | None = None,
        feed: Callable[[IO[bytes]], None] | None = None, ok_exits: Iterable[int] = ()) -> tuple[int, Any]:
    """Runs ``pswap ARGS --json`` and returns its exit status and its JSON.

    ``feed``, when given, writes the standard input (an Arrow IPC stream)
    while stdout and stderr are read on threads of their own, so that no
    pipe fills up. If ``feed`` raises, the binary is stopped before it can
    read an end to the stream (it refuses a stream without its
    end-of-stream marker anyway) and the exception propagates. An exit
    status in ``ok_exits`` whose stdout holds a document returns it (verify's
    report, exit 4, is raised with the report as ``error.document``).

    Raises:
        PswapError: the binary failed; its class says how (see ``_errors``).
    """
    cmd = [binary or find_binary(), *args[:1], "--json", *args[1:]]
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env)
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_drain(proc.stdout, out), _drain(proc.stderr, err)]
    try:
        if feed is not None:
            assert proc.stdin is not None
            try:
                feed(proc.stdin)
                proc.stdin.close()
            except OSError as e:
                # The binary stopped reading (a broken pipe, which pyarrow
                # may wrap): its error says why. Any other error is the
                # producer's, and stops the binary (below).
                if not isinstance(e, (BrokenPipeError, ConnectionResetError)) and "Broken pipe" not in str(e):
                    raise
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    code = proc.wait()
    for t in readers:
        t.join()
    stdout = b"".join(out).decode("utf-8", "replace")
    stderr = b"".join(err).decode("utf-8", "replace")
    doc: Any = None
    if stdout.strip():
        try:
            doc = json.loads(stdout)
        except ValueError:
            doc = None
    if code == 0 or (code in ok_exits and doc is not None):
        return code, doc
    raise _error(code, stderr, doc, command_of(args))


def _error(code: int, stderr: str, doc: Any, command: str = "") -> PswapError:
    body: dict[str, Any] = {}
    # The error document is the last thing on stderr (after warnings), one
    # JSON document, indented.
    i = stderr.rfind('{\n  "error"')
    if i < 0:
        i = stderr.rfind('{"error"')
    if i >= 0:
        try:
            body = dict(json.loads(stderr[i:]).get("error") or {})
        except ValueError:
            body = {}
    if code < 0:
        message = f"the pswap binary was killed by signal {-code}"
        ecode = "interrupted"
    else:
        message = str(body.get("message") or stderr.strip() or f"pswap exited {code}")
        ecode = str(body.get("code") or "failure")
    cls = error_class(ecode, code, command)
    e = cls(message, code=ecode, exit_code=code, hint=str(body.get("hint") or ""), stderr=stderr, command=command)
    e.document = doc
    return e
