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
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME="${PSWAP_FUZZ_TIME:-10s}"
if (($# > 0)); then pkgs=("$@"); else pkgs=(./...); fi

targets=0 failed=0 execs=0
while read -r dir pkg; do
	[[ -n "$dir" ]] || continue
	names="$(grep -ho '^func Fuzz[A-Za-z0-9_]*(' "$dir"/*_test.go 2>/dev/null | sed 's/^func //; s/($//' | sort -u || true)"
	for name in $names; do
		targets=$((targets + 1))
		log="$(mktemp)"
		start=$SECONDS
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
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
		if [[ "$status" != ok ]]; then
			tail -n 40 "$log"
		fi
		rm -f "$log"
	done
done < <(go list -f '{{.Dir}} {{.ImportPath}}' "${pkgs[@]}")

echo "fuzz: $targets targets, $execs executions, $failed failed (each for $FUZZTIME)"
((failed == 0))
