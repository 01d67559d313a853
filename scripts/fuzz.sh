#!/bin/sh
# fuzz.sh runs every fuzz target of gofsck for a given duration each.
#
#	scripts/fuzz.sh [DURATION] [TARGET-REGEXP]
#
# DURATION is a go test -fuzztime value (default 1m; "30s", "10m", "5000x").
# TARGET-REGEXP selects targets by name (default: all). Extra flags for go
# test can be passed in FUZZFLAGS, e.g. FUZZFLAGS="-parallel 2".
#
# CI runs only the seed corpora (plain `go test ./...`). A crasher is
# written by go test under the package's testdata/fuzz/TARGET/; turn it into
# a named regression input (style rule 10): for FuzzCheck, a compressed
# image in internal/check/testdata/regress/NAME.img.gz that TestRegressions
# runs; for the decoders, a small named file under testdata/fuzz/TARGET/.
#
# FuzzCheck's and FuzzRepair's inputs are ~100 KiB (the metadata blocks of a small image), so
# minimising them is slow: it runs with -fuzzminimizetime 0 unless
# FUZZMINIMIZE is set.
set -eu
cd "$(dirname "$0")/.."
dur=${1:-1m}
sel=${2:-.}
status=0
log=$(mktemp)
# Every func FuzzXxx in a _test.go file of the module, as pkg:Name.
targets=$(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(' cmd internal |
	sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+)\($|\1:\2|' | sort -u)
for t in $targets; do
	pkg=${t%%:*}
	name=${t#*:}
	echo "$name" | grep -Eq -- "$sel" || continue
	min=
	if { [ "$name" = FuzzCheck ] || [ "$name" = FuzzRepair ]; } && [ -z "${FUZZMINIMIZE:-}" ]; then
		min="-fuzzminimizetime 0"
	fi
	echo "=== $pkg $name ($dur)"
	# go test's fuzzing coordinator can fail a target with a bare "context
	# deadline exceeded" when -fuzztime ends while a worker is between
	# inputs; no input failed then, and none is written. Such a run is
	# repeated, up to three times (a slow target, a few hundred inputs a
	# second on a loaded machine, meets it often enough that one repeat
	# leaves CI a chance to fail); a real failure names its input
	# ("Failing input written to ...") and fails the script at once.
	try=1
	while :; do
		# shellcheck disable=SC2086
		if go test "./$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$dur" $min ${FUZZFLAGS:-} >"$log" 2>&1; then
			cat "$log"
			break
		fi
		cat "$log"
		if [ $try -lt 4 ] && grep -q 'context deadline exceeded' "$log" &&
			! grep -q 'Failing input written to' "$log"; then
			echo "=== $pkg $name: fuzzing harness deadline race, no failing input; running again"
			try=$((try + 1))
			continue
		fi
		status=1
		break
	done
done
rm -f "$log"
exit $status
