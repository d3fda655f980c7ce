#!/usr/bin/env bash
# PostgreSQL for pswap's catalog tests (catalog, integration/engines): the
# Debian package's server, started on a free loopback port in a fresh
# folder with a random password, the way scripts/minio.sh starts MinIO.
#
#   scripts/postgres.sh install         install the Debian package if missing; prints its bin folder
#   scripts/postgres.sh start           start a server; prints the env file path
#   scripts/postgres.sh stop ENVFILE    stop that server and remove its data
#
# The env file (mode 0600) sets PSWAP_TEST_POSTGRES (host:port), PGHOST,
# PGPORT, PGUSER, PGPASSWORD, PGDATABASE (an empty database "pswap"),
# POSTGRES_BIN and POSTGRES_DIR. Load it with
#   set -a; . "$ENVFILE"; set +a
# Nothing here prints the password. As root (CI), the server runs as the
# package's "postgres" user: initdb refuses root.
set -euo pipefail

START_TIMEOUT="${POSTGRES_START_TIMEOUT:-60}"

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# bin_dir prints the folder of the newest installed server's programs.
bin_dir() {
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
	[[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]] || return 1
	echo "$d"
}

cmd_install() {
	if bin_dir; then
		return 0
	fi
	command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get to install it"
	((EUID == 0)) || die "PostgreSQL is not installed: run 'apt-get install postgresql' as root"
	local start=$SECONDS
	log "installing the Debian package postgresql"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null ||
		die "apt-get install postgresql failed"
	log "installed in $((SECONDS - start))s"
	bin_dir || die "the postgresql package installed no server"
}

# as_server runs a command as the user the server runs as.
as_server() {
	if ((EUID == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

cmd_start() {
	local bin dir port pass envfile
	bin="$(cmd_install)"
	dir="$(mktemp -d "${TMPDIR:-/tmp}/pswap-postgres.XXXXXX")"
	chmod 0755 "$dir"
	port="$(free_port)"
	pass="$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')"
	printf '%s\n' "$pass" >"$dir/pwfile"
	if ((EUID == 0)); then
		chown postgres "$dir" "$dir/pwfile"
	fi
	chmod 0600 "$dir/pwfile"
	as_server "$bin/initdb" -D "$dir/data" -U pswap --pwfile="$dir/pwfile" --auth=scram-sha-256 \
		-E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
		tail -n 20 "$dir/initdb.log" >&2
		die "initdb failed"
	}
	rm -f "$dir/pwfile"
	# The free port may be taken by another process before the server
	# binds it (tests start MinIO and servers of their own meanwhile):
	# then start again on another one.
	local try
	for try in 1 2 3 4 5; do
		if as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t "$START_TIMEOUT" \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=off" start >/dev/null; then
			break
		fi
		if ((try == 5)) || ! grep -q 'Address already in use' "$dir/server.log"; then
			tail -n 20 "$dir/server.log" >&2
			die "the server did not start"
		fi
		log "port $port was taken meanwhile: starting on another"
		port="$(free_port)"
	done
	envfile="$dir/env"
	(
		umask 077
		cat >"$envfile" <<EOF
PSWAP_TEST_POSTGRES=127.0.0.1:$port
PGHOST=127.0.0.1
PGPORT=$port
PGUSER=pswap
PGPASSWORD=$pass
PGDATABASE=pswap
POSTGRES_BIN=$bin
POSTGRES_DIR=$dir
EOF
	)
	PGPASSWORD="$pass" "$bin/psql" -h 127.0.0.1 -p "$port" -U pswap -d postgres -qAtc 'CREATE DATABASE pswap' >/dev/null ||
		die "could not create the database"
	log "PostgreSQL on 127.0.0.1:$port (data in $dir)"
	echo "$envfile"
}

cmd_stop() {
	local envfile="${1:?usage: postgres.sh stop ENVFILE}" bin dir
	[[ -f "$envfile" ]] || die "no env file $envfile"
	bin="$(sed -n 's/^POSTGRES_BIN=//p' "$envfile")"
	dir="$(sed -n 's/^POSTGRES_DIR=//p' "$envfile")"
	[[ -n "$dir" && -d "$dir/data" ]] || die "$envfile names no server folder"
	as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) shift; cmd_stop "$@" ;;
*) die "usage: postgres.sh install|start|stop ENVFILE" ;;
esac
