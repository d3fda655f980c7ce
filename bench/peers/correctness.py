"""The correctness cases of pswap's own tests, run against every tool with
the same harness; each outcome is what the tool's own reader shows after
the case, named against the inputs' exact rows:

  retry   the same write run twice (its reply was lost, the task retried)
  killed  a writer killed (SIGKILL) in the middle of its write (start-up
          plus half its own time, measured on a table of its own), then re-run
  race    two writers with different rows on one partition at once
  zombie  an old writer paused mid-write (SIGSTOP), a newer one replaces
          the partition, then the old one resumes and finishes

Each case starts from a table whose partition DT holds the small input.
"""

import signal

DT = "2026-11-29"


def name_state(run, got):
    """Which input the partition holds: a, b, small, or what it holds."""
    part = (got or {}).get(DT)
    for name in ("a", "b", "small"):
        if part == run.inp.sums[name]:
            return name
    if part is None:
        return "no partition"
    return "MIXED %d rows" % part[0]


def state(run, sec, tool, where):
    r = run.read(sec, tool, where)
    if not r["ok"]:
        return "UNREADABLE (%s)" % r["error"][:120]
    others = sorted(k for k in r["result"] if k != DT)
    s = name_state(run, r["result"])
    return s + (" + partitions %s" % others if others else "")


def writer(o):
    if o["ok"]:
        return "ok"
    if o.get("signalled") and o.get("exit") not in (0, 3):
        return "killed"
    return "refused" if o["conflict"] else "failed: " + o["error"][:100]


_mid = {}


def midpoint(run, tool, where):
    """Seconds after its start at which a write of input b by tool is in
    the middle of its work: start-up plus half the tool's own time, from a
    measured write of a table of its own."""
    if (tool, where) not in _mid:
        run.prepare("probe", tool, where, seed=run.inp.small)
        r = run.must(run.h.run(run.req("probe", tool, where, "replace", dt=DT, input=run.inp.b, run_id="probe")), "probe")
        _mid[tool, where] = max(0.05, (r["outer_s"] - r["inner_s"]) + r["inner_s"] / 2)
    return _mid[tool, where]


def run_all(run, where, tools):
    out = {}
    for t in tools:
        out[t] = {}
        for case in (retry, killed, race, zombie):
            sec = "c-%s" % case.__name__
            run.prepare(sec, t, where, seed=run.inp.small)
            out[t][case.__name__] = case(run, sec, t, where)
    return out


def retry(run, sec, t, where):
    req = run.req(sec, t, where, "replace", dt=DT, input=run.inp.a, run_id="retry-1")
    first = run.h.run(req)
    second = run.h.run(req)
    wrote = second["counts"]["bytes_up"] if where == "s3" else None
    return {"writers": "%s, %s" % (writer(first), writer(second)), "final": state(run, sec, t, where),
            "want": "a", "second_bytes_up": wrote}


def killed(run, sec, t, where):
    mid = midpoint(run, t, where)
    req = run.req(sec, t, where, "replace", dt=DT, input=run.inp.b, run_id="killed-1")
    o = run.h.signal_at(req, mid, signal.SIGKILL)
    after_kill = state(run, sec, t, where)
    again = run.h.run(req)
    return {"writers": "%s, re-run %s" % (writer(o), writer(again)), "after_kill": after_kill,
            "final": state(run, sec, t, where), "want": "small or b after the kill, b after the re-run"}


def race(run, sec, t, where):
    a, b = run.h.run_many([
        run.req(sec, t, where, "replace", dt=DT, input=run.inp.a, run_id="race-a"),
        run.req(sec, t, where, "replace", dt=DT, input=run.inp.b, run_id="race-b"),
    ])
    return {"writers": "a %s, b %s" % (writer(a), writer(b)), "final": state(run, sec, t, where),
            "want": "a or b whole; a writer whose rows are not there is told"}


def zombie(run, sec, t, where):
    mid = midpoint(run, t, where)
    # The old writer brings b and is paused mid-write; the newer one brings a.
    old = run.req(sec, t, where, "replace", dt=DT, input=run.inp.b, run_id="zombie-old")
    new = run.req(sec, t, where, "replace", dt=DT, input=run.inp.a, run_id="zombie-new")
    o, n = run.h.signal_at(old, mid, signal.SIGSTOP, between=lambda: run.h.run(new))
    return {"writers": "old %s, new %s" % (writer(o), writer(n) if n else "n/a"), "final": state(run, sec, t, where),
            "want": "a (the newer write); the old writer refused"}
