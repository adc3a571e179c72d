#!/usr/bin/env bats
# Two devices alive at once (examples/vkthreads --devices 2: two logical
# devices of one physical device, four threads, thread t on device t % 2,
# each copying its slice through its device and back): the program runs
# as it does without the layer, the trace replays on two devices under
# the validation layer with each device's readbacks as the program
# checked them, and a cut that uses one device keeps only that one.

load helpers

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	sanitizer_prep
	vkthreads_pair "$W/two.trace" --threads 4 --frames 10 --devices 2
	# one thread: device 0 works, device 1 is made and holds a buffer
	vkthreads_capture "$W/one.trace" --threads 1 --frames 10 --devices 2 >/dev/null 2>&1
	trace-decode "$W/two.trace" >"$W/two.txt"
	trace-decode "$W/one.trace" >"$W/one.txt"
}

# cut TRACE TXT FROM TO: trace-trim of TRACE from its FROMth submit to its
# TOth (TXT: TRACE decoded) into cut.trace, decoded into cut.txt
cut() {
	trace-trim --calls "$(nth_call "$2" vkQueueSubmit "$3")-$(nth_call "$2" vkQueueSubmit "$4")" \
		-o cut.trace "$1"
	trace-decode cut.trace >cut.txt
}

# replays_clean TRACE: --validate says nothing and exits 0; --check takes it
replays_clean() {
	run trace-replay --validate "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run trace-replay --check "$1"
	[ "$status" -eq 0 ]
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The call number of the Nth record of function FN in TXT.
nth_call() {
	grep "fn: $2," "$1" | sed -n "$3s/^{call: \([0-9]*\),.*/\1/p"
}

@test "vkthreads --devices 2 exits 0 and prints the same with the layer as without" {
	[ "$(cat "$W/native.rc")" = 0 ]
	[ "$(cat "$W/layer.rc")" = 0 ]
	cmp "$W/native.out" "$W/layer.out"
	grep -q 'on 2 devices, every readback as written' "$W/native.out"
}

@test "the trace holds two devices alive at once, each submitting on its own queue" {
	[ "$(grep -c 'fn: vkCreateDevice,' "$W/two.txt")" = 2 ]
	local second first_end
	second=$(nth_call "$W/two.txt" vkCreateDevice 2)
	first_end=$(nth_call "$W/two.txt" vkDestroyDevice 1)
	[ "$second" -lt "$first_end" ]
	[ "$(grep -o 'fn: vkQueueSubmit, args: {queue: 0x[0-9a-f]*' "$W/two.txt" | sort -u | wc -l)" = 2 ]
	[ "$(grep -c 'fn: vkQueueSubmit,' "$W/two.txt")" = 40 ]
}

@test "the two-device trace replays under the validation layer without a word, also the sanitizer build" {
	run trace-replay --validate "$W/two.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run sanitized "$ASAN_BIN/trace-replay" --stats "$W/two.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"calls:"* ]]
	! grep -qi 'sanitizer\|leak' <<<"$output"
}

@test "--check accepts the two-device trace, and still refuses a call on a destroyed device" {
	run trace-replay --check "$W/two.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	# a submit of the first device's queue moved past its vkDestroyDevice
	local end sub
	end=$(nth_call "$W/two.txt" vkDestroyDevice 1)
	sub=$(grep 'fn: vkQueueSubmit,' "$W/two.txt" | head -1)
	{ sed -n "1,/^{call: $end,/p" "$W/two.txt"
	  sed "s/^{call: [0-9]*,/{call: 99999,/" <<<"$sub"; } >late.txt
	run trace-replay --check late.txt
	echo "$output"
	[ "$status" -ne 0 ]
}

@test "each device's readbacks replay as the program checked them" {
	# the readback buffers: what a copy writes from a device buffer that
	# a copy filled from slice t of the shared buffer
	python3 - "$W/two.txt" >handles <<-'EOF'
	import re, sys
	slice_of, back = {}, {}
	for line in open(sys.argv[1]):
	    m = re.search(r'fn: vkCmdCopyBuffer, args: .*srcBuffer: (0x[0-9a-f]+), dstBuffer: (0x[0-9a-f]+), regionCount: 1, pRegions: \[\{srcOffset: (\d+)', line)
	    if m:
	        src, dst, off = m.group(1), m.group(2), int(m.group(3))
	        if src in slice_of:
	            back[dst] = slice_of[src]
	        else:
	            slice_of[dst] = off // 4096
	for h, t in sorted(back.items(), key=lambda x: x[1]):
	    print(h, t)
	EOF
	[ "$(wc -l <handles)" = 4 ]
	local args=() h t
	while read -r h t; do args+=(--dump-resource "$h"); done <handles
	trace-replay "${args[@]}" --dump-dir d "$W/two.trace"
	python3 - handles d <<-'EOF'
	import glob, re, struct, sys
	def pattern(t, f, w):
	    return ((t + 1) * 0x01000193 ^ f * 0x9e3779b9 ^ w * 2654435761) & 0xffffffff
	for line in open(sys.argv[1]):
	    h, t = line.split()
	    t = int(t)
	    files = sorted(glob.glob('%s/call-*.buffer-%s-*.bin' % (sys.argv[2], h)),
	                   key=lambda p: int(re.search(r'call-(\d+)', p).group(1)))
	    assert len(files) == 10, (h, len(files))
	    for f, p in enumerate(files):
	        words = struct.unpack('<1024I', open(p, 'rb').read())
	        for w, v in enumerate(words):
	            want = (0xf111ed00 | (t << 4) | (f & 0xf)) if w == 7 else pattern(t, f, w)
	            assert v == want, (p, w, hex(v), hex(want))
	EOF
}

@test "a cut that uses one device keeps only it, its physical device and instance, and replays clean" {
	local dev
	cut "$W/one.trace" "$W/one.txt" 3 6
	[ "$(grep -c 'fn: vkCreateInstance,' cut.txt)" = 1 ]
	[ "$(grep -c 'fn: vkCreateDevice,' cut.txt)" = 1 ]
	# the device kept is the one whose queue submits
	dev=$(grep -o 'fn: vkGetDeviceQueue, args: {device: 0x[0-9a-f]*' cut.txt | sed 's/.*device: //')
	grep -q "fn: vkCreateDevice, .*pDevice: \[$dev\]" cut.txt
	[ "$(grep -c 'fn: vkCreateDevice,' "$W/one.txt")" = 2 ]
	replays_clean cut.trace
}

@test "a cut across both devices keeps both and replays clean" {
	cut "$W/two.trace" "$W/two.txt" 10 20
	[ "$(grep -c 'fn: vkCreateDevice,' cut.txt)" = 2 ]
	[ "$(grep -c 'fn: vkCreateInstance,' cut.txt)" = 1 ]
	replays_clean cut.trace
}

# per_queue TXT [FROM]: the number of vkQueueSubmit records of each queue
# of decoded trace TXT, the queues in the order vkGetDeviceQueue first
# gave them (so the first device's first), from the first line matching
# FROM (default: all)
per_queue() {
	local q
	for q in $(grep -o 'fn: vkGetDeviceQueue, .*pQueue: \[0x[0-9a-f]*' "$1" |
		sed 's/.*pQueue: \[//' | awk '!seen[$0]++'); do
		sed -n "/${2:-.}/,\$p" "$1" | grep -c "fn: vkQueueSubmit, args: {queue: $q," || true
	done | tr '\n' ' '
}

@test "--loop replays a range on both devices alive at once, each pass on its own device's queue: validated, also the sanitizer build" {
	# a cut across both devices (its setup makes both, it ends neither),
	# frame 1 marked before its last ten submits
	cut "$W/two.trace" "$W/two.txt" 20 40
	local at n
	at=$(grep -n 'fn: vkQueueSubmit,' cut.txt | tail -n 10 | head -n 1 | awk -F: '{ print $1 }')
	n=$(sed -n "${at}s/^{call: \([0-9]*\),.*/\1/p" cut.txt)
	sed "${at}i {call: $n, thread: 0, fn: tracekit.frame, args: {index: 1}}" cut.txt >marked.txt
	local range=($(per_queue marked.txt 'index: 1}'))
	echo "the range's submits a queue: ${range[*]}"
	[ "${#range[@]}" -eq 2 ] && [ "${range[0]}" -gt 0 ] && [ "${range[1]}" -gt 0 ]
	run trace-replay --validate --loop 3 --frames 1- marked.txt
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# what the replay submitted, seen by our own layer: each device's
	# queue its range's submits twice more (and the empty batches that
	# put fences back)
	local q once thrice
	for q in 1 3; do
		VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" \
			VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=rep$q.trace \
			trace-replay --loop $q --frames 1- marked.txt
		trace-decode rep$q.trace >rep$q.txt
	done
	once=($(per_queue rep1.txt)) thrice=($(per_queue rep3.txt))
	echo "once: ${once[*]}; --loop 3: ${thrice[*]}"
	[ "${thrice[0]}" -ge $((once[0] + 2 * range[0])) ]
	[ "${thrice[1]}" -ge $((once[1] + 2 * range[1])) ]
	run sanitized "$ASAN_BIN/trace-replay" --loop 3 --frames 1- marked.txt
	echo "$output"
	[ "$status" -eq 0 ]
	! grep -qi 'sanitizer\|leak' <<<"$output"
}

@test "vulkaninfo (two devices alive at once, the second made as a device group of one): the same report under the layer, its trace replays validated" {
	command -v vulkaninfo >/dev/null || skip "vulkan-tools not installed"
	# (the same layer path both times: vulkaninfo lists the layers it finds)
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	DISPLAY= WAYLAND_DISPLAY= vulkaninfo >native.txt 2>/dev/null
	DISPLAY= WAYLAND_DISPLAY= VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=vi.trace \
		vulkaninfo >layer.txt 2>/dev/null
	diff native.txt layer.txt
	trace-decode vi.trace >vi.txt
	[ "$(grep -c 'fn: vkCreateDevice,' vi.txt)" -eq 2 ]
	grep 'fn: vkCreateDevice,' vi.txt | grep -q VK_STRUCTURE_TYPE_DEVICE_GROUP_DEVICE_CREATE_INFO
	replays_clean vi.trace
}

@test "two threads presenting at once, a window and a device each (vkthreads --present): TRACEKIT_SCREENSHOT numbers frames as the trace does, each of frames 0-59 the replay's own (presents took their numbers as called, the trace as they returned: one the layer copied out returned after one called later, and 2 to 28 of the 60 screenshots were of another frame)" {
	local pid="$BATS_TEST_TMPDIR/xvfb.pid" display rc=0
	display=$(new_xvfb 24 "$pid")
	DISPLAY=$display TRACEKIT_SCREENSHOT=0-59 TRACEKIT_SCREENSHOT_DIR=cap \
		vkthreads_capture p.trace --threads 2 --devices 2 --present --frames 30 || rc=$?
	kill "$(cat "$pid")"
	[ "$rc" = 0 ]
	[ "$(trace-decode p.trace | grep -c 'fn: vkQueuePresentKHR,')" = 60 ]
	run trace-replay --validate --screenshot 0-59 --screenshot-dir rep p.trace
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# each frame a colour of its thread and frame of its own
	local f px bad=0
	for f in $(seq 0 59); do
		px=$(compare -metric AE "cap/p.frame-$f.png" "rep/frame-$f.png" null: 2>&1 || true)
		[ "$px" = 0 ] || { echo "frame $f: $px pixels differ"; bad=$((bad + 1)); }
	done
	[ "$bad" = 0 ]
	[ "$(compare -metric AE rep/frame-0.png rep/frame-1.png null: 2>&1 || true)" != 0 ]
}
