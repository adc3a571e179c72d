# former_edit.awk: a vkexample --mips capture with two submits of its own
# after the upload's wait, each on a command buffer of its own: R copies
# level 0 of the texture T into an image Z of its own (made like T); D
# takes T's level 0 from UNDEFINED (what it held goes) and copies Z's
# level 0 back into it, each waited for.  The frames then draw what they
# drew.  A trim whose range reads T runs D again, so R (which wrote what
# D reads), so the upload: R read what the upload wrote, though D
# dropped it before the range (a ping-pong of a temporal effect's
# history does the same).  Records renumbered in order.
#
#   awk -f edit_lib.awk -f former_edit.awk ex.txt > edited.txt
BEGIN {
	z = "0x7e57000000000050"; mz = "0x7e57000000000051"; pool = "0x7e57000000000052"
	cr = "0x7e57000000000053"; cd = "0x7e57000000000054"
}
/^\{call: / && !started { no = $2 + 0; started = 1 }
function barrier(cb, img, from, to, src, dst) {
	rec("vkCmdPipelineBarrier", "commandBuffer: " cb ", srcStageMask: " src ", dstStageMask: " dst \
	    ", dependencyFlags: 0, memoryBarrierCount: 0, pMemoryBarriers: null, bufferMemoryBarrierCount: 0, " \
	    "pBufferMemoryBarriers: null, imageMemoryBarrierCount: 1, pImageMemoryBarriers: [{sType: " \
	    "VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, pNext: null, srcAccessMask: VK_ACCESS_MEMORY_WRITE_BIT, " \
	    "dstAccessMask: VK_ACCESS_MEMORY_READ_BIT|VK_ACCESS_MEMORY_WRITE_BIT, oldLayout: " from ", newLayout: " to \
	    ", srcQueueFamilyIndex: 4294967295, dstQueueFamilyIndex: 4294967295, image: " img ", subresourceRange: " \
	    "{aspectMask: VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1}}]", 0)
}
# level 0 of SRC (in TRANSFER_SRC_OPTIMAL) into level 0 of DST (TRANSFER_DST_OPTIMAL), whole
function copy(cb, src, dst) {
	rec("vkCmdCopyImage", "commandBuffer: " cb ", srcImage: " src ", srcImageLayout: " \
	    "VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dstImage: " dst ", dstImageLayout: " \
	    "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, regionCount: 1, pRegions: [{srcSubresource: {aspectMask: " \
	    "VK_IMAGE_ASPECT_COLOR_BIT, mipLevel: 0, baseArrayLayer: 0, layerCount: 1}, srcOffset: {x: 0, y: 0, z: 0}, " \
	    "dstSubresource: {aspectMask: VK_IMAGE_ASPECT_COLOR_BIT, mipLevel: 0, baseArrayLayer: 0, layerCount: 1}, " \
	    "dstOffset: {x: 0, y: 0, z: 0}, extent: {width: " w ", height: " h ", depth: 1}}]", 0)
}
/fn: vkCmdCopyBufferToImage,/ && !tex {
	tex = handle($0, "dstImage")
	w = $0; sub(/.*imageExtent: \{width: /, "", w); sub(/,.*/, "", w)
	h = $0; sub(/.*imageExtent: \{width: [0-9]+, height: /, "", h); sub(/,.*/, "", h)
}
{ out($0) }
tex && !done && /fn: vkQueueWaitIdle,/ {
	done = 1
	queue = handle($0, "queue")
	dev = handle(made_rec[tex], "device")
	made_like(tex, z, mz, "Image")
	pool_cbs(dev, 0, 0, pool, cr ", " cd, 2)
	# R: T's level 0 into Z's
	begin(cr)
	barrier(cr, z, "VK_IMAGE_LAYOUT_UNDEFINED", "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL",
		"VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT", "VK_PIPELINE_STAGE_TRANSFER_BIT")
	barrier(cr, tex, "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL", "VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL",
		"VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT", "VK_PIPELINE_STAGE_TRANSFER_BIT")
	copy(cr, tex, z)
	barrier(cr, tex, "VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL", "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL",
		"VK_PIPELINE_STAGE_TRANSFER_BIT", "VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT")
	barrier(cr, z, "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL", "VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL",
		"VK_PIPELINE_STAGE_TRANSFER_BIT", "VK_PIPELINE_STAGE_TRANSFER_BIT")
	submit_wait(cr)
	# D: T's level 0 dropped, then Z's copied back
	begin(cd)
	barrier(cd, tex, "VK_IMAGE_LAYOUT_UNDEFINED", "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL",
		"VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT", "VK_PIPELINE_STAGE_TRANSFER_BIT")
	copy(cd, z, tex)
	barrier(cd, tex, "VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL", "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL",
		"VK_PIPELINE_STAGE_TRANSFER_BIT", "VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT")
	submit_wait(cd)
}
