#!/bin/sh
# The main job, end to end, on a real Vulkan program: capture vkcube with
# the layer (llvmpipe under Xvfb), cut one frame out with trace-trim, edit
# the cut as text, replay it headless under the validation layer, and
# compare the replayed frame, pixel for pixel, with the one the layer
# saved while the program ran.  Run from the repository root after `make`:
#   examples/vulkan-pipeline.sh [FRAME]
set -eu

frame=${1:-100}
bin=${BIN:-bin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# llvmpipe, whatever GPU the machine has, so that every run draws the same
# pixels; the validation layer stays on the loader's path beside ours.
export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
export VK_LAYER_PATH="$PWD/build/layer:/usr/share/vulkan/explicit_layer.d"

# differing PNG1 PNG2: how many pixels differ (ImageMagick's AE metric)
differing() {
	compare -metric AE "$1" "$2" null: 2>&1 || true
}

# colours PNG WxH+X+Y: how many colours that part of the image holds
colours() {
	convert "$1" -crop "$2" +repage -format '%k' info:
}

echo "-- capture: vkcube, $((frame + 20)) frames, under VK_LAYER_TRACEKIT_capture (Xvfb)"
xvfb-run -a -s '-screen 0 1024x768x24 -nolisten tcp' \
	env VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
	TRACEKIT_OUTPUT="$out/cube.trace" TRACEKIT_SCREENSHOT="$frame" \
	timeout 120 vkcube --c $((frame + 20)) >"$out/vkcube.log" 2>&1 ||
	{ cat "$out/vkcube.log" >&2; exit 1; }
echo "cube.trace: $(stat -c %s "$out/cube.trace") bytes," \
	"$("$bin/trace-filter" --count "$out/cube.trace" | tail -1 | awk '{print $1}') calls;" \
	"the layer saved frame $frame as cube.frame-$frame.png"

echo "-- find the frame: what frame $frame calls (trace-filter --frames $frame --count)"
"$bin/trace-filter" --frames "$frame" --count "$out/cube.trace" | grep -E 'vkCmdDraw|vkQueueSubmit|vkQueuePresentKHR|total'

echo "-- trim: frame $frame alone, with the setup that makes it replay on its own"
"$bin/trace-trim" --frames "$frame" -o "$out/frame.trace" "$out/cube.trace"
echo "frame.trace: $(stat -c %s "$out/frame.trace") bytes," \
	"$("$bin/trace-filter" --count "$out/frame.trace" | tail -1 | awk '{print $1}') calls"

echo "-- edit: the cut as text, its viewport made a quarter of the window, encoded again"
"$bin/trace-decode" "$out/frame.trace" |
	sed 's/pViewports: \[{x: 0.0, y: 0.0, width: 500.0, height: 500.0,/pViewports: [{x: 0.0, y: 0.0, width: 250.0, height: 250.0,/' |
	"$bin/trace-encode" -o "$out/edited.trace"
"$bin/trace-decode" "$out/edited.trace" | grep -o 'fn: vkCmdSetViewport, .*height: 250.0' >/dev/null
echo "vkCmdSetViewport in edited.trace: $("$bin/trace-decode" "$out/edited.trace" |
	grep -o 'pViewports: \[{[^}]*}' | head -1)"

echo "-- replay both cuts headless, validated (trace-replay --validate --screenshot $frame)"
"$bin/trace-replay" -q --validate --screenshot "$frame" -o "$out/replayed.png" "$out/frame.trace"
"$bin/trace-replay" -q --validate --screenshot "$frame" -o "$out/edited.png" "$out/edited.trace"

echo "-- compare with the frame the layer saved at capture"
n=$(differing "$out/cube.frame-$frame.png" "$out/replayed.png")
[ "$n" = 0 ] || { echo "the replayed cut differs from the capture in $n pixels" >&2; exit 1; }
echo "the cut, replayed: 0 pixels differ from the captured frame"
n=$(differing "$out/cube.frame-$frame.png" "$out/edited.png")
[ "$n" != 0 ] || { echo "the edited cut draws the captured frame unchanged" >&2; exit 1; }
# the edited cube stays in the top-left quarter: the rest is clear colour
[ "$(colours "$out/cube.frame-$frame.png" 250x250+125+125)" -gt 1 ]
[ "$(colours "$out/edited.png" 250x250+250+250)" = 1 ]
[ "$(colours "$out/edited.png" 250x250+0+0)" -gt 1 ]
echo "the edited cut: $n pixels differ; the cube is drawn in the top-left quarter only"
