#!/usr/bin/env bash
# bench/repair.sh: time writable checks (-fy) of gofsck against e2fsck.
#
# For every image and damage, each run repairs its own sparse copy of the
# image with e2fsck -fy, gofsck -fy and gofsck -fy -E no_speculation (in
# rotating order, page cache dropped before each run unless -w), checks
# that both programs printed the same transcript and exit code and that
# e2fsck -fn finds gofsck's result clean, and prints a markdown table of
# median wall times. See bench/README.md.
set -uo pipefail

usage() {
	cat <<'EOF'
usage: bench/repair.sh [-r runs] [-d damages] [-w] [-g gofsck] IMAGE...

  -r runs      timed runs of each program per image and damage (3)
  -d list      comma-separated damages (none,summary,inode):
                 none     a forced check of the clean image
                 summary  group 1's free block count and the superblock's
                          free inode count wrong (fixed in pass 5)
                 inode    /lost+found's i_size wrong (fixed in pass 1)
  -w           warm cache (an untimed run first) instead of dropping the
               page cache before every run
  -g path      time this gofsck binary instead of building ./cmd/gofsck
  IMAGE        clean ext2/3/4 images (e.g. from bench/run.sh's IMAGEDIR)

Must run as root (drop_caches). Copies go next to each image (sparse).
EOF
}

die() {
	echo "repair.sh: $*" >&2
	exit 1
}

runs=3
damages=none,summary,inode
warm=0
gofsck_bin=
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
while getopts "r:d:wg:h" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	d) damages=$OPTARG ;;
	w) warm=1 ;;
	g) gofsck_bin=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { usage >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer"
[ "$(id -u)" -eq 0 ] || die "must run as root (drop_caches)"
command -v e2fsck >/dev/null && command -v debugfs >/dev/null || die "e2fsprogs not found: apt-get install e2fsprogs"
IFS=, read -r -a dlist <<<"$damages"

work=$(mktemp -d /tmp/gofsck-repair-bench.XXXXXX)
copies=()
trap 'rm -rf "$work" "${copies[@]}"' EXIT
if [ -n "$gofsck_bin" ]; then
	gofsck=$gofsck_bin
else
	command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
	(cd "$repo" && go build -o "$work/gofsck" ./cmd/gofsck) || die "go build ./cmd/gofsck failed"
	gofsck=$work/gofsck
fi

# damage IMAGE KIND: apply a damage with debugfs.
damage() {
	local img=$1 kind=$2
	case $kind in
	none) ;;
	summary)
		debugfs -w -R "set_bg 1 free_blocks_count 7" "$img" >/dev/null 2>&1 &&
			debugfs -w -R "set_bg 1 checksum calc" "$img" >/dev/null 2>&1 &&
			debugfs -w -R "ssv free_inodes_count 12345" "$img" >/dev/null 2>&1
		;;
	inode)
		# /lost+found's i_size (mke2fs gives it several blocks).
		debugfs -w -R "sif <11> size 1" "$img" >/dev/null 2>&1
		;;
	*) return 1 ;;
	esac
}

dropcaches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# timed OUT CMD...: runs CMD, prints "wall rc" and keeps its output in OUT.
timed() {
	local out=$1 t0 t1 rc
	shift
	[ "$warm" = 1 ] || dropcaches
	t0=$EPOCHREALTIME
	"$@" >"$out" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" -v rc="$rc" 'BEGIN { printf "%.3f %d\n", b - a, rc }'
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# norm FILE IMG: the transcript without the banner, with the image path and
# the program name replaced.
norm() {
	sed -e '/^e2fsck 1\./d' -e '/^gofsck 0\./d' -e "s|$2|IMG|g" -e 's|^[^ ]*e2fsck: |PROG: |' -e 's|^gofsck: |PROG: |' "$1"
}

echo "| image | damage | e2fsck -fy s | gofsck -fy s | gofsck no_speculation s | ratio e2fsck/gofsck | passes speculated | notes |"
echo "|---|---|--:|--:|--:|--:|---|---|"
for img in "$@"; do
	[ -f "$img" ] || die "$img: no such image"
	name=$(basename "$img" .img)
	for d in "${dlist[@]}"; do
		: >"$work/e" ; : >"$work/g" ; : >"$work/s" ; : >"$work/ratio"
		notes=
		spec=
		for ((r = 0; r <= runs; r++)); do
			[ "$r" = 0 ] && [ "$warm" = 0 ] && continue # the warm-up run
			order=(e g s)
			((r % 3 == 1)) && order=(g s e)
			((r % 3 == 2)) && order=(s e g)
			declare -A wall=()
			for p in "${order[@]}"; do
				copy=$img.bench-$p
				copies+=("$copy")
				cp --sparse=always "$img" "$copy" || die "copying $img"
				damage "$copy" "$d" || die "damage $d on $img failed"
				case $p in
				e) res=$(timed "$work/out.e" e2fsck -fy "$copy") ;;
				g) res=$(timed "$work/out.g" "$gofsck" -fy -E json="$work/report.json" "$copy") ;;
				s) res=$(timed "$work/out.s" "$gofsck" -fy -E no_speculation "$copy") ;;
				esac
				wall[$p]=${res% *}
				echo "${res#* }" >"$work/rc.$p"
				norm "$work/out.$p" "$copy" >"$work/norm.$p"
				if [ "$p" = g ]; then
					e2fsck -fn "$copy" >"$work/after" 2>&1 || notes="gofsck's result not clean for e2fsck -fn"
					spec=$(tr -d ' \n' <"$work/report.json" | grep -o '"speculated_passes":\[[0-9,]*\]' | grep -o '\[.*\]')
				fi
				rm -f "$copy"
			done
			if ! cmp -s "$work/norm.e" "$work/norm.g" || ! cmp -s "$work/rc.e" "$work/rc.g"; then
				notes="transcripts differ"
				diff "$work/norm.e" "$work/norm.g" | head -5 >&2
			fi
			[ "$r" = 0 ] && continue
			echo "${wall[e]}" >>"$work/e"
			echo "${wall[g]}" >>"$work/g"
			echo "${wall[s]}" >>"$work/s"
			awk -v a="${wall[e]}" -v b="${wall[g]}" 'BEGIN { if (b > 0) printf "%.3f\n", a / b }' >>"$work/ratio"
		done
		echo "| $name | $d | $(median <"$work/e") | $(median <"$work/g") | $(median <"$work/s") | $(median <"$work/ratio") | ${spec:-none} | ${notes:-same transcript and exit $(cat "$work/rc.e"); e2fsck -fn clean after gofsck} |"
	done
done
