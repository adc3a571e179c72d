#!/bin/bash
# Programs tracekit was not built on, captured by each layer on the same
# input, then replayed by each tool: mpv playing one second of a test
# pattern (--vo=gpu, libplacebo) and ffmpeg's Vulkan filter chain over
# host memory it imports.  Per program: the trace size (ours with the
# layer's default settings, GFXR's with its default LZ4), the capture's
# added wall time (median of $RUNS turns), and each replayer's result:
# its exit status and, for ours, whether --validate was silent.
#
# Figures, not a test: a capture that fails stops it; a replay that fails
# is a figure (gfxrecon-replay 0.9.18 crashes on its own capture of mpv).
#   tests/bench-programs.sh           (after make)
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_start 3 180

bench_need bench-programs program Xvfb mpv ffmpeg bc zstd lz4
bench_beside_gfxr bench-programs program 60 61 62 63 64 65 66

ours=(VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture)
gfxr=(VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE_TIMESTAMP=false)
video="$top/tests/data/testsrc-160x120.mp4"
mpv=(mpv --no-config --untimed --vo=gpu --gpu-api=vulkan --gpu-context=x11vk
	'--vulkan-device=llvmpipe (LLVM 15.0.6, 256 bits)' --frames=30 "$video")
ff=(ffmpeg -nostdin -loglevel error -y -init_hw_device vulkan=vk:0 -filter_hw_device vk
	-i "$video" -frames:v 30
	-vf format=rgba,hwupload,scale_vulkan=w=80:h=60,gblur_vulkan,hflip_vulkan,hwdownload,format=rgba
	-f rawvideo "$work/out.raw")

kb() { echo "scale=1; $1 / 1000" | bc -l; }

echo "programs: $(nproc) cores, Xvfb, llvmpipe; GFXReconstruct $(dpkg-query -W -f "\${Version}" gfxreconstruct 2>/dev/null)"
printf '%-10s %10s %10s %6s %9s %9s %-28s %s\n' "program" "ours" "GFXR" "ratio" "+ours" "+GFXR" \
	"trace-replay --validate" "gfxrecon-replay"
# program NAME CMD...: the row of one program
program() {
	local name=$1 n=() o=() x=() t
	shift
	for t in $(seq "$runs"); do
		run -- "$@"
		must "$name"
		n+=("$secs")
		run "${ours[@]}" TRACEKIT_OUTPUT="$work/$name.trace" -- "$@"
		must "$name under our layer" "$work/$name.trace"
		o+=("$(echo "$secs - ${n[-1]}" | bc -l)")
		run "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/$name.gfxr" -- "$@"
		must "$name under GFXReconstruct" "$work/$name.gfxr"
		x+=("$(echo "$secs - ${n[-1]}" | bc -l)")
	done
	local s_ours s_gfxr r_ours r_gfxr
	s_ours=$(stat -c %s "$work/$name.trace")
	s_gfxr=$(stat -c %s "$work/$name.gfxr")
	run -- "$bin/trace-replay" --validate "$work/$name.trace"
	if [ "$rc" = 0 ] && ! grep -q 'validation' "$work/last.out"; then
		r_ours="exit 0, no message"
	else
		r_ours="exit $rc, $(grep -c 'validation' "$work/last.out" || true) messages"
	fi
	run -- gfxrecon-replay --wsi xcb "$work/$name.gfxr"
	if [ "$rc" -gt 128 ]; then
		r_gfxr="killed by signal $((rc - 128))"
	else
		r_gfxr="exit $rc"
	fi
	printf '%-10s %8sKB %8sKB %5sx %8.2fs %8.2fs %-28s %s\n' "$name" "$(kb "$s_ours")" "$(kb "$s_gfxr")" \
		"$(ratio "$s_ours" "$s_gfxr")" "$(median "${o[@]}")" "$(median "${x[@]}")" "$r_ours" "$r_gfxr"
}
program mpv "${mpv[@]}"
program ffmpeg "${ff[@]}"
# what any complete ffmpeg trace must hold: the frames hwupload imports
ffmpeg -nostdin -loglevel error -y -i "$video" -frames:v 30 -vf format=rgba -f rawvideo "$work/in.raw"
echo "(ffmpeg's 30 input frames, which hwupload imports from host memory: $(kb "$(stat -c %s "$work/in.raw")")KB;" \
	"$(kb "$(zstd -3 -q -c "$work/in.raw" | wc -c)")KB through zstd -3, $(kb "$(lz4 -q -c "$work/in.raw" | wc -c)")KB" \
	"through LZ4: a trace in that container smaller than that lacks some)"
echo "(added time: the capture's wall time minus the native run's, median of $runs turns)"
