#!/usr/bin/env bats
# trace-trim: a range of frames cut out of a capture replays on its own and
# draws what the whole trace draws there.  Captures made here with our
# layer under Xvfb: vkcube (300 frames), glmark2 through zink (four
# scenes of 25 frames in one run) and the example with --mips, --events
# and --compute-mips (layouts that change per mip level, through
# vkCmdWaitEvents, levels written through storage views), with
# --compute-mips-once (levels written once, at load, through storage
# descriptors of vkUpdateDescriptorSets or of a template, or pushed
# through a template: --push-templates) and with
# --depth-read-only and --depth-read-only-rp (dynamic rendering or
# render passes, depth images read-only) and with --rewrite-source (a
# copy's source buffer filled again after the copy); each
# trim is replayed headless under the validation layer and its frame
# compared, pixel for pixel, with the same frame of the full replay (or
# the layer's screenshot).  Call ranges that begin inside a frame
# (semaphores and fences left signaled), VMA streams, trims of trims,
# encodings, pipes, bad input.

load helpers

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	start_xvfb
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/cube.trace" \
		timeout 120 vkcube --c 300 >/dev/null 2>&1
	glmark_retry "$W/gl.out" env LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/gl.trace" \
		timeout 180 glmark2 -s 400x300 -b build:nframes=25 -b texture:nframes=25 \
		-b shading:nframes=25 -b pulsar:nframes=25
	# the example with a mipmapped texture whose levels each frame makes
	# again from level 0 (a barrier per level), and with the last layout
	# changes of that a vkCmdWaitEvents; the layer's screenshot of frame 12
	local m
	for m in mips events fresh-command-buffers carry-event; do
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-$m.trace" \
			TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
			--present --$m >/dev/null 2>&1
	done
	# --mips twice as long, for a cut late in it
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-mips48.trace" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 48 --present --mips \
		>/dev/null 2>&1
	# the levels made by a compute pass, one dispatch a level
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-cmips48.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 48 \
		--present --compute-mips >/dev/null 2>&1
	# ... by one compute pass at load, in a submit of its own, its storage
	# descriptors written through a template or not, or pushed through one
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-cmonce-tpl.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --compute-mips-once --templates >/dev/null 2>&1
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-cmonce-push.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --compute-mips-once --push-templates >/dev/null 2>&1
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-cmonce-copy.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --compute-mips-once --copy-sets >/dev/null 2>&1
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-cmonce.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --compute-mips-once >/dev/null 2>&1
	# HUD passes of dynamic rendering over depth images in a read-only
	# layout, one of them written by the upload alone
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-dro.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --depth-read-only >/dev/null 2>&1
	# ... and of render passes
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-drorp.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --depth-read-only-rp >/dev/null 2>&1
	# a patch of the texture copied at load from a buffer that one
	# submit filled before, and that a submit after and every frame fill
	# again
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-rewrite.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --rewrite-source >/dev/null 2>&1
	# ... and the buffer destroyed once the copy is done
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-rewrite-destroy.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --rewrite-source=destroy >/dev/null 2>&1
	# the frame's uniforms read from a storage buffer the host writes each
	# frame, which the shaders declare readonly, or not
	for m in ro rw; do
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-storage-$m.trace" \
			TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
			--present --uniform-storage $m >/dev/null 2>&1
	done
	# the compute pattern's image kept from frame to frame (no barrier from
	# UNDEFINED), the compute shader's writeonly, the cube's shader
	# declaring it and not sampling it
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-anim-unsampled.trace" \
		TRACEKIT_SCREENSHOT=12 timeout 60 "$TOP/build/examples/vkexample" --frames 24 \
		--present --anim-unsampled >/dev/null 2>&1
	# a canvas never cleared after frame 0, 100 submits a frame more, each
	# a triangle whose vertices the host writes just before into a ring
	# (Pingus through zink: 380 a frame), 30 frames and 60
	local n
	for n in 30 60; do
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-strokes$n.trace" \
			TRACEKIT_SCREENSHOT=$((n - 1)) timeout 60 "$TOP/build/examples/vkexample" \
			--frames $n --present --strokes 100 >/dev/null 2>&1
	done
	# a texel of each frame read back by a submit of its own, the colour
	# image cleared again by the next frame (glReadPixels through zink)
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-probe.trace" \
		TRACEKIT_SCREENSHOT=2999 timeout 60 "$TOP/build/examples/vkexample" \
		--frames 3000 --present --read-pixel >/dev/null 2>&1
	# the compute pattern into one of two images by turns, each frame's
	# set written again to show the one the frame writes (zink's sets)
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex-pair.trace" \
		TRACEKIT_SCREENSHOT=2999 timeout 60 "$TOP/build/examples/vkexample" \
		--frames 3000 --present --anim-pair >/dev/null 2>&1
	stop_xvfb
	unset DISPLAY
	# the full replays' frames, the reference for every trim
	trace-replay --screenshot 0,1,150,151,299 --screenshot-dir "$W/cube-full" "$W/cube.trace" \
		>/dev/null 2>&1
	trace-replay --screenshot 5,30,55,80,99 --screenshot-dir "$W/gl-full" "$W/gl.trace" \
		>/dev/null 2>&1
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset DISPLAY WAYLAND_DISPLAY
}

ae() {
	compare -metric AE "$1" "$2" null: 2>&1 || true
}

# cut_equal TRIM F REF: TRIM replays validated with no message, and its
# frame F is REF, pixel for pixel (screenshot in s-TRIM/).
cut_equal() {
	local dir="s-$(basename "$1")"
	run timeout 60 trace-replay --validate --screenshot "$2" --screenshot-dir "$dir" "$1"
	echo "$1: status $status: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	echo "$1, frame $2: $(ae "$3" "$dir/frame-$2.png") pixels differ"
	[ "$(ae "$3" "$dir/frame-$2.png")" = 0 ]
}

# cut_running TRACE F N: TRACE cut to frame F (tF.trace), its setup
# running N of the capture's submits again.
cut_running() {
	trace-trim --frames "$2" -o "t$2.trace" "$1"
	echo "frame $2: the capture's submits in the setup: $(setup_submits "t$2.trace")"
	[ "$(setup_submits "t$2.trace")" = "$3" ]
}

# cut_verbose TRACE F OUT N: TRACE cut to frame F into OUT with
# --verbose, exit 0, its setup running N of the capture's submits again;
# $output holds trim's reasons for the greps after it
cut_verbose() {
	run trace-trim --verbose --frames "$2" -o "$3" "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "frame $2: the capture's submits in the setup: $(setup_submits "$3")"
	[ "$(setup_submits "$3")" = "$4" ]
}

# trim_check TRACE FULLDIR F [TRIM OPTIONS]: trims TRACE to frame F,
# replays the trim validated, and compares frame F with the full replay's.
trim_check() {
	local trace=$1 full=$2 f=$3
	shift 3
	trace-trim --frames "$f" "$@" -o "t$f.trace" "$trace"
	run trace-replay --validate --screenshot "$f" --screenshot-dir "s$f" "t$f.trace"
	# zink blits in the GENERAL layout: the validation layer's performance
	# advice, given as much to the program run natively, is not a finding
	# (one of a kind shown, then how many more came)
	output=$(echo "$output" | grep -v -e 'validation warning: Validation Performance Warning' \
		-e 'validation: [0-9]* more performance warnings' || true)
	echo "frame $f: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -f "$full/frame-$f.png" ]
	echo "frame $f: $(ae "$full/frame-$f.png" "s$f/frame-$f.png") pixels differ"
	[ "$(ae "$full/frame-$f.png" "s$f/frame-$f.png")" = 0 ]
}

@test "Qt Quick through Vulkan: a submit runs its secondaries as they were recorded, though the program frees them after the frame and allocates them again at the same handles: frame 55 trims (a freed secondary's buffer reads were walked: a crash), and a layer drawn once in frame 0 through a secondary, its matrices written before that submit, is in frame 25's cut; validated, pixel-equal" {
	local q="$TOP/tests/data/qtquick-45-56.trace" l="$TOP/tests/data/qtquick-layer-0-30.trace"
	trace-decode "$q" | grep -q 'level: VK_COMMAND_BUFFER_LEVEL_SECONDARY'
	trace-replay -q --screenshot 50,55 --screenshot-dir fullq "$q"
	trim_check "$q" fullq 55
	trim_check "$q" fullq 50
	trace-replay -q --screenshot 25 --screenshot-dir fulll "$l"
	trim_check "$l" fulll 25
	# the layer's texture is drawn in the cut's setup alone: the range
	# only samples it
	trace-trim --verbose --frames 25 -o v25.trace "$l" 2>verbose.txt
	cat verbose.txt
	grep -q 'setup: the submit of call [0-9]*, .*which the range may read' verbose.txt
}

@test "a secondary reads what its primary had not written before executing it: Qt Quick's layer, whose primary copies a quad's 80 bytes whole into a vertex buffer and then executes the secondary that draws from it, the buffer destroyed before the range; with the writers of destroyed objects forgotten (TRACE_TRIM_GRAVES=0), frame 10 trims with no warning (the secondary walked on its own read the buffer: a false 'the GPU wrote it and the program destroyed it'), validated and pixel-equal" {
	local l="$TOP/tests/data/qtquick-layer-0-30.trace"
	trace-decode "$l" >all.txt
	# the pattern: a whole copy into the buffer, which a secondary binds
	local buf
	buf=$(grep -m1 'fn: vkCmdCopyBuffer, .*regionCount: 1, pRegions: \[{srcOffset: 0, dstOffset: 0, size: 80}\]' all.txt |
		sed 's/.*dstBuffer: \(0x[0-9a-f]*\),.*/\1/')
	grep -q "fn: vkCreateBuffer, .*size: 80, .*pBuffer: \[$buf\]" all.txt
	grep -q "fn: vkCmdBindVertexBuffers, .*pBuffers: \[$buf," all.txt
	grep -q "fn: vkDestroyBuffer, args: {device: [^,]*, buffer: $buf," all.txt
	TRACE_TRIM_GRAVES=0 run trace-trim --frames 10 -o t10.trace "$l"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	trace-replay -q --screenshot 10 --screenshot-dir full "$l"
	cut_equal t10.trace 10 full/frame-10.png
}

@test "destroyed objects past the most kept (TRACE_TRIM_GRAVES=64): those only the others' writers and the live descriptor sets' past updates hold go first, not the oldest: Qt Quick's old glyph atlas, copied into the grown one, keeps its uploads; frame 150 trims with no warning, validated and pixel-equal (before: 1335 pixels, its text lost)" {
	local q="$TOP/tests/data/qtquick-glyphs-0-150.trace"
	TRACE_TRIM_GRAVES=64 run trace-trim --frames 150 -o t150.trace "$q"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	trace-replay -q --screenshot 150 --screenshot-dir full "$q"
	cut_equal t150.trace 150 full/frame-150.png
	# a value out of range: said, and the default used
	TRACE_TRIM_GRAVES=8192 run trace-trim --frames 150 -o t150b.trace "$q"
	[ "$status" -eq 0 ]
	[ "$output" = "trace-trim: TRACE_TRIM_GRAVES=8192: expected 0 to 256; using 256" ]
	# that many were destroyed: the default most (256) is not reached
	[ "$(trace-decode "$q" | grep -c 'fn: vkDestroyImage,\|fn: vkDestroyBuffer,')" -gt 64 ]
}

@test "a range that destroys framebuffers and views reads nothing of the images they show, and an image it makes with the handle of one it destroyed is its own: Qt's hellovulkancubes resized, its frame that makes the swapchain again runs none of the frame before in its setup; replayed, the program's own validation message alone, pixel-equal" {
	local q="$TOP/tests/data/qt-cubes-resize.trace"
	trace-decode "$q" | trace-filter --frames 102 | grep -q 'fn: vkDestroyFramebuffer,'
	cut_running "$q" 102 0
	trace-replay -q --screenshot 102 --screenshot-dir full "$q"
	run trace-replay --validate --screenshot 102 --screenshot-dir s102 t102.trace
	echo "$output"
	# the program's own (it drew with a viewport of width 0 while the
	# window changed size): the whole fixture's replay says the same
	[ "$(echo "$output" | grep -c 'validation error: .*VUID-VkViewport-width-01770')" = 1 ]
	[ "$(echo "$output" | grep -vc 'VUID-VkViewport-width-01770\|1 validation error$')" = 0 ]
	[ "$(ae full/frame-102.png s102/frame-102.png)" = 0 ]
}

@test "a command buffer the range allocates (vkexample --fresh-command-buffers: each frame frees its slot's and allocates another) is the range's own, and what it records is what the range uses: frame 12's setup runs the texture's upload alone, validated, pixel-equal" {
	local t="$W/ex-fresh-command-buffers.trace"
	trace-decode "$t" | trace-filter --frames 12 | grep -q 'fn: vkAllocateCommandBuffers,'
	# the upload; the frame before (its picture, its compute image) is
	# not read: the frame's pass clears one and its dispatch writes the
	# other whole (taken for its command buffer's, the frame's uses were
	# lost: Qt Quick's layer texture came from an older frame)
	cut_running "$t" 12 1
	cut_equal t12.trace 12 "$W/ex-fresh-command-buffers.frame-12.png"
}

@test "two devices (Qt Quick's two windows, a render thread and a device each): frames 300 and 650 trimmed replay validated and pixel-equal, each device's layouts set on that device" {
	local t="$TOP/tests/data/qtquick-two-windows.trace"
	[ "$(trace-decode "$t" | grep -c 'fn: vkCreateDevice,')" -ge 2 ]
	trace-replay -q --screenshot 300,650 --screenshot-dir full "$t"
	# (at 3061de1 one command buffer of one device named the other's
	# images: UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout)
	trim_check "$t" full 300
	trim_check "$t" full 650
}

@test "vkcube: trimmed to frame 0, 1, 150 or 299, each replays validated and equals the full replay's frame" {
	for f in 0 1 150 299; do
		trim_check "$W/cube.trace" "$W/cube-full" $f
	done
	# and the comparison can fail: the cube turns between frames
	[ "$(ae "$W/cube-full/frame-150.png" s299/frame-299.png)" -gt 1000 ]
}

@test "a call the capture ended inside, begun before whole calls read already, is left out of the cut: a present of a swapchain destroyed after it began" {
	# OpenArena through zink, stopped by SIGTERM: zink's thread was inside
	# a present while the main thread destroyed the swapchain; the present,
	# begun first, is read last, after the destroys, and trim stopped at it
	# ("no earlier record made it").  As replay-vk.bats makes it: one more
	# present after vkcube's last, the calls after it numbered on past it
	trace-decode "$W/cube.trace" >cube.txt
	local p
	p=$(grep 'fn: vkQueuePresentKHR,' cube.txt | tail -1 | sed 's/^{call: \([0-9]*\),.*/\1/')
	{ awk -v p="$p" '{ n = $2 + 0; if (n > p) sub(/^\{call: [0-9]+,/, "{call: " n + 1 ","); print }' cube.txt
	  grep 'fn: vkQueuePresentKHR,' cube.txt | tail -1 |
		sed "s/^{call: [0-9]*,/{call: $((p + 1)),/; s/, ret: VK_SUCCESS}\$/, flags: [incomplete]}/"; } >inc.txt
	tail -1 inc.txt | grep -q 'fn: vkQueuePresentKHR, .*flags: \[incomplete\]}$'
	trace-encode -o inc.trace inc.txt
	# the last frame to the end (the destroys): the cut made without it,
	# but for the range's call numbers in the header
	trace-trim --frames 299- -o inc299.trace inc.trace
	trace-trim --frames 299- -o cube299.trace "$W/cube.trace"
	diff <(trace-decode inc299.trace | tail -n +2) <(trace-decode cube299.trace | tail -n +2)
	trim_check inc.trace "$W/cube-full" 299
}

# call_of FILE FN: the number of the first call to FN in the text trace FILE.
call_of() {
	sed -n "s/^{call: \([0-9]*\), .*fn: $2, .*/\1/p" "$1" | head -1
}

@test "vkcube: --calls from after frame 150's acquire, from its submit, from its present, or the present alone: each replays validated, frames 150 and 151 pixel-equal" {
	trace-filter --frames 150 -f text "$W/cube.trace" >f150.txt
	acq=$(call_of f150.txt vkAcquireNextImageKHR)
	sub=$(call_of f150.txt vkQueueSubmit)
	pre=$(call_of f150.txt vkQueuePresentKHR)
	end=$(trace-filter --frames 151 -f text "$W/cube.trace" | tail -1 | sed 's/^{call: \([0-9]*\),.*/\1/')
	# vkcube: the acquire signals a semaphore the submit waits for, the
	# matrices' update between them; the submit signals one the present
	# waits for
	[ "$sub" -eq $((acq + 2)) ]
	[ "$pre" -eq $((sub + 1)) ]
	for a in $((acq + 1)) "$sub" "$pre"; do
		trace-trim --calls "$a-$end" -o "c$a.trace" "$W/cube.trace"
		run timeout 60 trace-replay --validate --screenshot 150,151 --screenshot-dir "s$a" "c$a.trace"
		echo "calls $a-$end: status $status: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		[ "$(ae "$W/cube-full/frame-150.png" "s$a/frame-150.png")" = 0 ]
		[ "$(ae "$W/cube-full/frame-151.png" "s$a/frame-151.png")" = 0 ]
	done
	# the present alone: the setup makes the image it shows (nothing
	# else in the range names it) and draws it
	trace-trim --calls "$pre" -o p.trace "$W/cube.trace"
	cut_equal p.trace 150 "$W/cube-full/frame-150.png"
	# the setup of the trim from the present signals, with a submit of
	# no command buffers, the semaphore the present waits for
	sem=$(grep "^{call: $pre," f150.txt | sed 's/.*pWaitSemaphores: \[\(0x[0-9a-f]*\)\].*/\1/')
	trace-decode "c$pre.trace" | sed '/fn: tracekit.setup.end/q' |
		grep 'fn: vkQueueSubmit, .*commandBufferCount: 0,' >signal.txt
	cat signal.txt
	[ "$(wc -l <signal.txt)" = 1 ]
	grep -q "pSignalSemaphores: \[$sem\]" signal.txt
	# at a frame's start nothing is left signaled: no such submit
	trace-trim --frames 150 -o f.trace "$W/cube.trace"
	if trace-decode f.trace | sed '/fn: tracekit.setup.end/q' | grep -q 'commandBufferCount: 0,'; then
		false
	fi
}

@test "a fence an acquire before the range signals is created signaled: the range's wait for it returns" {
	# vkcube acquires with no fence: give frame 150's acquire one of its
	# own, made just before it, and wait for it after the submit
	trace-decode "$W/cube.trace" >cube.txt
	trace-filter --frames 150 -f text "$W/cube.trace" >f150.txt
	acq=$(call_of f150.txt vkAcquireNextImageKHR)
	sub=$(call_of f150.txt vkQueueSubmit)
	dev=$(grep "^{call: $acq," f150.txt | grep -o 'device: 0x[0-9a-f]*' | cut -d' ' -f2)
	awk -v a="$acq" -v s="$sub" -v dev="$dev" '
	function out(line) {
		sub(/^\{call: [0-9]+,/, "{call: " no++ ",", line)
		print line
	}
	/^\{call: / {
		n = $2 + 0
		if (!started) { no = n; started = 1 }
		if (n == a) {
			out("{call: 0, thread: 0, fn: vkCreateFence, args: {device: " dev ", pCreateInfo: [{sType: VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, pNext: null, flags: 0}], pAllocator: null, pFence: [0xf00d]}, ret: VK_SUCCESS}")
			sub(/fence: 0x0,/, "fence: 0xf00d,")
		}
		out($0)
		if (n == s)
			out("{call: 0, thread: 0, fn: vkWaitForFences, args: {device: " dev ", fenceCount: 1, pFences: [0xf00d], waitAll: true, timeout: 18446744073709551615}, ret: VK_SUCCESS}")
		next
	}
	{ print }' cube.txt >fenced.txt
	grep -q "fn: vkAcquireNextImageKHR, .*fence: 0xf00d," fenced.txt
	# from after the acquire (now one call later) to frame 150's present
	# (now three)
	pre=$(call_of f150.txt vkQueuePresentKHR)
	trace-trim --calls "$((acq + 2))-$((pre + 2))" -o t.txt fenced.txt
	grep 'fn: vkCreateFence, .*0xf00d' t.txt | grep -q 'flags: VK_FENCE_CREATE_SIGNALED_BIT'
	cut_equal t.txt 150 "$W/cube-full/frame-150.png"
}

@test "a submit run again whose second command buffer expects the layout its first leaves (zink's upload and draw buffers, SDL2's testoverlay2): the setup gives the image the layout the first expects" {
	# two such submits clear the texture before frame 150: the second's
	# clear ends what the first wrote, so the setup runs the second
	# alone, its first command buffer finding the texture in the layout
	# it expects (the frames' SHADER_READ_ONLY_OPTIMAL), its second in
	# the one the first leaves
	trace-decode "$W/cube.trace" >cube.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/layouts_edit.awk" cube.txt >laid.txt
	[ "$(grep -c 'fn: vkCmdClearColorImage,' laid.txt)" = 2 ]
	trace-replay --screenshot 150 --screenshot-dir full laid.txt
	trace-trim --frames 150 -o t.trace laid.txt
	trace-decode t.trace >t.txt
	[ "$(grep -c 'fn: vkCmdClearColorImage,' t.txt)" = 1 ]
	# the second pair's clear colour
	grep 'fn: vkCmdClearColorImage,' laid.txt | tail -1 | grep -o 'pColor: \[[^]]*\]' >second
	grep -qF "$(cat second)" t.txt
	cut_equal t.trace 150 full/frame-150.png
}

# ex_check NAME: trims the example's capture ex-NAME.trace to frame 12,
# replays the trim validated, and compares frame 12 with the layer's
# screenshot of it.
ex_check() {
	trace-trim --frames 12 -o t.trace "$W/ex-$1.trace"
	[ -f "$W/ex-$1.frame-12.png" ]
	cut_equal t.trace 12 "$W/ex-$1.frame-12.png"
}

@test "vkexample --mips: a frame that makes levels 1 and on again from UNDEFINED and blits them from level 0, trimmed, keeps the upload of level 0, replays validated and pixel-equal" {
	# levels 1-6 from UNDEFINED drop what they held, not what level 0
	# holds: the frame reads level 0, so its upload stays in the setup
	ex_check mips
	trace-decode t.trace | grep -q 'fn: vkCmdCopyBufferToImage,'
}

@test "vkexample --mips: the setup of a cut runs the upload of level 0 and none of the frames that made levels 1 and on again; a late cut of a capture twice as long runs no more" {
	# every frame makes levels 1-6 again from UNDEFINED, blitted from
	# level 0, which only the load-time upload wrote; frame 12 does so
	# too before it samples them, so of the capture's submits its setup
	# needs the upload alone.  With an image's writers kept whole, each
	# earlier frame stayed one (the upload is needed for level 0, and no
	# frame dropped all of the texture): 13 submits at frame 12, 41 at 40
	trace-trim --frames 12 -o t12.trace "$W/ex-mips.trace"
	trace-trim --frames 40 -o t40.trace "$W/ex-mips48.trace"
	local n12 n40
	n12=$(setup_submits t12.trace)
	n40=$(setup_submits t40.trace)
	echo "the capture's submits in the setup: frame 12 of 24, $n12; frame 40 of 48, $n40"
	[ "$n12" = 1 ]
	[ "$n40" = "$n12" ]
	trace-decode t40.trace | grep -q 'fn: vkCmdCopyBufferToImage,'
	trace-replay --screenshot 40 --screenshot-dir full "$W/ex-mips48.trace"
	cut_equal t40.trace 40 full/frame-40.png
}

@test "vkexample --compute-mips: a dispatch writes only the level its storage view shows; the setups of frame 12 and of frame 40 of 48 run the upload of level 0 alone, replay validated and pixel-equal" {
	# each frame makes level i of 1-6 from UNDEFINED, then a dispatch
	# reads level i - 1 through a view of that level and writes level i
	# through a storage view of its own; the draw samples all 7.  Level 0
	# only the load-time upload wrote.  Frame 12 drops levels 1-6 before
	# it reads them and reads level 0: of the capture's submits its setup
	# needs the upload alone, and so does frame 40's.  With a storage
	# image's writes counted as the whole image, each frame was a writer
	# of level 0 too, which no frame drops: 13 submits at frame 12, 41 at
	# 40.  The cut's submits: the upload, the setup's own that leaves the
	# layouts as they were, frame 12's
	trace-trim --frames 12 -o t12.trace "$W/ex-cmips48.trace"
	trace-trim --frames 40 -o t40.trace "$W/ex-cmips48.trace"
	local n12 n40
	n12=$(setup_submits t12.trace)
	n40=$(setup_submits t40.trace)
	echo "the capture's submits in the setup: frame 12, $n12; frame 40, $n40"
	[ "$n12" = 1 ]
	[ "$n40" = 1 ]
	[ "$(trace-decode t12.trace | grep -c 'fn: vkQueueSubmit,')" = 3 ]
	trace-decode t12.trace | grep -q 'fn: vkCmdCopyBufferToImage,'
	cut_equal t12.trace 12 "$W/ex-cmips48.frame-12.png"
	trace-replay --screenshot 40 --screenshot-dir full "$W/ex-cmips48.trace"
	cut_equal t40.trace 40 full/frame-40.png
}

@test "a storage buffer every shader that binds it declares readonly is no GPU write (vkexample --uniform-storage ro: the frame's uniforms, which the host writes each frame): frame 12's setup runs the texture's upload alone; declared writable (rw), each frame that bound it runs again; both replay validated and pixel-equal" {
	# the SPIR-V says NonWritable on each member of the block (GLSL's
	# readonly); a draw counts as a write of a storage descriptor only
	# where a stage of the bound pipeline may write its binding.  When a
	# bind of the set counted as a write of all its storage, the 12
	# frames before ran again for a buffer the host writes whole each
	# frame (SuperTuxKart's instance data: 41 of them in a frame-150 cut)
	cut_verbose "$W/ex-storage-ro.trace" 12 ro.trace 1
	[ -z "$(grep 'it wrote VkBuffer' <<<"$output")" ]
	cut_equal ro.trace 12 "$W/ex-storage-ro.frame-12.png"
	cut_verbose "$W/ex-storage-rw.trace" 12 rw.trace 13
	[ "$(grep -c 'it wrote VkBuffer' <<<"$output")" = 12 ]
	cut_equal rw.trace 12 "$W/ex-storage-rw.frame-12.png"
}

@test "a storage image the compute shader declares writeonly and the cube's shader does not use is not read (vkexample --anim-unsampled: each frame's dispatch writes it, over the last frame's): frame 12's setup runs the texture's upload alone, and replays validated and pixel-equal" {
	# a bind of a set counts as a read only of the bindings that a draw
	# or dispatch of its command buffer reads with the pipeline bound
	# then: not one declared NonReadable (GLSL's writeonly; vkd3d's UAV
	# clears) by every stage, nor one no stage uses.  When a bind read all
	# the set showed, the cut ran the 12 frames before again, each
	# frame's dispatch a reader of the last frame's
	cut_verbose "$W/ex-anim-unsampled.trace" 12 t12.trace 1
	[ "$(grep -c 'which the range may read' <<<"$output")" = 1 ]
	cut_equal t12.trace 12 "$W/ex-anim-unsampled.frame-12.png"
}

@test "a Direct3D 12 program through vkd3d (tests/data/d3d12flat.trace): a UAV image that each frame's compute clear only writes, in sets the frame allocates, and that barriers alone move in and out of GENERAL, is read by nothing: frame 150's setup runs 2 of the capture's submits, not 150; replay validated and pixel-equal" {
	# the range's own sets: its updates no longer read all they name,
	# its draws read what they use; a recording from before that names
	# an image only in barriers (a layout changes, the contents stay)
	# does not read it.  Each was enough to keep all 148 clears before
	local d="$TOP/tests/data/d3d12flat.trace"
	trace-replay --screenshot 150 --screenshot-dir full "$d"
	cut_verbose "$d" 150 t150.trace 2
	[ -z "$(grep 'it wrote VkImage 0x9bb0c1c0' <<<"$output")" ]
	cut_equal t150.trace 150 full/frame-150.png
}

# cut_12_20_check NAME N FN: $W/NAME.trace, vkexample's 24 frames of a
# mode whose texture or mask one load-time submit or two write, cut at
# frame 12 and at frame 20: each setup runs N of the capture's submits,
# FN among their commands; both cuts replay validated, pixel-equal to the
# layer's frame 12 and the full replay's frame 20.
cut_12_20_check() {
	local name=$1 n=$2 fn=$3 n12 n20
	trace-trim --frames 12 -o t12.trace "$W/$name.trace"
	trace-trim --frames 20 -o t20.trace "$W/$name.trace"
	n12=$(setup_submits t12.trace)
	n20=$(setup_submits t20.trace)
	echo "the capture's submits in the setup: frame 12, $n12; frame 20, $n20"
	[ "$n12" = "$n" ]
	[ "$n20" = "$n" ]
	trace-decode t20.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' |
		grep -q "fn: $fn,"
	cut_equal t12.trace 12 "$W/$name.frame-12.png"
	trace-replay --screenshot 20 --screenshot-dir full "$W/$name.trace"
	cut_equal t20.trace 20 full/frame-20.png
}

@test "a copy in a setup submit into an image destroyed before the range, from a buffer nothing else reads, is left out with the bytes it read; kept where the image is alive; replay validated and pixel-equal" {
	# the upload of ex-mips also copies 0xff bytes of a staging buffer of
	# its own into an image of its own (dead_copy_edit.awk); the setup of
	# frame 12 runs the upload again for the texture, and before this it
	# ran that copy too, writing its 16 KiB source first, for an image
	# nothing reads and the program destroyed (Warzone 2100: a 16 MiB
	# staging buffer, half a one-frame cut)
	trace-decode "$W/ex-mips.trace" >ex.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/dead_copy_edit.awk" ex.txt >dead.txt
	[ "$(grep -c 'fn: vkCmdCopyBufferToImage, args: {commandBuffer: [^,]*, srcBuffer: 0x7e57000000000042' dead.txt)" = 1 ]
	trace-trim --frames 12 --verbose -o base.trace ex.txt 2>base.err
	trace-trim --frames 12 --verbose -o cut.trace dead.txt 2>cut.err
	cat cut.err
	grep -q '^trace-trim: setup: the submit of call [0-9]*, .*; without 1 transfer whose results nothing reads$' cut.err
	grep -q ', 1 submits, 1 transfers of them left out, ' cut.err
	trace-decode cut.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' >setup.txt
	! grep -q 'srcBuffer: 0x7e57000000000042' setup.txt
	! grep -q 'fn: tracekit.update, args: {object: 0x7e57000000000042' setup.txt
	# the barriers around it stay, naming the image
	[ "$(grep -c 'fn: vkCmdPipelineBarrier,.*image: 0x7e57000000000040' setup.txt)" = 2 ]
	bytes() { sed -n 's/.* updates of \([0-9]*\) bytes.*/\1/p' "$1"; }
	echo "update bytes: $(bytes cut.err), without the copy in the capture $(bytes base.err)"
	[ "$(bytes cut.err)" = "$(bytes base.err)" ]
	cut_equal cut.trace 12 "$W/ex-mips.frame-12.png"
	# the image alive when the range begins: the range may read it, the
	# copy and its source's bytes stay
	awk -v keep=1 -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/dead_copy_edit.awk" ex.txt >alive.txt
	trace-trim --frames 12 --verbose -o kept.trace alive.txt 2>kept.err
	cat kept.err
	! grep -q 'without' kept.err
	grep -q ', 1 submits, 0 transfers of them left out, ' kept.err
	trace-decode kept.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' |
		grep -q 'fn: vkCmdCopyBufferToImage, args: {commandBuffer: [^,]*, srcBuffer: 0x7e57000000000042'
	[ "$(bytes kept.err)" -ge "$(($(bytes base.err) + 16384))" ]
	cut_equal kept.trace 12 "$W/ex-mips.frame-12.png"
}

@test "a setup whose submits push descriptors through an update template (as zink pushes every draw's) leaves out a copy nothing reads too; not where a push's pData does not walk whole; replay validated and pixel-equal" {
	# the dead copy of the test above, in a capture whose compute pass
	# pushes its descriptors through a template: before, any such push in
	# a recording of the setup left every transfer in, as a push named no
	# handle of what its pData holds
	trace-decode "$W/ex-cmonce-push.trace" >push.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/dead_copy_edit.awk" push.txt >dead.txt
	trace-trim --frames 12 --verbose -o cut.trace dead.txt 2>cut.err
	cat cut.err
	grep -q ', 2 submits, 1 transfers of them left out, ' cut.err
	trace-decode cut.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' >setup.txt
	! grep -q 'srcBuffer: 0x7e57000000000042' setup.txt
	! grep -q 'fn: tracekit.update, args: {object: 0x7e57000000000042' setup.txt
	# the pass runs, its pushes naming the texture's levels: the upload
	# into them stays
	[ "$(grep -c 'fn: vkCmdPushDescriptorSetWithTemplateKHR,' setup.txt)" = \
		"$(grep -c 'fn: vkCmdPushDescriptorSetWithTemplateKHR,' push.txt)" ]
	grep -q 'fn: vkCmdCopyBufferToImage,' setup.txt
	cut_equal cut.trace 12 "$W/ex-cmonce-push.frame-12.png"
	# the pass's last push cut to one handle's bytes: what it names is not
	# known, nothing is left out
	local last
	last=$(grep -n 'fn: vkCmdPushDescriptorSetWithTemplateKHR,' dead.txt | tail -n 1 | cut -d: -f1)
	sed -E "${last}s/pData: !!binary \"[^\"]*\"/pData: !!binary \"gDKjJ1BWAAA=\"/" dead.txt >short.txt
	trace-trim --frames 12 --verbose -o short.trace short.txt 2>short.err
	cat short.err
	grep -q ', 2 submits, 0 transfers of them left out, ' short.err
}

@test "a buffer copied over whole, by vkCmdCopyBuffer or vkCmdCopyBuffer2, drops what an earlier submit wrote of it: the setup runs the copy alone; a copy over half runs both, and the range reads the same bytes" {
	# before frame 0, buffer D is filled by one submit, then copied over
	# from a host-written buffer by the next; frame 20 copies D into E
	# (copy2_edit.awk).  With a setup submit's whole-buffer writes taken
	# as partial, the fill stayed in the setup of frame 20
	trace-decode "$W/cube.trace" >cube.txt
	local c
	for c in 1 2; do
		awk -v copy=$c -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/copy2_edit.awk" cube.txt >c$c.txt
		trace-trim --frames 20 --verbose -o c$c.cut c$c.txt 2>c$c.err
		cat c$c.err
		grep -q ', 1 submits, ' c$c.err
		grep -q 'it wrote VkBuffer 0x7e5c000000000004, which the range may read' c$c.err
		[ "$(setup_submits c$c.cut)" = 1 ]
		trace-decode c$c.cut | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' >setup$c.txt
		! grep -q 'fn: vkCmdFillBuffer,' setup$c.txt
	done
	grep -q 'fn: vkCmdCopyBuffer2,' setup2.txt
	awk -v size=2048 -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/copy2_edit.awk" cube.txt >half.txt
	trace-trim --frames 20 --verbose -o half.cut half.txt 2>half.err
	cat half.err
	grep -q ', 2 submits, ' half.err
	# what frame 20 copies into E, replayed whole and cut, validated
	local e=0x7e5c000000000009 t
	for t in c1 half; do
		trace-encode -o $t.trace $t.txt
		trace-replay -q --validate --frames 0-20 --dump-resource $e --dump-dir $t-full $t.trace
		trace-replay -q --validate --dump-resource $e --dump-dir $t-cut $t.cut
		cmp $t-full/*-dst.bin $t-cut/*-dst.bin
	done
	# the fill shows through the half copy
	[ "$(od -An -tx1 -j 2048 -N 1 half-cut/*-dst.bin | tr -d ' ')" = 01 ]
	[ "$(od -An -tx1 -N 1 half-cut/*-dst.bin | tr -d ' ')" = 55 ]
}

@test "a setup submit that read what a later submit dropped before the range runs after the submit that wrote it: the upload, read by a copy out, dropped by the copy back; replay validated and pixel-equal" {
	# after the upload of ex-mips, R copies the texture's level 0 into an
	# image of its own, and D takes level 0 from UNDEFINED and copies it
	# back (former_edit.awk).  Frame 12 reads level 0: its setup runs D,
	# so R, which read what the upload wrote, so the upload, though D
	# dropped it.  With the upload's writes gone at the drop for good
	# (before state.c kept former writers), the setup ran R and D alone,
	# on a level 0 the upload never filled: 19067 pixels off
	trace-decode "$W/ex-mips.trace" >ex.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/former_edit.awk" ex.txt >former.txt
	[ "$(grep -c 'fn: vkCmdCopyImage,' former.txt)" = 2 ]
	trace-trim --frames 12 --verbose -o cut.trace former.txt 2>cut.err
	cat cut.err
	grep -q ', 3 submits, ' cut.err
	# the upload: the copy from the staging buffer, with its bytes
	trace-decode cut.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' >setup.txt
	grep -q 'fn: vkCmdCopyBufferToImage,' setup.txt
	[ "$(grep -c 'fn: vkCmdCopyImage,' setup.txt)" = 2 ]
	cut_equal cut.trace 12 "$W/ex-mips.frame-12.png"
	# the edit draws what the capture drew
	cut_equal former.txt 12 "$W/ex-mips.frame-12.png"
}

@test "vkexample --compute-mips-once --copy-sets: a storage descriptor a VkCopyDescriptorSet copies into a set is a write of the dispatch that binds the set; the setups of frame 12 and frame 20 of 24 run the compute pass after the upload; replay validated and pixel-equal" {
	# each level's set gets its two descriptors copied from a set written
	# first; a set's storage targets once came from its writes alone, and
	# the cuts, without the compute pass, sampled levels 1-6 undefined
	# (19,067 pixels off at frame 12)
	cut_12_20_check ex-cmonce-copy 2 vkCmdDispatch
	[ "$(trace-decode "$W/ex-cmonce-copy.trace" | grep -c 'fn: vkUpdateDescriptorSets, args: {device: [^,]*, descriptorWriteCount: 0,')" = 6 ]
}

@test "vkexample --compute-mips-once --templates: a storage descriptor written through an update template is a write; the setups of frame 12 and frame 20 of 24 run the compute pass after the upload; replay validated and pixel-equal" {
	# at load, after the upload (which leaves levels 1-6 in GENERAL), a
	# submit of its own makes levels 1-6 from level 0, each through a
	# storage view its set got from vkUpdateDescriptorSetWithTemplate,
	# with no barrier from UNDEFINED; the frames only sample the texture.
	# With template writes not seen as storage, the pass wrote nothing:
	# the setups ran the upload alone, and frame 12 drew with levels 1-6
	# as the upload left them, 19067 pixels off
	# the upload and the compute pass after it: levels 1-6's one writer
	cut_12_20_check ex-cmonce-tpl 2 vkCmdDispatch
	trace-decode "$W/ex-cmonce-tpl.trace" | grep -q 'fn: vkUpdateDescriptorSetWithTemplate,'
}

@test "vkexample --compute-mips-once --push-templates: a storage descriptor pushed through an update template (vkCmdPushDescriptorSetWithTemplateKHR) is a write of the command buffer; the setups of frame 12 and frame 20 of 24 run the compute pass after the upload; replay validated and pixel-equal" {
	# the same pass, no sets: before each level's dispatch its two
	# descriptors are pushed through a template of type PUSH_DESCRIPTORS,
	# level i's storage view among them, the pass's one write of levels
	# 1-6 (no set, no barrier from UNDEFINED).  With such a push not seen
	# as a write (state.c's record_special without template_targets), the
	# setups ran the upload alone, and frames 12 and 20 were 19067 and
	# 18065 pixels off
	# the upload and the compute pass after it, its pushes in the setup
	cut_12_20_check ex-cmonce-push 2 vkCmdPushDescriptorSetWithTemplateKHR
	# and the pass had no set: the frames' two allocations alone, no
	# template write of a set
	trace-decode "$W/ex-cmonce-push.trace" >push.txt
	grep -q 'templateType: VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR' push.txt
	[ "$(grep -c 'fn: vkAllocateDescriptorSets,' push.txt)" = 2 ]
	! grep -q 'fn: vkUpdateDescriptorSetWithTemplate' push.txt
}

@test "vkexample --compute-mips-once: the same pass, its sets written with vkUpdateDescriptorSets; the setups run it too" {
	cut_12_20_check ex-cmonce 2 vkCmdDispatch
	! trace-decode "$W/ex-cmonce.trace" | grep -q 'fn: vkUpdateDescriptorSetWithTemplate'
}

# verbose_check NAME N: trace-trim --verbose cutting $W/NAME.trace at
# frame 12 prints one line a submit its setup runs again (N of the
# capture's, as setup_submits counts them and the summary), in increasing
# call order, each a submit of the capture, an object made in it, and the
# range or a later submit of the setup that may read it (the setup runs
# its submits in order: what a submit wrote, an earlier one cannot have
# read, so it cannot be why the submit runs); then the summary.  The
# lines are left in NAME.why, one "CALL TYPE HANDLE READER" a line
# (READER: range, or the reader's call).
verbose_check() {
	local name=$1 n=$2 c t h m
	cut_verbose "$W/$name.trace" 12 "$name.trace" "$n"
	[ "${#lines[@]}" = $((n + 1)) ]
	[[ "${lines[-1]}" == "trace-trim: frames 12-12: setup of "*" records ("*", $n submits, "* ]]
	printf '%s\n' "${lines[@]:0:n}" >"$name.txt"
	awk '{
		if (!match($0, /^trace-trim: setup: the submit of call [0-9]+, after [0-9]+ bytes of contents: it wrote Vk[A-Za-z0-9]+ 0x[0-9a-f]+, which (the range|the submit of call [0-9]+) may read$/)) {
			print "line " NR ": not a setup line"; bad = 1
		}
		split($0, w, " ")
		c = w[7] + 0
		if (NR > 1 && c <= last) { print "line " NR ": call " c " after " last; bad = 1 }
		last = c
	} END { exit bad }' "$name.txt"
	sed 's/^trace-trim: setup: the submit of call \([0-9]*\),.* it wrote Vk\([A-Za-z0-9]*\) \(0x[0-9a-f]*\), which the \(range\|submit of call \([0-9]*\)\) may read$/\1 \2 \3 \4/; s/ submit of call / /' \
		"$name.txt" >"$name.why"
	cat "$name.why"
	trace-decode "$W/$name.trace" >"$name.dec"
	while read -r c t h m; do
		grep -q "^{call: $c, .*fn: vkQueueSubmit," "$name.dec"
		grep -q "fn: vkCreate$t, .*p$t: \[$h\]" "$name.dec"
		[ "$m" = range ] || cut -d' ' -f1 "$name.why" | grep -qx "$m"
		[ "$m" = range ] || [ "$m" -gt "$c" ]
	done <"$name.why"
}

@test "trace-trim --verbose: one line per submit the setup runs again, in the capture's order, each naming an object it wrote and what may read it, then the summary" {
	# vkexample --compute-mips-once: the upload and the load-time
	# compute pass, which the range reads (above)
	verbose_check ex-cmonce 2
	# --rewrite-source: the upload and the copy, which the range reads,
	# and the buffer's first fill, which the copy reads
	verbose_check ex-rewrite 3
	[ "$(cut -d' ' -f2,4 ex-rewrite.why | grep -c '^Buffer [0-9]')" = 1 ]
}

@test "vkexample --depth-read-only: a pass of dynamic rendering whose depth image is read-only, loaded and stored, reads it and writes nothing; the setups of frame 12 and frame 20 of 24 run the upload, the mask's one writer, alone; replay validated and pixel-equal" {
	# each frame clears and writes the cube's depth buffer, then draws a
	# bar over it and one over the mask, each pass with its depth image in
	# DEPTH_STENCIL_READ_ONLY_OPTIMAL, loaded, stored, depth writes off.
	# The upload wrote the mask (its stripes), no frame since.  With every
	# attachment of vkCmdBeginRendering counted as written, each frame was
	# the mask's writer, and as it loads the mask, needed the frame
	# before: 13 submits at frame 12, 21 at frame 20
	# the upload alone: the mask's one writer
	cut_12_20_check ex-dro 1 vkCmdClearAttachments
}

@test "vkexample --depth-read-only-rp: a render pass whose depth attachment is read-only from initialLayout to finalLayout, loaded and stored, reads it and writes nothing; the setups of frame 12 and frame 20 of 24 run the upload, the mask's one writer, alone; replay validated and pixel-equal" {
	# the same passes, each a render pass (vkCmdBeginRenderPass): the
	# bars' depth attachments in DEPTH_STENCIL_READ_ONLY_OPTIMAL as
	# initialLayout, finalLayout and the subpass's reference, depth and
	# stencil LOAD and STORE.  With every attachment of a render pass
	# counted as written, each frame was the mask's writer: 13 submits at
	# frame 12, 21 at frame 20
	cut_12_20_check ex-drorp 1 vkCmdClearAttachments
}

@test "vkexample --rewrite-source: a setup submit needs only the writers before it of what it reads; the setups of frame 12 and frame 20 of 24 run the copy into the texture and its source's first fill, none of the fills after the copy; replay validated and pixel-equal" {
	# at load, submits of their own, each waited for: the upload; a fill
	# of a buffer (yellow); a copy of it into a patch of the texture's
	# level 0, which the frames sample; a fill of it again (blue); then
	# every frame fills it too, first thing, and reads it nowhere.  The
	# range needs the texture: the upload and the copy; the copy reads
	# the buffer, which the setup, running its submits in order, has
	# filled only as the first fill left it.  With a setup submit's
	# inputs needing every writer, later ones too (before afe5596), the
	# fill after the copy and every frame before the cut were writers of
	# the buffer the copy read, and those frames' inputs more: 16 and 24
	# submits in the setups of frames 12 and 20, pixel-equal all the same
	cut_12_20_check ex-rewrite 3 vkCmdCopyBufferToImage
	# the first fill's value alone, nothing the frames fill
	trace-decode t20.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' |
		grep 'fn: vkCmdFillBuffer,' >fills.txt
	cat fills.txt
	[ "$(wc -l <fills.txt)" = 1 ]
	grep -q 'data: 4278255615}' fills.txt
	# and the patch shows: frame 12 drawn with it and without it
	"$TOP/build/examples/vkexample" --frames 13 --rewrite-source --png-dir with \
		--dump-frames 12 >/dev/null
	"$TOP/build/examples/vkexample" --frames 13 --png-dir without --dump-frames 12 >/dev/null
	echo "the patch: $(ae with/frame-12.png without/frame-12.png) pixels"
	[ "$(ae with/frame-12.png without/frame-12.png)" -gt 1000 ]
}

@test "vkexample --rewrite-source=destroy: a setup submit that reads what the GPU wrote into a buffer destroyed before the range runs after the fill that wrote it, the buffer made again for them: no warning, validated and pixel-equal; with those writers forgotten (TRACE_TRIM_GRAVES=0), one warning naming the submit's call and the buffer" {
	# the copy's source was filled on the GPU, then destroyed: the
	# destroyed buffer keeps the submits that wrote it, so the setup runs
	# the fill, then the copy (before, it ran the copy alone, and the
	# cut's patch was not the capture's: 5,059 pixels of frame 12 off)
	run trace-trim --frames 12 -o t12.trace "$W/ex-rewrite-destroy.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	trace-decode t12.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' >setup.txt
	grep -q 'fn: vkCmdCopyBufferToImage,' setup.txt
	grep -q 'fn: vkCmdFillBuffer,' setup.txt
	# the buffer made, filled, read by the copy, then destroyed, in the setup
	local buf
	buf=$(grep -m1 'fn: vkCmdFillBuffer,' setup.txt | sed 's/.*dstBuffer: \(0x[0-9a-f]*\),.*/\1/')
	grep -q "fn: vkCreateBuffer, .*pBuffer: \[$buf\]" setup.txt
	grep -q "fn: vkDestroyBuffer, args: {device: [^,]*, buffer: $buf," setup.txt
	replay_error --validate --screenshot 12 -o cut.png t12.trace
	echo "$output"
	[ "$status" -eq 0 ]
	trace-replay --screenshot 12 -o full.png "$W/ex-rewrite-destroy.trace"
	echo "$(ae cut.png full.png) pixels differ"
	[ "$(ae cut.png full.png)" = 0 ]
	# the writers of destroyed objects forgotten, as past the most kept
	TRACE_TRIM_GRAVES=0 run trace-trim --frames 12 -o t12z.trace "$W/ex-rewrite-destroy.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" = 1 ]
	[[ "${lines[0]}" =~ ^trace-trim:\ .*ex-rewrite-destroy.trace:\ warning:\ the\ setup\ runs\ the\ submit\ of\ call\ ([0-9]+)\ again,\ which\ reads\ VkBuffer\ (0x[0-9a-f]+):\ the\ GPU\ wrote\ it\ and\ the\ program\ destroyed\ it\ before\ the\ range.*\(1\ such\ read\)$ ]]
	local call=${BASH_REMATCH[1]}
	buf=${BASH_REMATCH[2]}
	# that call is the submit of the copy, and the buffer its source,
	# destroyed before frame 12
	trace-decode "$W/ex-rewrite-destroy.trace" >all.txt
	grep -q "^{call: $call, .*fn: vkQueueSubmit," all.txt
	grep -q "fn: vkCmdCopyBufferToImage, args: {commandBuffer: [^,]*, srcBuffer: $buf," all.txt
	grep -q "fn: vkDestroyBuffer, args: {device: [^,]*, buffer: $buf," all.txt
	trace-decode t12z.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' >setupz.txt
	grep -q 'fn: vkCmdCopyBufferToImage,' setupz.txt
	! grep -q 'fn: vkCmdFillBuffer,' setupz.txt
	trace-replay --screenshot 12 -o cutz.png t12z.trace
	echo "$(ae cutz.png full.png) pixels differ, the writers forgotten"
	[ "$(ae cutz.png full.png)" -gt 0 ]
	# the buffer alive to the end: no warning
	run trace-trim --frames 12 -o t12b.trace "$W/ex-rewrite.trace"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "vkexample --strokes 100: on a canvas never cleared, each submit of the 101 a frame a writer of it that reads a fresh host write, the last frame's cut runs every submit before it, replays validated and pixel-equal; twice the frames take less than two and a half times the memory to trim" {
	local n rss=()
	for n in 30 60; do
		/usr/bin/time -f %M -o "rss$n" trace-trim --frames $((n - 1)) -o "t$n.trace" \
			"$W/ex-strokes$n.trace"
		rss[$n]=$(cat "rss$n")
		local total setup
		total=$(trace-decode "$W/ex-strokes$n.trace" | grep -c 'fn: vkQueueSubmit,')
		setup=$(trace-decode "t$n.trace" |
			sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' |
			grep -c 'fn: vkQueueSubmit,')
		echo "frame $((n - 1)): the setup runs $setup of the capture's $total submits; ${rss[$n]} KB"
		[ "$setup" = $((total - 101)) ]
	done
	cut_equal t60.trace 59 "$W/ex-strokes60.frame-59.png"
	# the writers walked, the views of the ring copied, the records held
	# whole: each grew with the submits before (198 MB and 669 MB before)
	[ "${rss[60]}" -lt $((rss[30] * 5 / 2)) ]
}

@test "vkexample --read-pixel: each frame's texel read back by a submit of its own, then the picture cleared: frame 2999's cut runs 1 submit of the capture, replays validated and pixel-equal, and takes no more memory than frame 299's" {
	local n rss=()
	for n in 299 2999; do
		/usr/bin/time -f %M -o "rss$n" trace-trim --frames $n -o "t$n.trace" "$W/ex-probe.trace"
		rss[$n]=$(cat "rss$n")
		echo "frame $n: the setup runs $(setup_submits "t$n.trace") submits; ${rss[$n]} KB"
		[ "$(setup_submits "t$n.trace")" = 1 ]
	done
	cut_equal t2999.trace 2999 "$W/ex-probe.frame-2999.png"
	# each frame's submit was held as a former writer of the picture (a
	# later submit named it before the next frame cleared it), and each
	# readback as a writer of its buffer: 38 MB at frame 2990 and 22 MB at
	# 500 before
	[ "${rss[2999]}" -lt $((rss[299] * 6 / 5)) ]
}

@test "vkexample --anim-pair: a set written again each frame to show the image the frame writes: frame 2999's cut runs the upload alone and as many records as frame 299's, replays validated and pixel-equal, in no more memory than frame 299's" {
	local n rss=() recs=()
	for n in 299 2999; do
		/usr/bin/time -f %M -o "rss$n" trace-trim --frames $n -o "t$n.trace" "$W/ex-pair.trace"
		rss[$n]=$(cat "rss$n")
		recs[$n]=$(trace-decode "t$n.trace" | grep -c '^{call')
		echo "frame $n: the setup runs $(setup_submits "t$n.trace") submits; ${recs[$n]} records; ${rss[$n]} KB"
		[ "$(setup_submits "t$n.trace")" = 1 ]
	done
	# each update of a set stayed in the setup: 3,119 records at frame
	# 2999, 419 at 299; and a set showed every image it ever showed, so
	# each frame's submit read the other image, which the frame before
	# wrote: each was held (28 MB at 2999, 19.7 MB at 299); the image
	# the range does not use was restored too: 3 submits ran
	[ "${recs[2999]}" = "${recs[299]}" ]
	[ "${rss[2999]}" -lt $((rss[299] * 6 / 5)) ]
	cut_equal t2999.trace 2999 "$W/ex-pair.frame-2999.png"
}

@test "vkexample --mips, each frame's levels 2-6 dropped only after the blit from level 0 (edited): a blit reads its regions' source levels, so the setup of frame 12 runs the upload alone; replays validated and pixel-equal" {
	# the blit from level 0 into level 1 comes before the frame takes
	# levels 2-6 from UNDEFINED; with a blit's source read whole, it read
	# levels 2-6 first, and frame 11, their last writer, stayed in the
	# setup with the upload: 2 submits
	trace-decode "$W/ex-mips.trace" >ex.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/late_drop_edit.awk" ex.txt >late.txt
	[ "$(grep -c 'baseMipLevel: 2, levelCount: 5,' late.txt)" = 24 ]
	trace-replay --screenshot 12 --screenshot-dir full late.txt
	trace-trim --frames 12 -o t.trace late.txt
	local n
	n=$(setup_submits t.trace)
	echo "the capture's submits in the setup: $n"
	[ "$n" = 1 ]
	trace-decode t.trace | grep -q 'fn: vkCmdCopyBufferToImage,'
	cut_equal t.trace 12 full/frame-12.png
}

@test "vkexample --events: the mipmaps' last layout changes are barriers of a vkCmdWaitEvents; trimmed, the setup leaves the levels as the wait did, replays validated and pixel-equal" {
	ex_check events
	[ "$(trace-decode t.trace | grep -c 'fn: vkCmdWaitEvents,')" -ge 1 ]
}

@test "vkexample --carry-event: a frame that waits for the event the frame before set (vkCmdSetEvent, vkCmdWaitEvents), trimmed, finds it set: the setup sets it on its queue, with its stages; replays validated and pixel-equal" {
	# before, the cut's event started unset and the wait never ended
	# (Chromium's ANGLE: every cut past frame 1 hung)
	trace-trim --frames 12 -o t.trace "$W/ex-carry-event.trace"
	trace-decode t.trace >t.txt
	# the setup's own command buffer sets it, as the capture's frame 11 did
	grep -q 'fn: vkCmdSetEvent, args: {commandBuffer: 0x7ace[0-9a-f]*, event: 0x[0-9a-f]*, stageMask: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT}' t.txt
	[ "$(grep -c 'fn: vkCmdWaitEvents,' t.txt)" -ge 1 ]
	run timeout 60 trace-replay --wait-timeout 2 --validate --screenshot 12 --screenshot-dir s-carry t.trace
	echo "status $status: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	echo "frame 12: $(ae "$W/ex-carry-event.frame-12.png" s-carry/frame-12.png) pixels differ"
	[ "$(ae "$W/ex-carry-event.frame-12.png" s-carry/frame-12.png)" = 0 ]
	# the capture without its sets: the wait that never ends is named as
	# one that may wait for an event, not only as a busy device
	trace-decode "$W/ex-carry-event.trace" | grep -v 'fn: vkCmdSetEvent,' |
		trace-encode -o unset.trace
	run timeout 60 trace-replay --wait-timeout 1 unset.trace
	echo "status $status: $output"
	[ "$status" -eq 1 ]
	# (a bounded wait of the replay's ends after 1 s; where the driver
	# blocks inside a call, the watchdog ends it after 6 s)
	[[ "$output" == *"or a vkCmdWaitEvents waits for an event that no record set"* ]]
}

@test "a range that begins with a texture's levels in three layouts (vkexample --mips, edited): the setup gives each run of levels its own, in one barrier a run; replays validated and pixel-equal" {
	# a submit in frame 11 moves levels 1-3 to GENERAL and 4-6 to
	# TRANSFER_DST and writes nothing, so the setup does not run it again;
	# frame 12 takes level 0 from SHADER_READ_ONLY.  The texture's image
	# barriers only: the setup runs no frame before 12, so the images
	# those drew into get barriers of the setup's own too
	trace-decode "$W/ex-mips.trace" >ex.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/mixed_edit.awk" ex.txt >mixed.txt
	[ "$(grep -c 'fn: vkCmdPipelineBarrier, args: {commandBuffer: 0x7e57' mixed.txt)" = 1 ]
	local tex
	tex=$(grep 'fn: vkCreateImage,.*mipLevels: 7,' mixed.txt | grep -o 'pImage: \[0x[0-9a-f]*')
	tex=${tex#pImage: [}
	trace-replay --screenshot 12 --screenshot-dir full mixed.txt
	trace-trim --frames 12 -o t.trace mixed.txt
	trace-decode t.trace | grep 'fn: vkCmdPipelineBarrier, args: {commandBuffer: 0x7ace' >setup.txt
	grep -o 'oldLayout: [A-Z_]*, newLayout: [A-Z_]*, [^}]*image: 0x[0-9a-f]*, subresourceRange: {[^}]*}' \
		setup.txt | grep "image: $tex," |
		grep -o 'oldLayout: [A-Z_]*, newLayout: [A-Z_]*\|baseMipLevel: [0-9]*, levelCount: [0-9]*' \
		>changes.txt
	cat changes.txt
	[ "$(cat changes.txt)" = "oldLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, newLayout: VK_IMAGE_LAYOUT_GENERAL
baseMipLevel: 1, levelCount: 3
oldLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, newLayout: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
baseMipLevel: 4, levelCount: 3" ]
	cut_equal t.trace 12 full/frame-12.png
}

@test "an image destroyed before a kept submit, still named by its descriptor set's earlier update (zink, xscreensaver's gltext): the setup gives it no layout after its destroy" {
	# the set's records keep the destroyed texture and its view as
	# zombies; the submit that binds the set reached them through the
	# set and gave the texture a barrier after its vkDestroyImage
	trace-decode "$W/cube.trace" >cube.txt
	awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/layouts_edit.awk" cube.txt | awk -f "$TOP/tests/edit_lib.awk" -f "$TOP/tests/zombie_edit.awk" >z.txt
	trace-replay --screenshot 150 --screenshot-dir full z.txt
	trace-trim --frames 150 -o t.trace z.txt
	# the zombie is in the setup, destroyed before the submit binding the set
	trace-decode t.trace >t.txt
	grep -q 'fn: vkDestroyImage, args: {device: [0-9a-fx]*, image: 0x7e57000000000010,' t.txt
	grep -q 'fn: vkCmdBindDescriptorSets, .*pDescriptorSets: \[0x7e57000000000014\]' t.txt
	cut_equal t.trace 150 full/frame-150.png
}

@test "glmark2 through zink: a frame of each of four scenes, trimmed, replays validated and pixel-equal" {
	for f in 5 30 55 80 99; do
		trim_check "$W/gl.trace" "$W/gl-full" $f
	done
}

@test "glmark2 through zink: --calls from after frame 55's acquire, and from its present, replay validated and pixel-equal" {
	# zink makes the acquire's and the present's semaphores each frame,
	# and waits for the acquire's in a batch of its own.  Its threads'
	# calls are not read in the order of their numbers: the range is
	# cut after the highest number read up to the acquire, to the
	# highest of the frame
	trace-filter --frames 55 -f text "$W/gl.trace" | tail -n +2 >f55.txt
	after=$(awk -F'[ ,]' '{ n = $2 + 0; if (n > max) max = n } /fn: vkAcquireNextImageKHR,/ { print max + 1; exit }' f55.txt)
	last=$(awk -F'[ ,]' '{ n = $2 + 0; if (n > max) max = n } END { print max }' f55.txt)
	pre=$(call_of f55.txt vkQueuePresentKHR)
	[ -n "$after" ]
	[ "$after" -le "$pre" ]
	for a in "$after" "$pre"; do
		trace-trim --calls "$a-$last" -o "g$a.trace" "$W/gl.trace"
		cut_equal "g$a.trace" 55 "$W/gl-full/frame-55.png"
	done
}

@test "--calls on a capture of several threads: the range runs in the file's order from the first record numbered A or more, each record once" {
	# zink's threads: a call that began first may end, and be read,
	# after one that began later
	trace-decode "$W/gl.trace" >gl.txt
	a=$(awk -F'[ ,]' '/^\{call: / { n = $2 + 0; if (n < last) { print last; exit } last = n }' gl.txt)
	[ -n "$a" ]
	b=$((a + 30))
	trace-trim --calls "$a-$b" -f text -o t.txt "$W/gl.trace"
	# from the record numbered A (the first inversion follows it) to the
	# last before one numbered past B, as they are in the file
	awk -F'[ ,]' -v a="$a" -v b="$b" '/^\{call: / { n = $2 + 0; if (n == a) on = 1; if (on && n > b) exit; if (on) print }' gl.txt |
		sed 's/^{call: [0-9]*, //' >want.txt
	sed -n '/fn: tracekit.frame,/,$p' t.txt | tail -n +2 | sed 's/^{call: [0-9]*, //' >got.txt
	[ "$(wc -l <want.txt)" -gt 10 ]
	diff want.txt got.txt
}

@test "glmark2 through zink, the bench's twelve scenes and terrain in one run: a frame of each, trimmed, pixel-equal, no more updates than the capture" {
	# GFXReconstruct's capture-time trims of such a run replayed some
	# scenes black: each scene's frame 2 is cut out here and compared
	local scenes="build texture shading bump effect2d pulsar desktop buffer ideas jellyfish shadow
		conditionals terrain" args="" sc n=0 frames=""
	for sc in $scenes; do
		args="$args -b $sc:nframes=4"
		frames="$frames $((n * 4 + 2))"
		n=$((n + 1))
	done
	start_xvfb
	LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=all.trace \
		timeout 180 glmark2 -s 400x300 $args >glmark.out 2>&1 || grep -q BadDrawable glmark.out
	stop_xvfb
	unset DISPLAY
	[ "$(trace-decode all.trace | grep -c 'fn: vkQueuePresentKHR,')" -eq 52 ]
	local updates
	updates=$(trace-decode all.trace | grep -c 'fn: tracekit.update')
	trace-replay --screenshot "$(echo $frames | tr ' ' ,)" --screenshot-dir full all.trace
	for f in $frames; do
		if [ "$f" != 42 ]; then
			trim_check all.trace full "$f"
			# the setup writes what memory holds as merged ranges, never
			# a record per captured update: terrain's vertex buffers
			# change a word in three (a sparse update each)
			local cut
			cut=$(trace-decode "t$f.trace" | grep -c 'fn: tracekit.update')
			echo "frame $f: $cut updates, the whole trace $updates"
			[ "$cut" -le "$updates" ]
			continue
		fi
		# shadow: zink itself sets blend state for no attachment (the
		# validation layer says so of glmark2 run with no tracing at
		# all); the trim may report that, and nothing else
		trace-trim --frames 42 -o t42.trace all.trace
		run trace-replay --validate --screenshot 42 --screenshot-dir s42 t42.trace
		echo "$output"
		if echo "$output" | grep 'validation error: ' |
			grep -v -e 'attachmentCount must be greater than 0' -e 'VUID-vkCmdDrawMultiEXT-None-02859' \
			-e 'VUID-vkCmdDraw-None-02859' -e 'VUID-vkCmdDrawIndexed-None-02859'; then
			false
		fi
		# those errors (each kind shown 10 times at most, the rest
		# counted), and no other line, make the exit status 1
		local nerr
		nerr=$(echo "$output" | awk '/validation error: / { n++ }
			/validation: [0-9]+ more errors / { n += $3 } END { print n + 0 }')
		[ "$(echo "$output" | grep -vc -e 'validation error: ' -e 'Validation Performance Warning' \
			-e 'validation: [0-9]* more performance warnings' \
			-e 'validation: [0-9]* more errors .*, like the ones shown$' \
			-e ": t42.trace: $nerr validation errors\$")" = 0 ]
		if [ "$nerr" -gt 0 ]; then [ "$status" -eq 1 ]; else [ "$status" -eq 0 ]; fi
		[ "$(ae full/frame-42.png s42/frame-42.png)" = 0 ]
	done
}

# alias_case NAME ARGS...: vkcube's capture with its texture written
# through an aliasing buffer (tests/alias_edit.py ARGS); the edited trace
# and its frame-150 trim each replay validated and draw frame 150 as the
# unedited capture does, and the trim leaves the buffer out (the frame
# never names it): the texture holds its bytes.
alias_case() {
	local name=$1
	shift
	trace-decode "$W/cube.trace" >cube.txt
	python3 "$TOP/tests/alias_edit.py" cube.txt "$name.txt" "$@"
	trace-encode -o "$name.trace" "$name.txt"
	run trace-replay --validate --screenshot 150 --screenshot-dir "$name-whole" "$name.trace"
	echo "$name, whole: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(ae "$W/cube-full/frame-150.png" "$name-whole/frame-150.png")" = 0 ]
	trim_check "$name.trace" "$W/cube-full" 150
	if trace-decode t150.trace | grep -q 0x7e57000000000001; then false; fi
}

@test "a texture written as an update of a buffer bound over its memory (RenderDoc's, over each allocation): the trim that drops the buffer keeps the texels" {
	alias_case whole 0 262144 0 262144
}

@test "a buffer bound at another offset over part of the texture's memory: its update lands in the texture shifted, the texture's own sparse update keeps the rest; bound and written before the texture is bound too" {
	# memory bytes 64-192 KiB through a buffer bound at 64 KiB
	alias_case part 65536 131072 65536 196608
	# through a buffer over the whole memory, written before the image
	# is bound there: the image takes them when bound
	alias_case early 0 262144 65536 196608 early
}

@test "a buffer bound over part of the texture's memory before the texture is bound (the smaller object first, the larger one over it and before its offset): replay gives them one allocation spanning the memory, nothing placed apart" {
	# its update before the image's bind, or after it
	alias_case small 65536 131072 65536 196608 early
	alias_case before 65536 131072 65536 196608 before
}

# alias_apart NAME ARGS...: alias_edit.py ARGS with the texture's memory
# made 64 MiB (a block replay does not give whole): the image bound after
# the buffer is placed apart, with one warning saying that the updates
# are copied between them; the frame is the unedited capture's still,
# and --check and --loop take the trace.
alias_apart() {
	local name=$1 img
	shift
	trace-decode "$W/cube.trace" >cube.txt
	python3 "$TOP/tests/alias_edit.py" cube.txt "$name.txt" "$@" big
	trace-encode -o "$name.trace" "$name.txt"
	img=$(sed -n 's/.*fn: vkCreateImage,.*VK_IMAGE_TILING_LINEAR.*pImage: \[\(0x[0-9a-f]*\)\].*/\1/p' \
		"$name.txt")
	run trace-replay --validate --screenshot 150 --screenshot-dir "$name-whole" "$name.trace"
	echo "$name: $output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "trace-replay: $name.trace: call "*": warning: VkImage $img aliases VkBuffer 0x7e57000000000001 at capture, but does not fit its allocation on this device: placed apart, the trace's writes to either copied to the other (not what the device writes)" ]]
	echo "$name: $(ae "$W/cube-full/frame-150.png" "$name-whole/frame-150.png") pixels differ"
	[ "$(ae "$W/cube-full/frame-150.png" "$name-whole/frame-150.png")" = 0 ]
	trace-replay --check "$name.trace"
	run trace-replay --validate --loop 3 --frames 0-2 "$name.trace"
	[ "$status" -eq 0 ]
	[ "$(grep -vc 'placed apart' <<<"$output")" = 0 ]
}

@test "the smaller buffer first over a 64 MiB memory, not given whole: the texture placed apart takes the buffer's bytes at its bind, or the buffer's later update, and draws the unedited frame" {
	# written before the image is bound: the bytes taken at its bind
	alias_apart smallbig 65536 131072 65536 196608 early
	# written after: the update copied to the image
	alias_apart beforebig 65536 131072 65536 196608 before
}

@test "a one-frame trim holds one frame and the setup, not the other frames" {
	trace-trim --frames 55 -o t.trace "$W/gl.trace"
	[ "$(trace-decode t.trace | grep -c 'fn: vkQueuePresentKHR')" = 1 ]
	full=$(stat -c %s "$W/gl.trace")
	cut=$(stat -c %s t.trace)
	echo "glmark2 frame 55: $cut of $full bytes"
	# the setup carries the scene's state, most of it the two vertex
	# buffers: on 100 frames, under a third
	[ $((cut * 3)) -lt "$full" ]
	# vkcube: the frame clears what it draws into, so the setup runs no
	# earlier frame's submit
	trace-trim --frames 150 --verbose -o c.trace "$W/cube.trace" 2>err
	cat err
	grep -q ' 0 submits' err
	[ "$(trace-decode c.trace | grep -c 'fn: vkQueuePresentKHR')" = 1 ]
}

@test "a pulsar frame's trim is smaller than GFXReconstruct's capture-time trim of it: no earlier frame, no device queries" {
	trace-trim --frames 80 --verbose -o p.trace "$W/gl.trace" 2>err
	cat err
	size=$(stat -c %s p.trace)
	echo "# glmark2-zink pulsar frame 80, one-frame trim: $size bytes (GFXReconstruct's capture-time trim of that frame measured 65 789)" >&3
	[ "$size" -lt 64000 ]
	# the frame clears its render targets: zink's command buffers of the
	# frames before, and the submit that drew the last, are not in it
	grep -q ' 0 submits' err
	trace-decode p.trace | sed '/fn: tracekit.setup.end/q' >setup.txt
	if grep -q 'fn: vkCmdDraw' setup.txt; then false; fi
	if grep -q 'fn: vkGetPhysicalDeviceFormatProperties' setup.txt; then false; fi
	grep -q 'fn: vkGetPhysicalDeviceMemoryProperties' setup.txt
}

@test "of zink's 1 MB upload buffer the setup writes only the bytes the frame's descriptors read" {
	trace-trim --frames 55 --verbose -o s.trace "$W/gl.trace" 2>err
	cat err
	bytes=$(sed -n 's/.* updates of \([0-9]*\) bytes.*/\1/p' err)
	echo "# glmark2-zink shading frame 55: the setup's updates hold $bytes bytes (before: 2 079 082)" >&3
	# two vertex buffers of 516 528 bytes, read whole; of the upload
	# buffer a few uniform blocks, not its megabyte
	[ "$bytes" -lt 1100000 ]
	[ "$bytes" -ge 1033056 ]
}

@test "the setup leaves out the bytes the range writes before it submits" {
	trace-trim --frames 150 -f text -o c.txt "$W/cube.trace"
	# the range's first update (vkcube's matrices) comes before its submit
	u=$(sed -n '/fn: tracekit.frame/,$p' c.txt | grep -m1 'fn: tracekit.update')
	[[ $u == *"offset: 0,"* ]]
	obj=$(echo "$u" | grep -o 'object: 0x[0-9a-f]*')
	sed -n '1,/fn: tracekit.setup.end/p' c.txt |
		grep -E "fn: tracekit.update(.sparse)?, args: \{$obj," >setup.txt
	# the rest of the buffer (the cube's vertices, a sparse update: their
	# zeros left out) is there, the bytes the range's update writes are
	# not: every setup update of the buffer starts at or past its end
	{ echo "$u"; cat setup.txt; } | python3 -c '
import base64, re, sys
spans = [(int(re.search(r"offset: (\d+)", l).group(1)),
          len(base64.b64decode(re.search(r"data: !!binary \"([^\"]*)\"", l).group(1))))
         for l in sys.stdin]
(first, n), setup = spans[0], spans[1:]
print("range update: bytes %d-%d; setup: %s" % (first, first + n, setup))
sys.exit(0 if sum(k for _, k in setup) >= 500 and all(off >= first + n for off, _ in setup) else 1)'
}

@test "the setup is bracketed, the range keeps its frame number and the header its original numbers" {
	trace-trim --frames 150-151 -o t.trace "$W/cube.trace"
	trace-decode t.trace >t.txt
	[ "$(grep -c 'fn: tracekit.setup.begin' t.txt)" = 1 ]
	[ "$(grep -c 'fn: tracekit.setup.end' t.txt)" = 1 ]
	grep -q 'fn: tracekit.frame, args: {index: 150}' t.txt
	head -1 t.txt | grep -q 'tracekit.trim.frames: "150-151"'
	# the calls the range had in the capture
	first=$(trace-filter --frames 150 -f text "$W/cube.trace" | sed -n '2s/^{call: \([0-9]*\),.*/\1/p')
	last=$(trace-filter --frames 151 -f text "$W/cube.trace" | tail -1 | sed 's/^{call: \([0-9]*\),.*/\1/')
	head -1 t.txt | grep -q "tracekit.trim.calls: \"$first-$last\""
	# frames keep their numbers for the other tools
	[ "$(trace-filter --frames 150 --count t.trace | grep -c vkQueuePresentKHR)" = 1 ]
	[ "$(trace-filter --frames 151 -f text t.trace | grep -c vkQueuePresentKHR)" = 1 ]
}

@test "trimming a trimmed trace: frames 100-200, then 150, keeps frame 150 and the original numbers" {
	trace-trim --frames 100-200 -o a.trace "$W/cube.trace"
	trace-trim --frames 150 -o b.trace a.trace
	trace-trim --frames 150 -o c.trace "$W/cube.trace"
	[ "$(trace-decode b.trace | head -1 | grep -o 'tracekit.trim.calls: "[0-9-]*"')" = \
		"$(trace-decode c.trace | head -1 | grep -o 'tracekit.trim.calls: "[0-9-]*"')" ]
	run trace-replay --validate --screenshot 150 -o b.png b.trace
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(ae "$W/cube-full/frame-150.png" b.png)" = 0 ]
}

@test "text in, text out; a pipe gives the same trim as the file" {
	trace-trim --frames 20 -o bin.trace "$W/cube.trace"
	trace-decode "$W/cube.trace" >cube.txt
	trace-trim --frames 20 -o t.txt cube.txt
	[ "$(head -c 1 t.txt)" = "{" ]
	trace-decode bin.trace | cmp - t.txt
	trace-trim --frames 20 <"$W/cube.trace" >pipe.trace
	cmp bin.trace pipe.trace
	trace-trim --frames 20 -f text "$W/cube.trace" | cmp - t.txt
}

@test "a VMA stream: the allocations alive when the range begins, and none that died before" {
	vma-import "$DATA/vma/vma-docs-example-v1.8.csv" >v.trace
	# the range begins at the second vmaDestroyBuffer (call 15)
	trace-trim --calls 15-40 v.trace | vma-export >cut.csv
	body=$(sed -n '/^Config,End/,$p' cut.csv | tail -n +2 | cut -d, -f4- )
	echo "$body"
	# alive: image 1620, buffers 19E0, 1A80 and 16C0; gone: image 1A80 and
	# buffer 1DA0, made and destroyed before
	[ "$(echo "$body" | head -5)" = "vmaCreateAllocator
vmaCreateImage,0,1,37,128,128,1,1,1,1,0,6,0,0,0,1,0,0,0,0000000000000000,000001D85B8B1620,
vmaCreateBuffer,0,768,1,0,4,2,0,0,0,0000000000000000,000001D85B8B19E0,
vmaCreateBuffer,0,768,130,0,0,1,0,0,0,0000000000000000,000001D85B8B1A80,
vmaCreateBuffer,0,60,66,0,0,1,0,0,0,0000000000000000,000001D85B8B16C0," ]
	if echo "$body" | grep -q 1DA0; then false; fi
	# and it replays
	trace-trim --calls 15-40 v.trace | trace-replay
}

@test "a VMA trim keeps the time of each record of its setup" {
	vma-import "$DATA/vma/vma-docs-example-v1.8.csv" >v.trace
	trace-trim --calls 15-40 v.trace | vma-export >cut.csv
	# as in the recording, not the time the range begins at
	grep -qx '12552,0.015,0,vmaCreateImage,0,1,37,128,128,1,1,1,1,0,6,0,0,0,1,0,0,0,0000000000000000,000001D85B8B1620,' cut.csv
	grep -qx '12552,0.017,0,vmaCreateBuffer,0,60,66,0,0,1,0,0,0,0000000000000000,000001D85B8B16C0,' cut.csv
	grep -q '^12552,0.000,0,vmaCreateAllocator$' cut.csv
}

@test "a late frame of a VMA stream trims in memory that does not grow with the stream, and replays" {
	sh "$TOP/tests/gen-vma-recording.sh" 50000 | vma-import >short.trace
	sh "$TOP/tests/gen-vma-recording.sh" 500000 | vma-import >long.trace
	/usr/bin/time -f %M -o short.rss trace-trim --frames 40 -o s.trace short.trace
	/usr/bin/time -f %M -o long.rss trace-trim --frames 490 -o l.trace long.trace
	echo "max RSS: $(cat short.rss) KB, 10x longer: $(cat long.rss) KB"
	[ "$(cat long.rss)" -lt $(($(cat short.rss) * 2)) ]
	trace-replay l.trace
	[ "$(trace-decode l.trace | grep -c 'fn: tracekit.frame, args: {index: 490}')" = 1 ]
}

@test "bad usage exits 2; a frame the trace does not reach, or a GL trace, exits 1 with one message" {
	usage_cases trace-trim "$W/cube.trace" <<'EOF'
--quiet|which part? --frames A[-B] or --calls A-B
--frames 5-2|--frames 5-2: the range ends before it begins
--frames x|--frames takes A, A-B or A- (numbers), not 'x'
--frames 1 --calls 1-2|one range: --frames or --calls, once
EOF
	run trace-trim --frames 400 -o out.trace "$W/cube.trace"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "trace-trim: $W/cube.trace: no frame 400 in the trace: it ends at frame 300" ]
	[ ! -e out.trace ]
	run trace-trim --frames 1 -o out.trace "$DATA/glxgears.trace"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"not a Vulkan capture or a VMA stream"* ]]
	[ ! -e out.trace ]
}

@test "a truncated or corrupted capture: one message with the file, the call and the offset; no output" {
	size=$(stat -c %s "$W/cube.trace")
	head -c $((size / 2)) "$W/cube.trace" >cut.trace
	run "$ASAN_BIN/trace-trim" --frames 290 -o out.trace cut.trace
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(echo "$output" | wc -l)" = 1 ]
	[[ $output == "trace-trim: cut.trace: "* ]]
	[ ! -e out.trace ]
	# flipped bytes anywhere in the file (seeded, so a failure repeats):
	# exit 0, or 1 with one line; never a crash, never an output left half
	RANDOM=7
	local i at
	for i in $(seq 20); do
		cp "$W/cube.trace" bad.trace
		at=$(((RANDOM << 15 | RANDOM) % size))
		printf '\377' | dd of=bad.trace bs=1 seek="$at" conv=notrunc 2>/dev/null
		run "$ASAN_BIN/trace-trim" --frames 150 -o out.trace bad.trace
		echo "flip $i at byte $at: $status: $output"
		[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
		[ "$status" -eq 0 ] || { [ "${#lines[@]}" -eq 1 ] && [ ! -e out.trace ]; }
		rm -f out.trace
	done
}

@test "the sanitizer build trims vkcube and glmark2 without an error or a leak" {
	"$ASAN_BIN/trace-trim" --frames 150 -o c.trace "$W/cube.trace"
	"$ASAN_BIN/trace-trim" --frames 55 -o g.trace "$W/gl.trace"
	"$ASAN_BIN/trace-trim" --frames 100-200 "$W/cube.trace" | "$ASAN_BIN/trace-trim" --frames 150 >cc.trace
	# aliased memory: an update spread to a texture at another offset
	trace-decode "$W/cube.trace" >cube.txt
	python3 "$TOP/tests/alias_edit.py" cube.txt part.txt 65536 131072 65536 196608
	"$ASAN_BIN/trace-trim" --frames 150 -o a.trace part.txt
	trace-decode a.trace >/dev/null
	trace-decode c.trace >/dev/null
	trace-decode g.trace >/dev/null
	trace-decode cc.trace >/dev/null
}
