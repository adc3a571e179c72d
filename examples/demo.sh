#!/bin/sh
# make demo: tracekit's main job — capture a Vulkan program, cut out one
# frame, edit it as text, replay it headless and compare its pixels with
# the capture (examples/vulkan-pipeline.sh) — then the record stream on a
# bundled GL trace (a real apitrace capture of glxgears,
# tests/data/glxgears.trace): read, counted, edited with sed, cut, written
# back and checked with apitrace itself; then a VMA recording.
set -eu
cd "$(dirname "$0")/.."
bin=bin
trace=tests/data/glxgears.trace
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

step() { printf '\n== %s\n' "$*"; }

step "The main job: capture vkcube, trim frame 100, edit it, replay it, compare"
examples/vulkan-pipeline.sh 100

step "A GL trace: what is in it: calls per function (trace-filter --count)"
"$bin/trace-filter" --count "$trace" | head -8
echo "   ..."
"$bin/trace-filter" --count "$trace" | tail -1

step "The same trace as text, one record a line (trace-decode)"
"$bin/trace-decode" "$trace" >"$out/gears.txt"
sed -n '1p;5p;1353p' "$out/gears.txt" | cut -c1-160

step "Edit it with sed: every glViewport becomes 640x480, and encode it again"
sed 's/\(fn: glViewport, args: {x: 0, y: 0, width: \)300, height: 300/\1640, height: 480/' \
	"$out/gears.txt" | "$bin/trace-encode" -o "$out/edited.trace"
echo "apitrace dump of the edited trace:"
apitrace dump --color=never --grep=glViewport "$out/edited.trace" | head -3

step "Round trip: trace-decode | trace-encode is exact for apitrace"
apitrace dump -v --thread-ids=yes --color=never "$trace" >"$out/a.dump"
"$bin/trace-decode" "$trace" | "$bin/trace-encode" -o "$out/rt.trace"
apitrace dump -v --thread-ids=yes --color=never "$out/rt.trace" >"$out/b.dump"
cmp "$out/a.dump" "$out/b.dump"
echo "apitrace dump prints the same $(wc -l <"$out/a.dump") lines for both"
"$bin/trace-decode" "$out/rt.trace" | cmp - "$out/gears.txt"
echo "and text -> binary -> text is byte-identical"

step "Cut frames 10 to 12 (a plain cut: trace-filter --frames)"
"$bin/trace-filter" --frames 10-12 -o "$out/frames.trace" "$trace"
"$bin/trace-filter" --count "$out/frames.trace" | tail -1
echo "glXSwapBuffers calls in the cut: $("$bin/trace-decode" "$out/frames.trace" | grep -c 'fn: glXSwapBuffers,')"

step "Archive it with Brotli, as apitrace repack -b would"
"$bin/trace-encode" -z brotli -q 9 -o "$out/gears.brotli" "$trace"
echo "Snappy $(stat -c %s "$trace") bytes -> Brotli $(stat -c %s "$out/gears.brotli") bytes"
"$bin/trace-decode" "$out/gears.brotli" | cmp - "$out/gears.txt"
echo "and it decodes to the same text"

if [ -x "$bin/vma-import" ] && [ -x examples/vma-pipeline.sh ]; then
	step "A VMA allocation recording through the same kind of pipeline"
	examples/vma-pipeline.sh
fi

step "Done: every step above ran and checked its result"
