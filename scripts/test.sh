#!/usr/bin/env bash
# pswap's test suite, as CI runs it: builds MinIO (cached after the first
# time), starts it with fresh credentials, installs the npm packages of the
# DuckDB/hyparquet cross-checks if missing, PostgreSQL (scripts/postgres.sh,
# for the catalog tests), an Iceberg REST catalog server
# (scripts/restcatalog.sh), the engines (Spark, PyIceberg, DuckDB:
# scripts/engines.sh) and the orchestrators (Airflow, Dagster:
# scripts/orchestrators.sh), then runs gofmt, go mod tidy
# -diff, go vet, the tests with the race detector, staticcheck and the fuzz
# targets (briefly), against it. MinIO is stopped and its data removed on
# exit, whatever happens.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh ./store/...     # some packages
#
# PSWAP_TEST_TIMEOUT (default 20m) bounds each test binary. The exit status
# is that of the first failing step (0 when all pass).
# shellcheck disable=SC2317 # functions called through trap and step
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
TIMEOUT="${PSWAP_TEST_TIMEOUT:-20m}"
if (($# > 0)); then pkgs=("$@"); else pkgs=(./...); fi

scripts/minio.sh build >/dev/null
envfile=""
pgenv=""
restenv=""
cleanup() {
	if [[ -n "$restenv" ]]; then
		scripts/restcatalog.sh stop "$restenv" || true
	fi
	if [[ -n "$envfile" ]]; then
		scripts/minio.sh stop "$envfile" || true
	fi
	if [[ -n "$pgenv" ]]; then
		scripts/postgres.sh stop "$pgenv" || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
envfile="$(scripts/minio.sh start)"
# The env file holds the per-run credentials: export them, never print them.
set -a
# shellcheck disable=SC1090
. "$envfile"
set +a

rc=0
step() {
	local name="$1" start=$SECONDS status=0
	shift
	echo "==> $name"
	"$@" || status=$?
	if ((status == 0)); then
		echo "==> $name: ok ($((SECONDS - start))s)"
	else
		echo "==> $name: FAILED with exit status $status ($((SECONDS - start))s)"
		((rc != 0)) || rc=$status
	fi
}

gofmt_check() {
	local files
	files="$(gofmt -l . | grep -v -e '/node_modules/' -e '^node_modules/' || true)"
	if [[ -n "$files" ]]; then
		echo "not gofmt'ed:"
		echo "$files"
		return 1
	fi
}

# The DuckDB and hyparquet cross-checks need their npm packages: install
# them where a committed package-lock.json has no node_modules yet.
npm_ci() {
	if ! command -v npm >/dev/null 2>&1; then
		echo "npm not found: the DuckDB/hyparquet cross-checks will skip"
		return 0
	fi
	git ls-files -- '*package-lock.json' | while read -r lock; do
		dir="$(dirname "$lock")"
		if [[ ! -d "$dir/node_modules" ]]; then
			echo "npm ci in $dir"
			(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
		fi
	done
}

# PostgreSQL for the SQL catalog tests (the Debian package, installed by
# apt-get if missing): its env file holds the run's password, exported,
# never printed.
postgres() {
	pgenv="$(scripts/postgres.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$pgenv"
	set +a
}
step "postgres" postgres
# The Iceberg REST catalog server for the REST catalog tests
# (scripts/restcatalog.sh: Iceberg's catalog handlers, jars from Maven,
# cached), on the MinIO above: its env file holds its token and client
# secret, exported, never printed.
restcatalog() {
	restenv="$(scripts/restcatalog.sh start)" || return 1
	set -a
	# shellcheck disable=SC1090
	. "$restenv"
	set +a
}
step "rest catalog" restcatalog
step "npm ci" npm_ci
# The engines that read pswap's tables in integration/engines (Spark,
# PyIceberg, DuckDB): installed once per machine, then reused.
engines() {
	PSWAP_ENGINES="$(scripts/engines.sh)" && export PSWAP_ENGINES
}
step "engines" engines
# The orchestrators that run the examples in integration/orchestrators
# (Airflow 3, Dagster), in a virtual environment of their own: installed
# once per machine, then reused.
orchestrators() {
	PSWAP_ORCHESTRATORS="$(scripts/orchestrators.sh)" && export PSWAP_ORCHESTRATORS
}
step "orchestrators" orchestrators
step gofmt gofmt_check
# go.mod and go.sum say exactly what the code imports.
step "go mod tidy" go mod tidy -diff
step "go vet" go vet "${pkgs[@]}"
testlog="$(mktemp)"
go_test() {
	go test -race -count=1 -timeout "$TIMEOUT" "${pkgs[@]}" 2>&1 | tee "$testlog"
}
step "go test" go_test
step staticcheck go run "$STATICCHECK" "${pkgs[@]}"
step fuzz env PSWAP_FUZZ_TIME="${PSWAP_FUZZ_TIME:-5s}" scripts/fuzz.sh "${pkgs[@]}"
# One closing line that counts the test packages, for people and CI alike.
passed="$(grep -c '^ok ' "$testlog" || true)"
failed="$(grep -c -E '^FAIL[[:space:]]+github.com/' "$testlog" || true)"
rm -f "$testlog"
echo "packages: $passed passed, $failed failed (${SECONDS}s in all)"
exit "$rc"
