"""Runs one tool operation as its own process and measures it: wall time
with start-up, the tool's own time (inner), peak RSS of the process tree,
and the requests and bytes the counting proxy saw meanwhile.

pswap runs as its CLI; every other tool as one.py in the peers' Python.
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))


class Harness:
    def __init__(self, pswap, jars, proxy, work):
        self.pswap = pswap
        self.jars = jars
        self.proxy = proxy
        self.work = work

    # ------------------------------------------------------------ counts

    def counts(self):
        if not self.proxy:
            return {"requests": 0, "ops": {}, "bytes_up": 0, "bytes_down": 0}
        with urllib.request.urlopen(self.proxy + "/-/counts") as r:
            return json.load(r)

    @staticmethod
    def diff(after, before):
        ops = {k: v - before["ops"].get(k, 0) for k, v in after["ops"].items() if v != before["ops"].get(k, 0)}
        return {"requests": after["requests"] - before["requests"], "ops": ops,
                "bytes_up": after["bytes_up"] - before["bytes_up"], "bytes_down": after["bytes_down"] - before["bytes_down"]}

    # ------------------------------------------------------------ commands

    def command(self, req):
        """The argv of a request: the pswap CLI for pswap's writes, one.py
        for everything else."""
        if req["tool"] == "pswap" and req["op"] in ("replace", "backfill"):
            argv = [self.pswap, "commit", "--json", "--table", req["table"]]
            if req["op"] == "replace":
                argv += ["--partition", "dt=" + req["dt"]]
            else:
                argv += ["--partitioned", req["input"]]
            argv += ["--run-id", req.get("run_id", "")]
            if req["op"] == "replace":
                argv.append(req["input"])
            return argv
        r = dict(req, jars=self.jars)
        return [sys.executable, os.path.join(HERE, "one.py"), json.dumps(r)]

    def start(self, req):
        return subprocess.Popen(self.command(req), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    @staticmethod
    def outcome(req, proc, out, err):
        """One result dict from a finished process."""
        if req["tool"] == "pswap" and req["op"] in ("replace", "backfill"):
            doc = {}
            try:
                doc = json.loads(out) if out.strip() else {}
            except ValueError:
                pass
            ok = proc.returncode == 0
            msg = ""
            if not ok:
                try:
                    msg = json.loads(err[err.index("{"):])["error"]["message"]
                except (ValueError, KeyError, IndexError):
                    msg = err.strip()[-300:]
            return {"ok": ok, "inner_s": None, "conflict": proc.returncode == 3, "error": msg,
                    "result": doc, "exit": proc.returncode}
        try:
            res = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            res = {"ok": False, "inner_s": None, "conflict": False, "result": None,
                   "error": "no result (exit %s): %s" % (proc.returncode, err.strip()[-300:])}
        res["exit"] = proc.returncode
        return res

    def run(self, req):
        """Runs a request to completion and measures it."""
        return self.run_many([req])[0]

    def run_many(self, reqs):
        """Starts every request at once, waits for all; each result carries
        its own wall time and peak RSS; "wall_s" of the first is the wall
        time of the whole batch."""
        before = self.counts()
        start = time.perf_counter()
        procs = [self.start(r) for r in reqs]
        peaks = [0] * len(procs)
        ends = [None] * len(procs)
        outs = [None] * len(procs)
        readers = [ProcReader(p) for p in procs]
        while any(e is None for e in ends):
            for i, p in enumerate(procs):
                if ends[i] is not None:
                    continue
                peaks[i] = max(peaks[i], tree_rss(p.pid))
                if p.poll() is not None:
                    ends[i] = time.perf_counter()
                    outs[i] = readers[i].result()
            time.sleep(0.02)
        wall = time.perf_counter() - start
        counts = self.diff(self.counts(), before)
        results = []
        for i, r in enumerate(reqs):
            res = self.outcome(r, procs[i], *outs[i])
            res.update(outer_s=ends[i] - start, peak_rss=peaks[i], wall_s=wall, counts=counts)
            if res.get("inner_s") is None:
                res["inner_s"] = res["outer_s"]  # a Go binary: start-up is a few ms
            results.append(res)
        print("peers: %s %s %s x%d: %.2fs%s" % (reqs[0]["tool"], reqs[0]["op"], reqs[0]["table"], len(reqs), wall,
                                              "" if all(r["ok"] for r in results) else " (not all ok)"),
              file=sys.stderr, flush=True)
        return results

    def signal_at(self, req, delay, sig, between=None):
        """Starts req, sends sig to its process group after delay seconds;
        for SIGSTOP runs between() and then resumes it. Returns the
        outcome (the killed process's is ok=False)."""
        p = self.start(req)
        rd = ProcReader(p)
        time.sleep(delay)
        alive = p.poll() is None
        if alive:
            os.killpg(p.pid, sig)
        if sig == signal.SIGSTOP:
            other = between() if between else None
            if alive:
                os.killpg(p.pid, signal.SIGCONT)
            p.wait()
            return dict(self.outcome(req, p, *rd.result()), signalled=alive), other
        p.wait()
        return dict(self.outcome(req, p, *rd.result()), signalled=alive)


class ProcReader:
    """Drains a process's pipes on threads (so it never blocks on a full
    pipe) and hands back (stdout, stderr) once it exited."""

    def __init__(self, p):
        import threading

        self.p = p
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=lambda f=f, b=b: b.append(f.read()), daemon=True)
                        for f, b in ((p.stdout, self.out), (p.stderr, self.err))]
        for t in self.threads:
            t.start()

    def result(self):
        self.p.wait()
        for t in self.threads:
            t.join()
        return "".join(self.out), "".join(self.err)


def tree_rss(pid):
    """RSS of a process and all its descendants (a Spark driver's JVM), in bytes."""
    try:
        p = psutil.Process(pid)
        procs = [p] + p.children(recursive=True)
    except psutil.Error:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.Error:
            pass
    return total
