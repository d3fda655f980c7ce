#!/usr/bin/env bash
# The engines that judge pswap's tables (integration/engines): a Python
# virtual environment with PyIceberg, DuckDB and its iceberg/httpfs/avro/
# delta extension packages, delta-rs (deltalake), Polars, PySpark, adlfs, and
# the Iceberg and Delta Lake jars Spark loads, all pinned, installed once
# per machine and reused while their pins are unchanged.
#
#   scripts/engines.sh        install (or reuse); prints the engines folder
#
# The folder holds venv/ (the Python environment) and jars/ (the Iceberg
# Spark runtime, the Iceberg AWS bundle for S3FileIO, delta-spark and
# delta-storage). Tests find it
# through $PSWAP_ENGINES, which scripts/test.sh sets from this script's
# output. Java comes from $JAVA_HOME or the java on PATH (17 or newer).
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/engines/<hash of the pins>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REQUIREMENTS=integration/engines/requirements.txt
ICEBERG_VERSION=1.12.0
# Delta Lake for Spark 4.1 (delta-spark 4.1 is built on Spark 4.1.0).
DELTA_VERSION=4.1.0
JARS=(
	"org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:$ICEBERG_VERSION"
	"org.apache.iceberg:iceberg-aws-bundle:$ICEBERG_VERSION"
	"org.xerial:sqlite-jdbc:3.50.3.0"
	"org.postgresql:postgresql:42.7.14"
	"io.delta:delta-spark_2.13:$DELTA_VERSION"
	"io.delta:delta-storage:$DELTA_VERSION"
)
PYTHON="${PYTHON:-python3}"

log() { printf 'engines.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v "$PYTHON" >/dev/null || die "$PYTHON not found: the engines need Python 3.10 or newer"
command -v mvn >/dev/null || die "mvn not found: Spark's Iceberg jars come from Maven"

pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
key="$({
	cat "$REQUIREMENTS"
	printf '%s\n' "python $pyver" "${JARS[@]}"
} | sha256sum | cut -c1-16)"

install() {
	local dir="$1"
	mkdir -p "$dir/jars"
	log "creating the Python environment (Python $pyver) in $dir"
	"$PYTHON" -m venv "$dir/venv"
	"$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$REQUIREMENTS" >&2 ||
		die "pip install -r $REQUIREMENTS failed"
	"$dir/venv/bin/python" -c 'import pyiceberg, duckdb, pyspark, duckdb_extension_iceberg, deltalake, polars, duckdb_extension_delta, duckdb_extension_azure, adlfs, gcsfs' ||
		die "the environment in $dir does not import its engines"

	log "fetching the Iceberg jars"
	local jar
	for jar in "${JARS[@]}"; do
		maven -q -B -Dstyle.color=never --no-transfer-progress dependency:copy -Dartifact="$jar" -DoutputDirectory="$dir/jars" -Dtransitive=false >&2 ||
			die "could not fetch $jar from Maven"
	done
}

cached_install engines "$key" install
