#!/usr/bin/env bash
# A soak of the deterministic simulation (internal/testing/sim): many more seeds
# than CI's, in chunks, from a random first seed unless one is given. A
# failing seed prints its shrunk trace; re-run it alone with
#   PSWAP_SIM_SEED=<seed> PSWAP_SIM_SEEDS=1 go test ./internal/testing/sim -run TestSeeds -v
# and add it to the regression table in internal/testing/sim/seeds_test.go.
#
#   scripts/sim.sh                 # 100,000 seeds from a random start
#   scripts/sim.sh 1000000 1       # a million seeds from seed 1
#   PSWAP_SIM_CHUNK=5000 scripts/sim.sh 20000
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

total="${1:-100000}"
first="${2:-$(( (RANDOM << 30 | RANDOM << 15 | RANDOM) + 1 ))}"
chunk="${PSWAP_SIM_CHUNK:-10000}"
echo "sim soak: $total seeds from $first, $chunk per chunk"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/sim.test" ./internal/testing/sim
done=0 failed=0
while ((done < total)); do
	n=$((total - done < chunk ? total - done : chunk))
	if ! PSWAP_SIM_SEED=$((first + done)) PSWAP_SIM_SEEDS=$n \
		"$bin/sim.test" -test.run '^TestSeeds$' -test.v -test.timeout 0 | grep -v '^=== RUN'; then
		failed=$((failed + 1))
	fi
	done=$((done + n))
done
echo "sim soak: $done seeds from $first, $failed failing chunks"
((failed == 0))
