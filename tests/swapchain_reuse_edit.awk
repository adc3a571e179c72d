# swapchain_reuse_edit.awk: a vkcube capture whose swapchain, once its
# images are got, is destroyed and made again, the new one's images coming
# back with the old ones' handles, as Wine's d3d on Vulkan does (the
# driver reuses them).  Everything after names the new swapchain.  Records
# renumbered in order.
#
#   awk -f edit_lib.awk -f swapchain_reuse_edit.awk cube.txt > edited.txt
BEGIN { sc2 = "0x7e57000000000030" }
/^\{call: / && !started { no = $2 + 0; started = 1 }
done { gsub(sc, sc2) }
{ out($0) }
/fn: vkCreateSwapchainKHR,/ && !sc { sc = handle($0, "pSwapchain"); create = $0; dev = handle($0, "device") }
sc && !done && /fn: vkGetSwapchainImagesKHR,/ {
	if (index($0, "pSwapchainImages: null")) {
		count = $0
		next
	}
	rec("vkDestroySwapchainKHR", "device: " dev ", swapchain: " sc ", pAllocator: null", 0)
	line = create; sub(/pSwapchain: \[[^]]*\]/, "pSwapchain: [" sc2 "]", line); out(line)
	line = count; gsub(sc, sc2, line); out(line)
	line = $0; gsub(sc, sc2, line); out(line)
	done = 1
}
