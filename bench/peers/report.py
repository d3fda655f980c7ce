"""The Markdown report of peers.py: one table per section and place, every
time as median (min–max) over rounds, every ratio against pswap taken
within the same round."""

import importlib.metadata
import statistics
import subprocess


def spread(xs, fmt="%.2f"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    if len(xs) == 1:
        return fmt % xs[0]
    return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(xs), min(xs), max(xs))


def mib(b):
    return "%.1f" % (b / (1 << 20))


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def versions(pswap):
    v = {}
    for pkg in ("deltalake", "pyiceberg", "pyspark", "duckdb", "pyarrow", "polars"):
        try:
            v[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            v[pkg] = "absent"
    v["pswap"] = subprocess.run([pswap, "version"], capture_output=True, text=True).stdout.strip().splitlines()[0:1]
    v["pswap"] = v["pswap"][0] if v["pswap"] else "unknown"
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    except (OSError, IndexError):
        java = "unknown"
    v["java"] = java
    return v


class Report:
    def __init__(self, args, inputs):
        self.args, self.inp = args, inputs
        self.parts = []

    def w(self, s):
        """Adds to the report and prints it at once, so that a run stopped
        midway still shows the sections it finished."""
        self.parts.append(s)
        print(s, flush=True)

    def text(self):
        return "\n".join(self.parts)

    def header(self, python, load):
        import os

        v = versions(self.args.pswap)
        self.w("# pswap and the alternatives\n")
        self.w("Machine: %d CPUs, load average at start %s. Python %s; %s." % (os.cpu_count(), load, python, v["java"]))
        self.w("Versions: " + ", ".join("%s %s" % (k, v[k]) for k in ("pswap", "deltalake", "pyiceberg", "pyspark", "duckdb", "pyarrow")) + ".")
        self.w("Rows: replace %d rows (%s MiB of Parquet); backfill %d partitions of %d rows; concurrent writers %d rows each. "
               "Rounds: %d (Spark %d).\n" % (self.args.rows, mib(self.inp.bytes), self.args.partitions, self.args.small,
                                              self.args.small, self.args.rounds, self.args.spark_rounds))

    def where(self, where, load):
        self.w("\n## %s (load average %s)\n" % ("MinIO through the counting proxy" if where == "s3" else "Local folder", load))

    def replace(self, where, res, reads):
        base = {r["round"]: r for r in res.get("pswap", [])}
        rows = []
        for t, rs in res.items():
            def ratio(key):
                return spread([r[key] / base[r["round"]][key] for r in rs if r["round"] in base])
            rows.append([
                t, spread([r["inner_s"] for r in rs]), ratio("inner_s"), spread([r["outer_s"] for r in rs]), ratio("outer_s"),
                spread([r["peak_rss"] / (1 << 20) for r in rs], "%.0f"),
                spread([r["counts"]["requests"] for r in rs], "%.0f") if where == "s3" else "–",
                spread([r["counts"]["bytes_up"] / (1 << 20) for r in rs], "%.1f") if where == "s3" else "–",
                "%.2f" % reads[t]["outer_s"],
            ])
        self.w("### Replace one partition of %d rows\n" % self.args.rows)
        self.w(table(["tool", "tool's own s", "x pswap", "with start-up s", "x pswap", "peak RSS MiB", "requests", "MiB up", "read back s"], rows))

    def rerun(self, where, res):
        rows = [[t, mib(r["written"]), r["requests"] if where == "s3" else "–", "%.2f" % r["outer_s"]] for t, r in res.items()]
        self.w("### The same write again (same input, same run id)\n")
        self.w(table(["tool", "MiB written" + (" (uploaded)" if where == "s3" else " (folder growth)"), "requests", "s with start-up"], rows))

    def backfill(self, where, res, reads):
        base = res.get("pswap")
        rows = [[t, "%.2f" % r["inner_s"], "%.2f" % (r["inner_s"] / base["inner_s"]) if base else "n/a",
                 "%.2f" % r["outer_s"], "%.0f" % (r["peak_rss"] / (1 << 20)),
                 r["counts"]["requests"] if where == "s3" else "–", "%.2f" % reads[t]["outer_s"]] for t, r in res.items()]
        self.w("### Backfill: %d partitions in one run\n" % self.args.partitions)
        self.w(table(["tool", "tool's own s", "x pswap", "with start-up s", "peak RSS MiB", "requests", "read back s"], rows))

    def concurrent(self, where, runs):
        rows = []
        for by_tool in runs:
            for t, r in by_tool.items():
                rows.append([r["writers"], t, "%.2f" % r["wall_s"], "%.1f" % (r["ok"] / r["wall_s"]), r["ok"], r["conflicts"], r["failed"],
                             "yes" if r["exact"] else "NO", r["requests"] if where == "s3" else "–",
                             "; ".join(sorted(set(e[:90] for e in r["errors"])))[:200]])
        self.w("### Concurrent writers, each replacing its own partition of one table\n")
        self.w(table(["writers", "tool", "wall s", "commits/s", "committed", "refused (conflict)", "failed", "final table exact", "requests", "errors"], rows))
        self.w("Each writer is its own process started at once (wall time includes start-up), "
               "except Spark: one application, one thread per writer (wall time after the session started).\n")

    def correctness(self, where, res):
        rows = []
        for t, cases in res.items():
            for case, o in cases.items():
                extra = o.get("after_kill")
                rows.append([t, case, o["writers"], ("after kill: %s; " % extra if extra else "") + "final: " + o["final"],
                             o["want"], "" if o.get("second_bytes_up") is None else mib(o["second_bytes_up"])])
        self.w("### Correctness, side by side\n")
        self.w(table(["tool", "case", "writers' outcome", "table after", "expected", "retry MiB up"], rows))

    def footer(self, seconds, load, failures):
        self.w("\nTotal %.0f s; load average at the end %s." % (seconds, load))
        if failures:
            self.w("\n**Final tables that differ from the rows given:**\n")
            for f in failures:
                self.w("- " + f)
