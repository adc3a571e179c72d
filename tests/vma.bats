#!/usr/bin/env bats
# vma-import and vma-export: VMA's CSV call recordings to the record stream
# and back, losslessly; the errors they report and where.

load helpers

VMA="$DATA/vma"

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# A recording as vma-export writes it back: LF line ends, and no trailing
# blanks (the samples have one, after "Config,End").
unblank() {
	sed 's/\r*$//; s/[ \t]*$//' "$1"
}

samples() {
	ls "$VMA"/vma-docs-example-v1.*.csv
}

# The first recording lines: header, version (argument), no Config.
recording() {
	printf 'Vulkan Memory Allocator,Calls recording\n%s\n' "$1"
}

# Runs vma-import for its messages: $output is what it wrote on stderr
# (the records before an error still go to standard output).
import_error() {
	run sh -c 'vma-import "$@" 2>&1 >/dev/null' vma-import "$@"
}

# Writes bad.csv, a recording of format version $1 whose next lines are the
# other arguments, and imports it for its message: the import must fail.
import_bad() {
	recording "$1" >bad.csv
	shift
	for line in "$@"; do
		printf '%s\n' "$line" >>bad.csv
	done
	import_error bad.csv
	[ "$status" -eq 1 ]
}

# bad_line LINE MESSAGE: a version 1,2 recording whose third line is LINE
# fails to import, and its message ends with MESSAGE.
bad_line() {
	import_bad 1,2 "$1"
	[[ "$output" == *"$2" ]] || { echo "want ...$2"; echo "got: $output"; return 1; }
}

@test "every sample recording imports and exports back identical" {
	for f in $(samples); do
		vma-import "$f" >a.trace
		vma-export a.trace >back.csv
		unblank "$f" >want.csv
		cmp want.csv back.csv || { echo "differs: $f"; return 1; }
	done
}

@test "every sample decodes to text with trace-decode, and the text exports back identical" {
	for f in $(samples); do
		vma-import "$f" | trace-decode >a.txt
		grep -q '^{call: 2, thread: 12552, fn: vmaCreateAllocator}$' a.txt
		vma-export a.txt >back.csv
		unblank "$f" >want.csv
		cmp want.csv back.csv || { echo "differs: $f"; return 1; }
	done
}

@test "every format version from 1,0 to 1,8 imports and round-trips" {
	for minor in 0 1; do
		sed "2s/.*/1,$minor/" "$VMA/vma-docs-example-v1.2.csv" >v.csv
		vma-import v.csv | vma-export | cmp v.csv -
	done
	for minor in 2 3 4 5 6 7 8; do
		vma-import "$VMA/vma-docs-example-v1.$minor.csv" -f text >a.txt
		grep -q "vma.version: \"1,$minor\"" a.txt
		vma-export a.txt | cmp <(unblank "$VMA/vma-docs-example-v1.$minor.csv") -
	done
}

@test "-f text writes what trace-decode shows of the binary output" {
	f="$VMA/vma-docs-example-v1.8.csv"
	vma-import -f text "$f" >text.txt
	vma-import "$f" | trace-decode >decoded.txt
	cmp text.txt decoded.txt
	head -c 1 text.txt | grep -q '{'
}

@test "snappy, brotli and uncompressed output carry the same stream" {
	f="$VMA/every-function-v1.8.csv"
	vma-import "$f" >snappy.trace
	vma-import -z brotli "$f" >brotli.trace
	vma-import -z none "$f" >raw.trace
	[ "$(head -c 2 snappy.trace)" = at ]
	[ "$(head -c 2 raw.trace)" = tr ]
	trace-decode snappy.trace >s.txt
	trace-decode brotli.trace | cmp s.txt -
	trace-decode raw.trace | cmp s.txt -
	vma-export brotli.trace | cmp "$f" -
}

@test "a recording of every function VMA records round-trips byte for byte" {
	for f in "$VMA/every-function-v1.8.csv" "$VMA/glibc-pointers-v1.5.csv"; do
		vma-import "$f" | vma-export | cmp "$f" -
		vma-import -f text "$f" | vma-export | cmp "$f" -
		vma-import -f text "$f" | trace-encode | vma-export | cmp "$f" -
	done
}

@test "the fixtures between them call all 27 functions VMA recorded" {
	cat "$VMA/every-function-v1.8.csv" "$VMA/glibc-pointers-v1.5.csv" |
		grep -o ',vma[A-Za-z]*' | sort -u >seen
	for fn in vmaCreateAllocator vmaDestroyAllocator vmaCreatePool vmaDestroyPool \
		vmaSetAllocationUserData vmaCreateBuffer vmaDestroyBuffer vmaCreateImage \
		vmaDestroyImage vmaFreeMemory vmaFreeMemoryPages vmaCreateLostAllocation \
		vmaAllocateMemory vmaAllocateMemoryPages vmaAllocateMemoryForBuffer \
		vmaAllocateMemoryForImage vmaMapMemory vmaUnmapMemory vmaFlushAllocation \
		vmaInvalidateAllocation vmaTouchAllocation vmaGetAllocationInfo \
		vmaMakePoolAllocationsLost vmaResizeAllocation vmaDefragmentationBegin \
		vmaDefragmentationEnd vmaSetPoolName; do
		grep -qx ",$fn" seen || { echo "not covered: $fn"; return 1; }
	done
}

@test "parameters are typed: uint32, uint64, bool, pointer, list of pointers, string" {
	vma-import -f text "$VMA/every-function-v1.8.csv" >a.txt
	grep -q 'fn: vmaCreateBuffer, args: {bufferCreateInfo.flags: 0, bufferCreateInfo.size: 65536, bufferCreateInfo.usage: 130,' a.txt
	grep -q 'vkMemoryRequirements.size: 1024, vkMemoryRequirements.alignment: 16, vkMemoryRequirements.memoryTypeBits: 7, requiresDedicatedAllocation: true, prefersDedicatedAllocation: false,' a.txt
	grep -q 'fn: vmaInvalidateAllocation, args: {allocation: 0x1d85b8b1200, offset: 256, size: 18446744073709551615}' a.txt
	grep -q 'allocations: \[0x1d85b8b1300, 0x1d85b8b1340, 0x1d85b8b1380\], allocationCreateInfo.pUserData: ""}' a.txt
	grep -q 'fn: vmaFreeMemoryPages, args: {allocations: \[\]}' a.txt
	grep -q 'allocationCreateInfo.pool: 0x0, allocation: 0x1d85b8b1200, allocationCreateInfo.pUserData: "000001D85B8BFF00"}' a.txt
}

@test "user data and pool names with commas stay one string" {
	vma-import -f text "$VMA/every-function-v1.8.csv" >a.txt
	grep -q 'fn: vmaSetPoolName, args: {pool: 0x1d85b8b0010, pName: "big, shared, pool"}' a.txt
	grep -q 'allocationCreateInfo.pUserData: "vertex buffer, LOD 0"}' a.txt
	grep -q 'fn: vmaSetAllocationUserData, args: {allocation: 0x1d85b8b1000, pUserData: "renamed, with, commas,"}' a.txt
	grep -q 'fn: vmaSetPoolName, args: {pool: 0x1d85b8b0010, pName: ""}' a.txt
}

@test "a final string column left out stays left out" {
	{ recording 1,2; echo '1,0.000,0,vmaCreateBuffer,0,8,1,0,0,1,0,0,0,0000000000000000,0000000000001000'; } >r.csv
	vma-import -f text r.csv >a.txt
	grep -q 'allocation: 0x1000, allocationCreateInfo.pUserData: !missing ~}' a.txt
	vma-export a.txt | cmp r.csv -
}

@test "user data keeps its blanks, trailing ones included" {
	{ recording 1,2; printf '1,0.000,0,vmaSetAllocationUserData,0000000000001000,  two  spaces  \n'; } >r.csv
	vma-import -f text r.csv >a.txt
	grep -q 'pUserData: "  two  spaces  "}' a.txt
	vma-export a.txt | cmp r.csv -
}

@test "glibc's pointer spelling is recorded in the header and restored" {
	f="$VMA/glibc-pointers-v1.5.csv"
	vma-import -f text "$f" >a.txt
	head -1 a.txt | grep -q 'vma.pointers: "glibc"'
	grep -q 'allocationCreateInfo.pool: 0x0, allocation: 0x55d0a1b2c3d0,' a.txt
	grep -q 'fn: vmaResizeAllocation, args: {allocation: 0x55d0a1b2c3d0, newSize: 2048}' a.txt
	vma-export a.txt | cmp "$f" -
}

@test "Windows pointers of a 32-bit program keep their 8 digits" {
	{ recording 1,2; echo '1,0.000,0,vmaCreatePool,0,0,0,0,0,0,5B8B1A80'; echo '1,0.000,0,vmaDestroyPool,00000000'; } >r.csv
	vma-import -f text r.csv >a.txt
	head -1 a.txt | grep -q 'vma.pointers: "windows32"'
	grep -q 'pool: 0x5b8b1a80}' a.txt
	vma-export a.txt | cmp r.csv -
}

@test "a recording without pointers has no spelling in the header" {
	{ recording 1,2; echo '1,0.000,0,vmaCreateAllocator'; } >r.csv
	vma-import -f text r.csv >a.txt
	if head -1 a.txt | grep -q vma.pointers; then false; fi
	vma-export a.txt | cmp r.csv -
}

@test "pools keep their handle from creation through naming, use and destruction" {
	vma-import -f text "$VMA/every-function-v1.8.csv" >a.txt
	grep -q 'fn: vmaCreatePool, args: {memoryTypeIndex: 2, flags: 0, blockSize: 67108864, minBlockCount: 1, maxBlockCount: 0, frameInUseCount: 0, pool: 0x1d85b8b0010}' a.txt
	grep -q 'allocationCreateInfo.pool: 0x1d85b8b0010, allocation: 0x1d85b8b1000,' a.txt
	grep -q 'fn: vmaMakePoolAllocationsLost, args: {pool: 0x1d85b8b0010}' a.txt
	grep -q 'fn: vmaDestroyPool, args: {pool: 0x1d85b8b0010}' a.txt
}

@test "defragmentation keeps its lists of allocations and pools and its context" {
	vma-import -f text "$VMA/every-function-v1.8.csv" >a.txt
	grep -q 'fn: vmaDefragmentationBegin, args: {defragmentationInfo2.flags: 0, defragmentationInfo2.pAllocations: \[0x1d85b8b1000, 0x1d85b8b1200\], defragmentationInfo2.pPools: \[0x1d85b8b0010\], defragmentationInfo2.maxCpuBytesToMove: 18446744073709551615, defragmentationInfo2.maxCpuAllocationsToMove: 4294967295, defragmentationInfo2.maxGpuBytesToMove: 0, defragmentationInfo2.maxGpuAllocationsToMove: 0, defragmentationInfo2.commandBuffer: 0x0, context: 0x1d85b8b1700}' a.txt
	grep -q 'fn: vmaDefragmentationEnd, args: {context: 0x1d85b8b1700}' a.txt
	grep -q 'defragmentationInfo2.pAllocations: \[\], defragmentationInfo2.pPools: \[\],' a.txt
}

@test "the thread id of each line is the thread of its records" {
	vma-import -f text "$VMA/every-function-v1.8.csv" >a.txt
	grep -q '{call: [0-9]*, thread: 4102, fn: vmaCreateImage,' a.txt
	grep -q '{call: [0-9]*, thread: 4101, fn: vmaCreateBuffer,' a.txt
	[ "$(grep -c 'thread: 4102' a.txt)" -gt 5 ]
	[ "$(grep -c 'thread: 4101' a.txt)" -gt 5 ]
}

@test "a tracekit.frame record comes before the first line of each new frame index" {
	vma-import -f text "$VMA/every-function-v1.8.csv" >a.txt
	[ "$(grep -c 'fn: tracekit.frame' a.txt)" -eq 5 ]
	grep -A2 'fn: tracekit.frame, args: {index: 1}' a.txt | grep -q 'fn: vmaAllocateMemory,'
	sed -n 2p a.txt | grep -qx '{call: 0, thread: 4101, fn: tracekit.frame, args: {index: 0}}'
}

@test "a tracekit.time record comes only when the time changes, with the seconds" {
	f="$VMA/vma-docs-example-v1.8.csv"
	vma-import -f text "$f" >a.txt
	sed -n 3p a.txt | grep -qx '{call: 1, thread: 12552, fn: tracekit.time, args: {seconds: !double 0.0}}'
	grep -q 'fn: tracekit.time, args: {seconds: !double 0.662}' a.txt
	times=$(grep ',vma' "$f" | cut -d, -f2 | uniq | wc -l)
	[ "$(grep -c 'fn: tracekit.time' a.txt)" -eq "$times" ]
}

@test "a time not written as VMA writes it travels as a string and comes back as it was" {
	{ recording 1,2; echo '1,0.5,0,vmaCreateAllocator'; echo '1,0.50,0,vmaDestroyAllocator'; echo '1,7.000,0,vmaCreateAllocator'; } >r.csv
	vma-import -f text r.csv >a.txt
	grep -q 'fn: tracekit.time, args: {seconds: "0.5"}' a.txt
	grep -q 'fn: tracekit.time, args: {seconds: "0.50"}' a.txt
	grep -q 'fn: tracekit.time, args: {seconds: !double 7.0}' a.txt
	vma-export a.txt | cmp r.csv -
}

@test "CRLF line ends are accepted" {
	for f in $(samples) "$VMA/every-function-v1.8.csv" "$VMA/glibc-pointers-v1.5.csv"; do
		sed 's/$/\r/' "$f" >crlf.csv
		vma-import crlf.csv | vma-export >back.csv
		sed '/^Config,End/s/ *$//' "$f" | cmp - back.csv || { echo "differs: $f"; return 1; }
	done
}

@test "trailing blanks are accepted where they are not part of a string" {
	f="$VMA/vma-docs-example-v1.8.csv"
	sed -E '/^(Vulkan Memory|1,|Config,|.*,vmaDestroy|.*,vmaCreateAllocator)/s/$/ \t /' "$f" >blanks.csv
	vma-import blanks.csv | vma-export | cmp <(unblank "$f") -
}

@test "every Config line, known or not, is kept in order in the header" {
	f="$VMA/every-function-v1.8.csv"
	vma-import -f text "$f" | head -1 >h.txt
	grep -q 'vma.config.lines: "6"' h.txt
	grep -q 'vma.config.0: "VulkanApiVersion,1,2", vma.config.1: "PhysicalDevice,deviceName,llvmpipe (LLVM 15.0.6, 256 bits)",' h.txt
	grep -q 'vma.config.3: "Extension,VK_AMD_device_coherent_memory,1", vma.config.4: "Macro,VMA_SOME_FUTURE_MACRO,7", vma.config.5: "Unheard,of,config,line "}' h.txt
	vma-import "$f" | vma-export | sed -n '3,10p' | cmp <(sed -n '3,10p' "$f") -
}

@test "a recording of format 1,2 has no Config section and no config properties" {
	vma-import -f text "$VMA/vma-docs-example-v1.2.csv" | head -1 >h.txt
	if grep -q vma.config h.txt; then false; fi
	grep -q 'vma.version: "1,2"' h.txt
}

@test "a generated recording of 100000 calls imports and round-trips" {
	"$TOP/tests/gen-vma-recording.sh" 100000 >big.csv
	[ "$(wc -l <big.csv)" -eq 100009 ]
	vma-import big.csv >big.trace
	vma-export big.trace | cmp big.csv -
	trace-decode big.trace >big.txt
	[ "$(grep -c 'fn: vma' big.txt)" -eq 100000 ]
	[ "$(grep -c 'fn: tracekit.frame' big.txt)" -eq 100 ]
	vma-export big.txt | cmp big.csv -
	# from a pipe, not a mapped file
	cat big.csv | vma-import -z none | vma-export | cmp big.csv -
}

@test "a recording with a Config section and no calls round-trips" {
	{ recording 1,8; echo 'Config,Begin'; echo 'Config,End'; } >r.csv
	vma-import -f text r.csv >a.txt
	[ "$(wc -l <a.txt)" -eq 1 ]
	grep -q 'vma.config.lines: "0"' a.txt
	vma-export a.txt | cmp r.csv -
}

@test "the example pipeline runs from the repository root" {
	cd "$TOP"
	run env BIN="$BIN" examples/vma-pipeline.sh
	[ "$status" -eq 0 ]
	[[ "$output" == *"0 calls to vmaDestroyBuffer left in the edited recording"* ]]
}

@test "a recording on standard input imports as from a file" {
	f="$VMA/every-function-v1.8.csv"
	vma-import "$f" >file.trace
	vma-import <"$f" | cmp file.trace -
	cat "$f" | vma-import - | cmp file.trace -
}

@test "apitrace reads what vma-import writes" {
	command -v apitrace >/dev/null || skip "apitrace is not installed"
	vma-import "$VMA/every-function-v1.8.csv" >a.trace
	full_dump a.trace >dump.txt
	grep -q 'vmaCreatePool(memoryTypeIndex = 2, flags = 0, blockSize = 67108864' dump.txt
	grep -q 'tracekit.frame(index = 4)' dump.txt
}

# ---------------------------------------------------------------------
# Errors: exit 1, and the file, line and column in the message.

@test "a first line that is not VMA's is an error at line 1 column 1" {
	printf 'Vulkan Memory Allocator,Call recording\n1,2\n' >bad.csv
	import_error bad.csv
	[ "$status" -eq 1 ]
	[ "$output" = "vma-import: bad.csv: line 1 column 1, byte 0: not a VMA recording: the first line is 'Vulkan Memory Allocator,Call recording', not 'Vulkan Memory Allocator,Calls recording'" ]
}

@test "empty input is an error" {
	import_error </dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == "vma-import: -: line 1, byte 0: empty input, not a VMA recording"* ]]
}

@test "an unknown format version is an error at line 2" {
	import_bad 1,9
	[ "$output" = "vma-import: bad.csv: line 2 column 1, byte 40: unknown format version 1,9 (vma-import reads 1,0 to 1,8)" ]
	import_bad 2,0
	[[ "$output" == *"line 2 column 1, byte 40: unknown format version 2,0"* ]]
	import_bad 'one,two'
	[[ "$output" == *"line 2 column 1, byte 40: bad format version 'one,two'"* ]]
}

@test "a recording of format 1,3 or later without Config,Begin is an error at line 3" {
	import_bad 1,3 '1,0.000,0,vmaCreateAllocator'
	[[ "$output" == "vma-import: bad.csv: line 3 column 1, byte 44: expected 'Config,Begin'"* ]]
}

@test "a Config section without Config,End is an error at the end of the input" {
	import_bad 1,8 'Config,Begin' 'Macro,VMA_DEBUG_MARGIN,0'
	[ "$output" = "vma-import: bad.csv: line 5, byte 82: the Config section has no 'Config,End' line" ]
}

@test "an unknown function is an error at its line and column" {
	import_bad 1,2 '12552,0.000,0,vmaCreateAllocator' '12552,0.010,0,vmaFrobnicate,000001D85B8B1A80'
	[ "$output" = "vma-import: bad.csv: line 4 column 15, byte 91: unknown function 'vmaFrobnicate'" ]
}

@test "too few columns for a function is an error at the end of its line" {
	import_bad 1,2 '12552,0.017,0,vmaFlushAllocation,000001D85B8B1A80,0'
	[ "$output" = "vma-import: bad.csv: line 3 column 52, byte 95: too few columns: vmaFlushAllocation records 3 parameters, this line has 2" ]
	import_bad 1,2 '12552,0.017'
	[[ "$output" == *"line 3 column 12, byte 55: too few columns for a call"* ]]
}

@test "too many columns for a function is an error at the first extra column" {
	import_bad 1,2 '12552,0.017,0,vmaDestroyImage,000001D85B8B1A80,5,6'
	[ "$output" = "vma-import: bad.csv: line 3 column 48, byte 91: too many columns: vmaDestroyImage records 1 parameter, this line has 3" ]
}

@test "a number that is not a number is an error at its column" {
	import_bad 1,2 '12552,0.017,0,vmaCreateBuffer,0,76x8,1,0,4,2,0,0,0,0000000000000000,000001D85B8B19E0,'
	[ "$output" = "vma-import: bad.csv: line 3 column 33, byte 76: '76x8' is not a number (expected bufferCreateInfo.size, a uint64)" ]
	bad_line 'main,0.017,0,vmaCreateAllocator' \
		"line 3 column 1, byte 44: 'main' is not a number (expected the thread id, a uint32)"
	bad_line '1,soon,0,vmaCreateAllocator' \
		"line 3 column 3, byte 46: 'soon' is not a number (expected the time in seconds, such as 0.017)"
	bad_line '1,0.017,-1,vmaCreateAllocator' \
		"line 3 column 9, byte 52: '-1' is not a number (expected the frame index, a uint32)"
	bad_line '1,0.017,0,vmaMapMemory,' \
		"line 3 column 24, byte 67: '' is not a pointer (allocation), which is spelled like 000001D85B8B1A80 or 0x55d0a1b2c3d0 or (nil)"
}

@test "a number out of range or with a leading zero is an error at its column" {
	bad_line '1,0.017,0,vmaCreatePool,4294967296,0,0,0,0,0,0000000000000010' \
		"line 3 column 25, byte 68: '4294967296' is out of range for memoryTypeIndex (a uint32)"
	bad_line '1,0.017,0,vmaCreatePool,1,0,018446744073709551616,0,0,0,0000000000000010' \
		"line 3 column 29, byte 72: '018446744073709551616' is not blockSize: a uint64 is written without leading zeros"
	bad_line '1,0.017,0,vmaCreatePool,1,0,18446744073709551616,0,0,0,0000000000000010' \
		"line 3 column 29, byte 72: '18446744073709551616' is out of range for blockSize (a uint64)"
}

@test "a bool other than 0 or 1 is an error at its column" {
	import_bad 1,2 '1,0.017,0,vmaAllocateMemoryForBuffer,1024,16,7,2,0,0,1,0,0,0,0000000000000000,000001D85B8B1400,'
	[[ "$output" == *"line 3 column 48, byte 91: '2' is not a bool (requiresDedicatedAllocation), which is 0 or 1" ]]
}

@test "a pointer that is not spelled as %p spells it is an error at its column" {
	for p in 1D85B8B1A80 000001d85b8b1a80 0x0 0X1d85b8b1a80 0x01d85b8b1a80 nil; do
		import_bad 1,2 "1,0.017,0,vmaDestroyImage,$p"
		[[ "$output" == *"line 3 column 27, byte 70: '$p' is not a pointer (allocation)"* ]]
	done
}

@test "pointers spelled two ways in one recording are an error at the odd one" {
	import_bad 1,2 '1,0.000,0,vmaDestroyImage,000001D85B8B1A80' '1,0.001,0,vmaDestroyImage,0x1d85b8b1a80'
	[ "$output" = "vma-import: bad.csv: line 4 column 27, byte 113: pointer '0x1d85b8b1a80' (allocation) is spelled the glibc way, but this recording spells pointers the windows way" ]
}

@test "an empty line among the calls is an error at its line" {
	import_bad 1,2 '1,0.000,0,vmaCreateAllocator' '' '1,0.000,0,vmaDestroyAllocator'
	[[ "$output" == "vma-import: bad.csv: line 4 column 1, byte 73: an empty line"* ]]
}

@test "a recording that cannot be opened is an error naming it" {
	run vma-import no-such.csv
	[ "$status" -eq 1 ]
	[[ "$output" == "vma-import: no-such.csv: cannot open: No such file or directory" ]]
}

@test "a failed import leaves no output file behind" {
	{ recording 1,2; echo '1,0.000,0,vmaCreateAllocator'; echo '1,0.000,0,vmaFrobnicate'; } >bad.csv
	run vma-import -o out.trace bad.csv
	[ "$status" -eq 1 ]
	[ ! -e out.trace ]
	[ -z "$(ls | grep -v bad.csv)" ]
	vma-import -o out.trace "$VMA/vma-docs-example-v1.8.csv"
	vma-export -o out.csv out.trace
	cmp out.csv <(unblank "$VMA/vma-docs-example-v1.8.csv")
}

@test "bad usage exits 2, naming what is wrong, then the usage line" {
	usage_cases vma-import <<'EOF'
--frobnicate|unknown option '--frobnicate'
-f yaml|unknown format 'yaml' (binary, text)
-z lz4|unknown compression 'lz4' (snappy, zstd, brotli, none)
-f text -z brotli|-z is for binary output, not -f text
a.csv b.csv|one input at a time
-o|option '-o' needs a value
EOF
	usage_cases vma-export <<'EOF'
--frobnicate|unknown option '--frobnicate'
-z none|unknown option '-z'
a.trace b.trace|one input at a time
-o|option '-o' needs a value
EOF
}

@test "--help and --version exit 0" {
	run vma-import --help
	[ "$status" -eq 0 ]
	[[ "$output" == "usage: vma-import"* ]]
	run vma-export --version
	[ "$status" -eq 0 ]
	[[ "$output" == "vma-export (tracekit) "* ]]
}

# ---------------------------------------------------------------------
# Export of edited and foreign streams.

@test "dropping a function from the text form exports a recording without it" {
	f="$VMA/vma-docs-example-v1.8.csv"
	vma-import -f text "$f" | grep -v 'fn: vmaDestroyBuffer,' | vma-export >back.csv
	unblank "$f" | grep -v ',vmaDestroyBuffer,' | cmp - back.csv
}

@test "a stream that vma-import did not make is refused" {
	echo '{tracekit: 1, semantic_version: 6, properties: {process.name: "vkcube"}}' >other.txt
	echo '{call: 0, thread: 0, fn: vkCreateInstance}' >>other.txt
	run vma-export other.txt
	[ "$status" -eq 1 ]
	[ "$output" = "vma-export: other.txt: not a VMA stream: the header has no vma.version property (vma-export writes streams that vma-import made)" ]
}

@test "a recording given to vma-export is refused with a hint" {
	run vma-export "$VMA/vma-docs-example-v1.8.csv"
	[ "$status" -eq 1 ]
	[[ "$output" == *"vma-docs-example-v1.8.csv: this is a VMA recording, not a stream: vma-import makes the stream vma-export reads" ]]
}

@test "a record that is not a VMA call is refused with its call number" {
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" >a.txt
	sed -i '5a {call: 99, thread: 1, fn: vkCreateBuffer, args: {size: 1}}' a.txt
	run vma-export -o out.csv a.txt
	[ "$status" -eq 1 ]
	[[ "$output" == "vma-export: a.txt: call 99, byte "*": 'vkCreateBuffer' is not a VMA function"* ]]
	[ ! -e out.csv ]
}

@test "a VMA call with an argument of the wrong kind is refused" {
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" |
		sed 's/bufferCreateInfo.size: 768/bufferCreateInfo.size: "768"/' >a.txt
	run vma-export a.txt
	[ "$status" -eq 1 ]
	[[ "$output" == *": argument bufferCreateInfo.size of vmaCreateBuffer is a string, not a uint64" ]]
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" |
		sed 's/allocation: 0x1d85b8b1620, allocationCreateInfo.pUserData: ""/allocation: 0x1d85b8b1620, allocationCreateInfo.pUserData: "a\\nb"/' >b.txt
	run vma-export b.txt
	[ "$status" -eq 1 ]
	[[ "$output" == *": argument allocationCreateInfo.pUserData of vmaCreateImage holds a line break, which a recording cannot" ]]
}

@test "pseudo-calls other than frame and time are skipped on export" {
	f="$VMA/vma-docs-example-v1.8.csv"
	vma-import -f text "$f" | sed '3a {call: 2, thread: 0, fn: tracekit.setup.begin}' | vma-export >back.csv
	unblank "$f" | cmp - back.csv
}
