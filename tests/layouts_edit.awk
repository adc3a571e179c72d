# layouts_edit.awk: vkcube's capture, as text, with two submits made
# before its first acquire, as zink makes each frame's: a submit of two
# command buffers, the first of which moves the (linear) texture from
# VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL to ..._TRANSFER_DST_OPTIMAL and
# clears it, the second of which moves it back.  The two are recorded again
# for the second submit (another clear colour), so that both submits write
# the texture every frame samples and a trim's setup runs both again.  The
# texture takes VK_IMAGE_USAGE_TRANSFER_DST_BIT; records renumbered in order.
#
#   awk -f edit_lib.awk -f layouts_edit.awk cube.txt > edited.txt
function barrier(cb, from, to) {
	rec("vkCmdPipelineBarrier", "commandBuffer: " cb ", srcStageMask: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, " \
	    "dstStageMask: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dependencyFlags: 0, memoryBarrierCount: 0, " \
	    "pMemoryBarriers: null, bufferMemoryBarrierCount: 0, pBufferMemoryBarriers: null, " \
	    "imageMemoryBarrierCount: 1, pImageMemoryBarriers: [{sType: VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, " \
	    "pNext: null, srcAccessMask: VK_ACCESS_MEMORY_WRITE_BIT, " \
	    "dstAccessMask: VK_ACCESS_MEMORY_READ_BIT|VK_ACCESS_MEMORY_WRITE_BIT, oldLayout: " from ", " \
	    "newLayout: " to ", srcQueueFamilyIndex: 4294967295, dstQueueFamilyIndex: 4294967295, " \
	    "image: " tex ", subresourceRange: {aspectMask: VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel: 0, " \
	    "levelCount: 1, baseArrayLayer: 0, layerCount: 1}}]", 0)
}
# the two command buffers recorded, submitted together, waited for; COLOR
# is the clear's VkClearColorValue in base64
function pair(color) {
	begin(cb1)
	barrier(cb1, "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL", "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL")
	rec("vkCmdClearColorImage", "commandBuffer: " cb1 ", image: " tex ", " \
	    "imageLayout: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, pColor: [!!binary \"" color "\"], " \
	    "rangeCount: 1, pRanges: [{aspectMask: VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel: 0, " \
	    "levelCount: 1, baseArrayLayer: 0, layerCount: 1}]", 0)
	rec("vkEndCommandBuffer", "commandBuffer: " cb1, 1)
	begin(cb2)
	barrier(cb2, "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL", "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL")
	rec("vkEndCommandBuffer", "commandBuffer: " cb2, 1)
	rec("vkQueueSubmit", "queue: " queue ", submitCount: 1, pSubmits: [{sType: VK_STRUCTURE_TYPE_SUBMIT_INFO, " \
	    "pNext: null, waitSemaphoreCount: 0, pWaitSemaphores: null, pWaitDstStageMask: null, " \
	    "commandBufferCount: 2, pCommandBuffers: [" cb1 ", " cb2 "], signalSemaphoreCount: 0, " \
	    "pSignalSemaphores: null}], fence: 0x0", 1)
	rec("vkQueueWaitIdle", "queue: " queue, 1)
}
BEGIN { pool = "0x7e57000000000001"; cb1 = "0x7e57000000000002"; cb2 = "0x7e57000000000003" }
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkGetDeviceQueue,/ && !queue {
	queue = $0; sub(/.*pQueue: \[/, "", queue); sub(/\].*/, "", queue)
	family = $0; sub(/.*queueFamilyIndex: /, "", family); sub(/,.*/, "", family)
}
/fn: vkCreateImage,.*VK_IMAGE_TILING_LINEAR/ {
	tex = $0; sub(/.*pImage: \[/, "", tex); sub(/\].*/, "", tex)
	dev = $0; sub(/.*device: /, "", dev); sub(/,.*/, "", dev)
	sub(/usage: VK_IMAGE_USAGE_SAMPLED_BIT,/, "usage: VK_IMAGE_USAGE_TRANSFER_DST_BIT|VK_IMAGE_USAGE_SAMPLED_BIT,")
}
/fn: vkAcquireNextImageKHR,/ && !done {
	pool_cbs(dev, family, "VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT", pool, cb1 ", " cb2, 2)
	pair("AAAAAAAAgD8AAAAAAACAPw==")  # green
	pair("AACAPwAAAAAAAAAAAACAPw==")  # red
	done = 1
}
/^\{call: / { out($0); next }
{ print }
