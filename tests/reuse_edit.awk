# reuse_edit.awk: vkcube's capture, as text, with a small memory whose
# bytes a buffer destroyed before leaves to the next one bound there, as
# zink's staging uploads do (neverball): before the first acquire, buffer
# A over bytes 0 to 4095 of a 64 KiB memory (buffer C alive over bytes
# 8192 to 12287 of it) is written 0xaa and destroyed;
# buffer B, bound there next, is written 0x55 over its first 3 bytes only
# (the rest zero at capture: the layer clears its shadow where no live
# object is bound, so B's zeros are no update) and copied into buffer D,
# in a memory of its own, by a submit waited for.  Records renumbered in
# order.
#
#   awk -f edit_lib.awk -f reuse_edit.awk cube.txt > edited.txt
BEGIN {
	mem = "0x7e58000000000001"; a = "0x7e58000000000002"; b = "0x7e58000000000003"
	dmem = "0x7e58000000000004"; d = "0x7e58000000000005"; pool = "0x7e58000000000006"
	cb = "0x7e58000000000007"; c = "0x7e58000000000008"
	aa = ""
	for (i = 0; i < 1365; i++)
		aa = aa "qqqq"  # 4095 bytes 0xaa
}
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkGetDeviceQueue,/ && !queue {
	queue = handle($0, "pQueue"); dev = handle($0, "device"); family = handle($0, "queueFamilyIndex")
}
/fn: vkAcquireNextImageKHR,/ && !done {
	memory(mem, 65536)
	buffer(c, mem, 8192)
	buffer(a, mem)
	update(a, aa)
	rec("vkDestroyBuffer", "device: " dev ", buffer: " a ", pAllocator: null", 0)
	buffer(b, mem)
	update(b, "VVVV")
	memory(dmem, 4096)
	buffer(d, dmem)
	pool_cbs(dev, family, "0", pool, cb, 1)
	begin(cb)
	rec("vkCmdCopyBuffer", "commandBuffer: " cb ", srcBuffer: " b ", dstBuffer: " d ", regionCount: 1, " \
	    "pRegions: [{srcOffset: 0, dstOffset: 0, size: 4096}]", 0)
	submit_wait(cb)
	done = 1
}
/^\{call: / { out($0); next }
{ print }
