#!/usr/bin/env bats
# trace-replay on Vulkan traces of the capture layer: the example program
# and vkcube replay headless on llvmpipe (no window, DISPLAY unset), under
# the validation layer; the frames they present equal, pixel for pixel,
# the images the application presented; waits, failures, extensions and
# malformed records are handled and reported as trace-replay(1) says.
#
# TRACE_REPLAY=build/asan/bin/trace-replay runs the whole suite on the
# sanitizer build; one test below runs it in any case.

load helpers

REPLAY=$(realpath "${TRACE_REPLAY:-$BIN/trace-replay}")

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	# captures: the example headless, vkcube under Xvfb (the capture only),
	# with the layer's own screenshots of frames 0, 30 and 59 where it
	# saves them (TRACEKIT_SCREENSHOT)
	start_xvfb
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex.trace" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 10 >/dev/null 2>&1
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/cube.trace" \
		TRACEKIT_SCREENSHOT=0,30,59 timeout 60 vkcube --c 60 >/dev/null 2>&1
	stop_xvfb
	trace-decode "$W/cube.trace" >"$W/cube.txt"
	# LeakSanitizer and the Vulkan loader: see replay-vma.bats
	printf 'int dlclose(void *h);\nint dlclose(void *h) { (void)h; return 0; }\n' \
		>"$W/nodlclose.c"
	cc -shared -fPIC -o "$W/nodlclose.so" "$W/nodlclose.c"
	cc -print-file-name=libasan.so >"$W/libasan"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	# replay needs no window system
	unset DISPLAY WAYLAND_DISPLAY
}

sanitized() {
	LD_PRELOAD="$(cat "$W/libasan") $W/nodlclose.so" \
		LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp" "$@"
}

replay() {
	if [[ $REPLAY == */asan/* ]]; then
		sanitized "$REPLAY" "$@"
	else
		"$REPLAY" "$@"
	fi
}

export REPLAY
export -f replay sanitized

# $output: trace-replay's standard error alone
replay_error() {
	run bash -c 'replay "$@" 2>&1 >/dev/null' replay "$@"
}

json() {
	python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"
}

ae() {
	compare -metric AE "$1" "$2" null: 2>&1 || true
}

@test "the example program's trace replays headless, validated, with exit 0 and no message" {
	[ -s "$W/ex.trace" ]
	replay_error --validate "$W/ex.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "vkcube's 60 frames replay headless on llvmpipe, validated, with exit 0 and no message" {
	replay_error --validate --stats=json "$W/cube.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	replay --stats=json "$W/cube.trace" >s.json
	[ "$(json s.json 's["frames"]')" = 60 ]
	echo "# vkcube: $(json s.json 'round(s["fps"])') frames/s, $(json s.json 'round(s["calls_per_second"])') calls/s" >&3
}

@test "replayed frames 0, 30 and 59 equal, pixel for pixel, what vkcube presented at capture" {
	[ -f "$W/cube.frame-0.png" ]  # the layer saved its screenshots (TRACEKIT_SCREENSHOT)
	replay --screenshot 0,30,59 --screenshot-dir shots "$W/cube.trace"
	[ "$(ls shots | tr '\n' ' ')" = "frame-0.png frame-30.png frame-59.png " ]
	for n in 0 30 59; do
		echo "frame $n: $(ae "$W/cube.frame-$n.png" "shots/frame-$n.png") pixels differ"
		[ "$(ae "$W/cube.frame-$n.png" "shots/frame-$n.png")" = 0 ]
	done
	# and the comparison can fail: the cube turns between frames
	[ "$(ae "$W/cube.frame-0.png" shots/frame-30.png)" -gt 1000 ]
}

@test "replays are deterministic: two replays' frame 30 are equal, frame 0 differs" {
	replay --screenshot 0,30 --screenshot-dir a "$W/cube.trace"
	replay --screenshot 30 -o b30.png "$W/cube.trace"
	[ "$(identify -format '%w %h' b30.png)" = "500 500" ]
	# not blank: the cube's shades and the logo
	[ "$(identify -format '%k' b30.png)" -gt 100 ]
	[ "$(ae a/frame-30.png b30.png)" = 0 ]
	[ "$(ae a/frame-0.png b30.png)" -gt 1000 ]
}

@test "a trace piped through trace-decode | trace-encode replays identically" {
	replay --screenshot 59 -o direct.png "$W/cube.trace"
	trace-decode "$W/cube.trace" | trace-encode | replay --validate --screenshot 59 -o piped.png
	[ "$(ae direct.png piped.png)" = 0 ]
	# the text form replays as well
	replay --screenshot 59 -o text.png "$W/cube.txt"
	[ "$(ae direct.png text.png)" = 0 ]
}

@test "--frames A-B stops after frame B, validated, leaving nothing alive" {
	replay_error --validate --frames 5-10 --screenshot 10 -o f10.png "$W/cube.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -f f10.png ]
	replay --frames 5-10 --stats=json "$W/cube.trace" >s.json
	[ "$(json s.json 's["frames"]')" = 6 ]
	# N alone: that frame (and the ones before it replay, uncounted)
	replay --frames 7 --stats=json "$W/cube.trace" >s.json
	[ "$(json s.json 's["frames"]')" = 1 ]
}

@test "a wait that succeeded at capture waits at replay, even with the zero timeout zink polls with" {
	sed -E '/fn: vkWaitForFences,/s/timeout: [0-9]+/timeout: 0/' "$W/cube.txt" >zero.txt
	[ "$(grep -c 'fn: vkWaitForFences,.*timeout: 0[,}]' zero.txt)" -gt 50 ]
	replay_error --validate --screenshot 59 -o zero.png zero.txt
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	replay --screenshot 59 -o ref.png "$W/cube.trace"
	[ "$(ae ref.png zero.png)" = 0 ]
}

@test "a call that failed at capture and succeeds now is reported with its call number" {
	sed -E '/fn: vkCreateSampler,/s/ret: VK_SUCCESS/ret: VK_ERROR_OUT_OF_DEVICE_MEMORY/' \
		"$W/cube.txt" >failed.txt
	n=$(grep 'fn: vkCreateSampler,' failed.txt | grep -o 'call: [0-9]*' | grep -o '[0-9]*')
	replay_error failed.txt
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "failed.txt: call $n: warning: vkCreateSampler succeeded (VK_SUCCESS) where it failed at capture (VK_ERROR_OUT_OF_DEVICE_MEMORY)" <<<"$output"
}

@test "an unknown function stops the replay with exit 1 and its call number" {
	sed -E 's/fn: vkCmdDraw,/fn: vkCmdFrobnicate,/' "$W/cube.txt" >unknown.txt
	n=$(grep -m1 'fn: vkCmdFrobnicate,' unknown.txt | grep -o 'call: [0-9]*' | grep -o '[0-9]*')
	replay_error unknown.txt
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(head -1 <<<"$output")" = "trace-replay: unknown.txt: call $n (vkCmdFrobnicate): unknown function" ]
}

@test "a malformed record stops the replay with exit 1 and its call number" {
	sed -E '0,/fn: vkCreateBuffer,/s/(fn: vkCreateBuffer,.*)size: [0-9]+/\1size: "big"/' \
		"$W/cube.txt" >bad.txt
	n=$(grep -m1 'size: "big"' bad.txt | grep -o 'call: [0-9]*' | grep -o '[0-9]*')
	replay_error bad.txt
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "^trace-replay: bad.txt: call $n (vkCreateBuffer): malformed record: VkBufferCreateInfo.size: expected an integer, found string" <<<"$output"
}

@test "a device extension the device lacks stops the replay; --remove-unsupported goes on without it" {
	sed -E '/fn: vkCreateDevice,/s/enabledExtensionCount: 1, ppEnabledExtensionNames: \["VK_KHR_swapchain"\]/enabledExtensionCount: 2, ppEnabledExtensionNames: ["VK_KHR_swapchain", "VK_NV_not_here"]/' \
		"$W/cube.txt" >ext.txt
	grep -q VK_NV_not_here ext.txt
	replay_error ext.txt
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "lacks extensions the trace used: VK_NV_not_here (--remove-unsupported goes on without them)" <<<"$output"
	replay_error --validate --remove-unsupported ext.txt
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "warning: device extensions left out (--remove-unsupported): VK_NV_not_here" <<<"$output"
}

@test "bad usage exits 2; --loop is not supported yet and says so" {
	for args in "--screenshot 3" "--screenshot x -o a.png" "--screenshot 1,2 -o a.png" \
		"-o a.png" "--frames 9-3" "--frames x" "--loop 0"; do
		replay_error $args "$W/cube.trace"
		[ "$status" -eq 2 ] || { echo "$args: $status $output"; return 1; }
		grep -q '^usage: trace-replay' <<<"$output"
	done
	replay_error --loop 3 "$W/cube.trace"
	[ "$status" -eq 2 ]
	grep -q -- '--loop 3: not supported yet' <<<"$output"
}

@test "the sanitizer build replays the example and vkcube, validated, without an error or a leak" {
	[ -x "$TOP/build/asan/bin/trace-replay" ] || skip "make build/asan/bin/trace-replay first"
	run sanitized "$TOP/build/asan/bin/trace-replay" --validate "$W/ex.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run sanitized "$TOP/build/asan/bin/trace-replay" --validate --screenshot 30 -o c30.png "$W/cube.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -f c30.png ]
}
