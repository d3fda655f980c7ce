"""One operation of one tool, in a process of its own, as a scheduled task
runs it: python one.py '<request JSON>' prints one JSON line

  {"ok": bool, "inner_s": seconds, "conflict": bool, "error": str, "result": ...}

inner_s times the operation alone, after the imports and the tool's
start-up (a Spark session); the caller times the whole process. A request
with "ops": [...] runs several operations at once on threads of this one
process (Spark's concurrent writers share one session, as a Spark job's
would); the result is then the list of their outcomes.
"""

import json
import sys
import threading
import time

import tools

# Words in an error that say the write lost a race (an optimistic
# concurrency check refused it), as opposed to a failure.
# delta-rs raises CommitFailedError, PyIceberg and Spark's Iceberg
# CommitFailedException (or ValidationException for a conflicting change).
CONFLICT_WORDS = ("commitfailed", "validationexception", "conflict", "concurrent")


def run(req):
    tool = tools.TOOLS[req["tool"]]
    fn = getattr(tool, req["op"])
    start = time.perf_counter()
    try:
        result = fn(req)
        return {"ok": True, "inner_s": time.perf_counter() - start, "conflict": False, "error": "", "result": result}
    except Exception as e:  # every outcome is reported, none raised
        msg = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
        low = (type(e).__name__ + " " + str(e)).lower()
        return {"ok": False, "inner_s": time.perf_counter() - start,
                "conflict": any(w in low for w in CONFLICT_WORDS), "error": msg[:400], "result": None}


def run_many(req):
    out = [None] * len(req["ops"])

    def one(i, r):
        out[i] = run(dict(req, **r))

    threads = [threading.Thread(target=one, args=(i, r)) for i, r in enumerate(req["ops"])]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"ok": all(o["ok"] for o in out), "inner_s": time.perf_counter() - start, "conflict": False,
            "error": "", "result": out}


def main():
    req = json.loads(sys.argv[1])
    if req.get("warm"):
        # Start the tool first (a Spark session) so that inner_s is the work alone.
        getattr(tools.TOOLS[req["tool"]], "session", lambda r: None)(req)
    res = run_many(req) if "ops" in req else run(req)
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
