#!/usr/bin/env bats
# examples/vkexample: the Vulkan program the capture and replay tests run.
# Headless by default: it renders offscreen on the first Vulkan device
# (llvmpipe here), writes frames as PNG, and logs the values it passed to a
# few calls.  With --present it also shows each frame in an X window (Xvfb
# here), so its capture has frames: the full replay and trace-trim's cuts
# of it are checked against the program's own PNGs.  Built by `make
# examples` (build/examples/vkexample).

load helpers

EX="$TOP/build/examples/vkexample"

# the --present capture: its frames, and those the program saved as PNG
NFRAMES=1000
SHOTS=0,1,20,500,999

setup_file() {
	[ -x "$TOP/build/examples/vkexample" ] ||
		{ echo "build/examples/vkexample is not built (make examples)" >&3; return 1; }
	export W="$BATS_FILE_TMPDIR"
	start_xvfb
	# the tests run without a display; those that want one take this
	export XDISPLAY="$DISPLAY"
	local rc=0
	VK_LAYER_PATH="$TOP/build/layer" VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
		TRACEKIT_OUTPUT="$W/present.trace" timeout 120 "$EX" --present \
		--frames $NFRAMES --png-dir "$W/app" --dump-frames $SHOTS >"$W/capture.log" 2>&1 ||
		rc=$?
	echo $rc >"$W/capture.rc"
	# the full replay, headless and validated: the reference for the trims
	rc=0
	env -u DISPLAY trace-replay --validate --screenshot $SHOTS --screenshot-dir "$W/full" \
		"$W/present.trace" >"$W/full.err" 2>&1 || rc=$?
	echo $rc >"$W/full.rc"
}

teardown_file() {
	stop_xvfb
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	# headless: no display of any kind, a private runtime directory
	unset DISPLAY WAYLAND_DISPLAY
	export XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg"
	mkdir -p "$XDG_RUNTIME_DIR"
	chmod 700 "$XDG_RUNTIME_DIR"
}

# png_stats FILE: "WIDTH HEIGHT BACKGROUND_PERCENT DISTINCT_COLOURS", where
# the background is the colour of the top-left pixel (also checked to be
# the colour of the other three corners).  Decodes vkexample's own PNGs
# (8-bit RGBA, filter 0) with zlib only.
png_stats() {
	python3 - "$1" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0], "bad CRC"
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert (depth, ctype) == (8, 6), "not 8-bit RGBA"
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
row = w * 4
px = []
for y in range(h):
    line = raw[y * (row + 1):(y + 1) * (row + 1)]
    assert line[0] == 0, "filter %d" % line[0]
    px.extend(bytes(line[1 + x * 4:5 + x * 4]) for x in range(w))
bg = px[0]
assert px[w - 1] == bg and px[-1] == bg and px[-w] == bg, "corners differ"
assert bg[:3] != b"\0\0\0", "background is black"
print(w, h, 100 * sum(p == bg for p in px) // len(px), len(set(px)))
EOF
}

@test "runs headless on llvmpipe: 10 frames by default, exit 0" {
	run "$EX"
	[ "$status" -eq 0 ]
	[[ "$output" == *"device 0: llvmpipe"* ]]
	[[ "${lines[-1]}" == "frames 10" ]]
}

@test "--validate: the Khronos validation layer, synchronization checks on, reports no error" {
	[ -e /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] ||
		skip "vulkan-validationlayers not installed"
	VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
		run bash -c '"$1" --validate --frames 4 --png-dir png --dump-frames 1,3 2>err' _ "$EX"
	cat err
	[ "$status" -eq 0 ]
	# the layer was really there: the instance was created with it
	[[ "$output" == *"vkCreateInstance apiVersion=4198400 enabledLayerCount=1 enabledExtensionCount=1"* ]]
	[ "$(grep -ci 'validation error' err)" -eq 0 ]
}

@test "--depth-read-only: dynamic rendering, then bars in passes whose depth image is read-only; validation, synchronization checks on, reports nothing; the cube as without it, the bars over it" {
	VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
		run bash -c '"$1" --validate --depth-read-only --frames 4 --png-dir png \
		--dump-frames 3 2>err' _ "$EX"
	cat err
	[ "$status" -eq 0 ]
	# Vulkan 1.3 (4206592), for vkCmdBeginRendering
	[[ "$output" == *"vkCreateInstance apiVersion=4206592 enabledLayerCount=1"* ]]
	[ ! -s err ]
	"$EX" --frames 4 --png-dir plain --dump-frames 3 >/dev/null
	# the bars' pixels alone differ (6164 measured): their rectangles
	# hold about 9,700, part of one hidden by the cube, stripes of the
	# other by the mask
	local n
	n=$(compare -metric AE plain/frame-3.png png/frame-3.png null: 2>&1 || true)
	echo "$n pixels differ"
	[ "$n" -ge 3000 ]
	[ "$n" -le 9800 ]
}

@test "--depth-read-only-rp: the same passes as render passes, the bars' depth attachments read-only from initialLayout to finalLayout; validation, synchronization checks on, reports nothing; the frame as --depth-read-only's" {
	VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
		run bash -c '"$1" --validate --depth-read-only-rp --frames 4 --png-dir png \
		--dump-frames 3 2>err' _ "$EX"
	cat err
	[ "$status" -eq 0 ]
	# the example's Vulkan 1.1 (4198400): no dynamic rendering asked
	[[ "$output" == *"vkCreateInstance apiVersion=4198400 enabledLayerCount=1"* ]]
	[ ! -s err ]
	"$EX" --depth-read-only --frames 4 --png-dir dr --dump-frames 3 >/dev/null
	cmp dr/frame-3.png png/frame-3.png
	# and the bars are there: 6164 pixels from the frame without them
	"$EX" --frames 4 --png-dir plain --dump-frames 3 >/dev/null
	local n
	n=$(compare -metric AE plain/frame-3.png png/frame-3.png null: 2>&1 || true)
	echo "$n pixels differ"
	[ "$n" -ge 3000 ]
}

@test "two runs write byte-identical PNGs for the same frame, whichever frames are dumped" {
	"$EX" --frames 6 --png-dir a >/dev/null
	"$EX" --frames 6 --png-dir b >/dev/null
	"$EX" --frames 6 --png-dir c --dump-frames 5,2 >/dev/null
	local f
	for f in 0 1 2 3 4 5; do
		cmp a/frame-$f.png b/frame-$f.png
	done
	cmp a/frame-2.png c/frame-2.png
	cmp a/frame-5.png c/frame-5.png
	[ "$(ls c)" = "$(printf 'frame-2.png\nframe-5.png')" ]
}

@test "each frame differs: the uniform buffer's rotation and the compute pattern both show" {
	"$EX" --frames 6 --png-dir spin >/dev/null
	"$EX" --frames 6 --png-dir still --still >/dev/null
	# six different pictures
	[ "$(md5sum spin/*.png | cut -d' ' -f1 | sort -u | wc -l)" -eq 6 ]
	# rotation fixed: the frames still differ, by the compute pass alone
	[ "$(md5sum still/*.png | cut -d' ' -f1 | sort -u | wc -l)" -eq 6 ]
	# same compute frame, other matrix in the uniform buffer: differs
	cmp spin/frame-0.png still/frame-0.png
	if cmp -s spin/frame-3.png still/frame-3.png; then false; fi
}

@test "a frame is a textured shape on the clear colour, not blank" {
	"$EX" --frames 3 --png-dir png >/dev/null
	run png_stats png/frame-2.png
	[ "$status" -eq 0 ]
	echo "$output"
	read -r w h bg colours <<<"$output"
	[ "$w" -eq 256 ]
	[ "$h" -eq 256 ]
	# the cube covers a good part of the picture, and not all of it
	[ "$bg" -ge 20 ]
	[ "$bg" -le 85 ]
	# textured, not flat: many colours
	[ "$colours" -ge 200 ]
}

@test "logs the values it passed, one call per line" {
	run "$EX" --frames 2
	[ "$status" -eq 0 ]
	local want
	while IFS= read -r want; do
		printf '%s\n' "$output" | grep -qFx -- "$want" || { echo "missing: $want"; return 1; }
	done <<'EOF'
vkCreateInstance apiVersion=4198400 enabledLayerCount=0 enabledExtensionCount=0
vkCreateDevice queueFamilyIndex=0 queueCount=1 enabledExtensionCount=0
vkCreateImage imageType=1 format=37 extent=256x256x1 mipLevels=1 arrayLayers=1 samples=1 tiling=0 usage=0x11
vkCreateImage imageType=1 format=37 extent=64x64x1 mipLevels=1 arrayLayers=1 samples=1 tiling=0 usage=0x6
vkCreateImage imageType=1 format=37 extent=128x128x1 mipLevels=1 arrayLayers=1 samples=1 tiling=0 usage=0xc
vkCreateSampler magFilter=1 minFilter=1 mipmapMode=0 addressModeU=0 addressModeV=0 addressModeW=0
vkCreateSampler magFilter=0 minFilter=0 mipmapMode=0 addressModeU=2 addressModeV=2 addressModeW=2
vkCreateBuffer size=840 usage=0xc0
vkCreateBuffer size=512 usage=0x10
vkCreateBuffer size=262144 usage=0x2
vkCreateBuffer size=16384 usage=0x1
vkMapMemory offset=0 size=512
vkCmdCopyBufferToImage bufferOffset=0 imageExtent=64x64x1
vkCreateDescriptorPool maxSets=3 poolSizeCount=3
vkCmdDispatch groupCountX=16 groupCountY=16 groupCountZ=1
vkCmdBindIndexBuffer offset=768 indexType=0
vkCmdDrawIndexed indexCount=36 instanceCount=1 firstIndex=0 vertexOffset=0 firstInstance=0
EOF
	# every vk* line has the grep-able form: name, then key=value pairs
	printf '%s\n' "$output" | grep '^vk' >calls
	[ "$(wc -l <calls)" -ge 20 ]
	[ "$(grep -cvE '^vk[A-Za-z0-9]+( [A-Za-z0-9]+=[^ =]+)+$' calls)" -eq 0 ]
	# and the log is the same on every run
	run "$EX" --frames 2
	[ "$(printf '%s\n' "$output" | grep '^vk')" = "$(cat calls)" ]
}

# capture ENV...: runs vkexample --frames 5 under a capture layer, its log to
# log.txt (the layers' files in the test's directory)
capture() {
	env VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d" "$@" \
		"$EX" --frames 5 >log.txt
}

@test "captured under our layer, every call it logged is in the text form with exactly those values" {
	capture VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=ex.trace
	trace-decode ex.trace >ex.txt
	# the same log as without the layer, and a log worth checking
	diff <("$EX" --frames 5 | grep '^vk') <(grep '^vk' log.txt)
	[ "$(grep -c '^vk' log.txt)" -ge 25 ]
	# each line is found, in order, in a call of that name (enum and flag
	# names turned into numbers by vk.xml, not by our schema)
	run python3 "$TOP/tests/vkcompare.py" log ex.txt log.txt
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$(grep -c '^vk' log.txt) found with exactly those values"* ]]
	# the check can fail: a size, a format, a flag and an extent off by one
	local edit
	for edit in 's/size=840 /size=841 /' 's/format=126 /format=127 /' \
		's/usage=0x6$/usage=0x4/' 's/extent=128x128x1 /extent=128x127x1 /'; do
		sed "$edit" log.txt >bad.txt
		if cmp -s log.txt bad.txt; then false; fi # the edit took
		run python3 "$TOP/tests/vkcompare.py" log ex.txt bad.txt
		[ "$status" -eq 1 ]
	done
}

@test "every Vulkan command it calls is in our trace with the argument values GFXReconstruct recorded" {
	# GFXReconstruct's capture layer, on a run of its own, is the oracle:
	# the calls, in order, and every value it shows (handles matched object
	# for object, host pointers left out); the loader's own calls through
	# the layers (vkEnumerateDeviceExtensionProperties) only we record
	capture VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=ex.trace
	capture VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE=ex.gfxr \
		GFXRECON_CAPTURE_FILE_TIMESTAMP=false
	trace-decode ex.trace >ex.txt
	gfxrecon-convert --output stdout ex.gfxr >ex.json 2>/dev/null
	run python3 "$TOP/tests/vkcompare.py" gfxr ex.txt ex.json
	echo "$output"
	[ "$status" -eq 0 ]
	# not vacuous: the example's 60-odd distinct commands, thousands of values
	[ "$(grep -o '"name":"vk[A-Za-z0-9]*"' ex.json | sort -u | wc -l)" -ge 60 ]
	read -r calls _ _ _ values _ <<<"${lines[-1]}"
	[ "$calls" -ge 200 ]
	[ "$values" -ge 2000 ]
	# and it can fail: one value changed in our text
	sed '0,/fn: vkCmdDrawIndexed, /s/indexCount: 36,/indexCount: 35,/' ex.txt >bad.txt
	if cmp -s ex.txt bad.txt; then false; fi
	run python3 "$TOP/tests/vkcompare.py" gfxr bad.txt ex.json
	[ "$status" -eq 1 ]
	[[ "$output" == *"vkCmdDrawIndexed (call "*").indexCount: '35', GFXReconstruct has 36"* ]]
}

@test "a Vulkan error names the call and the VkResult, exit 1" {
	VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json \
		run "$EX"
	[ "$status" -eq 1 ]
	[[ "$output" == *"vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER"* ]]
}

@test "bad options: a clear message, exit 1" {
	run "$EX" --gpu 99
	[ "$status" -eq 1 ]
	[[ "$output" == *"--gpu 99: there are only"* ]]
	run "$EX" --frames many
	[ "$status" -eq 1 ]
	[[ "$output" == *"--frames: bad number 'many'"* ]]
	run "$EX" --dump-frames 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"--dump-frames needs --png-dir"* ]]
	run "$EX" --bogus
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown option '--bogus'"* ]]
	# --present and no X server to present to
	run "$EX" --present
	[ "$status" -eq 1 ]
	[[ "$output" == *"--present: DISPLAY is not set"* ]]
	DISPLAY=:nowhere run "$EX" --present
	[ "$status" -eq 1 ]
	[[ "$output" == *"--present: cannot open the X display ':nowhere'"* ]]
}

# --- --present: a window, a swapchain, frames to trim ---

ae() {
	compare -metric AE "$1" "$2" null: 2>&1 || true
}

@test "--present: a swapchain of the window's size, validation (synchronization too) silent, the pixels of the headless run" {
	[ -e /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] ||
		skip "vulkan-validationlayers not installed"
	DISPLAY=$XDISPLAY VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
		run bash -c '"$1" --present --validate --frames 5 --png-dir win --dump-frames 1,4 2>err' _ "$EX"
	cat err
	[ "$status" -eq 0 ]
	# no message at all, warnings included
	[ ! -s err ]
	# the validation layer, surface and xcb surface; the swapchain extension
	[[ "$output" == *"vkCreateInstance apiVersion=4198400 enabledLayerCount=1 enabledExtensionCount=3"* ]]
	[[ "$output" == *"vkCreateDevice queueFamilyIndex=0 queueCount=1 enabledExtensionCount=1"* ]]
	# 256x256 like the window; images written by a transfer (the blit)
	printf '%s\n' "$output" | grep -qE '^vkCreateSwapchainKHR minImageCount=[0-9]+ imageFormat=(37|44) imageExtent=256x256 imageUsage=0x2 presentMode=2$'
	[[ "${lines[-1]}" == "frames 5" ]]
	# presenting changes nothing in what is rendered
	"$EX" --frames 5 --png-dir head --dump-frames 1,4 >/dev/null
	cmp win/frame-1.png head/frame-1.png
	cmp win/frame-4.png head/frame-4.png
}

@test "captured with --present: one vkQueuePresentKHR a frame; the full replay, validated, shows the program's frames pixel for pixel" {
	cat "$W/capture.log"
	[ "$(cat "$W/capture.rc")" = 0 ]
	[ "$(trace-decode "$W/present.trace" | grep -c 'fn: vkQueuePresentKHR')" = $NFRAMES ]
	cat "$W/full.err"
	[ "$(cat "$W/full.rc")" = 0 ]
	[ ! -s "$W/full.err" ]
	local f
	for f in ${SHOTS//,/ }; do
		echo "frame $f: $(ae "$W/app/frame-$f.png" "$W/full/frame-$f.png") pixels differ"
		[ "$(ae "$W/app/frame-$f.png" "$W/full/frame-$f.png")" = 0 ]
	done
	# and the comparison can fail: consecutive frames differ
	[ "$(ae "$W/app/frame-0.png" "$W/full/frame-1.png")" -gt 1000 ]
}

# trim_check F [TRIM OPTIONS]: trims the --present capture to frame(s) F,
# replays the trim validated, and compares its last frame with the full
# replay's and with the program's own PNG.
trim_check() {
	local f=$1 last=${1#*-}
	shift
	trace-trim --frames "$f" "$@" -o "t$f.trace" "$W/present.trace"
	run trace-replay --validate --screenshot "$last" -o "t$f.png" "t$f.trace"
	echo "frames $f: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	echo "frame $last of the trim $f: $(ae "$W/full/frame-$last.png" "t$f.png") pixels differ"
	[ "$(ae "$W/full/frame-$last.png" "t$f.png")" = 0 ]
	[ "$(ae "$W/app/frame-$last.png" "t$f.png")" = 0 ]
}

@test "--present capture trimmed to frame 0, 1, 500 or 999: each replays validated and equals the full replay's frame" {
	local f
	for f in 0 1 500 999; do
		trim_check $f
		[ "$(trace-decode "t$f.trace" | grep -c 'fn: vkQueuePresentKHR')" = 1 ]
	done
}

@test "--present capture trimmed to frames 10-20: eleven presents, replays validated, frame 20 pixel-equal" {
	trim_check 10-20
	[ "$(trace-decode t10-20.trace | grep -c 'fn: vkQueuePresentKHR')" = 11 ]
}

@test "a one-frame trim of the --present capture is the setup and that frame: a small fraction, whichever the frame" {
	trace-trim --frames 0 -o first.trace "$W/present.trace"
	trace-trim --frames 999 --verbose -o last.trace "$W/present.trace" 2>err
	cat err
	local full first last
	full=$(stat -c %s "$W/present.trace")
	first=$(stat -c %s first.trace)
	last=$(stat -c %s last.trace)
	echo "# vkexample --present, $NFRAMES frames: $full bytes; trimmed to frame 0: $first, to frame 999: $last" >&3
	# the setup runs one submit, the texture upload: not the 999 frames
	# before, nor those that copied to the readback buffer (--dump-frames),
	# which frame 999 does not read
	grep -q ', 1 submits, ' err
	# the setup (shaders, the texture, the device's properties) is most of
	# a trim: under a sixth of the capture
	[ $((last * 6)) -lt "$full" ]
	# and the last frame's trim is no bigger than the first's, give or take
	# a tenth: the frames before it are not in it
	[ $((last * 10)) -lt $((first * 11)) ]
}

@test "a readback buffer every frame copies into: a late frame's trim runs none of the frames before it, and replays validated and pixel-equal" {
	# every frame copied to the host buffer (--png-dir, no --dump-frames):
	# the copies only write it, and the host reads it, so what earlier
	# frames left there cannot matter to frame 110
	DISPLAY=$XDISPLAY VK_LAYER_PATH="$TOP/build/layer" \
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=dumps.trace \
		"$EX" --present --frames 120 --png-dir app >/dev/null
	[ -s app/frame-119.png ]
	trace-trim --frames 110 --verbose -o t110.trace dumps.trace 2>err
	cat err
	# the texture upload (and no frame): one submit, two at most
	local n
	n=$(sed -nE 's/.* ([0-9]+) submits.*/\1/p' err)
	[ -n "$n" ]
	[ "$n" -le 2 ]
	echo "# vkexample --png-dir, 120 frames: $(stat -c %s dumps.trace) bytes; trimmed to frame 110: $(stat -c %s t110.trace), $n setup submits" >&3
	run trace-replay --validate --screenshot 110 -o t110.png t110.trace
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	echo "frame 110: $(ae app/frame-110.png t110.png) pixels differ"
	[ "$(ae app/frame-110.png t110.png)" = 0 ]
	# the comparison can fail: the frame before differs
	[ "$(ae app/frame-109.png t110.png)" -gt 1000 ]
	# the sanitizer build makes the same trim, without an error or a leak
	# (the descriptor sets one update writes name each other); frame 0
	# has nothing before it
	"$ASAN_BIN/trace-trim" --frames 110 -o asan.trace dumps.trace
	cmp t110.trace asan.trace
	"$ASAN_BIN/trace-trim" --frames 0 -o asan0.trace dumps.trace
}

@test "examples/vulkan-pipeline.sh (make demo's main job): vkcube captured, frame 40 trimmed, edited, replayed validated; the cut equals the capture's frame, the edit draws a quarter" {
	run env -u DISPLAY sh -c "cd '$TOP' && examples/vulkan-pipeline.sh 40"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"the cut, replayed: 0 pixels differ from the captured frame"* ]]
	[[ "$output" == *"the cube is drawn in the top-left quarter only"* ]]
}
