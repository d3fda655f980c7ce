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
ratios against cli-file. Memory: the binary's peak from wait4's rusage.
"""

from __future__ import annotations

import os
import resource
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
import resource, sys, time
import pyarrow.parquet as pq
import pswap
tbl = pq.read_table(sys.argv[1])
t0 = time.perf_counter()
out = pswap.Table(sys.argv[2]).commit(tbl, partition="dt=2026-11-29")
dt = time.perf_counter() - t0
assert out.rows == tbl.num_rows
print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def run_binary(args: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, args
    return dt, ru.ru_maxrss * 1024


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
        # In a Python process of its own, so that its binary is its only child.
        p = subprocess.run([sys.executable, "-c", CHILD, src, f"{root}/c{r}"], capture_output=True, text=True,
                           check=True)
        dt_s, rss_s, py_s = p.stdout.split()
        res["package"].append((float(dt_s), int(rss_s)))
        py_rss.append(int(py_s))
    base_t = statistics.median(t for t, _ in res["cli-file"])
    base_m = statistics.median(m for _, m in res["cli-file"])
    print(f"rows {n}, rounds {rounds}, load average {os.getloadavg()[0]:.1f}")
    for k, v in res.items():
        t = statistics.median(x for x, _ in v)
        m = statistics.median(y for _, y in v)
        print(f"{k:10s} time {t:7.2f} s ({t / base_t:.2f}x)  binary peak RSS {m / 1e6:7.1f} MB ({m / base_m:.2f}x)")
    print(f"package: the Python process's peak RSS {statistics.median(py_rss) / 1e6:.1f} MB "
          f"(it holds the {tbl.nbytes / 1e6:.1f} MB table, as a job that has the DataFrame does)")


if __name__ == "__main__":
    main()
