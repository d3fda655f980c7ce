#!/usr/bin/env bash
# A short fuzz run of every Fuzz target of the module (or of the packages
# given), one target at a time, each for $PSWAP_FUZZ_TIME (default 10s).
# The seed corpora (f.Add and testdata/fuzz) always run as part of the
# normal tests; this explores beyond them. A failure leaves its input under
# the package's testdata/fuzz/<Target>/ (commit it as a regression seed) and
# makes the script exit 1.
#
#   scripts/fuzz.sh                        # every target, 10s each
#   PSWAP_FUZZ_TIME=2m scripts/fuzz.sh ./manifest
#   PSWAP_FUZZ_TIME=500x scripts/fuzz.sh   # a fixed number of executions
#
# Each package's fuzzing test binary (coverage-instrumented, as `go test
# -fuzz` builds it) is built once, two packages at a time, and every target
# of the package runs from that binary in the package's folder with go
# test's own fuzz cache ($GOCACHE/fuzz/<import path>), so the inputs found
# interesting are kept across runs exactly as `go test -fuzz` keeps them.
# One `go test -fuzz` per target instead linked the package's binary again
# and loaded the whole module for every target.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME="${PSWAP_FUZZ_TIME:-10s}"
# The bound of one target's run, as go test's default -timeout.
TIMEOUT="${PSWAP_FUZZ_TIMEOUT:-10m}"
if (($# > 0)); then pkgs=("$@"); else pkgs=(./...); fi

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
fuzzcache="$(go env GOCACHE)/fuzz"

# The packages that have targets: "index dir importpath targets...".
declare -a pdir=() ppath=() pnames=()
while read -r dir pkg; do
	[[ -n "$dir" ]] || continue
	names="$(grep -ho '^func Fuzz[A-Za-z0-9_]*(' "$dir"/*_test.go 2>/dev/null | sed 's/^func //; s/($//' | sort -u || true)"
	[[ -n "$names" ]] || continue
	pdir+=("$dir")
	ppath+=("$pkg")
	pnames+=("$(tr "\n" " " <<<"$names")")
done < <(go list -f '{{.Dir}} {{.ImportPath}}' "${pkgs[@]}")

# Build every binary, two at a time (the machines have two cores; linking
# is mostly one thread). A package that fails to build fails its targets.
start=$SECONDS
build() { # index
	local i="$1"
	if ! go test -c -fuzz=. -o "$bin/$i.test" "${ppath[$i]}" >"$bin/$i.build.log" 2>&1; then
		rm -f "$bin/$i.test"
	fi
}
running=0
for i in "${!ppath[@]}"; do
	if ((running >= 2)); then
		wait -n || true
		running=$((running - 1))
	fi
	build "$i" &
	running=$((running + 1))
done
wait
echo "fuzz: built ${#ppath[@]} test binaries in $((SECONDS - start))s"

targets=0 failed=0 execs=0
for i in "${!ppath[@]}"; do
	pkg="${ppath[$i]}"
	for name in ${pnames[$i]}; do
		targets=$((targets + 1))
		if [[ ! -x "$bin/$i.test" ]]; then
			echo "fuzz $pkg $name: FAILED, the test binary did not build"
			tail -n 40 "$bin/$i.build.log"
			failed=$((failed + 1))
			continue
		fi
		log="$bin/run.log"
		start=$SECONDS
		# As go test runs it: in the package's folder (testdata/fuzz is
		# relative to it), with go test's fuzz cache.
		if (cd "${pdir[$i]}" && "$bin/$i.test" -test.paniconexit0 -test.timeout="$TIMEOUT" \
			-test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$FUZZTIME" \
			-test.fuzzcachedir="$fuzzcache/$pkg") >"$log" 2>&1; then
			status=ok
		elif grep -q 'context deadline exceeded' "$log" && ! grep -q -e 'Failing input written' -e '^panic:' "$log"; then
			# Go's fuzzing engine sometimes misses its own -fuzztime deadline
			# on a loaded machine (while minimising a new input) and reports
			# "context deadline exceeded" with no failing input: not a finding.
			status="ok (engine deadline)"
		else
			status=FAILED
			failed=$((failed + 1))
		fi
		# The last progress line: "fuzz: elapsed: 10s, execs: 123456 (...)".
		n="$(sed -n 's/.*execs: \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)"
		execs=$((execs + ${n:-0}))
		echo "fuzz $pkg $name: $status, ${n:-0} executions ($((SECONDS - start))s)"
		if [[ "$status" != ok* ]]; then
			tail -n 40 "$log"
		fi
	done
done

echo "fuzz: $targets targets, $execs executions, $failed failed (each for $FUZZTIME)"
((failed == 0))
