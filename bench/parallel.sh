#!/usr/bin/env bash
# bench/parallel.sh: how much of each pass runs in parallel, and what that
# projects for 8, 32 and 64 CPUs (bench/amdahl).
#
#	bench/parallel.sh [-g gofsck] IMAGE...
#
# For each image: one untimed warm-up run, then `gofsck -fn -E json=...`
# (the report's per-pass CPU time and serial_seconds, the CPU time of the
# check's own goroutine), then the projection table. The CPU times do not
# depend on how busy the machine is; the wall times and "busy CPUs" do.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
gofsck=
if [ "${1:-}" = -g ]; then
	gofsck=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: bench/parallel.sh [-g gofsck] IMAGE..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$gofsck" ]; then
	(cd "$repo" && go build -o "$tmp/gofsck" ./cmd/gofsck)
	gofsck=$tmp/gofsck
fi
(cd "$repo" && go build -o "$tmp/amdahl" ./bench/amdahl)
reports=()
for img in "$@"; do
	name=$(basename "$img" .img)
	"$gofsck" -fn "$img" >/dev/null 2>&1 || true
	"$gofsck" -fn -E json="$tmp/$name.json" "$img" >/dev/null 2>&1 || true
	reports+=("$tmp/$name.json")
done
"$tmp/amdahl" "${reports[@]}"
