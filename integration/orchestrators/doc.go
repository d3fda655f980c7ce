// Package orchestrators runs the examples in examples/airflow and
// examples/dagster under the real orchestrators, Apache Airflow 3 and
// Dagster, with the pswap binary built from this tree on their PATH, on a
// file:// table and on MinIO.
//
// Each suite runs one orchestrator process per store (Airflow's dag.test()
// for each logical date, Dagster's materialize for each partition) over
// five days, with a store that fails one attempt (MinIO behind the fault
// proxy: the retry survives it), a pswap killed midway (the retry commits),
// a bad input (fails once, never retried), on MinIO a sixth day that
// another run commits while the task uploads (exit 3: fails once, the
// other run's rows stay), and the five days run a second time (nothing
// uploaded, no notification). The tests read back what the
// orchestrator recorded (task states and tries, exit codes), the
// notifications the examples sent, and the rows of every partition through
// DuckDB.
//
// The orchestrators come from the virtual environment scripts/orchestrators.sh
// installs (pinned in requirements.txt); $PSWAP_ORCHESTRATORS names it, or
// the tests run the script. DuckDB comes from the engines' environment
// (scripts/engines.sh, $PSWAP_ENGINES). An orchestrator that cannot start
// fails the tests: it never skips them.
//
// The package holds tests only.
package orchestrators
