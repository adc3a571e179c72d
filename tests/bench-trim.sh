#!/bin/bash
# Figures for trace-trim, under Xvfb on llvmpipe, beside GFXReconstruct
# (Debian's gfxreconstruct 0.9.18), which can only trim while capturing
# (GFXRECON_CAPTURE_FRAMES):
#
#   time   trimming one frame out of a capture against reading it once
#          with trace-decode: vkcube --c 3000 (300 KB: mostly program
#          start) and glmark2-zink (3 MB); medians of $RUNS runs; goal <= 2x
#   seek   one frame with trace-filter, late in the vkcube capture (given
#          the seek index), against reading it from the start and against
#          apitrace dump --calls of the same calls
#   size   a one-frame trim of vkcube against GFXR's capture-time trim of
#          the same frame (goal: smaller), ours as written (the capture's
#          zstd) and with -f brotli; and of glmark2 through zink, a
#          frame in each of four scenes; and a frame of each scene of
#          glmark2's default list (frame 10 of 20 a scene), the smallest,
#          largest and summed ratios, each of our trims replayed and its
#          pixels compared with the frame the layer saved at capture
#          (TRIM_ALL_SCENES=0 leaves this part out: 33 GFXR captures)
#
# Figures, not a test: it fails only when a program does.
#   tests/bench-trim.sh            (after make)
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_start 5 300

bench_need bench-trim trim Xvfb vkcube glmark2 bc
gfxr=true
bench_has_gfxr || gfxr=false

bench_vulkan_env
bench_xvfb bench-trim 70 71 72 73 74 75 76
export DISPLAY="$display"

# time_median PROGRAM ARGS...: the median wall time of $runs runs
time_median() {
	local t=()
	for _ in $(seq "$runs"); do
		run -- "$@"
		t+=("$secs")
	done
	median "${t[@]}"
}
size() { stat -c %s "$1"; }

ours() { VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$1" "${@:2}"; }
theirs() {
	VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE="$1" \
		GFXRECON_CAPTURE_FILE_TIMESTAMP=false GFXRECON_CAPTURE_FRAMES="$2" "${@:3}"
}
zink() { LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink "$@"; }
GL="glmark2 -s 400x300 -b build:nframes=10 -b texture:nframes=10 -b shading:nframes=10
	-b pulsar:nframes=10"

echo "trace-trim bench: $(nproc) cores, Xvfb, llvmpipe, medians of $runs runs"
# indexed although short (the layer's threshold is 16 MiB of stream)
TRACE_SEEK_INDEX_MIN=0 ours "$work/long.trace" timeout 300 vkcube --c 3000 >/dev/null 2>&1
ours "$work/cube.trace" timeout 120 vkcube --c 300 >/dev/null 2>&1
echo "vkcube --c 3000 capture: $(size "$work/long.trace") bytes"
t_dec=$(time_median "$bin/trace-decode" "$work/long.trace")
t_trim=$(time_median "$bin/trace-trim" --frames 2900 -o "$work/t.trace" "$work/long.trace")
printf '%-52s %9s %9s %7s %s\n' "" "ours" "decode" "ratio" "goal"
printf '%-52s %8ss %8ss %6sx %s\n' "trim frame 2900 of 3000 vs trace-decode, time" "$t_trim" \
	"$t_dec" "$(ratio "$t_trim" "$t_dec")" "<= 2x"
t_trim0=$(TRACE_SEEK=0 time_median "$bin/trace-trim" --frames 2900 -o "$work/t.trace" "$work/long.trace")
printf '%-52s %8ss %8ss %6sx\n' "the same, its second reading not from the seek index" "$t_trim0" \
	"$t_dec" "$(ratio "$t_trim0" "$t_dec")"
# frame 2900's calls, for apitrace dump, which reads from the start
calls=$("$bin/trace-filter" --frames 2900 -f text "$work/long.trace" |
	sed -n 's/^{call: \([0-9]*\),.*/\1/p' | sed -n '1p;$p' | paste -sd-)
t_seek=$(time_median "$bin/trace-filter" --frames 2900 -o "$work/f.trace" "$work/long.trace")
t_all=$(TRACE_SEEK=0 time_median "$bin/trace-filter" --frames 2900 -o "$work/f.trace" \
	"$work/long.trace")
"$bin/trace-encode" -z snappy -o "$work/long.snappy" "$work/long.trace"
t_api=$(time_median apitrace dump --calls="$calls" "$work/long.snappy")
printf '%-52s %9s %9s %7s\n' "trace-filter --frames 2900 (calls $calls), time" "ours" \
	"peer" "ratio"
printf '%-52s %8ss %8ss %6sx\n' "  with the seek index vs read from the start" "$t_seek" \
	"$t_all" "$(ratio "$t_seek" "$t_all")"
printf '%-52s %8ss %8ss %6sx\n' "  with the seek index vs apitrace dump --calls (Snappy)" \
	"$t_seek" "$t_api" "$(ratio "$t_seek" "$t_api")"

echo
printf '%-52s %9s %9s %7s %s\n' "one-frame trim, size" "ours" "GFXR" "ratio" "goal"
for f in 150; do
	"$bin/trace-trim" --frames $f -o "$work/c$f.trace" "$work/cube.trace"
	"$bin/trace-trim" --frames $f -f brotli -o "$work/c$f.br" "$work/cube.trace"
	if $gfxr; then
		# GFXR numbers frames from 1
		theirs "$work/g$f.gfxr" "$((f + 1))-$((f + 1))" timeout 120 vkcube --c 300 \
			>/dev/null 2>&1 || true
		g=$(ls "$work"/g$f*.gfxr 2>/dev/null | head -1)
	fi
	if [ -n "${g:-}" ] && [ -s "$g" ]; then
		gs=$(size "$g")
		printf '%-52s %9s %9s %6sx %s\n' "vkcube frame $f (zstd, as captured)" \
			"$(size "$work/c$f.trace")" "$gs" "$(ratio "$(size "$work/c$f.trace")" "$gs")" "< 1x"
		printf '%-52s %9s %9s %6sx %s\n' "vkcube frame $f (-f brotli)" \
			"$(size "$work/c$f.br")" "$gs" "$(ratio "$(size "$work/c$f.br")" "$gs")" "< 1x"
	else
		printf '%-52s %9s %9s\n' "vkcube frame $f (zstd; -f brotli)" \
			"$(size "$work/c$f.trace"); $(size "$work/c$f.br")" "(no GFXR)"
	fi
done

zink ours "$work/gl.trace" timeout 300 $GL >/dev/null 2>&1 || true
echo "glmark2-zink, 4 scenes x 10 frames: $(size "$work/gl.trace") bytes"
# a capture whose reading takes more than starting a program does
t_dec=$(time_median "$bin/trace-decode" "$work/gl.trace")
t_trim=$(time_median "$bin/trace-trim" --frames 35 -o "$work/t.trace" "$work/gl.trace")
printf '%-52s %8ss %8ss %6sx %s\n' "trim frame 35 of 40 vs trace-decode, time" "$t_trim" \
	"$t_dec" "$(ratio "$t_trim" "$t_dec")" "<= 2x"
for f in 5 15 25 35; do
	"$bin/trace-trim" --frames $f -o "$work/gl$f.trace" "$work/gl.trace"
	"$bin/trace-trim" --frames $f -f brotli -o "$work/gl$f.br" "$work/gl.trace"
	g=""
	if $gfxr; then
		zink theirs "$work/gg$f.gfxr" "$((f + 1))-$((f + 1))" timeout 300 $GL >/dev/null 2>&1 || true
		g=$(ls "$work"/gg$f*.gfxr 2>/dev/null | head -1)
	fi
	if [ -n "$g" ] && [ -s "$g" ]; then
		gs=$(size "$g")
		printf '%-52s %9s %9s %6sx %s\n' "glmark2-zink frame $f (zstd; brotli $(size "$work/gl$f.br"))" \
			"$(size "$work/gl$f.trace")" "$gs" "$(ratio "$(size "$work/gl$f.trace")" "$gs")" "< 1x"
	else
		printf '%-52s %9s %9s\n' "glmark2-zink frame $f (zstd)" "$(size "$work/gl$f.trace")" "(no GFXR)"
	fi
done

# --- a frame of each scene of the default list -------------------------------
[ "${TRIM_ALL_SCENES:-1}" != 0 ] && $gfxr || exit 0
shots=$(seq -s, 10 20 1000)
zink ours "$work/all.trace" env TRACEKIT_SCREENSHOT="$shots" TRACEKIT_SCREENSHOT_DIR="$work/shots" \
	timeout 300 glmark2 -s 400x300 -b :nframes=20 >/dev/null 2>&1 || true
n=$(ls "$work"/shots/all.frame-*.png 2>/dev/null | wc -l)
: >"$work/ratios"
bad=0
for i in $(seq 0 $((n - 1))); do
	f=$((i * 20 + 10))
	"$bin/trace-trim" --quiet --frames $f -o "$work/a$f.trace" "$work/all.trace"
	zink theirs "$work/ga$f.gfxr" "$((f + 1))" timeout 300 glmark2 -s 400x300 -b :nframes=20 \
		>/dev/null 2>&1 || true
	g=$(ls "$work"/ga$f*.gfxr 2>/dev/null | head -1)
	[ -n "$g" ] && [ -s "$g" ] || continue
	echo "$(size "$work/a$f.trace") $(size "$g") $f" >>"$work/ratios"
	(unset DISPLAY; "$bin/trace-replay" -q --screenshot $f -o "$work/a$f.png" "$work/a$f.trace") \
		>/dev/null 2>&1 || true
	[ "$(compare -metric AE "$work/shots/all.frame-$f.png" "$work/a$f.png" null: 2>&1)" = 0 ] ||
		bad=$((bad + 1))
done
awk -v n="$n" -v bad="$bad" '{ r = $1 / $2; o += $1; g += $2
	if (NR == 1 || r < lo) { lo = r; lof = $3 } if (NR == 1 || r > hi) { hi = r; hif = $3 } }
	END { printf "%-52s %9s %9s %6.2fx %s\n", "glmark2-zink, a frame of each of " n " default scenes, summed", o, g, o / g, "< 1x"
		printf "%-52s %.2fx (frame %d) to %.2fx (frame %d); %d of %d trims not pixel-equal\n", "  per scene", lo, lof, hi, hif, bad, NR }' "$work/ratios"
