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

# Starts one Xvfb for the suite (call from setup_file); sets DISPLAY.
start_xvfb() {
	export XDG_RUNTIME_DIR="$BATS_FILE_TMPDIR/xdg"
	mkdir -p "$XDG_RUNTIME_DIR"
	chmod 700 "$XDG_RUNTIME_DIR"
	local d
	for d in 91 92 93 94 95 96 97 98 99; do
		[ -e "/tmp/.X11-unix/X$d" ] && continue
		Xvfb ":$d" -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 &
		echo $! >"$BATS_FILE_TMPDIR/xvfb.pid"
		local i
		for i in $(seq 50); do
			[ -e "/tmp/.X11-unix/X$d" ] && break
			sleep 0.1
		done
		export DISPLAY=":$d"
		return 0
	done
	return 1
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
# it running, holding bats' output open); what is still there 5 s later
# is killed.  The exit status is not the command's.
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
	for i in $(seq 50); do
		kill -0 -- "-$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
