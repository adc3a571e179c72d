#!/usr/bin/env bats
# GStreamer's Vulkan elements (gst-plugins-bad 1.22), a program tracekit
# was not built on: a test pattern uploaded to Vulkan images, converted
# by a render pass (vulkancolorconvert) and shown by vulkansink on
# llvmpipe under Xvfb; and a pipeline that takes every frame back to the
# host (vulkandownload: a copy into a buffer the host maps), converts it
# there and uploads it again, so that what the second upload writes came
# from the GPU through the host.  GStreamer 1.22 makes a validation error
# of its own (a render pass that loads an attachment from an undefined
# layout): the replay must make no other.

load helpers

SHOT=20

# gst_run OUT PIPELINE...: gst-launch-1.0 runs PIPELINE, its output to
# $W/OUT.out, its exit status to $W/OUT.rc.  GStreamer 1.22's Vulkan
# elements race to choose the display: in one run of 6 to 10 here, with or
# without a layer, the sink is handed one that is not X's and fails
# ("Cannot create an XCB window from a non-XCB display"): run again then,
# up to 4 times.
gst_run() {
	local out=$1 rc try
	shift
	for try in 1 2 3 4; do
		rc=0
		timeout 60 gst-launch-1.0 -q "$@" >"$W/$out.out" 2>&1 || rc=$?
		grep -q 'non-XCB display' "$W/$out.out" || break
	done
	echo $rc >"$W/$out.rc"
}

# gst NAME PIPELINE...: PIPELINE (40 frames) under the validation layer
# alone (what GStreamer makes natively: NAME-native), then under ours,
# saving frame $SHOT (NAME)
gst() {
	local name=$1
	shift
	VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation gst_run "$name-native" "$@"
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/$name.trace" \
		TRACEKIT_SCREENSHOT=$SHOT gst_run "$name" "$@"
}

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	start_xvfb
	gst show videotestsrc num-buffers=40 pattern=ball ! \
		video/x-raw,width=320,height=240 ! vulkanupload ! vulkancolorconvert ! vulkansink
	gst round videotestsrc num-buffers=40 pattern=smpte ! video/x-raw,width=320,height=240 ! \
		vulkanupload ! vulkandownload ! videoconvert ! vulkanupload ! vulkancolorconvert ! \
		vulkansink
	stop_xvfb
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

ae() {
	compare -metric AE "$1" "$2" null: 2>&1 || true
}

# The validation messages' names (VUIDs, UNASSIGNED-...) in a log, sorted.
vuids() {
	grep -o 'VUID-[A-Za-z0-9_-]*\|UNASSIGNED-[A-Za-z0-9_-]*' "$1" | sort -u || true
}

# no_new_vuids NAME LOG: LOG holds no validation message that GStreamer's
# run NAME under the validation layer alone did not make
no_new_vuids() {
	comm -23 <(vuids "$2") <(vuids "$W/$1-native.out") >extra
	cat extra
	[ ! -s extra ]
}

@test "gst-launch-1.0 exits as it does without the layer, and each trace holds the frames it showed" {
	for n in show round; do
		cat "$W/$n.out"
		[ "$(cat "$W/$n.rc")" = "$(cat "$W/$n-native.rc")" ]
		[ "$(cat "$W/$n.rc")" = 0 ]
		presents=$(trace-filter --count "$W/$n.trace" | awk '$2 == "vkQueuePresentKHR" {print $1}')
		echo "$n: $presents presents"
		[ "$presents" -gt $SHOT ]
		[ -s "$W/$n.frame-$SHOT.png" ]
	done
	# GStreamer's own error, the one the replay may repeat
	vuids "$W/show-native.out" | grep -qx 'VUID-VkAttachmentDescription-format-06699'
	# the round trip reads each frame back: a copy from an image into a
	# buffer, and the host's bytes of the second upload in the trace
	trace-decode "$W/round.trace" | grep -q 'fn: vkCmdCopyImageToBuffer,'
}

@test "both replay validated with no validation message GStreamer does not make natively, frame $SHOT pixel for pixel as the layer saved it" {
	for n in show round; do
		replay_error --validate --screenshot $SHOT -o $n.png "$W/$n.trace"
		echo "$output" >$n.log
		cat $n.log
		no_new_vuids $n $n.log
		[ "$(ae $n.png "$W/$n.frame-$SHOT.png")" = 0 ]
	done
	# and the comparison can fail: the two pipelines show other patterns
	[ "$(ae show.png round.png)" -gt 1000 ]
}

@test "frame $SHOT of each trimmed alone: smaller, replays validated with no new message, pixel-equal" {
	for n in show round; do
		trace-trim --frames $SHOT -o $n-cut.trace "$W/$n.trace"
		echo "$n: cut $(stat -c %s $n-cut.trace) bytes of $(stat -c %s "$W/$n.trace")"
		[ "$(stat -c %s $n-cut.trace)" -lt "$(stat -c %s "$W/$n.trace")" ]
		replay_error --validate --screenshot $SHOT -o $n-cut.png $n-cut.trace
		echo "$output" >$n-cut.log
		no_new_vuids $n $n-cut.log
		[ "$(ae $n-cut.png "$W/$n.frame-$SHOT.png")" = 0 ]
	done
}
