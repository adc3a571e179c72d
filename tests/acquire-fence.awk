# tests/replay-vk.bats: a vkcube trace (text) edited so that every acquire
# takes fence 0xacf00d too (made before the first), and the program waits
# on it and resets it after.  With NOSEM, the acquire has no semaphore and
# the next submit does not wait on one; with BARE too, that submit signals
# none and the present waits on none (as vkd3d presents), so that the
# fence says nothing but that the image is free.
/fn: vkAcquireNextImageKHR,/ {
	if (!made) {
		d = $0; sub(/.*device: /, "", d); sub(/,.*/, "", d)
		print "{call: 900000, thread: 0, fn: vkCreateFence, args: {device: " d ", pCreateInfo: [{sType: VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, pNext: null, flags: 0}], pAllocator: null, pFence: [0xacf00d]}, ret: VK_SUCCESS}"
		made = 1
	}
	sub(/fence: 0x0,/, "fence: 0xacf00d,")
	if (nosem) { sub(/semaphore: 0x[0-9a-f]+,/, "semaphore: 0x0,"); strip = 1 }
	print
	print "{call: 900001, thread: 0, fn: vkWaitForFences, args: {device: " d ", fenceCount: 1, pFences: [0xacf00d], waitAll: true, timeout: 18446744073709551615}, ret: VK_SUCCESS}"
	print "{call: 900002, thread: 0, fn: vkResetFences, args: {device: " d ", fenceCount: 1, pFences: [0xacf00d]}, ret: VK_SUCCESS}"
	next
}
strip && /fn: vkQueueSubmit,/ {
	sub(/waitSemaphoreCount: 1, pWaitSemaphores: \[0x[0-9a-f]+\], pWaitDstStageMask: \[[A-Z_]+\]/, "waitSemaphoreCount: 0, pWaitSemaphores: null, pWaitDstStageMask: null")
	if (bare)
		sub(/signalSemaphoreCount: 1, pSignalSemaphores: \[0x[0-9a-f]+\]/, "signalSemaphoreCount: 0, pSignalSemaphores: null")
	strip = 0
}
bare && /fn: vkQueuePresentKHR,/ {
	sub(/waitSemaphoreCount: 1, pWaitSemaphores: \[0x[0-9a-f]+\]/, "waitSemaphoreCount: 0, pWaitSemaphores: null")
}
{ print }
