# dead_copy_edit.awk: a vkexample capture whose upload also copies, from
# a staging buffer of its own (Y, filled with 0xff bytes), into an image
# of its own (X, made like the texture), recorded into the upload's
# command buffer right after the texture's copy, between barriers that
# take X to TRANSFER_DST_OPTIMAL and on to SHADER_READ_ONLY_OPTIMAL; X and
# Y are destroyed after the wait that follows the upload's submit, and
# nothing reads X.  A trim whose range reads the texture runs that submit
# again, and needs neither the copy into X nor Y's bytes, as Warzone 2100
# records its uploads into a frame's one command buffer.  Records
# renumbered in order.  With -v keep=1, X and Y are not destroyed.
#
#   awk -f edit_lib.awk -f dead_copy_edit.awk ex.txt > edited.txt
BEGIN { x = "0x7e57000000000040"; mx = "0x7e57000000000041"; y = "0x7e57000000000042"; my = "0x7e57000000000043" }
/^\{call: / && !started { no = $2 + 0; started = 1 }
function barrier(from, to, src, dst) {
	rec("vkCmdPipelineBarrier", "commandBuffer: " cb ", srcStageMask: " src ", dstStageMask: " dst \
	    ", dependencyFlags: 0, memoryBarrierCount: 0, pMemoryBarriers: null, bufferMemoryBarrierCount: 0, " \
	    "pBufferMemoryBarriers: null, imageMemoryBarrierCount: 1, pImageMemoryBarriers: [{sType: " \
	    "VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, pNext: null, srcAccessMask: VK_ACCESS_NONE, " \
	    "dstAccessMask: VK_ACCESS_NONE, oldLayout: " from ", newLayout: " to ", srcQueueFamilyIndex: " \
	    "4294967295, dstQueueFamilyIndex: 4294967295, image: " x ", subresourceRange: {aspectMask: " \
	    "VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1}}]", 0)
}
/fn: vkCmdCopyBufferToImage,/ && !copied {
	copied = 1
	cb = handle($0, "commandBuffer"); tex = handle($0, "dstImage"); staging = handle($0, "srcBuffer")
	dev = handle(made_rec[tex], "device")
	size = made_rec[staging]; sub(/.*size: /, "", size); sub(/,.*/, "", size)
	made_like(tex, x, mx, "Image")
	made_like(staging, y, my, "Buffer")
	# Y's bytes, 0xff: base64 "////" is three of them
	data = "////"
	while (length(data) < 4 * int(size / 3))
		data = data data
	data = substr(data, 1, 4 * int(size / 3))
	if (size % 3 == 1) data = data "/w=="
	if (size % 3 == 2) data = data "//8="
	rec("tracekit.update", "object: " y ", offset: 0, data: !!binary \"" data "\"", 0)
	out($0)
	barrier("VK_IMAGE_LAYOUT_UNDEFINED", "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL",
		"VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT", "VK_PIPELINE_STAGE_TRANSFER_BIT")
	line = $0
	sub("srcBuffer: " staging, "srcBuffer: " y, line)
	sub("dstImage: " tex, "dstImage: " x, line)
	out(line)
	barrier("VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL", "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL",
		"VK_PIPELINE_STAGE_TRANSFER_BIT", "VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT")
	next
}
{ out($0) }
copied && /fn: vkQueueSubmit,/ && index($0, cb) && !submitted { submitted = 1; next }
submitted && !ended && !keep && /fn: (vkQueueWaitIdle|vkWaitForFences|vkDeviceWaitIdle),/ {
	ended = 1
	rec("vkDestroyImage", "device: " dev ", image: " x ", pAllocator: null", 0)
	rec("vkFreeMemory", "device: " dev ", memory: " mx ", pAllocator: null", 0)
	rec("vkDestroyBuffer", "device: " dev ", buffer: " y ", pAllocator: null", 0)
	rec("vkFreeMemory", "device: " dev ", memory: " my ", pAllocator: null", 0)
}
