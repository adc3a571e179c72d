#!/usr/bin/env bats
# tracekit's seek index in a zstd trace (lib/stream/seekindex.c): what
# trace-filter and trace-trim read with it is what they read without it
# (TRACE_SEEK=0), the frames they jump over are never decompressed, and a
# damaged index is one error.  The capture: the example presenting 150
# frames under the layer, its chunks flushed every 2 ms (TRACEKIT_FLUSH_MS)
# so that the file has many zstd frames, indexed although short
# (TRACE_SEEK_INDEX_MIN=0).

load helpers

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	export VK_LAYER_PATH="$TOP/build/layer:/usr/share/vulkan/explicit_layer.d"
	start_xvfb
	# A point needs a zstd frame of its own, and a frame ends at a flush:
	# the writer thread at its default SCHED_IDLE, starved by other
	# processes, wrote the same stream as 4 or 11 zstd frames in 2 of 8
	# captures beside a replay (3 points, one set ending at frame 36),
	# so it runs at the usual priority here (21-37 zstd frames, 5
	# points, in 8 captures beside the replay and two busy loops).
	local rc=0
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/ex.trace" \
		TRACEKIT_FLUSH_MS=2 TRACE_SEEK_INDEX_MIN=0 TRACEKIT_WRITER_SCHED=normal \
		timeout 60 "$TOP/build/examples/vkexample" --frames 150 --present >"$W/ex.out" 2>&1 || rc=$?
	echo $rc >"$W/ex.rc"
	# the same at the layer's defaults: too short for an index
	VK_INSTANCE_LAYERS=VK_LAYER_TRACEKIT_capture TRACEKIT_OUTPUT="$W/plain.trace" \
		timeout 60 "$TOP/build/examples/vkexample" --frames 150 --present >/dev/null 2>&1
}

teardown_file() {
	stop_xvfb
}

# points TRACE: the index's points, one "POS CALL FRAME DEFS" a line
points() {
	python3 "$TOP/tests/seekindex.py" show "$1" | sed -n 's/^point //p'
}

@test "a capture long enough gets the seek index; zstd and a seekable-format reader still read the file" {
	tail -5 "$W/ex.out"
	[ "$(cat "$W/ex.rc")" = 0 ]
	trace-decode "$W/ex.trace" | tail -n 2 | cut -c 1-200
	run points "$W/ex.trace"
	[ "$status" -eq 0 ]
	echo "$output"
	# a point every 64 KiB of stream at most, frames growing
	[ "${#lines[@]}" -ge 4 ]
	[ "$(awk '{ print $3 }' <<<"$output" | sort -n | tail -n 1)" -ge 100 ]
	zstd -tq "$W/ex.trace"
	# the seek table is still the file's last frame, and the frames it
	# lists are the data frames from the file's start
	python3 - "$W/ex.trace" <<-'EOF'
		import struct, sys, subprocess
		d = open(sys.argv[1], "rb").read()
		n, desc, magic = struct.unpack("<IBI", d[-9:])
		assert magic == 0x8F92EAB1 and desc == 0
		ts = len(d) - n * 8 - 17
		at = 0
		for i in range(n):
		    cs, ds = struct.unpack_from("<II", d, ts + 8 + i * 8)
		    got = subprocess.run(["zstd", "-dcq"], input=d[at:at + cs], stdout=subprocess.PIPE, check=True).stdout
		    assert len(got) == ds, (i, len(got), ds)
		    at += cs
	EOF
	# a short capture at the defaults has none: its size is the stream's
	run python3 "$TOP/tests/seekindex.py" show "$W/plain.trace"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no index"* ]]
}

@test "trace-filter with the seek index writes what it writes reading every frame: frames, calls, several ranges, text, counts" {
	local args
	while read -r args; do
		echo "== $args"
		TRACE_SEEK=0 trace-filter $args -o "$W/all.out" "$W/ex.trace"
		trace-filter $args -o "$W/seek.out" "$W/ex.trace"
		cmp "$W/all.out" "$W/seek.out"
	done <<-EOF
		--frames 120
		--frames 80-81 -f text
		--frames 40,130-
		--calls 2500-2600
		--calls 10,3300-3400/3
		--frames 110- --keep vkQueue*
		--frames 90- --count --by-frame
	EOF
	# not empty: the frames asked for are there
	[ "$(trace-filter --frames 120 "$W/ex.trace" | trace-decode | grep -c 'fn: vkQueuePresentKHR,')" -eq 1 ]
}

@test "trace-filter never decompresses the zstd frames it jumps over" {
	# the frame that holds the last point but one damaged; calls from the
	# last point's on
	local p last frame
	p=$(points "$W/ex.trace" | tail -n 2 | head -n 1 | cut -d' ' -f1)
	last=$(points "$W/ex.trace" | tail -n 1 | cut -d' ' -f2)
	frame=$(points "$W/ex.trace" | tail -n 1 | cut -d' ' -f3)
	python3 "$TOP/tests/seekindex.py" flip-frame "$W/ex.trace" "$p" "$W/flipped.trace"
	# read in full, the damage is found
	TRACE_SEEK=0 run trace-filter --calls "$last-" -o "$W/x.out" "$W/flipped.trace"
	[ "$status" -eq 1 ]
	[[ "$output" == *"corrupt zstd stream"* ]]
	# the index jumps past it to the last point, and the cut is whole
	run trace-filter --calls "$last-" -o "$W/x.out" "$W/flipped.trace"
	[ "$status" -eq 0 ]
	trace-filter --calls "$last-" -o "$W/y.out" "$W/ex.trace"
	cmp "$W/x.out" "$W/y.out"
	# every present from the last point's frame on: where the point falls
	# depends on when the timed flushes began zstd frames
	echo "last point: call $last, frame $frame"
	[ "$frame" -lt 150 ]
	[ "$(trace-decode "$W/y.out" | grep -c 'fn: vkQueuePresentKHR,')" -eq $((150 - frame)) ]
}

@test "trace-trim reads the range again from the seek index's point before it: the same cut" {
	local f
	for f in 3 75 140; do
		TRACE_SEEK=0 trace-trim --frames "$f" -o "$W/t0.trace" "$W/ex.trace"
		trace-trim --frames "$f" -o "$W/t1.trace" "$W/ex.trace"
		cmp "$W/t0.trace" "$W/t1.trace"
	done
	trace-replay --check "$W/t1.trace"
}

@test "a damaged seek index or seek table is one error naming the file and where, exit 1, no output" {
	# calls from the last point's on: the jump goes to that point, which
	# the damage to one point or to the log's end reaches (frames would
	# pick one by the capture's timing)
	local how last
	last=$(points "$W/ex.trace" | tail -n 1 | cut -d' ' -f2)
	for how in reserved table-size table-magic frame-past index-size tag crc version count \
		backwards past-stream log-short log-size kind twice; do
		python3 "$TOP/tests/seekindex.py" damage "$W/ex.trace" "$how" "$W/bad.trace"
		rm -f "$W/bad.out"
		run trace-filter --calls "$last-" -o "$W/bad.out" "$W/bad.trace"
		echo "$how: $status: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "trace-filter: $W/bad.trace: seek "* ]]
		[[ "$output" == *"file byte "* ]]
		[ ! -e "$W/bad.out" ]
		# read in full, the seek table is not looked at (a size that
		# does not fit is the zstd stream's own damage)
		[ "$how" = index-size ] ||
			TRACE_SEEK=0 trace-filter --calls "$last-" -o /dev/null "$W/bad.trace"
	done
	# a point inside a record: the stream's own error, at its byte, saying
	# the index sent the reader there
	python3 "$TOP/tests/seekindex.py" damage "$W/ex.trace" mid-record "$W/bad.trace"
	run trace-filter --calls "$last-" -o "$W/bad.out" "$W/bad.trace"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "trace-filter: $W/bad.trace: byte "* ]]
	[[ "$output" == *"where the seek index sent it; TRACE_SEEK=0 reads from the start)" ]]
	[ ! -e "$W/bad.out" ]
}

@test "a pipe, TRACE_SEEK=0 and a Snappy file read from the start, as before" {
	trace-filter --frames 120 -o "$W/ref.out" "$W/ex.trace"
	trace-filter --frames 120 -o "$W/pipe.out" - <"$W/ex.trace"
	cmp "$W/ref.out" "$W/pipe.out"
	trace-encode -z snappy -o "$W/ex.snappy" "$W/ex.trace"
	trace-filter --frames 120 -f zstd -o "$W/snappy.out" "$W/ex.snappy"
	cmp "$W/ref.out" "$W/snappy.out"
}
