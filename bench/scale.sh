#!/usr/bin/env bash
# bench/scale.sh: gofsck against e2fsck (and the pfsck branch's e2fsck -m 2)
# on big volumes: empty mke2fs images from 1 TiB to 1 PiB and kernel-filled
# multi-TiB images. See bench/README.md ("Big volumes").
set -uo pipefail

usage() {
	cat <<'EOF'
usage: bench/scale.sh [-r runs] [-e sizes] [-f filled] [-p pfsck-e2fsck]
                      [-m flags] [-t timeout] [-o results.md] IMAGEDIR

  -r runs     timed runs of each program per image, warm cache (3)
  -e sizes    comma-separated empty-image sizes (1T,4T,16T,64T,256T,1P);
              "" for none
  -f filled   comma-separated filled images (small-4T,zero-2T,small-64T);
              "" for none:
                small-4T   2M files of 4-32 KiB on 4 TiB (mkworkload -w small)
                zero-2T    20M zero-byte files on 2 TiB (mkworkload -w zero)
                small-64T  200k files of 4-32 KiB on 64 TiB, spread by the
                           kernel over the volume, above block 2^32 too
  -p path     also time this e2fsck with -m 2 (the pfsck branch's build)
  -m flags    the check's flags (-fn; -fy and -fp write the images: a
              clean image stays clean, but its check time is recorded)
  -t seconds  kill a run after this long (3600)
  -o file     results file (bench/RESULTS-scale.md)
  IMAGEDIR    where the images are made and kept; images over 16 TiB need
              a filesystem that holds such sparse files (XFS: see README)

Every image is made with mke2fs -t ext4 -E lazy_itable_init=1,
lazy_journal_init=1 on a sparse file. Must run as root (mkworkload loop-mounts).
EOF
}

die() {
	echo "scale.sh: $*" >&2
	exit 1
}

runs=3
empties=1T,4T,16T,64T,256T,1P
filled=small-4T,zero-2T,small-64T
pfsck=
tmo=3600
mode=-fn
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
results=$here/RESULTS-scale.md
while getopts "r:e:f:p:m:t:o:h" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	e) empties=$OPTARG ;;
	f) filled=$OPTARG ;;
	p) pfsck=$OPTARG ;;
	t) tmo=$OPTARG ;;
	m) mode=$OPTARG ;;
	o) results=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { usage >&2; exit 2; }
imgdir=$1
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer"
[ "$(id -u)" -eq 0 ] || die "must run as root"
[ -x /usr/bin/time ] || apt-get install -y -qq time >/dev/null || die "needs /usr/bin/time"
[ -z "$pfsck" ] || [ -x "$pfsck" ] || die "-p $pfsck is not an executable"
mkdir -p "$imgdir" || die "cannot create $imgdir"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin"
(cd "$repo" && go build -o "$bin/gofsck" ./cmd/gofsck && go build -o "$bin/iowrap" ./bench/iowrap &&
	go build -o "$bin/mkworkload" ./cmd/mkworkload) || die "build failed"

lazy="-E lazy_itable_init=1,lazy_journal_init=1"
bytes() {
	local n=${1%[TP]}
	case $1 in *T) echo $((n << 40)) ;; *P) echo $((n << 50)) ;; esac
}

# makeimage NAME: builds IMAGEDIR/NAME.img if missing; prints its path.
makeimage() {
	local name=$1 img=$imgdir/$1.img
	if [ -s "$img" ] && [ ! -e "$img.partial" ]; then
		echo "$img"
		return
	fi
	rm -f "$img" "$img.partial"
	echo "scale.sh: building $name" >&2
	case $name in
	empty-*)
		local size
		size=$(bytes "${name#empty-}")
		: >"$img.partial"
		truncate -s "$size" "$img" 2>/dev/null ||
			die "cannot make a ${name#empty-} sparse file in $imgdir (over 16 TiB: use an XFS mount, see bench/README.md)"
		mke2fs -q -F -t ext4 $lazy "$img" >&2 || die "mke2fs $name failed"
		rm -f "$img.partial"
		;;
	small-4T) buildwork small 2000000 4T "$img" ;;
	zero-2T) buildwork zero 20000000 2T "$img" ;;
	small-64T) buildwork small 200000 64T "$img" ;;
	*) die "unknown image $name" ;;
	esac
	echo "$img"
}

buildwork() {
	local w=$1 n=$2 size=$3 img=$4
	"$bin/mkworkload" -w "$w" -n "$n" -size "$size" -mkfs "$lazy" -o "$img.partial" >"$img.summary" ||
		die "mkworkload -w $w -n $n -size $size failed"
	mv "$img.partial" "$img"
}

# runone PROG IMAGE OUT: one timed run; appends "wall cpu rss_kb rchar rc" to OUT.
runone() {
	local prog=$1 img=$2 out=$3 t0 t1 rc
	local -a cmd
	case $prog in
	e2fsck) cmd=(e2fsck "$mode") ;;
	pfsck) cmd=("$pfsck" "$mode" -m 2) ;;
	gofsck) cmd=("$bin/gofsck" "$mode") ;;
	esac
	rm -f "$work/io" "$work/time"
	t0=$EPOCHREALTIME
	/usr/bin/time -v -o "$work/time" timeout -s KILL "$tmo" "$bin/iowrap" -o "$work/io" "${cmd[@]}" "$img" >"$work/out" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	# The transcript without the version banner, for the "same output"
	# column.
	grep -v -e '^e2fsck [0-9]' -e '^gofsck [0-9]' -e 'Using EXT2FS Library' "$work/out" >"$out.transcript"
	local cpu rss rchar
	cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$work/time")
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
	rchar=$(awk '/^rchar:/ { print $2 }' "$work/io" 2>/dev/null)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${cpu:--} ${rss:--} ${rchar:--} $rc" >>"$out"
	[ "$rc" -eq 0 ] || cp "$work/out" "$out.fail"
}

median() {
	awk -v c="$1" '$c != "-" { print $c }' "$2" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

progs=(e2fsck gofsck)
[ -n "$pfsck" ] && progs=(e2fsck pfsck gofsck)
names=()
IFS=, read -ra es <<<"$empties"
for s in "${es[@]}"; do [ -n "$s" ] && names+=("empty-$s"); done
IFS=, read -ra fs <<<"$filled"
for s in "${fs[@]}"; do [ -n "$s" ] && names+=("$s"); done

rows=()
for name in "${names[@]}"; do
	img=$(makeimage "$name") || exit 1
	echo "scale.sh: $name, $runs runs" >&2
	for p in "${progs[@]}"; do
		: >"$work/$name.$p"
		runone "$p" "$img" "$work/warmup"
	done
	for ((r = 1; r <= runs; r++)); do
		order=("${progs[@]}")
		((r % 2 == 0)) && order=($(printf '%s\n' "${progs[@]}" | tac))
		for p in "${order[@]}"; do
			runone "$p" "$img" "$work/$name.$p"
		done
	done
	e=$work/$name.e2fsck g=$work/$name.gofsck
	ratio=$(paste -d' ' "$e" "$g" | awk '$6 > 0 { print $1 / $6 }' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	prow= pnote=
	if [ -n "$pfsck" ]; then
		prow=" $(median 1 "$work/$name.pfsck") | $(awk '{ printf "%.0f", $1 / 1024 }' <<<"$(median 3 "$work/$name.pfsck")") |"
	fi
	for p in "${progs[@]}"; do
		bad=$(awk '$5 != 0' "$work/$name.$p" | wc -l)
		[ "$bad" -eq 0 ] || pnote+="$p exit $(awk '$5 != 0 { print $5; exit }' "$work/$name.$p") in $bad runs; "
	done
	same=no
	cmp -s "$e.transcript" "$g.transcript" && same=yes
	size=$(du -h --apparent-size "$img" | cut -f1)
	used=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ { ic = $2 } /^Free inodes/ { fi = $2 } END { printf "%d", ic - fi }')
	rows+=("| $name | $size | $used | $(median 1 "$e") |$prow $(median 1 "$g") | $ratio | $same | $(awk '{ printf "%.0f", $1 / 1024 }' <<<"$(median 3 "$e")") | $(awk '{ printf "%.0f", $1 / 1024 }' <<<"$(median 3 "$g")") | $(awk '{ printf "%.0f", $1 / 1048576 }' <<<"$(median 4 "$e")") | $(awk '{ printf "%.0f", $1 / 1048576 }' <<<"$(median 4 "$g")") | ${pnote:-ok} |")
done

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
{
	echo "# gofsck on big volumes"
	echo
	echo "Latest \`bench/scale.sh\` run, $(date -u '+%Y-%m-%d %H:%M UTC'); repo at $commit; $(nproc) CPUs, $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo); images in $imgdir ($(findmnt -no FSTYPE -T "$imgdir" | head -1)); $(e2fsck -V 2>&1 | head -1); every program run with $mode, warm cache, $runs runs each, medians."
	echo
	if [ -n "$pfsck" ]; then
		echo "| image | size | inodes used | e2fsck s | e2fsck -m 2 s | pfsck RSS MiB | gofsck s | ratio e2fsck/gofsck | same output | e2fsck RSS MiB | gofsck RSS MiB | e2fsck read MiB | gofsck read MiB | notes |"
		echo "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|---|"
	else
		echo "| image | size | inodes used | e2fsck s | gofsck s | ratio e2fsck/gofsck | same output | e2fsck RSS MiB | gofsck RSS MiB | e2fsck read MiB | gofsck read MiB | notes |"
		echo "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|---|"
	fi
	printf '%s\n' "${rows[@]}"
	echo
	echo "ratio is the median of the per-run e2fsck/gofsck wall-time ratios; same output: the transcripts of the last runs are identical but for the version line; RSS is peak RSS from /usr/bin/time -v; read is rchar from /proc/PID/io (bench/iowrap)."
} >"$work/results.md"
cat "$work/results.md"
cp "$work/results.md" "$results" && echo "scale.sh: wrote $results" >&2
