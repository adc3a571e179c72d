#!/usr/bin/env bats
# trace-filter: selections checked against independent counts from the
# text form of real apitrace GL traces (glxgears, recorded under Xvfb).

load helpers

setup_file() {
	start_xvfb
	cd "$BATS_FILE_TMPDIR"
	# a loaded machine can stop glxgears before it draws: try again
	local try
	for try in 1 2 3; do
		rm -f gears.trace gears.txt
		run_for 2 apitrace trace -o gears.trace glxgears >/dev/null 2>&1
		trace-decode gears.trace >gears.txt 2>/dev/null &&
			[ "$(grep -c 'fn: glXSwapBuffers,' gears.txt)" -gt 10 ] && break
	done
	# the trace must have the shape the tests count on
	[ "$(grep -c 'fn: glXSwapBuffers,' gears.txt)" -gt 10 ]
	grep -q 'fn: glXCreateContext,' gears.txt
}

teardown_file() {
	stop_xvfb
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	G=gears.trace
	T=gears.txt
	mkdir -p "$BATS_TEST_TMPDIR/w"
	W="$BATS_TEST_TMPDIR/w"
}

# records (lines after the header) of a text stream on stdin
records() { tail -n +2; }
nrecords() { records | wc -l; }
# the text of a trace with the call numbers taken out
unnumbered() { trace-decode "$1" | sed -e 's/^{call: [0-9]*, /{/'; }
# the first bytes of a file, in hex
magic() { head -c 2 "$1" | od -An -tx1 | tr -d ' \n'; }

# A two-thread stream whose calls overlap: 3 ends before 2, 6 before 5.
two_threads() {
	cat <<'EOF'
{tracekit: 1, semantic_version: 6, properties: {}}
{call: 0, thread: 0, fn: a}
{call: 1, thread: 0, fn: dropme}
{call: 3, thread: 1, fn: b3}
{call: 2, thread: 0, fn: b2}
{call: 4, thread: 1, fn: dropme}
{call: 6, thread: 1, fn: c6}
{call: 5, thread: 0, fn: c5}
{call: 7, thread: 0, fn: d}
EOF
}

# ------------------------------------------------------------------
# Name rules

@test "--keep keeps exactly the calls a grep of the text form finds" {
	want=$(grep -c 'fn: glVertex3f,' "$T")
	[ "$want" -gt 0 ]
	trace-filter --keep glVertex3f "$G" >"$W/out.trace"
	trace-decode "$W/out.trace" >"$W/out.txt"
	[ "$(records <"$W/out.txt" | grep -c 'fn: glVertex3f,')" -eq "$want" ]
	[ "$(nrecords <"$W/out.txt")" -eq "$want" ]
}

@test "--keep on a text trace writes the very lines a grep keeps" {
	trace-filter --keep glClear "$T" >"$W/out.txt"
	grep -E '^\{tracekit|fn: glClear[,}]' "$T" >"$W/want.txt"
	[ "$(wc -l <"$W/want.txt")" -gt 10 ]
	cmp "$W/want.txt" "$W/out.txt"
}

@test "--keep globs match whole names with * and ?" {
	want=$(grep -cE 'fn: gl(Push|Pop)Matrix[,}]' "$T")
	[ "$want" -gt 0 ]
	[ "$(trace-filter --keep 'glP?shMatrix' --keep 'glPop*' -f text "$G" | nrecords)" -eq "$want" ]
	# a glob matches the whole name, not a part of it
	[ "$(trace-filter --keep 'Matrix' -f text "$G" | nrecords)" -eq 0 ]
}

@test "--drop removes exactly the matching calls and keeps the rest" {
	total=$(nrecords <"$T")
	rot=$(grep -c 'fn: glRotatef,' "$T")
	[ "$rot" -gt 0 ]
	trace-filter --drop glRotatef "$G" >"$W/out.trace"
	trace-decode "$W/out.trace" >"$W/out.txt"
	[ "$(nrecords <"$W/out.txt")" -eq $((total - rot)) ]
	if grep -q 'fn: glRotatef,' "$W/out.txt"; then false; fi
}

@test "the last matching rule decides; unmatched names get the opposite of the first rule" {
	total=$(nrecords <"$T")
	glx=$(grep -c 'fn: glX' "$T")
	swaps=$(grep -c 'fn: glXSwapBuffers,' "$T")
	# first rule --drop: unmatched names are kept; the later --keep wins for swaps
	[ "$(trace-filter --drop 'glX*' --keep glXSwapBuffers -f text "$G" | nrecords)" \
		-eq $((total - glx + swaps)) ]
	# the order matters: here --drop comes last and wins
	[ "$(trace-filter --keep glXSwapBuffers --drop 'glX*' -f text "$G" | nrecords)" -eq 0 ]
	# first rule --keep: unmatched names are dropped
	want=$(grep -E 'fn: gl[VN]' "$T" | grep -vc 'fn: glViewport,')
	[ "$want" -gt 0 ]
	[ "$(trace-filter --keep 'gl[VN]*' --drop 'glViewport' -f text "$G" | nrecords)" -eq "$want" ]
}

# ------------------------------------------------------------------
# Threads, frames, calls, handles

@test "--thread keeps the calls of the threads named, any of them" {
	two_threads >"$W/mt.txt"
	run trace-filter --thread 1 "$W/mt.txt"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | records | grep -o 'fn: [a-z0-9]*' | tr '\n' ' ')" = \
		"fn: b3 fn: dropme fn: c6 " ]
	[ "$(trace-filter --thread 0 --thread 1 "$W/mt.txt" | nrecords)" -eq 8 ]
	# glxgears draws on one thread, 0
	[ "$(trace-filter --thread 0 -f text "$G" | nrecords)" -eq "$(nrecords <"$T")" ]
	[ "$(trace-filter --thread 1 -f text "$G" | nrecords)" -eq 0 ]
}

@test "--frames agrees with counting glXSwapBuffers in the text form" {
	# frame N: the calls after the N-th swap, up to and including the next one
	awk 'NR > 1 { print f + 0 } /fn: glXSwapBuffers,/ { f++ }' "$T" >"$W/frames"
	for set in 0 3 2-5 7-; do
		case $set in
		*-) want=$(awk -v a="${set%-}" '$1 >= a' "$W/frames" | wc -l) ;;
		*-*) want=$(awk -v a="${set%-*}" -v b="${set#*-}" '$1 >= a && $1 <= b' "$W/frames" | wc -l) ;;
		*) want=$(awk -v a="$set" '$1 == a' "$W/frames" | wc -l) ;;
		esac
		got=$(trace-filter --frames "$set" -f text "$G" | nrecords)
		echo "frames $set: want $want, got $got"
		[ "$got" -eq "$want" ]
	done
	# each whole frame ends with its swap
	trace-filter --frames 4 -f text "$G" | tail -n 1 | grep -q 'fn: glXSwapBuffers,'
	[ "$(trace-filter --frames 4 -f text "$G" | grep -c 'fn: glXSwapBuffers,')" -eq 1 ]
	[ "$(trace-filter --frames 0-9 --keep glXSwapBuffers -f text "$G" | nrecords)" -eq 10 ]
}

@test "--frames stops reading after the last frame it asks for" {
	# frames 0 to 4 of the text form, then a line that is not a record:
	# read to the end, it would be bad input
	n=$(grep -n 'fn: glXSwapBuffers,' "$T" | sed -n '5s/:.*//p')
	{ head -n "$n" "$T"; echo 'not a record'; } >cut.txt
	run trace-filter --frames 1-3 -o ok.txt cut.txt
	[ "$status" -eq 0 ]
	[ "$(grep -c 'fn: glXSwapBuffers,' ok.txt)" = 3 ]
	run trace-filter --frames 1- -o bad.txt cut.txt
	[ "$status" -eq 1 ]
	[ ! -e bad.txt ]
}

@test "tracekit.frame sets the frame of itself and what follows" {
	cat >"$W/marked.txt" <<'EOF'
{tracekit: 1, semantic_version: 6, properties: {}}
{call: 0, thread: 0, fn: setup}
{call: 1, thread: 0, fn: tracekit.frame, args: {index: 5}}
{call: 2, thread: 0, fn: work}
{call: 3, thread: 0, fn: vkQueuePresentKHR}
{call: 4, thread: 0, fn: more}
EOF
	[ "$(trace-filter --frames 0 "$W/marked.txt" | records | grep -o 'fn: [a-zA-Z.]*')" = "fn: setup" ]
	[ "$(trace-filter --frames 5 "$W/marked.txt" | records | grep -o 'fn: [a-zA-Z.]*' | tr '\n' ' ')" = \
		"fn: tracekit.frame fn: work fn: vkQueuePresentKHR " ]
	[ "$(trace-filter --frames 6 "$W/marked.txt" | records | grep -o 'fn: [a-zA-Z.]*')" = "fn: more" ]
}

@test "--calls keeps the call numbers of an apitrace call set" {
	nums() { trace-filter --calls "$1" -f text "$G" | records | sed -e 's/^{call: \([0-9]*\),.*/\1/' | tr '\n' ' '; }
	[ "$(nums 10-13,30)" = "10 11 12 13 30 " ]
	[ "$(nums '0-100/25')" = "0 25 50 75 100 " ]
	[ "$(nums '7 5')" = "5 7 " ]
	printf '1-2\n40\n' >"$W/set"
	[ "$(nums "@$W/set,3")" = "1 2 3 40 " ]
	last=$(records <"$T" | tail -n 1 | sed -e 's/^{call: \([0-9]*\),.*/\1/')
	[ "$(nums "$last-")" = "$last " ]
	[ "$(nums '*' | wc -w)" -eq "$(nrecords <"$T")" ]
	# */frame: the calls that end a frame
	[ "$(trace-filter --calls '*/frame' -f text "$G" | nrecords)" -eq "$(grep -c 'fn: glXSwapBuffers,' "$T")" ]
}

@test "--handle finds the calls naming a context pointer, and nothing else" {
	ctx=$(grep 'fn: glXCreateContext,' "$T" | sed -e 's/.*ret: \(0x[0-9a-f]*\).*/\1/')
	[[ $ctx == 0x* ]]
	want=$(grep -cE "[[ ]$ctx[],}]" "$T")
	[ "$want" -ge 2 ] # created, made current
	trace-filter --handle "$ctx" -f text "$G" >"$W/out.txt"
	[ "$(nrecords <"$W/out.txt")" -eq "$want" ]
	grep -q 'fn: glXCreateContext,' "$W/out.txt"
	grep -q 'fn: glXMakeCurrent,' "$W/out.txt"
	# the same pointer in decimal
	[ "$(trace-filter --handle "$((ctx))" -f text "$G" | nrecords)" -eq "$want" ]
}

@test "--handle looks inside arrays and structs, and only at pointers" {
	# XVisualInfo.visual sits in a struct in an array, in a return and an argument
	vis=$(grep 'fn: glXChooseVisual,' "$T" | sed -e 's/.*visual: \(0x[0-9a-f]*\).*/\1/')
	[[ $vis == 0x* ]]
	want=$(grep -c "visual: $vis[,}]" "$T")
	[ "$want" -ge 2 ]
	[ "$(trace-filter --handle "$vis" -f text "$G" | nrecords)" -eq "$want" ]
	# the drawable is an XID, an integer: the same number is no handle
	xid=$(grep -m1 'fn: glXMakeCurrent,' "$T" | sed -e 's/.*drawable: \([0-9]*\).*/\1/')
	[ "$xid" -gt 0 ]
	[ "$(trace-filter --handle "$xid" -f text "$G" | nrecords)" -eq 0 ]
	# two handles: the calls naming either
	ctx=$(grep 'fn: glXCreateContext,' "$T" | sed -e 's/.*ret: \(0x[0-9a-f]*\).*/\1/')
	both=$(grep -cE "$vis|$ctx" "$T")
	[ "$(trace-filter --handle "$vis" --handle "$ctx" -f text "$G" | nrecords)" -eq "$both" ]
}

@test "criteria of different kinds combine with AND" {
	want=$(awk 'NR > 1 { if (f >= 2 && f <= 4 && /fn: glRotatef,/) n++ } /fn: glXSwapBuffers,/ { f++ } END { print n }' "$T")
	[ "$want" -gt 0 ]
	[ "$(trace-filter --frames 2-4 --keep glRotatef --thread 0 -f text "$G" | nrecords)" -eq "$want" ]
	[ "$(trace-filter --frames 2-4 --keep glRotatef --thread 3 -f text "$G" | nrecords)" -eq 0 ]
	[ "$(trace-filter --calls 0-50 --frames 1- -f text "$G" | nrecords)" -eq 0 ]
}

# ------------------------------------------------------------------
# --count

@test "--count totals equal the number of records, per function too" {
	trace-filter --count "$G" >"$W/count"
	tail -n 1 "$W/count" | grep -qE '^ *[0-9]+  total$'
	total=$(tail -n 1 "$W/count" | awk '{ print $1 }')
	[ "$total" -eq "$(nrecords <"$T")" ]
	[ "$(head -n -1 "$W/count" | awk '{ s += $1 } END { print s }')" -eq "$total" ]
	rot=$(awk '$2 == "glRotatef" { print $1 }' "$W/count")
	[ "$rot" -eq "$(grep -c 'fn: glRotatef,' "$T")" ]
	# one line a function
	[ "$(head -n -1 "$W/count" | wc -l)" -eq "$(grep -o 'fn: [A-Za-z0-9_]*' "$T" | sort -u | wc -l)" ]
}

@test "--count sorts by count, most first, then by name, in aligned columns" {
	trace-filter --count "$G" >"$W/count"
	head -n -1 "$W/count" >"$W/rows"
	sort -s -k1,1nr -k2,2 "$W/rows" | cmp - "$W/rows"
	# every line as wide as the total's
	[ "$(awk '{ print index($0, "  " $2) }' "$W/count" | sort -u | wc -l)" -eq 1 ]
}

@test "--count counts only what the criteria keep" {
	trace-filter --count --keep glClear --keep glXSwapBuffers "$G" >"$W/count"
	clear=$(grep -c 'fn: glClear,' "$T")
	swaps=$(grep -c 'fn: glXSwapBuffers,' "$T")
	[ "$(wc -l <"$W/count")" -eq 3 ]
	[ "$(awk '$2 == "glClear" { print $1 }' "$W/count")" -eq "$clear" ]
	[ "$(awk '$2 == "glXSwapBuffers" { print $1 }' "$W/count")" -eq "$swaps" ]
	[ "$(awk '$2 == "total" { print $1 }' "$W/count")" -eq $((clear + swaps)) ]
}

@test "--count --by-frame gives a table per frame that adds up to the whole" {
	trace-filter --count --by-frame --frames 0-2 "$G" >"$W/count"
	[ "$(grep -c '^frame ' "$W/count")" -eq 3 ]
	grep -q '^frame 0$' "$W/count"
	grep -q '^frame 2$' "$W/count"
	grep -q '^all frames$' "$W/count"
	sum=$(grep -E '  total$' "$W/count" | head -n -1 | awk '{ s += $1 } END { print s }')
	all=$(tail -n 1 "$W/count" | awk '{ print $1 }')
	[ "$sum" -eq "$all" ]
	want=$(awk 'NR > 1 && f <= 2 { n++ } /fn: glXSwapBuffers,/ { f++ } END { print n }' "$T")
	[ "$all" -eq "$want" ]
	# frame 1 holds exactly one swap
	sed -n '/^frame 1$/,/^$/p' "$W/count" | grep -qE '^ *1  glXSwapBuffers$'
}

@test "--count -o writes the table to the file" {
	trace-filter --count -o "$W/count" "$G"
	tail -n 1 "$W/count" | grep -q "^$(nrecords <"$T")  total$"
}

# ------------------------------------------------------------------
# Encodings

@test "text and binary inputs give the same selection" {
	trace-encode -z none "$T" >"$W/gears.raw"
	for opts in "--keep glRotatef" "--drop gl*Matrix --frames 3-8" "--calls 0-500/3" \
		"--handle $(grep 'fn: glXCreateContext,' "$T" | sed -e 's/.*ret: \(0x[0-9a-f]*\).*/\1/')"; do
		# shellcheck disable=SC2086
		trace-filter $opts "$G" >"$W/from-binary"
		# shellcheck disable=SC2086
		trace-filter $opts "$T" >"$W/from-text.txt"
		# shellcheck disable=SC2086
		trace-filter $opts "$W/gears.raw" >"$W/from-raw"
		unnumbered "$W/from-binary" >"$W/a"
		unnumbered "$W/from-text.txt" >"$W/b"
		unnumbered "$W/from-raw" >"$W/c"
		[ "$(wc -l <"$W/a")" -gt 1 ]
		cmp "$W/a" "$W/b"
		cmp "$W/a" "$W/c"
	done
}

@test "output keeps the input's encoding and container" {
	trace-filter --keep glClear "$G" >"$W/snappy"
	[ "$(magic "$W/snappy")" = 6174 ] # 'at'
	trace-encode -z none "$G" | trace-filter --keep glClear >"$W/raw"
	[ "$(magic "$W/raw")" = 7472 ] # 'tr'
	trace-filter --keep glClear "$T" >"$W/text"
	[ "$(head -c 1 "$W/text")" = "{" ]
	# gzip is read only: Snappy takes its place
	apitrace repack -z "$G" "$W/gears.gz" >/dev/null 2>&1
	[ "$(magic "$W/gears.gz")" = 1f8b ]
	trace-filter --keep glClear "$W/gears.gz" >"$W/from-gz"
	[ "$(magic "$W/from-gz")" = 6174 ]
	# Brotli has no magic: not one of the others, smaller than Snappy, and apitrace reads it
	trace-encode -z brotli "$G" >"$W/gears.br"
	trace-filter --keep glClear "$W/gears.br" >"$W/brotli"
	m=$(magic "$W/brotli")
	[ "$m" != 6174 ]
	[ "$m" != 7472 ]
	# (a Brotli stream may begin 1f 8b by chance, as one did in a make
	# check run: that it is not gzip is gzip's to say)
	! gzip -t <"$W/brotli" 2>/dev/null
	[ "$(head -c 1 "$W/brotli")" != "{" ]
	[ "$(stat -c %s "$W/brotli")" -lt "$(stat -c %s "$W/snappy")" ]
	# apitrace reads the Brotli file whole: as many calls as from the
	# Snappy one (a make check run once counted fewer than trace-decode
	# read from the capture, which glxgears' kill may leave cut mid-call)
	local from_br from_snappy
	from_br=$(apitrace dump "$W/brotli" | grep -c 'glClear(')
	from_snappy=$(apitrace dump "$W/snappy" | grep -c 'glClear(')
	echo "glClear calls apitrace reads: $from_br (Brotli), $from_snappy (Snappy), $(grep -c 'fn: glClear,' "$T") in the text"
	[ "$from_br" -eq "$from_snappy" ]
	[ "$from_br" -gt 10 ]
	for f in snappy raw from-gz brotli; do
		cmp <(unnumbered "$W/$f") <(unnumbered "$W/text")
	done
}

@test "-f chooses the output encoding" {
	trace-filter --keep glClear -f text "$G" >"$W/text"
	[ "$(head -c 1 "$W/text")" = "{" ]
	trace-filter --keep glClear -f none "$T" >"$W/raw"
	[ "$(magic "$W/raw")" = 7472 ]
	trace-filter --keep glClear -f snappy "$T" >"$W/snappy"
	[ "$(magic "$W/snappy")" = 6174 ]
	trace-filter --keep glClear -f brotli -o "$W/brotli" "$T"
	# apitrace sees the glClear calls it sees in the recording (compared
	# with its own dump of the recording: a recording cut by the kill
	# that ends it counted one fewer against the text once)
	want=$(apitrace dump "$G" | grep -c 'glClear(')
	local got
	got=$(apitrace dump "$W/brotli" 2>"$W/brotli.err" | grep -c 'glClear(' || true)
	# (once, under a full make check, the two differed; never since)
	echo "glClear: text $(grep -c 'fn: glClear,' "$T"), apitrace $want, apitrace of ours $got"
	cat "$W/brotli.err"
	[ "$want" -gt 10 ]
	[ "$got" -eq "$want" ]
}

@test "binary output numbers calls from 0 and text output keeps the numbers read" {
	trace-filter --calls 100-104 "$G" | trace-decode | records >"$W/binary"
	[ "$(sed -e 's/^{call: \([0-9]*\),.*/\1/' "$W/binary" | tr '\n' ' ')" = "0 1 2 3 4 " ]
	trace-filter --calls 100-104 "$T" | records >"$W/text"
	[ "$(sed -e 's/^{call: \([0-9]*\),.*/\1/' "$W/text" | tr '\n' ' ')" = "100 101 102 103 104 " ]
	# apitrace reads the cut and sees the same calls
	trace-filter --calls 100-104 -o "$W/cut.trace" "$G"
	[ "$(apitrace dump "$W/cut.trace" | grep -c '^[0-9]')" -eq 5 ]
}

@test "binary output keeps the enter order of calls that overlapped on two threads" {
	two_threads >"$W/mt.txt"
	trace-filter --drop dropme -f snappy "$W/mt.txt" | trace-decode | records >"$W/got"
	cat >"$W/want" <<'EOF'
{call: 0, thread: 0, fn: a}
{call: 2, thread: 1, fn: b3}
{call: 1, thread: 0, fn: b2}
{call: 4, thread: 1, fn: c6}
{call: 3, thread: 0, fn: c5}
{call: 5, thread: 0, fn: d}
EOF
	diff -u "$W/want" "$W/got"
}

# ------------------------------------------------------------------
# Errors

@test "bad usage exits 2, naming what is wrong, then the usage line" {
	usage_cases trace-filter "$G" <<EOF
--calls 5-2|--calls: bad call set '5-2': range 5-2 ends before it starts
--calls 1;2|--calls: bad call set '1;2': expected ',' between ranges, found ';2'
--calls 0-9/draw|--calls: bad call set '0-9/draw': frequency 'draw' is not supported (only 'frame': a stream does not say which calls draw)
--calls @$W/none|--calls: cannot read call set file '$W/none': No such file or directory
--frames x|--frames: bad call set 'x': unknown frequency 'x' (only 'frame')
--frames */frame|--frames takes frame numbers; '/frame' belongs to --calls
--thread -1|--thread takes a thread number, not '-1'
--thread x|--thread takes a thread number, not 'x'
--handle zz|--handle takes a pointer such as 0x55d0a1b2c3d0, not 'zz'
--handle 0|--handle 0: a null pointer names no object
--by-frame|--by-frame goes with --count
--count -f text|--count writes a table, not a trace: no -f
-f gzip|unknown format 'gzip' (snappy, zstd, brotli, none, text)
--bogus|unknown option '--bogus'
$G|one input at a time
EOF
	usage_cases trace-filter <<'EOF'
--keep|option '--keep' needs a value
EOF
}

@test "--help and --version exit 0" {
	run trace-filter --help
	[ "$status" -eq 0 ]
	[[ $output == *"--keep PAT"* ]]
	run trace-filter --version
	[ "$status" -eq 0 ]
	[[ $output == "trace-filter (tracekit) "* ]]
}

@test "a trace cut off reads to its last whole record, with one warning; damage in the middle exits 1 with no output" {
	# cut at half of the file, whatever length the recording came out (the
	# raw container: apitrace's one Snappy chunk, cut, holds nothing whole).
	# A raw trace has no end marker, so a cut that falls between two records
	# is a whole (shorter) trace and reads silently; no record is one byte
	# long, so of two neighbouring cut points at least one is mid-record.
	trace-encode -z none -o "$W/whole.raw" "$G"
	half=$(($(stat -c %s "$W/whole.raw") / 2))
	for at in $half $((half + 1)); do
		head -c $at "$W/whole.raw" >"$W/cut.trace"
		run trace-filter --keep glClear -f text -o "$W/out.txt" "$W/cut.trace"
		[ "$status" -eq 0 ]
		[ -z "$output" ] || break
	done
	echo "cut at byte $(stat -c %s "$W/cut.trace") of $(stat -c %s "$W/whole.raw"): $output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "trace-filter: $W/cut.trace: warning: trace ends mid-record at byte "*" after call "*": the capture was cut off" ]]
	# what it kept is the start of what the whole trace keeps; a cut that
	# falls between a call's enter and leave ends on that call, incomplete
	records <"$W/out.txt" | sed '$ s/, flags: \[incomplete\]}$/}/' >"$W/cut.txt"
	! grep -q incomplete "$W/cut.txt"
	trace-filter --keep glClear -f text "$G" | records | head -n "$(wc -l <"$W/cut.txt")" |
		cmp - "$W/cut.txt"
	[ "$(wc -l <"$W/cut.txt")" -gt 10 ]

	# damage in the middle: a record that does not parse, in text
	n=$(($(wc -l <"$T") / 2))
	sed "${n}s/.*/{call: 7, fn: [unclosed/" "$T" >"$W/bad.txt"
	run trace-filter --drop glRotatef -o "$W/out.raw" "$W/bad.txt"
	[ "$status" -eq 1 ]
	[[ $output == "trace-filter: $W/bad.txt: call 7, line $n column "[0-9]*", byte "[0-9]*": fn must be a function name" ]]
	# no output left looking complete
	[ ! -e "$W/out.raw" ]
	[ -z "$(ls "$W" | grep out.raw)" ]

	printf 'not a trace at all\n' >"$W/junk"
	run trace-filter -o "$W/out.trace" "$W/junk"
	[ "$status" -eq 1 ]
	[[ $output == "trace-filter: $W/junk: "* ]]

	run trace-filter -o "$W/out.trace" "$W/missing"
	[ "$status" -eq 1 ]
	[[ $output == *"$W/missing"* ]]
}

@test "a tracekit.frame without an unsigned index is bad input" {
	cat >"$W/bad.txt" <<'EOF'
{tracekit: 1, semantic_version: 6, properties: {}}
{call: 0, thread: 0, fn: glClear}
{call: 1, thread: 0, fn: tracekit.frame, args: {index: "two"}}
EOF
	run trace-filter --count -o "$W/count" "$W/bad.txt"
	[ "$status" -eq 1 ]
	[[ $output == "trace-filter: $W/bad.txt: call 1, byte "*"tracekit.frame: argument 'index' must be an unsigned integer" ]]
	[ ! -e "$W/count" ]
}

# ------------------------------------------------------------------
# Streaming

@test "memory stays flat: from a trace of 300 000 records (2+ MB) to one of 600 000, the peak grows by under 512 KB" {
	# copies of the recording, numbered on (the last, incomplete swap left
	# out): K of them to make 300 000 records or more, then 2K; both past
	# every buffer of fixed size (a Snappy chunk is 1 MiB)
	records <"$T" | grep -v incomplete >"$W/body"
	n=$(wc -l <"$W/body")
	local k=$(((300000 + n - 1) / n)) c
	for c in 1 2; do
		{
			head -n 1 "$T"
			for ((i = 0; i < c * k; i++)); do
				awk -v off=$((i * n)) '{
					match($0, /^\{call: [0-9]+/)
					print "{call: " (substr($0, 8, RLENGTH - 7) + off) substr($0, RLENGTH + 1)
				}' "$W/body"
			done
		} | trace-encode -o "$W/x$c.trace"
	done
	[ "$(trace-filter --count "$W/x2.trace" | tail -n 1 | awk '{ print $1 }')" -eq $((2 * k * n)) ]
	echo "$k copies of $n records: $(stat -c %s "$W/x1.trace") bytes"
	[ "$(stat -c %s "$W/x1.trace")" -gt 2000000 ]
	for opts in "--drop glRotatef" "--count --by-frame" "--keep glClear -f text" "--handle 0x1234"; do
		for c in 1 2; do
			# shellcheck disable=SC2086
			/usr/bin/time -f %M -o "$W/x$c.rss" trace-filter $opts "$W/x$c.trace" >/dev/null
		done
		r1=$(tail -n 1 "$W/x1.rss")
		r2=$(tail -n 1 "$W/x2.rss")
		echo "$opts: $r1 KiB, then $r2 KiB"
		[ "$r2" -le $((r1 + 512)) ]
	done
}
