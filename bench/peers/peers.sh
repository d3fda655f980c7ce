#!/usr/bin/env bash
# pswap against delta-rs, PyIceberg, Spark and DuckDB on the same sales rows,
# on a local folder and on MinIO (through a counting proxy): prints the
# Markdown report that BENCHMARKS.md's "pswap and the alternatives" records.
#
#   bench/peers/peers.sh [peers.py flags]      the report (1M rows, 3 rounds)
#   bench/peers/peers.sh --smoke               tiny sizes: every tool's final table checked
#   bench/peers/peers.sh plan [--partitions N] planning time and requests of Spark, PyIceberg
#                                              and DuckDB on a pswap table of N partitions
#                                              against the same rows written by Spark (plan.py);
#                                              the Spark-written table is cached (see below)
#   bench/peers/peers.sh install               install (or reuse) the tools; prints the venv
#
# peers.py's flags: --rows, --rounds, --spark-rounds, --writers 8,32,
# --where local,s3, --tools pswap,delta,pyiceberg,spark,duckdb,
# --only replace,backfill,concurrent,rerun,correctness. PSWAP_PEERS_OUT also
# writes the report to that file. A MinIO of its own is started and stopped.
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/peers/<hash of the pins>;
# Spark's Iceberg jars come from scripts/engines.sh. plan keeps the Spark-written
# table of each size in ${PSWAP_CACHE:-...}/peers/plan (PSWAP_PLAN_CACHE= turns it off).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

REQUIREMENTS=bench/peers/requirements.txt
PYTHON="${PYTHON:-python3}"
log() { printf 'peers.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

install_venv() {
	local dir="$1"
	log "creating the Python environment (Python $pyver) in $dir"
	"$PYTHON" -m venv "$dir/venv"
	(cd bench/peers && "$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r requirements.txt) >&2 ||
		die "pip install -r $REQUIREMENTS failed"
	"$dir/venv/bin/python" -c 'import deltalake, pyiceberg, pyspark, duckdb, polars, sqlalchemy, psutil' ||
		die "the environment in $dir does not import its tools"
}

install() {
	local key dir
	pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
	key="$(cat "$REQUIREMENTS" integration/engines/requirements.txt <(echo "python $pyver") | sha256sum | cut -c1-16)"
	dir="$(cached_install peers "$key" install_venv)" || exit 1
	echo "$dir/venv"
}

venv="$(install)"
if [[ "${1:-}" == "install" ]]; then
	exit 0
fi
engines="$(scripts/engines.sh)"

work="$(mktemp -d "${TMPDIR:-/tmp}/pswap-peers.XXXXXX")"
envfile=""
proxy_pid=""
cleanup() {
	if [[ -n "$proxy_pid" ]]; then kill "$proxy_pid" 2>/dev/null || true; fi
	if [[ -n "$envfile" ]]; then scripts/minio.sh stop "$envfile" >/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

log "building pswap, s3count and salessql"
go build -o "$work/bin/pswap" ./cmd/pswap
go build -o "$work/bin/s3count" ./bench/cmd/s3count
go build -o "$work/bin/salessql" ./bench/cmd/salessql

scripts/minio.sh build >/dev/null
envfile="$(scripts/minio.sh start "$work/minio.env")"
set -a
# shellcheck disable=SC1090
. "$envfile"
set +a
"$work/bin/s3count" -upstream "$AWS_ENDPOINT_URL" >"$work/proxy.addr" &
proxy_pid=$!
for _ in $(seq 100); do [[ -s "$work/proxy.addr" ]] && break; sleep 0.05; done
proxy="$(head -n1 "$work/proxy.addr")"
[[ -n "$proxy" ]] || die "the counting proxy did not start"
# Every tool reaches MinIO through the proxy.
export AWS_ENDPOINT_URL="$proxy"

out="${PSWAP_PEERS_OUT:-/dev/null}"
script=peers.py
extra=()
if [[ "${1:-}" == "plan" ]]; then
	script=plan.py
	shift
	extra=(--cache "${PSWAP_PLAN_CACHE-${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/peers/plan}")
fi
"$venv/bin/python" "bench/peers/$script" --pswap "$work/bin/pswap" --salessql "$work/bin/salessql" \
	--jars "$engines/jars" --work "$work/run" --proxy "$proxy" --bucket "${MINIO_BUCKET:-pswap}" "${extra[@]}" "$@" | tee "$out"
