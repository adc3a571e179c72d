# Shared by the bats suites.  Programs are the ones `make` built in bin/;
# BADINPUT suites use the sanitizer build in build/asan/bin.
TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BIN="$TOP/bin"
ASAN_BIN="$TOP/build/asan/bin"
DATA="$TOP/tests/data"
export PATH="$BIN:$PATH"
# ASan: a leak or an error is a failure, reported on stderr with exit 99
export ASAN_OPTIONS="detect_leaks=1:exitcode=99:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99"

# new_xvfb DEPTH PIDFILE: starts an Xvfb of that depth on a display the
# server picks itself (-displayfd: suites run side by side, and two of them
# looking for a free display at once would take the same one), writes its
# pid to PIDFILE and prints the display once it accepts clients.
new_xvfb() {
	local i
	rm -f "$2.display"
	Xvfb -displayfd 3 -screen 0 1024x768x"$1" -nolisten tcp 3>"$2.display" >/dev/null 2>&1 &
	echo $! >"$2"
	for i in $(seq 100); do
		[ -s "$2.display" ] && break
		sleep 0.1
	done
	[ -s "$2.display" ] || return 1
	echo ":$(cat "$2.display")"
}

# Starts one Xvfb for the suite (call from setup_file); sets DISPLAY.
start_xvfb() {
	export XDG_RUNTIME_DIR="$BATS_FILE_TMPDIR/xdg"
	mkdir -p "$XDG_RUNTIME_DIR"
	chmod 700 "$XDG_RUNTIME_DIR"
	DISPLAY=$(new_xvfb 24 "$BATS_FILE_TMPDIR/xvfb.pid") || return 1
	export DISPLAY
}

stop_xvfb() {
	[ -f "$BATS_FILE_TMPDIR/xvfb.pid" ] && kill "$(cat "$BATS_FILE_TMPDIR/xvfb.pid")" 2>/dev/null || true
}

# apitrace dump with everything it can show: verbose calls, thread ids.
full_dump() {
	apitrace dump -v --thread-ids=yes --color=never "$@"
}

# run_for SECONDS COMMAND...: runs COMMAND in a session of its own and,
# after SECONDS, interrupts every process in it (a program traced by
# `apitrace trace` is apitrace's child: signalling apitrace alone leaves
# it running, holding bats' output open); what is still there 20 s later
# is killed.  apitrace flushes its trace on the interrupt, which took
# 1.8 s for es2gears here and more than 5 s once in a loaded make check:
# killed then, its trace ended inside a call.  The exit status is not the
# command's.
run_for() {
	local secs=$1 pid i
	shift
	setsid "$@" </dev/null &
	pid=$!
	for i in $(seq $((secs * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -INT -- "-$pid" 2>/dev/null || true
	for i in $(seq 200); do
		kill -0 -- "-$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# --- trace-replay suites (replay-vk.bats, replay-vma.bats) ---------------
# TRACE_REPLAY=build/asan/bin/trace-replay runs a suite on the sanitizer
# build.
REPLAY=$(realpath "${TRACE_REPLAY:-$BIN/trace-replay}")
export REPLAY

# For setup_file.  LeakSanitizer and Vulkan: the loader dlcloses the
# driver at vkDestroyInstance, after which what the driver's globals held
# looks leaked and its frames cannot be named.  Keep libraries mapped, and
# suppress (tests/lsan.supp) only the driver's and loader's own.
sanitizer_prep() {
	printf 'int dlclose(void *h);\nint dlclose(void *h) { (void)h; return 0; }\n' \
		>"$BATS_FILE_TMPDIR/nodlclose.c"
	cc -shared -fPIC -o "$BATS_FILE_TMPDIR/nodlclose.so" "$BATS_FILE_TMPDIR/nodlclose.c"
}

# sanitized CMD...: runs CMD, a sanitizer build, with the preload and
# suppressions of sanitizer_prep (set for it alone: the compiler and
# vma-import are not sanitized; the sanitizers' runtimes are linked into
# the build, so none of them is preloaded first)
sanitized() {
	LD_PRELOAD="$BATS_FILE_TMPDIR/nodlclose.so" \
		LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp:print_suppressions=0" "$@"
}

# replay ARGS...: trace-replay, the sanitizer build under sanitized
replay() {
	if [[ $REPLAY == */asan/* ]]; then
		sanitized "$REPLAY" "$@"
	else
		"$REPLAY" "$@"
	fi
}
export -f replay sanitized

# replay_error ARGS...: runs trace-replay for its messages: $output is its
# standard error alone.
replay_error() {
	run bash -c 'replay "$@" 2>&1 >/dev/null' replay "$@"
}

# replays_silent ARGS...: trace-replay --validate ARGS exits 0 and says
# nothing on standard error
replays_silent() {
	replay_error --validate "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# usage_cases COMMAND [INPUT]: each line of standard input, ARGS|MESSAGE,
# run as COMMAND ARGS INPUT (ARGS split on spaces), must exit 2 with
# "NAME: MESSAGE" as its first line of standard error (NAME: COMMAND's
# file name) and the usage line after it.  Lists every case that did not.
usage_cases() {
	local cmd=$1 input=${2:-} name args want out rc bad=0
	name=$(basename "$cmd")
	while IFS='|' read -r args want; do
		[ -n "$args" ] || continue
		rc=0
		# shellcheck disable=SC2086
		out=$("$cmd" $args ${input:+"$input"} 2>&1 >/dev/null) || rc=$?
		if [ "$rc" != 2 ] || [ "$(head -n 1 <<<"$out")" != "$name: $want" ] ||
			! grep -q "^usage: $name " <<<"$out"; then
			echo "# $name $args: exit $rc, want 2 and '$name: $want': $out"
			bad=1
		fi
	done
	return "$bad"
}

# edit_record TEXT PATTERN SED OUT: TEXT (a decoded trace) with the sed
# program SED run on it, as OUT; @LINE@ in SED stands for the line of the
# first record that matches PATTERN, which sets $L (that line) and $CALL
# (its call number).  Fails if no record matches or nothing changed.
edit_record() {
	L=$(grep -m1 -n -- "$2" "$1" | cut -d: -f1)
	[ -n "$L" ]
	CALL=$(sed -n "${L}s/^{call: \([0-9]*\),.*/\1/p" "$1")
	sed "${3//@LINE@/$L}" "$1" >"$4"
	! cmp -s "$4" "$1"
}

# glmark_retry OUT COMMAND...: COMMAND (glmark2 through zink under a
# layer), its output into OUT, its exit status into OUT.rc.  Where glmark2
# died of an X error (BadDrawable, X_PutImage) after its score, it runs
# again, at most twice more, each retry said in OUT.retries.  The error
# is glmark2's and Mesa's own race at teardown, which time spent at exit
# exposes: with no layer and a 5-20 ms sleep in an exit handler, 1 to 5
# runs in 40 ended so, none in 40 without it; none in 58 captures here,
# but twice in a row on a CI machine
glmark_retry() {
	local out=$1 try rc
	shift
	rm -f "$out.retries"
	for try in 1 2 3; do
		rc=0
		"$@" >"$out" 2>&1 || rc=$?
		echo $rc >"$out.rc"
		[ $rc = 0 ] && return 0
		grep -q 'glmark2 Score' "$out" && grep -q BadDrawable "$out" || return 0
		echo "glmark2 run $try: X error after the score (BadDrawable); run again" >>"$out.retries"
	done
}

# glmark_ok OUT: glmark_retry's run ended with exit 0; its retries, its
# status and its lines other than the scenes' are printed first, where a
# failure's log shows them
glmark_ok() {
	cat "$1.retries" 2>/dev/null || true
	echo "glmark2 exit status: $(cat "$1.rc")"
	grep -v -e '^\[' -e '^ *=*$' -e '^    ' "$1" || true
	[ "$(cat "$1.rc")" = 0 ]
	grep -q 'glmark2 Score' "$1"
}

# layer_capture OUT PROGRAM ARGS...: PROGRAM under our capture layer (the
# installed layers still found), its trace into OUT, its output dropped
layer_capture() {
	local out=$1
	shift
	VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$out" \
		timeout 60 "$@" >/dev/null 2>&1
}

# vkthreads_pair TRACE ARGS...: examples/vkthreads ARGS... natively, then
# under the capture layer writing TRACE; their output and status in
# $W/native.out, $W/native.rc, $W/layer.out, $W/layer.rc (a setup_file's:
# it fails the suite when the example is not built)
vkthreads_pair() {
	local trace=$1 rc=0
	shift
	[ -x "$TOP/build/examples/vkthreads" ] ||
		{ echo "build/examples/vkthreads is not built (make examples)" >&3; return 1; }
	"$TOP/build/examples/vkthreads" "$@" >"$W/native.out" 2>&1 || rc=$?
	echo $rc >"$W/native.rc"
	rc=0
	vkthreads_capture "$trace" "$@" >"$W/layer.out" 2>&1 || rc=$?
	echo $rc >"$W/layer.rc"
}

# vkthreads_capture TRACE ARGS...: examples/vkthreads ARGS... under the
# capture layer, writing TRACE
vkthreads_capture() {
	local trace=$1
	shift
	VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$trace" \
		timeout 60 "$TOP/build/examples/vkthreads" "$@"
}

# setup_submits TRIM: how many of the capture's submits the setup of TRIM
# (trace-trim's output) runs again (not those of its own command buffers,
# handles 0x7ace...)
# fake_codecs DIR: libsnappy.so.1, libbrotlienc.so.1 and libbrotlidec.so.1
# in DIR with none of their functions: with LD_LIBRARY_PATH=DIR, what
# loads them (lib/stream/codec.c) finds a library it cannot use
fake_codecs() {
	mkdir -p "$1"
	echo 'int tracekit_no_codec;' >"$1/none.c"
	local l
	for l in libsnappy.so.1 libbrotlienc.so.1 libbrotlidec.so.1; do
		cc -shared -fPIC -o "$1/$l" "$1/none.c" -Wl,-soname,"$l"
	done
}

setup_submits() {
	trace-decode "$1" | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' |
		grep 'fn: vkQueueSubmit,' | grep -vc 'pCommandBuffers: \[0x7ace' || true
}
