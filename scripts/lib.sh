# shellcheck shell=bash
# Functions shared by the scripts that install or start what pswap's tests
# need (engines.sh, orchestrators.sh, minio.sh, fakegcs.sh, azurite.sh, postgres.sh,
# bench/peers/peers.sh). Source it after defining log and die.

# cache_root prints the folder of pswap's per-machine caches.
cache_root() {
	echo "${PSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pswap}"
}

# cached_install NAME KEY INSTALL prints the folder NAME/KEY under the cache
# root, after running INSTALL FOLDER in it unless an earlier run completed
# (its ok marker). One install at a time per machine: a second caller waits
# for the first, then reuses what it installed. INSTALL logs to stderr and
# fails with die; a folder it left half-made is removed by the next try.
cached_install() {
	local root="$(cache_root)/$1" dir start
	dir="$root/$2"
	if [[ ! -f "$dir/ok" ]]; then
		mkdir -p "$root"
		exec 9>"$root/.lock"
		flock 9
		if [[ ! -f "$dir/ok" ]]; then
			start=$SECONDS
			rm -rf "$dir"
			mkdir -p "$dir"
			"$3" "$dir"
			touch "$dir/ok"
			log "installed in $((SECONDS - start))s"
		fi
		exec 9>&-
	fi
	echo "$dir"
}

# free_port prints a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	local port i
	for ((i = 0; i < 200; i++)); do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	die "no free port found"
}

# maven runs mvn with the machine's local Maven repository to itself:
# scripts/test.sh runs the installs at once, and two mvn processes fetching
# the same artifact into one repository can leave it half-written.
maven() {
	local root
	root="$(cache_root)"
	mkdir -p "$root"
	flock "$root/.maven.lock" mvn "$@"
}

# stop_server ENVFILE VAR NAME FLAG stops a server that a script's start
# launched, and removes what that start created. The env file names the
# server's pid (VAR_PID), its data folder (VAR_DATA_DIR) and the temporary
# folder holding both (VAR_STATE_DIR). The process is stopped (TERM, then
# KILL after 10 s) only while its command line still reads "FLAG
# <data folder>", that is, while it still is that server; then the state
# folder (only a pswap-<var in lower case>.* temporary folder) or else the
# data folder, and the env file, are removed.
stop_server() {
	local envfile="$1" var="$2" name="$3" flag="$4"
	[[ -f "$envfile" ]] || die "no env file $envfile"
	local pid data state i
	pid="$(sed -n "s/^${var}_PID=//p" "$envfile")"
	data="$(sed -n "s/^${var}_DATA_DIR=//p" "$envfile")"
	state="$(sed -n "s/^${var}_STATE_DIR=//p" "$envfile")"
	if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$flag $data"; then
			kill -TERM "$pid" 2>/dev/null || true
			for ((i = 0; i < 100; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if kill -0 "$pid" 2>/dev/null; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
		else
			log "pid $pid is not the $name started with $envfile; not killing it"
		fi
	fi
	if [[ -n "$state" && -d "$state" && "$(basename "$state")" == "pswap-${var,,}."* ]]; then
		rm -rf "$state"
	elif [[ -n "$data" && -d "$data" ]]; then
		rm -rf "$data"
	fi
	rm -f "$envfile"
}

# await_server NAME PID LOGF ENVFILE SECRET READY PROBE [ARGS...] waits for a
# server a start just launched: it runs PROBE ARGS (which prints the HTTP
# status of the request that makes the tests' bucket or container, "000"
# when nothing answered) every 0.1 s until it prints 200, 201 or 409, then
# logs READY and prints ENVFILE. "000" and 503 (up but not yet initialised)
# are retried for START_TIMEOUT seconds while PID lives; any other status
# fails at once. On failure it logs LOGF's last lines with SECRET (if not
# empty) redacted, stops the server with cmd_stop ENVFILE, and dies.
await_server() {
	local name="$1" pid="$2" logf="$3" envfile="$4" secret="$5" ready="$6" code="" i
	shift 6
	for ((i = 0; i < START_TIMEOUT * 10; i++)); do
		code="$("$@")" || code=000
		case "$code" in
		200 | 201 | 409)
			log "$ready"
			echo "$envfile"
			return 0
			;;
		000 | 503) ;;
		*)
			cmd_stop "$envfile" || true
			die "$name: could not create the tests' bucket: HTTP $code"
			;;
		esac
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	log "$name did not become ready (last request: HTTP ${code:-none}); last log lines${secret:+ (secret redacted)}:"
	if [[ -n "$secret" ]]; then
		tail -n 30 "$logf" | sed "s|$secret|[redacted]|g" >&2 || true
	else
		tail -n 30 "$logf" >&2 || true
	fi
	cmd_stop "$envfile" || true
	die "$name failed to start"
}
