#!/usr/bin/env bash
# pswap's test suite, as CI runs it. It starts, at once and in the
# background, everything the tests need that a machine may lack: the MinIO
# build (scripts/minio.sh, cached after the first time; CPU), and the
# network-bound installs: PostgreSQL's Debian package (scripts/postgres.sh,
# for the catalog tests), the Iceberg REST catalog server's jars
# (scripts/restcatalog.sh), the npm packages of the DuckDB/hyparquet
# cross-checks where missing, the engines (Spark, PyIceberg, DuckDB:
# scripts/engines.sh) and the orchestrators (Airflow, Dagster:
# scripts/orchestrators.sh). Beside them it runs gofmt, go mod tidy -diff
# and go vet (and, on a machine where the installs are still going, it
# compiles the race-instrumented packages the tests need), and builds the
# CLI once for the test packages that run it ($PSWAP_TEST_CLI and
# $PSWAP_TEST_CLI_RACE). Then it starts
# MinIO and Azurite with fresh credentials, PostgreSQL and the REST catalog, and runs
# the tests with the race detector against them, with staticcheck and the
# fuzz targets (briefly) beside them at the lowest CPU priority. The servers are stopped and their data removed
# on exit, whatever happens.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh ./store/...     # some packages
#
# PSWAP_TEST_TIMEOUT (default 20m) bounds each test binary. The exit status
# is that of the first failing step (0 when all pass). Each step's closing
# line gives its time (a background step's also when it finished, counted
# from the script's start).
# shellcheck disable=SC2317 # functions called through trap and step
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STATICCHECK_VERSION=v0.8.2
STATICCHECK=honnef.co/go/tools/cmd/staticcheck
TIMEOUT="${PSWAP_TEST_TIMEOUT:-20m}"
if (($# > 0)); then pkgs=("$@"); else pkgs=(./...); fi

# Every go command builds with -trimpath: without it a compiled package's
# cache key holds its folder, so a checkout in another folder (a new
# worktree, a CI clone) compiles every package of the module again, for
# the race tests, vet, the fuzz binaries and the CLI alike. The tests find
# their source folders with internal/testing/srcdir, which reads the
# trimmed names.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"

log() { printf 'test.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

envfile=""
azenv=""
gcsenv=""
pgenv=""
restenv=""
bgdir="$(mktemp -d)"
declare -A bgpid=()
awaited=0
cleanup() {
	local name
	# Background installs still running (an early exit): stop them, each
	# with its process group.
	for name in "${!bgpid[@]}"; do
		if [[ ! -f "$bgdir/$name.rc" ]] && kill -0 "${bgpid[$name]}" 2>/dev/null; then
			kill -TERM -- "-${bgpid[$name]}" 2>/dev/null || true
		fi
	done
	if [[ -n "$restenv" ]]; then
		scripts/restcatalog.sh stop "$restenv" || true
	fi
	if [[ -n "$envfile" ]]; then
		scripts/minio.sh stop "$envfile" || true
	fi
	if [[ -n "$azenv" ]]; then
		scripts/azurite.sh stop "$azenv" || true
	fi
	if [[ -n "$gcsenv" ]]; then
		scripts/fakegcs.sh stop "$gcsenv" || true
	fi
	if [[ -n "$pgenv" ]]; then
		scripts/postgres.sh stop "$pgenv" || true
	fi
	rm -rf "$bgdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rc=0
# report NAME STATUS SECONDS [NOTE] prints a step's closing line and keeps
# the first failure's status.
report() {
	if (($2 == 0)); then
		echo "==> $1: ok ($3s${4:-})"
	else
		echo "==> $1: FAILED with exit status $2 ($3s${4:-})"
		((rc != 0)) || rc=$2
	fi
}
# cpu_now sets CPU to the CPU time (user + system, whole seconds) of the
# shell's finished children so far: bash's times, run in this shell (a
# command substitution would report its own subshell's children).
cpu_now() {
	local f="$bgdir/times.$BASHPID"
	times >"$f"
	CPU="$(awk 'NR == 2 {
		n = 0
		for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
		printf "%d\n", n + 0.5
	}' "$f")"
}
# step NAME CMD... runs a step in the foreground. Once no background step
# is left (whose CPU would count where the shell collects it), its closing
# line also gives the CPU time it took, to compare with two cores' worth.
step() {
	local name="$1" start=$SECONDS cpu status=0 note=""
	shift
	echo "==> $name"
	cpu_now
	cpu=$CPU
	"$@" || status=$?
	if ((${#bgpid[@]} == awaited)); then
		cpu_now
		note=", CPU $((CPU - cpu))s"
	fi
	report "$name" "$status" "$((SECONDS - start))" "$note"
}

# background NAME CMD... starts CMD now, in a process group of its own (so
# an early exit can stop it whole), its standard output to a file that
# await prints nothing of, its log kept until await shows it.
background() {
	local name="$1"
	shift
	set -m
	(
		start=$SECONDS status=0
		"$@" >"$bgdir/$name.out" 2>"$bgdir/$name.log" </dev/null || status=$?
		cpu_now
		echo "$status $((SECONDS - start)) $SECONDS $CPU" >"$bgdir/$name.rc"
	) &
	bgpid[$name]=$!
	set +m
}
# running reports whether any background step has not finished.
running() {
	local name
	for name in "${!bgpid[@]}"; do
		[[ -f "$bgdir/$name.rc" ]] || return 0
	done
	return 1
}
# await NAME waits for a background step, shows its log and closing line,
# and returns its status; its output is in $bgdir/NAME.out.
await() {
	local name="$1" status secs at cpu
	echo "==> $name"
	wait "${bgpid[$name]}" || true
	awaited=$((awaited + 1))
	sed 's/^/    /' "$bgdir/$name.log"
	if ! read -r status secs at cpu <"$bgdir/$name.rc" 2>/dev/null; then
		status=1 secs=? at=$SECONDS cpu=?
	fi
	report "$name" "$status" "$secs" ", CPU ${cpu}s, in the background, done ${at}s after the start"
	return "$status"
}

# The DuckDB and hyparquet cross-checks need their npm packages: install
# them where a committed package-lock.json has no node_modules yet.
npm_ci() {
	if ! command -v npm >/dev/null 2>&1; then
		echo "npm not found: the DuckDB/hyparquet cross-checks will skip" >&2
		return 0
	fi
	git ls-files -- '*package-lock.json' | while read -r lock; do
		dir="$(dirname "$lock")"
		if [[ ! -d "$dir/node_modules" ]]; then
			echo "npm ci in $dir" >&2
			(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
		fi
	done
}

# staticcheck, built once per machine and version (go run would check and
# link it again on every run).
staticcheck_build() {
	local dir
	dir="$(cache_root)/staticcheck/$STATICCHECK_VERSION-$(go env GOVERSION)"
	if [[ ! -x "$dir/staticcheck" ]]; then
		mkdir -p "$dir"
		GOBIN="$dir" GOFLAGS="" GOWORK=off go install "$STATICCHECK@$STATICCHECK_VERSION"
	fi
	echo "$dir/staticcheck"
}

# The MinIO build (minutes of CPU on a new machine) first, then the
# installs that mostly wait on the network, all at once. Maven runs one at
# a time (lib.sh's maven); pip and apt each have their own folders.
background "minio build" scripts/minio.sh build
background "fake-gcs-server build" scripts/fakegcs.sh build
background "postgres install" scripts/postgres.sh install
background "rest catalog install" scripts/restcatalog.sh install
background "npm ci" npm_ci
background "engines" scripts/engines.sh
background "orchestrators" scripts/orchestrators.sh
background "python wheelhouse" scripts/pywheelhouse.sh
background "staticcheck build" staticcheck_build

gofmt_check() {
	local files
	files="$(gofmt -l . | grep -v -e '/node_modules/' -e '^node_modules/' || true)"
	if [[ -n "$files" ]]; then
		echo "not gofmt'ed:"
		echo "$files"
		return 1
	fi
}
step "go mod download" go mod download
# The CLI, with and without the race detector, built once for the packages
# that run it as a process (integration, integration/engines,
# integration/orchestrators: each linked its own copy before), into a
# folder of this checkout's under the cache, where go build finds it up
# to date and links nothing when the code did not change.
cli_build() {
	local dir
	dir="$(cache_root)/cli/$(pwd -P | sha256sum | cut -c1-16)"
	mkdir -p "$dir"
	go build -ldflags=-w -o "$dir/pswap" ./cmd/pswap
	go build -race -ldflags=-w -o "$dir/pswap-race" ./cmd/pswap
	echo "$dir"
}
background "cli build" cli_build
step gofmt gofmt_check
# go.mod and go.sum say exactly what the code imports.
step "go mod tidy" go mod tidy -diff
step "go vet" go vet "${pkgs[@]}"
# While installs still wait on the network, compile what the race-enabled
# tests will need (cached for go test below); on a machine where they are
# done this costs nothing, so it is skipped.
# (Every non-main package the test binaries import, the standard library's
# included; go build of a main package would link it for nothing.)
race_build() {
	go list -deps -test -f '{{if and (not .ForTest) (ne .Name "main")}}{{.ImportPath}}{{end}}' "${pkgs[@]}" |
		sort -u | xargs go build -race
}
if running; then
	step "race build (while installs run)" race_build
fi

# MinIO, started with fresh credentials. The env file holds them: export
# them, never print them.
minio() {
	envfile="$(scripts/minio.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$envfile"
	set +a
}
await "minio build" && step "minio" minio
# fake-gcs-server, the GCS emulator (no credentials): its env file sets
# STORAGE_EMULATOR_HOST and PSWAP_TEST_GCS.
fakegcs() {
	gcsenv="$(scripts/fakegcs.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$gcsenv"
	set +a
}
await "fake-gcs-server build" && step "fake-gcs-server" fakegcs
# PostgreSQL for the SQL catalog tests: its env file holds the run's
# password, exported, never printed.
postgres() {
	pgenv="$(scripts/postgres.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$pgenv"
	set +a
}
await "postgres install" && step "postgres" postgres
# The Iceberg REST catalog server for the REST catalog tests (Iceberg's
# catalog handlers, jars from Maven, cached), on the MinIO above: its env
# file holds its token and client secret, exported, never printed.
restcatalog() {
	restenv="$(scripts/restcatalog.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$restenv"
	set +a
}
if await "rest catalog install" && [[ -n "$envfile" ]]; then
	step "rest catalog" restcatalog
fi
await "npm ci" || true
# Azurite (npm, installed by npm ci from scripts/azurite's lock) for the
# az:// tests, with a fresh account and key: exported, never printed.
azurite() {
	azenv="$(scripts/azurite.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$azenv"
	set +a
}
# (Not installed: the step fails, and so does the run.)
step "azurite" azurite
# The engines that read pswap's tables in integration/engines (Spark,
# PyIceberg, DuckDB) and the orchestrators that run the examples in
# integration/orchestrators (Airflow 3, Dagster): installed once per
# machine, then reused.
if await "engines"; then
	PSWAP_ENGINES="$(cat "$bgdir/engines.out")" && export PSWAP_ENGINES
fi
if await "orchestrators"; then
	PSWAP_ORCHESTRATORS="$(cat "$bgdir/orchestrators.out")" && export PSWAP_ORCHESTRATORS
fi
# The Python package's test dependencies (integration/python installs its
# wheel and them into a clean venv with pip --no-index).
if await "python wheelhouse"; then
	PSWAP_PYWHEELHOUSE="$(cat "$bgdir/python wheelhouse.out")" && export PSWAP_PYWHEELHOUSE
fi
# The last background step, awaited here so that the steps below give
# their CPU time.
staticcheck=""
if await "staticcheck build"; then
	staticcheck="$(cat "$bgdir/staticcheck build.out")"
fi

if await "cli build"; then
	clidir="$(cat "$bgdir/cli build.out")"
	export PSWAP_TEST_CLI="$clidir/pswap" PSWAP_TEST_CLI_RACE="$clidir/pswap-race"
fi

# go test starts the packages' binaries in the order it is given them, two
# at a time. The slowest go first, longest first (the times of the last
# warm run on two cores: the engines 566 s, the integration suite 366 s,
# the CLI's scripts 337 s, sim 325 s with a quarter of its seeds under
# -race (an eighth now), the orchestrators 144 s, lakehouse 114 s, swap
# 74 s, the facade 70 s), so that none of them starts late and runs on
# alone at the end: replayed on two slots with those times, this order
# packs the packages into 1,140 s, half their sum (1,136 s) is the bound:
# what shortens go test now is what makes the packages cheaper.
testpkgs=("${pkgs[@]}")
if (($# == 0)); then
	testpkgs=()
	for dir in integration/engines integration cmd/pswap integration/orchestrators internal/testing/sim \
		swap internal/lakehouse . staging integration/python catalog internal/gc; do
		[[ ! -d "$dir" ]] || testpkgs+=("./$dir")
	done
	testpkgs+=(./...)
fi

# staticcheck and the fuzz step run beside go test, in the background and
# at the lowest CPU priority: go test's packages mostly wait on servers,
# engines and child processes (a warm run's go test took 1,453 s of CPU in
# 1,232 s on two cores), and these two take only the CPU the tests leave.
# The fuzz targets run two at a time, one worker each, for
# $PSWAP_FUZZ_TIME each (default 10s: a target gets less than a whole core
# while the tests run).
to_log() { "$@" >&2; }
# The simulation's seed loops run an eighth of their seeds under -race
# (internal/testing/sim's defaultSeeds), where a seed costs about 3.5 times
# the CPU: every seed runs here, without the race detector, beside go test.
listed="$(go list "${pkgs[@]}" 2>/dev/null || true)"
if grep -qx 'github.com/pswap/pswap/internal/testing/sim' <<<"$listed"; then
	background "sim without -race" to_log go test -count=1 -ldflags=-w -timeout "$TIMEOUT" ./internal/testing/sim/
fi
# The same for the long append and publish loops of swap, lakehouse and
# deltalog (race.Share in their tests: 300 or 200 of 1,000 appends, 2 of 8
# seeds under -race): in full here, without the race detector.
loops=()
for pkg in swap internal/lakehouse internal/deltalog; do
	if grep -qx "github.com/pswap/pswap/$pkg" <<<"$listed"; then loops+=("./$pkg/"); fi
done
if ((${#loops[@]} > 0)); then
	background "long loops without -race" to_log go test -count=1 -ldflags=-w -timeout "$TIMEOUT" \
		-run '^(TestAppendCostFlat|TestAppendPublishCostFlat|TestAppendDeltaCost|TestAppendTailMatchesReplay)$' "${loops[@]}"
fi
if [[ -n "$staticcheck" ]]; then
	background staticcheck to_log nice -n 19 "$staticcheck" "${pkgs[@]}"
fi
background fuzz to_log nice -n 19 env PSWAP_FUZZ_TIME="${PSWAP_FUZZ_TIME:-10s}" scripts/fuzz.sh "${pkgs[@]}"

# A race-enabled binary sleeps a second at exit by default (GORACE's
# atexit_sleep_ms): the integration suite runs hundreds of race-built
# pswap processes, many of them one after another (cmd/pswap's scripts
# already set it for theirs).
export GORACE="${GORACE:+$GORACE }atexit_sleep_ms=0"
testlog="$(mktemp)"
# -ldflags=-w: no DWARF in the test binaries, whose links then take about
# a quarter less CPU (stacks and race reports come from the runtime's own
# tables, not DWARF).
go_test() {
	go test -race -count=1 -ldflags=-w -timeout "$TIMEOUT" "${testpkgs[@]}" 2>&1 | tee "$testlog"
}
step "go test" go_test
if [[ -n "$staticcheck" ]]; then
	await staticcheck || true
fi
await fuzz || true
if [[ -n "${bgpid[sim without -race]:-}" ]]; then
	await "sim without -race" || true
fi
if [[ -n "${bgpid[long loops without -race]:-}" ]]; then
	await "long loops without -race" || true
fi
# One closing line that counts the test packages, for people and CI alike.
passed="$(grep -c '^ok ' "$testlog" || true)"
failed="$(grep -c -E '^FAIL[[:space:]]+github.com/' "$testlog" || true)"
rm -f "$testlog"
echo "packages: $passed passed, $failed failed (${SECONDS}s in all)"
exit "$rc"
