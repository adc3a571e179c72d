# Sourced by every bench script: an X display of their own, a timed run
# in a session of its own, medians and ratios.  It sets $top (the
# checkout) and $bin; the script calls bench_start RUNS LIMIT (or sets
# $runs, $limit and $work with an EXIT trap of its own) before the rest.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${BIN:-$top/bin}

cur=""                # the process group running now
xvfb=""

# bench_start RUNS LIMIT: $runs ($RUNS overrides), $limit (seconds for
# any one program run; $LIMIT overrides), and $work, this run's folder,
# removed (and the run in progress killed) at exit; an interrupt exits.
bench_start() {
	runs=${RUNS:-$1}
	limit=${LIMIT:-$2}
	work=$(mktemp -d)
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

bench_cleanup() {
	[ -n "$cur" ] && kill -KILL -- "-$cur" 2>/dev/null || true
	[ -n "$xvfb" ] && kill -- "-$xvfb" 2>/dev/null || true
	rm -rf "$work"
}

# bench_need NAME WHAT PROGRAM...: exits 0 with a line on standard error
# unless every PROGRAM is installed: no WHAT figures, not a failure.
bench_need() {
	local name=$1 what=$2 p
	shift 2
	for p in "$@"; do
		if ! command -v "$p" >/dev/null; then
			echo "$name: $p is not installed: no $what figures" >&2
			exit 0
		fi
	done
}

# bench_has_gfxr: whether GFXReconstruct's capture layer is installed.
bench_has_gfxr() {
	ls /usr/share/vulkan/explicit_layer.d/ 2>/dev/null | grep -qi gfxreconstruct
}

# bench_beside_gfxr NAME WHAT D...: the set-up of a bench that runs each
# program natively, under our layer and under GFXReconstruct's: exits 0
# with a line if GFXReconstruct is not installed (no WHAT figures), else
# the Vulkan environment (bench_vulkan_env, no GFXR settings from the
# caller) and an X display of its own on the first free D (bench_xvfb),
# exported.
bench_beside_gfxr() {
	local name=$1 what=$2
	shift 2
	if ! bench_has_gfxr; then
		echo "$name: GFXReconstruct is not installed: no $what figures" >&2
		exit 0
	fi
	bench_vulkan_env GFXRECON_CAPTURE_COMPRESSION_TYPE
	bench_xvfb "$name" "$@"
	export DISPLAY="$display"
}

# bench_vulkan_env [NAME...]: a runtime folder in $work, our layer's build
# folder before the installed layers, and none of the caller's layer
# settings (VK_INSTANCE_LAYERS, TRACEKIT_OUTPUT, TRACEKIT_COMPRESSION and
# the NAMEs) in the environment.
bench_vulkan_env() {
	export XDG_RUNTIME_DIR="$work/xdg"
	mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
	export VK_LAYER_PATH="$top/build/layer:/usr/share/vulkan/explicit_layer.d"
	unset VK_INSTANCE_LAYERS TRACEKIT_OUTPUT TRACEKIT_COMPRESSION "$@"
}

# bench_xvfb NAME D...: starts Xvfb on the first free display of D...;
# sets $display (":D") and $xvfb, or exits 1 naming NAME.
bench_xvfb() {
	local name=$1 d
	shift
	for d in "$@"; do
		[ -e "/tmp/.X11-unix/X$d" ] && continue
		setsid Xvfb ":$d" -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 </dev/null &
		xvfb=$!
		for _ in $(seq 50); do
			[ -e "/tmp/.X11-unix/X$d" ] && break
			sleep 0.1
		done
		display=":$d"
		return 0
	done
	echo "$name: no free X display (:$1-:${*: -1})" >&2
	exit 1
}

# run ENV... -- PROGRAM ARGS...: runs it in a session of its own, standard
# output and error to $work/last.out, killed with its group after $limit s;
# sets $secs (wall time) and $rc
run() {
	local envs=()
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	local s e
	s=$(date +%s.%N)
	setsid env "${envs[@]}" timeout -s KILL "$limit" "$@" >"$work/last.out" 2>&1 </dev/null &
	cur=$!
	rc=0
	wait "$cur" || rc=$?
	kill -KILL -- "-$cur" 2>/dev/null || true
	cur=""
	e=$(date +%s.%N)
	secs=$(echo "$e - $s" | bc -l)
}

# run_glmark ENV... -- PROGRAM ARGS...: run, for glmark2 through zink,
# which now and then dies of an X error (BadDrawable from X_PutImage)
# after its last frame, as it tears its window down while a present is
# still queued: a race in the program, not a failed run.  Such a run is
# run again (at most twice more), counted in $retried.
retried=0
run_glmark() {
	local i
	for i in 1 2 3; do
		run "$@"
		if [ "$rc" = 0 ] || ! grep -q 'X Error of failed request' "$work/last.out"; then
			return 0
		fi
		[ "$i" = 3 ] || retried=$((retried + 1))
	done
}

# must WHAT [FILE]: the last run must have ended well (and left FILE);
# else the script ($0) stops with its output's end
must() {
	if [ "$rc" != 0 ] || { [ -n "${2:-}" ] && [ ! -s "$2" ]; }; then
		echo "$(basename "$0" .sh): $1 failed (exit $rc${2:+, file $2})" >&2
		tail -5 "$work/last.out" >&2
		exit 1
	fi
}

ratio() { echo "scale=2; $1 / $2" | bc -l; }
# median V...: the median of the values (of an even count, the mean of
# the middle two)
median() {
	printf '%s\n' "$@" | sort -g |
		awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# spread V...: the least and the most of the values, "least-most" (one
# decimal)
spread() {
	printf '%s\n' "$@" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.1f-%.1f", lo, hi}'
}

# time_median PROGRAM ARGS...: the median wall time of $runs runs, its
# standard output discarded (the disk is not what is measured)
time_median() {
	local t=() s e
	for _ in $(seq "$runs"); do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s.%N)
		t+=("$(echo "$e - $s" | bc -l)")
	done
	median "${t[@]}"
}
