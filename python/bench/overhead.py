"""The package's overhead against the CLI on a file, in one run.

    python overhead.py [ROWS] [ROUNDS]

Commits the same ROWS rows (id int64, amount double, name string) to a
fresh local table per attempt, three ways, alternating, ROUNDS times:
  cli-file     the binary on a Parquet file already on disk (the baseline);
  tmpfile      what jobs do today: write the DataFrame to a temporary
               Parquet file, then run the binary on it;
  package      pswap.Table.commit(pyarrow Table): Arrow IPC on stdin.
Prints each way's median wall time and peak RSS (the binary's, and for
the ways that run in Python the Python process's growth too), and the
ratios against cli-file. Memory: peaks from /usr/bin/time (see timed).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

import pswap


def data(n: int) -> pa.Table:
    import pyarrow.compute as pc

    ids = pa.array(range(n), pa.int64())
    return pa.table({"id": ids, "amount": pc.divide(pc.cast(ids, pa.float64()), 4.0),
                     "name": pc.binary_join_element_wise("n", pc.cast(ids, pa.string()), "")})


CHILD = r"""
import sys, time
import pyarrow.parquet as pq
import pswap
tbl = pq.read_table(sys.argv[1])
t0 = time.perf_counter()
out = pswap.Table(sys.argv[2]).commit(tbl, partition="dt=2026-11-29")
dt = time.perf_counter() - t0
assert out.rows == tbl.num_rows
print(dt)
"""


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Runs args under /usr/bin/time: wall time, peak RSS and stdout. A
    process forked from this one would start its peak RSS at this
    process's (ru_maxrss is kept across exec); time's child starts fresh."""
    fd, out = tempfile.mkstemp()
    os.close(fd)
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-o", out, "-f", "%M", *args], stdout=subprocess.PIPE, text=True,
                       env=env, check=True)
    dt = time.perf_counter() - t0
    with open(out) as f:
        kb = int(f.read().split()[-1])
    os.remove(out)
    return dt, kb * 1024, p.stdout


def run_binary(args: list[str]) -> tuple[float, int]:
    dt, rss, _ = timed(args)
    return dt, rss


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    binary = pswap.find_binary()
    tbl = data(n)
    root = tempfile.mkdtemp(prefix="pswap-overhead-")
    src = os.path.join(root, "in.parquet")
    pq.write_table(tbl, src)
    res: dict[str, list[tuple[float, int]]] = {"cli-file": [], "tmpfile": [], "package": []}
    py_rss: list[int] = []
    for r in range(rounds):
        res["cli-file"].append(run_binary([binary, "commit", "-q", "--table", f"{root}/a{r}",
                                           "--partition", "dt=2026-11-29", src]))
        t0 = time.perf_counter()
        tmp = os.path.join(root, f"tmp{r}.parquet")
        pq.write_table(tbl, tmp)
        dt, rss = run_binary([binary, "commit", "-q", "--table", f"{root}/b{r}", "--partition", "dt=2026-11-29", tmp])
        os.remove(tmp)
        res["tmpfile"].append((time.perf_counter() - t0, rss))
        # In a Python process of its own, whose binary runs under time too.
        wrapper = os.path.join(root, "pswap-timed")
        rss_file = os.path.join(root, f"rss{r}")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec /usr/bin/time -o {rss_file} -f %M {binary} "$@"\n')
        os.chmod(wrapper, 0o755)
        env = dict(os.environ, PSWAP_BINARY=wrapper)
        _, py_peak, out = timed([sys.executable, "-c", CHILD, src, f"{root}/c{r}"], env=env)
        with open(rss_file) as f:
            bin_peak = int(f.read().split()[-1]) * 1024
        res["package"].append((float(out.split()[0]), bin_peak))
        py_rss.append(py_peak)
    base_t = statistics.median(t for t, _ in res["cli-file"])
    base_m = statistics.median(m for _, m in res["cli-file"])
    print(f"rows {n}, rounds {rounds}, load average {os.getloadavg()[0]:.1f}")
    for k, v in res.items():
        t = statistics.median(x for x, _ in v)
        m = statistics.median(y for _, y in v)
        print(f"{k:10s} time {t:7.2f} s ({t / base_t:.2f}x)  binary peak RSS {m / 1e6:7.1f} MB ({m / base_m:.2f}x)")
    print(f"package: the Python process's own peak RSS {statistics.median(py_rss) / 1e6:.1f} MB "
          f"(pyarrow, and the {tbl.nbytes / 1e6:.1f} MB table it read, as a job that has the DataFrame does)")


if __name__ == "__main__":
    main()
