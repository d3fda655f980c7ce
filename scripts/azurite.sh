#!/usr/bin/env bash
# Azurite (the Azure Storage emulator, npm, pinned in scripts/azurite/) for
# pswap's az:// tests: its blob service only, started on a free loopback
# port with a fresh account name and key per run.
#
#   scripts/azurite.sh install        npm ci in scripts/azurite (if needed)
#   scripts/azurite.sh start [ENVFILE] start a server with an empty container
#                                     "pswap" (or $AZURITE_CONTAINER); prints
#                                     the env file path
#   scripts/azurite.sh stop ENVFILE   stop that server and remove its data
#
# The env file (mode 0600) sets AZURE_STORAGE_CONNECTION_STRING (with the
# blob endpoint), AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY,
# PSWAP_TEST_AZURE=1, AZURITE_PID, AZURITE_DATA_DIR, AZURITE_STATE_DIR and
# AZURITE_LOG. Load it with
#   set -a; . "$ENVFILE"; set +a
# Nothing here prints the key.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
AZ_DIR="$DIR/azurite"
AZURITE_BIN="$AZ_DIR/node_modules/.bin/azurite-blob"
START_TIMEOUT="${AZURITE_START_TIMEOUT:-60}"
CONTAINER="${AZURITE_CONTAINER:-pswap}"

log() { printf 'azurite.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. "$DIR/lib.sh"

cmd_install() {
	if [[ -x "$AZURITE_BIN" ]]; then
		return 0
	fi
	command -v npm >/dev/null 2>&1 || die "npm not found: Azurite cannot be installed"
	(cd "$AZ_DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2
}

random_hex() { # bytes
	od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'
}

# create_container ENDPOINT CONTAINER creates a container with a
# SharedKey-signed request and prints the HTTP status (000: no answer). The
# account and key come from the environment (AZ_ACCOUNT, AZ_KEY), never
# from a command line that ps would show.
create_container() {
	python3 - "$1" "$2" <<'PY'
import base64, hashlib, hmac, os, sys, urllib.request, urllib.error
from email.utils import formatdate
endpoint, container = sys.argv[1], sys.argv[2]
account, key = os.environ["AZ_ACCOUNT"], os.environ["AZ_KEY"]
date, version = formatdate(usegmt=True), "2021-08-06"
headers = "x-ms-date:%s\nx-ms-version:%s\n" % (date, version)
resource = "/%s/%s/%s\nrestype:container" % (account, account, container)
to_sign = "PUT\n\n\n\n\napplication/octet-stream\n\n\n\n\n\n\n" + headers + resource
sig = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()).decode()
req = urllib.request.Request("%s/%s?restype=container" % (endpoint, container), method="PUT", data=b"",
    headers={"Content-Type": "application/octet-stream", "x-ms-date": date, "x-ms-version": version, "Authorization": "SharedKey %s:%s" % (account, sig)})
try:
    with urllib.request.urlopen(req, timeout=5) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
PY
}

cmd_start() {
	[[ -x "$AZURITE_BIN" ]] || die "Azurite is not installed: run '$0 install' first"
	local state envfile data logf port account key pid
	state="$(mktemp -d "${TMPDIR:-/tmp}/pswap-azurite.XXXXXX")"
	chmod 700 "$state"
	envfile="${1:-$state/env}"
	data="$state/data"
	logf="$state/azurite.log"
	mkdir -p "$data"
	port="$(free_port)"
	account="pswap$(random_hex 4)"
	key="$(head -c 32 /dev/urandom | base64 | tr -d '\n')"

	# --loose: accept the headers Azurite does not implement instead of
	# failing the request; --skipApiVersionCheck: the Go SDK may ask for a
	# service version newer than this Azurite knows; --disableTelemetry:
	# no usage data sent from test runs. setsid: its own
	# process group, so a Ctrl-C aimed at the tests does not kill it first.
	AZURITE_ACCOUNTS="$account:$key" setsid "$AZURITE_BIN" \
		--blobHost 127.0.0.1 --blobPort "$port" --location "$data" \
		--loose --skipApiVersionCheck --disableProductStyleUrl --disableTelemetry --silent \
		>"$logf" 2>&1 </dev/null &
	pid=$!

	(
		umask 077
		cat >"$envfile" <<EOT
AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=$account;AccountKey=$key;BlobEndpoint=http://127.0.0.1:$port/$account;'
AZURE_STORAGE_ACCOUNT=$account
AZURE_STORAGE_KEY=$key
AZURITE_BLOB_ENDPOINT=http://127.0.0.1:$port/$account
PSWAP_TEST_AZURE=1
AZURITE_PID=$pid
AZURITE_DATA_DIR=$data
AZURITE_STATE_DIR=$state
AZURITE_LOG=$logf
EOT
	)

	AZ_ACCOUNT="$account" AZ_KEY="$key" await_server Azurite "$pid" "$logf" "$envfile" "$key" \
		"Azurite is up on 127.0.0.1:$port (pid $pid); created container $CONTAINER (az://$CONTAINER/...)" \
		create_container "http://127.0.0.1:$port/$account" "$CONTAINER"
}

cmd_stop() {
	stop_server "${1:?usage: $0 stop ENVFILE}" AZURITE "Azurite" --location
}

case "${1:-}" in
install) cmd_install ;;
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
*)
	echo "usage: $0 install | start [ENVFILE] | stop ENVFILE" >&2
	exit 2
	;;
esac
