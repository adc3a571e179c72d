#!/bin/bash
# Figures for the capture layer VK_LAYER_TRACEKIT_capture beside
# GFXReconstruct's capture layer (VK_LAYER_LUNARG_gfxreconstruct, Debian's
# gfxreconstruct 0.9.18) on the same runs, under Xvfb on llvmpipe:
#
#   trace size   vkcube --c 300, and glmark2 through zink (12 scenes x 40
#                frames): ours with the layer's default (zstd) against GFXR's
#                default LZ4 capture; goal <= 0.8x
#   overhead     the glmark2-zink run's wall time with the layer minus
#                without, against the same for GFXR, $RUNS runs of each
#                taken in turns (without, ours, GFXR's, ours scanning all):
#                the median of each turn's with-minus-without, which a
#                slow spell of the machine that falls on one turn moves
#                little; goal: ours <= 0.5x GFXR's.  Then the same from
#                the medians of each side (a slow spell moves it more),
#                ours with TRACEKIT_SCAN=all (every mapped byte compared
#                at every submit, as before the layer followed what
#                command buffers reference), and all of it for CPU time
#                (user + system, of the program and all its threads, from
#                /usr/bin/time), for information
#   per call     what a layer adds to recording one command on the
#                calling thread (the thread CPU time of tests/bench-calls.c,
#                which records command buffers of one kind of command on
#                llvmpipe: ns a call with the layer minus without, the
#                least of 5 runs each), ours beside GFXR's, for
#                information; and the writes into 20 MiB of mapped vertex
#                and index buffers (an eighth of them) with the
#                vkQueueSubmit of a command buffer that binds them
#                (bench-calls submit): where the memory tracking runs,
#                at the submit and at the first write to a watched page.  GFXR encodes, compresses and writes on the
#                calling thread, we on threads of our own: this is what
#                the application's thread pays, not all the CPU either
#                layer takes (the overhead rows count that).  Then set
#                and mix again with a spinning process on every core
#   start, end   a program that makes an instance and a device, records
#                one command buffer and ends (bench-calls 1 set): the
#                whole process's wall time with a layer minus without,
#                the median of $START_TURNS turns' differences, ours
#                beside GFXR's, for information: what a layer costs any
#                program, however short (its loading, its start, the
#                trace's end); a one-frame glmark2 scene pays it once
#
# Figures, not a test: it fails only when a program does (a capture that
# did not end well or left no file).  Every program runs in a session of
# its own and is killed with its process group on a time limit or on exit.
#   tests/bench-layer.sh            (from anywhere, after make)
#   RUNS=3 tests/bench-layer.sh
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_start 5 120

if [ ! -f "$top/build/layer/VK_LAYER_TRACEKIT_capture.json" ]; then
	echo "bench-layer: build/layer is missing: run make first" >&2
	exit 1
fi
bench_need bench-layer layer Xvfb vkcube glmark2 bc /usr/bin/time
gfxr_layer=VK_LAYER_LUNARG_gfxreconstruct
if ! bench_has_gfxr; then
	echo "bench-layer: GFXReconstruct is not installed: no layer figures" >&2
	exit 0
fi
if [ ! -x "$top/build/tests/bench-calls" ]; then
	echo "bench-layer: build/tests/bench-calls is missing: run make bench" >&2
	exit 1
fi

bench_vulkan_env

# an X display of our own
bench_xvfb bench-layer 80 81 82 83 84 85 86
export DISPLAY="$display"

ours=(VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture)
gfxr=(VK_INSTANCE_LAYERS=$gfxr_layer GFXRECON_CAPTURE_FILE_TIMESTAMP=false)
zink=(LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink)
scenes="build texture shading bump effect2d pulsar desktop buffer ideas jellyfish shadow conditionals"
glmark=(glmark2 -s 400x300)
for s in $scenes; do
	glmark+=(-b "$s:nframes=40")
done
# the glmark2 runs under /usr/bin/time: $cpu, after each, their CPU seconds
timed=(/usr/bin/time -f "%U %S" -o "$work/cpu")
cpu_of_run() {
	# the last line: a run killed by a signal has a line saying so first
	cpu=$(tail -1 "$work/cpu" | awk '{ print $1 + $2 }')
}

mb() { echo "scale=2; $1 / 1000000" | bc -l; }
kb() { echo "scale=1; $1 / 1000" | bc -l; }

echo "capture layer bench: $(nproc) cores, Xvfb, llvmpipe; GFXReconstruct $(dpkg-query -W -f "\${Version}" gfxreconstruct 2>/dev/null || echo "(version unknown)")"
echo "glmark2-zink run: ${glmark[*]}"
echo

# --- trace size ---------------------------------------------------------
run "${ours[@]}" TRACEKIT_OUTPUT="$work/cube.trace" -- vkcube --c 300
must "vkcube --c 300 under our layer" "$work/cube.trace"
run "${ours[@]}" TRACEKIT_OUTPUT="$work/cube-br.trace" TRACEKIT_COMPRESSION=brotli -- vkcube --c 300
must "vkcube --c 300 under our layer (Brotli)" "$work/cube-br.trace"
run "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/cube.gfxr" -- vkcube --c 300
must "vkcube --c 300 under GFXReconstruct" "$work/cube.gfxr"
c_ours=$(stat -c %s "$work/cube.trace")
c_br=$(stat -c %s "$work/cube-br.trace")
c_gfxr=$(stat -c %s "$work/cube.gfxr")

# turn PREFIX: one timed run of glmark2-zink natively, under our layer,
# under GFXReconstruct and under our layer scanning all memory, in that
# order; the captures are $work/PREFIX.trace, PREFIX.gfxr, PREFIX-all.trace
turn() {
	run_glmark "${zink[@]}" -- "${timed[@]}" "${glmark[@]}"
	must "glmark2-zink" ""
	t_native+=("$secs") && cpu_of_run && u_native+=("$cpu")
	run_glmark "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/$1.trace" -- "${timed[@]}" "${glmark[@]}"
	must "glmark2-zink under our layer" "$work/$1.trace"
	t_ours+=("$secs") && cpu_of_run && u_ours+=("$cpu")
	run_glmark "${zink[@]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/$1.gfxr" -- "${timed[@]}" "${glmark[@]}"
	must "glmark2-zink under GFXReconstruct" "$work/$1.gfxr"
	t_gfxr+=("$secs") && cpu_of_run && u_gfxr+=("$cpu")
	run_glmark "${zink[@]}" "${ours[@]}" TRACEKIT_SCAN=all TRACEKIT_OUTPUT="$work/$1-all.trace" -- "${timed[@]}" "${glmark[@]}"
	must "glmark2-zink under our layer (TRACEKIT_SCAN=all)" "$work/$1-all.trace"
	t_all+=("$secs") && cpu_of_run && u_all+=("$cpu")
}

# the size runs of glmark2 are also the first timed runs
t_native=() t_ours=() t_gfxr=() t_all=()
u_native=() u_ours=() u_gfxr=() u_all=()
turn glmark
g_ours=$(stat -c %s "$work/glmark.trace")
g_gfxr=$(stat -c %s "$work/glmark.gfxr")
run_glmark "${zink[@]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/glmark-br.trace" TRACEKIT_COMPRESSION=brotli -- "${glmark[@]}"
must "glmark2-zink under our layer (Brotli)" "$work/glmark-br.trace"
g_br=$(stat -c %s "$work/glmark-br.trace")

printf '%-44s %12s %12s %7s %s\n' "figure" "tracekit" "GFXR" "ratio" "goal"
printf '%-44s %10sKB %10sKB %6sx %s\n' "trace size, vkcube --c 300" \
	"$(kb "$c_ours")" "$(kb "$c_gfxr")" "$(ratio "$c_ours" "$c_gfxr")" "<= 0.8x"
printf '%-44s %10sMB %10sMB %6sx %s\n' "trace size, glmark2-zink 12 scenes x 40" \
	"$(mb "$g_ours")" "$(mb "$g_gfxr")" "$(ratio "$g_ours" "$g_gfxr")" "<= 0.8x"
printf '%-44s %10sKB %10sKB %6sx %s\n' "  (Brotli) vkcube --c 300" \
	"$(kb "$c_br")" "$(kb "$c_gfxr")" "$(ratio "$c_br" "$c_gfxr")" "(for information)"
printf '%-44s %10sMB %10sMB %6sx %s\n' "  (Brotli) glmark2-zink 12 x 40" \
	"$(mb "$g_br")" "$(mb "$g_gfxr")" "$(ratio "$g_br" "$g_gfxr")" "(for information)"
rm -f "$work"/*.trace "$work"/*.gfxr

# --- overhead -------------------------------------------------------------
# in turns, so that a slow spell of the machine falls on all three alike
for _ in $(seq 2 "$runs"); do
	turn t
	rm -f "$work"/t*.trace "$work/t.gfxr"
done
# paired WITH WITHOUT (array names): the median of each turn's difference
paired() {
	local -n with=$1 without=$2
	local d=() i
	for i in "${!with[@]}"; do
		d+=("$(echo "${with[$i]} - ${without[$i]}" | bc -l)")
	done
	median "${d[@]}"
}
# of OURS GFXR: their ratio, or n/a where GFXR's is lost in the noise
of() {
	if [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then echo "$(ratio "$1" "$2")x"; else echo n/a; fi
}
# overhead WHAT GOAL NATIVE OURS GFXR ALL (array names): the figure lines
# for one measure, in seconds, ours beside GFXR's
overhead() {
	local what=$1 goal=$2 p_ours p_gfxr p_all m_native m_ours m_gfxr
	p_ours=$(paired "$4" "$3")
	p_gfxr=$(paired "$5" "$3")
	p_all=$(paired "$6" "$3")
	local -n n_=$3 o_=$4 g_=$5
	m_native=$(median "${n_[@]}")
	m_ours=$(median "${o_[@]}")
	m_gfxr=$(median "${g_[@]}")
	printf '%-44s %11.3fs %11.3fs %7s %s\n' "$what overhead, glmark2-zink 12 x 40" \
		"$p_ours" "$p_gfxr" "$(of "$p_ours" "$p_gfxr")" "$goal"
	local d_ours d_gfxr
	d_ours=$(echo "$m_ours - $m_native" | bc -l)
	d_gfxr=$(echo "$m_gfxr - $m_native" | bc -l)
	printf '%-44s %11.3fs %11.3fs %7s %s\n' "  (medians of each side) $what overhead" \
		"$d_ours" "$d_gfxr" "$(of "$d_ours" "$d_gfxr")" "(for information)"
	printf '%-44s %11.3fs %11.3fs %7s %s\n' "  (TRACEKIT_SCAN=all) $what overhead" \
		"$p_all" "$p_gfxr" "$(of "$p_all" "$p_gfxr")" "(for information: every byte compared)"
	printf '%-44s %11.3fs %11.3fs %7s %s\n' "  $what with the layer" "$m_ours" "$m_gfxr" \
		"$(ratio "$m_ours" "$m_gfxr")x" "native $(printf '%.3f' "$m_native")s"
}
overhead "wall time" "<= 0.5x (median of $runs turns' differences)" t_native t_ours t_gfxr t_all
overhead "CPU time" "(for information)" u_native u_ours u_gfxr u_all

# --- per call ---------------------------------------------------------------
# least KIND ENV...: $ns, the least ns a call of 5 runs of bench-calls on
# llvmpipe (run in this shell, not $(...): an interrupt kills what runs)
lvp=(/usr/share/vulkan/icd.d/lvp_icd.*.json)
if [ ! -f "${lvp[0]}" ]; then
	echo "bench-layer: no llvmpipe ICD in /usr/share/vulkan/icd.d: no per-call figures" >&2
	exit 0
fi
least() {
	local kind=$1 all=() i
	shift
	for i in 1 2 3 4 5; do
		run VK_DRIVER_FILES="${lvp[0]}" "$@" -- "$top/build/tests/bench-calls" 300 "$kind"
		must "bench-calls $kind" ""
		all+=("$(awk '/ ns\/call$/ { print $(NF - 1) }' "$work/last.out")")
	done
	ns=$(printf '%s\n' "${all[@]}" | sort -g | head -1)
}
# --- a program's start and end -----------------------------------------------
s_native=() s_ours=() s_gfxr=()
for t in $(seq "${START_TURNS:-21}"); do
	run VK_DRIVER_FILES="${lvp[0]}" -- "$top/build/tests/bench-calls" 1 set
	must "bench-calls 1 set"
	s_native+=("$secs")
	run VK_DRIVER_FILES="${lvp[0]}" "${ours[@]}" TRACEKIT_OUTPUT="$work/s.trace" -- \
		"$top/build/tests/bench-calls" 1 set
	must "bench-calls 1 set under our layer" "$work/s.trace"
	s_ours+=("$secs")
	run VK_DRIVER_FILES="${lvp[0]}" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/s.gfxr" -- \
		"$top/build/tests/bench-calls" 1 set
	must "bench-calls 1 set under GFXReconstruct" "$work/s.gfxr"
	s_gfxr+=("$secs")
	rm -f "$work/s.trace" "$work/s.gfxr"
done
o=$(paired s_ours s_native)
g=$(paired s_gfxr s_native)
printf '%-44s %10.1fms %10.1fms %7s %s\n' "start and end: instance, device, exit" \
	"$(echo "$o * 1000" | bc -l)" "$(echo "$g * 1000" | bc -l)" "$(of "$o" "$g")" \
	"(for information: native $(printf '%.1f' "$(echo "$(median "${s_native[@]}") * 1000" | bc -l)") ms, median of ${START_TURNS:-21} turns)"

# per_call KIND LABEL: $n, $o, $g (ns a call: native, ours and GFXR's added)
# and the figure's line
per_call() {
	least "$1"
	n=$ns
	least "$1" "${ours[@]}" TRACEKIT_OUTPUT="$work/c.trace"
	o=$(echo "$ns - $n" | bc -l)
	least "$1" "${gfxr[@]}" GFXRECON_CAPTURE_FILE="$work/c.gfxr"
	g=$(echo "$ns - $n" | bc -l)
	rm -f "$work/c.trace" "$work/c.gfxr"
	printf '%-44s %10.0fns %10.0fns %7s %s\n' "$2" \
		"$o" "$g" "$(of "$o" "$g")" "(for information: native $(printf '%.0f' "$n") ns)"
}
for kind in set barrier bind draw mix submit; do
	what="vkCmd* ($kind)"
	[ "$kind" = submit ] && what="writes + vkQueueSubmit, 20 MiB mapped"
	per_call "$kind" "per call, calling thread, $what"
	if [ "$kind" = submit ]; then
		# the same with no page watched (layer/watch.c): every byte
		# the submit may read compared
		least "$kind" "${ours[@]}" TRACEKIT_OUTPUT="$work/c.trace" TRACEKIT_WATCH=off
		o=$(echo "$ns - $n" | bc -l)
		rm -f "$work/c.trace"
		printf '%-44s %10.0fns %10.0fns %7s %s\n' "  the same, ours with TRACEKIT_WATCH=off" \
			"$o" "$g" "$(of "$o" "$g")" "(for information)"
	fi
done
# set and mix with every core kept busy by a spinning process (a program
# that uses every core): our writer thread then finds no idle core, no
# spare record comes back, and each record is fresh memory
hogs=()
for _ in $(seq "$(nproc)"); do
	setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
	hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null || true; bench_cleanup' EXIT
for kind in set mix; do
	per_call "$kind" "per call, every core busy, vkCmd* ($kind)"
done
kill "${hogs[@]}" 2>/dev/null || true
if [ "$retried" -gt 0 ]; then
	echo "($retried glmark2 runs were run again after an X error at teardown)"
fi
