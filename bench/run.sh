#!/usr/bin/env bash
# Runs pswap's benchmark report against a local MinIO and prints it.
#
#   bench/run.sh                 the full report (5M rows, 5 rounds)
#   bench/run.sh profile         CPU and allocation profiles of the pswap write
#
# Variables: PSWAP_BENCH_ROWS (default 5000000), PSWAP_BENCH_ROUNDS (5),
# PSWAP_BENCH_ONLY (comma-separated sections: e2e,cli,commit,parallel,memory),
# PSWAP_BENCH_OUT (also write the report there; default bench/out/report.md).
# With AWS_ENDPOINT_URL and PSWAP_TEST_S3=1 already set, that server is used
# and no MinIO is started.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-report}"
out_dir="$root/bench/out"
mkdir -p "$out_dir"
work="$(mktemp -d "${TMPDIR:-/tmp}/pswap-bench.XXXXXX")"
envfile=""
cleanup() {
	if [[ -n "$envfile" ]]; then scripts/minio.sh stop "$envfile" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

if [[ -z "${AWS_ENDPOINT_URL:-}" || "${PSWAP_TEST_S3:-}" != "1" ]]; then
	scripts/minio.sh build >/dev/null
	envfile="$(scripts/minio.sh start "$work/minio.env")"
	set -a
	# shellcheck disable=SC1090
	. "$envfile"
	set +a
fi

if [[ ! -d internal/testing/duckcheck/node_modules/@duckdb/node-api ]]; then
	echo "run.sh: installing DuckDB for node (npm ci in internal/testing/duckcheck)" >&2
	(cd internal/testing/duckcheck && npm ci --silent) || echo "run.sh: npm ci failed: the naive pipeline will be skipped" >&2
fi
if [[ ! -d bench/polars/node_modules/nodejs-polars ]]; then
	echo "run.sh: installing Polars for node (npm ci in bench/polars)" >&2
	(cd bench/polars && npm ci --silent) || echo "run.sh: npm ci failed: the Polars rows will be skipped" >&2
fi

echo "run.sh: building the pswap CLI, s3put and the benchmark binary" >&2
go build -o "$work/pswap" ./cmd/pswap
go build -o "$work/s3put" ./bench/cmd/s3put
go test -c -o "$work/bench.test" ./bench

# Which code is measured: the commit, and any uncommitted Go changes.
code="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty="$(git status --porcelain -- '*.go' 2>/dev/null | awk '{print $2}' | xargs -r -n1 dirname | sort -u | sed 's|^\.$|(root)|' | tr '\n' ' ')"
if [[ -n "$dirty" ]]; then code="$code + uncommitted Go changes in: $dirty"; fi
export PSWAP_BENCH_CODE="$code"

case "$mode" in
report)
	export PSWAP_BENCH=1 PSWAP_BENCH_PSWAP="$work/pswap" PSWAP_BENCH_S3PUT="$work/s3put"
	export PSWAP_BENCH_OUT="${PSWAP_BENCH_OUT:-$out_dir/report.md}"
	start=$SECONDS
	(cd bench && "$work/bench.test" -test.run '^TestReport$' -test.count=1 -test.timeout 30m) |
		grep -v -e '^PASS$' -e '^ok '
	echo "run.sh: report written to $PSWAP_BENCH_OUT in $((SECONDS - start))s" >&2
	;;
profile)
	rows="${PSWAP_BENCH_ROWS:-2000000}"
	for b in 'EndToEnd/pswap' 'Encode'; do
		name="${b//\//-}"
		(cd bench && PSWAP_BENCH_ROWS="$rows" "$work/bench.test" -test.run '^$' -test.bench "^Benchmark${b}\$" \
			-test.benchtime 2x -test.cpuprofile "$out_dir/$name.cpu" -test.memprofile "$out_dir/$name.mem" \
			-test.memprofilerate 65536)
		cp "$work/bench.test" "$out_dir/bench.test"
		echo "== $b: CPU, by cumulative time" >&2
		go tool pprof -top -cum -nodecount 30 "$out_dir/bench.test" "$out_dir/$name.cpu" 2>/dev/null | sed -n '6,40p' | cut -c1-150
		echo "== $b: allocated bytes" >&2
		go tool pprof -top -sample_index=alloc_space -nodecount 12 "$out_dir/bench.test" "$out_dir/$name.mem" 2>/dev/null | sed -n '6,20p' | cut -c1-150
	done
	echo "run.sh: profiles in $out_dir (go tool pprof $out_dir/bench.test $out_dir/<name>.cpu)" >&2
	;;
*)
	echo "usage: $0 [report|profile]" >&2
	exit 2
	;;
esac
