#!/bin/bash
# Every scene of glmark2's default benchmark (the list it runs with no
# -b), through zink on llvmpipe, each run alone with a fixed frame count:
# the capture layer's trace size and added wall time per scene and in
# total, beside GFXReconstruct 0.9.18's with its default LZ4 and with ZSTD.
#
#   size         ours with the layer's default settings (zstd), and with
#                TRACEKIT_COMPRESSION=snappy (what apitrace 11 reads),
#                against GFXR LZ4 and GFXR ZSTD;
#                goals: <= 0.8x GFXR LZ4 in every scene, <= 0.8x GFXR ZSTD
#                in total
#   added time   a scene's wall time under a layer minus its native wall
#                time, the median over $RUNS turns taken in turn (native,
#                ours, GFXR), per scene and summed over the scenes; and
#                each turn's added times summed over the scenes, the
#                median of the turns' ratios with their spread (a scene's
#                added time is within its turns' spread: the sums say
#                more than any one scene)
#   overhead     the whole list in $PAIRS turns (native, ours, GFXR's),
#                the median of the turns' ratios of added time, with its
#                spread, on a quiet machine and with every core kept busy;
#                goal: ours <= 0.5x GFXR's
#
# Figures, not a test: it fails only when a program does.
#   tests/bench-scenes.sh                 (after make)
#   RUNS=5 NFRAMES=40 PAIRS=11 OVERHEAD_FRAMES=10 tests/bench-scenes.sh
#   SCENES='build:use-vbo=true refract' tests/bench-scenes.sh   (a few only)
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_start 5 180
nframes=${NFRAMES:-40}

bench_need bench-scenes scene Xvfb glmark2 bc
bench_beside_gfxr bench-scenes scene 70 71 72 73 74 75 76

zink=(LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink)
ours=(VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture)
gfxr=(VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE_TIMESTAMP=false)

# The default list as glmark2 itself runs it: one frame of each, its
# lines "[scene] opt=val:opt=val: FPS: ..." ("<default>" for none) turned
# back into benchmark descriptions.
scenes=()
if [ -n "${SCENES:-}" ]; then
	read -ra scenes <<<"$SCENES"
else
	run "${zink[@]}" -- glmark2 -s 400x300 -b :nframes=1
	must "glmark2-zink, the default list"
	while IFS= read -r b; do
		scenes+=("$b")
	done < <(sed -n 's/^\[\([a-z0-9]*\)\] \(.*\): FPS:.*/\1:\2/p' "$work/last.out" |
		sed 's/:<default>$//')
fi
[ "${#scenes[@]}" -gt 0 ] || { echo "bench-scenes: no scenes" >&2; exit 1; }

mb() { echo "scale=2; $1 / 1000000" | bc -l; }
sum() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.3f\n", s }'; }

echo "glmark2 default list through zink: ${#scenes[@]} scenes x $nframes frames, 400x300;" \
	"sizes of one run, added times the median of $runs turns"
printf '%-34s %8s %8s %8s %8s %6s %6s %8s %8s %8s\n' "scene" "ours" "snappy" "GFXR-LZ4" "GFXR-ZST" \
	"/LZ4" "/ZST" "native" "+ours" "+GFXR"
s_ours=() s_snappy=() s_lz4=() s_zst=() a_native=() a_ours=() a_gfxr=()
# per turn, the added times summed over the scenes (turn t of each scene)
turn_ours=() turn_gfxr=()
for t in $(seq "$runs"); do turn_ours+=(0) turn_gfxr+=(0); done
worst=0 worst_name=""
for sc in "${scenes[@]}"; do
	g=(glmark2 -s 400x300 -b "$sc:nframes=$nframes")
	n=() o=() x=()
	for t in $(seq "$runs"); do
		run_glmark "${zink[@]}" -- "${g[@]}"
		must "glmark2-zink $sc"
		n+=("$secs")
		run_glmark "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/s.trace" -- "${g[@]}"
		must "glmark2-zink $sc under our layer" "$work/s.trace"
		o+=("$(echo "$secs - ${n[-1]}" | bc -l)")
		run_glmark "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/s.gfxr" -- "${g[@]}"
		must "glmark2-zink $sc under GFXReconstruct" "$work/s.gfxr"
		x+=("$(echo "$secs - ${n[-1]}" | bc -l)")
		turn_ours[t - 1]=$(echo "${turn_ours[t - 1]} + ${o[-1]}" | bc -l)
		turn_gfxr[t - 1]=$(echo "${turn_gfxr[t - 1]} + ${x[-1]}" | bc -l)
		if [ "$t" = 1 ]; then
			s_ours+=("$(stat -c %s "$work/s.trace")")
			s_lz4+=("$(stat -c %s "$work/s.gfxr")")
		fi
	done
	run_glmark "${zink[@]}" "${ours[@]}" TRACEKIT_COMPRESSION=snappy TRACEKIT_OUTPUT="$work/z.trace" -- "${g[@]}"
	must "glmark2-zink $sc under our layer (Snappy)" "$work/z.trace"
	s_snappy+=("$(stat -c %s "$work/z.trace")")
	run_glmark "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_COMPRESSION_TYPE=ZSTD \
		GFXRECON_CAPTURE_FILE="$work/z.gfxr" -- "${g[@]}"
	must "glmark2-zink $sc under GFXReconstruct (ZSTD)" "$work/z.gfxr"
	s_zst+=("$(stat -c %s "$work/z.gfxr")")
	rm -f "$work"/*.trace "$work"/*.gfxr
	a_native+=("$(median "${n[@]}")")
	a_ours+=("$(median "${o[@]}")")
	a_gfxr+=("$(median "${x[@]}")")
	r=$(ratio "${s_ours[-1]}" "${s_lz4[-1]}")
	if [ "$(echo "$r > $worst" | bc -l)" = 1 ]; then
		worst=$r worst_name=$sc
	fi
	printf '%-34.34s %8s %8s %8s %8s %5sx %5sx %7.2fs %7.2fs %7.2fs\n' "$sc" \
		"$(mb "${s_ours[-1]}")" "$(mb "${s_snappy[-1]}")" "$(mb "${s_lz4[-1]}")" "$(mb "${s_zst[-1]}")" \
		"$r" "$(ratio "${s_ours[-1]}" "${s_zst[-1]}")" \
		"${a_native[-1]}" "${a_ours[-1]}" "${a_gfxr[-1]}"
done
t_ours=$(sum "${s_ours[@]}") t_snappy=$(sum "${s_snappy[@]}")
t_lz4=$(sum "${s_lz4[@]}") t_zst=$(sum "${s_zst[@]}")
d_ours=$(sum "${a_ours[@]}") d_gfxr=$(sum "${a_gfxr[@]}")
printf '%-34s %8s %8s %8s %8s %5sx %5sx %7.2fs %7.2fs %7.2fs\n' "total (MB, s)" \
	"$(mb "$t_ours")" "$(mb "$t_snappy")" "$(mb "$t_lz4")" "$(mb "$t_zst")" \
	"$(ratio "$t_ours" "$t_lz4")" "$(ratio "$t_ours" "$t_zst")" \
	"$(sum "${a_native[@]}")" "$d_ours" "$d_gfxr"
echo
printf '%-52s %s\n' "size, default settings, largest scene ratio to GFXR LZ4:" \
	"${worst}x ($worst_name); goal <= 0.8x in every scene"
printf '%-52s %s\n' "size, default settings, total vs GFXR ZSTD:" \
	"$(ratio "$t_ours" "$t_zst")x; goal <= 0.8x"
printf '%-52s %s\n' "size, Snappy, total vs GFXR LZ4:" "$(ratio "$t_snappy" "$t_lz4")x (for information)"
if [ "$(echo "$d_gfxr > 0" | bc -l)" = 1 ]; then
	printf '%-52s %s\n' "added time, summed over scenes, ours / GFXR's:" \
		"$(ratio "$d_ours" "$d_gfxr")x (${d_ours}s vs ${d_gfxr}s); goal <= 0.5x"
	# the same per turn: each turn's sums over the scenes, their ratio
	q=()
	for t in $(seq "$runs"); do
		q+=("$(echo "${turn_ours[t - 1]} / ${turn_gfxr[t - 1]}" | bc -l)")
	done
	printf '%-52s %.2fx (turns %.2f to %.2f); ours +%.2fs, GFXR +%.2fs (medians of the turns)\n' \
		"added time, each turn summed over scenes:" "$(median "${q[@]}")" \
		"$(printf '%s\n' "${q[@]}" | sort -g | head -1)" "$(printf '%s\n' "${q[@]}" | sort -g | tail -1)" \
		"$(median "${turn_ours[@]}")" "$(median "${turn_gfxr[@]}")"
fi

# --- overhead: the whole list, paired turns, quiet and busy -------------
# PAIRS turns of the whole default list (OVERHEAD_FRAMES frames a scene),
# each turn native, ours, GFXR's in that order: per turn, each layer's
# added time over that turn's native run; the median of the turns' ratios
# ours / GFXR's, with their spread.  Then the same with every core kept
# busy by another process (a spinning shell per core, at the same
# priority), as a game that uses every core would.
pairs=${PAIRS:-11}
oframes=${OVERHEAD_FRAMES:-10}
whole=(glmark2 -s 400x300 -b ":nframes=$oframes")
hogs=()
# series NAME: the turns, then the figure line
series() {
	local d_o=() d_x=() q=() t
	for t in $(seq "$pairs"); do
		run_glmark "${zink[@]}" -- "${whole[@]}"
		must "glmark2-zink, the default list"
		local n=$secs
		run_glmark "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/o.trace" -- "${whole[@]}"
		must "glmark2-zink, the default list, under our layer" "$work/o.trace"
		d_o+=("$(echo "$secs - $n" | bc -l)")
		run_glmark "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/o.gfxr" -- "${whole[@]}"
		must "glmark2-zink, the default list, under GFXReconstruct" "$work/o.gfxr"
		d_x+=("$(echo "$secs - $n" | bc -l)")
		q+=("$(echo "${d_o[-1]} / ${d_x[-1]}" | bc -l)")
		rm -f "$work/o.trace" "$work/o.gfxr"
	done
	local lo hi
	lo=$(printf '%s\n' "${q[@]}" | sort -g | head -1)
	hi=$(printf '%s\n' "${q[@]}" | sort -g | tail -1)
	printf '%-52s %.2fx (turns %.2f to %.2f); ours +%.2fs, GFXR +%.2fs (medians); goal <= 0.5x\n' \
		"added time, whole list, $1, ours / GFXR's:" "$(median "${q[@]}")" "$lo" "$hi" \
		"$(median "${d_o[@]}")" "$(median "${d_x[@]}")"
}
if [ "$pairs" -gt 0 ]; then
echo
echo "overhead: the whole default list, $oframes frames a scene, $pairs turns each of native, ours, GFXR's"
series quiet
for _ in $(seq "$(nproc)"); do
	setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
	hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null || true; bench_cleanup' EXIT
series "busy ($(nproc) spinning processes)"
kill "${hogs[@]}" 2>/dev/null || true
fi

if [ "$retried" -gt 0 ]; then
	echo "($retried glmark2 runs were run again after an X error at teardown)"
fi
