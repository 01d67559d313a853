#!/bin/sh
# fuzz-campaign.sh runs a differential metadata-fuzzing campaign of gofsck
# against the installed e2fsck (cmd/e2fuzzgo campaign), single-process and
# niced, for as long as asked.
#
#	scripts/fuzz-campaign.sh [DURATION] [OUTDIR] [FIRST-SEED]
#
# DURATION is a Go duration (default 30m). Disagreements are kept in
# OUTDIR/regress/SET-sSEED-bBYTES.img.gz (+ .txt transcripts) and
# OUTDIR/classes.tsv; the totals and classes are printed at the end.
set -eu
cd "$(dirname "$0")/.."
dur=${1:-30m}
out=${2:-fuzz-campaign}
seed=${3:-1}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/gofsck" ./cmd/gofsck
go build -o "$bin/e2fuzzgo" ./cmd/e2fuzzgo
exec nice -n 10 "$bin/e2fuzzgo" campaign -dur "$dur" -out "$out" -seed "$seed" -gofsck "$bin/gofsck"
