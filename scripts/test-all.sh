#!/usr/bin/env bash
# test-all.sh: the long test tier, what the README's `go test ./...` leaves
# out for speed. CI (.ci/run) runs it after the README's command.
#
#	scripts/test-all.sh            # everything below
#	scripts/test-all.sh long       # only the long tier (go test -tags long)
#	scripts/test-all.sh race       # only the race-detector runs
#
# The long tier (-tags long; internal/testfs/long.go) compiles in every
# differential case, the whole e2fsprogs corpus and random-mutation runs,
# the big sparse volumes and the other tests that cost minutes each; the
# default tier checks a fixed, representative sample of each (with
# GOFSCK_TEST_SAMPLE_DONE=1, after the default tier has run, the long tier
# runs only the cases outside that sample). The race
# detector runs on the packages whose goroutines share state, and on the
# command's tests that drive the parallel engine in every mode.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
what=${1:-all}

long() {
	# Only the tests with a long part: those of the _test.go files that
	# call testfs.InSample, RequireLong, Prebuilt* or Long (a test whose
	# long part lives in a helper keeps the helper in its own file). The
	# others are the same in both tiers, and the README's command has
	# run them.
	local files pkgs run
	files=$(grep -rlE 'testfs\.(InSample|RequireLong|Prebuilt[A-Za-z]*|Long)\(' --include='*_test.go' cmd internal test || true)
	pkgs=$(for f in $files; do dirname "$f"; done | sort -u | sed 's|^|./|')
	run=$(grep -hoE '^func (Test[A-Za-z0-9_]+)\(t \*testing\.T\)' $files | sed -E 's/^func (Test[A-Za-z0-9_]+).*/\1/' | sort -u | paste -sd'|')
	echo "== long tier: go test -tags long -run '^($run)\$'" $pkgs
	go test -tags long -timeout 60m -run "^($run)\$" $pkgs
}

race() {
	echo "== race detector on the packages that share state between goroutines"
	go test -race -timeout 30m ./internal/bitmap ./internal/blockdev ./internal/check ./internal/problem ./internal/journal
	# cmd/gofsck's tests run the command in process. Under the race
	# detector all of them take 10 minutes; these drive the parallel
	# engine in every mode (read-only, speculative repair, worker counts,
	# signals, undo).
	go test -race -timeout 30m -run 'Speculative|Kill|Undo|Interrupt|ProgressSignals|Threads|ReadOnlyNeverWrites|SummaryLine|Pass5Repair|Readahead' ./cmd/gofsck
}

case $what in
all) long; race ;;
long) long ;;
race) race ;;
*) echo "usage: $0 [all|long|race]" >&2; exit 2 ;;
esac
