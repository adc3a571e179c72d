#!/bin/bash
# make bench: tracekit's figures beside the peer tools', on the same input
# in the same run, as ratios of medians (the machines are shared and
# noisy: absolute times mean little, ratios taken together do).
#
#   BENCH_RUNS=5 BENCH_SECONDS=6 tests/bench.sh
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_start "${BENCH_RUNS:-5}" 600
seconds=${BENCH_SECONDS:-6}

rate() { echo "scale=0; $1 / $2" | bc -l; }

export XDG_RUNTIME_DIR="$work/xdg"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
bench_xvfb bench 87 88 89 90
export DISPLAY="$display"

echo "tracekit bench: $(nproc) cores, medians of $runs runs"
echo
echo "recording glxgears with apitrace for ${seconds}s ..."
# in a session of its own: interrupting apitrace alone leaves glxgears running
setsid apitrace trace -o "$work/gears.trace" glxgears >/dev/null 2>&1 </dev/null &
rec=$!
sleep "$seconds"
kill -INT -- "-$rec" 2>/dev/null || true
sleep 2
kill -KILL -- "-$rec" 2>/dev/null || true
wait "$rec" 2>/dev/null || true
trace="$work/gears.trace"
calls=$(("$("$bin/trace-decode" "$trace" | wc -l)" - 1))
echo "trace: $calls calls, $(stat -c %s "$trace") bytes (Snappy)"
echo

t_dump=$(time_median apitrace dump "$trace")
t_decode=$(time_median "$bin/trace-decode" "$trace")
t_pass=$(time_median "$bin/trace-encode" "$trace")
"$bin/trace-encode" -z none -o "$work/gears.raw" "$trace"
t_pass_raw=$(time_median "$bin/trace-encode" -z none "$work/gears.raw")
t_pass_snappy_in=$(time_median "$bin/trace-encode" -z none "$trace")
# the text form read back: the reader's own line scan, and libyaml alone
"$bin/trace-decode" -o "$work/gears.txt" "$trace"
t_text=$(time_median "$bin/trace-encode" -z none "$work/gears.txt")
t_text_yaml=$(TRACE_TEXT_LIBYAML=1 time_median "$bin/trace-encode" -z none "$work/gears.txt")

printf '%-46s %12s %12s %8s %s\n' "figure" "tracekit" "peer" "ratio" "goal"
printf '%-46s %10s/s %10s/s %7sx %s\n' "trace-decode vs apitrace dump (calls)" \
	"$(rate "$calls" "$t_decode")" "$(rate "$calls" "$t_dump")" "$(ratio "$t_dump" "$t_decode")" ">= 2x"
printf '%-46s %10s/s %10s/s %7sx %s\n' "trace-encode binary->binary vs apitrace dump" \
	"$(rate "$calls" "$t_pass")" "$(rate "$calls" "$t_dump")" "$(ratio "$t_dump" "$t_pass")" ">= 5x"
printf '%-46s %10s/s %10s/s %7sx %s\n' "raw container vs Snappy, reading (calls)" \
	"$(rate "$calls" "$t_pass_raw")" "$(rate "$calls" "$t_pass_snappy_in")" \
	"$(ratio "$t_pass_snappy_in" "$t_pass_raw")" "> 1x to be worth it"

printf '%-46s %10s/s %10s/s %7sx %s\n' "text -> binary: own line scan vs libyaml alone" \
	"$(rate "$calls" "$t_text")" "$(rate "$calls" "$t_text_yaml")" \
	"$(ratio "$t_text_yaml" "$t_text")" "(for information: no peer reads text)"

# Brotli at apitrace repack's default quality (11) and window (24)
apitrace repack --brotli=11 "$trace" "$work/peer.brotli" >/dev/null 2>&1
"$bin/trace-encode" -z brotli -q 11 -o "$work/ours.brotli" "$trace"
ours=$(stat -c %s "$work/ours.brotli")
peer=$(stat -c %s "$work/peer.brotli")
printf '%-46s %11sB %11sB %7sx %s\n' "trace-encode -z brotli vs apitrace repack -b" \
	"$ours" "$peer" "$(ratio "$ours" "$peer")" "within 2% (0.98-1.02)"
# quality 11 takes tens of seconds: one run each
t_rep=$(runs=1 time_median apitrace repack --brotli=11 "$trace" "$work/peer2.brotli")
t_enc=$(runs=1 time_median "$bin/trace-encode" -z brotli -q 11 -o "$work/ours2.brotli" "$trace")
printf '%-46s %11ss %11ss %7sx %s\n' "  time to compress (quality 11)" "$t_enc" "$t_rep" \
	"$(ratio "$t_rep" "$t_enc")" "(for information)"

# bench_part NAME TEST FILE: tests/bench-NAME.sh, where it and what it
# needs (test TEST FILE) are there; one that fails is said, and the rest
# still run (make bench fails at the end)
failed=()
bench_part() {
	[ -x "$top/tests/bench-$1.sh" ] && test "$2" "$3" || return 0
	echo
	local rc=0
	"$top/tests/bench-$1.sh" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "bench: tests/bench-$1.sh ended with status $rc: its figures stop there" >&2
		failed+=("$1")
	fi
}
bench_part vma -x "$bin/vma-import"
bench_part layer -f "$top/build/layer/VK_LAYER_TRACEKIT_capture.json"
bench_part scenes -f "$top/build/layer/VK_LAYER_TRACEKIT_capture.json"
bench_part programs -f "$top/build/layer/VK_LAYER_TRACEKIT_capture.json"
bench_part replay -x "$bin/trace-replay"
bench_part trim -x "$bin/trace-trim"
if [ "${#failed[@]}" -gt 0 ]; then
	echo "bench: failed: ${failed[*]}" >&2
	exit 1
fi
