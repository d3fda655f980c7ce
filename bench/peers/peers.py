"""pswap against delta-rs, PyIceberg, Spark and DuckDB: the same sales rows
replaced, backfilled and written concurrently by each tool, on a local
folder and on MinIO, and the correctness cases side by side. Prints a
Markdown report; exits non-zero when a tool's final table is not exactly
the rows it was given (a finding the report would otherwise hide) unless
the report says so for that tool and case. Run through peers.sh.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import sys
import time

import duckdb

import correctness
import report
from harness import Harness

TOOLS = ["pswap", "delta", "pyiceberg", "spark", "duckdb"]
DT = "2026-11-29"


def parse():
    a = argparse.ArgumentParser()
    a.add_argument("--pswap", required=True)
    a.add_argument("--salessql", required=True, help="the salessql binary (bench/cmd/salessql)")
    a.add_argument("--jars", required=True)
    a.add_argument("--work", required=True)
    a.add_argument("--proxy", default="", help="the counting proxy's endpoint (s3count)")
    a.add_argument("--bucket", default="pswap")
    a.add_argument("--rows", type=int, default=1_000_000)
    a.add_argument("--small", type=int, default=10_000, help="rows per partition of the backfill and the concurrent writers")
    a.add_argument("--partitions", type=int, default=100, help="partitions of the backfill")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--spark-rounds", type=int, default=1)
    a.add_argument("--writers", default="8,32")
    a.add_argument("--where", default="local,s3")
    a.add_argument("--tools", default=",".join(TOOLS))
    a.add_argument("--only", default="replace,backfill,concurrent,rerun,correctness")
    a.add_argument("--smoke", action="store_true", help="tiny sizes, one round: checks every tool's final table")
    args = a.parse_args()
    if args.smoke:
        args.rows, args.small, args.partitions, args.rounds, args.spark_rounds, args.writers = 2000, 100, 3, 1, 1, "2"
    return args


class Inputs:
    """The Parquet files every tool is fed, written once by DuckDB from the
    sales generator's query, and the exact (rows, sum(amount)) of each."""

    def __init__(self, args):
        d = os.path.join(args.work, "inputs")
        os.makedirs(d, exist_ok=True)
        import subprocess

        def sql(n):
            return subprocess.run([args.salessql, str(n)], check=True, capture_output=True, text=True).stdout

        con = duckdb.connect()
        self.a = os.path.join(d, "a.parquet")  # the replace rows
        self.b = os.path.join(d, "b.parquet")  # the same rows with amount + 1: other content
        self.small = os.path.join(d, "small.parquet")
        self.backfill = os.path.join(d, "backfill.parquet")  # with a dt column, args.partitions days
        self.backfill_hive = os.path.join(d, "backfill")  # the same rows as dt=... folders, for pswap
        con.execute("COPY (%s) TO '%s' (FORMAT parquet)" % (sql(args.rows), self.a))
        con.execute("COPY (SELECT * REPLACE (amount + 1 AS amount) FROM read_parquet('%s')) TO '%s' (FORMAT parquet)" % (self.a, self.b))
        con.execute("COPY (%s) TO '%s' (FORMAT parquet)" % (sql(args.small), self.small))
        n = args.small * args.partitions
        days = "strftime(DATE '%s' - CAST(id %% %d AS INTEGER), '%%Y-%%m-%%d')" % (DT, args.partitions)
        con.execute("COPY (SELECT *, %s AS dt FROM (%s)) TO '%s' (FORMAT parquet)" % (days, sql(n), self.backfill))
        shutil.rmtree(self.backfill_hive, ignore_errors=True)
        con.execute("COPY (SELECT * FROM read_parquet('%s')) TO '%s' (FORMAT parquet, PARTITION_BY (dt))" % (self.backfill, self.backfill_hive))
        self.dts = sorted(os.listdir(self.backfill_hive))
        self.dts = [x.split("=", 1)[1] for x in self.dts]
        self.sums = {}
        for name in ("a", "b", "small"):
            self.sums[name] = list(con.execute("SELECT count(*), round(sum(amount), 2) FROM read_parquet('%s')" % getattr(self, name)).fetchone())
        self.backfill_sums = {r[0]: [r[1], r[2]] for r in con.execute(
            "SELECT dt, count(*), round(sum(amount), 2) FROM read_parquet('%s') GROUP BY dt" % self.backfill).fetchall()}
        self.bytes = os.path.getsize(self.a)


class Run:
    """Where tables live and how each tool's request is made."""

    def __init__(self, args, h, inputs, rep):
        self.args, self.h, self.inp, self.rep = args, h, inputs, rep
        self.failures = []

    def table(self, section, tool, where):
        if where == "s3":
            return "s3://%s/peers/%s/%s" % (self.args.bucket, section, tool)
        p = os.path.join(self.args.work, "tables", section, tool)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def req(self, section, tool, where, op, **kw):
        r = {"tool": tool, "op": op, "table": self.table(section, tool, where),
             "catalog": os.path.join(self.args.work, "catalogs", "%s-%s-%s.db" % (section, tool, where))}
        os.makedirs(os.path.dirname(r["catalog"]), exist_ok=True)
        r.update(kw)
        if tool == "pswap" and op == "backfill":
            r["input"] = self.inp.backfill_hive  # the same rows as dt=... folders
        return r

    def must(self, res, what):
        if not res["ok"]:
            raise SystemExit("peers: %s failed: %s" % (what, res["error"]))
        return res

    def prepare(self, section, tool, where, seed=None):
        """An empty table (Iceberg catalogs declare it first) and, with
        seed, partition DT holding that input; untimed."""
        if tool in ("pyiceberg", "spark"):
            self.must(self.h.run(self.req(section, tool, where, "create", input=self.inp.a)), "%s create (%s)" % (tool, where))
        if seed:
            self.must(self.h.run(self.req(section, tool, where, "replace", dt=DT, input=seed, run_id="seed")),
                      "%s seed (%s)" % (tool, where))

    def read(self, section, tool, where):
        res = self.h.run(self.req(section, tool, where, "read"))
        return res

    def check(self, what, got, want):
        """Records a mismatch of a final table (got, from the tool's own
        reader) against the exact rows given."""
        if got != want:
            self.failures.append("%s: read %s, want %s" % (what, short(got), short(want)))
            return False
        return True

    def rounds(self, tool):
        return self.args.spark_rounds if tool == "spark" else self.args.rounds


def short(x):
    s = json.dumps(x, sort_keys=True)
    return s if len(s) < 200 else s[:200] + "..."


# ------------------------------------------------------------------ sections


def replace(run, where, tools):
    """One partition of args.rows rows replaced, rounds times per tool,
    rotating the order; the inputs alternate so every round changes content."""
    res = {t: [] for t in tools}
    reads = {}
    for t in tools:
        run.prepare("replace", t, where, seed=run.inp.a)
    nmax = max(run.rounds(t) for t in tools)
    for i in range(nmax):
        order = tools[i % len(tools):] + tools[:i % len(tools)]
        inp = run.inp.b if i % 2 == 0 else run.inp.a
        for t in order:
            if i >= run.rounds(t):
                continue
            r = run.h.run(run.req("replace", t, where, "replace", dt=DT, input=inp, run_id="r%d" % i))
            run.must(r, "%s replace (%s)" % (t, where))
            r["round"] = i
            res[t].append(r)
    for t in tools:
        last = run.inp.b if (run.rounds(t) - 1) % 2 == 0 else run.inp.a
        r = run.must(run.read("replace", t, where), "%s read (%s)" % (t, where))
        reads[t] = r
        run.check("replace %s %s" % (t, where), r["result"], {DT: run.inp.sums["a" if last == run.inp.a else "b"]})
    return res, reads


def backfill(run, where, tools):
    res, reads = {}, {}
    for t in tools:
        run.prepare("backfill", t, where)
        req = run.req("backfill", t, where, "backfill", input=run.inp.backfill, dts=run.inp.dts)
        res[t] = run.must(run.h.run(req), "%s backfill (%s)" % (t, where))
        reads[t] = r = run.must(run.read("backfill", t, where), "%s read (%s)" % (t, where))
        run.check("backfill %s %s" % (t, where), r["result"], run.inp.backfill_sums)
    return res, reads


def concurrent(run, where, tools, writers):
    """writers writers at once, each replacing its own partition of one
    table that already holds partition DT."""
    out = {}
    for t in tools:
        sec = "concurrent%d" % writers
        run.prepare(sec, t, where, seed=run.inp.small)
        dts = [(datetime.date(2026, 10, 1) + datetime.timedelta(days=i)).isoformat() for i in range(writers)]
        if t == "spark":
            # One Spark application, writers threads (one JVM per writer would not fit the machine).
            req = run.req(sec, t, where, "replace", ops=[{"dt": d, "input": run.inp.small} for d in dts], warm=True)
            r = run.h.run(req)
            outcomes = r["result"] or []
            wall = r["inner_s"]
        else:
            rs = run.h.run_many([run.req(sec, t, where, "replace", dt=d, input=run.inp.small, run_id="c-" + d) for d in dts])
            outcomes, wall, r = rs, rs[0]["wall_s"], rs[0]
        ok = sum(1 for o in outcomes if o["ok"])
        conflicts = sum(1 for o in outcomes if not o["ok"] and o["conflict"])
        errors = [o["error"] for o in outcomes if not o["ok"]]
        rd = run.must(run.read(sec, t, where), "%s read (%s)" % (t, where))
        want = {d: run.inp.sums["small"] for d, o in zip(dts, outcomes) if o["ok"]}
        want[DT] = run.inp.sums["small"]
        exact = run.check("concurrent %d %s %s" % (writers, t, where), rd["result"], want)
        out[t] = {"wall_s": wall, "ok": ok, "conflicts": conflicts, "failed": len(outcomes) - ok - conflicts,
                  "errors": errors, "exact": exact, "requests": r["counts"]["requests"], "writers": writers,
                  "rss": max(o.get("peak_rss", 0) for o in ([r] if t == "spark" else outcomes))}
    return out


def rerun(run, where, tools):
    """The replace section's last write run again with the same input and
    the same run id: what each tool writes for nothing new."""
    out = {}
    for t in tools:
        n = run.rounds(t) - 1
        inp = run.inp.b if n % 2 == 0 else run.inp.a
        before = folder_bytes(run.table("replace", t, where)) if where == "local" else 0
        r = run.must(run.h.run(run.req("replace", t, where, "replace", dt=DT, input=inp, run_id="r%d" % n)), "%s re-run" % t)
        after = folder_bytes(run.table("replace", t, where)) if where == "local" else 0
        out[t] = {"written": (after - before) if where == "local" else r["counts"]["bytes_up"],
                  "requests": r["counts"]["requests"], "outer_s": r["outer_s"], "inner_s": r["inner_s"]}
    return out


def folder_bytes(path):
    n = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                n += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return n


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    args = parse()
    os.makedirs(args.work, exist_ok=True)
    h = Harness(args.pswap, args.jars, args.proxy, args.work)
    t0 = time.time()
    inputs = Inputs(args)
    rep = report.Report(args, inputs)
    run = Run(args, h, inputs, rep)
    tools = [t for t in args.tools.split(",") if t]
    only = set(args.only.split(","))
    rep.header(platform.python_version(), load())
    for where in [w for w in args.where.split(",") if w]:
        if where == "s3" and not args.proxy:
            raise SystemExit("peers: --where s3 needs --proxy")
        rep.where(where, load())
        if "replace" in only or "rerun" in only:
            res, reads = replace(run, where, tools)
            rep.replace(where, res, reads)
            if "rerun" in only:
                rep.rerun(where, rerun(run, where, tools))
        if "backfill" in only:
            rep.backfill(where, *backfill(run, where, tools))
        if "concurrent" in only:
            rows = []
            for w in [int(x) for x in args.writers.split(",") if x]:
                rows.append(concurrent(run, where, tools, w))
            rep.concurrent(where, rows)
        if "correctness" in only:
            rep.correctness(where, correctness.run_all(run, where, tools))
    rep.footer(time.time() - t0, load(), run.failures)
    if run.failures:
        print("peers: %d final tables differ from the rows given (listed above)" % len(run.failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
