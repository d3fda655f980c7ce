#!/usr/bin/env bash
# fake-gcs-server for pswap's tests: a Go program, installed from its pinned
# module version into the cache, started on a free loopback port with a
# fresh data folder per run.
#
#   scripts/fakegcs.sh build            install (or reuse) the pinned fake-gcs-server; prints its path
#   scripts/fakegcs.sh start [ENVFILE]  start a server with an empty bucket "pswap"
#                                       (or $FAKEGCS_BUCKET); prints the env file path
#   scripts/fakegcs.sh stop ENVFILE     stop that server and remove its data
#
# The env file (mode 0600) sets STORAGE_EMULATOR_HOST (the variable the GCS
# client libraries, gcsfs and pswap's gcsstore read), PSWAP_TEST_GCS=1,
# FAKEGCS_PID, FAKEGCS_DATA_DIR, FAKEGCS_STATE_DIR and FAKEGCS_LOG. Load it with
#   set -a; . "$ENVFILE"; set +a
# The emulator takes no credentials: there is no secret to keep out of output.
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/fakegcs/<version>/fake-gcs-server
set -euo pipefail

FAKEGCS_MODULE=github.com/fsouza/fake-gcs-server
FAKEGCS_VERSION=v1.56.1
CACHE_DIR="${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/fakegcs/$FAKEGCS_VERSION"
FAKEGCS_BIN="$CACHE_DIR/fake-gcs-server"
START_TIMEOUT="${FAKEGCS_START_TIMEOUT:-60}"
BUCKET="${FAKEGCS_BUCKET:-pswap}"

log() { printf 'fakegcs.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# binary_ok reports whether $FAKEGCS_BIN exists and was built from the pinned version.
binary_ok() {
	[[ -x "$FAKEGCS_BIN" ]] || return 1
	go version -m "$FAKEGCS_BIN" 2>/dev/null |
		awk -v m="$FAKEGCS_MODULE" -v v="$FAKEGCS_VERSION" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

cmd_build() {
	if binary_ok; then
		echo "$FAKEGCS_BIN"
		return 0
	fi
	mkdir -p "$CACHE_DIR"
	exec 9>"$CACHE_DIR/.build.lock"
	flock 9
	if binary_ok; then
		echo "$FAKEGCS_BIN"
		return 0
	fi
	local tmp start
	tmp="$(mktemp -d "$CACHE_DIR/.build.XXXXXX")"
	start=$SECONDS
	log "installing fake-gcs-server $FAKEGCS_VERSION from source"
	if ! (cd "$tmp" && GOBIN="$tmp/bin" GOFLAGS="" GOWORK=off CGO_ENABLED=0 \
		go install -gcflags=all=-dwarf=false -ldflags="-s -w" "$FAKEGCS_MODULE@$FAKEGCS_VERSION") >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/build.log" >&2
		rm -rf "$tmp"
		die "fake-gcs-server build failed"
	fi
	mv -f "$tmp/bin/fake-gcs-server" "$FAKEGCS_BIN"
	rm -rf "$tmp"
	log "built fake-gcs-server in $((SECONDS - start))s: $FAKEGCS_BIN"
	echo "$FAKEGCS_BIN"
}

# create_bucket URL BUCKET makes an empty bucket (JSON API insert) and
# prints the HTTP status (000: no answer).
create_bucket() {
	curl -sS -o /dev/null -w '%{http_code}' --max-time 10 \
		-H 'Content-Type: application/json' -d "{\"name\":\"$2\"}" \
		"$1/storage/v1/b?project=pswap" 2>/dev/null
}

cmd_start() {
	[[ -x "$FAKEGCS_BIN" ]] || die "fake-gcs-server is not built: run '$0 build' first"
	local state envfile data logf port pid
	state="$(mktemp -d "${TMPDIR:-/tmp}/pswap-fakegcs.XXXXXX")"
	chmod 700 "$state"
	envfile="${1:-$state/env}"
	data="$state/data"
	logf="$state/fakegcs.log"
	mkdir -p "$data"
	port="$(free_port)"

	# -external-url: the resumable upload sessions it hands out point back
	# at this port. setsid: its own process group (see minio.sh).
	setsid "$FAKEGCS_BIN" -scheme http -host 127.0.0.1 -port "$port" \
		-external-url "http://127.0.0.1:$port" -public-host "127.0.0.1:$port" \
		-backend filesystem -filesystem-root "$data" -log-level warn \
		>"$logf" 2>&1 </dev/null &
	pid=$!

	(
		umask 077
		cat >"$envfile" <<EOT
STORAGE_EMULATOR_HOST=127.0.0.1:$port
PSWAP_TEST_GCS=1
FAKEGCS_PID=$pid
FAKEGCS_DATA_DIR=$data
FAKEGCS_STATE_DIR=$state
FAKEGCS_LOG=$logf
EOT
	)

	await_server fake-gcs-server "$pid" "$logf" "$envfile" "" \
		"fake-gcs-server is up on 127.0.0.1:$port (pid $pid); created bucket $BUCKET (gs://$BUCKET/...)" \
		create_bucket "http://127.0.0.1:$port" "$BUCKET"
}

cmd_stop() {
	stop_server "${1:?usage: $0 stop ENVFILE}" FAKEGCS "fake-gcs-server" -filesystem-root
}

case "${1:-}" in
build) cmd_build ;;
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
path) echo "$FAKEGCS_BIN" ;;
version) echo "$FAKEGCS_VERSION" ;;
*)
	echo "usage: $0 build | start [ENVFILE] | stop ENVFILE | path | version" >&2
	exit 2
	;;
esac
