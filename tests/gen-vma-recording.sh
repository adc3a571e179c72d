#!/bin/sh
# Writes a VMA call recording (format 1,8) of N calls to standard output:
# three threads, a frame every 1000 calls, a time step every 7 calls,
# buffers and images made, buffers named (user data with commas), mapped,
# flushed and unmapped, both destroyed.  For tests and benchmarks that
# need a big recording without shipping one.
#   tests/gen-vma-recording.sh N
set -eu
n=${1:?usage: tests/gen-vma-recording.sh N}
awk -v n="$n" 'BEGIN {
	print "Vulkan Memory Allocator,Calls recording"
	print "1,8"
	print "Config,Begin"
	print "VulkanApiVersion,1,2"
	print "PhysicalDevice,deviceName,llvmpipe (LLVM 15.0.6, 256 bits)"
	print "PhysicalDeviceMemory,HeapCount,1"
	print "PhysicalDeviceMemory,Heap,0,size,8589934592"
	print "Macro,VMA_DEBUG_MARGIN,0"
	print "Config,End"
	for (i = 0; i < n; i++) {
		head = sprintf("%d,%.3f,%d,", 4100 + i % 3, int(i / 7) / 1000, int(i / 1000))
		k = i % 8
		# allocation handles: 000001D8 then 8 hex digits, 64 bytes apart
		# the buffer (made at k 0, CPU_TO_GPU) is named, mapped, flushed,
		# unmapped and destroyed; the image (k 2, GPU_ONLY) only destroyed
		if (k == 0 || k == 2)
			p = sprintf("000001D8%08X", (i * 64) % 4294967296)
		else if (k != 7)
			p = sprintf("000001D8%08X", ((i - k) * 64) % 4294967296)
		else
			p = sprintf("000001D8%08X", ((i - k + 2) * 64) % 4294967296)
		if (k == 0)
			print head "vmaCreateBuffer,0," (256 + i % 4096) * 16 ",130,0,32,3,0,0,0,0000000000000000," p ",buffer " i ", frame " int(i / 1000)
		else if (k == 1)
			print head "vmaSetAllocationUserData," p ",renamed, " i
		else if (k == 2)
			print head "vmaCreateImage,0,1,37," 64 + i % 512 ",128,1,1,1,1,0,6,0,0,0,1,0,0,0,0000000000000000," p ","
		else if (k == 3)
			print head "vmaMapMemory," p
		else if (k == 4)
			print head "vmaFlushAllocation," p ",0,4096"
		else if (k == 5)
			print head "vmaUnmapMemory," p
		else if (k == 6)
			print head "vmaDestroyBuffer," p
		else
			print head "vmaDestroyImage," p
	}
}'
