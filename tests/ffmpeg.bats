#!/usr/bin/env bats
# ffmpeg's Vulkan filters under the capture layer: a program that only
# computes, and imports each frame's memory from the host
# (VK_EXT_external_memory_host).  The layer must not change what ffmpeg
# writes, the trace must carry the frames ffmpeg uploaded, and the replay
# must run them under the validation layer without a word.  An import the
# host cannot read (a file descriptor) is a warning naming the call.

load helpers

FILTERS=format=rgba,hwupload,scale_vulkan=w=160:h=120,gblur_vulkan,hflip_vulkan,hwdownload,format=rgba

# vkfilter OUT: ffmpeg's Vulkan filter chain over 30 frames of the test
# video, raw RGBA into OUT.
vkfilter() {
	ffmpeg -nostdin -loglevel error -y -init_hw_device vulkan=vk:0 -filter_hw_device vk \
		-i "$W/t.mp4" -frames:v 30 -vf "$FILTERS" -f rawvideo "$1"
}

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	export XDG_RUNTIME_DIR="$W/xdg"
	mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
	unset DISPLAY WAYLAND_DISPLAY VK_INSTANCE_LAYERS
	ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=30 -t 1 \
		-pix_fmt yuv420p "$W/t.mp4"
	# the frames as hwupload gets them: what the trace must hold
	ffmpeg -nostdin -loglevel error -y -i "$W/t.mp4" -frames:v 30 -vf format=rgba \
		-f rawvideo "$W/in.raw"
	local rc=0
	vkfilter "$W/native.raw" || rc=$?
	echo "$rc" >"$W/native.rc"
	rc=0
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ff.trace" \
		vkfilter "$W/layer.raw" || rc=$?
	echo "$rc" >"$W/layer.rc"
	sanitizer_prep
}

# copybacks: "SUBMIT COPY" for each frame hwdownload copied back, in
# order: the vkQueueSubmit after each vkCmdCopyImageToBuffer, and the
# copy's own call.
copybacks() {
	trace-decode "$W/ff.trace" | awk '
		{ match($0, /call: [0-9]+/); no = substr($0, RSTART + 6, RLENGTH - 6) }
		/fn: vkCmdCopyImageToBuffer,/ { copy = no }
		/fn: vkQueueSubmit,/ && copy != "" { print no, copy; copy = "" }'
}

# frame_of DUMP.json N: the pixels of the dumped buffer (DUMP.bin) where
# the sidecar's copy says they are equal frame N of layer.raw (160x120
# RGBA), byte for byte.
frame_of() {
	python3 - "$1" "$2" "$W/layer.raw" <<'PY'
import json, sys
side, n, raw = json.load(open(sys.argv[1])), int(sys.argv[2]), open(sys.argv[3], "rb").read()
data = open(sys.argv[1][:-5] + ".bin", "rb").read()
c = side["copies"][0]
assert c["extent"][:2] == [160, 120] and c["format"] == "VK_FORMAT_R8G8B8A8_UNORM", c
px = b"".join(data[c["offset"] + y * c["row_pitch"]:][:160 * 4] for y in range(120))
frame = raw[n * 160 * 120 * 4:(n + 1) * 160 * 120 * 4]
bad = sum(a != b for a, b in zip(px, frame))
print(f"frame {n}: {bad} bytes differ")
sys.exit(bad != 0 or len(px) != len(frame))
PY
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "ffmpeg's Vulkan filters: the same exit status and output bytes with the layer as without" {
	[ "$(cat "$W/native.rc")" = 0 ]
	[ "$(cat "$W/layer.rc")" = 0 ]
	[ "$(stat -c %s "$W/native.raw")" = $((30 * 160 * 120 * 4)) ]
	cmp "$W/native.raw" "$W/layer.raw"
}

@test "ffmpeg's host-memory imports: the trace holds every frame ffmpeg uploaded" {
	trace-decode "$W/ff.trace" | grep -q 'VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT'
	# each 320x240 RGBA input frame, whole, in an object's bytes as the
	# trace's updates leave them at some submit (the layer compares
	# imported host memory at each submit, and writes what changed)
	trace-decode "$W/ff.trace" | python3 "$TOP/tests/updates.py" frames "$W/in.raw" $((320 * 240 * 4))
}

@test "the buffers ffmpeg reads frames back into, which the device only writes, get no update" {
	# hwdownload's destinations have usage TRANSFER_DST alone; a handle's
	# value comes back after a destroy, so each buffer is followed from
	# its create: the updates of one while it is such a destination
	trace-decode "$W/ff.trace" | awk '
		/fn: vkCreateBuffer,/ {
			match($0, /pBuffer: \[0x[0-9a-f]*\]/); h = substr($0, RSTART + 10, RLENGTH - 11)
			dst[h] = /usage: VK_BUFFER_USAGE_TRANSFER_DST_BIT,/
			if (dst[h]) n++
		}
		/fn: tracekit.update/ {
			match($0, /object: 0x[0-9a-f]*/); h = substr($0, RSTART + 8, RLENGTH - 8)
			if (dst[h]) bad++; else ok++
		}
		END { printf "%d readback buffers, %d updates of them, %d of others\n", n, bad, ok
		      exit !(n > 0 && ok > 0 && bad == 0) }'
}

@test "ffmpeg's trace replays under the validation layer without an error or a warning" {
	run trace-replay --validate "$W/ff.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "--pipeline-jobs on ffmpeg's compute pipelines: their layouts sample through immutable samplers, so the replay makes them itself from the cache; validated, silent" {
	# a set layout with immutable samplers is compatible only with one
	# naming the same samplers: the workers' pipelines are not taken
	# (not under --validate, where the replay takes none anyway)
	run trace-replay --pipeline-jobs 2 --stats=json "$W/ff.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -vc '^{' <<<"$output")" = 0 ]
	n=$(trace-decode "$W/ff.trace" | grep -c 'fn: vkCreateComputePipelines,')
	[ "$n" -ge 1 ]
	python3 -c 'import json,sys
p = json.loads(sys.argv[1])["pipelines_ahead"]
assert p["calls"] == int(sys.argv[2]) and p["taken"] == 0 and p["threads"] == 2, p' "$(grep '^{' <<<"$output")" "$n"
	# and validated: silent
	run trace-replay --validate --pipeline-jobs 2 "$W/ff.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "memory imported from a file descriptor: the replay warns once, naming the call and the import" {
	# the first host-pointer import made an fd import: bytes the trace
	# cannot have
	trace-decode "$W/ff.trace" | awk '
		!done && /fn: vkAllocateMemory,/ && /IMPORT_MEMORY_HOST_POINTER_INFO_EXT/ {
			sub(/\{sType: VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT[^}]*\}/,
			    "{sType: VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, pNext: null, handleType: VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, fd: 7}")
			match($0, /call: [0-9]+/)
			print substr($0, RSTART + 6, RLENGTH - 6) >"call"
			done = 1
		}
		{ print }' >fd.txt
	grep -q IMPORT_MEMORY_FD_INFO_KHR fd.txt
	run trace-replay fd.txt
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c warning)" = 1 ]
	[[ "$output" == *"fd.txt: call $(cat call): warning: memory imported through VkImportMemoryFdInfoKHR: its contents were not captured"* ]]
}

@test "--dump on the submit that copies ffmpeg's last frame back: the buffer holds that frame of its output, byte for byte" {
	copybacks >cb.txt
	[ "$(wc -l <cb.txt)" = 30 ]
	read -r last lastcopy < <(tail -n 1 cb.txt)
	read -r prev _ < <(tail -n 2 cb.txt | head -n 1)
	# the last copy-back's submit and command, and the one before it (the
	# same buffer, another frame: the check can fail), validated
	replay_error --validate --dump "$prev,$last,$lastcopy" --dump-dir d "$W/ff.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	ls d
	[ "$(ls d/call-"$last".buffer-0x*-dst.json | wc -l)" = 1 ]
	frame_of d/call-"$last".buffer-0x*-dst.json 29
	frame_of d/call-"$prev".buffer-0x*-dst.json 28
	run frame_of d/call-"$prev".buffer-0x*-dst.json 29
	[ "$status" -ne 0 ]
	# the vkCmdCopyImageToBuffer itself: the same bytes, read where it was
	# recorded
	frame_of d/call-"$lastcopy".buffer-0x*-dst.json 29
	# the sidecar says where the pixels are
	grep -q '"copies": \[{"offset": [0-9]*, "row_length": [0-9]*, "image_height": 120, "extent": \[160, 120, 1\], "format": "VK_FORMAT_R8G8B8A8_UNORM", "row_pitch": [0-9]*}\]' d/call-"$last".buffer-0x*-dst.json
}

@test "--dump on ffmpeg's last vkCmdDispatch: the storage image it wrote, as a PNG of the output frame's size (sanitizer build)" {
	[ -x "$TOP/build/asan/bin/trace-replay" ] || skip "make build/asan/bin/trace-replay first"
	n=$(trace-decode "$W/ff.trace" | grep 'fn: vkCmdDispatch,' | tail -n 1 | grep -o 'call: [0-9]*' | cut -c7-)
	run sanitized "$TOP/build/asan/bin/trace-replay" --dump "$n" --dump-dir d "$W/ff.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	ls d
	[ "$(identify -format '%w %h' d/call-"$n".image-0x*-storage.png)" = "160 120" ]
}
