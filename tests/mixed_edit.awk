# mixed_edit.awk: vkexample --mips's capture, as text, with a submit made
# in frame 11, after that frame's submit and before its present, that
# moves the texture's levels 1-3 from VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
# to ..._GENERAL and levels 4-6 to ..._TRANSFER_DST_OPTIMAL, and writes
# nothing: frame 12 begins with level 0 where it was and the others in
# two layouts of their own (it takes levels 1-6 from UNDEFINED, and level
# 0 from SHADER_READ_ONLY), and a trim's setup does not run that submit
# again.  Records renumbered in order.
#
#   awk -f edit_lib.awk -f mixed_edit.awk ex.txt > edited.txt
function barrier(level, to) {
	return "{sType: VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, pNext: null, " \
	    "srcAccessMask: VK_ACCESS_MEMORY_WRITE_BIT, " \
	    "dstAccessMask: VK_ACCESS_MEMORY_READ_BIT|VK_ACCESS_MEMORY_WRITE_BIT, " \
	    "oldLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, newLayout: " to ", " \
	    "srcQueueFamilyIndex: 4294967295, dstQueueFamilyIndex: 4294967295, image: " tex ", " \
	    "subresourceRange: {aspectMask: VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel: " level ", " \
	    "levelCount: 3, baseArrayLayer: 0, layerCount: 1}}"
}
BEGIN { pool = "0x7e57000000000001"; cb = "0x7e57000000000002" }
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkGetDeviceQueue,/ && !queue {
	queue = handle($0, "pQueue")
	family = handle($0, "queueFamilyIndex")
}
/fn: vkCreateImage,.*mipLevels: 7,/ { tex = handle($0, "pImage"); dev = handle($0, "device") }
/fn: vkQueuePresentKHR,/ && presents++ == 11 {
	pool_cbs(dev, family, "0", pool, cb, 1)
	begin(cb)
	rec("vkCmdPipelineBarrier", "commandBuffer: " cb ", srcStageMask: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, " \
	    "dstStageMask: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dependencyFlags: 0, memoryBarrierCount: 0, " \
	    "pMemoryBarriers: null, bufferMemoryBarrierCount: 0, pBufferMemoryBarriers: null, " \
	    "imageMemoryBarrierCount: 2, pImageMemoryBarriers: [" \
	    barrier(1, "VK_IMAGE_LAYOUT_GENERAL") ", " barrier(4, "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL") "]", 0)
	submit_wait(cb)
}
/^\{call: / { out($0); next }
{ print }
