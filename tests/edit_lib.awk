# edit_lib.awk: what the trace-edit scripts share (layouts_edit.awk,
# zombie_edit.awk, reuse_edit.awk, mixed_edit.awk, dead_copy_edit.awk,
# former_edit.awk, copy2_edit.awk; run with -f edit_lib.awk first):
# records written renumbered in order, records made up, a handle read
# from a line, memories, buffers and their bytes, a command pool with its
# command buffers, a begin, a submit waited for, an image or buffer made
# again like one the trace made.
function out(line) {
	sub(/^\{call: [0-9]+,/, "{call: " no++ ",", line)
	print line
}
function rec(fn, args, ret) {
	out("{call: 0, thread: 0, fn: " fn ", args: {" args "}" (ret ? ", ret: VK_SUCCESS" : "") "}")
}
function handle(line, field,    v) {
	v = line; sub(".*" field ": \\[?", "", v); sub(/[],}].*/, "", v)
	return v
}
# a command pool of queue family FAMILY on DEV, with FLAGS, and the
# primary command buffers CBS ("a" or "a, b": COUNT of them) of it
function pool_cbs(dev, family, flags, pool, cbs, count) {
	rec("vkCreateCommandPool", "device: " dev ", pCreateInfo: [{sType: VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, " \
	    "pNext: null, flags: " flags ", queueFamilyIndex: " family "}], pAllocator: null, pCommandPool: [" pool "]", 1)
	rec("vkAllocateCommandBuffers", "device: " dev ", pAllocateInfo: [{sType: " \
	    "VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, pNext: null, commandPool: " pool ", " \
	    "level: VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount: " count "}], pCommandBuffers: [" cbs "]", 1)
}
# memory H of SIZE bytes (type 0), on DEV (a global each script sets)
function memory(h, size) {
	rec("vkAllocateMemory", "device: " dev ", pAllocateInfo: [{sType: VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, " \
	    "pNext: null, allocationSize: " size ", memoryTypeIndex: 0}], pAllocator: null, pMemory: [" h "]", 1)
}
# a 4 KiB transfer buffer H bound at OFF in memory M
function buffer(h, m, off) {
	rec("vkCreateBuffer", "device: " dev ", pCreateInfo: [{sType: VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, " \
	    "pNext: null, flags: 0, size: 4096, usage: VK_BUFFER_USAGE_TRANSFER_SRC_BIT|" \
	    "VK_BUFFER_USAGE_TRANSFER_DST_BIT, sharingMode: VK_SHARING_MODE_EXCLUSIVE, " \
	    "queueFamilyIndexCount: 0, pQueueFamilyIndices: null}], pAllocator: null, pBuffer: [" h "]", 1)
	rec("vkBindBufferMemory", "device: " dev ", buffer: " h ", memory: " m ", memoryOffset: " off + 0, 1)
}
# the bytes DATA (base64) written into H from its start
function update(h, data) {
	out("{call: 0, thread: 0, fn: tracekit.update, args: {object: " h ", offset: 0, data: !!binary \"" data "\"}}")
}
# CB ended, submitted alone to QUEUE (a global each script sets), and waited for
function submit_wait(cb) {
	rec("vkEndCommandBuffer", "commandBuffer: " cb, 1)
	rec("vkQueueSubmit", "queue: " queue ", submitCount: 1, pSubmits: [{sType: VK_STRUCTURE_TYPE_SUBMIT_INFO, " \
	    "pNext: null, waitSemaphoreCount: 0, pWaitSemaphores: null, pWaitDstStageMask: null, " \
	    "commandBufferCount: 1, pCommandBuffers: [" cb "], signalSemaphoreCount: 0, " \
	    "pSignalSemaphores: null}], fence: 0x0", 1)
	rec("vkQueueWaitIdle", "queue: " queue, 1)
}
# CB begun, for one submit unless FLAGS says otherwise ("0": for more)
function begin(cb, flags) {
	rec("vkBeginCommandBuffer", "commandBuffer: " cb ", pBeginInfo: [{sType: " \
	    "VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, pNext: null, " \
	    "flags: " (flags == "" ? "VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT" : flags) ", " \
	    "pInheritanceInfo: null}]", 1)
}
# the records that made each image and buffer, and bound its memory
/fn: vkCreateImage,/ { made_rec[handle($0, "pImage")] = $0 }
/fn: vkCreateBuffer,/ { made_rec[handle($0, "pBuffer")] = $0 }
/fn: vkGetImageMemoryRequirements,/ { reqs_rec[handle($0, "image")] = $0 }
/fn: vkGetBufferMemoryRequirements,/ { reqs_rec[handle($0, "buffer")] = $0 }
/fn: vkAllocateMemory,/ { alloc_rec[handle($0, "pMemory")] = $0 }
/fn: vkBind(Image|Buffer)Memory,/ { bound_mem[handle($0, /Image/ ? "image" : "buffer")] = handle($0, "memory") }
# one object made again: the record that made OLD, making NEW
function again(line, old, new) {
	gsub(old, new, line)
	out(line)
}
# the image or buffer (KIND "Image" or "Buffer") OLD made again as NEW, on
# device DEV, in memory MEM of its own
function made_like(old, new, mem, kind) {
	again(made_rec[old], old, new)
	again(reqs_rec[old], old, new)
	again(alloc_rec[bound_mem[old]], bound_mem[old], mem)
	rec("vkBind" kind "Memory", "device: " dev ", " tolower(kind) ": " new ", memory: " mem ", memoryOffset: 0", 1)
}
