#!/usr/bin/env bats
# A capture survives the program's end: vkcube (under Xvfb, llvmpipe)
# stopped by SIGINT, SIGTERM, SIGHUP and SIGKILL, and under a file size
# limit (a full disk, without root); vkexample ending with exit() and no
# vkDestroyInstance.  The signalled runs go at the same moment, so the
# machine's load is the same for each, with and without the layer.

load helpers

# vkcube, the signals it is sent at their default disposition: a suite run
# from a background job of a shell (make check &) inherits SIGINT and
# SIGQUIT ignored, which set -m cannot undo, and the layer leaves an
# ignored signal ignored
VKCUBE="env --default-signal=INT,QUIT,TERM,HUP vkcube --c 1000000"

# wait_bounded PID: its exit status, once it ends; one that has not ended
# 30 s after its signal is killed, and its status is "hung" (the tests
# then fail rather than wait for ever)
wait_bounded() {
	local pid=$1 i rc=0
	for i in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		echo hung
		return
	fi
	wait "$pid" || rc=$?
	echo "$rc"
}

# run_signalled SECONDS NAME:SIG:LAYER...: vkcubes started together, each
# under the layer (LAYER 1: $W/NAME.trace) or not, and sent SIG together
# after SECONDS; $W/NAME.rc is each one's exit status.  NAME "full" runs
# under a 64 KB file size limit (a full disk: EFBIG; the writer blocks
# SIGXFSZ), and writes Snappy chunks, which whole_chunks reads here.
run_signalled() {
	local secs=$1 spec pids=() specs=()
	shift
	set -m # job control: a background job of a script ignores SIGINT otherwise
	for spec in "$@"; do
		IFS=: read -r name sig layer <<<"$spec"
		(
			[ "$name" = full ] && ulimit -f 64 && export TRACEKIT_COMPRESSION=snappy
			[ "$layer" = 1 ] && export VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
				TRACEKIT_OUTPUT="$W/$name.trace"
			exec $VKCUBE >/dev/null 2>"$W/$name.err"
		) &
		pids+=($!) specs+=("$spec")
	done
	sleep "$secs"
	# a loaded machine starts vkcube late: the signals go once every
	# trace holds 20 KB (some 70 frames; or the full disk has said so), 30 s
	# at most
	local t
	for t in $(seq 300); do
		ready=1
		for spec in "${specs[@]}"; do
			IFS=: read -r name sig layer <<<"$spec"
			[ "$layer" = 1 ] || continue
			if [ "$name" = full ]; then
				grep -q 'File too large' "$W/full.err" 2>/dev/null || ready=0
			elif [ "$(stat -c %s "$W/$name.trace" 2>/dev/null || echo 0)" -lt 20000 ]; then
				ready=0
			fi
		done
		[ "$ready" = 1 ] && break
		sleep 0.1
	done
	local i rc
	for i in "${!pids[@]}"; do
		IFS=: read -r name sig layer <<<"${specs[$i]}"
		kill -"$sig" "${pids[$i]}"
	done
	for i in "${!pids[@]}"; do
		IFS=: read -r name sig layer <<<"${specs[$i]}"
		wait_bounded "${pids[$i]}" >"$W/$name.rc"
	done
	set +m
}

setup_file() {
	start_xvfb
	export W="$BATS_FILE_TMPDIR"
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	# SIGKILL and SIGINT at the same moment of one run: stopped, its trace
	# is what a SIGKILL leaves (the kernel has every write() it made);
	# then interrupted (two runs side by side differ by 40% in frames)
	set -m
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/INT.trace" \
		$VKCUBE >/dev/null 2>"$W/INT.err" &
	local pid=$! t
	sleep 3
	for t in $(seq 270); do
		[ "$(stat -c %s "$W/INT.trace" 2>/dev/null || echo 0)" -ge 20000 ] && break
		sleep 0.1
	done
	kill -STOP "$pid"
	cp "$W/INT.trace" "$W/STOP.trace"
	kill -INT "$pid"
	kill -CONT "$pid"
	wait_bounded "$pid" >"$W/INT.rc"
	set +m
	run_signalled 3 KILL:KILL:1 TERM:TERM:1 HUP:HUP:1 full:TERM:1 \
		INT-native:INT:0 TERM-native:TERM:0 HUP-native:HUP:0
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/noclean.trace" \
		"$TOP/build/examples/vkexample" --frames 5 --no-cleanup >/dev/null 2>"$W/noclean.err"
	echo $? >"$W/noclean.rc"
}

teardown_file() {
	stop_xvfb
}

presents() {
	grep -c 'fn: vkQueuePresentKHR,' "$1"
}

@test "vkcube stopped by SIGINT, SIGTERM or SIGHUP leaves a whole trace and exits as it does without the layer" {
	for s in INT TERM HUP; do
		echo "# SIG$s: exit status $(cat "$W/$s.rc"), without the layer $(cat "$W/$s-native.rc")"
		[ "$(cat "$W/$s.rc")" = "$(cat "$W/$s-native.rc")" ]
		[ "$(cat "$W/$s.rc")" = $((128 + $(kill -l "$s"))) ]
		run trace-decode -o "$W/$s.txt" "$W/$s.trace"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		[ "$(presents "$W/$s.txt")" -ge 30 ]
		grep -q 'Selected GPU' "$W/$s.err"
		[ "$(grep -c tracekit "$W/$s.err")" -eq 0 ]
	done
}

@test "two SIGTERMs at once (timeout(1) signals the program, then its process group): the trace whole, the exit status SIGTERM's; timeout(1) itself too" {
	# the second used to find the first's trace closing and kill at once:
	# xscreensaver's flyingtoasters under timeout 12 came out cut off
	# one run in three
	cd "$BATS_TEST_TMPDIR"
	set -m
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/twice.trace" \
		$VKCUBE >/dev/null 2>"$W/twice.err" &
	local pid=$! t
	for t in $(seq 300); do
		[ "$(stat -c %s "$W/twice.trace" 2>/dev/null || echo 0)" -ge 20000 ] && break
		sleep 0.1
	done
	kill -TERM "$pid"
	kill -TERM "$pid"
	wait_bounded "$pid" >twice.rc
	set +m
	rc=$(cat twice.rc)
	echo "# exit status $rc"
	[ "$rc" = 143 ]
	run trace-decode -o twice.txt "$W/twice.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(presents twice.txt)" -ge 30 ]
	# timeout(1): its status for a command it timed out
	rc=0
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/timeout.trace" \
		timeout -s TERM 8 $VKCUBE >/dev/null 2>"$W/timeout.err" || rc=$?
	[ "$rc" = 124 ]
	run trace-decode -o timeout.txt "$W/timeout.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(grep -c tracekit "$W/timeout.err")" -eq 0 ]
}

@test "SIGKILL at the same moment keeps 80% of SIGINT's frames, and its trace reads with one warning" {
	# what a kill leaves, beside what the interrupt wrote, in one run
	run trace-decode -o "$W/STOP.txt" "$W/STOP.trace"
	[ "$status" -eq 0 ]
	killed=$(presents "$W/STOP.txt") interrupted=$(presents "$W/INT.txt")
	echo "# frames: SIGKILL $killed, SIGINT $interrupted"
	[ "$killed" -ge 30 ]
	[ $((killed * 10)) -ge $((interrupted * 8)) ]
	# a real kill
	[ "$(cat "$W/KILL.rc")" = 137 ]
	run trace-decode -o "$W/KILL.txt" "$W/KILL.trace"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	last=$(grep -v 'incomplete' "$W/KILL.txt" | tail -1 | sed 's/^{call: \([0-9]*\),.*/\1/')
	size=$(stat -c %s "$W/KILL.trace")
	[ "$output" = "trace-decode: $W/KILL.trace: warning: trace ends mid-record at byte $size after call $last: the capture was cut off" ]
	# the table of what is there, and one warning
	run trace-filter --count "$W/KILL.trace"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'warning' <<<"$output")" -eq 1 ]
	grep -q "^ *$(presents "$W/KILL.txt")  vkQueuePresentKHR$" <<<"$output"
}

@test "the last complete frame of a killed capture trims and replays to the pixels of the whole replay" {
	n=$(presents "$W/KILL.txt")
	last=$((n - 1))
	run trace-trim --frames $((n + 5)) -o "$W/none.trace" "$W/KILL.trace"
	[ "$status" -eq 1 ]
	[ "$output" = "trace-trim: $W/KILL.trace: no frame $((n + 5)) in the trace: the capture was cut off inside frame $n, and frame $last is its last complete one" ]
	[ ! -e "$W/none.trace" ]
	trace-trim --frames "$last" -o "$W/last.trace" "$W/KILL.trace" 2>/dev/null
	replay --screenshot "$last" -o "$W/full.png" "$W/KILL.trace" 2>"$W/replay.err"
	grep -q 'warning: trace ends mid-record' "$W/replay.err"
	replay --screenshot "$last" -o "$W/trimmed.png" "$W/last.trace"
	[ "$(compare -metric AE "$W/full.png" "$W/trimmed.png" null: 2>&1)" = 0 ]
}

@test "a program that ends with exit() and no vkDestroyInstance leaves a whole trace" {
	[ "$(cat "$W/noclean.rc")" = 0 ]
	[ ! -s "$W/noclean.err" ]
	run trace-decode -o "$W/noclean.txt" "$W/noclean.trace"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(grep -c 'fn: vkQueueSubmit,' "$W/noclean.txt")" -ge 5 ]
	[ "$(grep -c 'fn: vkDestroy\(Instance\|Device\),' "$W/noclean.txt")" -eq 0 ]
}

@test "a program's SIGTERM handler that calls Vulkan, the signal coming while the layer holds its lock: the handler runs once the thread leaves the layer, the trace whole" {
	# TRACEKIT_TEST_TERM_AT=N: the Nth record raises SIGTERM while its
	# thread holds the layer's queue lock, as a kill can come (OpenArena,
	# whose handler shuts its renderer down, hung for good); the example's
	# handler waits for the device and exits with status 3
	local n rc t="$BATS_TEST_TMPDIR"
	for n in 200 1000; do
		rc=0
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$t/term$n.trace" \
			TRACEKIT_TEST_TERM_AT=$n timeout -s KILL 60 "$TOP/build/examples/vkexample" \
			--term-handler --frames 100000 >/dev/null 2>"$t/term$n.err" || rc=$?
		echo "# record $n: exit status $rc"
		[ "$rc" = 3 ]
		run trace-decode -o "$t/term$n.txt" "$t/term$n.trace"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		# the handler's call, recorded after the one the signal came in
		[ "$(grep -o 'fn: [A-Za-z0-9]*' "$t/term$n.txt" | tail -n 1)" = "fn: vkDeviceWaitIdle" ]
	done
}

# The whole Snappy chunks at the start of FILE: where the last ends.
whole_chunks() {
	perl -e 'open(my $f, "<:raw", $ARGV[0]) or die; local $/; my $d = <$f>;
		my $at = 2; while ($at + 4 <= length $d) { my $n = unpack("V", substr($d, $at, 4));
			last if $at + 4 + $n > length $d; $at += 4 + $n } print $at' "$1"
}

@test "a full disk keeps the chunks written before it, whole: they read with one warning" {
	grep -q 'tracekit: .*full.trace: write error: File too large' "$W/full.err"
	grep -q 'keeps what was written' "$W/full.err"
	size=$(stat -c %s "$W/full.trace")
	[ "$size" -eq 65536 ]
	whole=$(whole_chunks "$W/full.trace")
	[ "$whole" -gt 1000 ]
	run trace-decode -o "$W/full.txt" "$W/full.trace"
	[ "$status" -eq 0 ]
	[ "$output" = "trace-decode: $W/full.trace: warning: trace ends mid-record at byte 65536 after call $(grep -v incomplete "$W/full.txt" | tail -1 | sed 's/^{call: \([0-9]*\),.*/\1/'): the capture was cut off" ]
	# everything in the whole chunks, nothing more
	head -c "$whole" "$W/full.trace" >"$W/whole.trace"
	trace-decode "$W/whole.trace" 2>/dev/null | cmp - "$W/full.txt"
	[ "$(wc -l <"$W/full.txt")" -gt 50 ]
}

@test "SIGKILL while a program has an instance and no device yet (vkthreads --idle-before-device): its calls are in the file, the header without the device's properties; read with one warning (the records waited for the device, and a killed program left an empty file)" {
	local t="$BATS_TEST_TMPDIR/idle.trace" pid
	VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$t" \
		setsid "$TOP/build/examples/vkthreads" --idle-before-device 20000 &
	pid=$!
	# the header waits 2 s at most for a device: killed once the file
	# holds the instance's calls, however long the start takes
	for _ in $(seq 300); do
		trace-decode "$t" 2>/dev/null | grep -q 'fn: vkEnumeratePhysicalDevices,' && break
		sleep 0.1
	done
	kill -KILL "$pid"
	wait_bounded "$pid" >"$BATS_TEST_TMPDIR/idle.rc"
	[ "$(cat "$BATS_TEST_TMPDIR/idle.rc")" = 137 ]
	run trace-decode -o "$BATS_TEST_TMPDIR/idle.txt" "$t"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" = 1 ]
	[[ "${lines[0]}" == *"warning: trace ends "*"the capture was cut off"* ]]
	grep -q 'fn: vkCreateInstance,' "$BATS_TEST_TMPDIR/idle.txt"
	grep -q 'fn: vkEnumeratePhysicalDevices,' "$BATS_TEST_TMPDIR/idle.txt"
	! grep -q 'fn: vkCreateDevice,' "$BATS_TEST_TMPDIR/idle.txt"
	head -1 "$BATS_TEST_TMPDIR/idle.txt" | grep -q 'process.name: '
	! head -1 "$BATS_TEST_TMPDIR/idle.txt" | grep -q 'device.name: '
}
