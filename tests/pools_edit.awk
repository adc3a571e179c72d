# pools_edit.awk: a vkcube capture that makes a descriptor pool of its
# own after each of its first N frames (100) and destroys it at once, as
# zink makes one a frame in glmark2's texture scene: more than the 64
# objects trace-replay's --pipeline-jobs threads keep made ahead at once.
# Records renumbered in order.
#
#   awk -v N=100 -f edit_lib.awk -f pools_edit.awk cube.txt > edited.txt
BEGIN { if (N == "") N = 100 }
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkCreateDevice,/ && !dev { dev = handle($0, "pDevice") }
{ out($0) }
/fn: vkQueuePresentKHR,/ && ++presents <= N {
	pool = sprintf("0x7e5700000000%04x", presents)
	rec("vkCreateDescriptorPool", "device: " dev ", pCreateInfo: [{sType: " \
	    "VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, pNext: null, flags: 0, maxSets: 1, " \
	    "poolSizeCount: 1, pPoolSizes: [{type: VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, " \
	    "descriptorCount: 1}]}], pAllocator: null, pDescriptorPool: [" pool "]", 1)
	rec("vkDestroyDescriptorPool", "device: " dev ", descriptorPool: " pool ", pAllocator: null", 0)
}
