#!/usr/bin/env bats
# A program whose threads record and submit at once (examples/vkthreads:
# four threads, each writing its slice of one mapped buffer, copying it
# through a device buffer and back, and checking what came back), under
# the capture layer: the program runs as it does without it, the trace
# keeps each thread's calls and the bytes each wrote before its submit,
# and it replays and trims under the validation layer without a word.

load helpers

setup_file() {
	export W="$BATS_FILE_TMPDIR" TOP
	sanitizer_prep
	vkthreads_pair "$W/thr.trace" --threads 4 --frames 50
	trace-decode "$W/thr.trace" >"$W/thr.txt"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "vkthreads exits 0 and prints the same with the layer as without" {
	[ "$(cat "$W/native.rc")" = 0 ]
	[ "$(cat "$W/layer.rc")" = 0 ]
	cmp "$W/native.out" "$W/layer.out"
}

@test "the trace keeps each thread's calls: four threads of 50 submits" {
	local t
	for t in $(grep -o 'thread: [0-9]*, fn: vkQueueSubmit,' "$W/thr.txt" | sort -u | grep -o '[0-9]*'); do
		[ "$(grep -c "thread: $t, fn: vkQueueSubmit," "$W/thr.txt")" = 50 ]
	done
	[ "$(grep -o 'thread: [0-9]*, fn: vkQueueSubmit,' "$W/thr.txt" | sort -u | wc -l)" = 4 ]
}

@test "at each submit the trace holds what the submitting thread wrote into its slice" {
	python3 "$TOP/tests/updates.py" slices 4096 <"$W/thr.txt"
}

@test "the trace replays under the validation layer without a word, also the sanitizer build" {
	run trace-replay --validate "$W/thr.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run sanitized "$ASAN_BIN/trace-replay" "$W/thr.trace"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "calls cut from the middle of the run replay validated on their own" {
	local from
	from=$(grep 'fn: vkQueueSubmit,' "$W/thr.txt" | sed -n '100s/^{call: \([0-9]*\),.*/\1/p')
	trace-trim --calls "$from-" -o cut.trace "$W/thr.trace"
	[ "$(trace-decode cut.trace | grep -c 'fn: vkQueueSubmit,')" -ge 100 ]
	run trace-replay --validate cut.trace
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
