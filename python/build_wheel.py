#!/usr/bin/env python3
"""Writes a platform wheel of the pswap package that carries the pswap binary.

    build_wheel.py --binary PATH --platform TAG --version V --out DIR

A wheel is a zip file with a fixed layout (PEP 427); this writes it with
the standard library alone, so that building needs no build backend and
no network. The binary goes to ``pswap-V.data/scripts/`` (pip installs it
into the environment's bin/ or Scripts/, as ruff's and uv's wheels do,
and ``pswap.find_binary`` finds it there); the Python package next to it.
Entries are sorted and dated 1980-01-01, so the same inputs give the same
bytes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src", "pswap")
EPOCH = (1980, 1, 1, 0, 0, 0)

METADATA = """\
Metadata-Version: 2.1
Name: pswap
Version: {version}
Summary: Commit one table partition atomically to an object store, from Python: Arrow in, typed results out
License: Apache-2.0
Requires-Python: >=3.9
Provides-Extra: arrow
Requires-Dist: pyarrow>=15; extra == "arrow"
Description-Content-Type: text/markdown

{readme}
"""

WHEEL = """\
Wheel-Version: 1.0
Generator: pswap build_wheel.py
Root-Is-Purelib: false
{tags}"""


def pep440(version: str) -> str:
    """The package version of the binary's ("pswap/0.1.0" is 0.1.0)."""
    v = version.split("/")[-1].lstrip("v")
    if not re.fullmatch(r"\d+(\.\d+)*([abc]|rc)?\d*(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?", v):
        sys.exit(f"build_wheel.py: {version!r} is not a PEP 440 version")
    return v


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build(binary: str, platform: str, version: str, out: str) -> str:
    version = pep440(version)
    tags = "".join(f"Tag: py3-none-{p}\n" for p in platform.split("."))
    name = f"pswap-{version}-py3-none-{platform}.whl"
    dist_info = f"pswap-{version}.dist-info"
    exe = "pswap.exe" if platform.startswith("win") else "pswap"
    files: list[tuple[str, bytes, int]] = []  # (path in the wheel, bytes, mode)
    for f in sorted(os.listdir(SRC)):
        p = os.path.join(SRC, f)
        if not os.path.isfile(p) or f.endswith((".pyc", ".pyo")) or f == "_version.py":
            continue
        with open(p, "rb") as fh:
            files.append((f"pswap/{f}", fh.read(), 0o644))
    files.append(("pswap/_version.py", (
        '"""The package version: the pswap binary\'s (the wheel build writes it)."""\n\n'
        f'__version__ = "{version}"\n').encode(), 0o644))
    with open(binary, "rb") as fh:
        files.append((f"pswap-{version}.data/scripts/{exe}", fh.read(), 0o755))
    readme_path = os.path.join(HERE, "README.md")
    readme = open(readme_path, encoding="utf-8").read() if os.path.exists(readme_path) else ""
    files.append((f"{dist_info}/METADATA", METADATA.format(version=version, readme=readme).encode(), 0o644))
    files.append((f"{dist_info}/WHEEL", WHEEL.format(tags=tags).encode(), 0o644))
    record = "".join(f"{p},{record_hash(b)},{len(b)}\n" for p, b, _ in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p, b, mode in files:
            info = zipfile.ZipInfo(p, date_time=EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b)
    os.replace(tmp, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the pswap binary for the platform")
    ap.add_argument("--platform", required=True, help="the platform tag(s), e.g. manylinux_2_17_x86_64.musllinux_1_2_x86_64")
    ap.add_argument("--version", required=True, help="the binary's version (pswap/0.1.0 or 0.1.0)")
    ap.add_argument("--out", required=True, help="the folder to write the wheel into")
    a = ap.parse_args()
    print(build(a.binary, a.platform, a.version, a.out))


if __name__ == "__main__":
    main()
