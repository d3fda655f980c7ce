#!/usr/bin/env bash
# The wheels the Python package's tests install next to pswap's own wheel
# (integration/python): pytest, mypy, pyarrow, pandas and Polars, pinned in
# integration/python/requirements.txt, downloaded once per machine into a
# folder that `pip install --no-index --find-links` installs from, so that
# the test's clean virtual environment needs no network.
#
#   scripts/pywheelhouse.sh     download (or reuse); prints the folder
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/pywheelhouse/<hash of the pins>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REQUIREMENTS=integration/python/requirements.txt
PYTHON="${PYTHON:-python3}"

log() { printf 'pywheelhouse.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v "$PYTHON" >/dev/null || die "$PYTHON not found: the Python package's tests need Python 3.9 or newer"
pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
key="$({
	cat "$REQUIREMENTS"
	echo "python $pyver"
} | sha256sum | cut -c1-16)"

download() {
	log "downloading the test wheels (Python $pyver) into $1"
	"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-input --only-binary=:all: \
		-r "$REQUIREMENTS" -d "$1" >&2 || die "pip download -r $REQUIREMENTS failed"
}

cached_install pywheelhouse "$key" download
