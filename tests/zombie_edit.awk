# zombie_edit.awk: layouts_edit.awk's output, with a descriptor set of its
# own that once named an image destroyed before a submit the trim keeps, as
# zink's do (xscreensaver's gltext): a second texture, given a layout by a
# submit of its own that writes nothing (so no trim keeps it), is written
# into the set; the set is rewritten with vkcube's texture and the second
# texture destroyed; then the second submit of layouts_edit.awk's binds the
# set.  The set's records name the destroyed texture's view, so a trim
# keeps the texture, with its destroy, as a zombie.  Records renumbered in
# order.
#
#   awk -f edit_lib.awk -f layouts_edit.awk cube.txt |
#       awk -f edit_lib.awk -f zombie_edit.awk > edited.txt
function texture(view) {
	rec("vkUpdateDescriptorSets", "device: " dev ", descriptorWriteCount: 1, pDescriptorWrites: [{sType: " \
	    "VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, pNext: null, dstSet: " set ", dstBinding: 1, " \
	    "dstArrayElement: 0, descriptorCount: 1, descriptorType: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, " \
	    "pImageInfo: [{sampler: " sampler ", imageView: " view ", imageLayout: " \
	    "VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL}], pBufferInfo: null, pTexelBufferView: null}], " \
	    "descriptorCopyCount: 0, pDescriptorCopies: null", 0)
}
BEGIN {
	cb1 = "0x7e57000000000002"; cb2 = "0x7e57000000000003"; img = "0x7e57000000000010"; mem = "0x7e57000000000011"
	view = "0x7e57000000000012"; pool = "0x7e57000000000013"; set = "0x7e57000000000014"
}
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkGetDeviceQueue,/ && !queue { queue = handle($0, "pQueue") }
/fn: vkAllocateMemory,/ { alloc = $0 }
/fn: vkCreateImage,.*VK_IMAGE_TILING_LINEAR/ {
	tex = handle($0, "pImage"); dev = handle($0, "device")
	create = $0; sub(/pImage: \[[^]]*\]/, "pImage: [" img "]", create)
}
tex && /fn: vkGetImageMemoryRequirements,/ && index($0, "image: " tex ",") {
	reqs = $0; sub("image: " tex ",", "image: " img ",", reqs)
}
tex && /fn: vkBindImageMemory,/ && index($0, "image: " tex ",") {
	texmem = alloc; sub(/pMemory: \[[^]]*\]/, "pMemory: [" mem "]", texmem)
}
tex && /fn: vkCreateImageView,/ && index($0, "image: " tex ",") {
	texview = handle($0, "pView")
	mkview = $0; sub("image: " tex ",", "image: " img ",", mkview)
	sub(/pView: \[[^]]*\]/, "pView: [" view "]", mkview)
}
/fn: vkAllocateDescriptorSets,/ && !layout { layout = handle($0, "pSetLayouts") }
/fn: vkUpdateDescriptorSets,/ && !sampler { sampler = handle($0, "sampler") }
/fn: vkCmdBindDescriptorSets,/ && !playout { playout = handle($0, "layout") }
index($0, "fn: vkBeginCommandBuffer, args: {commandBuffer: " cb1 ",") && ++begun == 1 {
	out(create); out(reqs); out(texmem)
	rec("vkBindImageMemory", "device: " dev ", image: " img ", memory: " mem ", memoryOffset: 0", 1)
	out(mkview)
	rec("vkCreateDescriptorPool", "device: " dev ", pCreateInfo: [{sType: " \
	    "VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, pNext: null, flags: 0, maxSets: 1, " \
	    "poolSizeCount: 2, pPoolSizes: [{type: VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptorCount: 1}, " \
	    "{type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount: 1}]}], pAllocator: null, " \
	    "pDescriptorPool: [" pool "]", 1)
	rec("vkAllocateDescriptorSets", "device: " dev ", pAllocateInfo: [{sType: " \
	    "VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, pNext: null, descriptorPool: " pool ", " \
	    "descriptorSetCount: 1, pSetLayouts: [" layout "]}], pDescriptorSets: [" set "]", 1)
	texture(view)
	begin(cb2)
	rec("vkCmdPipelineBarrier", "commandBuffer: " cb2 ", srcStageMask: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, " \
	    "dstStageMask: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dependencyFlags: 0, memoryBarrierCount: 0, " \
	    "pMemoryBarriers: null, bufferMemoryBarrierCount: 0, pBufferMemoryBarriers: null, " \
	    "imageMemoryBarrierCount: 1, pImageMemoryBarriers: [{sType: VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, " \
	    "pNext: null, srcAccessMask: 0, dstAccessMask: VK_ACCESS_SHADER_READ_BIT, " \
	    "oldLayout: VK_IMAGE_LAYOUT_UNDEFINED, newLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, " \
	    "srcQueueFamilyIndex: 4294967295, dstQueueFamilyIndex: 4294967295, image: " img ", " \
	    "subresourceRange: {aspectMask: VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel: 0, levelCount: 1, " \
	    "baseArrayLayer: 0, layerCount: 1}}]", 0)
	submit_wait(cb2)
	out($0)
	next
}
index($0, "fn: vkBeginCommandBuffer, args: {commandBuffer: " cb1 ",") && begun == 2 {
	texture(texview)
	rec("vkDestroyImageView", "device: " dev ", imageView: " view ", pAllocator: null", 0)
	rec("vkDestroyImage", "device: " dev ", image: " img ", pAllocator: null", 0)
	rec("vkFreeMemory", "device: " dev ", memory: " mem ", pAllocator: null", 0)
	out($0)
	rec("vkCmdBindDescriptorSets", "commandBuffer: " cb1 ", pipelineBindPoint: " \
	    "VK_PIPELINE_BIND_POINT_GRAPHICS, layout: " playout ", firstSet: 0, descriptorSetCount: 1, " \
	    "pDescriptorSets: [" set "], dynamicOffsetCount: 0, pDynamicOffsets: null", 0)
	next
}
/^\{call: / { out($0); next }
{ print }
