#!/bin/sh
# Figures for vma-import and vma-export on a generated recording of a
# million calls, side by side with awk splitting the same file into its
# columns: the least a program that reads every column must do.  Prints
# the ratio awk time / our time (above 1: faster than awk).  Figures, not a
# test: it fails only when a program does.
#   tests/bench-vma.sh [CALLS [RUNS]]      (from the repository root, after make)
set -eu

calls=${1:-1000000}
runs=${2:-5}
bin=${BIN:-bin}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

tests/gen-vma-recording.sh "$calls" >"$dir/rec.csv"
"$bin/vma-import" -o "$dir/rec.trace" "$dir/rec.csv"
# the figures are worth nothing if the round trip is broken
"$bin/vma-export" "$dir/rec.trace" | cmp -s - "$dir/rec.csv" || {
	echo "bench-vma: vma-export did not give the recording back" >&2
	exit 1
}

now() {
	date +%s.%N
}

# median CMD...: prints the median wall time of $runs runs, standard
# output discarded (the disk is not what is measured); machines are shared
# and noisy, so the ratios of one run of this script are what count
median() {
	i=0
	: >"$dir/times"
	while [ "$i" -lt "$runs" ]; do
		t0=$(now)
		"$@" >/dev/null
		t1=$(now)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$dir/times"
		i=$((i + 1))
	done
	sort -g "$dir/times" | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'
}

t_awk=$(median awk -F, '{ n += NF } END { print n }' "$dir/rec.csv")
t_import=$(median "$bin/vma-import" "$dir/rec.csv")
t_raw=$(median "$bin/vma-import" -z none "$dir/rec.csv")
t_text=$(median "$bin/vma-import" -f text "$dir/rec.csv")
t_export=$(median "$bin/vma-export" "$dir/rec.trace")

size=$(wc -c <"$dir/rec.csv")
awk -v calls="$calls" -v size="$size" -v runs="$runs" -v awk_t="$t_awk" \
	-v imp="$t_import" -v raw="$t_raw" -v txt="$t_text" -v ex="$t_export" 'BEGIN {
	printf "vma bench: %d calls, %.1f MB recording, medians of %d runs\n", calls, size / 1e6, runs
	printf "  %-36s %7.3f s\n", "awk -F, {n+=NF} (the yardstick)", awk_t
	printf "  %-36s %7.3f s  %5.2fx awk\n", "vma-import (binary, Snappy)", imp, awk_t / imp
	printf "  %-36s %7.3f s  %5.2fx awk\n", "vma-import -z none (binary, raw)", raw, awk_t / raw
	printf "  %-36s %7.3f s  %5.2fx awk\n", "vma-import -f text", txt, awk_t / txt
	printf "  %-36s %7.3f s  %5.2fx awk\n", "vma-export (from Snappy)", ex, awk_t / ex
}'

# replay: the same recording on llvmpipe (or the first device), calls per
# second as trace-replay measures them (reading and replaying, no device
# start-up); the median of $runs runs
if [ -x "$bin/trace-replay" ]; then
	[ -n "${XDG_RUNTIME_DIR:-}" ] || { export XDG_RUNTIME_DIR="$dir/xdg"; mkdir -m 700 "$dir/xdg"; }
	i=0
	: >"$dir/rates"
	while [ "$i" -lt "$runs" ]; do
		"$bin/trace-replay" -q --stats=json "$dir/rec.trace" |
			sed -n 's/^  "calls_per_second": \([0-9]*\),$/\1/p' >>"$dir/rates"
		i=$((i + 1))
	done
	device=$("$bin/trace-replay" -q --stats "$dir/rec.trace" | sed -n 's/^Device: //p')
	sort -g "$dir/rates" | awk -v calls="$calls" -v dev="$device" '{ r[NR] = $1 } END {
		printf "  %-36s %7.0f calls/s (%d calls, %s)\n", "replay: calls per second on llvmpipe",
			r[int((NR + 1) / 2)], calls, dev
	}'
fi
