"""Finding the ``pswap`` binary that the wheel installed."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

_EXE = "pswap.exe" if sys.platform == "win32" else "pswap"


def find_binary() -> str:
    """Returns the path of the ``pswap`` binary this package runs.

    In order: ``$PSWAP_BINARY``; the scripts folder of the environment the
    package is installed in (where the wheel puts it, as ruff's does); the
    user scheme's scripts folder (``pip install --user``); ``pswap`` on
    ``PATH``.

    Raises:
        FileNotFoundError: no binary was found.
    """
    env = os.environ.get("PSWAP_BINARY")
    if env:
        return env
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = {"win32": "nt_user", "darwin": "osx_framework_user"}.get(sys.platform, "posix_user")
    try:
        candidates.append(sysconfig.get_path("scripts", scheme=user_scheme))
    except KeyError:  # pragma: no cover - a Python without that scheme
        pass
    # The scripts folder next to this package's site-packages (a --target
    # or --prefix install whose sysconfig does not know it).
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "..", "..", "bin"))
    for folder in candidates:
        path = os.path.join(folder, _EXE)
        if os.path.isfile(path):
            return os.path.normpath(path)
    found = shutil.which(_EXE)
    if found:
        return found
    raise FileNotFoundError(
        "the pswap binary was not found: install a pswap wheel for this platform, "
        "or set PSWAP_BINARY to its path")
