#!/usr/bin/env bash
# MinIO for pswap's tests: built from source (no binaries are published),
# started on free loopback ports with fresh random credentials per run.
#
#   scripts/minio.sh build            build (or reuse) the pinned MinIO; prints its path
#   scripts/minio.sh start [ENVFILE]  start a server with an empty bucket "pswap"
#                                     (or $MINIO_BUCKET); prints the env file path
#   scripts/minio.sh stop ENVFILE     stop that server and remove its data
#
# The env file (mode 0600) sets AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY, AWS_REGION, PSWAP_TEST_S3=1, MINIO_PID,
# MINIO_DATA_DIR, MINIO_STATE_DIR and MINIO_LOG. Load it with
#   set -a; . "$ENVFILE"; set +a
# Nothing here prints the secret key.
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/minio/<version>/minio
set -euo pipefail

MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
CACHE_DIR="${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/minio/$MINIO_VERSION"
MINIO_BIN="$CACHE_DIR/minio"
START_TIMEOUT="${MINIO_START_TIMEOUT:-60}"
# The bucket every started server has, for walkthroughs (tests make their own).
BUCKET="${MINIO_BUCKET:-pswap}"

log() { printf 'minio.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# binary_ok reports whether $MINIO_BIN exists and was built from the pinned version.
binary_ok() {
	[[ -x "$MINIO_BIN" ]] || return 1
	go version -m "$MINIO_BIN" 2>/dev/null |
		awk -v m="$MINIO_MODULE" -v v="$MINIO_VERSION" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

cmd_build() {
	if binary_ok; then
		echo "$MINIO_BIN"
		return 0
	fi
	mkdir -p "$CACHE_DIR"
	# One build at a time per cache: a second caller waits and reuses it.
	exec 9>"$CACHE_DIR/.build.lock"
	flock 9
	if binary_ok; then
		echo "$MINIO_BIN"
		return 0
	fi
	local tmp start
	tmp="$(mktemp -d "$CACHE_DIR/.build.XXXXXX")"
	start=$SECONDS
	log "building MinIO $MINIO_VERSION from source (takes minutes the first time)"
	# No cgo (MinIO's own release builds have none), and no debug
	# information from the compiler or the linker: the tests never debug
	# MinIO, and the build is minutes of CPU on a new machine.
	if ! (cd "$tmp" && GOBIN="$tmp/bin" GOFLAGS="" GOWORK=off CGO_ENABLED=0 \
		go install -gcflags=all=-dwarf=false -ldflags="-s -w" "$MINIO_MODULE@$MINIO_VERSION") >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/build.log" >&2
		rm -rf "$tmp"
		die "MinIO build failed"
	fi
	mv -f "$tmp/bin/minio" "$MINIO_BIN"
	rm -rf "$tmp"
	log "built MinIO in $((SECONDS - start))s: $MINIO_BIN"
	echo "$MINIO_BIN"
}

random_hex() { # bytes
	od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'
}

# create_bucket ENDPOINT USER PASS BUCKET makes an empty bucket with a
# SigV4-signed PUT (no MinIO client needed) and prints the HTTP status (000:
# no answer). The credentials reach curl on its standard input, never on a
# command line that ps would show.
create_bucket() {
	printf 'user = "%s:%s"\n' "$2" "$3" |
		curl -sS -K - -o /dev/null -w '%{http_code}' --max-time 10 \
			--aws-sigv4 "aws:amz:us-east-1:s3" -X PUT "$1/$4" 2>/dev/null
}

# probe URL USER PASS BUCKET makes the bucket once the server's health check
# answers, and prints the PUT's status (000 while the health check does not
# answer).
probe() {
	if curl -fsS -o /dev/null --max-time 2 "$1/minio/health/live" 2>/dev/null; then
		create_bucket "$@"
	else
		echo 000
	fi
}

cmd_start() {
	[[ -x "$MINIO_BIN" ]] || die "MinIO is not built: run '$0 build' first"
	local state envfile data logf port cport user pass pid
	state="$(mktemp -d "${TMPDIR:-/tmp}/pswap-minio.XXXXXX")"
	chmod 700 "$state"
	envfile="${1:-$state/env}"
	data="$state/data"
	logf="$state/minio.log"
	mkdir -p "$data"
	port="$(free_port)"
	cport="$(free_port)"
	while [[ "$cport" == "$port" ]]; do cport="$(free_port)"; done
	user="pswap-$(random_hex 6)"
	pass="$(random_hex 24)"

	# setsid: the server gets its own process group, so a Ctrl-C aimed at
	# the test run does not kill it before the cleanup trap stops it.
	MINIO_ROOT_USER="$user" MINIO_ROOT_PASSWORD="$pass" \
		MINIO_BROWSER=on MINIO_UPDATE=off MINIO_CI_CD=1 \
		setsid "$MINIO_BIN" server "$data" --quiet \
		--address "127.0.0.1:$port" --console-address "127.0.0.1:$cport" \
		>"$logf" 2>&1 </dev/null &
	pid=$!

	(
		umask 077
		cat >"$envfile" <<EOF
AWS_ENDPOINT_URL=http://127.0.0.1:$port
AWS_ACCESS_KEY_ID=$user
AWS_SECRET_ACCESS_KEY=$pass
AWS_REGION=us-east-1
PSWAP_TEST_S3=1
MINIO_PID=$pid
MINIO_DATA_DIR=$data
MINIO_STATE_DIR=$state
MINIO_LOG=$logf
MINIO_CONSOLE_URL=http://127.0.0.1:$cport
EOF
	)

	# /minio/health/live answers 200 as soon as the HTTP server listens, before
	# the object layer is initialised: S3 requests then get 503 ("Server not
	# initialized") for a moment, longer on a loaded machine. So the server is
	# up only once the bucket PUT itself succeeds; a 503 (or no answer) there
	# is retried until START_TIMEOUT, any other status fails at once.
	await_server MinIO "$pid" "$logf" "$envfile" "$pass" \
		"MinIO is up on 127.0.0.1:$port (pid $pid); created bucket $BUCKET (s3://$BUCKET/...)" \
		probe "http://127.0.0.1:$port" "$user" "$pass" "$BUCKET"
}

cmd_stop() {
	stop_server "${1:?usage: $0 stop ENVFILE}" MINIO "MinIO server" server
}

case "${1:-}" in
build) cmd_build ;;
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
path) echo "$MINIO_BIN" ;;
version) echo "$MINIO_VERSION" ;;
*)
	echo "usage: $0 build | start [ENVFILE] | stop ENVFILE | path | version" >&2
	exit 2
	;;
esac
