#!/usr/bin/env bash
# bench/slowdev.sh: e2fsck -fn against gofsck -fn on a slow device, cold cache.
#
# bench/run.sh's cold runs drop the page cache, but the image file's own
# device is fast, so they mostly measure CPU. Here every workload image is
# served by nbdkit's file plugin behind its delay filter (each read waits
# the latency, -l) and exposed as a file by nbdfuse. The device serves at
# most DEPTH reads at once (-q), the stats filter counts the reads that
# reach it, and the page cache is dropped before every run. For each image
# and depth the script runs e2fsck -fn, gofsck -fn and optionally the pfsck
# branch's e2fsck -m 2 -fn on the FUSE file, and prints a markdown table of
# medians that is also written to bench/RESULTS-slowdev.md.
# See bench/README.md ("Slow device").
set -uo pipefail

usage() {
	cat <<'EOF'
usage: bench/slowdev.sh [-r runs] [-w workloads] [-q depths] [-l latency]
                        [-g gofsck] [-p pfsck-e2fsck] [-t timeout]
                        [-T tracedir] [-o results.md] IMAGEDIR

  -r runs       timed runs of each program per image and depth (1)
  -w list       comma-separated workloads (small,zero,frag-aged,bigdir,mixed,empty);
                workload W is IMAGEDIR/W.img or the one IMAGEDIR/W-*.img
  -q depths     comma-separated device queue depths (1,8,32): how many reads
                the device serves at once; 1 is nbdkit's noparallel filter
  -l latency    what every read waits at the device, as nbdkit's delay filter
                takes it: SECS or NNms (1ms)
  -g path       gofsck binary (default: build ./cmd/gofsck)
  -p path       also run this e2fsck as "e2fsck -m 2 -fn" (the pfsck branch)
  -t seconds    kill a run after this long (1800)
  -T dir        after the timed runs of each image and depth, one more run
                of e2fsck and of gofsck under strace (cmd/iowatch -r), untimed:
                their reads are saved as DIR/W-qDEPTH-PROG.iotrace and drawn
                overlaid in DIR/W-qDEPTH.svg (needs strace)
  -o file       results file (bench/RESULTS-slowdev.md)
  IMAGEDIR      where the images are (see bench/README.md for building them)

Needs root (FUSE mount, drop_caches, /sys/fs/fuse), nbdkit, nbdfuse and
fusermount3 (apt-get install nbdkit libnbd-bin fuse3) and a C compiler for
bench/fusethreads.c.
EOF
}

die() {
	echo "slowdev.sh: $*" >&2
	exit 1
}

runs=1
wlist=small,zero,frag-aged,bigdir,mixed,empty
qlist=1,8,32
lat=1ms
gofsck_bin=
pfsck=
tmo=1800
tracedir=
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
results=$here/RESULTS-slowdev.md

while getopts "r:w:q:l:g:p:t:T:o:h" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	w) wlist=$OPTARG ;;
	q) qlist=$OPTARG ;;
	l) lat=$OPTARG ;;
	g) gofsck_bin=$OPTARG ;;
	p) pfsck=$OPTARG ;;
	t) tmo=$OPTARG ;;
	o) results=$OPTARG ;;
	T) tracedir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { usage >&2; exit 2; }
imgdir=$1
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer"
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "-t wants a positive integer"
[[ $lat =~ ^[0-9]+(\.[0-9]+)?(ms)?$ ]] || die "-l wants SECS or NNms, as nbdkit's delay filter takes it"
IFS=, read -r -a workloads <<<"$wlist"
IFS=, read -r -a depths <<<"$qlist"
for q in "${depths[@]}"; do
	[[ $q =~ ^[1-9][0-9]*$ ]] || die "-q wants positive integers"
done
[ -d "$imgdir" ] || die "$imgdir: not a directory"
imgdir=$(cd "$imgdir" && pwd)

[ "$(id -u)" -eq 0 ] || die "must run as root (FUSE mount, drop_caches, /sys/fs/fuse)"
for t in nbdkit nbdfuse fusermount3; do
	command -v "$t" >/dev/null || die "$t not found: apt-get install nbdkit libnbd-bin fuse3"
done
command -v e2fsck >/dev/null || die "e2fsck not found: apt-get install e2fsprogs"
command -v cc >/dev/null || die "no C compiler for bench/fusethreads.c: apt-get install gcc"
if [ ! -x /usr/bin/time ]; then
	echo "slowdev.sh: installing /usr/bin/time (package time)" >&2
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time; } >&2 ||
		die "could not install the time package"
fi
[ -z "$pfsck" ] || [ -x "$pfsck" ] || die "-p $pfsck: not an executable"
[ -z "$gofsck_bin" ] || [ -x "$gofsck_bin" ] || die "-g $gofsck_bin: not an executable"
if [ -n "$tracedir" ]; then
	command -v strace >/dev/null || die "-T needs strace: apt-get install strace"
	mkdir -p "$tracedir" || die "cannot make $tracedir"
	tracedir=$(cd "$tracedir" && pwd)
fi

# Find the images before starting anything.
declare -A image
for w in "${workloads[@]}"; do
	if [ -e "$imgdir/$w.img" ]; then
		image[$w]=$imgdir/$w.img
		continue
	fi
	shopt -s nullglob
	m=("$imgdir/$w"-*.img)
	shopt -u nullglob
	[ ${#m[@]} -eq 1 ] || die "workload $w: want $imgdir/$w.img or one $imgdir/$w-*.img, found ${#m[@]}"
	image[$w]=${m[0]}
done

work=$(mktemp -d /tmp/gofsck-slowdev.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt" "$work/bin"
nbdkit_pid='' nbdfuse_pid='' prog_pid='' fusectl_mounted=''

# teardown unmounts the FUSE file and stops nbdkit; safe to call twice.
teardown() {
	if [ -n "$prog_pid" ]; then
		kill -TERM "$prog_pid" 2>/dev/null
		wait "$prog_pid" 2>/dev/null
		prog_pid=
	fi
	# /proc/mounts, not mountpoint(1): a FUSE mount whose server died
	# fails stat with ENOTCONN but must still be unmounted.
	if awk -v m="$mnt" '$2 == m { found = 1 } END { exit !found }' /proc/mounts; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt"
	fi
	local pid i
	for pid in "$nbdfuse_pid" "$nbdkit_pid"; do
		[ -n "$pid" ] || continue
		# nbdfuse exits once unmounted, nbdkit (exitlast filter) once its
		# last client has gone and the stats file is written.
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -TERM "$pid" 2>/dev/null && sleep 0.5 && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	nbdfuse_pid='' nbdkit_pid=''
}

cleanup() {
	teardown
	[ -n "$fusectl_mounted" ] && umount /sys/fs/fuse/connections 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "slowdev.sh: interrupted" >&2; exit 130' INT TERM HUP

if ! mountpoint -q /sys/fs/fuse/connections; then
	mount -t fusectl none /sys/fs/fuse/connections || die "cannot mount fusectl on /sys/fs/fuse/connections"
	fusectl_mounted=1
fi

if [ -n "$gofsck_bin" ]; then
	echo "slowdev.sh: building fusethreads.so" >&2
else
	echo "slowdev.sh: building fusethreads.so and gofsck" >&2
fi
cc -O2 -shared -fPIC -o "$work/bin/fusethreads.so" "$here/fusethreads.c" -ldl || die "building bench/fusethreads.c failed"
if [ -n "$gofsck_bin" ]; then
	gofsck_exe=$(cd "$(dirname "$gofsck_bin")" && pwd)/$(basename "$gofsck_bin")
else
	command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
	(cd "$repo" && go build -o "$work/bin/gofsck" ./cmd/gofsck) || die "go build ./cmd/gofsck failed"
	gofsck_exe=$work/bin/gofsck
fi
if [ -n "$tracedir" ]; then
	command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
	(cd "$repo" && go build -o "$work/bin/iowatch" ./cmd/iowatch) || die "go build ./cmd/iowatch failed"
fi

progs=(e2fsck gofsck)
[ -n "$pfsck" ] && progs=(e2fsck pfsck gofsck)

# connections DEPTH: nbdfuse -C value. nbdfuse 1.14 spreads requests
# round-robin over all but the last of its connections, so DEPTH+1 gives
# DEPTH in use, one read each when the device is full.
connections() {
	if [ "$1" -eq 1 ]; then echo 1; else echo $(($1 + 1)); fi
}

# deviceup IMAGE DEPTH: serve IMAGE as $mnt/NAME; sets dev to that path.
deviceup() {
	local img=$1 q=$2 name i
	name=$(basename "$img")
	rm -f "$work/sock" "$work/stats" "$work/nbdkit.pid" "$work/nbdfuse.pid"
	local -a filters=(--filter=exitlast) params=()
	if [ "$q" -eq 1 ]; then
		filters+=(--filter=noparallel)
		params+=(serialize=all-requests)
	fi
	# First --filter is outermost: the stats filter sits inside the
	# serialisation and outside the delay, so it times each read as the
	# device serves it.
	filters+=(--filter=stats --filter=delay)
	nbdkit -f -r -U "$work/sock" -P "$work/nbdkit.pid" "${filters[@]}" \
		file "$img" rdelay="$lat" statsfile="$work/stats" "${params[@]}" >"$work/nbdkit.log" 2>&1 &
	nbdkit_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$work/nbdkit.pid" ] && break
		kill -0 "$nbdkit_pid" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$work/nbdkit.pid" ] || { cat "$work/nbdkit.log" >&2; die "nbdkit did not start"; }
	LD_PRELOAD=$work/bin/fusethreads.so FUSE_MAX_THREADS=$q \
		nbdfuse -r -C "$(connections "$q")" -P "$work/nbdfuse.pid" "$mnt/$name" --unix "$work/sock" \
		>"$work/nbdfuse.log" 2>&1 &
	nbdfuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$work/nbdfuse.pid" ] && break
		kill -0 "$nbdfuse_pid" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$work/nbdfuse.pid" ] || { cat "$work/nbdfuse.log" >&2; die "nbdfuse did not mount"; }
	grep -q "^fusethreads: max_threads=$q\$" "$work/nbdfuse.log" ||
		{ cat "$work/nbdfuse.log" >&2; die "bench/fusethreads.c was not used by nbdfuse"; }
	# The FUSE worker threads are the only queue limit: let the kernel
	# queue as many background reads (readahead) as it likes and never
	# drop readahead as congested.
	local majmin major minor
	majmin=$(mountpoint -d "$mnt") || die "$mnt is not mounted"
	major=${majmin%:*} minor=${majmin#*:}
	fuseconn=/sys/fs/fuse/connections/$(((major << 20) | minor))
	if ! echo 256 >"$fuseconn/max_background" || ! echo 256 >"$fuseconn/congestion_threshold"; then
		die "cannot set $fuseconn/max_background"
	fi
	readahead_kb=$(cat "/sys/class/bdi/$majmin/read_ahead_kb" 2>/dev/null || echo "?")
	dev=$mnt/$name
}

# statsline: "reads bytes seconds" from the stats filter's file ("- - -"
# without one).
statsline() {
	[ -s "$work/stats" ] || { echo "- - -"; return; }
	awk '
	/^read:/ {
		v = $6; u = $7; sub(/,$/, "", u)
		m = 1
		if (u == "KiB") m = 1024; else if (u == "MiB") m = 1048576
		else if (u == "GiB") m = 1073741824; else if (u == "TiB") m = 1099511627776
		printf "%d %.0f %s\n", $2, v * m, $4; found = 1
	}
	END { if (!found) print "0 0 0" }' "$work/stats"
}

# runone PROG IMAGE DEPTH OUT: one cold run on a fresh device; appends
# "wall rss_kb reads bytes busy_s rc cpu_s" to OUT and keeps the transcript
# (version banner removed) in OUT.transcript.
runone() {
	local prog=$1 img=$2 q=$3 out=$4 t0 t1 rc
	local -a cmd
	deviceup "$img" "$q"
	case $prog in
	e2fsck) cmd=(e2fsck -fn "$dev") ;;
	pfsck) cmd=("$pfsck" -m 2 -fn "$dev") ;;
	gofsck) cmd=("$gofsck_exe" -fn "$dev") ;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
	rm -f "$work/time"
	t0=$EPOCHREALTIME
	# timeout is outermost: it runs in a process group of its own, and on
	# SIGTERM (teardown) or expiry it signals the whole group.
	timeout -s KILL "$tmo" /usr/bin/time -v -o "$work/time" "${cmd[@]}" >"$work/out" 2>&1 </dev/null &
	prog_pid=$!
	wait "$prog_pid"
	rc=$?
	t1=$EPOCHREALTIME
	prog_pid=
	teardown
	grep -v -E -e '^(e2fsck|gofsck) [0-9]' -e 'Using EXT2FS Library' -e '^\[Thread [0-9]+\] Scan' "$work/out" >"$out.transcript"
	[ "$rc" -eq 0 ] || cp "$work/out" "$out.fail"
	local rss
	local rss cpu
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time" 2>/dev/null)
	cpu=$(awk -F': ' '/User time/ { u = $2; n++ } /System time/ { s = $2; n++ } END { if (n == 2) printf "%.2f", u + s }' "$work/time" 2>/dev/null)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${rss:--} $(statsline) $rc ${cpu:--}" >>"$out"
}

# traceone PROG IMAGE DEPTH OUT: an untimed cold run of PROG under strace,
# its reads of the device saved as the iotrace file OUT.
traceone() {
	local prog=$1 img=$2 q=$3 out=$4
	deviceup "$img" "$q"
	local c
	case $prog in
	e2fsck) c="e2fsck -fn $dev" ;;
	gofsck) c="$gofsck_exe -fn $dev" ;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
	"$work/bin/iowatch" -o "$work/trace.svg" -w "$out" -d "$dev" -r "$c" >"$work/trace.log" 2>&1 ||
		{ cat "$work/trace.log" >&2; echo "slowdev.sh: tracing $prog failed" >&2; }
	# The legend: the program, not the temporary mount point.
	[ -s "$out" ] && sed -i "s|^# name .*|# name $prog -fn|" "$out"
	teardown
}

# median COLUMN FILE [FORMAT]: median of a numeric column, "-" if none.
median() {
	awk -v c="$1" '$c != "-" { print $c }' "$2" | sort -g |
		awk -v f="${3:-%.2f}" '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf f "\n", v[(NR + 1) / 2]; else printf f "\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# column FILE WHAT: median over the runs of cpu (user+sys s), reads, mib
# (read MiB), kib (KiB per read), ms (device ms per read), inflight (device
# busy time / wall) or rss (MiB), from the fields wall=$1 rss=$2 reads=$3
# bytes=$4 busy=$5 cpu=$7.
column() {
	awk -v what="$2" '$3 != "-" {
		if (what == "cpu") v = $7
		else if (what == "reads") v = $3
		else if (what == "mib") v = $4 / 1048576
		else if (what == "kib") v = $3 > 0 ? $4 / $3 / 1024 : 0
		else if (what == "ms") v = $3 > 0 ? $5 / $3 * 1000 : 0
		else if (what == "inflight") v = $1 > 0 ? $5 / $1 : 0
		else if (what == "rss") v = $2 == "-" ? "-" : $2 / 1024
		print v
	}' "$1" >"$work/col"
	local f=%.0f
	case $2 in mib) f=%.1f ;; cpu | ms | inflight) f=%.2f ;; esac
	median 1 "$work/col" "$f"
}

# ratio E P: median of the per-run wall(e2fsck)/wall(P).
ratio() {
	paste -d' ' "$1" "$2" | awk '{ p = $(NF / 2 + 1) } $1 > 0 && p > 0 { print $1 / p }' >"$work/col"
	median 1 "$work/col" "%.2f"
}

metrics=(cpu reads mib kib ms inflight rss)
start_load=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for w in "${workloads[@]}"; do
	img=${image[$w]}
	for q in "${depths[@]}"; do
		echo "slowdev.sh: $w ($(basename "$img")), depth $q, latency $lat, $runs runs" >&2
		for p in "${progs[@]}"; do
			: >"$work/$w.$q.$p"
		done
		for ((r = 1; r <= runs; r++)); do
			order=("${progs[@]}")
			((r % 2 == 0)) && mapfile -t order < <(printf '%s\n' "${progs[@]}" | tac)
			for p in "${order[@]}"; do
				runone "$p" "$img" "$q" "$work/$w.$q.$p"
			done
		done
		if [ -n "$tracedir" ]; then
			t=$tracedir/$w-q$q
			traceone e2fsck "$img" "$q" "$t-e2fsck.iotrace"
			traceone gofsck "$img" "$q" "$t-gofsck.iotrace"
			"$work/bin/iowatch" -o "$t.svg" -t "$w, cold, $lat per read, $q at once: e2fsck -fn and gofsck -fn" \
				"$t-e2fsck.iotrace" "$t-gofsck.iotrace" >&2 || echo "slowdev.sh: drawing $t.svg failed" >&2
		fi
		e=$work/$w.$q.e2fsck
		row="| $w | $q"
		for p in "${progs[@]}"; do
			row+=" | $(median 1 "$work/$w.$q.$p")"
		done
		for p in "${progs[@]}"; do
			[ "$p" = e2fsck ] || row+=" | $(ratio "$e" "$work/$w.$q.$p")"
		done
		same=no
		cmp -s "$e.transcript" "$work/$w.$q.gofsck.transcript" && same=yes
		row+=" | $same"
		for what in "${metrics[@]}"; do
			for p in "${progs[@]}"; do
				row+=" | $(column "$work/$w.$q.$p" "$what")"
			done
		done
		notes=
		for p in "${progs[@]}"; do
			f=$work/$w.$q.$p
			bad=$(awk '$6 != 0' "$f" | wc -l)
			[ "$bad" -eq 0 ] && continue
			first=$(awk '$6 != 0 { print $6; exit }' "$f")
			msg=
			case $first in
			137) msg="killed after ${tmo}s or by signal 9" ;;
			*) [ -s "$f.fail" ] && msg=$(grep -v -e '^[[:space:]]*$' -e '^e2fsck [0-9]' -e 'Using EXT2FS' "$f.fail" | head -1 | cut -c1-80) ;;
			esac
			notes+="**$p exit $first in $bad/$runs runs**${msg:+: ${msg//|/\\|}}; "
		done
		[ -n "$pfsck" ] && ! cmp -s "$e.transcript" "$work/$w.$q.pfsck.transcript" && notes+="pfsck output differs; "
		notes=${notes%; }
		rows+=("$row | ${notes:-ok} |")
	done
done
end_load=$(cut -d' ' -f1-3 /proc/loadavg)

# header NAME...: one column per program.
header() {
	local h=
	for p in "${progs[@]}"; do h+=" | $p $*"; done
	echo "$h"
}
ratios=
for p in "${progs[@]}"; do
	[ "$p" = e2fsck ] || ratios+=" | ratio e2fsck/$p"
done
align='|---|--:'
for p in "${progs[@]}"; do align+='|--:'; done
for p in "${progs[@]}"; do [ "$p" = e2fsck ] || align+='|--:'; done
align+='|---'
for ((i = 0; i < ${#metrics[@]} * ${#progs[@]}; i++)); do align+='|--:'; done
align+='|---|'

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
gofsck_ver=$("$gofsck_exe" -V 2>&1 | head -1)
libfuse=$(dpkg-query -W -f='${Version}' libfuse3-3 2>/dev/null || echo "?")
conn8=$(connections 8)
{
	echo "# gofsck on a slow device, cold cache"
	echo
	echo "Latest \`bench/slowdev.sh\` run, $(date -u '+%Y-%m-%d %H:%M UTC'); repo at $commit."
	echo
	echo "- CPU: $(nproc) × $cpu; memory $mem; kernel $(uname -r)"
	echo "- Load average (1, 5, 15 min) at the start: $start_load; at the end: $end_load"
	echo "- $(nbdkit --version | head -1), $(nbdfuse --version | head -1), libfuse $libfuse; FUSE read_ahead_kb $readahead_kb"
	echo "- e2fsck: $(e2fsck -V 2>&1 | head -1); gofsck: $gofsck_exe ($gofsck_ver)${pfsck:+; pfsck: $pfsck -m 2}"
	echo "- Images in $imgdir; $runs runs per program, image and depth; read latency $lat; timeout ${tmo}s"
	echo
	echo "Each run gets a fresh device (depth 8 shown; depth 1 adds \`--filter=noparallel ... serialize=all-requests\` and uses \`-C 1\`):"
	echo
	echo '```'
	echo "nbdkit -f -r -U SOCK --filter=exitlast --filter=stats --filter=delay file IMAGE rdelay=$lat statsfile=STATS &"
	echo "LD_PRELOAD=fusethreads.so FUSE_MAX_THREADS=8 nbdfuse -r -C $conn8 MNT/IMAGE --unix SOCK &"
	echo "echo 256 > /sys/fs/fuse/connections/DEV/max_background; echo 256 > /sys/fs/fuse/connections/DEV/congestion_threshold"
	echo "sync; echo 3 > /proc/sys/vm/drop_caches"
	echo "timeout -s KILL $tmo /usr/bin/time -v e2fsck -fn MNT/IMAGE   # or gofsck -fn${pfsck:+, or $pfsck -m 2 -fn}"
	echo "fusermount3 -u MNT                                            # nbdkit then exits and writes STATS"
	echo '```'
	echo
	echo "| workload | depth$(header s)$ratios | same output$(header user+sys s)$(header reads)$(header read MiB)$(header KiB/read)$(header ms/read)$(header in flight)$(header RSS MiB) | notes |"
	echo "$align"
	printf '%s\n' "${rows[@]}"
	echo
	echo "How to read it: depth is how many reads the device serves at once (1: one at a time); every read waits $lat at the device, whatever its size."
	echo "s is the wall time of the run, medians over the runs; ratio is the median of the per-run e2fsck/program wall-time ratios (above 1: faster than e2fsck)."
	echo "user+sys s is the program's CPU time from /usr/bin/time -v (the device's own CPU, in nbdkit and nbdfuse, is not in it)."
	echo "reads, read MiB and KiB/read are what reached the device, counted by nbdkit's stats filter: the checker's reads after the kernel's page cache, readahead and FUSE have split or merged them; ms/read is the device's mean time per read (the latency plus the emulator's overhead: when it is well above the latency, the machine's CPUs, not the device, were the limit)."
	echo "in flight is the device's busy time summed over its reads (the stats filter's read time) divided by the wall time: the mean number of reads in progress over the run (Little's law); it can reach the depth only if the program keeps that many reads queued all the time."
	echo "same output: the e2fsck and gofsck transcripts of the last run are identical but for the version banner (pfsck's are compared too, without its [Thread N] lines, and flagged in notes when they differ). RSS is peak RSS from /usr/bin/time -v."
	echo "The page cache is dropped before every run and the FUSE file is remounted, so nothing of the image is cached when a run starts; within a run, the kernel caches what it has read."
} >"$work/results.md"

cat "$work/results.md"
mkdir -p "$(dirname "$results")" && cp "$work/results.md" "$results" && echo "slowdev.sh: wrote $results" >&2
