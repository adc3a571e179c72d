#!/usr/bin/env bats
# trace-replay on VMA recordings: every sample replays on llvmpipe with
# statistics that match the recording, under the validation layer too;
# the warnings, the refusals and the errors it reports, and where.
#
# TRACE_REPLAY=build/asan/bin/trace-replay runs the whole suite on the
# sanitizer build; one test below runs it on the samples in any case.

load helpers

VMA="$DATA/vma"
setup_file() {
	# llvmpipe needs no display, but Mesa and the loader look for this
	export XDG_RUNTIME_DIR="$BATS_FILE_TMPDIR/xdg"
	mkdir -p "$XDG_RUNTIME_DIR"
	chmod 700 "$XDG_RUNTIME_DIR"
	sanitizer_prep
	"$TOP/tests/gen-vma-recording.sh" 100000 | vma-import -o "$BATS_FILE_TMPDIR/big.trace"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

recording() {
	printf 'Vulkan Memory Allocator,Calls recording\n%s\n' "$1"
}

# json FILE EXPR: a value of the --stats=json object in FILE (python3).
json() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"s": s}))' "$1" "$2"
}

# What a recording in text form creates, counted without trace-replay:
# "allocations buffers images pools lost".
expected_counts() {
	python3 -c 'import re, sys
n = dict(allocations=0, buffers=0, images=0, pools=0, lost=0)
for line in open(sys.argv[1]):
    m = re.search(r"fn: (vma\w+)", line)
    if not m:
        continue
    f = m.group(1)
    if f == "vmaCreateBuffer":
        n["buffers"] += 1; n["allocations"] += 1
    elif f == "vmaCreateImage":
        n["images"] += 1; n["allocations"] += 1
    elif f == "vmaCreatePool":
        n["pools"] += 1
    elif f == "vmaCreateLostAllocation":
        n["lost"] += 1
    elif f == "vmaAllocateMemoryPages":
        n["allocations"] += len(re.search(r"allocations: \[([^]]*)\]", line).group(1).split(","))
    elif f.startswith("vmaAllocateMemory"):
        n["allocations"] += 1
print(n["allocations"], n["buffers"], n["images"], n["pools"], n["lost"])' "$1"
}

replayed_counts() {
	json "$1" '" ".join(str(s["created"][k]) for k in ("allocations", "buffers", "images", "pools", "lost_allocations"))'
}

@test "every sample recording replays on llvmpipe with the counts of the recording" {
	for f in "$VMA"/*.csv; do
		vma-import -f text "$f" >rec.txt
		replay --stats=json rec.txt >stats.json
		want=$(expected_counts rec.txt)
		got=$(replayed_counts stats.json)
		[ "$want" = "$got" ] || { echo "$f: recording $want, replay $got"; return 1; }
		[ "$(json stats.json 's["failed"]')" = 0 ] || { echo "$f: failed"; return 1; }
		[ "$(json stats.json 's["device"]["name"]')" != "" ]
	done
	# the counts are not all zero: the test could fail
	[ "$(expected_counts "$BATS_TEST_TMPDIR/rec.txt")" = "8 4 4 0 0" ]
}

@test "the statistics count calls by function, threads and the recording's time span" {
	vma-import "$VMA/every-function-v1.8.csv" >rec.trace
	replay --stats=json rec.trace >s.json
	[ "$(json s.json 's["calls"]')" = 32 ]
	[ "$(json s.json 's["functions"]["vmaFreeMemory"]')" = 4 ]
	[ "$(json s.json 's["functions"]["vmaDefragmentationBegin"]')" = 2 ]
	[ "$(json s.json 's["recording"]["threads"]')" = 2 ]
	[ "$(json s.json 's["recording"]["seconds"]')" = 0.014 ]
	[ "$(json s.json 's["recording"]["version"]')" = "1,8" ]
	[ "$(json s.json 's["defragmentations"]')" = 2 ]
	# requiresDedicatedAllocation and the prefers hint: memory of their own
	[ "$(json s.json 's["device_memory"]["dedicated_allocations"] >= 2')" = True ]
	# per type and per heap, and they add up
	[ "$(json s.json 'sum(t["allocations"] for t in s["memory_types"]) == s["created"]["allocations"]')" = True ]
	[ "$(json s.json 'sum(h["device_memory_bytes"] for h in s["heaps"]) == s["device_memory"]["device_memory_bytes"]')" = True ]
	[ "$(json s.json 'all(h["peak_bytes_in_use"] <= h["peak_device_memory_bytes"] for h in s["heaps"])')" = True ]
}

@test "--stats prints what VmaReplay printed, in text" {
	vma-import "$VMA/vma-docs-example-v1.8.csv" >rec.trace
	replay --stats rec.trace >s.txt
	grep -q '^Playback time: [0-9.]* s (19 calls, [0-9]* calls/s)$' s.txt
	grep -q '^Recording (format 1,8): 0.695 s, 1 thread$' s.txt
	grep -q '^Created: 8 allocations, 4 buffers, 4 images, 0 pools, 0 lost allocations$' s.txt
	grep -q '^Device memory allocations: [1-9][0-9]*, .* in total$' s.txt
	grep -q '^  memory type 0 (heap 0, .*): [1-9][0-9]* device memory allocations' s.txt
	grep -q '^  heap 0 (.*): .*; peak device memory .*; peak in use ' s.txt
}

@test "--stats shows the translation of each recorded memory type, with flags" {
	vma-import "$VMA/vma-docs-example-v1.8.csv" >rec.trace
	replay --stats rec.trace >s.txt
	grep -q '^Memory type translation (recorded -> replay):$' s.txt
	grep -q '^  1 (heap 1, HOST_VISIBLE|HOST_COHERENT) -> [0-9]* (heap [0-9]*, .*HOST_VISIBLE' s.txt
	[ "$(grep -c '^  [0-3] (heap' s.txt)" = 4 ]
	replay --stats=json rec.trace >s.json
	[ "$(json s.json 'len(s["translation"])')" = 4 ]
	[ "$(json s.json 's["translation"][2]["recorded_flags"]')" = "DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT" ]
	# a recording without its memory types says so
	vma-import "$VMA/vma-docs-example-v1.2.csv" | replay --stats >s2.txt
	grep -q 'types chosen by flags only' s2.txt
}

@test "--validate reports no validation error on any sample" {
	for f in "$VMA"/*.csv; do
		vma-import "$f" >rec.trace
		replay_error --validate --stats=json rec.trace
		[ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
		! grep -q 'validation' <<<"$output" || { echo "$f: $output"; return 1; }
	done
}

@test "every encoding replays alike: binary, raw, text, from a pipe" {
	f="$VMA/vma-docs-example-v1.5.csv"
	vma-import "$f" >a.trace
	vma-import -z none "$f" >b.trace
	vma-import -z brotli "$f" >c.trace
	vma-import -f text "$f" >d.txt
	want=$(replay --stats=json a.trace >s.json && replayed_counts s.json)
	for t in b.trace c.trace d.txt; do
		replay --stats=json "$t" >s.json
		[ "$(replayed_counts s.json)" = "$want" ]
	done
	vma-import "$f" | replay --stats=json >s.json
	[ "$(replayed_counts s.json)" = "$want" ]
}

@test "a destroy of an allocation no call created warns with the call number and goes on" {
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" |
		sed 's/vmaDestroyBuffer, args: {allocation: 0x1d85b8b19e0}/vmaDestroyBuffer, args: {allocation: 0xbad0}/' >rec.txt
	n=$(grep -o 'call: [0-9]*, [^}]*0xbad0' rec.txt | grep -o '^call: [0-9]*' | cut -d' ' -f2)
	[ -n "$n" ]
	replay_error rec.txt
	[ "$status" -eq 0 ]
	grep -q "rec.txt: call $n: warning: vmaDestroyBuffer of allocation 0xbad0, which no call created" <<<"$output"
}

@test "an allocation alive at vmaDestroyAllocator warns with both call numbers and goes on" {
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" |
		grep -v 'vmaDestroyImage, args: {allocation: 0x1d85b8b1620}' >rec.txt
	made=$(grep 'vmaCreateImage, .*allocation: 0x1d85b8b1620' rec.txt | grep -o '^{call: [0-9]*' | cut -d' ' -f2)
	end=$(grep 'vmaDestroyAllocator' rec.txt | grep -o '^{call: [0-9]*' | cut -d' ' -f2)
	replay_error --stats rec.txt
	[ "$status" -eq 0 ]
	grep -q "call $end: warning: vmaDestroyAllocator with allocation 0x1d85b8b1620 (made by call $made) still alive" <<<"$output"
	# -q: quiet, the replay the same
	replay_error -q rec.txt
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "an unmap of an allocation that is not mapped warns, and a flood of warnings is cut short" {
	{
		recording 1,8
		echo 'Config,Begin'
		echo 'Config,End'
		echo '1,0.000,0,vmaCreateAllocator'
		echo '1,0.000,0,vmaCreateBuffer,0,1024,1,0,0,2,0,0,0,0000000000000000,0000000000001000,'
		for i in $(seq 30); do echo '1,0.001,0,vmaUnmapMemory,0000000000001000'; done
		echo '1,0.002,0,vmaDestroyBuffer,0000000000001000'
		echo '1,0.002,0,vmaDestroyAllocator'
	} >r.csv
	vma-import r.csv >rec.trace
	replay_error --stats=json rec.trace
	[ "$status" -eq 0 ]
	[ "$(grep -c 'warning: vmaUnmapMemory of allocation 0x1000, which is not mapped' <<<"$output")" = 10 ]
	grep -q '20 more warnings like the above not shown' <<<"$output"
	replay --stats=json rec.trace >s.json 2>/dev/null
	[ "$(json s.json 's["warnings"]')" = 30 ]
}

@test "custom pools keep their minimum of blocks and stop at their maximum" {
	{
		recording 1,8
		echo 'Config,Begin'
		echo 'Config,End'
		echo '1,0.000,0,vmaCreateAllocator'
		# a pool of 1 MiB blocks, at least 2, at most 2
		echo '1,0.000,0,vmaCreatePool,0,0,1048576,2,2,0,0000000000000100'
		for i in 1 2 3; do
			echo "1,0.000,0,vmaCreateBuffer,0,786432,1,0,0,1,0,0,0,0000000000000100,000000000000100$i,"
		done
		echo '1,0.001,0,vmaDestroyBuffer,0000000000001001'
		echo '1,0.001,0,vmaDestroyBuffer,0000000000001002'
		echo '1,0.001,0,vmaDestroyBuffer,0000000000001003'
		echo '1,0.001,0,vmaDestroyPool,0000000000000100'
		echo '1,0.002,0,vmaDestroyAllocator'
	} >r.csv
	vma-import r.csv >rec.trace
	replay_error rec.trace
	[ "$status" -eq 0 ]
	# two fit, one block each; the third finds no room and no third block
	grep -q 'call [0-9]*: warning: vmaCreateBuffer: no memory for' <<<"$output"
	replay --stats=json rec.trace >s.json 2>/dev/null
	[ "$(json s.json 's["created"]["pools"]')" = 1 ]
	[ "$(json s.json 's["failed"]')" = 1 ]
	[ "$(json s.json 's["device_memory"]["device_memory_allocations"]')" = 2 ]
	[ "$(json s.json 's["device_memory"]["device_memory_bytes"]')" = 2097152 ]
}

@test "vmaMakePoolAllocationsLost takes the memory of what may become lost and was not used" {
	{
		recording 1,8
		echo 'Config,Begin'
		echo 'Config,End'
		echo '1,0.000,0,vmaCreateAllocator'
		echo '1,0.000,0,vmaCreatePool,0,0,1048576,0,0,1,0000000000000100'
		# CAN_BECOME_LOST (8): lost when unused for more than 1 frame
		echo '1,0.000,0,vmaCreateBuffer,0,4096,1,0,8,1,0,0,0,0000000000000100,0000000000001001,'
		echo '1,0.000,0,vmaCreateBuffer,0,4096,1,0,8,1,0,0,0,0000000000000100,0000000000001002,'
		echo '1,0.000,0,vmaCreateBuffer,0,4096,1,0,0,1,0,0,0,0000000000000100,0000000000001003,'
		echo '1,0.001,5,vmaTouchAllocation,0000000000001002'
		echo '1,0.001,5,vmaMakePoolAllocationsLost,0000000000000100'
		echo '1,0.002,6,vmaDestroyBuffer,0000000000001001'
		echo '1,0.002,6,vmaDestroyBuffer,0000000000001002'
		echo '1,0.002,6,vmaDestroyBuffer,0000000000001003'
		echo '1,0.002,6,vmaDestroyPool,0000000000000100'
		echo '1,0.002,6,vmaDestroyAllocator'
	} >r.csv
	vma-import r.csv >rec.trace
	replay_error --validate --stats=json rec.trace
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	replay --stats=json rec.trace >s.json
	[ "$(json s.json 's["made_lost"]')" = 1 ]
}

@test "a GL trace is refused: only Vulkan traces and VMA recordings replay" {
	replay_error "$DATA/glxgears.trace"
	[ "$status" -eq 1 ]
	grep -q 'glxgears.trace: this is .*trace: only Vulkan traces (api: Vulkan, the capture layer.s) and VMA recordings (see vma-import) replay' <<<"$output"
	[ "$(wc -l <<<"$output")" = 1 ]
}

@test "a malformed record stops with exit 1, naming the file, the call and the byte" {
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" |
		sed 's/bufferCreateInfo.size: 768,/bufferCreateInfo.size: "big",/' >rec.txt
	replay_error rec.txt
	[ "$status" -eq 1 ]
	grep -q '^trace-replay: rec.txt: call [0-9]*, byte [0-9]*: argument bufferCreateInfo.size of vmaCreateBuffer is .*string, not a number$' <<<"$output"
	vma-import -f text "$VMA/vma-docs-example-v1.8.csv" |
		sed 's/fn: vmaSetAllocationUserData/fn: vmaFrobnicate/' >bad.txt
	replay_error bad.txt
	[ "$status" -eq 1 ]
	grep -q "call 5, byte [0-9]*: 'vmaFrobnicate' is not a VMA function" <<<"$output"
	# a stream cut short is the reader's error
	head -c 2000 rec.txt >cut.txt
	replay_error cut.txt
	[ "$status" -eq 1 ]
}

@test "bad usage exits 2, naming what is wrong, then the usage line" {
	vma-import "$VMA/vma-docs-example-v1.8.csv" >rec.trace
	usage_cases "$REPLAY" rec.trace <<'EOF'
--bogus|unknown option '--bogus'
--gpu x|--gpu wants a device number, not 'x'
--stats=xml|--stats=xml: text or json
--block-size 0|--block-size wants a size such as 64M, not '0'
a|one input at a time
EOF
	# --gpu with no number takes the input for one
	usage_cases "$REPLAY" <<'EOF'
--gpu rec.trace|--gpu wants a device number, not 'rec.trace'
EOF
	# --gpu N past the devices lists them
	replay_error --gpu 99 rec.trace
	[ "$status" -eq 2 ]
	grep -q -- '^trace-replay: --gpu 99: there .* (0: ' <<<"$output"
	run "$REPLAY" --help
	[ "$status" -eq 0 ]
	grep -q -- '--validate' <<<"$output"
	run "$REPLAY" --version
	[ "$status" -eq 0 ]
	grep -q '^trace-replay (tracekit) ' <<<"$output"
}

@test "a generated recording of 100000 calls replays and reports calls per second" {
	replay --stats=json "$BATS_FILE_TMPDIR/big.trace" >s.json
	[ "$(json s.json 's["calls"]')" = 100000 ]
	[ "$(json s.json 's["created"]["buffers"]')" = 12500 ]
	[ "$(json s.json 's["created"]["images"]')" = 12500 ]
	[ "$(json s.json 's["maps"]')" = 12500 ]
	[ "$(json s.json 's["warnings"]')" = 0 ]
	[ "$(json s.json 's["recording"]["threads"]')" = 3 ]
	[ "$(json s.json 's["calls_per_second"] > 0')" = True ]
	# what the allocator held stayed bounded: few blocks, little in use
	[ "$(json s.json 's["device_memory"]["device_memory_allocations"] <= 2')" = True ]
	echo "# replay: $(json s.json 'int(s["calls_per_second"])') calls/s on llvmpipe" >&3
}

@test "the sanitizer build replays every sample, validated, without an error or a leak" {
	asan="$ASAN_BIN/trace-replay"
	[ -x "$asan" ] || skip "make build/asan/bin/trace-replay first"
	for f in "$VMA"/*.csv; do
		vma-import "$f" >rec.trace
		run sanitized "$asan" --validate --stats=json rec.trace
		[ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
	done
	run sanitized "$asan" -q "$BATS_FILE_TMPDIR/big.trace"
	[ "$status" -eq 0 ]
}
