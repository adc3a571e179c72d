# copy2_edit.awk: vkcube's capture, as text, with a buffer D that lives to
# the end, filled by one submit and then overwritten whole by a copy from
# buffer S (written on the host) in the next, each submit waited for,
# before the first acquire: with -v copy=2 the copy is Vulkan 1.3's
# vkCmdCopyBuffer2, else vkCmdCopyBuffer; with -v size=N it copies the
# first N bytes of the 4096 only.  Frame 20 (before its acquire)
# copies D into a buffer E of its own, so that a cut of it needs D's
# bytes.  Records renumbered in order.
#
#   awk -v copy=2 -f edit_lib.awk -f copy2_edit.awk cube.txt > edited.txt
BEGIN {
	smem = "0x7e5c000000000001"; s = "0x7e5c000000000002"; dmem = "0x7e5c000000000003"
	d = "0x7e5c000000000004"; pool = "0x7e5c000000000005"
	fill_cb = "0x7e5c000000000006"; copy_cb = "0x7e5c000000000007"
	emem = "0x7e5c000000000008"; e = "0x7e5c000000000009"; read_cb = "0x7e5c00000000000a"
	if (!size)
		size = 4096
	vv = ""
	for (i = 0; i < 1365; i++)
		vv = vv "VVVV"  # 4095 bytes 0x55
}
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkGetDeviceQueue,/ && !queue {
	queue = handle($0, "pQueue"); dev = handle($0, "device"); family = handle($0, "queueFamilyIndex")
}
/fn: vkAcquireNextImageKHR,/ && !done {
	memory(smem, 4096)
	buffer(s, smem)
	update(s, vv)
	memory(dmem, 4096)
	buffer(d, dmem)
	memory(emem, 4096)
	buffer(e, emem)
	pool_cbs(dev, family, "0", pool, fill_cb ", " copy_cb ", " read_cb, 3)
	begin(fill_cb)
	rec("vkCmdFillBuffer", "commandBuffer: " fill_cb ", dstBuffer: " d ", dstOffset: 0, " \
	    "size: 4096, data: 16843009", 0)
	submit_wait(fill_cb)
	begin(copy_cb)
	if (copy == 2)
		rec("vkCmdCopyBuffer2", "commandBuffer: " copy_cb ", pCopyBufferInfo: [{sType: " \
		    "VK_STRUCTURE_TYPE_COPY_BUFFER_INFO_2, pNext: null, srcBuffer: " s ", dstBuffer: " d ", " \
		    "regionCount: 1, pRegions: [{sType: VK_STRUCTURE_TYPE_BUFFER_COPY_2, pNext: null, " \
		    "srcOffset: 0, dstOffset: 0, size: " size "}]}]", 0)
	else
		rec("vkCmdCopyBuffer", "commandBuffer: " copy_cb ", srcBuffer: " s ", dstBuffer: " d ", " \
		    "regionCount: 1, pRegions: [{srcOffset: 0, dstOffset: 0, size: " size "}]", 0)
	submit_wait(copy_cb)
	done = 1
}
/fn: vkAcquireNextImageKHR,/ && acquires++ == 20 {
	begin(read_cb)
	rec("vkCmdCopyBuffer", "commandBuffer: " read_cb ", srcBuffer: " d ", dstBuffer: " e ", " \
	    "regionCount: 1, pRegions: [{srcOffset: 0, dstOffset: 0, size: 4096}]", 0)
	submit_wait(read_cb)
}
/^\{call: / { out($0); next }
{ print }
