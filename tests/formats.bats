#!/usr/bin/env bats
# trace-replay on a device that lacks an image's format for its usage, as
# NVIDIA's driver renders to no 16-bit 4444 format and zink makes its
# textures in one with color-attachment usage: the image is made in a
# format that holds each texel as it is (the channels in another order,
# else in more bits), its views, render passes and copies from buffers
# and other images following it; where none serves, one line names the format and the
# usage.  llvmpipe lacks nothing the example uses, so the lack is made up
# (TRACE_REPLAY_FORMAT_LACKS, trace-replay(1)); the example's texture is
# uploaded from a buffer and its levels made by blits (--mips), or
# copied from an image of its own (--staging-image).

load helpers

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	start_xvfb
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex.trace" \
		TRACEKIT_SCREENSHOT=3,11 timeout 60 "$TOP/build/examples/vkexample" --frames 12 \
		--present --wait-each-frame --mips >/dev/null 2>&1
	# and reading frame 3 back into a buffer (vkCmdCopyImageToBuffer)
	mkdir "$W/png"
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/read.trace" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 6 --present --dump-frames 3 \
		--png-dir "$W/png" >/dev/null 2>&1
	# and its texture's level 0 copied from an image of transfer usage
	# alone (vkCmdCopyImage), which a lack of sampled usage leaves as it is
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/si.trace" \
		TRACEKIT_SCREENSHOT=3,11 timeout 60 "$TOP/build/examples/vkexample" --frames 12 \
		--present --wait-each-frame --staging-image >/dev/null 2>&1
	stop_xvfb
	trace-decode "$W/ex.trace" >"$W/ex.txt"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset DISPLAY WAYLAND_DISPLAY
}

DEV="llvmpipe (LLVM 15.0.6, 256 bits)"
RGBA=VK_FORMAT_R8G8B8A8_UNORM

# differ FUZZ N: the pixels of frame N beyond FUZZ from the capture's
differ() {
	compare -metric AE -fuzz "$1" "$W/ex.frame-$2.png" "frame-$2.png" null: 2>&1 || true
}

# lacking LACKS: the replay with TRACE_REPLAY_FORMAT_LACKS=LACKS,
# validated, frames 3 and 11 saved here: exit 0 and one line, the warning
lacking() {
	TRACE_REPLAY_FORMAT_LACKS=$1 replay_error --validate --screenshot 3,11 \
		--screenshot-dir . "$W/ex.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
}

# self LACKS: the replay's own capture (the calls it made) into self.txt
self() {
	TRACE_REPLAY_FORMAT_LACKS=$1 VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
		TRACEKIT_OUTPUT="$BATS_TEST_TMPDIR/self.trace" trace-replay -q "$W/ex.trace"
	trace-decode self.trace >self.txt
}

@test "an image the device lacks its format for: made with the channels in another order, uploaded from its buffer through a copy in its own format, validated, the frames pixel-equal" {
	lacking $RGBA:VK_IMAGE_USAGE_SAMPLED_BIT
	[[ "${lines[0]}" == "trace-replay: $W/ex.trace: call "*": warning: vkCreateImage: $DEV has no $RGBA image for VK_IMAGE_USAGE_SAMPLED_BIT; made as VK_FORMAT_B8G8R8A8_UNORM, the same channels in another order" ]]
	for n in 3 11; do
		echo "frame $n: $(differ 0 $n) pixels differ"
		[ "$(differ 0 $n)" = 0 ]
	done
	# the texture and the compute shader's image (both sampled) made in
	# B8G8R8A8, their views too; a shadow in the texture's own format for
	# the copy from the buffer, then one blit more than the capture's
	self $RGBA:VK_IMAGE_USAGE_SAMPLED_BIT
	grep 'fn: vkCreateImage,' self.txt | grep 'VK_IMAGE_USAGE_SAMPLED_BIT' |
		grep -o 'format: [A-Z0-9_]*' | sort -u >made
	cat made
	[ "$(cat made)" = "format: VK_FORMAT_B8G8R8A8_UNORM" ]
	grep 'fn: vkCreateImage,' self.txt |
		grep -q "format: $RGBA, .*usage: VK_IMAGE_USAGE_TRANSFER_SRC_BIT|VK_IMAGE_USAGE_TRANSFER_DST_BIT, "
	[ "$(grep 'fn: vkCreateImageView,' self.txt | grep -c 'format: VK_FORMAT_B8G8R8A8_UNORM')" -ge 2 ]
	copies=$(grep -c 'fn: vkCmdCopyBufferToImage,' "$W/ex.txt")
	[ "$copies" -ge 1 ]
	[ "$(grep -c 'fn: vkCmdBlitImage,' self.txt)" -eq \
		$(($(grep -c 'fn: vkCmdBlitImage,' "$W/ex.txt") + copies)) ]
}

@test "a color attachment the device lacks its format for: the image, its view and the render pass in the one with the channels in another order, validated, the frames pixel-equal" {
	lacking $RGBA:VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
	[[ "${lines[0]}" == *"has no $RGBA image for VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT; made as VK_FORMAT_B8G8R8A8_UNORM, "* ]]
	for n in 3 11; do
		[ "$(differ 0 $n)" = 0 ]
	done
	self $RGBA:VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
	grep 'fn: vkCreateRenderPass' self.txt | grep -q 'format: VK_FORMAT_B8G8R8A8_UNORM'
	! grep 'fn: vkCreateRenderPass' self.txt | grep -q "format: $RGBA"
}

@test "no format of the same bytes serves: the texture made in more bits (16 a channel), validated, the frames within 1% a channel" {
	lacks=$RGBA:VK_IMAGE_USAGE_SAMPLED_BIT,VK_FORMAT_B8G8R8A8_UNORM:VK_IMAGE_USAGE_SAMPLED_BIT
	lacks=$lacks,VK_FORMAT_A8B8G8R8_UNORM_PACK32:VK_IMAGE_USAGE_SAMPLED_BIT
	lacking "$lacks"
	[[ "${lines[0]}" == *"made as VK_FORMAT_R16G16B16A16_UNORM, the same channels in more bits" ]]
	# (filtered in 16 bits: within 2 of 255)
	for n in 3 11; do
		echo "frame $n: $(differ 0 $n) pixels differ, $(differ 1% $n) beyond 1%"
		[ "$(differ 1% $n)" = 0 ]
	done
}

@test "no format holds the image's texels: one line with the call, the format and the usage, exit 1, nothing made in a format the device lacks" {
	replay_error_lacks() {
		TRACE_REPLAY_FORMAT_LACKS=$1 replay_error "$W/ex.trace"
	}
	replay_error_lacks VK_FORMAT_D32_SFLOAT:VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	call=$(grep -m1 'fn: vkCreateImage, .*format: VK_FORMAT_D32_SFLOAT' "$W/ex.txt" |
		sed 's/^{call: \([0-9]*\),.*/\1/')
	[ "${lines[0]}" = "trace-replay: $W/ex.trace: call $call (vkCreateImage): pCreateInfo: $DEV has no VK_FORMAT_D32_SFLOAT image (tiling optimal) for VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT, nor one that holds its texels" ]
	replay_error_lacks "$RGBA"
	[ "$status" -eq 1 ]
	[ "$output" = "trace-replay: TRACE_REPLAY_FORMAT_LACKS: $RGBA: not FORMAT:USAGE" ]
}

@test "--dump of an image made in another format reads its bytes as they are there: the texture's levels after the upload's submit, pixel-equal to the replay's without the lack" {
	local submit f n=0
	submit=$(grep -m1 'fn: vkQueueSubmit,' "$W/ex.txt" | sed 's/^{call: \([0-9]*\),.*/\1/')
	mkdir as lacking
	trace-replay -q --dump "$submit" --dump-dir as "$W/ex.trace"
	TRACE_REPLAY_FORMAT_LACKS=$RGBA:VK_IMAGE_USAGE_SAMPLED_BIT trace-replay -q \
		--dump "$submit" --dump-dir lacking "$W/ex.trace"
	for f in as/*.mip*.png; do
		echo "$f: $(compare -metric AE "$f" "lacking/${f#as/}" null: 2>&1) pixels differ"
		[ "$(compare -metric AE "$f" "lacking/${f#as/}" null: 2>&1)" = 0 ]
		n=$((n + 1))
	done
	# the texture's levels, from the upload and the blits
	[ "$n" -ge 6 ]
}

@test "a copy of an image made in another format into a buffer goes through an image of the trace's format: the example's frame read back, byte-equal to the replay's without the lack, validated" {
	local buf
	buf=$(trace-decode "$W/read.trace" | grep -m1 'fn: vkCmdCopyImageToBuffer,' |
		sed 's/.*dstBuffer: \(0x[0-9a-f]*\),.*/\1/')
	[ -n "$buf" ]
	mkdir as lacking
	trace-replay -q --dump-resource "$buf" --dump-dir as "$W/read.trace"
	TRACE_REPLAY_FORMAT_LACKS=$RGBA:VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT replay_error --validate \
		-q --dump-resource "$buf" --dump-dir lacking "$W/read.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	ls as/*.bin
	for f in as/*; do
		cmp "$f" "lacking/${f#as/}"
	done
	# in the trace's format
	grep -q "\"format\": \"$RGBA\"" as/*.json
}

@test "a copy between an image made in another format and one made as captured goes through an image of the trace's format: the texture copied from its staging image, validated, the frames pixel-equal" {
	TRACE_REPLAY_FORMAT_LACKS=$RGBA:VK_IMAGE_USAGE_SAMPLED_BIT replay_error --validate \
		--screenshot 3,11 --screenshot-dir . "$W/si.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *"has no $RGBA image for VK_IMAGE_USAGE_SAMPLED_BIT; made as VK_FORMAT_B8G8R8A8_UNORM, "* ]]
	local n ae
	for n in 3 11; do
		ae=$(compare -metric AE "$W/si.frame-$n.png" frame-$n.png null: 2>&1 || true)
		echo "frame $n: $ae pixels differ"
		[ "$ae" = 0 ]
	done
	# the staging image made as captured, the copy into the texture's
	# shadow (in the trace's format), then a blit into the texture
	TRACE_REPLAY_FORMAT_LACKS=$RGBA:VK_IMAGE_USAGE_SAMPLED_BIT VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
		TRACEKIT_OUTPUT="$BATS_TEST_TMPDIR/self.trace" trace-replay -q "$W/si.trace"
	trace-decode self.trace >self.txt
	trace-decode "$W/si.trace" >si.txt
	[ "$(grep -c 'fn: vkCmdCopyImage,' si.txt)" -eq 1 ]
	[ "$(grep -c 'fn: vkCmdCopyImage,' self.txt)" -eq 1 ]
	[ "$(grep -c 'fn: vkCmdBlitImage,' self.txt)" -eq $(($(grep -c 'fn: vkCmdBlitImage,' si.txt) + 1)) ]
}
