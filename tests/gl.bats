#!/usr/bin/env bats
# Real OpenGL traces, recorded by apitrace under Xvfb at the start of this
# file, pass through trace-encode and trace-decode without losing anything
# that `apitrace dump -v` shows, in every container apitrace writes.
#
#   glxgears      GLX, immediate mode and display lists, stopped by SIGINT
#                 (so its last call is usually an incomplete glXSwapBuffers)
#   glxinfo       GLX, long strings, many glGetString/glGetIntegerv queries
#   es2gears      EGL + GLES2 (es2gears_x11, traced with --api egl): shaders,
#                 vertex arrays, blobs
#   glxheads      GLX, one window, stopped by SIGINT (it never ends by itself)
#   fixture       the bundled tests/data/glxgears.trace
#
# Brotli and gzip copies of glxgears and es2gears are made with
# `apitrace repack --brotli` and `apitrace repack -z`.

load helpers

# record NAME SECONDS MIN_CALLS -- apitrace-options... PROGRAM
# Records PROGRAM for SECONDS (0: until it exits) into $W/NAME.trace; if the
# machine was too slow for the program to get going, or so slow that
# apitrace was killed before it wrote its last chunk (the file then ends
# inside a call: seen twice, es2gears cut at 2 MiB both tries of one run),
# tries again with twice the time, three tries in all.  The trace's
# validity is the subject of its own test.
record() {
	local name=$1 secs=$2 min=$3 try n
	shift 4
	for try in 1 2 3; do
		rm -f "$W/$name.trace"
		if [ "$secs" = 0 ]; then
			run_for 60 apitrace trace -o "$W/$name.trace" "$@" >/dev/null 2>>"$W/record.log"
		else
			run_for "$secs" apitrace trace -o "$W/$name.trace" "$@" \
				>/dev/null 2>>"$W/record.log"
			secs=$((secs * 2))
		fi
		n=$(full_dump "$W/$name.trace" 2>/dev/null | grep -c '^[0-9]' || true)
		[ "$n" -ge "$min" ] && trace-decode "$W/$name.trace" >/dev/null 2>&1 && break
	done
	return 0
}

setup_file() {
	W="$BATS_FILE_TMPDIR"
	export W
	start_xvfb
	record glxgears 2 1000 -- glxgears
	record glxinfo 0 100 -- glxinfo
	record es2gears 2 1000 -- --api egl es2gears_x11
	record glxheads 1 1000 -- glxheads
	stop_xvfb
	cp "$DATA/glxgears.trace" "$W/fixture.trace"
	local t
	for t in glxgears es2gears; do
		apitrace repack --brotli "$W/$t.trace" "$W/$t.brotli.trace" 2>>"$W/record.log"
		apitrace repack -z "$W/$t.trace" "$W/$t.gzip.trace" 2>>"$W/record.log"
	done
	# apitrace's own view of every input: the oracle of the tests below
	for t in "$W"/*.trace; do
		full_dump "$t" >"${t%.trace}.dump" 2>/dev/null || true
	done
}

teardown_file() {
	stop_xvfb
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
}

# same EXPECTED ACTUAL: byte-identical files, or the first differences shown
same() {
	if ! cmp -s "$1" "$2"; then
		echo "# $2 differs from $1:"
		diff "$1" "$2" | head -20
		return 1
	fi
}

# calls N: how many calls apitrace dump shows in NAME's dump
calls() {
	grep -c '^[0-9]' "$W/$1.dump" || true
}

# apitrace info's FIELD of a trace (a JSON number or string)
info_field() {
	apitrace info "$1" | sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p"
}

# (a) trace-encode's output reads, in apitrace, exactly like the input
encode_dumps_alike() {
	local in="$W/$1.trace"
	[ -s "$W/$1.dump" ]
	trace-encode -o enc.trace "$in"
	full_dump enc.trace >enc.dump
	same "$W/$1.dump" enc.dump
}

# (b) through the text form and back, apitrace still sees the same trace
text_pipe_dumps_alike() {
	local in="$W/$1.trace"
	[ -s "$W/$1.dump" ]
	trace-decode "$in" | trace-encode >piped.trace
	full_dump piped.trace >piped.dump
	same "$W/$1.dump" piped.dump
}

# The calls apitrace dumped, one a line: number, thread, function, and
# whether it is incomplete; from a dump, and from our text of the trace.
dump_calls() {
	sed -n 's/^\([0-9][0-9]*\) @\([0-9]*\) \([A-Za-z0-9_]*\)(.*\/\/ incomplete$/\1 @\2 \3 incomplete/p; t
		s/^\([0-9][0-9]*\) @\([0-9]*\) \([A-Za-z0-9_]*\)(.*/\1 @\2 \3/p' "$1"
}
text_calls() {
	sed -n 's/^{call: \([0-9]*\), thread: \([0-9]*\), fn: \([^,}]*\).*flags: \[incomplete\]}$/\1 @\2 \3 incomplete/p; t
		s/^{call: \([0-9]*\), thread: \([0-9]*\), fn: \([^,}]*\).*/\1 @\2 \3/p' "$1"
}

# (c) text -> binary -> text is the identity, in every container we write,
# and the text has the calls apitrace dumps (its oracle, not our reader):
# numbers, threads, functions, incomplete ones; and apitrace dumps the
# Brotli copy as it dumps the input
text_roundtrip_identical() {
	local in="$W/$1.trace" z
	trace-decode "$in" >t1.txt
	[ "$(wc -l <t1.txt)" -gt 1 ]
	dump_calls "$W/$1.dump" >apitrace.calls
	text_calls t1.txt >our.calls
	[ "$(wc -l <our.calls)" -eq "$(calls "$1")" ]
	same apitrace.calls our.calls
	trace-encode t1.txt >b.trace
	trace-decode b.trace >t2.txt
	same t1.txt t2.txt
	for z in "brotli -q 9" zstd none snappy; do
		# shellcheck disable=SC2086
		trace-encode -z $z -o "z.trace" "$in"
		trace-decode z.trace >tz.txt
		same t1.txt tz.txt
		# (snappy's is (a)'s; apitrace reads neither 'tr' nor, here, zstd)
		[ "$z" != "brotli -q 9" ] || { full_dump z.trace >z.dump && same "$W/$1.dump" z.dump; }
	done
}

# -z zstd: zstd's seekable format (frames, then a seek table of them)
@test "trace-encode -z zstd writes frames zstd -t accepts, then a seek table that sums to the file" {
	trace-encode -z zstd -o z.trace "$W/glxgears.trace"
	zstd -q -t z.trace
	trace-encode -z none -o raw.trace "$W/glxgears.trace"
	python3 - z.trace $(($(stat -c %s raw.trace) - 2)) <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
n, desc, magic = struct.unpack("<IBI", d[-9:])
assert magic == 0x8F92EAB1 and desc == 0, (hex(magic), desc)
table = 8 + 8 * n + 9
skip_magic, size = struct.unpack("<II", d[-table:-table + 8])
assert skip_magic == 0x184D2A5E and size == table - 8, (hex(skip_magic), size)
sizes = [struct.unpack("<II", d[-table + 8 + 8 * i:-table + 16 + 8 * i]) for i in range(n)]
assert sum(c for c, _ in sizes) + table == len(d), "frames and table fill the file"
assert sum(u for _, u in sizes) == int(sys.argv[2]), "frames hold the stream"
print("%d frames, %d bytes" % (n, len(d)))
EOF
}

# (d) a repacked copy reads as the same text as the Snappy original, with
# the calls apitrace dumps of the copy
copy_reads_alike() {
	trace-decode "$W/$1.trace" >orig.txt
	trace-decode "$W/$1.$2.trace" >copy.txt
	[ "$(wc -l <orig.txt)" -gt 1 ]
	same orig.txt copy.txt
	dump_calls "$W/$1.$2.dump" >apitrace.calls
	text_calls copy.txt >our.calls
	[ "$(wc -l <our.calls)" -eq "$(calls "$1.$2")" ]
	same apitrace.calls our.calls
}

# ------------------------------------------------------------------
# The recordings themselves: real, non-trivial apitrace traces.

@test "the glxgears recording is a GLX apitrace trace of 1000+ calls over several frames" {
	[ "$(info_field "$W/glxgears.trace" ContainerVersion)" = 6 ]
	[ "$(info_field "$W/glxgears.trace" ContainerType)" = Snappy ]
	[[ "$(info_field "$W/glxgears.trace" API)" == *GLX* ]]
	[ "$(info_field "$W/glxgears.trace" FramesCount)" -ge 10 ]
	[ "$(calls glxgears)" -ge 1000 ]
	grep -q ' glXSwapBuffers(' "$W/glxgears.dump"
}

@test "the glxinfo recording holds its GL string queries and runs to a normal end" {
	[ "$(info_field "$W/glxinfo.trace" ContainerVersion)" = 6 ]
	[ "$(calls glxinfo)" -ge 100 ]
	grep -q ' glGetString(name = GL_EXTENSIONS)' "$W/glxinfo.dump"
	grep -q ' glXQueryExtensionsString(' "$W/glxinfo.dump"
	if grep -q '// incomplete' "$W/glxinfo.dump"; then false; fi
}

@test "the es2gears_x11 recording is an EGL/GLES2 trace with shaders and frames" {
	[[ "$(info_field "$W/es2gears.trace" API)" == *EGL* ]]
	[ "$(info_field "$W/es2gears.trace" FramesCount)" -ge 10 ]
	[ "$(calls es2gears)" -ge 1000 ]
	grep -q ' eglSwapBuffers(' "$W/es2gears.dump"
	grep -q ' glShaderSource(' "$W/es2gears.dump"
}

@test "the glxheads recording is a GLX trace of 1000+ calls over several frames" {
	[ "$(info_field "$W/glxheads.trace" FramesCount)" -ge 10 ]
	[ "$(calls glxheads)" -ge 1000 ]
	grep -q ' glXSwapBuffers(' "$W/glxheads.dump"
}

@test "the Brotli and gzip copies are what apitrace repack says they are" {
	[ "$(info_field "$W/glxgears.brotli.trace" ContainerType)" = Brotli ]
	[ "$(info_field "$W/glxgears.gzip.trace" ContainerType)" = ZLib ]
	[ "$(info_field "$W/es2gears.brotli.trace" ContainerType)" = Brotli ]
	[ "$(info_field "$W/es2gears.gzip.trace" ContainerType)" = ZLib ]
	same "$W/glxgears.dump" "$W/glxgears.brotli.dump"
	same "$W/es2gears.dump" "$W/es2gears.gzip.dump"
}

@test "the bundled fixture tests/data/glxgears.trace is a real glxgears trace of at most 300 KB" {
	[ "$(stat -c %s "$DATA/glxgears.trace")" -le 307200 ]
	[ "$(info_field "$DATA/glxgears.trace" ContainerVersion)" = 6 ]
	[ "$(info_field "$DATA/glxgears.trace" FramesCount)" -ge 10 ]
	[ "$(calls fixture)" -ge 1000 ]
	grep -q 'glxgears' "$W/fixture.dump"
}

# ------------------------------------------------------------------
# (a) trace-encode output dumps exactly like the original.

@test "trace-encode output of a glxgears trace dumps exactly like the original" {
	encode_dumps_alike glxgears
}

@test "trace-encode output of a Brotli glxgears trace dumps exactly like the original" {
	encode_dumps_alike glxgears.brotli
}

@test "trace-encode output of a gzip glxgears trace dumps exactly like the original" {
	encode_dumps_alike glxgears.gzip
}

@test "trace-encode output of a glxinfo trace dumps exactly like the original" {
	encode_dumps_alike glxinfo
}

@test "trace-encode output of an es2gears (EGL/GLES2) trace dumps exactly like the original" {
	encode_dumps_alike es2gears
}

@test "trace-encode output of a Brotli es2gears trace dumps exactly like the original" {
	encode_dumps_alike es2gears.brotli
}

@test "trace-encode output of a gzip es2gears trace dumps exactly like the original" {
	encode_dumps_alike es2gears.gzip
}

@test "trace-encode output of a glxheads trace dumps exactly like the original" {
	encode_dumps_alike glxheads
}

@test "trace-encode output of the bundled fixture dumps exactly like the original" {
	encode_dumps_alike fixture
}

# ------------------------------------------------------------------
# (b) trace-decode | trace-encode gives the same dump.

@test "trace-decode | trace-encode of a glxgears trace dumps exactly like the original" {
	text_pipe_dumps_alike glxgears
}

@test "trace-decode | trace-encode of a Brotli glxgears trace dumps exactly like the original" {
	text_pipe_dumps_alike glxgears.brotli
}

@test "trace-decode | trace-encode of a gzip glxgears trace dumps exactly like the original" {
	text_pipe_dumps_alike glxgears.gzip
}

@test "trace-decode | trace-encode of a glxinfo trace dumps exactly like the original" {
	text_pipe_dumps_alike glxinfo
}

@test "trace-decode | trace-encode of an es2gears trace dumps exactly like the original" {
	text_pipe_dumps_alike es2gears
}

@test "trace-decode | trace-encode of a Brotli es2gears trace dumps exactly like the original" {
	text_pipe_dumps_alike es2gears.brotli
}

@test "trace-decode | trace-encode of a gzip es2gears trace dumps exactly like the original" {
	text_pipe_dumps_alike es2gears.gzip
}

@test "trace-decode | trace-encode of a glxheads trace dumps exactly like the original" {
	text_pipe_dumps_alike glxheads
}

@test "trace-decode | trace-encode of the bundled fixture dumps exactly like the original" {
	text_pipe_dumps_alike fixture
}

# ------------------------------------------------------------------
# (c) text -> binary -> text is identical; -z brotli/none/snappy agree.

@test "text -> binary -> text of a glxgears trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical glxgears
}

@test "text -> binary -> text of a Brotli glxgears trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical glxgears.brotli
}

@test "text -> binary -> text of a gzip glxgears trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical glxgears.gzip
}

@test "text -> binary -> text of a glxinfo trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical glxinfo
}

@test "text -> binary -> text of an es2gears trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical es2gears
}

@test "text -> binary -> text of a Brotli es2gears trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical es2gears.brotli
}

@test "text -> binary -> text of a gzip es2gears trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical es2gears.gzip
}

@test "text -> binary -> text of a glxheads trace is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical glxheads
}

@test "text -> binary -> text of the bundled fixture is identical, and -z brotli/none/snappy decode the same" {
	text_roundtrip_identical fixture
}

@test "trace-encode -z brotli at the default quality writes a Brotli trace apitrace dumps like the original" {
	trace-encode -z brotli -o q.trace "$W/glxgears.trace"
	[ "$(info_field q.trace ContainerType)" = Brotli ]
	full_dump q.trace >q.dump
	same "$W/glxgears.dump" q.dump
	trace-decode "$W/glxgears.trace" >t1.txt
	trace-decode q.trace >t2.txt
	same t1.txt t2.txt
}

@test "trace-encode -z none writes the raw 'tr' container, which reads back to the same apitrace dump" {
	trace-encode -z none -o raw.trace "$W/glxinfo.trace"
	[ "$(head -c 2 raw.trace)" = tr ]
	trace-encode -o back.trace raw.trace
	full_dump back.trace >back.dump
	same "$W/glxinfo.dump" back.dump
}

# ------------------------------------------------------------------
# (d) Brotli and gzip copies read as the same text as the Snappy original.

@test "a Brotli copy of a glxgears trace (apitrace repack --brotli) decodes to the same text as the Snappy original" {
	copy_reads_alike glxgears brotli
}

@test "a gzip copy of a glxgears trace (apitrace repack -z) decodes to the same text as the Snappy original" {
	copy_reads_alike glxgears gzip
}

@test "a Brotli copy of an es2gears trace (apitrace repack --brotli) decodes to the same text as the Snappy original" {
	copy_reads_alike es2gears brotli
}

@test "a gzip copy of an es2gears trace (apitrace repack -z) decodes to the same text as the Snappy original" {
	copy_reads_alike es2gears gzip
}
