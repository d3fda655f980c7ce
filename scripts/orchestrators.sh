#!/usr/bin/env bash
# The orchestrators that run pswap's examples (integration/orchestrators):
# a Python virtual environment with Apache Airflow 3 and Dagster, every
# dependency pinned, installed once per machine and reused while the pins
# are unchanged. Airflow pins much of what it depends on, so this is an
# environment of its own, not the engines' (scripts/engines.sh).
#
#   scripts/orchestrators.sh    install (or reuse); prints the folder
#
# The folder holds venv/. Tests find it through $PSWAP_ORCHESTRATORS, which
# scripts/test.sh sets from this script's output.
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/orchestrators/<hash of the pins>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REQUIREMENTS=integration/orchestrators/requirements.txt
PYTHON="${PYTHON:-python3}"

log() { printf 'orchestrators.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v "$PYTHON" >/dev/null || die "$PYTHON not found: Airflow 3 and Dagster need Python 3.10 or newer"

pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
key="$({
	cat "$REQUIREMENTS"
	printf '%s\n' "python $pyver"
} | sha256sum | cut -c1-16)"

install() {
	local dir="$1"
	log "creating the Python environment (Python $pyver) in $dir"
	"$PYTHON" -m venv "$dir/venv"
	# --no-deps: the file pins every package, so nothing is resolved anew.
	"$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps -r "$REQUIREMENTS" >&2 ||
		die "pip install -r $REQUIREMENTS failed"
	"$dir/venv/bin/pip" check >&2 || die "the environment in $dir has broken requirements"
	"$dir/venv/bin/python" -c 'import airflow.sdk, dagster' ||
		die "the environment in $dir does not import Airflow and Dagster"
}

cached_install orchestrators "$key" install
