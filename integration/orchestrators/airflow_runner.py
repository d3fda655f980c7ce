"""Runs an Airflow DAG with dag.test() for a list of data intervals, in one process.

    python airflow_runner.py RESULTS DAG_FILE DAG_ID DAY...

AIRFLOW_HOME must name an empty folder and AIRFLOW__CORE__DAGS_FOLDER the
DAG's folder. The metadata database (SQLite) is created first. Each DAY
(YYYY-MM-DD) is one run of the day's data interval [DAY, DAY+1), in order, as
a scheduled run would have it: a day given twice runs again with the same run
id, as a cleared run does. After each run one JSON line saying what
happened is appended to RESULTS (Airflow logs to stdout): the run's id, interval and state, and for each task its state, the
tries it took and the state of each try, and the load task's return value.
"""

import json
import sys
from datetime import date, datetime, time, timedelta, timezone

from airflow.models.taskinstancehistory import TaskInstanceHistory
from airflow.models.xcom import XComModel
from airflow.utils import db
from airflow.utils.session import create_session


def load_dag(path, dag_id):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=path)
    if bag.import_errors or dag_id not in bag.dags:
        raise SystemExit(f"cannot load DAG {dag_id} from {path}: {bag.import_errors}")
    return bag.dags[dag_id]


def report(dag, dr):
    with create_session() as s:
        tis = []
        for ti in dr.get_task_instances(session=s):
            earlier = s.query(TaskInstanceHistory).filter_by(
                dag_id=ti.dag_id, run_id=ti.run_id, task_id=ti.task_id).order_by(TaskInstanceHistory.try_number)
            tries = [str(h.state) for h in earlier] + [str(ti.state)]
            tis.append({"task": ti.task_id, "state": str(ti.state), "tries": tries})
        x = s.scalars(XComModel.get_many(run_id=dr.run_id, dag_ids=dag.dag_id, task_ids="load",
                                         key="return_value")).first()
        return {"run_id": dr.run_id, "start": dr.data_interval_start.isoformat(),
                "end": dr.data_interval_end.isoformat(), "state": str(dr.state), "tasks": tis,
                "load": XComModel.deserialize_value(x) if x is not None else None}


def main():
    results, path, dag_id, days = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    db.initdb()
    dag = load_dag(path, dag_id)
    for day in days:
        end = datetime.combine(date.fromisoformat(day) + timedelta(days=1), time(), timezone.utc)
        # A run like the scheduled one of [day, day+1): the same run id each time.
        dr = dag.test(logical_date=end, run_after=end)
        with open(results, "a") as f:
            f.write(json.dumps(report(dag, dr)) + "\n")


if __name__ == "__main__":
    main()
