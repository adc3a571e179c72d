# pool_reset_edit.awk: a vkcube capture with a command pool of its own,
# made without RESET_COMMAND_BUFFER_BIT, reset after its one submit, as
# Chromium's ANGLE resets its pools: after frame 10 a command buffer of
# the pool fills 16 bytes of each uniform buffer (made TRANSFER_DST for
# it), is submitted and waited for, and the pool is reset; frame F begins
# and ends the command buffer afresh.  A trim of frame F keeps the fill's
# submit (the frame reads those bytes), so its setup records the command
# buffer, and must reset the pool again before the frame begins it.
# Records renumbered in order.
#
#   awk -v F=150 -f edit_lib.awk -f pool_reset_edit.awk cube.txt > edited.txt
BEGIN { pool = "0x7e57000000000020"; cb = "0x7e57000000000021" }
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkGetDeviceQueue,/ && !queue { queue = handle($0, "pQueue"); dev = handle($0, "device") }
/fn: vkCreateBuffer,.*usage: VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT/ {
	sub(/usage: VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT/,
	    "usage: VK_BUFFER_USAGE_TRANSFER_DST_BIT|VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT")
	ubs[nub++] = handle($0, "pBuffer")
}
{ out($0) }
/fn: vkQueuePresentKHR,/ && ++presents == 10 {
	pool_cbs(dev, 0, "0", pool, cb, 1)
	begin(cb, "0")
	for (i = 0; i < nub; i++)
		rec("vkCmdFillBuffer", "commandBuffer: " cb ", dstBuffer: " ubs[i] ", dstOffset: 1200, " \
		    "size: 16, data: 0", 0)
	submit_wait(cb)
	rec("vkResetCommandPool", "device: " dev ", commandPool: " pool ", flags: 0", 1)
}
/fn: vkAcquireNextImageKHR,/ && ++acquires == F + 1 {
	begin(cb, "0")
	rec("vkEndCommandBuffer", "commandBuffer: " cb, 1)
}
