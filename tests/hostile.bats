#!/usr/bin/env bats
# Hostile traces: one-line edits of a vkcube capture, as sed makes them,
# that a reader passes (the stream is well formed) but that would have the
# replayer or the trimmer hand the driver, or read, past what the record
# holds.  Each is refused before use: exit 1, one message naming the file,
# the call, the function and the field, nothing written.  The sanitizer
# build runs them, so an overflow is a failure, not a matter of luck.

load helpers

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	sanitizer_prep
	start_xvfb
	layer_capture "$W/cube.trace" vkcube --c 40
	stop_xvfb
	trace-decode "$W/cube.trace" >"$W/cube.txt"
	trace-encode -z none -o "$W/cube.raw" "$W/cube.txt"
	# the example program (headless): push constants, indexed draws
	layer_capture "$W/ex.trace" "$TOP/build/examples/vkexample" --frames 3
	trace-decode "$W/ex.trace" >"$W/ex.txt"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset DISPLAY WAYLAND_DISPLAY
}

# mutate PATTERN SED: the capture with the sed command SED run on the
# first record that matches PATTERN, as bad.txt (edit_record)
mutate() {
	edit_record "$W/cube.txt" "$1" "@LINE@$2" bad.txt
}

# handle_of PATTERN FIELD: the handle in FIELD (or the one in its array
# of one) of the capture's first record matching PATTERN
handle_of() {
	grep -m1 -- "$1" "$W/cube.txt" | sed "s/.*$2: \[\{0,1\}\(0x[0-9a-f]*\).*/\1/"
}

# cb_of PATTERN: the command buffer of the capture's first record matching PATTERN
cb_of() {
	handle_of "$1" commandBuffer
}

# fails PROGRAM ARGS...: the sanitizer build of PROGRAM exits 1 with one
# line, in $output for the caller to check
fails() {
	local prog=$1
	shift
	run sanitized "$ASAN_BIN/$prog" "$@"
	echo "$prog: $status: $output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
}

# checked LINE: the sanitizer build of trace-replay --check, without a
# Vulkan driver, exits 1 with LINE alone: the line replay stops with
checked() {
	VK_DRIVER_FILES=/nonexistent VK_ICD_FILENAMES=/nonexistent \
		fails trace-replay --check bad.txt
	[ "$output" == "$1" ]
}

# refused MESSAGE: the sanitizer builds of trace-replay (and --check) and
# trace-trim (to the capture's last frame) all exit 1 with one line
# naming call $CALL and ending in MESSAGE, and leave no output
refused() {
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL ("*"): malformed record: $1" ]]
	checked "$output"
	fails trace-trim --frames 39 -o out.trace bad.txt
	[[ "$output" == "trace-trim: bad.txt: call $CALL, byte "*": $1" ]]
	[ ! -e out.trace ]
}

@test "the capture itself replays and trims" {
	[ "$(grep -c 'fn: vkQueuePresentKHR,' "$W/cube.txt")" -eq 40 ]
	trace-replay "$W/cube.txt"
	trace-trim --frames 39 -o out.trace "$W/cube.txt"
}

@test "--check takes the capture without a device; replay, without a driver, does not" {
	export VK_DRIVER_FILES=/nonexistent VK_ICD_FILENAMES=/nonexistent
	run sanitized "$ASAN_BIN/trace-replay" --check "$W/cube.txt"
	echo "check: $status: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run sanitized "$ASAN_BIN/trace-replay" --check "$W/cube.raw"
	[ "$status" -eq 0 ]
	# the driver really is gone: a replay cannot make its instance
	run sanitized "$ASAN_BIN/trace-replay" -q "$W/cube.txt"
	echo "replay: $status: $output"
	[ "$status" -eq 1 ]
}

@test "--check goes without the options of a replay" {
	run trace-replay --check --screenshot 3 -o x.png "$W/cube.txt"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "trace-replay: --check goes without --frames, --screenshot, --loop, --dump* and --stats: it replays nothing" ]]
	run trace-replay --check --stats "$W/cube.txt"
	[ "$status" -eq 2 ]
}

@test "a count past its array (vkResetFences fenceCount 4294967295, one fence) is refused" {
	mutate 'fn: vkResetFences,' 's/fenceCount: 1,/fenceCount: 4294967295,/'
	refused "vkResetFences.pFences holds 1, but fenceCount says 4294967295"
}

@test "a count past its array of structs (vkQueueSubmit submitCount 2, one submit) is refused" {
	mutate 'fn: vkQueueSubmit,' 's/submitCount: 1,/submitCount: 2,/'
	refused "vkQueueSubmit.pSubmits holds 1, but submitCount says 2"
}

@test "a create info the call needs, edited to null (vkCreateDescriptorPool's pCreateInfo), is refused" {
	mutate 'fn: vkCreateDescriptorPool,' 's/pCreateInfo: \[.*\], pAllocator/pCreateInfo: null, pAllocator/'
	grep -q 'fn: vkCreateDescriptorPool, args: {device: 0x[0-9a-f]*, pCreateInfo: null,' bad.txt
	refused "vkCreateDescriptorPool.pCreateInfo is null, but the call reads it"
}

@test "a submit edited to no command buffers (commandBufferCount 1 -> 0, its array kept) replays its empty batch, held and merged, with no sanitizer report" {
	# (held, it copied no command buffers from a null array: UBSan's
	# report, the battery, seed 802697063)
	# (a frame's submit: the first is made, not held, while replay looks
	# its function up)
	local at
	at=$(grep -n 'fn: vkQueueSubmit,.*commandBufferCount: 1,' "$W/cube.txt" | sed -n 5p | cut -d: -f1)
	sed "${at}s/commandBufferCount: 1,/commandBufferCount: 0,/" "$W/cube.txt" >bad.txt
	run sanitized "$ASAN_BIN/trace-replay" --wait-timeout 5 bad.txt
	echo "$output"
	[ "$status" -eq 0 ]
	! grep -qi 'sanitizer\|runtime error' <<<"$output"
}

@test "a count past its array inside a struct (a present's 65536 wait semaphores) is refused" {
	mutate 'fn: vkQueuePresentKHR,' 's/waitSemaphoreCount: 1,/waitSemaphoreCount: 65536,/'
	refused "VkPresentInfoKHR.pWaitSemaphores holds 1, but waitSemaphoreCount says 65536"
}

@test "a count past its array of bytes (a shader's codeSize) is refused" {
	mutate 'fn: vkCreateShaderModule,' 's/codeSize: \([0-9]*\),/codeSize: 1\1,/'
	local n
	n=$(grep -m1 -o 'fn: vkCreateShaderModule,.*codeSize: [0-9]*' "$W/cube.txt" | sed 's/.*: //')
	refused "VkShaderModuleCreateInfo.pCode holds $((n / 4)), but codeSize says $((1$n / 4))"
}

@test "an integer past its field's type (a draw's vertexCount of 2^64 - 1 in a uint32_t) is refused" {
	mutate 'fn: vkCmdDraw,' 's/vertexCount: [0-9]*,/vertexCount: 18446744073709551615,/'
	refused "vkCmdDraw.vertexCount: 18446744073709551615 does not fit its uint32_t"
}

# stopped MESSAGE: the sanitizer build of trace-replay exits 1 with one
# line naming call $CALL, its function, and MESSAGE; --check with the same
stopped() {
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL ($FN): $1" ]]
	checked "$output"
}

@test "a handle no record made (vkCreateFramebuffer removed) stops the replay at its first use" {
	mutate 'fn: vkCreateFramebuffer,' d
	local fb
	fb=$(handle_of 'fn: vkCreateFramebuffer,' pFramebuffer)
	stops_at "fn: vkCmdBeginRenderPass,.*framebuffer: $fb," "framebuffer: VkFramebuffer $fb: no earlier record made it, or it is destroyed"
}

@test "a wait the replay skips running ahead, or a destroy it puts off, still has its handles checked: a device edited away stops it there, as --check" {
	mutate 'fn: vkDeviceWaitIdle,' 's/device: 0x[0-9a-f]*/device: 0x999/'
	FN=vkDeviceWaitIdle
	CALL=$(grep -m1 'fn: vkDeviceWaitIdle,' bad.txt | sed 's/^{call: \([0-9]*\),.*/\1/')
	stopped "device: VkDevice 0x999: no earlier record made it, or it is destroyed"
	mutate 'fn: vkDestroySemaphore,' 's/device: 0x[0-9a-f]*/device: 0x0/'
	FN=vkDestroySemaphore
	CALL=$(grep -m1 'fn: vkDestroySemaphore,' bad.txt | sed 's/^{call: \([0-9]*\),.*/\1/')
	stopped "device: a null VkDevice where the call needs one"
}

@test "a handle edited to one no record made (a pipeline) stops the replay there, never a call skipped" {
	mutate 'fn: vkCmdBindPipeline,' 's/pipeline: 0x[0-9a-f]*/pipeline: 0x999/'
	FN=vkCmdBindPipeline
	stopped "pipeline: VkPipeline 0x999: no earlier record made it, or it is destroyed"
}

@test "a buffer whose bind was removed stops the replay at the first call that reads it" {
	mutate 'fn: vkBindBufferMemory,' d
	local buf
	buf=$(handle_of 'fn: vkBindBufferMemory,' buffer)
	stops_at "fn: \(vkUpdateDescriptorSets\|vkCmd[A-Za-z]*\),.*$buf" "buffer: VkBuffer $buf has no memory: no earlier record bound it"
}

@test "a submit that signals a fence signalled already (its vkResetFences removed) stops the replay there, not in the driver (llvmpipe's queue thread read freed memory)" {
	local fence
	fence=$(handle_of 'fn: vkResetFences,' pFences)
	mutate 'fn: vkResetFences,' d
	stops_at "fn: vkQueueSubmit,.*fence: $fence}" "VkFence $fence: given to be signalled, but it is signalled already: no replayed call resets it since its last signal (a vkResetFences cut out or edited?)"
}

@test "a wait on a fence no replayed call signals (its submit removed) stops the replay at once" {
	mutate 'fn: vkQueueSubmit,.*waitSemaphoreCount: 0,' d
	local fence
	fence=$(handle_of 'fn: vkQueueSubmit,.*waitSemaphoreCount: 0,' fence)
	SECONDS=0
	stops_at "fn: vkWaitForFences,.*pFences: \[$fence\]" "VkFence $fence: waited for, but no replayed call signals it since it was made or reset (a submit cut out or edited?)"
	# not after --wait-timeout's 10 s
	[ "$SECONDS" -lt 8 ]
}

@test "a present's wait on a semaphore no replayed call signals (the frame's submit removed) stops the replay" {
	mutate 'fn: vkQueueSubmit,.*waitSemaphoreCount: 1,' d
	local sem
	sem=$(handle_of 'fn: vkQueueSubmit,.*waitSemaphoreCount: 1,' pSignalSemaphores)
	stops_at "fn: vkQueuePresentKHR,.*pWaitSemaphores: \[$sem\]" "VkSemaphore $sem: waited on, but no replayed call signals it first (a submit cut out or edited?)"
}


# call_of FILE PATTERN: the call number of FILE's first record matching PATTERN
call_of() {
	grep -m1 -- "$2" "$1" | sed 's/^{call: \([0-9]*\),.*/\1/'
}

# stops_at PATTERN MESSAGE: stopped, at the call and function of
# bad.txt's first record matching PATTERN
stops_at() {
	local line
	line=$(grep -m1 -- "$1" bad.txt)
	CALL=$(sed 's/^{call: \([0-9]*\),.*/\1/' <<<"$line")
	FN=$(sed 's/.*fn: \([A-Za-z0-9]*\),.*/\1/' <<<"$line")
	stopped "$2"
}

# removed CALL FN MESSAGE: with the capture's first CALL removed, the
# replay stops at the next FN into the same command buffer (stopped)
removed() {
	local cb
	cb=$(cb_of "fn: $1,")
	mutate "fn: $1," d
	stops_at "fn: $2, args: {commandBuffer: $cb[,}]" "$3"
}

@test "a draw whose vkCmdBeginRenderPass was removed stops the replay at the draw" {
	local cb
	cb=$(cb_of 'fn: vkCmdBeginRenderPass,')
	removed vkCmdBeginRenderPass vkCmdDraw "commandBuffer: VkCommandBuffer $cb: vkCmdDraw is recorded inside a render pass only, and none is begun (its vkCmdBeginRenderPass cut out?)"
}

@test "a recording whose vkCmdEndRenderPass was removed stops the replay at its vkEndCommandBuffer" {
	local cb
	cb=$(cb_of 'fn: vkCmdEndRenderPass,')
	removed vkCmdEndRenderPass vkEndCommandBuffer "commandBuffer: VkCommandBuffer $cb: ended inside a render pass (its vkCmdEndRenderPass cut out?)"
}

@test "a render pass begun inside another (an end removed, two recordings in one) stops the replay" {
	# the first recording's end and the second's begin removed: the
	# second's commands go into the first, still in its render pass
	local cb
	cb=$(cb_of 'fn: vkCmdEndRenderPass,')
	edit_record "$W/cube.txt" 'fn: vkCmdEndRenderPass,' \
		"@LINE@,/fn: vkBeginCommandBuffer,/{/fn: vkCmdEndRenderPass,/d;/fn: vkEndCommandBuffer,/d;/fn: vkBeginCommandBuffer,/d}" bad.txt
	sed -i "$L,\${/fn: vkCmd[A-Za-z]*, args: {commandBuffer: 0x/{s/commandBuffer: 0x[0-9a-f]*/commandBuffer: $cb/}}" bad.txt
	CALL=$(grep "fn: vkCmdBeginRenderPass," bad.txt | sed -n '2s/^{call: \([0-9]*\),.*/\1/p')
	FN=vkCmdBeginRenderPass
	stopped "commandBuffer: VkCommandBuffer $cb: vkCmdBeginRenderPass is recorded outside a render pass only, and one is begun (its vkCmdEndRenderPass cut out?)"
}

@test "a command into a command buffer whose vkBeginCommandBuffer was removed stops the replay" {
	mutate 'fn: vkBeginCommandBuffer,' d
	local cb
	cb=$(cb_of 'fn: vkBeginCommandBuffer,')
	stops_at "fn: vkCmd[A-Za-z0-9]*, args: {commandBuffer: $cb," "commandBuffer: VkCommandBuffer $cb is not recording (its vkBeginCommandBuffer cut out?)"
}

@test "an image whose capture requirements pass the replay device's heap stops the replay at its bind" {
	mutate 'fn: vkGetImageMemoryRequirements,' 's/size: [0-9]*,/size: 18446744073709551615,/'
	local img
	img=$(handle_of 'fn: vkGetImageMemoryRequirements,' image)
	CALL=$(call_of bad.txt "fn: vkBindImageMemory,.*image: $img,")
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL (vkBindImageMemory): image: VkImage $img needs 18446744073709551615 bytes (its requirements at capture), more than heap "*" holds ("*")" ]]
}

@test "a view of a mip level its image does not have stops the replay at the view" {
	mutate 'fn: vkCreateImageView,.*VK_FORMAT_D16_UNORM' 's/baseMipLevel: 0,/baseMipLevel: 4294967295,/'
	local img
	img=$(handle_of 'fn: vkCreateImageView,.*VK_FORMAT_D16_UNORM' image)
	FN=vkCreateImageView
	stopped "subresourceRange: baseMipLevel 4294967295, levelCount 1, but VkImage $img has 1 mip levels"
}

@test "a barrier on array layers its image does not have stops the replay at the barrier" {
	mutate 'fn: vkCmdPipelineBarrier,.*pImageMemoryBarriers: \[{' 's/baseArrayLayer: 0, layerCount: 1}/baseArrayLayer: 0, layerCount: 2}/'
	local img
	img=$(handle_of 'fn: vkCmdPipelineBarrier,.*pImageMemoryBarriers: \[{' image)
	FN=vkCmdPipelineBarrier
	stopped "subresourceRange: baseArrayLayer 0, layerCount 2, but VkImage $img has 1 array layers"
}

@test "a copy into mip levels or array layers its image does not have stops the replay at the copy (the image beside the region, not in it; the same copy whole twice over replays)" {
	local img
	img=$(grep -m1 'fn: vkCmdCopyBufferToImage,' "$W/ex.txt" | sed 's/.*dstImage: \(0x[0-9a-f]*\).*/\1/')
	FN=vkCmdCopyBufferToImage
	edit_record "$W/ex.txt" 'fn: vkCmdCopyBufferToImage,' '@LINE@s/mipLevel: 0,/mipLevel: 3,/' bad.txt
	stopped "imageSubresource: mipLevel 3, but VkImage $img has 1 mip levels"
	edit_record "$W/ex.txt" 'fn: vkCmdCopyBufferToImage,' '@LINE@s/layerCount: 1}/layerCount: 2}/' bad.txt
	stopped "imageSubresource: baseArrayLayer 0, layerCount 2, but VkImage $img has 1 array layers"
	# the region twice in one copy replays; its second with a level the
	# image lacks stops it (where the first's image was found is kept)
	edit_record "$W/ex.txt" 'fn: vkCmdCopyBufferToImage,' '@LINE@s/regionCount: 1, pRegions: \[\(.*\)\]}}$/regionCount: 2, pRegions: [\1, \1]}}/' two.txt
	run trace-replay two.txt
	echo "$output"
	[ "$status" -eq 0 ]
	sed "$L"'s/\(.*\)mipLevel: 0,/\1mipLevel: 5,/' two.txt >bad.txt
	stopped "imageSubresource: mipLevel 5, but VkImage $img has 1 mip levels"
}

@test "a draw whose vkCmdBindPipeline was removed stops the replay at the draw" {
	local cb
	cb=$(cb_of 'fn: vkCmdBindPipeline,')
	removed vkCmdBindPipeline vkCmdDraw "commandBuffer: VkCommandBuffer $cb: vkCmdDraw with no graphics pipeline bound since vkBeginCommandBuffer (its vkCmdBindPipeline cut out or moved?)"
}

@test "a null handle in a struct member the registry does not call optional (a render pass's framebuffer) stops the replay" {
	mutate 'fn: vkCmdBeginRenderPass,' 's/framebuffer: 0x[0-9a-f]*,/framebuffer: 0x0,/'
	FN=vkCmdBeginRenderPass
	stopped "framebuffer: a null VkFramebuffer where the call needs one"
}

@test "a descriptor set bound past its pipeline layout's set layouts stops the replay at the bind" {
	mutate 'fn: vkCmdBindDescriptorSets,' 's/firstSet: 0,/firstSet: 4294967295,/'
	local layout
	layout=$(handle_of 'fn: vkCmdBindDescriptorSets,' layout)
	FN=vkCmdBindDescriptorSets
	stopped "firstSet: 4294967295, descriptorSetCount 1, but VkPipelineLayout $layout has 1 set layouts"
}

# vkcube's fragment shader samples set 0 binding 1
@test "a set layout binding made invisible to the stage that uses it stops the replay at the pipeline, not in the driver" {
	mutate 'fn: vkCreateDescriptorSetLayout,' 's/stageFlags: VK_SHADER_STAGE_FRAGMENT_BIT/stageFlags: VK_SHADER_STAGE_GEOMETRY_BIT/'
	CALL=$(grep -m1 'fn: vkCreateGraphicsPipelines,' bad.txt | sed 's/{call: \([0-9]*\),.*/\1/')
	FN=vkCreateGraphicsPipelines
	stopped "pCreateInfos[0].pStages[1]: the VK_SHADER_STAGE_FRAGMENT_BIT shader 'main' uses set 0 binding 1, which VkPipelineLayout $(handle_of 'fn: vkCreatePipelineLayout,' pPipelineLayout) makes visible to VK_SHADER_STAGE_GEOMETRY_BIT only"
	# the threads that make pipelines ahead leave it to the replay
	local line=$output
	fails trace-replay --pipeline-jobs 2 bad.txt
	[ "$output" == "$line" ]
}

@test "a set layout binding of another descriptor type than the shader's variable stops the replay at the pipeline" {
	mutate 'fn: vkCreateDescriptorSetLayout,' 's/binding: 1, descriptorType: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER/binding: 1, descriptorType: VK_DESCRIPTOR_TYPE_STORAGE_BUFFER/'
	CALL=$(grep -m1 'fn: vkCreateGraphicsPipelines,' bad.txt | sed 's/{call: \([0-9]*\),.*/\1/')
	FN=vkCreateGraphicsPipelines
	stopped "pCreateInfos[0].pStages[1]: the VK_SHADER_STAGE_FRAGMENT_BIT shader 'main' uses set 0 binding 1, which VkPipelineLayout $(handle_of 'fn: vkCreatePipelineLayout,' pPipelineLayout) declares a VK_DESCRIPTOR_TYPE_STORAGE_BUFFER: a type the shader's variable does not take"
}

@test "a stage's entry point name the module does not have stops the replay at the pipeline" {
	mutate 'fn: vkCreateGraphicsPipelines,' 's/pName: "main"/pName: "mian"/'
	FN=vkCreateGraphicsPipelines
	stopped "pCreateInfos[0].pStages[0].pName: 'mian', which VkShaderModule $(grep -m1 'fn: vkCreateGraphicsPipelines,' bad.txt | sed 's/.*pStages: \[{[^}]*module: \(0x[0-9a-f]*\),.*/\1/') has no VK_SHADER_STAGE_VERTEX_BIT entry point of"
}

@test "a null image view or set in a descriptor write stops the replay at the update, not in the driver" {
	mutate 'fn: vkUpdateDescriptorSets,' 's/imageView: 0x[0-9a-f]*/imageView: 0x0/'
	FN=vkUpdateDescriptorSets
	stopped "pDescriptorWrites[1].pImageInfo[0].imageView: null, which a VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER write needs (no device enabled nullDescriptor)"
	mutate 'fn: vkUpdateDescriptorSets,' 's/dstSet: 0x[0-9a-f]*/dstSet: 0x0/'
	stopped "pDescriptorWrites[0].dstSet: a null VkDescriptorSet (only a pushed write goes without one)"
}

@test "a null attachment of a framebuffer, or set layout of a pipeline layout, stops the replay at its create" {
	mutate 'fn: vkCreateFramebuffer,' 's/pAttachments: \[0x[0-9a-f]*/pAttachments: [0x0/'
	FN=vkCreateFramebuffer
	stopped "pCreateInfo.pAttachments[0]: a null VkImageView in a framebuffer not imageless"
	mutate 'fn: vkCreatePipelineLayout,' 's/pSetLayouts: \[0x[0-9a-f]*/pSetLayouts: [0x0/'
	FN=vkCreatePipelineLayout
	stopped "pCreateInfo.pSetLayouts[0]: a null VkDescriptorSetLayout in a layout not of independent sets"
	mutate 'fn: vkAllocateDescriptorSets,' 's/pSetLayouts: \[0x[0-9a-f]*/pSetLayouts: [0x0/'
	FN=vkAllocateDescriptorSets
	stopped "pSetLayouts: a null VkDescriptorSetLayout where the call needs one"
}

@test "a framebuffer of fewer attachments than its render pass stops the replay at its create" {
	mutate 'fn: vkCreateFramebuffer,' 's/attachmentCount: 2,/attachmentCount: 0,/'
	FN=vkCreateFramebuffer
	stopped "pCreateInfo.attachmentCount: 0, but VkRenderPass $(handle_of 'fn: vkCreateFramebuffer,' renderPass) has 2 attachments"
}

@test "a framebuffer's attachments swapped (the depth view where the color one belongs) stops the replay at its create" {
	mutate 'fn: vkCreateFramebuffer,' 's/pAttachments: \[\(0x[0-9a-f]*\), \(0x[0-9a-f]*\)\]/pAttachments: [\2, \1]/'
	FN=vkCreateFramebuffer
	stopped "pCreateInfo.pAttachments[0]: VkImageView $(grep -m1 'fn: vkCreateFramebuffer,' bad.txt | sed 's/.*pAttachments: \[\(0x[0-9a-f]*\),.*/\1/') is of VK_FORMAT_D16_UNORM, but attachment 0 of VkRenderPass $(handle_of 'fn: vkCreateFramebuffer,' renderPass) is of $(grep -m1 'fn: vkCreateRenderPass,' "$W/cube.txt" | sed 's/.*pAttachments: \[{flags: 0, format: \(VK_FORMAT_[A-Z0-9_]*\),.*/\1/')"
}

@test "a record that does not read mid-frame (a thread number too large) exits 1 with its line once the device is idle" {
	# the record after the first frame's present: llvmpipe's queue
	# thread freed memory twice when replay exited with work in flight
	local at
	at=$(grep -n 'fn: vkQueuePresentKHR,' "$W/cube.txt" | sed -n 2p | cut -d: -f1)
	sed "$((at - 1))s/thread: 0,/thread: 18446744073709551615,/" "$W/cube.txt" >bad.txt
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call "*", line $((at - 1)) column "*": thread number 18446744073709551615 is too large" ]]
}

@test "a draw of 4294967295 instances, which the device works at for hours, stops the replay with one line, no hang" {
	mutate 'fn: vkCmdDraw,' 's/instanceCount: 1,/instanceCount: 4294967295,/'
	fails trace-replay --wait-timeout 1 bad.txt
	# where the replay waits first: in the driver (the watchdog), or in
	# a wait of its own for a submit the program waited for
	[[ "$output" == "trace-replay: bad.txt: "*": the driver has not returned in 6 s: the device is busy with more work than it finishes (a draw, a dispatch or a count edited larger?); --wait-timeout sets how long replay waits" ||
	   "$output" == "trace-replay: bad.txt: call "*": a submit the program waited for: nothing signaled it in 1 s (--wait-timeout), where the capture's wait ended: a record that signals it missing or edited, or more work than the device finishes (a draw, a dispatch or a count edited larger)?" ]]
}

@test "on a CPU device (llvmpipe) a draw that keeps the driver busy past a GPU's 15 s does not stop the replay with the default options (waits of 120 s, the watch 125 s)" {
	# one draw of SuperTuxKart's Vulkan renderer (a tree, 8,100 indices)
	# took llvmpipe 24 s, at capture and at replay.  Here a draw of enough
	# cubes for a minute (timed on 5000 first: llvmpipe's speed varies
	# with the machine and its load), in frames 0 and 1 alone, where the
	# command buffer that draws it is submitted once: after 20 s the
	# replay is still at it, no line said (the watch of --wait-timeout
	# 10, a GPU's, stopped it at 15 s; that option still bounds it: the
	# 4294967295-instance test above)
	trace-filter --frames 0-1 "$W/cube.txt" | trace-decode >two.txt
	local t0 t1 t2 ms n
	edit_record two.txt 'fn: vkCmdDraw,' '@LINE@s/instanceCount: 1,/instanceCount: 5000,/' cal.txt
	t0=$(date +%s%N)
	trace-replay two.txt
	t1=$(date +%s%N)
	trace-replay cal.txt
	t2=$(date +%s%N)
	ms=$(( (t2 - t1 - (t1 - t0)) / 1000000 ))
	n=$(( 5000 * 60000 / (ms > 100 ? ms : 100) ))
	echo "5000 cubes: $ms ms; $n cubes for a minute"
	edit_record two.txt 'fn: vkCmdDraw,' "@LINE@s/instanceCount: 1,/instanceCount: $n,/" bad.txt
	run timeout -s KILL 20 trace-replay bad.txt
	echo "status $status: $output"
	[ "$status" -eq 137 ]
	[ -z "$output" ]
}

@test "a shader module whose code is no SPIR-V stops the replay at its create" {
	mutate 'fn: vkCreateShaderModule,' 's/pCode: \[119734787,/pCode: [0,/'
	FN=vkCreateShaderModule
	stopped "pCreateInfo.pCode: no SPIR-V: its first word is 0x00000000, not the magic 0x07230203"
}

@test "push constants past the end of their pipeline layout's ranges stop the replay" {
	edit_record "$W/ex.txt" 'fn: vkCmdPushConstants,' '@LINE@s/offset: [0-9]*, size: \([0-9]*\)/offset: 4294967295, size: \1/' bad.txt
	local line layout end
	line=$(grep -m1 'fn: vkCmdPushConstants,' bad.txt)
	layout=$(sed 's/.*layout: \(0x[0-9a-f]*\),.*/\1/' <<<"$line")
	end=$(grep -m1 "fn: vkCreatePipelineLayout,.*pPipelineLayout: \[$layout\]" "$W/ex.txt" | sed 's/.*offset: \([0-9]*\), size: \([0-9]*\)}.*/\1+\2/')
	FN=vkCmdPushConstants
	stopped "offset: 4294967295, size $(sed 's/.*size: \([0-9]*\),.*/\1/' <<<"$line"), but VkPipelineLayout $layout has push constants to byte $((end))"
}

@test "a dispatch of more work groups than the replay device runs stops the replay there" {
	edit_record "$W/ex.txt" 'fn: vkCmdDispatch,' '@LINE@s/groupCountZ: [0-9]*/groupCountZ: 4294967295/' bad.txt
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL (vkCmdDispatch): groupCountZ: 4294967295 from 0, but "*" runs "*" work groups at most" ]]
}

@test "a pipeline layout of more descriptors than the replay device takes (a set layout's descriptorCount edited) stops the replay at the layout's create" {
	# (llvmpipe crashed drawing: the battery, seed 802697063)
	mutate 'fn: vkCreateDescriptorSetLayout,' 's/descriptorCount: 1,/descriptorCount: 4294967295,/'
	local at
	at=$(grep -m1 'fn: vkCreatePipelineLayout,' bad.txt)
	CALL=$(sed 's/^{call: \([0-9]*\),.*/\1/' <<<"$at")
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL (vkCreatePipelineLayout): pCreateInfo.pSetLayouts: 4294967295 uniform buffers in all, but "*" takes "*" in a pipeline layout (maxDescriptorSetUniformBuffers)" ]]
}

@test "an image of more mip levels than the replay device makes of its format stops the replay at its create" {
	mutate 'fn: vkCreateImage,' 's/mipLevels: [0-9]*,/mipLevels: 4294967295,/'
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL (vkCreateImage): pCreateInfo: mipLevels 4294967295, but "*" makes "*" at most of this format" ]]
}

@test "a framebuffer of more layers than the replay device makes stops the replay at its create" {
	mutate 'fn: vkCreateFramebuffer,' 's/layers: 1}/layers: 4294967295}/'
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL (vkCreateFramebuffer): pCreateInfo: layers 4294967295, but "*" makes framebuffers of "*" at most" ]]
}

@test "a framebuffer of 0 layers, or 0 wide, stops the replay at its create, as --check" {
	# layers 1 -> 0 crashed llvmpipe's thread at the draw (mutants.py seed
	# 1886620611); a count no device limit bounds from below
	mutate 'fn: vkCreateFramebuffer,' 's/layers: 1}/layers: 0}/'
	FN=vkCreateFramebuffer
	stopped "pCreateInfo: layers 0: a framebuffer has 1 at least"
	mutate 'fn: vkCreateFramebuffer,' 's/width: [0-9]*,/width: 0,/'
	stopped "pCreateInfo: width 0: a framebuffer has 1 at least"
}

@test "a graphics pipeline asking more viewports than the replay device makes stops the replay at its create" {
	# viewportCount 1 -> 4294967295, the viewports dynamic (no array to
	# check it against), crashed llvmpipe's thread making the pipeline
	# (seed 1886620611), ahead on a --pipeline-jobs thread or not
	local opt
	for opt in --pipeline-jobs=0 --pipeline-jobs=2; do
		mutate 'fn: vkCreateGraphicsPipelines,' 's/viewportCount: 1,/viewportCount: 4294967295,/'
		fails trace-replay "$opt" bad.txt
		[[ "$output" == "trace-replay: bad.txt: call $CALL (vkCreateGraphicsPipelines): pCreateInfos[0].pViewportState: viewportCount 4294967295, but the device makes "*" viewports at most" ]]
		mutate 'fn: vkCreateGraphicsPipelines,' 's/scissorCount: 1,/scissorCount: 17000,/'
		fails trace-replay "$opt" bad.txt
		[[ "$output" == *": pCreateInfos[0].pViewportState: scissorCount 17000, but the device makes "*" viewports at most" ]]
	done
}

@test "a swapchain of more layers or a wider extent than the replay device makes of its format stops the replay at its create" {
	# the layers, then the width
	mutate 'fn: vkCreateSwapchainKHR,' 's/imageArrayLayers: 1,/imageArrayLayers: 4294967295,/'
	fails trace-replay bad.txt
	local layers=$output
	mutate 'fn: vkCreateSwapchainKHR,' 's/imageExtent: {width: [0-9]*,/imageExtent: {width: 1048576,/'
	fails trace-replay bad.txt
	local at="trace-replay: bad.txt: call $CALL (vkCreateSwapchainKHR): pCreateInfo:"
	[[ "$layers" == "$at imageArrayLayers 4294967295, but "*" makes images of "*" at most of this format" ]]
	[[ "$output" == "$at imageExtent.width 1048576, but "*" makes images of "*" at most of this format" ]]
}

@test "a view of a swapchain image past its one level stops the replay at the view, also under --check" {
	mutate 'fn: vkCreateImageView,.*baseMipLevel: 0,' 's/baseMipLevel: 0,/baseMipLevel: 4294967295,/'
	local image
	image=$(sed -n "${L}s/.*image: \(0x[0-9a-f]*\),.*/\1/p" bad.txt)
	grep -q "pSwapchainImages: \[.*$image" "$W/cube.txt"
	FN=vkCreateImageView
	stopped "subresourceRange: baseMipLevel 4294967295, levelCount 1, but VkImage $image has 1 mip levels"
}

@test "a pipeline whose viewports are no longer dynamic (its dynamic states cut) with none given stops the replay at its create" {
	mutate 'fn: vkCreateGraphicsPipelines,' 's/dynamicStateCount: [0-9]*/dynamicStateCount: 0/'
	FN=vkCreateGraphicsPipelines
	stopped "pCreateInfos[0].pViewportState.pViewports: null, and VK_DYNAMIC_STATE_VIEWPORT is not a dynamic state of the pipeline"
}

@test "a complete graphics pipeline with no vertex stage (its stageCount edited to 0) stops the replay at its create" {
	# (llvmpipe crashed making it: the battery, seed 743476362)
	mutate 'fn: vkCreateGraphicsPipelines,' 's/stageCount: 2,/stageCount: 0,/'
	FN=vkCreateGraphicsPipelines
	stopped "pCreateInfos[0].pStages: no VK_SHADER_STAGE_VERTEX_BIT or VK_SHADER_STAGE_MESH_BIT_EXT stage among its 0, which a complete graphics pipeline needs"
}

@test "a descriptor write of none, past its set's layout (binding, type, elements) or past its buffer stops the replay at the update, also under --check" {
	local buf edit want
	buf=$(grep -m1 'fn: vkUpdateDescriptorSets,' "$W/cube.txt" | sed 's/.*pBufferInfo: \[{buffer: \(0x[0-9a-f]*\),.*/\1/')
	FN=vkUpdateDescriptorSets
	while IFS='|' read -r edit want; do
		mutate 'fn: vkUpdateDescriptorSets,' "$edit"
		stopped "$want"
	done <<END
s/dstBinding: 0,/dstBinding: 4294967295,/|pDescriptorWrites[0].dstBinding: 4294967295, but the set's layout has no such binding
s/descriptorCount: 1,/descriptorCount: 0,/|pDescriptorWrites[0].descriptorCount: 0, but a write writes one descriptor or more
s/dstArrayElement: 0,/dstArrayElement: 4294967295,/|pDescriptorWrites[0]: dstArrayElement 4294967295, descriptorCount 1, but binding 0 of the set's layout and those after it hold 0 from there
s/_UNIFORM_BUFFER, pImageInfo/_STORAGE_BUFFER, pImageInfo/|pDescriptorWrites[0].descriptorType: VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, but binding 0 of the set's layout is of VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
s/offset: 0, range: \([0-9]*\)/offset: 4294967295, range: \1/|pDescriptorWrites[0].pBufferInfo[0]: offset 4294967295, range $(grep -m1 'fn: vkUpdateDescriptorSets,' "$W/cube.txt" | sed 's/.*offset: 0, range: \([0-9]*\).*/\1/'), but VkBuffer $buf holds $(grep -m1 "fn: vkCreateBuffer,.*pBuffer: \[$buf\]" "$W/cube.txt" | sed 's/.*, size: \([0-9]*\),.*/\1/') bytes
END
}

@test "a draw whose pipeline uses a binding never written, or a set never bound, stops the replay at the draw, also under --check" {
	# (vkcube's one vkUpdateDescriptorSets deleted crashed llvmpipe
	# drawing: mutants.py seed 1414348642)
	local set cb pipe
	set=$(handle_of 'fn: vkUpdateDescriptorSets,' dstSet)
	cb=$(cb_of "fn: vkCmdBindDescriptorSets,.*pDescriptorSets: \[$set\]")
	pipe=$(grep -m1 "fn: vkCmdBindPipeline, args: {commandBuffer: $cb," "$W/cube.txt" | sed 's/.*pipeline: \(0x[0-9a-f]*\).*/\1/')
	mutate 'fn: vkUpdateDescriptorSets,' d
	stops_at "fn: vkCmdDraw, args: {commandBuffer: $cb," "commandBuffer: VkCommandBuffer $cb: vkCmdDraw, and the bound VkPipeline $pipe uses set 0 binding 0, but nothing has been written there in VkDescriptorSet $set, bound at set 0 (its vkUpdateDescriptorSets cut out?)"
	cb=$(cb_of 'fn: vkCmdBindDescriptorSets,')
	mutate 'fn: vkCmdBindDescriptorSets,' d
	stops_at "fn: vkCmdDraw, args: {commandBuffer: $cb," "commandBuffer: VkCommandBuffer $cb: vkCmdDraw, and the bound VkPipeline $pipe uses set 0 binding 0, but no descriptor set is bound at set 0 since vkBeginCommandBuffer (its vkCmdBindDescriptorSets cut out?)"
}

@test "a queue the device did not make (vkGetDeviceQueue's queueIndex edited) stops the replay there" {
	mutate 'fn: vkGetDeviceQueue,' 's/queueIndex: 0,/queueIndex: 4294967295,/'
	local family
	family=$(grep -m1 'fn: vkGetDeviceQueue,' "$W/cube.txt" | sed 's/.*queueFamilyIndex: \([0-9]*\),.*/\1/')
	FN=vkGetDeviceQueue
	stopped "queueIndex: 4294967295, but the device made 1 of family $family"
}

@test "an indexed draw past its index buffer's indices stops the replay at the draw" {
	edit_record "$W/ex.txt" 'fn: vkCmdDrawIndexed,' '@LINE@s/indexCount: [0-9]*,/indexCount: 4294967295,/' bad.txt
	local cb buf
	cb=$(grep -m1 'fn: vkCmdDrawIndexed,' bad.txt | sed 's/.*commandBuffer: \(0x[0-9a-f]*\),.*/\1/')
	buf=$(grep "fn: vkCmdBindIndexBuffer, args: {commandBuffer: $cb," bad.txt | head -1 | sed 's/.*buffer: \(0x[0-9a-f]*\),.*/\1/')
	fails trace-replay bad.txt
	[[ "$output" == "trace-replay: bad.txt: call $CALL (vkCmdDrawIndexed): indexCount: 4294967295 from firstIndex 0, but VkBuffer $buf holds "*" indices from offset "* ]]
	checked "$output"
}

@test "queries past their pool's (a vkGetQueryPoolResults of 4 from query 2 of 4) stop the replay there" {
	# the capture has no queries: a pool of 4 and a read of them, added
	# after its first vkCreateFence
	local dev at
	dev=$(handle_of 'fn: vkCreateFence,' device)
	at=$(grep -m1 -n 'fn: vkCreateFence,' "$W/cube.txt" | cut -d: -f1)
	sed "${at}a {call: 1000000, thread: 0, fn: vkCreateQueryPool, args: {device: $dev, pCreateInfo: [{sType: VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, pNext: null, flags: 0, queryType: VK_QUERY_TYPE_TIMESTAMP, queryCount: 4, pipelineStatistics: 0}], pAllocator: null, pQueryPool: [0x123400]}, ret: VK_SUCCESS}\\
{call: 1000001, thread: 0, fn: vkGetQueryPoolResults, args: {device: $dev, queryPool: 0x123400, firstQuery: 2, queryCount: 4, dataSize: 32, pData: !!binary \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\", stride: 8, flags: VK_QUERY_RESULT_64_BIT}, ret: VK_NOT_READY}" "$W/cube.txt" >bad.txt
	CALL=1000001
	FN=vkGetQueryPoolResults
	stopped "queryCount: 4 from firstQuery 2, but VkQueryPool 0x123400 has 4 queries"
}

# The battery: mutants of the capture drawn afresh each run for 40 s
# (tests/mutants.py: a count, an enum, flags, an sType, a handle, a
# number, a record removed or two swapped, bytes of the raw container
# replaced), each through the sanitizer builds of trace-replay --check,
# trace-replay on llvmpipe and trace-trim, two at a time.  Each exits 0,
# or 1 with one line naming the file; never a signal, a sanitizer report
# or the 20 s timeout; and --check refuses only what the replay refuses.
# The seed is printed first: MUTANT_SEED=S draws the same mutants again
# (MUTANT_SECONDS: another budget).
@test "fresh mutants of the capture for 40 s: --check, replay and trim exit 0 or with one line, never crash or hang" {
	mkdir m
	local seed=()
	[ -z "${MUTANT_SEED:-}" ] || seed=(--seed "$MUTANT_SEED")
	MUTANT_PRELOAD="$BATS_FILE_TMPDIR/nodlclose.so" \
		LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp:print_suppressions=0" \
		run python3 "$TOP/tests/mutants.py" "${seed[@]}" --seconds "${MUTANT_SECONDS:-40}" \
		--replay "$ASAN_BIN/trace-replay" --trim "$ASAN_BIN/trace-trim" --frames 39 \
		--timeout 20 --jobs 2 --work "$PWD/m" "$W/cube.txt" "$W/cube.raw"
	echo "$output"
	[ "$status" -eq 0 ]
	# it drew and ran some
	grep -qE '^[1-9][0-9]* mutants in ' <<<"$output"
}
