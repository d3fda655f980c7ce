#!/usr/bin/env bash
# A short fuzz run of every Fuzz target of the module (or of the packages
# given), each for $PSWAP_FUZZ_TIME (default 10s) with one worker, two
# targets of two packages at a time ($PSWAP_FUZZ_JOBS).
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
# -fuzz` builds it) is built once, and every target of the package runs
# from that binary in the package's folder with go
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

# One job per package, $PSWAP_FUZZ_JOBS (default 2: the machines have two
# cores) at a time: build the package's binary, then run its targets one
# after another, each with one fuzzing worker. Two one-worker targets at
# once explore as much per second as one two-worker target, while one
# job's link or a target's start-up (reading its corpus, gathering its
# baseline coverage) overlaps the other's fuzzing. A package that fails to
# build fails its targets. Each job's lines are printed when it ends.
JOBS="${PSWAP_FUZZ_JOBS:-2}"
# No DWARF in the binaries: links take a quarter less CPU, and panics and
# failures still print their stacks (the runtime's own tables).
LDFLAGS="-w"
fuzz_package() { # index
	local i="$1" pkg="${ppath[$1]}" name log start status n out="$bin/$1.out" res="$bin/$1.res"
	start=$SECONDS
	if ! go test -c -fuzz=. -ldflags="$LDFLAGS" -o "$bin/$i.test" "$pkg" >"$bin/$i.build.log" 2>&1; then
		rm -f "$bin/$i.test"
	fi
	echo "fuzz $pkg: built in $((SECONDS - start))s" >"$out"
	: >"$res"
	for name in ${pnames[$i]}; do
		if [[ ! -x "$bin/$i.test" ]]; then
			{
				echo "fuzz $pkg $name: FAILED, the test binary did not build"
				tail -n 40 "$bin/$i.build.log"
			} >>"$out"
			echo "1 0" >>"$res"
			continue
		fi
		log="$bin/$i.run.log"
		start=$SECONDS
		# As go test runs it: in the package's folder (testdata/fuzz is
		# relative to it), with go test's fuzz cache.
		if (cd "${pdir[$i]}" && "$bin/$i.test" -test.paniconexit0 -test.timeout="$TIMEOUT" \
			-test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$FUZZTIME" -test.parallel=1 \
			-test.fuzzcachedir="$fuzzcache/$pkg") >"$log" 2>&1; then
			status=ok
		elif grep -q 'context deadline exceeded' "$log" && ! grep -q -e 'Failing input written' -e '^panic:' "$log"; then
			# Go's fuzzing engine sometimes misses its own -fuzztime deadline
			# on a loaded machine (while minimising a new input) and reports
			# "context deadline exceeded" with no failing input: not a finding.
			status="ok (engine deadline)"
		else
			status=FAILED
		fi
		# The last progress line: "fuzz: elapsed: 10s, execs: 123456 (...)".
		n="$(sed -n 's/.*execs: \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)"
		echo "fuzz $pkg $name: $status, ${n:-0} executions ($((SECONDS - start))s)" >>"$out"
		if [[ "$status" != ok* ]]; then
			tail -n 40 "$log" >>"$out"
			echo "1 ${n:-0}" >>"$res"
		else
			echo "0 ${n:-0}" >>"$res"
		fi
	done
	rm -f "$bin/$i.test"
	cat "$out"
}

start=$SECONDS
running=0
for i in "${!ppath[@]}"; do
	if ((running >= JOBS)); then
		wait -n || true
		running=$((running - 1))
	fi
	fuzz_package "$i" &
	running=$((running + 1))
done
wait

targets=0 failed=0 execs=0
for i in "${!ppath[@]}"; do
	while read -r f n; do
		targets=$((targets + 1))
		failed=$((failed + f))
		execs=$((execs + n))
	done <"$bin/$i.res"
done

echo "fuzz: $targets targets in ${#ppath[@]} packages, $execs executions, $failed failed (each for $FUZZTIME, $JOBS at a time, in $((SECONDS - start))s)"
((failed == 0))
