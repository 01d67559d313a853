#!/usr/bin/env bash
# bench/run.sh: time gofsck against e2fsck on the mkworkload images.
#
# Builds the workload images that are missing from IMAGEDIR (cached there,
# one file per workload and size), builds gofsck, then for every workload
# runs `e2fsck -fn` and `gofsck -fn` alternately under /usr/bin/time -v,
# warm and/or cold cache, and prints a markdown table of medians that is
# also written to bench/RESULTS.md with a description of the machine.
# See bench/README.md.
set -uo pipefail

usage() {
	cat <<'EOF'
usage: bench/run.sh [-r runs] [-c cold|warm|both] [-w workloads] [-s scale]
                    [-n count] [-t timeout] [-o results.md] [-j jobs] [-g gofsck]
                    IMAGEDIR

  -r runs       timed runs of each program per workload and cache mode (3)
  -c mode       cold (drop caches before every run), warm (after an untimed
                warm-up run) or both (both)
  -w list       comma-separated workloads
                (zero,small,bigdir,frag-punch,frag-aged,mixed)
  -s scale      factor applied to mkworkload's default sizes (1 = the seed
                sizes: 4M inodes, 2M files, ...), or "tiny" (-n 2000)
  -n count      use this -n for every workload instead of -s
  -t seconds    kill a run after this long (3600)
  -o file       results file (bench/RESULTS.md)
  -j jobs       mkworkload -j when building images
  -g path       time this gofsck binary instead of building ./cmd/gofsck
  IMAGEDIR      where images are cached (needs room: see bench/README.md)

Must run as root: building images loop-mounts them, and cold runs write
/proc/sys/vm/drop_caches.
EOF
}

die() {
	echo "run.sh: $*" >&2
	exit 1
}

runs=3
cache=both
wlist=zero,small,bigdir,frag-punch,frag-aged,mixed
scale=1
count=
tmo=3600
jobs=
gofsck_bin=
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
results=$here/RESULTS.md

while getopts "r:c:w:s:n:t:o:j:g:h" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	c) cache=$OPTARG ;;
	w) wlist=$OPTARG ;;
	s) scale=$OPTARG ;;
	n) count=$OPTARG ;;
	t) tmo=$OPTARG ;;
	o) results=$OPTARG ;;
	j) jobs=$OPTARG ;;
	g) gofsck_bin=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { usage >&2; exit 2; }
imgdir=$1
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer"
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "-t wants a positive integer"
case $cache in
cold) modes=(cold) ;;
warm) modes=(warm) ;;
both) modes=(warm cold) ;;
*) die "-c wants cold, warm or both" ;;
esac
if [ "$scale" = tiny ]; then
	scale=1
	count=${count:-2000}
fi
[[ $scale =~ ^[0-9]*\.?[0-9]+$ ]] || die "-s wants a number or tiny"
[ -z "$count" ] || [[ $count =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer"
IFS=, read -r -a workloads <<<"$wlist"

[ "$(id -u)" -eq 0 ] || die "must run as root (images are built through a loop mount; cold runs drop the page cache)"
command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || die "go not found (needed to build gofsck and mkworkload)"
command -v e2fsck >/dev/null || die "e2fsck not found: apt-get install e2fsprogs"
if [ ! -x /usr/bin/time ]; then
	echo "run.sh: installing /usr/bin/time (package time)" >&2
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time; } >&2 ||
		die "could not install the time package"
fi
mkdir -p "$imgdir" || die "cannot create $imgdir"
imgdir=$(cd "$imgdir" && pwd)

work=$(mktemp -d /tmp/gofsck-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin"

echo "run.sh: building mkworkload, iowrap and gofsck" >&2
(cd "$repo" && go build -o "$bin/mkworkload" ./cmd/mkworkload && go build -o "$bin/iowrap" ./bench/iowrap) ||
	die "building mkworkload/iowrap failed"
gofsck_build_err=
if [ -n "$gofsck_bin" ]; then
	[ -x "$gofsck_bin" ] || die "-g $gofsck_bin: not an executable"
	ln -s "$(cd "$(dirname "$gofsck_bin")" && pwd)/$(basename "$gofsck_bin")" "$bin/gofsck"
elif ! (cd "$repo" && go build -o "$bin/gofsck" ./cmd/gofsck) >"$work/gofsck-build.log" 2>&1; then
	gofsck_build_err=$(grep -v '^#' "$work/gofsck-build.log" | head -1)
	[ -n "$gofsck_build_err" ] || gofsck_build_err="go build ./cmd/gofsck failed"
	echo "run.sh: gofsck does not build: $gofsck_build_err" >&2
fi

# Default -n of each workload, from mkworkload itself.
declare -A defcount
while read -r name n; do
	defcount[$name]=$n
done < <("$bin/mkworkload" -list)

# countfor WORKLOAD prints the -n to use.
countfor() {
	if [ -n "$count" ]; then
		echo "$count"
	else
		awk -v d="${defcount[$1]}" -v s="$scale" 'BEGIN { n = int(d * s + 0.5); if (n < 1) n = 1; print n }'
	fi
}

# Build the missing images. A partial image never gets the final name.
declare -A image summary
for w in "${workloads[@]}"; do
	[ -n "${defcount[$w]:-}" ] || die "unknown workload $w (have: ${!defcount[*]})"
	n=$(countfor "$w")
	img=$imgdir/$w-$n.img
	image[$w]=$img
	if [ ! -s "$img" ] || [ ! -s "$img.summary" ]; then
		echo "run.sh: building $img" >&2
		rm -f "$img" "$img.summary"
		if ! "$bin/mkworkload" -w "$w" -n "$n" -o "$img.partial" ${jobs:+-j "$jobs"} >"$img.summary.partial"; then
			rm -f "$img.partial" "$img.summary.partial"
			die "mkworkload -w $w -n $n failed"
		fi
		mv "$img.partial" "$img" && mv "$img.summary.partial" "$img.summary"
	fi
	summary[$w]=$(sed "s|$img.partial|$img|" "$img.summary")
done

# runone PROG IMAGE TAG: one timed run; appends "wall cpu rss_kb rchar read_bytes rc"
# to $work/TAG.PROG and keeps the output of failed runs in $work/TAG.PROG.out.
runone() {
	local prog=$1 img=$2 tag=$3 exe
	exe=$(command -v e2fsck)
	if [ "$prog" = gofsck ]; then
		if [ -n "$gofsck_build_err" ]; then
			echo "- - - - - build" >>"$work/$tag.$prog"
			return
		fi
		exe=$bin/gofsck
	fi
	local t0 t1 rc
	rm -f "$work/io" "$work/time"
	t0=$EPOCHREALTIME
	/usr/bin/time -v -o "$work/time" timeout -s KILL "$tmo" \
		"$bin/iowrap" -o "$work/io" "$exe" -fn "$img" >"$work/out" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	local cpu rss rchar rbytes
	cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.3f", u + s }' "$work/time")
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
	rchar=$(awk '/^rchar:/ { print $2 }' "$work/io" 2>/dev/null)
	rbytes=$(awk '/^read_bytes:/ { print $2 }' "$work/io" 2>/dev/null)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${cpu:--} ${rss:--} ${rchar:--} ${rbytes:--} $rc" >>"$work/$tag.$prog"
	if [ "$rc" -ne 0 ] && [ ! -s "$work/$tag.$prog.out" ]; then
		cp "$work/out" "$work/$tag.$prog.out"
	fi
}

dropcaches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# median COLUMN FILE: median of a numeric column, "-" if none.
median() {
	awk -v c="$1" '$c != "-" { print $c }' "$2" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# mib VALUE DIVISOR: VALUE/DIVISOR with one decimal, or "-".
mib() {
	[ "$1" = - ] && { echo -; return; }
	awk -v v="$1" -v d="$2" 'BEGIN { printf "%.1f", v / d }'
}

# failnote PROG TAG: describe non-zero exits, if any.
failnote() {
	local f=$work/$2.$1 bad total first
	total=$(wc -l <"$f")
	if grep -q ' build$' "$f"; then
		echo "$1 not built: $gofsck_build_err"
		return
	fi
	bad=$(awk '$6 != 0' "$f" | wc -l)
	[ "$bad" -eq 0 ] && return
	first=$(awk '$6 != 0 { print $6; exit }' "$f")
	local msg=
	case $first in
	137) msg="killed after ${tmo}s or by signal 9" ;;
	*) [ -s "$f.out" ] && msg=$(grep -v '^[[:space:]]*$' "$f.out" | head -1 | cut -c1-80) ;;
	esac
	msg=${msg//|/\\|}
	echo "**$1 exit $first in $bad/$total runs**${msg:+: $msg}"
}

rows=()
for w in "${workloads[@]}"; do
	img=${image[$w]}
	for mode in "${modes[@]}"; do
		tag=$w.$mode
		: >"$work/$tag.e2fsck"
		: >"$work/$tag.gofsck"
		echo "run.sh: $w, $mode cache, $runs runs" >&2
		if [ "$mode" = warm ]; then
			runone e2fsck "$img" warmup
			runone gofsck "$img" warmup
		fi
		for ((r = 1; r <= runs; r++)); do
			order="e2fsck gofsck"
			((r % 2 == 0)) && order="gofsck e2fsck"
			for prog in $order; do
				[ "$mode" = cold ] && dropcaches
				runone "$prog" "$img" "$tag"
			done
		done
		e=$work/$tag.e2fsck g=$work/$tag.gofsck
		ratio=$(paste -d' ' "$e" "$g" | awk '$1 != "-" && $7 != "-" && $7 > 0 { print $1 / $7 }' | sort -g |
			awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		notes=$(for p in e2fsck gofsck; do failnote $p "$tag"; done | paste -sd';' | sed 's/;/; /g')
		n=${img##*-}
		n=${n%.img}
		rows+=("| $w | $n | $mode | $(median 1 "$e") | $(median 1 "$g") | $ratio | $(median 2 "$e") | $(median 2 "$g") | $(mib "$(median 3 "$e")" 1024) | $(mib "$(median 3 "$g")" 1024) | $(mib "$(median 4 "$e")" 1048576) | $(mib "$(median 4 "$g")" 1048576) | $(mib "$(median 5 "$e")" 1048576) | $(mib "$(median 5 "$g")" 1048576) | ${notes:-ok} |")
	done
done

# Machine description.
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
src=$(findmnt -no SOURCE -T "$imgdir" 2>/dev/null | head -1)
fstype=$(findmnt -no FSTYPE -T "$imgdir" 2>/dev/null | head -1)
disk=$src
if [ -b "$src" ]; then
	parent=$(lsblk -no PKNAME "$src" 2>/dev/null | head -1)
	dev=/dev/${parent:-$(basename "$src")}
	model=$(lsblk -dno MODEL "$dev" 2>/dev/null | sed 's/ *$//')
	size=$(lsblk -dno SIZE "$dev" 2>/dev/null | tr -d ' ')
	rota=$(lsblk -dno ROTA "$dev" 2>/dev/null | tr -d ' ')
	case $rota in 0) kind=non-rotational ;; 1) kind=rotational ;; *) kind="rotational=?" ;; esac
	disk="$dev ($fstype on $src, ${model:-no model}, $size, $kind)"
fi
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

{
	echo "# gofsck benchmark results"
	echo
	echo "Latest \`bench/run.sh\` run, $(date -u '+%Y-%m-%d %H:%M UTC'); repo at $commit."
	echo
	echo "- CPU: $(nproc) × $cpu"
	echo "- Memory: $mem"
	echo "- Kernel: $(uname -r)"
	echo "- Images on: $disk, directory $imgdir"
	echo "- e2fsck: $(e2fsck -V 2>&1 | head -1)"
	echo "- $(go version)"
	if [ -n "$count" ]; then size="-n $count"; else size="scale $scale"; fi
	echo "- Settings: $runs runs per program, cache: ${modes[*]}, $size, timeout ${tmo}s, gofsck ${gofsck_bin:-built from the repo}"
	echo
	echo "| workload | n | cache | e2fsck s | gofsck s | ratio e2fsck/gofsck | e2fsck user+sys s | gofsck user+sys s | e2fsck RSS MiB | gofsck RSS MiB | e2fsck read MiB | gofsck read MiB | e2fsck disk MiB | gofsck disk MiB | notes |"
	echo "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Medians over the runs; ratio is the median of per-run e2fsck/gofsck wall-time ratios (runs alternate which program goes first)."
	echo "read MiB is rchar (bytes read through syscalls, cached or not); disk MiB is read_bytes (what the block layer fetched: the cold-cache metadata read)."
	echo "Both read columns come from /proc/PID/io via bench/iowrap; wall time is measured around the run, CPU and RSS by /usr/bin/time -v."
	echo "Exit codes other than 0 on these clean images are flagged in notes."
	echo
	echo "Images (mkworkload summary lines):"
	echo
	echo '```'
	for w in "${workloads[@]}"; do
		echo "${summary[$w]}"
	done
	echo '```'
} >"$work/results.md"

cat "$work/results.md"
mkdir -p "$(dirname "$results")" && cp "$work/results.md" "$results" && echo "run.sh: wrote $results" >&2
