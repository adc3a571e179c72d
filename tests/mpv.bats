#!/usr/bin/env bats
# mpv, a program tracekit was not built on, as a new user brings it: it
# plays one second of a test pattern (tests/data/testsrc-160x120.mp4)
# through libplacebo on llvmpipe under Xvfb.  mpv makes a probe instance
# first and never ends it, names its objects with VK_EXT_debug_utils
# without enabling it, and records through push descriptors.  One capture
# for the suite, and one run under the validation layer alone for what
# mpv makes natively; --vo=gpu-next once more in its own test.

load helpers

VIDEO="$DATA/testsrc-160x120.mp4"
SHOT=20

# mpv_run OUT VO [VAR=value...]: mpv plays the clip (30 frames) with
# those variables; its exit status goes to $W/OUT.rc, its output to
# $W/OUT.out
mpv_run() {
	local out=$1 vo=$2 rc=0
	shift 2
	env "$@" timeout 120 mpv --no-config --untimed --vo="$vo" --gpu-api=vulkan \
		--gpu-context=x11vk '--vulkan-device=llvmpipe (LLVM 15.0.6, 256 bits)' \
		--frames=30 "$VIDEO" >"$W/$out.out" 2>&1 || rc=$?
	echo $rc >"$W/$out.rc"
}

# The validation messages' names (VUIDs, UNASSIGNED-...) in a log, sorted.
vuids() {
	grep -o 'VUID-[A-Za-z0-9_-]*\|UNASSIGNED-[A-Za-z0-9_-]*' "$1" | sort -u || true
}

# capture VO NAME: mpv under the validation layer alone (what it makes
# natively, and its exit status without ours), then under ours, saving
# frame $SHOT
capture() {
	mpv_run "$2-native" "$1" VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
	mpv_run "$2" "$1" VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture \
		TRACEKIT_OUTPUT="$W/$2.trace" TRACEKIT_SCREENSHOT=$SHOT
}

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	start_xvfb
	capture gpu mpv
	stop_xvfb
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

ae() {
	compare -metric AE "$1" "$2" null: 2>&1 || true
}

@test "mpv exits as it does without the layer, and the trace holds the frames it presented" {
	cat "$W/mpv.out"
	[ "$(cat "$W/mpv.rc")" = "$(cat "$W/mpv-native.rc")" ]
	[ "$(cat "$W/mpv.rc")" = 0 ]
	# (a frame or two more or fewer from run to run: the clip ends when
	# its last frame is decoded, not after a count of presents)
	presents=$(trace-filter --count "$W/mpv.trace" | awk '$2 == "vkQueuePresentKHR" {print $1}')
	echo "presents: $presents"
	[ "$presents" -gt $SHOT ]
	[ "$(trace-decode "$W/mpv.trace" | grep -c 'fn: vkCreateInstance,')" = 2 ]
	# the debug names of extension mpv did not enable: recorded, as the
	# next layer answered them
	trace-decode "$W/mpv.trace" | grep -q 'fn: vkSetDebugUtilsObjectNameEXT,'
	[ -s "$W/mpv.frame-$SHOT.png" ]
}

@test "mpv's trace replays validated with no validation message mpv does not make natively" {
	replay_error --validate "$W/mpv.trace"
	echo "$output"
	echo "$output" >replay.log
	comm -23 <(vuids replay.log) <(vuids "$W/mpv-native.out") >extra
	cat extra
	[ ! -s extra ]
}

@test "mpv's frame replays pixel for pixel as the layer saved it, the probe instance made too" {
	replay --screenshot $SHOT -o f.png "$W/mpv.trace"
	[ "$(ae f.png "$W/mpv.frame-$SHOT.png")" = 0 ]
}

@test "mpv's timeline semaphores, one made and destroyed a frame, are made again from those destroyed: validated, the frame pixel-equal" {
	made=$(trace-decode "$W/mpv.trace" | grep 'fn: vkCreateSemaphore,' | grep -c 'VK_SEMAPHORE_TYPE_TIMELINE')
	[ "$made" -ge 10 ]
	run replay --validate --stats=json --screenshot $SHOT -o t.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	json=$(grep '^{' <<<"$output")
	reused=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["timelines_reused"])' "$json")
	echo "$reused of $made timeline semaphores made again"
	[ "$reused" -gt 0 ] && [ "$reused" -lt "$made" ]
	[ "$(ae t.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	# not a word from the validation layer
	[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
}

@test "--loop: mpv's timeline semaphores made and destroyed in the range are made again from those destroyed, pass after pass: validated, the frame pixel-equal" {
	# (each made anew cost NVIDIA's driver 0.46 ms: mpv looped at 973
	# frames/s on an H100)
	run replay --validate --stats=json --loop 3 --frames 5-25 --screenshot $SHOT -o l.png \
		"$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	json=$(grep '^{' <<<"$output")
	reused=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["timelines_reused"])' "$json")
	echo "$reused made again"
	[ "$reused" -ge 40 ]
	[ "$(ae l.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
}

@test "mpv's timeline semaphores started higher each (tests/timeline_edit.py): one is made again from a destroyed one only where raising its counter leaves no signal pending, validated, the frame pixel-equal, on a device that never seems done too" {
	trace-decode "$W/mpv.trace" >m.txt
	python3 "$TOP/tests/timeline_edit.py" m.txt t.txt 1000
	for slow in 0 1; do
		TRACE_REPLAY_SLOW_DEVICE=$slow run replay --validate --stats=json --screenshot $SHOT -o t$slow.png t.txt
		echo "$output"
		[ "$status" -eq 0 ]
		# not a word from the validation layer (the host signal past a
		# pending one: VUID-VkSemaphoreSignalInfo-value-03259)
		[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
		[ "$(ae t$slow.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	done
}

@test "running ahead ends in the middle of the replay (TRACE_REPLAY_AHEAD_END, as at a second queue) with frames held: the fences a held call went out without are signalled, so the waits made from then on end; validated, the frame pixel-equal" {
	# the record after the present of frame 10: its submits held, the
	# first fence of a call replaced by its second, which mpv waits on next
	at=$(trace-decode "$W/mpv.trace" | grep 'fn: vkQueuePresentKHR,' | sed -n 11p | sed 's/^{call: \([0-9]*\),.*/\1/')
	[ -n "$at" ]
	TRACE_REPLAY_AHEAD_END=$((at + 1)) run replay --validate --stats=json --wait-timeout 5 \
		--screenshot $SHOT -o e.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
	ended=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ahead"]["ended"])' "$(grep '^{' <<<"$output")")
	[ "$ended" = 1 ]
	[ "$(ae e.png "$W/mpv.frame-$SHOT.png")" = 0 ]
}

@test "mpv polls its frame's second submit's fence, then its third's: running ahead, the wait for the older work is joined to the skipped one, validated, the frame pixel-equal, on a device that never seems done too" {
	# the pairs in the trace: two fence polls seen over, one after the
	# other, the first for a submit before the last, the second for the last
	pairs=$(trace-decode "$W/mpv.trace" | awk '
		/fn: vkQueueSubmit,/ { n++; if (match($0, /\}\], fence: 0x[0-9a-f]+/)) { f = substr($0, RSTART + 11, RLENGTH - 11); last[f] = n } }
		{ was = older; older = 0 }
		/fn: vkWaitForFences,.*ret: VK_SUCCESS/ {
			match($0, /pFences: \[0x[0-9a-f]+\]/); f = substr($0, RSTART + 10, RLENGTH - 11)
			if (was && last[f] == n) pairs++
			older = (f in last) && last[f] < n
		}
		END { print pairs + 0 }')
	echo "$pairs pairs"
	[ "$pairs" -ge 10 ]
	run replay --validate --stats=json --screenshot $SHOT -o j.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	joined=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ahead"]["joined"])' "$(grep '^{' <<<"$output")")
	echo "$joined joined"
	[ "$joined" -gt 0 ] && [ "$joined" -le "$pairs" ]
	[ "$(ae j.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
	run replay --stats=json --waits-as-captured "$W/mpv.trace"
	[ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ahead"]["joined"])' "$(grep '^{' <<<"$output")")" = 0 ]
	TRACE_REPLAY_SLOW_DEVICE=1 run replay --validate --screenshot $SHOT -o s.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(ae s.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	[ -z "$(grep -v '^trace-replay: frame' <<<"$output")" ]
}

@test "running ahead on a device that never seems done, an update of more than 16 runs (mpv's video rows) pays what is owed and goes from the host; the others are staged: validated, the frame pixel-equal" {
	read -r many many_bytes few_bytes < <(trace-decode "$W/mpv.trace" | python3 "$TOP/tests/update_runs.py" 16)
	echo "updates of more than 16 runs: $many ($many_bytes bytes); of the others' bytes: $few_bytes"
	[ "$many" -gt 0 ]
	TRACE_REPLAY_SLOW_DEVICE=1 run replay --validate --stats=json --screenshot $SHOT -o p.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	read -r paid staged < <(python3 -c 'import json,sys; a = json.loads(sys.argv[1])["ahead"]; print(a["paid"], a["staged_bytes"])' "$(grep '^{' <<<"$output")")
	echo "paid $paid times, $staged bytes staged"
	[ "$paid" -ge 1 ] && [ "$paid" -le "$many" ]
	[ "$staged" -gt 0 ] && [ "$staged" -le "$few_bytes" ]
	[ "$(ae p.png "$W/mpv.frame-$SHOT.png")" = 0 ]
}

# replay's arguments replayed with the records read as mode M says: 0 in
# place, 1 on a thread of their own, h read on one and decoded on another
replay_ahead() {
	local m=$1 a=1 h=0
	shift
	case $m in
	0) a=0 ;;
	h) h=1 ;;
	esac
	TRACE_DECODE_AHEAD=$a TRACE_DECODE_HOOK_THREAD=$h replay "$@"
}

@test "the records decoded ahead on a thread of their own (TRACE_DECODE_AHEAD=1, the default on 4 cores or more), their arguments on another (TRACE_DECODE_HOOK_THREAD=1, the default on 8): validated, the frame pixel-equal, --stats says so; with 0 they are read in place" {
	for m in 1 h 0; do
		run replay_ahead $m --validate --stats=json --screenshot $SHOT -o d$m.png "$W/mpv.trace"
		echo "$output" | cut -c 1-200
		[ "$status" -eq 0 ]
		[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
		[ "$(ae d$m.png "$W/mpv.frame-$SHOT.png")" = 0 ]
		read -r on hook w ws wt wf t ts hw hs < <(python3 -c 'import json,sys; j = json.loads(sys.argv[1]); w = j["decode_ahead_waits"]; print(j["decode_ahead"], w["hook_thread"], w["replay"], w["replay_slept"], "%d" % (w["replay_seconds"] * 1e6), "%d" % (w["replay_seconds_frames"] * 1e6), w["thread"], w["thread_slept"], w["hook"], w["hook_slept"])' "$(grep '^{' <<<"$output")")
		echo "$on $hook waits: replay $w ($ws asleep, $wt us, $wf us in the frames), thread $t ($ts asleep), hook $hw ($hs asleep)"
		# no wait takes no time; the frames' are among them
		[ "$w" -gt 0 ] || [ "$wt" = 0 ]
		[ "$wf" -ge 0 ] && [ "$wf" -le "$wt" ]
		[ "$on" = "$([ $m = 0 ] && echo False || echo True)" ]
		[ "$hook" = "$([ $m = h ] && echo True || echo False)" ]
		# who waited for whom: none in place; a sleep is a wait's
		[ "$ws" -le "$w" ] && [ "$ts" -le "$t" ] && [ "$hs" -le "$hw" ]
		[ $m != 0 ] || [ "$w $t" = "0 0" ]
		[ $m = h ] || [ "$hw" = 0 ]
	done
	# and with --preload, which reads through it
	TRACE_DECODE_AHEAD=1 run replay --preload --frames 1- --screenshot $SHOT -o p.png "$W/mpv.trace"
	[ "$status" -eq 0 ]
	[ "$(ae p.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	# a few records' bytes ahead at most: the thread, full of bytes
	# before the batch a waiting replay is woken for, wakes it first (a
	# replay that waits for ever is stopped by its watchdog: no record
	# begun in --wait-timeout + 5 s)
	for m in 1 h; do
		TRACE_DECODE_AHEAD_BYTES=20000 run replay_ahead $m --validate \
			--wait-timeout 5 --screenshot $SHOT -o b.png "$W/mpv.trace"
		[ "$status" -eq 0 ]
		[ "$(ae b.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	done
	# the thread decodes each record's arguments too: a draw of frame 10
	# with a string for a count does not decode there, is decoded again as
	# it replays and stops the replay as in place, after frame 5's picture
	trace-decode "$W/mpv.trace" >mpv.txt
	n=$(awk '/fn: vkQueuePresentKHR,/ { p++ } p == 10 && /fn: vkCmdDraw,/ { print; exit }' mpv.txt |
		grep -o '^{call: [0-9]*' | grep -o '[0-9]*')
	sed -E "/^\{call: $n,/s/vertexCount: [0-9]+/vertexCount: \"six\"/" mpv.txt | trace-encode -o bad.trace
	for m in 0 1 h; do
		run replay_ahead $m --screenshot 5 -o x$m.png bad.trace
		[ "$status" -eq 1 ]
		[ "$output" = "trace-replay: bad.trace: call $n (vkCmdDraw): malformed record: vkCmdDraw.vertexCount: expected an integer, found string" ]
	done
	cmp x0.png x1.png
	cmp x0.png xh.png
	# an update's runs are listed on the thread too: the first sparse
	# update after frame 5 with its data short of its mask is read again
	# as it replays and stops the replay as in place
	n=$(awk '/fn: vkQueuePresentKHR,/ { p++ } p > 5 && /fn: tracekit.update.sparse,/ { print; exit }' mpv.txt |
		grep -o '^{call: [0-9]*' | grep -o '[0-9]*')
	[ -n "$n" ]
	sed -E "/^\{call: $n,/s/data: !!binary \"[^\"]*\"/data: !!binary \"AAAA\"/" mpv.txt | trace-encode -o badu.trace
	for m in 0 1 h; do
		run replay_ahead $m --screenshot 5 -o u$m.png badu.trace
		echo "$output"
		[ "$status" -eq 1 ]
		[[ "$output" = "trace-replay: badu.trace: call $n (tracekit.update.sparse): malformed tracekit.update.sparse: its mask sets "*" words, its data has 3 bytes" ]]
	done
	cmp u0.png u1.png
	cmp u0.png uh.png
	# cut off in frame 20: a replay that stops at frame 18 (fewer records
	# before the cut than the thread reads ahead) says nothing of the cut
	# its thread read to; a whole --check warns of it as in place
	n=$(grep -n 'fn: vkQueuePresentKHR,' mpv.txt | sed -n 20p | cut -d: -f1)
	head -n $((n + 30)) mpv.txt | trace-encode -z none -o part.trace
	head -c $(($(stat -c %s part.trace) - 5)) part.trace >cut.trace
	last=18
	for m in 0 1 h; do
		run replay_ahead $m --frames 0-$last cut.trace
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		run replay_ahead $m --check cut.trace
		[ "$status" -eq 0 ]
		[[ "$output" == "trace-replay: cut.trace: warning: trace ends mid-record at byte "* ]]
		eval "check$m=\$output"
	done
	[ "$check0" = "$check1" ]
	[ "$check0" = "$checkh" ]
}

@test "--preload: the records from frame 1 read and decoded before they replay, validated, the frame pixel-equal; a range's end and a limit end it early, the rest read as it replays; a record that does not decode stops the replay where it did" {
	# every record of frames 1 to the end held, all but memory updates,
	# frame marks and skipped calls decoded
	all=$(trace-filter --frames 1- "$W/mpv.trace" | trace-decode | tail -n +2 | wc -l)
	run replay --validate --preload --frames 1- --stats=json --screenshot $SHOT -o p.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
	[ "$(ae p.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	pre() { python3 -c 'import json,sys; p=json.loads(sys.argv[1])["preload"]; print(p["records"], p["decoded"], p["bytes"])' "$(grep '^{' <<<"$output")"; }
	read -r n dec bytes < <(pre)
	echo "$n records, $dec decoded, $bytes bytes; frames 1-: $all records"
	[ "$n" = "$all" ] && [ "$dec" -gt $((n / 2)) ] && [ "$dec" -lt "$n" ]
	# the range's end: frames 1 to $SHOT
	part=$(trace-filter --frames 1-$SHOT "$W/mpv.trace" | trace-decode | tail -n +2 | wc -l)
	run replay --preload --frames 1-$SHOT --stats=json --screenshot $SHOT -o r.png "$W/mpv.trace"
	[ "$status" -eq 0 ]
	read -r n dec bytes < <(pre)
	[ "$n" = "$part" ]
	[ "$(ae r.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	# a limit of 100 KB: some records held, the others read as they replay
	TRACE_REPLAY_PRELOAD_BYTES=100000 run replay --validate --preload --frames 1- --stats=json \
		--screenshot $SHOT -o l.png "$W/mpv.trace"
	[ "$status" -eq 0 ]
	[ "$(grep -vc '^{\|^trace-replay: frame' <<<"$output")" = 0 ]
	read -r n dec bytes < <(pre)
	echo "limited: $n records, $bytes bytes"
	[ "$n" -gt 0 ] && [ "$n" -lt "$all" ] && [ "$bytes" -lt 200000 ]
	[ "$(ae l.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	# a draw of frame 10 with a string for a count: decoded ahead it
	# fails, so it is kept as read and stops the replay as without
	# --preload, after frame 5's screenshot
	trace-decode "$W/mpv.trace" >mpv.txt
	n=$(awk '/fn: vkQueuePresentKHR,/ { p++ } p == 10 && /fn: vkCmdDraw,/ { print; exit }' mpv.txt |
		grep -o '^{call: [0-9]*' | grep -o '[0-9]*')
	[ -n "$n" ]
	sed -E "/^\{call: $n,/s/vertexCount: [0-9]+/vertexCount: \"six\"/" mpv.txt >bad.txt
	run replay --screenshot 5 -o b0.png bad.txt
	[ "$status" -eq 1 ]
	plain=$output
	run replay --preload --screenshot 5 -o b1.png bad.txt
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "$plain" ]
	[[ "$output" == "trace-replay: bad.txt: call $n (vkCmdDraw): malformed record: vkCmdDraw.vertexCount: expected an integer, found string" ]]
	cmp b0.png b1.png
	# it reads the records itself: not with --loop, --check or --dump
	for o in "--loop 2" --check "--dump 5"; do
		run trace-replay --preload $o "$W/mpv.trace"
		[ "$status" -eq 2 ]
		[[ "$output" == *"--preload goes without --check, --loop and --dump"* ]]
	done
}

@test "a debug name of an object no record made stops the replay with the call, the function and the field" {
	trace-decode "$W/mpv.trace" >mpv.txt
	n=$(grep -m1 'fn: vkSetDebugUtilsObjectNameEXT,' mpv.txt | grep -o 'call: [0-9]*' | grep -o '[0-9]*')
	sed -E "/call: $n,/s/objectHandle: [0-9]+/objectHandle: 4660/" mpv.txt >bad.txt
	replay_error bad.txt
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$(head -1 <<<"$output")" =~ ^trace-replay:\ bad.txt:\ call\ $n\ \(vkSetDebugUtilsObjectNameEXT\):\ objectHandle:\ Vk[A-Za-z]+\ 0x1234:\ no\ earlier\ record\ made\ it,\ or\ it\ is\ destroyed$ ]]
}

@test "mpv's frame trimmed alone replays validated and pixel-equal, without the probe instance" {
	trace-trim --frames $SHOT -o cut.trace "$W/mpv.trace"
	[ "$(trace-decode cut.trace | grep -c 'fn: vkCreateInstance,')" = 1 ]
	replay_error --validate --screenshot $SHOT -o cut.png cut.trace
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(ae cut.png "$W/mpv.frame-$SHOT.png")" = 0 ]
}

@test "mpv's frame trimmed alone is smaller than the whole trace, and its setup runs none of the earlier frames' uploads, each of which the next overwrote whole" {
	# each frame copies the video's planes into the same textures, whole
	# (offset 0, the image's extent), then samples them: a copy that
	# covers a level drops what the earlier frames left there.  Read as
	# a partial write, every frame's submit stayed in the setup, each
	# the writer of the planes the next one read: 20 submits, a cut of
	# 68% of the whole trace (trace-trim before this)
	trace-trim --frames $SHOT -o cut.trace "$W/mpv.trace"
	echo "cut $(stat -c %s cut.trace) bytes, whole $(stat -c %s "$W/mpv.trace")"
	[ "$(stat -c %s cut.trace)" -lt "$(stat -c %s "$W/mpv.trace")" ]
	echo "the capture's submits in the setup: $(setup_submits cut.trace)"
	[ "$(setup_submits cut.trace)" = 0 ]
	[ "$(stat -c %s cut.trace)" -lt "$(($(stat -c %s "$W/mpv.trace") / 2))" ]
}

@test "mpv's uploads edited to cover half the luma plane after the first: the cut's setup runs the earlier uploads again, replays validated and pixel-equal" {
	# frames 1 on write the left half alone: the right half is still the
	# first frame's, so every upload since stays in the setup (a copy that
	# covers part of a level is no drop)
	trace-decode "$W/mpv.trace" | awk '
		/fn: vkCmdCopyBufferToImage,/ && /imageExtent: \{width: 160, height: 120,/ {
			if (seen++)
				sub(/imageExtent: \{width: 160,/, "imageExtent: {width: 80,")
		}
		{ print }' | trace-encode -o half.trace
	[ "$(trace-decode half.trace | grep -c 'imageExtent: {width: 80, height: 120,')" -ge 29 ]
	trace-trim --frames $SHOT -o cut.trace half.trace
	# the setup runs the whole first upload and every half one before
	# the frame (mpv may upload no new picture for a frame: counted)
	local before setup
	before=$(trace-filter --frames 0-$((SHOT - 1)) half.trace | trace-decode |
		grep -c 'imageExtent: {width: 80, height: 120,' || true)
	trace-decode cut.trace | sed -n '/fn: tracekit.setup.begin/,/fn: tracekit.setup.end/p' \
		>setup.txt
	setup=$(grep -c 'imageExtent: {width: 80, height: 120,' setup.txt || true)
	echo "half uploads before frame $SHOT: $before; in the setup: $setup;" \
		"the capture's submits in the setup: $(setup_submits cut.trace)"
	[ "$before" -ge 10 ]
	[ "$setup" = "$before" ]
	grep -q 'imageExtent: {width: 160, height: 120,' setup.txt
	# before each upload it runs again, the upload buffer's bytes that
	# changed since the one before, as the capture wrote them: not each
	# sparse update's whole span again (1.48x the capture's bytes at
	# frame 300 of a 600-frame capture)
	local wrote captured
	wrote=$(python3 "$TOP/tests/update_runs.py" 0 <setup.txt | cut -d' ' -f2)
	captured=$(trace-filter --frames 0-$((SHOT - 1)) half.trace | trace-decode |
		python3 "$TOP/tests/update_runs.py" 0 | cut -d' ' -f2)
	echo "update bytes: the setup's $wrote, the capture's before the frame $captured"
	[ "$wrote" -le $((captured * 21 / 20)) ]
	trace-replay --screenshot $SHOT -o full.png half.trace
	replay_error --validate --screenshot $SHOT -o cut.png cut.trace
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$(ae cut.png full.png) pixels differ"
	[ "$(ae cut.png full.png)" = 0 ]
}

@test "mpv's planes edited to lie closer in their memory than this device makes them: each placed where it overlaps no other, validated, the frame pixel-equal" {
	# libplacebo binds the luma plane and the two chroma planes in one
	# memory, one after the other.  The capture edited to say the luma
	# plane needs half the bytes it does and the first chroma plane to
	# start there, as a device of smaller images would have laid them
	# out: here the luma plane's tail would overwrite the chroma plane's
	# first rows (NVIDIA's larger images did so to mpv's corner)
	trace-decode "$W/mpv.trace" | awk '
		/fn: vkCreateImage,/ && /format: VK_FORMAT_R8_UNORM,/ && !luma { luma = 1; next_req = 1 }
		next_req && /fn: vkGetImageMemoryRequirements2,/ {
			match($0, /size: [0-9]+/)
			half = int(substr($0, RSTART + 6, RLENGTH - 6) / 2 / 4096) * 4096
			sub(/size: [0-9]+/, "size: " half)
			next_req = 0; binds = 0
		}
		half && /fn: vkBindImageMemory,/ && ++binds == 2 {
			sub(/memoryOffset: [0-9]+/, "memoryOffset: " half)
			half = 0; edited = 1
		}
		{ print }
		END { if (!edited) exit 1 }' >close.txt
	trace-encode -o close.trace close.txt
	replay_error --validate --screenshot $SHOT -o close.png close.trace
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	echo "$(ae close.png "$W/mpv.frame-$SHOT.png") pixels differ"
	[ "$(ae close.png "$W/mpv.frame-$SHOT.png")" = 0 ]
}

@test "mpv --vo=gpu-next: exit status as without the layer, replay with no message it does not make natively, the frame pixel-equal" {
	start_xvfb
	capture gpu-next next
	stop_xvfb
	[ "$(cat "$W/next.rc")" = "$(cat "$W/next-native.rc")" ]
	replay_error --validate --screenshot $SHOT -o next.png "$W/next.trace"
	echo "$output" >replay.log
	# libplacebo destroys a swapchain semaphore at teardown that a batch
	# may still wait on: natively the layer says so in some runs and not
	# in others (the GPU's timing), so one native run cannot pin it
	{ vuids "$W/next-native.out"; echo VUID-vkDestroySemaphore-semaphore-01137; } | sort -u >native
	comm -23 <(vuids replay.log) native >extra
	cat replay.log extra
	[ ! -s extra ]
	[ "$(ae next.png "$W/next.frame-$SHOT.png")" = 0 ]
}

@test "running ahead, mpv's three submits a frame go out as two calls: its fence polls with no timeout, its debug names and query reads leave them held, and the command buffer it begins again while held is another; validated, the frame pixel-equal" {
	local m
	for m in ahead captured; do
		VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT=$m.trace \
			"$REPLAY" $([ $m = ahead ] || echo --waits-as-captured) "$W/mpv.trace"
	done
	local trace ahead captured
	trace=$(trace-decode "$W/mpv.trace" | grep -c 'fn: vkQueueSubmit,')
	ahead=$(trace-decode ahead.trace | grep -c 'fn: vkQueueSubmit,')
	captured=$(trace-decode captured.trace | grep -c 'fn: vkQueueSubmit,')
	echo "vkQueueSubmit calls: the trace $trace, running ahead $ahead, waits as captured $captured"
	[ "$trace" -ge 90 ]
	[ "$ahead" -le $((trace * 3 / 4)) ]
	[ "$captured" -gt "$ahead" ]
	run replay --validate --screenshot $SHOT -o a.png "$W/mpv.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(ae a.png "$W/mpv.frame-$SHOT.png")" = 0 ]
	[ -z "$(grep -v '^trace-replay: frame' <<<"$output")" ]
}
