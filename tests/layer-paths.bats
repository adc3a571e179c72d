#!/usr/bin/env bats
# The capture layer's paths that an ordinary run does not take: settings
# that are wrong or missing, a writer that cannot keep up, the fatal
# signals besides SIGSEGV, a program's own signal handlers, fork(), and
# a 10-bit swapchain's screenshots; pointers it must not read through.
# The program is the example (build/examples/vkexample, headless) over
# the test layer (tests/crashlayer/crash.c) that crashes, raises or forks
# inside its 4th vkQueueSubmit; vkcube under Xvfb for the screenshots.

load helpers

setup_file() {
	start_xvfb
	export W="$BATS_FILE_TMPDIR"
	export VK_LAYER_PATH="$TOP/build/layer:$TOP/build/tests/crashlayer"
}

teardown_file() {
	stop_xvfb
}

# example NAME [VAR=VALUE...]: the example, 10 frames, under our layer
# over the test layer, tracing to $W/NAME.trace; status and output in
# $status and $output
example() {
	local name=$1
	shift
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture:VK_LAYER_TRACEKIT_test_crash \
		TRACEKIT_OUTPUT="$W/$name.trace" "$@" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 10
}

# in_4th_submit HOW [VAR=VALUE...]: the example, the test layer doing HOW
# (segv, bus, ill, fpe, abrt, term, exit, fork) in its 4th vkQueueSubmit
in_4th_submit() {
	local how=$1
	shift
	example "$how" TRACEKIT_TEST_CRASH=vkQueueSubmit TRACEKIT_TEST_CRASH_AT=3 \
		TRACEKIT_TEST_CRASH_HOW="$how" "$@"
}

# ends_in_fault NAME FN N: $W/NAME.trace reads with no message, and ends
# with the Nth call of FN, entered and not left, the only such call
ends_in_fault() {
	run trace-decode "$W/$1.trace"
	[ "$status" -eq 0 ]
	# the message of a trace cut off is stderr's, here mixed in
	[ "$(grep -c '^trace-decode:' <<<"$output")" -eq 0 ]
	[ "$(grep -c "fn: $2," <<<"$output")" -eq "$3" ]
	tail -1 <<<"$output" | grep -q "fn: $2, .*flags: \\[incomplete\\]"
	[ "$(grep -c incomplete <<<"$output")" -eq 1 ]
}

# ends_in_4th_submit NAME: the trace ends in the 4th vkQueueSubmit
ends_in_4th_submit() {
	ends_in_fault "$1" vkQueueSubmit 4
}

@test "a TRACEKIT_COMPRESSION that is not zstd[:LEVEL], snappy, brotli[:LEVEL] or none gets one message, and a zstd trace" {
	for bad in lz4 zstd: zstd:x zstd:3x snappy:3 none:1; do
		example zbad TRACEKIT_COMPRESSION=$bad
		[ "$status" -eq 0 ]
		[ "$(grep -c '^tracekit:' <<<"$output")" -eq 1 ]
		grep -qxF "tracekit: TRACEKIT_COMPRESSION=$bad: expected zstd[:LEVEL], snappy, brotli[:LEVEL] or none; using zstd" <<<"$output"
		# zstd's frame magic, 28 b5 2f fd
		[ "$(head -c 4 "$W/zbad.trace" | od -An -tx1 | tr -d ' ')" = 28b52ffd ]
		[ "$(trace-decode "$W/zbad.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
	done
}

@test "TRACEKIT_COMPRESSION=zstd:LEVEL sets zstd's level: 19 writes fewer bytes than 1, the same records" {
	example zfast TRACEKIT_COMPRESSION=zstd:1
	[ "$status" -eq 0 ]
	[ "$(grep -c '^tracekit:' <<<"$output")" -eq 0 ]
	example zsmall TRACEKIT_COMPRESSION=zstd:19
	[ "$status" -eq 0 ]
	zstd -tq "$W/zfast.trace"
	zstd -tq "$W/zsmall.trace"
	[ "$(stat -c %s "$W/zsmall.trace")" -lt "$(stat -c %s "$W/zfast.trace")" ]
	[ "$(trace-decode "$W/zfast.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
	[ "$(trace-decode "$W/zsmall.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
}

@test "the layer writes zstd by default, zstd -t checks it, and TRACEKIT_COMPRESSION=snappy gives apitrace 11's container" {
	example zdef
	[ "$status" -eq 0 ]
	[ "$(grep -c '^tracekit:' <<<"$output")" -eq 0 ]
	[ "$(head -c 4 "$W/zdef.trace" | od -An -tx1 | tr -d ' ')" = 28b52ffd ]
	zstd -tq "$W/zdef.trace"
	example zsnap TRACEKIT_COMPRESSION=snappy
	[ "$status" -eq 0 ]
	[ "$(head -c 2 "$W/zsnap.trace")" = at ]
	apitrace dump "$W/zsnap.trace" >/dev/null 2>&1
	# the same calls either way
	[ "$(trace-decode "$W/zdef.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
	[ "$(trace-decode "$W/zsnap.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
}

@test "the layer loads Snappy and Brotli only when its trace is written with one: libstdc++ is left to the program" {
	example zlibs LD_DEBUG=files
	[ "$status" -eq 0 ]
	grep -q 'file=.*libVkLayer_tracekit_capture.so' <<<"$output"
	! grep -q 'file=.*\(libsnappy\|libbrotli\)' <<<"$output"
	! grep -q 'needed by .*libVkLayer_tracekit_capture.so' <<<"$(grep -v 'file=lib\(zstd\|z\|m\|c\)\.so' <<<"$output")"
	example zlibsnap LD_DEBUG=files TRACEKIT_COMPRESSION=snappy
	[ "$status" -eq 0 ]
	grep -q 'file=libsnappy.so.1 ' <<<"$output"
	! grep -q 'file=.*libbrotli' <<<"$output"
	example zlibbrotli LD_DEBUG=files TRACEKIT_COMPRESSION=brotli:1
	[ "$status" -eq 0 ]
	grep -q 'file=libbrotlienc.so.1 ' <<<"$output"
	! grep -q 'file=.*libsnappy' <<<"$output"
	[ "$(trace-decode "$W/zlibsnap.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
	[ "$(trace-decode "$W/zlibbrotli.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 11 ]
}

@test "a TRACEKIT_COMPRESSION whose library cannot be loaded: one message naming it, the program runs untraced, no trace file, an earlier one of the name untouched" {
	fake_codecs "$W/fake"
	rm -f "$W/zfake.trace"
	example zfake LD_LIBRARY_PATH="$W/fake" TRACEKIT_COMPRESSION=snappy
	[ "$status" -eq 0 ]
	grep -qx "tracekit: $W/zfake.trace: cannot load libsnappy.so.1: it has no snappy_compress" <<<"$output"
	grep -qx "tracekit: the application runs untraced" <<<"$output"
	[ "$(grep -c '^tracekit:' <<<"$output")" -eq 2 ]
	[ ! -e "$W/zfake.trace" ]
	echo earlier >"$W/zfake.trace"
	example zfake LD_LIBRARY_PATH="$W/fake" TRACEKIT_COMPRESSION=brotli
	[ "$status" -eq 0 ]
	grep -qx "tracekit: $W/zfake.trace: cannot load libbrotlienc.so.1: it has no BrotliEncoderCreateInstance" <<<"$output"
	[ "$(cat "$W/zfake.trace")" = earlier ]
}

@test "without TRACEKIT_OUTPUT, or with it empty, the trace is PROGRAM.trace in the working directory" {
	for how in unset empty; do
		rm -rf "$W/cwd-$how"
		mkdir "$W/cwd-$how"
		if [ $how = unset ]; then
			(cd "$W/cwd-$how" && env -u TRACEKIT_OUTPUT VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
				timeout 60 "$TOP/build/examples/vkexample" --frames 3 >/dev/null 2>&1)
		else
			(cd "$W/cwd-$how" && TRACEKIT_OUTPUT= VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
				timeout 60 "$TOP/build/examples/vkexample" --frames 3 >/dev/null 2>&1)
		fi
		[ "$(ls "$W/cwd-$how")" = vkexample.trace ]
		[ "$(trace-decode "$W/cwd-$how/vkexample.trace" | grep -c 'fn: vkQueueSubmit,')" -eq 4 ]
	done
}

# proc_ticks PID: user and system CPU ticks of PID, all its threads
proc_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# proc_rss_kb PID
proc_rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"
}

@test "a reader that stops reading the FIFO stops the program, its memory flat, and the trace is whole once it reads again" {
	mkfifo "$W/bp.fifo"
	cat "$W/bp.fifo" >"$W/bp.trace" 3>&- &
	local reader=$!
	# not under timeout: $! is the program's
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/bp.fifo" \
		"$TOP/build/examples/vkexample" --frames 1500 >/dev/null 2>&1 3>&- &
	local app=$!
	# the trace flows before the reader stops: on a loaded machine the
	# program's start-up (llvmpipe, shaders) can outlast a fixed sleep
	local i
	for i in $(seq 300); do
		[ -s "$W/bp.trace" ] && break
		sleep 0.1
	done
	kill -STOP $reader
	# the pipe and the layer's queue fill, then the writer blocks and the
	# program with it: wait until half a second passes with at most one
	# CPU tick (30 s at most, else the ticks below fail the test)
	local t0 m0 t1 m1 prev
	prev=$(proc_ticks $app)
	for i in $(seq 60); do
		sleep 0.5
		t0=$(proc_ticks $app)
		[ $((t0 - prev)) -le 1 ] && break
		prev=$t0
	done
	t0=$(proc_ticks $app) m0=$(proc_rss_kb $app)
	sleep 2
	t1=$(proc_ticks $app) m1=$(proc_rss_kb $app)
	kill -CONT $reader
	# running still
	[ -n "$m0" ]
	[ -n "$m1" ]
	# 60 s at most: a program that never goes on again fails, not hangs
	local rc=0
	for i in $(seq 600); do
		kill -0 $app 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL $app 2>/dev/null || true
	wait $app || rc=$?
	wait $reader
	echo "stopped 2 s: $((t1 - t0)) CPU ticks, RSS $m0 -> $m1 kB; exit $rc"
	[ "$rc" -eq 0 ]
	# unblocked, 1500 frames take about 3 s: 2 s of it would be 200 ticks
	[ $((t1 - t0)) -le 10 ]
	[ $((m1 - m0)) -lt 1024 ]
	run trace-decode "$W/bp.trace"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^trace-decode:' <<<"$output")" -eq 0 ]
	[ "$(grep -c 'fn: vkQueueSubmit,' <<<"$output")" -eq 1501 ]
}

@test "a driver that dies of SIGBUS, SIGILL, SIGFPE or SIGABRT in a call: the call ends the trace, the status is the signal's" {
	for sig in bus:135 ill:132 fpe:136 abrt:134; do
		in_4th_submit "${sig%:*}"
		echo "${sig%:*}: status $status"
		[ "$status" -eq "${sig#*:}" ]
		ends_in_4th_submit "${sig%:*}"
	done
}

@test "a program that calls exit() inside a call (an Xlib error handler, a debug messenger's callback): the call ends the trace, flagged incomplete, the status exit()'s" {
	in_4th_submit exit
	[ "$status" -eq 5 ]
	ends_in_4th_submit exit
}

@test "threads that fault at once: the first writes the trace whole, the others wait for it, the status is SIGSEGV's" {
	# vkthreads' four threads record a fill each frame, from a barrier;
	# every fill from the 40th on faults, on whichever thread makes it
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture:VK_LAYER_TRACEKIT_test_crash \
		TRACEKIT_OUTPUT="$W/faults.trace" TRACEKIT_TEST_CRASH=vkCmdFillBuffer \
		TRACEKIT_TEST_CRASH_AT=40 TRACEKIT_TEST_CRASH_EVERY=1 \
		timeout 60 "$TOP/build/examples/vkthreads" --threads 4 --frames 50
	[ "$status" -eq 139 ]
	# the 40 fills before the faults, and the first fault's
	ends_in_fault faults vkCmdFillBuffer 41
}

@test "the program's own SIGSEGV handler runs after the layer wrote the trace" {
	in_4th_submit segv TRACEKIT_TEST_HANDLER=1
	[ "$status" -eq 3 ]
	grep -qx "tracekit-test: the program's handler of signal 11" <<<"$output"
	ends_in_4th_submit segv
}

@test "the program's own SIGTERM handler runs after the layer flushed the trace up to the signal" {
	in_4th_submit term TRACEKIT_TEST_HANDLER=1
	[ "$status" -eq 3 ]
	grep -qx "tracekit-test: the program's handler of signal 15" <<<"$output"
	# flushed, not closed: the handler's _exit() cuts the trace after
	# the call the signal came in, which is whole
	run trace-decode "$W/term.trace"
	[ "$status" -eq 0 ]
	grep -q "^trace-decode: $W/term.trace: warning: .* after call [0-9]*: the capture was cut off" <<<"$output"
	[ "$(grep -c 'fn: vkQueueSubmit,' <<<"$output")" -eq 4 ]
	grep -v '^trace-decode:' <<<"$output" | tail -1 | grep -q 'fn: vkQueueSubmit, .*flags: \[incomplete\]'
}

@test "a child of fork() that calls exit() or that SIGTERM ends leaves the program and its trace alone" {
	in_4th_submit fork
	echo "$output" | grep tracekit
	[ "$status" -eq 0 ]
	grep -qx 'tracekit-test: child exited 0' <<<"$output"
	grep -qx 'tracekit-test: child ended by signal 15' <<<"$output"
	[ "$(grep -c '^tracekit:' <<<"$output")" -eq 0 ]
	run trace-decode "$W/fork.trace"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^trace-decode:' <<<"$output")" -eq 0 ]
	[ "$(grep -c 'fn: vkQueueSubmit,' <<<"$output")" -eq 11 ]
	[ "$(grep -c incomplete <<<"$output")" -eq 0 ]
}

@test "a 10-bit swapchain's screenshot (A2R10G10B10) is the 8-bit swapchain's frame, within rounding" {
	# Xvfb at depth 30: llvmpipe offers A2R10G10B10_UNORM alone
	local d30
	d30=$(new_xvfb 30 "$W/xvfb30.pid")
	for depth in 24 30; do
		local display=$DISPLAY
		[ $depth = 30 ] && display=$d30
		DISPLAY=$display VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
			TRACEKIT_OUTPUT="$W/cube$depth.trace" TRACEKIT_SCREENSHOT=5 \
			timeout 60 vkcube --c 8 >/dev/null 2>&1 || true
	done
	kill "$(cat "$W/xvfb30.pid")"
	trace-decode "$W/cube30.trace" | grep -q 'imageFormat: VK_FORMAT_A2R10G10B10_UNORM_PACK32'
	trace-decode "$W/cube24.trace" | grep -q 'imageFormat: VK_FORMAT_B8G8R8A8_UNORM'
	# 8 bits of 10, truncated, against 8 bits rounded: 1 in 255 apart at
	# most (red and blue swapped, 22,000 pixels differ)
	[ "$(identify -format '%w %h' "$W/cube30.frame-5.png")" = "500 500" ]
	n=$(compare -metric AE -fuzz 1% "$W/cube24.frame-5.png" "$W/cube30.frame-5.png" null: 2>&1)
	echo "pixels apart: $n"
	[ "$n" = 0 ]
	# and not because both are blank: the 8-bit one differs in 17,000
	# pixels without the allowance
	n=$(compare -metric AE "$W/cube24.frame-5.png" "$W/cube30.frame-5.png" null: 2>&1 || true)
	[ "$n" -gt 1000 ]
	# trace-replay's screenshot of the 10-bit capture is the layer's (it
	# took the 8-bit formats alone: es2gears_wayland through zink
	# presents A2R10G10B10)
	run trace-replay --screenshot 5 -o "$W/replay30.png" "$W/cube30.trace"
	echo "replay: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(compare -metric AE "$W/cube30.frame-5.png" "$W/replay30.png" null: 2>&1)" = 0 ]
}

# surface PLATFORM: tests/wsi_surface.py PLATFORM (a surface made with
# made-up window-system pointers) under the layer, to $W/PLATFORM.trace;
# it runs, its surface's create is recorded with the pointers as given,
# and a trim to the surface's destroy (which needs the create) replays
# validated
surface() {
	local p=$1 n
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/$p.trace" \
		timeout 60 python3 "$TOP/tests/wsi_surface.py" "$p"
	echo "$p: status $status: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	trace-decode "$W/$p.trace" >"$W/$p.txt"
	grep 'fn: vkCreate[A-Za-z]*SurfaceKHR,' "$W/$p.txt" >"$W/$p.create"
	cat "$W/$p.create"
	grep -q "$2" "$W/$p.create"
	n=$(sed -n 's/^{call: \([0-9]*\), .*fn: vkDestroySurfaceKHR,.*/\1/p' "$W/$p.txt")
	trace-trim --calls "$n-" -o "$W/$p-cut.trace" "$W/$p.trace"
	run env VK_LAYER_PATH=/usr/share/vulkan/explicit_layer.d trace-replay --validate "$W/$p-cut.trace"
	echo "$p: replay status $status: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a surface's window-system pointers (xcb_connection_t*, Display*) are recorded as addresses, never read through" {
	# the layer read 8 bytes at each (vkcube's connection: [0x0]), and
	# crashed on pointers into nothing
	surface xcb 'connection: 0x1000, window: 42}'
	surface xlib 'dpy: 0x1000, window: 42}'
}

@test "a Wayland surface is recorded whether or not the build had wayland-client.h, and trims and replays" {
	# the generated schema took a platform's commands only where its
	# development headers were there: built without libwayland-dev, the
	# layer let vkCreateWaylandSurfaceKHR by unrecorded, and trace-trim
	# refused the trace (a VkSurfaceKHR no record made)
	surface wayland 'display: 0x1000, surface: 0x2000}'
}

@test "a pipeline's states that rasterizer discard leaves ignored, dangling, are recorded null, never read through, and replay validated" {
	# vkexample --discard-pipeline aims its viewport, multisample,
	# depth/stencil and color blend states at 0x10: the layer read them
	# as structs and crashed the program
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/discard.trace" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 3 --discard-pipeline
	echo "status $status"
	[ "$status" -eq 0 ]
	trace-decode "$W/discard.trace" >"$W/discard.txt"
	grep 'fn: vkCreateGraphicsPipelines,.*rasterizerDiscardEnable: true' "$W/discard.txt" \
		>"$W/discard.create"
	[ "$(wc -l <"$W/discard.create")" -eq 1 ]
	local s
	for s in pViewportState pMultisampleState pDepthStencilState pColorBlendState; do
		grep -q " $s: null, " "$W/discard.create" || { echo "$s is not null"; return 1; }
	done
	run env -u DISPLAY VK_LAYER_PATH=/usr/share/vulkan/explicit_layer.d \
		trace-replay --validate "$W/discard.trace"
	echo "replay status $status: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
