"""``python -m pswap ARGS``: runs the pswap CLI with ARGS."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import find_binary


def main() -> int:
    """Runs the binary with this process's arguments and returns its exit status."""
    binary = find_binary()
    if sys.platform != "win32":
        os.execv(binary, [binary, *sys.argv[1:]])  # the binary replaces Python: signals reach it directly
    return subprocess.run([binary, *sys.argv[1:]], check=False).returncode  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
