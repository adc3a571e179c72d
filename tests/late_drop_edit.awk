# late_drop_edit.awk: vkexample --mips's capture, as text, with each
# frame's texture levels 1-6 taken from VK_IMAGE_LAYOUT_UNDEFINED in two
# barriers: level 1 first, as before, and levels 2-6 only after the blit
# from level 0 into level 1.  That blit then comes before anything in the
# frame drops levels 2-6: what it reads of the texture decides whether
# the frame needs what earlier frames wrote there.  Records renumbered in
# order.
#
#   awk -f edit_lib.awk -f late_drop_edit.awk ex.txt > edited.txt
/^\{call: / && !started { no = $2 + 0; started = 1 }
/fn: vkCmdPipelineBarrier,.*oldLayout: VK_IMAGE_LAYOUT_UNDEFINED,.*baseMipLevel: 1, levelCount: 6,/ {
	later = $0
	sub(/baseMipLevel: 1, levelCount: 6,/, "baseMipLevel: 2, levelCount: 5,", later)
	sub(/baseMipLevel: 1, levelCount: 6,/, "baseMipLevel: 1, levelCount: 1,")
	out($0)
	next
}
/fn: vkCmdBlitImage,/ && later {
	out($0)
	out(later)
	later = ""
	next
}
/^\{call: / { out($0); next }
{ print }
