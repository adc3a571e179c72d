#!/usr/bin/env bats
# The capture layer VK_LAYER_TRACEKIT_capture on real Vulkan programs from
# Debian, under Xvfb on llvmpipe:
#
#   vkcube        vulkan-tools, 300 frames (about 80 distinct commands)
#   glmark2       glmark2-x11 through Mesa's zink (GL on Vulkan), eight
#                 scenes of 40 frames (about 130 distinct commands: dynamic
#                 state, push descriptors, update templates, multi-draw);
#                 and its whole default list, 5 frames a scene, in a test
#                 of its own
#
# The oracle for "every command the program called" is GFXReconstruct's
# capture layer (VK_LAYER_LUNARG_gfxreconstruct, package gfxreconstruct)
# on the same run, listed by gfxrecon-convert.  The loader does not pass
# vkEnumerateInstance* to explicit layers, so neither layer sees those.

load helpers

GLMARK_ARGS="-s 400x300 -b texture:nframes=40 -b build:nframes=40 -b shading:shading=phong:nframes=40
	-b bump:bump-render=normals:nframes=40 -b pulsar:nframes=40 -b desktop:nframes=40
	-b buffer:nframes=40 -b jellyfish:nframes=40"
# a frame in the middle of each scene, saved at capture to check replays
GLMARK_SHOTS=20,60,100,140,180,220,260,300

setup_file() {
	start_xvfb
	export W="$BATS_FILE_TMPDIR"
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	# the programs, once under each layer: the tests read the results
	rc=0
	# (in Snappy, which apitrace 11 reads: the tests dump it with apitrace)
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/cube.trace" \
		TRACEKIT_COMPRESSION=snappy timeout 120 vkcube --c 300 >"$W/cube.out" 2>"$W/cube.err" || rc=$?
	echo $rc >"$W/cube.rc"
	timeout 120 vkcube --c 300 >"$W/cube-plain.out" 2>"$W/cube-plain.err" || true
	VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE="$W/cube.gfxr" \
		GFXRECON_CAPTURE_FILE_TIMESTAMP=false timeout 120 vkcube --c 300 >/dev/null 2>&1 || true
	export LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink
	# Every mapping watched for writes (TRACEKIT_WATCH=always): where a
	# fault costs as much as comparing 40 pages, as under this machine's
	# hypervisor, the layer itself watches 5 of zink's memories of about
	# 30 (the whole default list); here the replays below check that the
	# watched pages of all of them miss no write.  (glmark_retry: zink's
	# teardown X error, run again)
	glmark_retry "$W/glmark.out" env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
		TRACEKIT_OUTPUT="$W/glmark.trace" TRACEKIT_SCREENSHOT=$GLMARK_SHOTS \
		TRACEKIT_WATCH=always timeout 120 glmark2 $GLMARK_ARGS
	VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE="$W/glmark.gfxr" \
		GFXRECON_CAPTURE_FILE_TIMESTAMP=false timeout 120 glmark2 $GLMARK_ARGS \
		>"$W/glmark-gfxr.out" 2>&1 || true
	unset LIBGL_ALWAYS_SOFTWARE MESA_LOADER_DRIVER_OVERRIDE
}

teardown_file() {
	stop_xvfb
}

# The Vulkan commands in a trace, one per line, sorted.
ours() {
	trace-decode "$1" | grep -o 'fn: vk[A-Za-z0-9]*' | sed 's/^fn: //' | sort -u
}

# The Vulkan commands GFXReconstruct captured.
theirs() {
	gfxrecon-convert --output stdout "$1" 2>/dev/null |
		grep -o '"name":"vk[A-Za-z0-9]*"' | sed 's/"name":"//; s/"$//' | sort -u
}

count_calls() {
	trace-decode "$1" | grep -c "fn: $2[,}]"
}

# Every Vulkan command GFXReconstruct saw the program call ($W/$1.gfxr, at
# least $2 of them) is in our trace of it ($W/$1.trace).
holds_all_theirs() {
	theirs "$W/$1.gfxr" >"$W/$1.theirs"
	ours "$W/$1.trace" >"$W/$1.ours"
	[ "$(wc -l <"$W/$1.theirs")" -ge "$2" ]
	local missing
	missing=$(comm -23 "$W/$1.theirs" "$W/$1.ours")
	echo "missing: $missing"
	[ -z "$missing" ]
}

@test "vkcube under the capture layer exits 0 with its output unchanged" {
	[ "$(cat "$W/cube.rc")" = 0 ]
	diff "$W/cube-plain.out" "$W/cube.out"
	diff "$W/cube-plain.err" "$W/cube.err"
}

@test "the vkcube trace decodes and has exactly 300 vkQueuePresentKHR" {
	run trace-decode "$W/cube.trace"
	[ "$status" -eq 0 ]
	[ "$(count_calls "$W/cube.trace" vkQueuePresentKHR)" -eq 300 ]
}

@test "the vkcube trace holds every Vulkan command GFXReconstruct saw vkcube call" {
	holds_all_theirs cube 60
}

@test "the header names the API, the process, the device and the layer version" {
	trace-decode "$W/cube.trace" | head -1 >"$W/header"
	grep -q 'api: "Vulkan"' "$W/header"
	grep -q 'process.name: "/usr/bin/vkcube"' "$W/header"
	grep -q 'device.name: "llvmpipe' "$W/header"
	grep -q 'memory.types: ' "$W/header"
	grep -q 'limits.nonCoherentAtomSize: ' "$W/header"
	grep -q 'tracekit.layer.version: ' "$W/header"
}

@test "arguments are recorded with names: structs, enums, bitmasks, handles" {
	trace-decode "$W/cube.trace" >"$W/cube.txt"
	grep 'fn: vkCreateBuffer,' "$W/cube.txt" | head -1 >"$W/cb"
	grep -q 'pCreateInfo: \[{sType: VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, ' "$W/cb"
	grep -q 'usage: VK_BUFFER_USAGE_' "$W/cb"
	grep -q 'flags: 0,' "$W/cb"
	grep -q 'pBuffer: \[0x[0-9a-f]*\]' "$W/cb"
	grep -q 'ret: VK_SUCCESS}' "$W/cb"
}

@test "the schema types Vulkan text: no tags, and text -> binary -> text is identical" {
	trace-decode "$W/cube.trace" >"$W/cube.txt"
	if grep -q '!enum\|!bitmask\|!struct' "$W/cube.txt"; then false; fi
	trace-encode -o "$W/cube2.trace" "$W/cube.txt"
	trace-decode "$W/cube2.trace" | cmp - "$W/cube.txt"
	# the binary rebuilt from text is the capture to apitrace, enum tables
	# and all, but for the capture's end marker (the header's promise of
	# it and its last record, tracekit.end): the layer's alone to write
	apitrace dump -v --color=never "$W/cube.trace" >"$W/d1" 2>/dev/null
	apitrace dump -v --color=never "$W/cube2.trace" >"$W/d2" 2>/dev/null
	[ "$(grep -c 'tracekit.end' "$W/d1")" = 2 ]
	grep -v 'tracekit.end' "$W/d1" | cmp - "$W/d2"
	# an edit by name goes back into the typed binary
	sed 's/usage: VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT/usage: VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT|VK_BUFFER_USAGE_TRANSFER_DST_BIT/' \
		"$W/cube.txt" | trace-encode -o "$W/edited.trace"
	apitrace dump --color=never "$W/edited.trace" 2>/dev/null |
		grep -q 'usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT'
	# a name the type does not have is bad input, with its line
	sed 's/format: VK_FORMAT_D16_UNORM/format: VK_FORMAT_NOT_A_FORMAT/' "$W/cube.txt" >"$W/bad.txt"
	run trace-encode -o "$W/bad.trace" "$W/bad.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"line "*"'VK_FORMAT_NOT_A_FORMAT' is not a value of VkFormat"* ]]
}

@test "mapped memory written by vkcube reaches the trace as updates of its buffers" {
	trace-decode "$W/cube.trace" >"$W/cube.txt"
	grep -o 'pBuffer: \[0x[0-9a-f]*\]' "$W/cube.txt" | grep -o '0x[0-9a-f]*' | sort -u >"$W/buffers"
	grep 'fn: tracekit.update,' "$W/cube.txt" | grep -o 'object: 0x[0-9a-f]*' |
		grep -o '0x[0-9a-f]*' | sort -u >"$W/updated"
	# the uniform buffers change every frame: at least one update a frame
	[ "$(grep -c 'fn: tracekit.update,' "$W/cube.txt")" -ge 300 ]
	[ -s "$W/updated" ]
	# every updated object is a buffer or an image the trace created
	grep -o 'pImage: \[0x[0-9a-f]*\]' "$W/cube.txt" | grep -o '0x[0-9a-f]*' >>"$W/buffers"
	[ -z "$(comm -23 "$W/updated" <(sort -u "$W/buffers"))" ]
	# and each update comes before the submit that uses it
	awk '/fn: tracekit.update,/ { pending = 1 } /fn: vkQueueSubmit,/ { pending = 0 }
	     END { exit pending }' "$W/cube.txt"
}

@test "comparing only what a submit references writes no more than comparing everything" {
	# By default a submit compares only the memory of the buffers and images
	# its command buffers reference; TRACEKIT_SCAN=all compares every mapped
	# byte at every submit.  That the default misses nothing a submit reads
	# is pinned end to end by tests/replay-vk.bats: its default-mode captures
	# replay to the very pixels vkcube presented.  (Two vkcube runs cannot be
	# compared submit by submit: which uniform buffer a frame fills follows
	# the swapchain image acquired, which varies between runs.)
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/cube-all.trace" \
		TRACEKIT_SCAN=all timeout 120 vkcube --c 300 >/dev/null 2>"$W/cube-all.err"
	diff "$W/cube-plain.err" "$W/cube-all.err"
	trace-decode "$W/cube.trace" >"$W/cube-ref.txt"
	trace-decode "$W/cube-all.trace" >"$W/cube-all.txt"
	ref=$(grep -c 'fn: tracekit.update,' "$W/cube-ref.txt")
	all=$(grep -c 'fn: tracekit.update,' "$W/cube-all.txt")
	echo "updates: $ref by default, $all comparing everything"
	# every frame's uniform buffer reaches the trace, and no more than the full scan finds
	[ "$ref" -ge 300 ]
	[ "$ref" -le "$all" ]
	# a value TRACEKIT_SCAN does not know: one message, the default
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/scan-bad.trace" \
		TRACEKIT_SCAN=some timeout 120 vkcube --c 3
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^tracekit:')" -eq 1 ]
	echo "$output" | grep -q 'TRACEKIT_SCAN=some: expected referenced or all'
}

@test "apitrace dump reads the capture" {
	run apitrace dump "$W/cube.trace"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c 'vkQueuePresentKHR(')" -eq 300 ]
	echo "$output" | grep -q 'vkCreateInstance(pCreateInfo = &{sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO'
}

# The validation messages in a vkcube --validate log, by name, sorted.
messages() {
	grep -o 'Message Id Name: [A-Za-z0-9_-]*' "$1" | grep -v 'Name: Loader$' | sort
}

# Runs vkcube --validate for $2 frames without our layer, into $W/$1-plain.out,
# and under it, into $W/$1.out and $W/$1.trace, with the rest of the
# arguments (VAR=value) set for that run.  vkcube --validate exits 1 once
# validation said anything: the two runs must exit alike.
validate_vkcube() {
	local name=$1 frames=$2 rc_plain=0 rc=0
	shift 2
	timeout 120 vkcube --validate --c "$frames" >"$W/$name-plain.out" 2>&1 || rc_plain=$?
	env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/$name.trace" "$@" \
		timeout 120 vkcube --validate --c "$frames" >"$W/$name.out" 2>&1 || rc=$?
	[ "$rc" = "$rc_plain" ]
}

@test "the validation layer stacked with ours reports nothing it does not report without ours" {
	export VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT
	validate_vkcube val 300
	# ours was there, under the validation layer, for all 300 frames
	[ "$(count_calls "$W/val.trace" vkQueuePresentKHR)" -eq 300 ]
	# best practices says something about vkcube: the comparison is not empty
	[ "$(messages "$W/val-plain.out" | wc -l)" -gt 0 ]
	diff <(messages "$W/val-plain.out") <(messages "$W/val.out")
}

@test "TRACEKIT_SCREENSHOT=0,30,59 saves those frames of vkcube as PNGs of the window's size" {
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/shot.trace" \
		TRACEKIT_SCREENSHOT=0,30,59 timeout 120 vkcube --c 300 >"$W/shot.out" 2>"$W/shot.err"
	ls "$W"/shot.frame-*.png
	[ "$(ls "$W"/shot.frame-*.png | wc -l)" -eq 3 ]
	for n in 0 30 59; do
		[ "$(identify -format '%w %h' "$W/shot.frame-$n.png")" = "500 500" ]
		# not blank: the cube's shades and the logo, not one clear colour
		[ "$(identify -format '%k' "$W/shot.frame-$n.png")" -gt 100 ]
	done
	# the cube turns: frame 0 is not frame 30
	ae=$(compare -metric AE "$W/shot.frame-0.png" "$W/shot.frame-30.png" null: 2>&1 || true)
	echo "frame 0 against 30: $ae pixels differ"
	[ "$ae" -gt 1000 ]
	# the layer's own copies are not in the trace, and the swapchain is
	# recorded with the usage vkcube asked for (TRANSFER_SRC added below)
	[ "$(count_calls "$W/shot.trace" vkQueuePresentKHR)" -eq 300 ]
	[ "$(count_calls "$W/shot.trace" vkQueueSubmit)" -eq "$(count_calls "$W/cube.trace" vkQueueSubmit)" ]
	[ "$(count_calls "$W/shot.trace" vkCmdCopyImageToBuffer)" -eq 0 ]
	diff <(trace-decode "$W/cube.trace" | grep 'fn: vkCreateSwapchainKHR,' | grep -o 'imageUsage: [A-Z_|]*') \
		<(trace-decode "$W/shot.trace" | grep 'fn: vkCreateSwapchainKHR,' | grep -o 'imageUsage: [A-Z_|]*')
	# vkcube draws each frame alike from run to run: a second run's frame 30
	# (into TRACEKIT_SCREENSHOT_DIR, which the layer makes, with a range)
	# is the same picture
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/shot2.trace" \
		TRACEKIT_SCREENSHOT_DIR="$W/shots2" TRACEKIT_SCREENSHOT=29-31 timeout 120 vkcube --c 300 >/dev/null 2>&1
	[ "$(ls "$W"/shots2 | tr '\n' ' ')" = "shot2.frame-29.png shot2.frame-30.png shot2.frame-31.png " ]
	[ "$(compare -metric AE "$W/shot.frame-30.png" "$W/shots2/shot2.frame-30.png" null: 2>&1)" = 0 ]
	# vkcube's output is as without the layer: not a word on stderr
	diff "$W/cube-plain.out" "$W/shot.out"
	diff "$W/cube-plain.err" "$W/shot.err"
}

@test "screenshots on, the validation layer stacked with ours reports nothing it does not without ours" {
	export VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT
	validate_vkcube sval 20 TRACEKIT_SCREENSHOT=0,5-7,19
	[ "$(ls "$W"/sval.frame-*.png | wc -l)" -eq 5 ]
	[ "$(messages "$W/sval-plain.out" | wc -l)" -gt 0 ]
	diff <(messages "$W/sval-plain.out") <(messages "$W/sval.out")
	# and synchronization validation finds no hazard in the copies
	export VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
	validate_vkcube ssync 20 TRACEKIT_SCREENSHOT=0-19
	[ "$(ls "$W"/ssync.frame-*.png | wc -l)" -eq 20 ]
	diff <(messages "$W/ssync-plain.out") <(messages "$W/ssync.out")
}

@test "a TRACEKIT_SCREENSHOT that is not a frame list gets one message, and no screenshots; a TRACEKIT_SCREENSHOT_DIR that cannot be made, one message and why" {
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/badshot.trace" \
		TRACEKIT_SCREENSHOT=1,x timeout 120 vkcube --c 3
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^tracekit:')" -eq 1 ]
	echo "$output" | grep -q 'TRACEKIT_SCREENSHOT=1,x: expected frame numbers'
	if ls "$W"/badshot.frame-* 2>/dev/null; then false; fi
	# a folder that cannot be made: one message for it, one for the
	# first screenshot, each saying why; the trace is whole
	touch "$W/notdir"
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/baddir.trace" \
		TRACEKIT_SCREENSHOT=1,2 TRACEKIT_SCREENSHOT_DIR="$W/notdir/shots" timeout 120 vkcube --c 3
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^tracekit:')" -eq 2 ]
	echo "$output" | grep -q "TRACEKIT_SCREENSHOT_DIR=$W/notdir/shots: Not a directory"
	echo "$output" | grep -q "cannot write $W/notdir/shots/baddir.frame-1.png: Not a directory"
	trace-decode "$W/baddir.trace" | grep -q 'fn: vkDestroyInstance,'
}

@test "glmark2 through zink under the layer exits 0 and draws the same frames" {
	glmark_ok "$W/glmark.out"
	# the same scenes ran, each its 40 frames
	scenes() {
		grep -E '^\[[a-z]+\] ' "$1" | grep -v '^\[gfxrecon\]' | cut -d: -f1
	}
	[ "$(scenes "$W/glmark.out" | wc -l)" -eq 8 ]
	diff <(scenes "$W/glmark-gfxr.out") <(scenes "$W/glmark.out")
	run trace-decode "$W/glmark.trace"
	[ "$status" -eq 0 ]
	presents=$(count_calls "$W/glmark.trace" vkQueuePresentKHR)
	theirs=$(gfxrecon-convert --output stdout "$W/glmark.gfxr" 2>/dev/null | grep -c '"name":"vkQueuePresentKHR"')
	echo "presents: ours $presents, GFXReconstruct's $theirs"
	[ "$presents" -ge 320 ]
	[ "$presents" -eq "$theirs" ]
}

@test "the glmark2 trace holds every Vulkan command zink called" {
	holds_all_theirs glmark 100
	# zink's long pNext chains come back as structs chosen by sType
	trace-decode "$W/glmark.trace" | grep 'fn: vkCreateDevice,' |
		grep -q 'pNext: \[{sType: VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, '
	# and the whole zink trace goes text -> binary -> text unchanged
	trace-decode "$W/glmark.trace" >"$W/glmark.txt"
	trace-encode "$W/glmark.txt" | trace-decode | cmp - "$W/glmark.txt"
}

@test "zink's aliasing buffers and drawn images add no bytes to the updates" {
	# zink binds two VkBuffers over every range it hands out: the bytes they
	# share are written once (for the first by offset); images of optimal
	# tiling are never compared (what changes there, the device drew)
	cat >"$W/alias.awk" <<'AWK'
	# Reads trace-decode text; fails (exit 1) when an update names an image of
	# optimal tiling or covers bytes of a VkDeviceMemory that an update since
	# the last submit, map, unmap or free already covered; prints the number of
	# aliasing binds seen (two objects bound at one memory offset).
	function b64len(s,   n, p) {
		n = length(s) / 4 * 3
		if (s ~ /==$/) n -= 2; else if (s ~ /=$/) n -= 1
		return n
	}
	/fn: vkCreateImage,/ && /ret: / && /TILING_OPTIMAL/ {
		if (match($0, /pImage: \[0x[0-9a-f]+\]/)) optimal[substr($0, RSTART + 9, RLENGTH - 10)] = 1
	}
	/fn: vkBind(Buffer|Image)Memory/ && /ret: / {
		s = $0
		while (match(s, /(buffer|image): 0x[0-9a-f]+, memory: 0x[0-9a-f]+, memoryOffset: [0-9]+/)) {
			b = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			split(b, f, /[:,] */)
			obj = f[2]; m = f[4]; off = f[6] + 0
			mem[obj] = m; at[obj] = off
			if ((m, off) in bound && bound[m, off] != obj) aliases++
			bound[m, off] = obj
		}
	}
	/fn: tracekit.update,/ {
		match($0, /object: 0x[0-9a-f]+/); obj = substr($0, RSTART + 8, RLENGTH - 8)
		match($0, /offset: [0-9]+/); off = substr($0, RSTART + 8, RLENGTH - 8) + 0
		match($0, /"[A-Za-z0-9+\/=]*"/); n = b64len(substr($0, RSTART + 1, RLENGTH - 2))
		if (obj in optimal) { print "update of an optimal-tiling image: " $0; bad = 1 }
		m = mem[obj]; lo = at[obj] + off; hi = lo + n
		for (i = 0; i < k; i++)
			if (um[i] == m && ulo[i] < hi && lo < uhi[i]) { print "bytes written twice: " substr($0, 1, 120); bad = 1 }
		um[k] = m; ulo[k] = lo; uhi[k] = hi; k++
	}
	/fn: (vkQueueSubmit|vkQueueSubmit2|vkQueueSubmit2KHR|vkMapMemory|vkUnmapMemory|vkFreeMemory),/ { k = 0 }
	END { print aliases + 0; exit bad }
AWK
	trace-decode "$W/glmark.trace" >"$W/glmark-upd.txt"
	run awk -f "$W/alias.awk" "$W/glmark-upd.txt"
	echo "$output" | head -5
	[ "$status" -eq 0 ]
	# not vacuous: the run had aliasing binds, and updates
	[ "${lines[${#lines[@]} - 1]}" -gt 0 ]
	[ "$(grep -c 'fn: tracekit.update,' "$W/glmark-upd.txt")" -gt 0 ]
	# every update still names a buffer or an image the trace created
	grep -o 'p\(Buffer\|Image\): \[0x[0-9a-f]*\]' "$W/glmark-upd.txt" | grep -o '0x[0-9a-f]*' | sort -u >"$W/gl-objects"
	grep 'fn: tracekit.update,' "$W/glmark-upd.txt" | grep -o 'object: 0x[0-9a-f]*' |
		grep -o '0x[0-9a-f]*' | sort -u >"$W/gl-updated"
	[ -z "$(comm -23 "$W/gl-updated" "$W/gl-objects")" ]
}

@test "glmark2's trace replays to the frames zink presented, in every scene, models drawn again included" {
	# Scenes that draw a model an earlier one drew bind new buffers where
	# ended ones held the same bytes: those must reach the trace as
	# updates (a replay gives them zeroed memory of their own)
	ls "$W"/glmark.frame-*.png
	[ "$(ls "$W"/glmark.frame-*.png | wc -l)" -eq 8 ]
	(unset DISPLAY; trace-replay --screenshot $GLMARK_SHOTS --screenshot-dir "$W/gl-replay" "$W/glmark.trace")
	for n in ${GLMARK_SHOTS//,/ }; do
		ae=$(compare -metric AE "$W/glmark.frame-$n.png" "$W/gl-replay/frame-$n.png" null: 2>&1 || true)
		echo "frame $n: $ae pixels differ"
		[ "$ae" = 0 ]
	done
	# and the comparison can fail: the scenes differ
	ae=$(compare -metric AE "$W/glmark.frame-20.png" "$W/gl-replay/frame-60.png" null: 2>&1 || true)
	[ "$ae" -gt 1000 ]
}

@test "every scene of glmark2's default list through zink: a frame of each, as the layer saw it and as replay draws it, pixel-equal" {
	# the 8 scenes above are a chosen list; this is the list glmark2 runs
	# with no -b (33 scenes in Debian 12's glmark2), 5 frames each, its
	# frame 3 of each saved at capture
	local n=0 shots=""
	glmark_retry "$W/all.out" env LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/all.trace" \
		TRACEKIT_SCREENSHOT="$(seq -s, 3 5 500)" TRACEKIT_SCREENSHOT_DIR="$W/all-shots" \
		timeout 180 glmark2 -s 400x300 -b :nframes=5
	glmark_ok "$W/all.out"
	n=$(grep -c '^\[[a-z0-9]*\] .*FPS:' "$W/all.out")
	echo "$n scenes ran"
	[ "$n" -ge 30 ]
	[ "$(count_calls "$W/all.trace" vkQueuePresentKHR)" -eq $((n * 5)) ]
	shots=$(seq -s, 3 5 $((n * 5 - 1)))
	[ "$(ls "$W"/all-shots/all.frame-*.png | wc -l)" -eq "$n" ]
	(unset DISPLAY; trace-replay -q --screenshot "$shots" --screenshot-dir "$W/all-replay" "$W/all.trace")
	local bad=0 ae f
	for f in ${shots//,/ }; do
		ae=$(compare -metric AE "$W/all-shots/all.frame-$f.png" "$W/all-replay/frame-$f.png" null: 2>&1 || true)
		[ "$ae" = 0 ] || { echo "frame $f (scene $((f / 5 + 1))): $ae pixels differ"; bad=$((bad + 1)); }
	done
	[ "$bad" = 0 ]
}

# check_templates_and_ranges templates|ranges: reads trace-decode text of
# a glmark2 capture on stdin; checks what the layer writes of update
# templates and of buffers that only descriptors and copies read (see the
# tests), prints a summary; exits 1 on a violation, or if the check had
# nothing to check.
check_templates_and_ranges() {
	python3 -c '
import base64, re, struct, sys
INFO = {"SAMPLER": 24, "COMBINED_IMAGE_SAMPLER": 24, "SAMPLED_IMAGE": 24, "STORAGE_IMAGE": 24,
	"INPUT_ATTACHMENT": 24, "UNIFORM_BUFFER": 24, "STORAGE_BUFFER": 24,
	"UNIFORM_BUFFER_DYNAMIC": 24, "STORAGE_BUFFER_DYNAMIC": 24,
	"UNIFORM_TEXEL_BUFFER": 8, "STORAGE_TEXEL_BUFFER": 8}
ENTRY = re.compile(r"descriptorCount: (\d+), descriptorType: VK_DESCRIPTOR_TYPE_(\w+), offset: (\d+), stride: (\d+)")
HANDLE = re.compile(r"0x[0-9a-f]+")
OWN = {"vkCreateBuffer", "vkBindBufferMemory", "vkBindBufferMemory2", "vkBindBufferMemory2KHR",
	"vkDestroyBuffer", "vkGetBufferMemoryRequirements", "vkGetBufferMemoryRequirements2",
	"vkGetBufferMemoryRequirements2KHR", "tracekit.update", "vkCmdCopyBuffer"}
templates, gen, size, ranges, named = {}, {}, {}, {}, set()
bad, calls, pending, checked = [], 0, [], {}
def key(h):
	return (h, gen.get(h, 0))
def allow(h, lo, hi):
	k = key(h)
	a, b = ranges.get(k, (lo, hi))
	ranges[k] = (min(a, lo), max(b, hi))
for line in sys.stdin:
	m = re.search(r"fn: ([\w.]+)", line)
	if not m:
		continue  # the header
	fn = m.group(1)
	if fn == "vkCreateBuffer" and "ret: " in line:
		h = re.search(r"pBuffer: \[(0x[0-9a-f]+)\]", line).group(1)
		gen[h] = gen.get(h, 0) + 1
		size[key(h)] = int(re.search(r" size: (\d+)", line).group(1))
	elif fn.startswith("vkCreateDescriptorUpdateTemplate") and "ret: " in line:
		at, es = 0, []
		for n, t, off, stride in ENTRY.findall(line):
			one = INFO[t]
			at = (at + 7) // 8 * 8
			if int(off) != at or int(stride) != one:
				bad.append("template entry not packed: offset %s stride %s, expected %d %d" % (off, stride, at, one))
			es.append((int(n), t, at))
			at += int(n) * one
		templates[re.search(r"pDescriptorUpdateTemplate: \[(0x[0-9a-f]+)\]", line).group(1)] = (at, es)
	elif "WithTemplate" in fn and "pData: !!binary" in line:
		calls += 1
		need, es = templates[re.search(r"descriptorUpdateTemplate: (0x[0-9a-f]+)", line).group(1)]
		data = base64.b64decode(re.search(r"pData: !!binary \"([^\"]*)\"", line).group(1))
		if len(data) != need:
			bad.append("%s pData of %d bytes, its entries read %d" % (fn, len(data), need))
		for n, t, at in es:
			for j in range(n):
				if t in ("UNIFORM_BUFFER", "STORAGE_BUFFER"):
					b, off, rng = struct.unpack_from("<QQQ", data, at + 24 * j)
					allow("0x%x" % b, off, off + rng if rng != 2**64 - 1 else 2**64)
				elif t.endswith("_DYNAMIC"):
					b, off, rng = struct.unpack_from("<QQQ", data, at + 24 * j)
					allow("0x%x" % b, off, 2**64)
	elif fn == "vkCmdCopyBuffer":
		src = re.search(r"srcBuffer: (0x[0-9a-f]+)", line).group(1)
		named.add(key(re.search(r"dstBuffer: (0x[0-9a-f]+)", line).group(1)))
		for off, n in re.findall(r"srcOffset: (\d+), dstOffset: \d+, size: (\d+)", line):
			allow(src, int(off), int(off) + int(n))
	elif fn == "tracekit.update":
		m = re.search(r"object: (0x[0-9a-f]+), offset: (\d+), data: !!binary \"([^\"]*)\"", line)
		pending.append((key(m.group(1)), int(m.group(2)), len(base64.b64decode(m.group(3)))))
		continue
	if fn.startswith("vkQueueSubmit"):
		for k, off, n in pending:
			if k in ranges and k not in named:
				lo, hi = ranges[k]
				checked[k] = checked.get(k, 0) + n
				if off < lo or off + n > hi:
					bad.append("update of %s [%d, %d): outside [%d, %d), what its descriptors and copies read" % (k[0], off, off + n, lo, hi))
	pending = []
	if fn not in OWN and "WithTemplate" not in fn:
		named.update(key(h) for h in HANDLE.findall(line))
narrowed = [k for k in checked if k not in named and ranges[k][1] < size.get(k, 0)]
print("%d template calls; %d buffers read only by descriptors and copies got %d update bytes; %d of them over less than their size" % (calls, len(checked), sum(checked.values()), len(narrowed)))
for b in bad[:10]:
	print(b)
nothing = calls < 100 if sys.argv[1] == "templates" else not narrowed
sys.exit(1 if bad or nothing else 0)
' "$1"
}

@test "update templates are recorded packed: pData holds the bytes the entries read, no more" {
	# zink points its entries into a context struct of its own: pData as
	# laid out there is some 27 KB, of which a push reads 120 bytes
	trace-decode "$W/glmark.trace" >"$W/tmpl.txt"
	run check_templates_and_ranges templates <"$W/tmpl.txt"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "multi-draws are recorded packed: the draws zink laid out 12 bytes apart, at the struct's stride" {
	# zink gives vkCmdDrawMultiEXT its own 12-byte draws; VkMultiDrawInfoEXT
	# is 8: read packed, draw 2 on would be the next one's bytes
	trace-decode "$W/glmark.trace" | grep 'fn: vkCmdDrawMulti' >"$W/multi.txt" || true
	multi=$(grep -vc 'drawCount: 1,' "$W/multi.txt" || true)
	echo "multi-draws of more than one draw: $multi"
	[ "$multi" -ge 1 ]
	if grep -v 'drawCount: 1,' "$W/multi.txt" | grep -v 'stride: \(8\|12\)}}$'; then false; fi
	if grep -v 'drawCount: 1,' "$W/multi.txt" | grep 'fn: vkCmdDrawMultiEXT,' | grep -v 'stride: 8}}$'; then false; fi
	# every draw draws: a count of 0 is a neighbour's bytes read as a draw
	if grep -E '(vertexCount|indexCount): 0[,}]' "$W/multi.txt"; then false; fi
}

@test "a buffer that descriptors and copies read reaches the trace over the ranges they read" {
	# zink's stream uploader is a new 1 MB buffer in each scene over memory
	# holding the last one's bytes; a frame's descriptors read 128 bytes
	# of it: the rest must not reach the trace
	trace-decode "$W/glmark.trace" >"$W/ranges.txt"
	run check_templates_and_ranges ranges <"$W/ranges.txt"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "an unwritable TRACEKIT_OUTPUT leaves vkcube running untraced with one message" {
	run env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=/nonexistent/dir/x.trace \
		timeout 120 vkcube --c 5
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^tracekit:')" -eq 1 ]
	echo "$output" | grep -q 'tracekit: cannot write /nonexistent/dir/x.trace'
}

@test "TRACEKIT_COMPRESSION=brotli and none write traces that decode alike" {
	for z in brotli none; do
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/z-$z.trace" \
			TRACEKIT_COMPRESSION=$z timeout 120 vkcube --c 3 >/dev/null 2>&1
		[ "$(count_calls "$W/z-$z.trace" vkQueuePresentKHR)" -eq 3 ]
	done
	[ "$(head -c 2 "$W/z-none.trace")" = tr ]
}

@test "a capture over a larger file of the same name leaves only the new trace" {
	head -c 3000000 /dev/urandom >"$W/over.trace"
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/over.trace" \
		timeout 120 vkcube --c 3 >/dev/null 2>&1
	[ "$(stat -c %s "$W/over.trace")" -lt 3000000 ]
	# trace-decode fails on bytes after the last chunk
	trace-decode "$W/over.trace" >/dev/null
	[ "$(count_calls "$W/over.trace" vkQueuePresentKHR)" -eq 3 ]
}

@test "TRACEKIT_OUTPUT naming a FIFO streams the capture to its reader" {
	mkfifo "$W/capture.fifo"
	timeout 120 trace-decode "$W/capture.fifo" >"$W/fifo.txt" &
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/capture.fifo" \
		timeout 120 vkcube --c 3 >/dev/null 2>&1
	wait $!
	[ -p "$W/capture.fifo" ]
	[ "$(grep -c 'fn: vkQueuePresentKHR,' "$W/fifo.txt")" -eq 3 ]
}

# crash_in COMMAND: the example, 10 frames, under our layer over the test
# layer that crashes in the 4th COMMAND (tests/crashlayer/crash.c)
crash_in() {
	run env VK_LAYER_PATH="$TOP/build/layer:$TOP/build/tests/crashlayer" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture:VK_LAYER_TRACEKIT_test_crash \
		TRACEKIT_OUTPUT="$W/crash-$1.trace" TRACEKIT_TEST_CRASH="$1" TRACEKIT_TEST_CRASH_AT=3 \
		timeout 60 "$TOP/build/examples/vkexample" --frames 10
	[ "$status" -eq 139 ] # SIGSEGV, as without our layer
	trace-decode "$W/crash-$1.trace" >"$W/crash-$1.txt"
	# the crashing call is the trace's last, entered and never left
	[ "$(grep -c "fn: $1," "$W/crash-$1.txt")" -eq 4 ]
	tail -1 "$W/crash-$1.txt" | grep -q "fn: $1, .*flags: \[incomplete\]"
	[ "$(grep -c incomplete "$W/crash-$1.txt")" -eq 1 ]
}

@test "a call that crashes the driver is in the trace, the last, entered and not left: a vkCmd* (queued at its return)" {
	crash_in vkCmdDrawIndexed
	# the calls before it are complete, with their arguments
	tail -2 "$W/crash-vkCmdDrawIndexed.txt" | head -1 | grep -q 'fn: vkCmdBindIndexBuffer, .*indexType: VK_INDEX_TYPE_UINT16}}$'
}

@test "a call that crashes the driver is in the trace, the last, entered and not left: vkQueueSubmit (queued at its enter)" {
	crash_in vkQueueSubmit
}

# future LAYERS COMMAND...: COMMAND with the test layer below ours playing
# a driver with a device extension newer than the registry
# (VK_TRACEKIT_test_future); without a display (vulkaninfo's X surfaces
# failed to connect now and then, 2 runs of 20, nothing to do with layers)
future() {
	env -u DISPLAY -u WAYLAND_DISPLAY \
		VK_LAYER_PATH="$TOP/build/layer:$TOP/build/tests/crashlayer" TRACEKIT_TEST_EXTENSION=1 \
		VK_INSTANCE_LAYERS="$1" "${@:2}"
}

@test "a device extension newer than the registry is hidden from the application" {
	command -v vulkaninfo >/dev/null || skip "vulkaninfo is not installed"
	future VK_LAYER_TRACEKIT_test_crash timeout 60 vulkaninfo >"$W/future-without.txt" 2>/dev/null
	future VK_LAYER_TRACEKIT_capture:VK_LAYER_TRACEKIT_test_crash TRACEKIT_OUTPUT="$W/future.trace" \
		timeout 60 vulkaninfo >"$W/future-with.txt" 2>/dev/null
	# the device's list (one tab in), not the test layer's own (three)
	grep -q $'^\tVK_TRACEKIT_test_future ' "$W/future-without.txt"
	[ "$(grep -c $'^\tVK_TRACEKIT_test_future ' "$W/future-with.txt")" -eq 0 ]
	n=$(sed -n 's/^Device Extensions: count = //p' "$W/future-without.txt" | head -1)
	m=$(sed -n 's/^Device Extensions: count = //p' "$W/future-with.txt" | head -1)
	[ "$m" -eq $((n - 1)) ]
	# and the trace records the shorter list the application saw
	trace-decode "$W/future.trace" |
		grep 'fn: vkEnumerateDeviceExtensionProperties, .*pLayerName: null' >"$W/future.txt"
	grep -q 'VK_KHR_swapchain' "$W/future.txt"
	[ "$(grep -c 'VK_TRACEKIT_test_future' "$W/future.txt")" -eq 0 ]
}

@test "the device's extension list is asked of the driver once a physical device, however often the program asks" {
	command -v vulkaninfo >/dev/null || skip "vulkaninfo is not installed"
	rm -f "$W/enum-without.log" "$W/enum-with.log"
	TRACEKIT_TEST_ENUM_LOG="$W/enum-without.log" future VK_LAYER_TRACEKIT_test_crash \
		timeout 60 vulkaninfo >/dev/null 2>&1
	TRACEKIT_TEST_ENUM_LOG="$W/enum-with.log" \
		future VK_LAYER_TRACEKIT_capture:VK_LAYER_TRACEKIT_test_crash \
		TRACEKIT_OUTPUT="$W/enum.trace" timeout 60 vulkaninfo >/dev/null 2>&1
	cat "$W/enum-without.log" "$W/enum-with.log"
	# vulkaninfo asks many times; below the layer, one count and one list
	# a physical device
	[ "$(wc -l <"$W/enum-without.log")" -gt 4 ]
	local devices
	devices=$(cut -d' ' -f1 "$W/enum-with.log" | sort -u | wc -l)
	[ "$(grep -c ' count$' "$W/enum-with.log")" -eq "$devices" ]
	[ "$(grep -c ' list$' "$W/enum-with.log")" -eq "$devices" ]
	# every answer the program got is in the trace, all the same list
	trace-decode "$W/enum.trace" |
		grep 'fn: vkEnumerateDeviceExtensionProperties, .*pLayerName: null' >"$W/enum.txt"
	[ "$(wc -l <"$W/enum.txt")" -eq "$(wc -l <"$W/enum-without.log")" ]
	[ "$(grep 'pProperties: \[' "$W/enum.txt" | sed 's/^{call: [0-9]*, //' | sort -u | wc -l)" -eq "$devices" ]
	grep -q 'VK_KHR_swapchain' "$W/enum.txt"
	[ "$(grep -c 'VK_TRACEKIT_test_future' "$W/enum.txt")" -eq 0 ]
}

@test "enabling a device extension newer than the registry unasked gets one warning, and runs" {
	run future VK_LAYER_TRACEKIT_capture:VK_LAYER_TRACEKIT_test_crash \
		TRACEKIT_OUTPUT="$W/future-ex.trace" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 2 --extension VK_TRACEKIT_test_future
	[ "$status" -eq 0 ]
	[ "$(grep -c '^tracekit: ' <<<"$output")" -eq 1 ]
	grep -q '^tracekit: VK_TRACEKIT_test_future is newer than the Vulkan registry' <<<"$output"
	[ "$(count_calls "$W/future-ex.trace" vkQueueSubmit)" -ge 2 ]
}

# policy_of PID NAME: the scheduling policy of PID's thread NAME (chrt)
policy_of() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm")" = "$2" ]; then
			chrt -p "${t##*/}" | sed -n 's/.*scheduling policy: //p'
			return
		fi
	done
	echo "no thread $2"
}

@test "the writer and compressor threads run at SCHED_IDLE with TRACEKIT_WRITER_SCHED=idle, or as usual with normal" {
	for sched in idle normal; do
		TRACEKIT_WRITER_SCHED=$sched VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
			TRACEKIT_OUTPUT="$W/sched.trace" vkcube >/dev/null 2>&1 &
		pid=$!
		# the compressor starts with the first full 1 MiB chunk
		for _ in $(seq 60); do
			sleep 0.5
			snappy=$(policy_of "$pid" tracekit-pack)
			[ "$snappy" = "no thread tracekit-pack" ] || break
		done
		write=$(policy_of "$pid" tracekit-write)
		main=$(chrt -p "$pid" | sed -n 's/.*scheduling policy: //p')
		kill "$pid"
		wait "$pid" || true
		echo "TRACEKIT_WRITER_SCHED=$sched: writer $write, compressor $snappy, main $main"
		[ "$main" = SCHED_OTHER ]
		if [ "$sched" = idle ]; then
			[ "$write" = SCHED_IDLE ]
			[ "$snappy" = SCHED_IDLE ]
		else
			[ "$write" = SCHED_OTHER ]
			[ "$snappy" = SCHED_OTHER ]
		fi
	done
}

@test "by default the writer leaves SCHED_IDLE, and the compressor with it, once vkcube has waited for it beside processes that keep every core busy" {
	hogs=()
	for _ in $(seq "$(nproc)"); do
		sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/raise.trace" \
		vkcube >/dev/null 2>&1 &
	pid=$!
	seen=""
	for _ in $(seq 60); do
		sleep 0.5
		write=$(policy_of "$pid" tracekit-write)
		pack=$(policy_of "$pid" tracekit-pack)
		seen="$seen $write/$pack"
		[ "$write" = SCHED_OTHER ] && [ "$pack" = SCHED_OTHER ] && break
	done
	kill "$pid" "${hogs[@]}"
	wait "$pid" || true
	echo "writer/compressor, every half second:$seen"
	# (raised within the first half second here: that auto begins at
	# SCHED_IDLE is too short to see; the test above pins idle itself)
	[ "$write" = SCHED_OTHER ]
	[ "$pack" = SCHED_OTHER ]
	[ "$(count_calls "$W/raise.trace" vkQueuePresentKHR)" -gt 0 ]
}

@test "a program killed by SIGABRT leaves a trace that decodes up to the signal" {
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/abort.trace" \
		vkcube >/dev/null 2>&1 &
	pid=$!
	# killed once a present has reached the file (a flush each 240 ms),
	# however long vkcube takes to start on a loaded machine
	for _ in $(seq 240); do
		[ "$(trace-decode "$W/abort.trace" 2>/dev/null | grep -c 'fn: vkQueuePresentKHR')" -ge 1 ] && break
		sleep 0.25
	done
	kill -ABRT "$pid"
	wait "$pid" || status=$?
	[ "$status" -eq 134 ]
	# the handler closed the trace: it reads whole, with no warning
	run trace-decode "$W/abort.trace"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^trace-decode:' <<<"$output")" -eq 0 ]
	[ "$(echo "$output" | grep -c 'fn: vkQueuePresentKHR')" -ge 1 ]
}

@test "two processes with one TRACEKIT_OUTPUT (a program that starts another Vulkan program): the second writes NAME.PID.trace and says so, and both traces read whole (the second truncated the first's file, and both were lost)" {
	local t="$BATS_TEST_TMPDIR/two.trace" pid
	# the first holds the file from its instance on, and makes its device
	# only once the second has ended: the order whatever the load
	VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$t" \
		"$TOP/build/examples/vkthreads" --wait-for "$BATS_TEST_TMPDIR/go" --frames 5 \
		>"$BATS_TEST_TMPDIR/first.out" 2>"$BATS_TEST_TMPDIR/first.err" &
	pid=$!
	for _ in $(seq 600); do
		[ -e "$t" ] && break
		sleep 0.1
	done
	run env VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$t" \
		"$TOP/build/examples/vkthreads" --frames 5
	echo "$output"
	touch "$BATS_TEST_TMPDIR/go"
	[ "$status" -eq 0 ]
	wait "$pid"
	cat "$BATS_TEST_TMPDIR/first.err"
	[ ! -s "$BATS_TEST_TMPDIR/first.err" ]
	local second
	second=$(ls "$BATS_TEST_TMPDIR"/two.*.trace)
	[[ "$output" == *"tracekit: $t is being written by another process; this one (pid "*") writes $second"* ]]
	for f in "$t" "$second"; do
		run trace-decode -o /dev/null "$f"
		echo "$f: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		[ "$(trace-decode "$f" | grep -c 'fn: vkQueueSubmit,')" = 10 ]
	done
}
