#!/usr/bin/env bash
# bench/seed.sh: the first seed thread's workload, checked by e2fsck, the
# pfsck branch's e2fsck -m 2 and gofsck, warm and cold.
#
#	bench/seed.sh [-r runs] [-p PFSCK-E2FSCK] [-g gofsck] IMAGE
#
# IMAGE is made by `mkworkload -w seed` (-n 45600000 is the seed's own
# 45.6M files on 1 TiB; bench/README.md says how long it takes). For
# each program: a warm-up run, RUNS warm runs, then RUNS cold runs
# (page cache dropped before each), every run `-fn -t -t` under
# /usr/bin/time -v and bench/iowrap. It prints a markdown table of
# medians (wall, user+sys, peak RSS, bytes read through syscalls and from
# the disk) and, for each program, the -t -t per-pass lines of its last
# warm run. pfsck is skipped when -p is not given. Root: drop_caches.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
runs=3 pfsck= gofsck=
while getopts "r:p:g:" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	p) pfsck=$OPTARG ;;
	g) gofsck=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: bench/seed.sh [-r runs] [-p pfsck-e2fsck] [-g gofsck] IMAGE" >&2; exit 2; }
img=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/iowrap" ./bench/iowrap) || exit 1
if [ -z "$gofsck" ]; then
	(cd "$repo" && go build -o "$work/gofsck" ./cmd/gofsck) || exit 1
	gofsck=$work/gofsck
fi
command -v /usr/bin/time >/dev/null || apt-get install -y -qq time >/dev/null

progs=(e2fsck gofsck)
declare -A cmdline=([e2fsck]="$(command -v e2fsck)" [gofsck]="$gofsck")
if [ -n "$pfsck" ]; then
	progs=(e2fsck pfsck gofsck)
	cmdline[pfsck]="$pfsck -m 2"
fi

# runone PROG TAG: appends "wall cpu rss_kb rchar read_bytes rc" to $work/TAG.PROG.
runone() {
	local prog=$1 tag=$2 t0 t1 rc
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086 # cmdline holds the program and its options
	/usr/bin/time -v -o "$work/time" "$work/iowrap" -o "$work/io" ${cmdline[$prog]} -fn -t -t "$img" >"$work/$prog.out" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" -v rc="$rc" -F': ' '
		/User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { m = $2 }
		END { printf "%.3f %.3f %s", b - a, u + s, m }' "$work/time" >>"$work/$tag.$prog"
	awk -v rc="$rc" '/^rchar:/ { r = $2 } /^read_bytes:/ { d = $2 } END { printf " %s %s %s\n", r, d, rc }' "$work/io" >>"$work/$tag.$prog"
}

median() {
	awk -v c="$1" '{ print $c }' "$2" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for prog in "${progs[@]}"; do
	runone "$prog" warmup
	for ((r = 1; r <= runs; r++)); do runone "$prog" warm; done
	cp "$work/$prog.out" "$work/$prog.warm.out"
	for ((r = 1; r <= runs; r++)); do
		sync
		echo 3 >/proc/sys/vm/drop_caches
		runone "$prog" cold
	done
done

echo "image: $img ($(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count|^Free inodes/ { gsub(/ /, "", $2); v[NR] = $2 } END { for (k in v) s = s " " v[k]; print s }' | awk '{ print $1 - $2 " of " $1 " inodes used" }'))"
echo
echo "| program | cache | wall s | e2fsck/this | user+sys s | peak RSS MiB | read MiB | disk MiB | exit |"
echo "|---|---|--:|--:|--:|--:|--:|--:|--:|"
for mode in warm cold; do
	base=$(median 1 "$work/$mode.e2fsck")
	for prog in "${progs[@]}"; do
		f=$work/$mode.$prog
		wall=$(median 1 "$f")
		echo "| ${cmdline[$prog]##*/} | $mode | $wall | $(awk -v a="$base" -v b="$wall" 'BEGIN { printf "%.2f", a / b }') | $(median 2 "$f") | $(awk -v v="$(median 3 "$f")" 'BEGIN { printf "%.1f", v / 1024 }') | $(awk -v v="$(median 4 "$f")" 'BEGIN { printf "%.0f", v / 1048576 }') | $(awk -v v="$(median 5 "$f")" 'BEGIN { printf "%.0f", v / 1048576 }') | $(awk '{ print $6 }' "$f" | sort -u | paste -sd,) |"
	done
done
for prog in "${progs[@]}"; do
	echo
	echo "${cmdline[$prog]##*/} -t -t, last warm run:"
	echo '```'
	grep -E '^(Pass [0-9A-Za-z]+: |Peak memory|Memory used|I/O read|Parallel)' "$work/$prog.warm.out"
	echo '```'
done
