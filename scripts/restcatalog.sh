#!/usr/bin/env bash
# An Iceberg REST catalog server for pswap's REST catalog tests (catalog,
# integration/engines): scripts/restcatalog/RestCatalog.java, Apache
# Iceberg's server-side catalog handlers over a JdbcCatalog on SQLite with
# S3FileIO on the MinIO of the environment, on a free loopback port, with
# a random bearer token and OAuth2 client credentials, the way
# scripts/postgres.sh starts PostgreSQL.
#
#   scripts/restcatalog.sh install         resolve the jars (Maven) and compile the server; prints its folder
#   scripts/restcatalog.sh start           start a server (needs AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
#                                          AWS_SECRET_ACCESS_KEY of MinIO); prints the env file path
#   scripts/restcatalog.sh down ENVFILE    stop that server's process, keeping its catalog
#   scripts/restcatalog.sh up ENVFILE      start it again (same port, catalog, token)
#   scripts/restcatalog.sh stop ENVFILE    stop that server and remove its catalog
#
# The env file (mode 0600) sets PSWAP_REST_CATALOG (http://127.0.0.1:PORT),
# PSWAP_REST_CATALOG_TOKEN, PSWAP_REST_CATALOG_CREDENTIAL (client_id:secret),
# PSWAP_REST_CATALOG_WAREHOUSE, RESTCATALOG_PID and RESTCATALOG_DIR. Nothing
# here prints the token or the secret.
#
# Cache: ${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}/restcatalog/<hash of the pom and the source>
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/restcatalog"
START_TIMEOUT="${RESTCATALOG_START_TIMEOUT:-90}"
BUCKET="${MINIO_BUCKET:-pswap}"

log() { printf 'restcatalog.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

java_bin() {
	if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
		echo "$JAVA_HOME/bin"
	else
		dirname "$(readlink -f "$(command -v javac || command -v java)")"
	fi
}

install() {
	local dir="$1" bin
	bin="$(java_bin)"
	command -v mvn >/dev/null || die "mvn not found: the server's jars come from Maven"
	[[ -x "$bin/javac" ]] || die "javac not found: the server is compiled here (a JDK 17 or newer)"
	log "fetching the Iceberg catalog jars"
	maven -q -B -Dstyle.color=never --no-transfer-progress -f "$SRC/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$dir/jars" -DincludeScope=runtime >&2 || die "could not fetch the jars from Maven"
	"$bin/javac" -d "$dir/classes" -cp "$dir/jars/*" "$SRC/RestCatalog.java" >&2 || die "javac failed"
}

cmd_install() {
	local key
	key="$({
		cat "$SRC/pom.xml" "$SRC/RestCatalog.java"
		"$(java_bin)/java" -version 2>&1 | head -n 1
	} | sha256sum | cut -c1-16)"
	cached_install restcatalog "$key" install
}

random_hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

# getenv NAME ENVFILE prints NAME's value in ENVFILE.
getenv() { sed -n "s/^$1=//p" "$2"; }

cmd_up() {
	local envfile="${1:?usage: restcatalog.sh up ENVFILE}" dir port pid i
	[[ -f "$envfile" ]] || die "no env file $envfile"
	dir="$(getenv RESTCATALOG_DIR "$envfile")"
	port="$(getenv RESTCATALOG_PORT "$envfile")"
	# setsid: its own process group, so a Ctrl-C aimed at the test run
	# does not kill it before the cleanup stops it.
	(
		set -a
		# shellcheck disable=SC1090
		. "$dir/server.env"
		set +a
		exec setsid "$(java_bin)/java" -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-cp "$(getenv RESTCATALOG_HOME "$envfile")/classes:$(getenv RESTCATALOG_HOME "$envfile")/jars/*" \
			RestCatalog >>"$dir/server.log" 2>&1 </dev/null
	) &
	pid=$!
	sed -i "s/^RESTCATALOG_PID=.*/RESTCATALOG_PID=$pid/" "$envfile"
	for ((i = 0; i < START_TIMEOUT * 4; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$dir/server.log" >&2
			return 1
		fi
		if curl -fsS -o /dev/null -H @"$dir/auth.hdr" "http://127.0.0.1:$port/v1/config" 2>/dev/null; then
			return 0
		fi
		sleep 0.25
	done
	tail -n 20 "$dir/server.log" >&2
	die "the server did not answer in ${START_TIMEOUT}s"
}

cmd_down() {
	local envfile="${1:?usage: restcatalog.sh down ENVFILE}" pid i
	[[ -f "$envfile" ]] || die "no env file $envfile"
	pid="$(getenv RESTCATALOG_PID "$envfile")"
	if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
		grep -q RestCatalog "/proc/$pid/cmdline" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 40; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
}

cmd_start() {
	local home dir port token secret envfile try
	: "${AWS_ENDPOINT_URL:?restcatalog.sh start: no AWS_ENDPOINT_URL (start MinIO first: scripts/minio.sh start)}"
	: "${AWS_ACCESS_KEY_ID:?restcatalog.sh start: no AWS_ACCESS_KEY_ID}"
	: "${AWS_SECRET_ACCESS_KEY:?restcatalog.sh start: no AWS_SECRET_ACCESS_KEY}"
	home="$(cmd_install)"
	dir="$(mktemp -d "${TMPDIR:-/tmp}/pswap-restcatalog.XXXXXX")"
	token="$(random_hex 24)"
	secret="$(random_hex 24)"
	envfile="$dir/env"
	(
		umask 077
		printf 'Authorization: Bearer %s\n' "$token" >"$dir/auth.hdr"
		cat >"$dir/server.env" <<EOF
RC_DB=$dir/catalog.db
RC_WAREHOUSE=s3://$BUCKET/restcatalog-warehouse
RC_TOKEN=$token
RC_CREDENTIAL=pswap-test:$secret
AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL
AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
AWS_REGION=${AWS_REGION:-us-east-1}
EOF
	)
	# The free port may be taken before the server binds it: try another.
	for try in 1 2 3; do
		port="$(free_port)"
		(
			umask 077
			cat >"$envfile" <<EOF
PSWAP_REST_CATALOG=http://127.0.0.1:$port
PSWAP_REST_CATALOG_TOKEN=$token
PSWAP_REST_CATALOG_CREDENTIAL=pswap-test:$secret
PSWAP_REST_CATALOG_WAREHOUSE=s3://$BUCKET/restcatalog-warehouse
RESTCATALOG_PORT=$port
RESTCATALOG_PID=
RESTCATALOG_DIR=$dir
RESTCATALOG_HOME=$home
EOF
		)
		sed -i "/^RC_PORT=/d" "$dir/server.env"
		echo "RC_PORT=$port" >>"$dir/server.env"
		if cmd_up "$envfile"; then
			log "Iceberg REST catalog on 127.0.0.1:$port (catalog in $dir)"
			echo "$envfile"
			return 0
		fi
		cmd_down "$envfile"
		grep -q 'Address already in use' "$dir/server.log" || break
		log "port $port was taken meanwhile: starting on another"
	done
	die "the server did not start (log: $dir/server.log)"
}

cmd_stop() {
	local envfile="${1:?usage: restcatalog.sh stop ENVFILE}" dir
	[[ -f "$envfile" ]] || die "no env file $envfile"
	dir="$(getenv RESTCATALOG_DIR "$envfile")"
	cmd_down "$envfile"
	[[ "$dir" == */pswap-restcatalog.* ]] && rm -rf "$dir"
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
up) shift; cmd_up "$@" ;;
down) shift; cmd_down "$@" ;;
stop) shift; cmd_stop "$@" ;;
*) die "usage: restcatalog.sh install|start|up ENVFILE|down ENVFILE|stop ENVFILE" ;;
esac
