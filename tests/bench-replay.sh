#!/bin/bash
# Figures for trace-replay beside GFXReconstruct's gfxrecon-replay (Debian's
# gfxreconstruct 0.9.18) on captures of the same programs, on llvmpipe:
#
#   vkcube --c 300, and glmark2 through zink (6 scenes x 40 frames), each
#   captured once by our layer and once by GFXReconstruct's, then replayed;
#   and, fps and wall time alone, three workloads these figures were not
#   tuned on: every scene of glmark2's default list (20 frames each, the
#   list glmark2 runs with no -b), vkd3d-gears (Direct3D 12 through
#   vkd3d, 3 seconds of it; skipped where vkd3d-demos is missing) and
#   four content-heavy glmark2 scenes through zink (refract, jellyfish,
#   terrain, bump high-poly; 120 frames each), whose whole replay process
#   is also taken over its GPU time (goal <= 1.05x: start-up is a small
#   part of it, as in the capture that goal was set on):
#   ours headless (trace-replay, no display), theirs with --wsi xcb under
#   Xvfb (llvmpipe has no VK_EXT_headless_surface, which --wsi headless
#   needs, so GFXR presents to the X server: a cost ours does not have).
#
#   fps          frames 1 to the end (the loading frame 0 left out, as
#                gfxrecon-replay measures by default): ours from
#                trace-replay --frames 1- --stats=json --no-gpu-time,
#                theirs from its "Replay FPS" line; medians of $RUNS runs
#                taken in turns; goal: ours >= 1.5x theirs
#   wall time    the whole replay process, loading included (information)
#   GPU time     ours only: the GPU busy time that trace-replay --stats
#                measures with timestamp queries around each submitted
#                batch, in runs of their own over every frame (the
#                timestamps cost llvmpipe time: the fps of those runs is
#                printed too, for information); the median of a frame, and
#                the whole replay process's wall time (start-up and
#                teardown in it) over the GPU time of all its frames,
#                goal <= 1.05x, with the time vkCreateInstance took (the
#                Vulkan loader loading every installed driver: no replay
#                avoids it) beside; and from the --stats runs, the
#                device's idle time between batches and the replay time
#                outside them, with the ratio a replay that never left
#                the device idle between batches would reach
#
# The glmark2 scenes are ones whose frames our replay draws pixel-exact
# (checked frame by frame against the layer's TRACEKIT_SCREENSHOT images
# when this was written): a scene that replays wrong could replay fast.
# pulsar is left out although it replays exact: gfxrecon-replay 0.9.18
# replays its zink capture at about 5 fps (some 190 ms a frame, where the
# capture ran at 400+), which would make the ratio say nothing.  The
# whole default list keeps it (and every other scene): its frame 10 of
# each scene replayed pixel-exact, and vkd3d-gears' frames 100, 1000 and
# 2000, when these were added (2026-12-05).
# Figures, not a test: it fails only when a program does.
#   tests/bench-replay.sh            (from anywhere, after make)
#   RUNS=5 tests/bench-replay.sh
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_start 3 120

if [ ! -f "$top/build/layer/VK_LAYER_TRACEKIT_capture.json" ] || [ ! -x "$bin/trace-replay" ]; then
	echo "bench-replay: build/layer or bin/trace-replay is missing: run make first" >&2
	exit 1
fi
bench_need bench-replay replay Xvfb vkcube glmark2 gfxrecon-replay bc python3
gfxr_layer=VK_LAYER_LUNARG_gfxreconstruct
if ! bench_has_gfxr; then
	echo "bench-replay: GFXReconstruct is not installed: no replay figures" >&2
	exit 0
fi

bench_vulkan_env TRACEKIT_SCREENSHOT

# an X display of our own
bench_xvfb bench-replay 70 71 72 73 74 75 76

x=(DISPLAY="$display")
headless=(DISPLAY= WAYLAND_DISPLAY=)
ours=(VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture)
gfxr=(VK_INSTANCE_LAYERS=$gfxr_layer GFXRECON_CAPTURE_FILE_TIMESTAMP=false)
zink=(LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink)
glmark=(glmark2 -s 400x300)
for s in build texture shading bump effect2d conditionals; do
	glmark+=(-b "$s:nframes=40")
done


echo "replay bench: $(nproc) cores, llvmpipe; ours headless, GFXReconstruct" \
	"$(dpkg-query -W -f "\${Version}" gfxreconstruct 2>/dev/null || echo "(version unknown)")" \
	"with --wsi xcb under Xvfb; medians of $runs runs"
echo "glmark2-zink run: ${glmark[*]}"
echo

# --- captures ----------------------------------------------------------------
run "${x[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/cube.trace" -- vkcube --c 300
must "vkcube --c 300 under our layer" "$work/cube.trace"
run "${x[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/cube.gfxr" -- vkcube --c 300
must "vkcube --c 300 under GFXReconstruct" "$work/cube.gfxr"
run_glmark "${x[@]}" "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/glmark.trace" -- "${glmark[@]}"
must "glmark2-zink under our layer" "$work/glmark.trace"
run_glmark "${x[@]}" "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/glmark.gfxr" -- "${glmark[@]}"
must "glmark2-zink under GFXReconstruct" "$work/glmark.gfxr"

# --- replays, in turns ---------------------------------------------------------
# ours_fps TRACE [--no-gpu-time]: sets $fps, $frames, $gpu_ms from
# trace-replay's --stats=json
ours_fps() {
	run "${headless[@]}" -- "$bin/trace-replay" --frames 1- --stats=json ${2:-} "$1"
	must "trace-replay $(basename "$1")" ""
	read -r fps frames gpu_ms < <(python3 -c 'import json,sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
g = s["frame_gpu_ms"]
print(s["fps"], s["frames"], g["median"] if g else "nan")' "$work/last.out")
}
# ours_gpu TRACE: sets $gpu_s (the GPU time of every frame), $inst_ms
# (vkCreateInstance), $idle_s (the device idle between batches) and
# $out_s (the replay time before the first batch and after the last)
# from a --stats=json run over the whole trace
ours_gpu() {
	run "${headless[@]}" -- "$bin/trace-replay" --stats=json "$1"
	must "trace-replay --stats $(basename "$1")" ""
	read -r gpu_s inst_ms idle_s out_s < <(python3 -c 'import json,sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
i = [f["ms"] for f in s["by_function"] if f["function"] == "vkCreateInstance"]
print(s["gpu_seconds"], i[0] if i else "nan", s["gpu_idle_seconds"],
      s["seconds"] - s["gpu_span_seconds"])' "$work/last.out")
}
# gfxr_fps FILE: sets $fps, $frames from gfxrecon-replay's "Replay FPS" line
gfxr_fps() {
	run "${x[@]}" -- gfxrecon-replay --wsi xcb "$1"
	must "gfxrecon-replay $(basename "$1")" ""
	read -r fps frames < <(sed -nE 's/.*Replay FPS: ([0-9.]+) fps, [0-9.]+ seconds, ([0-9]+) frames.*/\1 \2/p' \
		"$work/last.out")
	if [ -z "${fps:-}" ]; then
		echo "bench-replay: no Replay FPS line from gfxrecon-replay" >&2
		tail -5 "$work/last.out" >&2
		exit 1
	fi
}

# fps_turn NAME ours|gfxr: one run of that replayer without timestamps,
# its fps, wall time and frames added to f_ours, w_ours, n_ours (or _gfxr)
fps_turn() {
	if [ "$2" = ours ]; then
		ours_fps "$work/$1.trace" --no-gpu-time
	else
		gfxr_fps "$work/$1.gfxr"
	fi
	eval "f_$2+=(\"\$fps\") w_$2+=(\"\$secs\") n_$2=\$frames"
}

for name in cube glmark; do
	f_ours=() f_gfxr=() w_ours=() w_gfxr=() g_ours=() t_ours=() s_ours=() i_ours=()
	d_ours=() o_ours=()
	for _ in $(seq "$runs"); do
		fps_turn "$name" ours
		ours_fps "$work/$name.trace"
		g_ours+=("$gpu_ms")
		t_ours+=("$fps")
		ours_gpu "$work/$name.trace"
		s_ours+=("$gpu_s")
		i_ours+=("$inst_ms")
		d_ours+=("$idle_s")
		o_ours+=("$out_s")
		fps_turn "$name" gfxr
	done
	eval "${name}_fo=$(median "${f_ours[@]}") ${name}_fg=$(median "${f_gfxr[@]}")"
	eval "${name}_wo=$(median "${w_ours[@]}") ${name}_wg=$(median "${w_gfxr[@]}")"
	eval "${name}_no=$n_ours ${name}_ng=$n_gfxr ${name}_go=$(median "${g_ours[@]}")"
	eval "${name}_to=$(median "${t_ours[@]}")"
	eval "${name}_so=$(median "${s_ours[@]}") ${name}_io=$(median "${i_ours[@]}")"
	eval "${name}_do=$(median "${d_ours[@]}") ${name}_oo=$(median "${o_ours[@]}")"
done

printf '%-44s %12s %12s %7s %s\n' "figure" "tracekit" "GFXR" "ratio" "goal"
printf '%-44s %8.1f fps %8.1f fps %6sx %s\n' "replay vkcube --c 300 (frames $cube_no/$cube_ng)" \
	"$cube_fo" "$cube_fg" "$(ratio "$cube_fo" "$cube_fg")" ">= 1.5x"
printf '%-44s %8.1f fps %8.1f fps %6sx %s\n' "replay glmark2-zink 6x40 (frames $glmark_no/$glmark_ng)" \
	"$glmark_fo" "$glmark_fg" "$(ratio "$glmark_fo" "$glmark_fg")" ">= 1.5x"
printf '%-44s %10.3fs %10.3fs %6sx %s\n' "  wall time, vkcube (loading included)" \
	"$cube_wo" "$cube_wg" "$(ratio "$cube_wg" "$cube_wo")" "(for information)"
printf '%-44s %10.3fs %10.3fs %6sx %s\n' "  wall time, glmark2-zink" \
	"$glmark_wo" "$glmark_wg" "$(ratio "$glmark_wg" "$glmark_wo")" "(for information)"
printf '%-44s %8.1f fps %12s %7s %s\n' "  vkcube fps with GPU timestamps" "$cube_to" "-" "" \
	"(for information)"
printf '%-44s %8.1f fps %12s %7s %s\n' "  glmark2-zink fps with GPU timestamps" "$glmark_to" "-" "" \
	"(for information)"
printf '%-44s %9.3f ms %12s %7s %s\n' "  GPU busy a frame, vkcube (median)" "$cube_go" "-" "" \
	"(for information)"
printf '%-44s %9.3f ms %12s %7s %s\n' "  GPU busy a frame, glmark2-zink (median)" "$glmark_go" "-" "" \
	"(for information)"
printf '%-44s %10.3fs %10.3fs %6sx %s\n' "  whole replay over GPU time, vkcube" \
	"$cube_wo" "$cube_so" "$(ratio "$cube_wo" "$cube_so")" "<= 1.05x"
printf '%-44s %10.3fs %10.3fs %6sx %s\n' "  whole replay over GPU time, glmark2-zink" \
	"$glmark_wo" "$glmark_so" "$(ratio "$glmark_wo" "$glmark_so")" "<= 1.05x"
printf '%-44s %9.1f ms %9.1f ms %7s %s\n' "  vkCreateInstance in it, vkcube, glmark2-zink" \
	"$cube_io" "$glmark_io" "" "(for information)"
printf '%-44s %10.3fs %10.3fs %7s %s\n' "  GPU idle between batches, vkcube, glmark2" \
	"$cube_do" "$glmark_do" "" "(--stats runs, for information)"
printf '%-44s %10.3fs %10.3fs %7s %s\n' "  outside the batches (start-up, teardown)" \
	"$cube_oo" "$glmark_oo" "" "(--stats runs, for information)"
printf '%-44s %10sx %10sx %7s %s\n' "  least ratio with no idle between batches" \
	"$(ratio "$(echo "$cube_so + $cube_oo" | bc -l)" "$cube_so")" \
	"$(ratio "$(echo "$glmark_so + $glmark_oo" | bc -l)" "$glmark_so")" "" \
	"(GPU + start-up + teardown over GPU)"

# --- workloads the figures above were not tuned on: fps and wall time -------
# every scene of the default list (glmark2 with no -b), and vkd3d-gears
# killed after 3 s (SIGTERM, which it dies of: the trace is read up to its
# last whole record, with one warning; gfxrecon-replay reads its file the
# same way)
others=(glall)
run_glmark "${x[@]}" "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/glall.trace" -- \
	glmark2 -s 400x300 -b :nframes=20
must "glmark2-zink's default list under our layer" "$work/glall.trace"
run_glmark "${x[@]}" "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/glall.gfxr" -- \
	glmark2 -s 400x300 -b :nframes=20
must "glmark2-zink's default list under GFXReconstruct" "$work/glall.gfxr"
if command -v vkd3d-gears >/dev/null; then
	others+=(gears)
	run "${x[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/gears.trace" -- timeout -s TERM 3 vkd3d-gears
	[ -s "$work/gears.trace" ] || { rc=1; must "vkd3d-gears under our layer" "$work/gears.trace"; }
	run "${x[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/gears.gfxr" -- timeout -s TERM 3 vkd3d-gears
	[ -s "$work/gears.gfxr" ] || { rc=1; must "vkd3d-gears under GFXReconstruct" "$work/gears.gfxr"; }
else
	echo "bench-replay: vkd3d-gears is not installed (vkd3d-demos): no vkd3d-gears figures" >&2
fi
# content-heavy scenes (large vertex data and textures), 480 frames: the
# kind of capture the 1.05x goal was set on, where start-up is a small
# part of the whole
others+=(heavy)
heavy=(glmark2 -s 400x300 -b refract:nframes=120 -b jellyfish:nframes=120 -b terrain:nframes=120
	-b bump:bump-render=high-poly:nframes=120)
run_glmark "${x[@]}" "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/heavy.trace" -- "${heavy[@]}"
must "glmark2-zink's heavy scenes under our layer" "$work/heavy.trace"
run_glmark "${x[@]}" "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/heavy.gfxr" -- "${heavy[@]}"
must "glmark2-zink's heavy scenes under GFXReconstruct" "$work/heavy.gfxr"
for name in "${others[@]}"; do
	f_ours=() f_gfxr=() w_ours=() w_gfxr=()
	for _ in $(seq "$runs"); do
		fps_turn "$name" ours
		fps_turn "$name" gfxr
	done
	case $name in
	glall) label="glmark2-zink, every default scene x 20" ;;
	gears) label="vkd3d-gears, 3 s" ;;
	heavy) label="glmark2-zink, 4 heavy scenes x 120" ;;
	esac
	fo=$(median "${f_ours[@]}") fg=$(median "${f_gfxr[@]}")
	wo=$(median "${w_ours[@]}") wg=$(median "${w_gfxr[@]}")
	# (the heavy scenes keep llvmpipe busy: ours is within 1.05x of the
	# device's time below, and the ratio is what the device leaves)
	goal=">= 1.5x"
	[ "$name" != heavy ] || goal="as the device allows"
	printf '%-44s %8.1f fps %8.1f fps %6sx %s\n' "replay $label" "$fo" "$fg" "$(ratio "$fo" "$fg")" \
		"$goal (frames $n_ours/$n_gfxr; fps $(spread "${f_ours[@]}") vs $(spread "${f_gfxr[@]}"))"
	printf '%-44s %10.3fs %10.3fs %6sx %s\n' "  wall time (loading included)" "$wo" "$wg" \
		"$(ratio "$wg" "$wo")" "(for information)"
done

# the heavy scenes' whole replay process (timestamps in it) over the GPU
# time of all its frames, in runs of their own
h_ratio=()
for _ in $(seq "$runs"); do
	ours_gpu "$work/heavy.trace"
	h_ratio+=("$(echo "$secs / $gpu_s" | bc -l)")
done
printf '%-44s %10sx %10s %7s %s\n' "  whole replay over GPU time, heavy scenes" \
	"$(printf '%.3f' "$(median "${h_ratio[@]}")")" "-" "" "<= 1.05x (runs $(printf '%s\n' "${h_ratio[@]}" | sort -g |
	awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.3f-%.3f", lo, hi}'))"
