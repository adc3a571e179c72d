#!/bin/bash
# Figures for vma-import and vma-export on a generated recording of a
# million calls, side by side with awk splitting the same file into its
# columns: the least a program that reads every column must do.  Prints
# the ratio awk time / our time (above 1: faster than awk).  Figures, not a
# test: it fails only when a program does.
#   tests/bench-vma.sh [CALLS [RUNS]]      (from the repository root, after make)
set -eu

calls=${1:-1000000}
. "$(dirname "$0")/bench-lib.sh"
bench_start "${2:-5}" 600

tests/gen-vma-recording.sh "$calls" >"$work/rec.csv"
"$bin/vma-import" -o "$work/rec.trace" "$work/rec.csv"
# the figures are worth nothing if the round trip is broken
"$bin/vma-export" "$work/rec.trace" | cmp -s - "$work/rec.csv" || {
	echo "bench-vma: vma-export did not give the recording back" >&2
	exit 1
}

t_awk=$(time_median awk -F, '{ n += NF } END { print n }' "$work/rec.csv")
t_import=$(time_median "$bin/vma-import" "$work/rec.csv")
t_raw=$(time_median "$bin/vma-import" -z none "$work/rec.csv")
t_text=$(time_median "$bin/vma-import" -f text "$work/rec.csv")
t_export=$(time_median "$bin/vma-export" "$work/rec.trace")

size=$(wc -c <"$work/rec.csv")
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
	[ -n "${XDG_RUNTIME_DIR:-}" ] || { export XDG_RUNTIME_DIR="$work/xdg"; mkdir -m 700 "$work/xdg"; }
	i=0
	: >"$work/rates"
	while [ "$i" -lt "$runs" ]; do
		"$bin/trace-replay" -q --stats=json "$work/rec.trace" |
			sed -n 's/^  "calls_per_second": \([0-9]*\),$/\1/p' >>"$work/rates"
		i=$((i + 1))
	done
	device=$("$bin/trace-replay" -q --stats "$work/rec.trace" | sed -n 's/^Device: //p')
	sort -g "$work/rates" | awk -v calls="$calls" -v dev="$device" '{ r[NR] = $1 } END {
		printf "  %-36s %7.0f calls/s (%d calls, %s)\n", "replay: calls per second on llvmpipe",
			r[int((NR + 1) / 2)], calls, dev
	}'
fi
