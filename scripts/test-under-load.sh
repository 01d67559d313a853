#!/usr/bin/env bash
# test-under-load.sh: the README's test command while every CPU is kept
# busy by other programs, as on a shared build machine or a laptop in use.
# A test that passes idle and fails here has a wall-clock verdict or a
# race with the scheduler: a defect.
#
#	scripts/test-under-load.sh [RUNS]     # default 1 run
#
# The load is one busy loop per CPU (nproc), at the same priority as the
# tests. Each run starts from an empty test cache (go test -count=1) but
# keeps the build cache. It prints each run's verdict and time, and exits
# non-zero if any run failed. go test's own -timeout only catches a hang;
# TEST_TIMEOUT (default 45m, the README's) raises it when the machine is
# busier still than the loops make it.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
runs=${1:-1}
cpus=$(nproc)

pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
for _ in $(seq "$cpus"); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
echo "== $cpus busy loops running (pids ${pids[*]})"

failed=0
for r in $(seq "$runs"); do
	start=$(date +%s)
	log=$(mktemp)
	if go test -count=1 -timeout "${TEST_TIMEOUT:-45m}" ./... >"$log" 2>&1; then
		verdict=passed
	else
		verdict=FAILED
		failed=$((failed + 1))
		grep -E '^(--- FAIL|FAIL|panic)' "$log" | head -40
		echo "   (whole log: $log)"
	fi
	echo "== run $r of $runs: $verdict in $(( $(date +%s) - start )) s"
	[ "$verdict" = passed ] && rm -f "$log"
done
echo "$((runs - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
