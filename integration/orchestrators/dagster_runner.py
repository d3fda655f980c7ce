"""Materializes the partitions of a Dagster job, in one process.

    python dagster_runner.py RESULTS DEFS_FILE JOB DAY...

DAGSTER_HOME must name an empty folder (the instance: SQLite storage). Each
DAY (a partition key) is one run of JOB for that partition, in order, with
the in-process executor; a day given a second time re-executes its first
run, as "re-execute all" in the UI does (the re-execution's root run is the
first). After each run one JSON line is appended to RESULTS (Dagster logs
to stderr): the run's id and root run id, its partition and status, each
step's tries (the outcome of each attempt), the assets it materialized with
their metadata, the asset checks' results, and the error of every failed
attempt and check.
"""

import importlib.util
import json
import sys

import dagster as dg

RESULTS, DEFS_FILE, JOB = sys.argv[1], sys.argv[2], sys.argv[3]
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}


def job():
    spec = importlib.util.spec_from_file_location("pswap_example", DEFS_FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.defs.resolve_job_def(JOB)


def report(instance, run_id):
    run = instance.get_run_by_id(run_id)
    steps, assets, checks, errors = {}, {}, {}, []
    for e in instance.all_logs(run_id):
        ev = e.dagster_event
        if ev is None:
            continue
        kind = ev.event_type_value
        if kind in ("STEP_UP_FOR_RETRY", "STEP_FAILURE", "STEP_SUCCESS"):
            steps.setdefault(ev.step_key, []).append(kind.removeprefix("STEP_").lower())
            if kind != "STEP_SUCCESS":
                errors.append(error_of(ev))
        elif kind == "ASSET_MATERIALIZATION":
            m = ev.event_specific_data.materialization
            assets[m.asset_key.to_user_string()] = {k: v.value for k, v in m.metadata.items()}
        elif kind == "ASSET_CHECK_EVALUATION":
            c = ev.event_specific_data
            checks[c.check_name] = c.passed
            if not c.passed:
                errors.append(c.metadata["error"].value)
    return {"run_id": run_id, "root_run_id": run.root_run_id, "partition": run.tags.get("dagster/partition"),
            "status": run.status.value, "steps": steps, "assets": assets, "checks": checks,
            "errors": errors}


def error_of(ev):
    """The message of a step's failure: the exception's (for an retry, the one it retries)."""
    data = ev.event_specific_data
    err = getattr(data, "error", None)
    while err is not None and err.cause is not None and "pswap" not in err.message:
        err = err.cause
    return err.message.strip() if err is not None else ""


def main():
    instance = dg.DagsterInstance.get()
    recon = dg.reconstructable(job)
    first = {}
    for day in sys.argv[4:]:
        if day in first:
            opts = dg.ReexecutionOptions(parent_run_id=first[day])
            result = dg.execute_job(recon, instance, run_config=IN_PROCESS, tags={"dagster/partition": day},
                                    reexecution_options=opts)
        else:
            result = dg.execute_job(recon, instance, run_config=IN_PROCESS, tags={"dagster/partition": day})
            first[day] = result.run_id
        with open(RESULTS, "a") as f:
            f.write(json.dumps(report(instance, result.run_id)) + "\n")


if __name__ == "__main__":
    main()
