#!/usr/bin/env bats
# Bad input never crashes, hangs or lies: the sanitizer builds of
# trace-decode and trace-encode, given the bundled glxgears fixture cut at
# many offsets or with random bytes flipped, in every container, exit 0 or
# 1; a failure prints one line naming the file, the byte offset and the
# call it lies in, and leaves no output file; a success writes a stream
# that reads back.  A cut past the header is a capture cut off: it reads
# to its last whole record, exit 0, with at most one warning naming the
# file, the byte it ends at and the last complete call, and the output is
# the input's records up to there.  Then the hand-made cases: empty, garbage, malformed
# text, a container with no trace in it, a future format version, usage.
#
# Mutants are seeded, so a failure repeats; each loop runs $JOBS workers.

load helpers

JOBS=${BADINPUT_JOBS:-$(nproc 2>/dev/null || echo 2)}
# A smaller quarantine than the default 256 MB: the text parser churns
# through memory, and a fresh page for every allocation made each text run
# three times slower.  Use-after-free within the last 16 MB is still caught.
export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=16"

setup_file() {
	W="$BATS_FILE_TMPDIR"
	export W
	local fx="$DATA/glxgears.trace"
	# The containers of one stream: apitrace's Snappy (the fixture itself),
	# gzip (apitrace repack -z), ours: zstd, Brotli, raw, text.
	cp "$fx" "$W/snappy.trace"
	apitrace repack -z "$fx" "$W/gzip.trace" 2>/dev/null
	"$BIN/trace-encode" -z zstd -o "$W/zstd.trace" "$fx"
	"$BIN/trace-encode" -z brotli -q 9 -o "$W/brotli.trace" "$fx"
	"$BIN/trace-encode" -z none -o "$W/raw.trace" "$fx"
	"$BIN/trace-decode" -o "$W/full.txt" "$fx"
	# The text form runs 5-10 times slower than the binary under ASan, so
	# its mutants are of the first 2000 calls (the first frames: every
	# function and value kind the fixture has), and the last, incomplete
	# call, renumbered to follow them.
	{
		head -n 2001 "$W/full.txt"
		tail -n 1 "$W/full.txt" | sed 's/^{call: [0-9]*,/{call: 2000,/'
	} >"$W/text.trace"
	# Snappy chunks of 1 MiB split calls: six copies of the fixture's calls
	# make a stream of two chunks.
	perl -ne 'if ($. == 1) { print; next }
		if (/flags: \[[a-z, ]*incomplete/) { push @inc, $_ } else { push @body, $_ }
		END { my $n = 0;
			for my $l ((@body) x 6, @inc) {
				(my $c = $l) =~ s/^\{call: \d+,/"{call: " . $n++ . ","/e; print $c } }' \
		"$W/full.txt" >"$W/long.txt"
	"$BIN/trace-encode" -o "$W/chunks.trace" "$W/long.txt"
	# zstd frames hold 2 MiB: twice the copies make a stream of two
	perl -ne 'print if $. > 1 && !/incomplete\]\}$/' "$W/long.txt" >"$W/long.body"
	{
		head -n 1 "$W/long.txt"
		perl -ne 'BEGIN { $n = 0 } s/^\{call: \d+,/"{call: " . $n++ . ","/e; print' \
			"$W/long.body" "$W/long.body"
	} | "$BIN/trace-encode" -z zstd -o "$W/zframes.trace"
	rm -f "$W/long.body"
	# Oracles for cuts of a compressed file: the same uncompressed stream
	# in the raw container, apitrace's bytes for apitrace's files.
	{ printf tr; gzip -dc "$W/gzip.trace"; } >"$W/apitrace.raw"
	"$BIN/trace-encode" -z none -o "$W/chunks.raw" "$W/long.txt"
	rm -f "$W/long.txt"
	# where the header ends in our raw stream (after "tr")
	head -n 1 "$W/full.txt" | "$BIN/trace-encode" -z none -o "$W/header.raw"
	echo $(($(stat -c %s "$W/header.raw") - 2)) >"$W/header.len"
	# what a cut of each must read as a prefix of: its complete records
	local k
	for k in snappy gzip zstd brotli raw text chunks zframes; do
		"$BIN/trace-decode" "$W/$k.trace" | grep -v 'incomplete\]}$' >"$W/$k.whole"
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	[ -x "$ASAN_BIN/trace-decode" ] && [ -x "$ASAN_BIN/trace-encode" ] || {
		echo "# build the sanitizer programs first:"
		echo "#   make build/asan/bin/trace-decode build/asan/bin/trace-encode"
		return 1
	}
}

# ------------------------------------------------------------------
# The checks every run must pass.

# check PROG FILE: runs the ASan PROG on FILE with -o FILE.out.  Sets RC,
# MSG (stderr), BYTE and CALL (from a failure's message; CALL empty when
# the message names none; from a success's warning of a cut: the byte it
# ends at and its last complete call, "-" for none).  Sets WHY and
# returns 1 when the exit status is not 0 or 1; when a failure's stderr is
# not exactly one line "PROG: FILE: ..." with "byte N", or the failure
# left FILE.out or a temporary file; when a success wrote more than one
# warning of a cut, or its output does not read back (FILE.txt: as text).
check() {
	local prog=$1 f=$2 all
	[ -e "$f.out" ] && rm -f "$f.out"
	RC=0
	timeout 20 "$ASAN_BIN/$prog" -o "$f.out" "$f" >/dev/null 2>"$f.err" || RC=$?
	all=
	IFS= read -r -d '' -n 4000 all <"$f.err" || true
	MSG=${all%$'\n'}
	BYTE= CALL=
	case $RC in
	0)
		local cut="^$prog: $f: warning: trace ends mid-record at byte ([0-9]+) (after call ([0-9]+)|before its first call): the capture was cut off\$"
		if [ -n "$all" ] && ! [[ $MSG =~ $cut ]]; then
			WHY="exit 0, but wrote to stderr other than one warning of a cut: $MSG"
			return 1
		fi
		[ -n "$all" ] && BYTE=${BASH_REMATCH[1]} CALL=${BASH_REMATCH[3]:--}
		if ! "$BIN/trace-decode" -o "$f.txt" "$f.out" 2>"$f.err2" || [ -s "$f.err2" ]; then
			WHY="exit 0, but its output does not read back whole: $(cat "$f.err2")"
			return 1
		fi
		rm -f "$f.out"
		return 0
		;;
	1) ;;
	124)
		WHY="timed out after 20 s"
		return 1
		;;
	*)
		WHY="exit $RC: ${all:0:600}"
		WHY=${WHY//$'\n'/|}
		return 1
		;;
	esac
	if [[ $all != *$'\n' || $MSG == *$'\n'* ]]; then
		WHY="stderr is not one line: ${all:0:600}"
		WHY=${WHY//$'\n'/|}
		return 1
	fi
	if [[ $MSG != "$prog: $f: "* ]]; then
		WHY="message does not start with '$prog: FILE: ': $MSG"
		return 1
	fi
	if [[ $MSG =~ (: |, )byte\ ([0-9]+)[\ :] ]]; then
		BYTE=${BASH_REMATCH[2]}
	else
		WHY="message names no 'byte N': $MSG"
		return 1
	fi
	if [[ ${MSG#"$prog: $f: "} =~ ^call\ ([0-9]+), ]]; then
		CALL=${BASH_REMATCH[1]}
	fi
	if [ -e "$f.out" ]; then
		WHY="a failed run left its output file"
		return 1
	fi
	if compgen -G "$f.out.tmp.*" >/dev/null; then
		WHY="a failed run left a temporary file: $(compgen -G "$f.out.tmp.*")"
		return 1
	fi
	return 0
}

# checked PROG FILE: check, showing why it failed.
checked() {
	check "$@" || {
		echo "# $WHY"
		return 1
	}
}

# A binary-format failure that cannot name a call (it is about the header,
# a record boundary or the container); any other message must name one.
callless_ok() {
	[[ $MSG =~ (inside\ the\ header|semantic\ version|the\ header\'s\ properties|a\ call\ number|unknown\ event|unsupported\ trace\ format|Snappy|zstd|Brotli|gzip|empty) ]]
}

# ------------------------------------------------------------------
# Mutation loops.

# cut_one PROG CONTAINER FILE OFF LINE LINESTART: FILE is the input's
# first OFF bytes, and a text cut lies in line LINE, which starts at byte
# LINESTART.  On top of check(): a cut the reader salvages (exit 0) wrote
# the input's records up to some call, complete, and no other, and its
# warning names the byte the file ends at and that call; a failure is a
# cut inside the header (or, compressed, before the header is whole).
cut_one() {
	local prog=$1 kind=$2 f=$3 off=$4 line=$5 start=$6 n
	check "$prog" "$f" || return 1
	if [ "$RC" = 0 ]; then
		grep -v 'incomplete\]}$' "$f.txt" >"$f.whole"
		n=$(wc -l <"$f.whole")
		if ! head -n "$n" "$W/$kind.whole" | cmp -s - "$f.whole"; then
			WHY="exit 0, but its $n complete records are not the input's first: $(cmp "$f.whole" "$W/$kind.whole" 2>&1 | head -1)"
			return 1
		fi
		if [ -n "$BYTE" ] && [ "$BYTE" != "$off" ]; then
			WHY="the warning says the trace ends at byte $BYTE; it ends at $off: $MSG"
			return 1
		fi
		n=$(tail -n +2 "$f.whole" | tail -1 | sed 's/^{call: \([0-9]*\),.*/\1/')
		if [ -n "$CALL" ] && [ "$CALL" != "${n:--}" ]; then
			WHY="the warning names call $CALL, the last complete record is $(tail -1 "$f.whole"): $MSG"
			return 1
		fi
		rm -f "$f.txt" "$f.whole"
		return 0
	fi
	case $kind in
	raw)
		if [ "$off" -gt $((HLEN + 2)) ]; then
			WHY="cut past the header ($((HLEN + 2)) bytes), but not read up to the cut: $MSG"
			return 1
		fi
		;;
	text)
		if [ "$line" != 1 ] && [ "$off" != 0 ]; then
			WHY="cut in line $line, past the header line, but not read up to the cut: $MSG"
			return 1
		fi
		;;
	*)
		if ! [[ $MSG =~ (empty\ |before\ the\ trace\'s\ header|inside\ the\ header|the\ header\'s\ properties) ]]; then
			WHY="a cut that fails must lie before the header is whole: $MSG"
			return 1
		fi
		;;
	esac
	return 0
}

# flip_one PROG CONTAINER FILE SPEC: FILE is the input with bytes XORed as
# SPEC says (OFF:VALUE,...).  On top of check(): the message names a call
# unless it is one that can lie outside any.
flip_one() {
	local prog=$1 kind=$2 f=$3 spec=$4
	check "$prog" "$f" || return 1
	[ "$RC" = 1 ] || return 0
	# a flipped magic makes another container or encoding: only the
	# checks above apply
	[[ ,$spec, =~ ,[01]: ]] && return 0
	if [ "$kind" = text ]; then
		if ! [[ $MSG =~ line\ ([0-9]+)\ column\ [0-9]+, ]]; then
			WHY="a text failure names no 'line L column C': $MSG"
			return 1
		fi
		if [ "${BASH_REMATCH[1]}" -gt 1 ] && [ -z "$CALL" ] && ! [[ $MSG =~ header ]]; then
			WHY="an error in a record line names no call: $MSG"
			return 1
		fi
		if [ "${BASH_REMATCH[1]}" = 1 ] && [ -n "$CALL" ]; then
			WHY="an error in the header line names call $CALL: $MSG"
			return 1
		fi
	else
		if [ -z "$CALL" ] && ! callless_ok; then
			WHY="an error inside a call names no call: $MSG"
			return 1
		fi
		if [ -n "$CALL" ] && [[ $MSG =~ (unknown\ event|unsupported\ trace\ format|inside\ the\ header|semantic\ version) ]]; then
			WHY="an error outside any call names call $CALL: $MSG"
			return 1
		fi
	fi
	return 0
}

# mutants cut|flip SRC N SEED DIR: writes the mutants of SRC as DIR/m0,
# DIR/m1, ... and prints one line per mutant: "I OFF LINE LINESTART" for
# cuts (about N+20 offsets: 0 to 16, around the header's end, the last
# bytes, then one random offset in each N-th of the file; LINE is the line
# a text cut falls in), "I SPEC" for flips (N mutants of 1 to 3 bytes
# XORed, the first tenth inside the first 64 bytes).  Seeded: the same
# mutants every run.
mutants() {
	perl -e '
		my ($mode, $file, $n, $seed, $dir, $h) = @ARGV;
		local $/; open(my $fh, "<:raw", $file) or die; my $d = <$fh>; close $fh;
		my $size = length $d; srand($seed);
		sub out { open(my $o, ">:raw", "$dir/m$_[0]") or die; print $o $_[1]; close $o }
		if ($mode eq "cut") {
			my %o;
			$o{$_} = 1 for grep { $_ >= 0 && $_ < $size }
				(0 .. 16, $h + 1, $h + 2, $h + 3, $size - 1, $size - 2, $size - 5);
			$o{int(($_ + rand()) * $size / $n)} = 1 for 0 .. $n - 1;
			my $i = 0;
			for my $off (sort { $a <=> $b } keys %o) {
				my $pre = substr($d, 0, $off);
				my $line = 1 + ($pre =~ tr/\n//);
				my $start = rindex($pre, "\n") + 1;
				out($i, $pre);
				print "$i $off $line $start\n"; $i++;
			}
		} else {
			for my $i (0 .. $n - 1) {
				my $span = $i < $n / 10 ? ($size < 64 ? $size : 64) : $size;
				my @p = map { int(rand($span)) . ":" . (1 + int(rand(255))) } 1 .. 1 + int(rand(3));
				my $m = $d;
				for (@p) { my ($o, $v) = split /:/; substr($m, $o, 1) = chr(ord(substr($m, $o, 1)) ^ $v) }
				out($i, $m);
				print "$i ", join(",", @p), "\n";
			}
		}' "$@" "$HLEN"
}

# mutate cut|flip PROG CONTAINER N SEED: the loop, over JOBS workers; fails
# listing every mutant that broke a rule (with its offsets: they repeat).
mutate() {
	local mode=$1 prog=$2 kind=$3 n=$4 seed=$5 src="$W/$3.trace" j
	[ -s "$src" ]
	HLEN=$(cat "$W/header.len")
	ORACLE=$W/apitrace.raw
	[ "$kind" = brotli ] && ORACLE=$W/raw.trace
	[ "$kind" = chunks ] && ORACLE=$W/chunks.raw
	mkdir m
	mutants "$mode" "$src" "$n" "$seed" m >cases
	[ "$(wc -l <cases)" -ge "$n" ]
	for ((j = 0; j < JOBS; j++)); do
		while read -r i a b c; do
			((i % JOBS == j)) || continue
			if [ "$mode" = cut ]; then
				cut_one "$prog" "$kind" "m/m$i" "$a" "$b" "$c" ||
					echo "cut at byte $a: $WHY"
			else
				flip_one "$prog" "$kind" "m/m$i" "$a" ||
					echo "bytes flipped (offset:xor) $a: $WHY"
			fi
			rm -f "m/m$i" "m/m$i".*
		done <cases >"fail$j" &
	done
	wait
	cat fail* >failures
	if [ -s failures ]; then
		echo "# $(wc -l <failures) of $(wc -l <cases) $mode mutants of $kind broke a rule:"
		head -n 25 failures | sed 's/^/# /'
		return 1
	fi
}

# ------------------------------------------------------------------

@test "trace-decode on a Snappy trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-decode snappy 24 11
}

@test "trace-encode on a Snappy trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-encode snappy 24 12
}

@test "trace-decode on a Snappy trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode snappy 40 13
}

@test "trace-encode on a Snappy trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode snappy 40 14
}

@test "trace-decode on a two-chunk Snappy trace cut at 45 offsets reads its whole chunks with one warning" {
	mutate cut trace-decode chunks 24 15
}

@test "trace-encode on a two-chunk Snappy trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode chunks 24 16
}

@test "trace-decode on a zstd trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-decode zstd 24 21
}

@test "trace-decode on a zstd trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode zstd 40 22
}

@test "trace-encode on a zstd trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode zstd 40 23
}

@test "trace-decode on a two-frame zstd trace cut at 45 offsets reads its whole frames with one warning" {
	mutate cut trace-decode zframes 24 24
}

@test "trace-decode on a two-frame zstd trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode zframes 24 25
}

# each_file CHECK: CHECK on each file named in ./files, over JOBS workers
# (ASan's start-up is most of each run); fails naming those it failed.
each_file() {
	local j i
	for ((j = 0; j < JOBS; j++)); do
		awk -v j="$j" -v n="$JOBS" '(NR - 1) % n == j' files | while read -r i; do
			"$1" "$i" || echo "$i"
		done >"bad$j" &
	done
	wait
	cat bad* >bad
	if [ -s bad ]; then
		cat bad
		return 1
	fi
}

# same_reading FILE: trace-decode reads FILE alike on the reader thread and
# in place (TRACE_READ_AHEAD=0): the same output, message and exit status.
same_reading() {
	local f=$1 a=0 b=0
	timeout 20 "$ASAN_BIN/trace-decode" "$f" >"$f.a" 2>"$f.ea" || a=$?
	TRACE_READ_AHEAD=0 timeout 20 "$ASAN_BIN/trace-decode" "$f" >"$f.b" 2>"$f.eb" || b=$?
	if [ "$a" != "$b" ] || ! cmp -s "$f.a" "$f.b" || ! cmp -s "$f.ea" "$f.eb"; then
		echo "# $f: read ahead exit $a, in place exit $b"
		diff "$f.ea" "$f.eb" | head -n 4 | sed 's/^/# /'
		cmp "$f.a" "$f.b" | sed 's/^/# /'
		return 1
	fi
	rm -f "$f.a" "$f.b" "$f.ea" "$f.eb"
}

@test "a compressed file read ahead on a thread reads as in place: whole, cut and with flipped bytes, the same records, message and exit status" {
	HLEN=$(cat "$W/header.len")
	local k i off rest
	for k in snappy chunks gzip zstd zframes brotli; do
		mkdir "c$k" "f$k"
		echo "$W/$k.trace" >>files
		# the cuts past the first 17 bytes (the reader thread starts
		# after the header: the cuts inside it are the other tests')
		mutants cut "$W/$k.trace" 6 31 "c$k" | while read -r i off rest; do
			if ((off > 16)); then echo "c$k/m$i"; else rm "c$k/m$i"; fi
		done >>files
		mutants flip "$W/$k.trace" 10 32 "f$k" >/dev/null
		ls "f$k"/m* >>files
	done
	[ "$(wc -l <files)" -gt 100 ]
	each_file same_reading
}

# same_check FILE: trace-replay --check takes FILE alike with its records
# decoded ahead on a thread (every other file's arguments on a second one:
# TRACE_DECODE_HOOK_THREAD) and read in place: the same output, message
# and exit status.
same_check() {
	local f=$1 a=0 b=0
	checked=$((${checked:-0} + 1))
	TRACE_DECODE_AHEAD=1 TRACE_DECODE_HOOK_THREAD=$((checked % 2)) \
		timeout 20 "$ASAN_BIN/trace-replay" --check "$f" >"$f.a" 2>"$f.ea" || a=$?
	TRACE_DECODE_AHEAD=0 timeout 20 "$ASAN_BIN/trace-replay" --check "$f" >"$f.b" 2>"$f.eb" || b=$?
	if [ "$a" != "$b" ] || ! cmp -s "$f.a" "$f.b" || ! cmp -s "$f.ea" "$f.eb"; then
		echo "# $f: ahead exit $a, in place exit $b"
		diff "$f.ea" "$f.eb" | head -n 4 | sed 's/^/# /'
		return 1
	fi
	rm -f "$f.a" "$f.b" "$f.ea" "$f.eb"
}

@test "trace-replay --check with its records decoded ahead on a thread takes vkd3d-gears' trace as in place: whole, cut and with flipped bytes, the same output, message and exit status" {
	[ -x "$ASAN_BIN/trace-replay" ] || skip "no sanitizer trace-replay"
	# (raw: a cut reads up to where it falls, a flip is in a record)
	local src=whole.trace i
	"$BIN/trace-encode" -z none -o "$src" "$DATA/vkd3d-gears-60.trace"
	echo "$src" >files
	mkdir c f
	mutants cut "$src" 8 41 c | while read -r i rest; do echo "c/m$i"; done >>files
	mutants flip "$src" 8 42 f >/dev/null
	ls f/m* >>files
	[ "$(wc -l <files)" -ge 17 ]
	each_file same_check
}

@test "the reader thread reads a compressed file ahead, and TRACE_READ_AHEAD=0 or a pipe reads in place" {
	# a Brotli stream of many fills: the thread waits with two read ahead
	# while trace-decode waits for its output to be read
	"$BIN/trace-encode" -z brotli -q 1 -o long.trace "$W/chunks.trace"
	local mode pid n t
	for mode in ahead place pipe; do
		mkfifo "out.$mode"
		case $mode in
		ahead) "$BIN/trace-decode" long.trace >"out.$mode" & ;;
		place) TRACE_READ_AHEAD=0 "$BIN/trace-decode" long.trace >"out.$mode" & ;;
		pipe) cat long.trace | "$BIN/trace-decode" >"out.$mode" & ;;
		esac
		pid=$!
		exec 8<"out.$mode"
		# its threads, once its output blocks (a full pipe: the thread
		# has read ahead, or never will)
		for ((t = 0; t < 100; t++)); do
			grep -q '^State:.*S (sleeping)' "/proc/$pid/status" && break
			sleep 0.1
		done
		n=$(ls "/proc/$pid/task" | wc -l)
		exec 8<&-
		wait "$pid" || true
		echo "$mode: $n threads"
		case $mode in
		ahead) [ "$n" = 2 ] ;;
		*) [ "$n" = 1 ] ;;
		esac
	done
}

@test "trace-decode on a Brotli trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-decode brotli 24 21
}

@test "trace-encode on a Brotli trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-encode brotli 24 22
}

@test "trace-decode on a Brotli trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode brotli 40 23
}

@test "trace-encode on a Brotli trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode brotli 40 24
}

@test "trace-decode on a gzip trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-decode gzip 24 31
}

@test "trace-encode on a gzip trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-encode gzip 24 32
}

@test "trace-decode on a gzip trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode gzip 40 33
}

@test "trace-encode on a gzip trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode gzip 40 34
}

@test "trace-decode on a raw (-z none) trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-decode raw 24 41
}

@test "trace-encode on a raw (-z none) trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-encode raw 24 42
}

@test "trace-decode on a raw (-z none) trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode raw 40 43
}

@test "trace-encode on a raw (-z none) trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode raw 40 44
}

@test "trace-decode on a text trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-decode text 24 51
}

@test "trace-encode on a text trace cut at 45 offsets reads to the cut with one warning, or fails in the header" {
	mutate cut trace-encode text 24 52
}

@test "trace-decode on a text trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-decode text 40 53
}

@test "trace-encode on a text trace with flipped bytes exits 0 or 1 with one located message" {
	mutate flip trace-encode text 40 54
}

@test "a text trace read by the reader's own line scan and by libyaml alone (TRACE_TEXT_LIBYAML=1), whole and with flipped bytes: the same records, exit status and message" {
	mkdir m
	HLEN=$(cat "$W/header.len")
	mutants flip "$W/text.trace" 60 55 m >cases
	cp "$W/text.trace" m/whole
	for f in m/*; do
		rc_own=0 rc_yaml=0
		trace-encode -z none -o "$f.own" "$f" 2>"$f.own.err" || rc_own=$?
		TRACE_TEXT_LIBYAML=1 trace-encode -z none -o "$f.yaml" "$f" 2>"$f.yaml.err" || rc_yaml=$?
		[ "$rc_own" = "$rc_yaml" ] || { echo "# $f: exit $rc_own, libyaml $rc_yaml"; return 1; }
		cmp "$f.own.err" "$f.yaml.err" || { cat "$f.own.err" "$f.yaml.err"; return 1; }
		[ "$rc_own" != 0 ] || cmp "$f.own" "$f.yaml"
	done
	[ -s m/whole.own ]
}

# ------------------------------------------------------------------
# Hand-made bad inputs.

@test "a cut inside the second Snappy chunk reads the first chunk's whole records, warning once" {
	# chunk 1 ends at 6 + its length; cut 1000 bytes into chunk 2
	local len1 off
	len1=$(od -An -tu4 -j 2 -N 4 "$W/chunks.trace" | tr -d ' ')
	off=$((2 + 4 + len1 + 4 + 1000))
	head -c "$off" "$W/chunks.trace" >c.trace
	checked trace-decode "$PWD/c.trace"
	[ "$RC" = 0 ]
	[ "$BYTE" = "$off" ]
	# the raw stream cut after chunk 1's 1 MiB reads alike
	head -c $((2 + 1048576)) "$W/chunks.raw" >c.raw
	"$BIN/trace-decode" c.raw 2>c.raw.err | cmp - c.trace.txt
	grep -q "warning: trace ends mid-record at byte 1048578 after call $CALL: " c.raw.err
}

@test "a cut at each Snappy chunk boundary of a two-chunk trace reads its whole chunks" {
	local len1 b off
	len1=$(od -An -tu4 -j 2 -N 4 "$W/chunks.trace" | tr -d ' ')
	b=$((2 + 4 + len1))
	for off in $b $((b + 1)) $((b + 3)) $((b + 4)) $((b + 5)); do
		head -c "$off" "$W/chunks.trace" >"c$off.trace"
		cut_one trace-decode chunks "$PWD/c$off.trace" "$off" || { echo "# cut at $off: $WHY"; return 1; }
		[ "$RC" = 0 ]
		# at the boundary nothing says it was cut; past it, the warning
		if [ "$off" -gt "$b" ]; then
			[ "$BYTE" = "$off" ]
		fi
	done
}

@test "an empty file is not a trace: exit 1, 'empty' and byte 0, no output file" {
	: >empty.trace
	for p in trace-decode trace-encode; do
		checked "$p" "$PWD/empty.trace"
		[ "$RC" = 1 ]
		[[ $MSG == *empty* ]]
		[ "$BYTE" = 0 ]
	done
	# and from standard input, named "-"
	run "$ASAN_BIN/trace-decode" - </dev/null
	[ "$status" = 1 ]
	[[ $output == "trace-decode: -: "*empty* ]]
}

@test "garbage, with or without a container's magic, is rejected with exit 1 and one located line" {
	perl -e 'srand(7); print chr(int(rand(256))) for 1 .. 4096' >noise
	cp noise garbage.trace
	{ printf at; cat noise; } >garbage-snappy.trace
	{ printf '\037\213'; cat noise; } >garbage-gzip.trace
	{ printf tr; cat noise; } >garbage-raw.trace
	{ printf '{'; cat noise; } >garbage-text.trace
	printf 'hello, world\n' >hello.trace
	for f in garbage garbage-snappy garbage-gzip garbage-raw garbage-text hello; do
		for p in trace-decode trace-encode; do
			checked "$p" "$PWD/$f.trace" || { echo "# $p $f: $WHY"; return 1; }
			[ "$RC" = 1 ] || { echo "# $p $f: exit $RC"; return 1; }
		done
	done
}

@test "a text trace with a malformed line fails naming that line, its call and column" {
	{
		head -n 3 "$W/text.trace"
		echo '{call: 2, thread: 0, fn: glFinish, args: {x: [1, 2}}'
		sed -n '5,$p' "$W/text.trace"
	} >bad.txt
	for p in trace-decode trace-encode; do
		checked "$p" "$PWD/bad.txt"
		[ "$RC" = 1 ]
		echo "# $MSG"
		[[ $MSG == "$p: $PWD/bad.txt: call 2, line 4 column "*", byte "* ]]
	done
}

@test "a NUL byte in a text record fails naming that record's line and call" {
	{
		head -n 3 "$W/text.trace"
		printf '{call: 2, thread: 0, fn: glFi\0nish}\n'
	} >nul.txt
	checked trace-decode "$PWD/nul.txt"
	[ "$RC" = 1 ]
	echo "# $MSG"
	[[ $MSG == *"NUL byte"* ]]
	[[ $MSG == "trace-decode: $PWD/nul.txt: call 2, line 4 column 30, byte "* ]]
	# the first record, right after the header
	{
		head -n 1 "$W/text.trace"
		printf '{call: 0, thread: 0, fn: gl\0Flush}\n'
	} >nul0.txt
	checked trace-decode "$PWD/nul0.txt"
	[ "$RC" = 1 ]
	echo "# $MSG"
	[[ $MSG == "trace-decode: $PWD/nul0.txt: call 0, line 2 column 28, byte "* ]]
}

@test "a function name with a byte no name has (a newline, a byte over 0x7e) fails at that byte, in one line, for every reader of it" {
	# (trace-replay and trace-trim read it so too: hostile.bats's mutants)
	# the first function name of the raw fixture, its third byte a newline
	# (a fuzzed trace replayed once with "call 49 (vk" and
	# "locateMemory): unknown function" on two lines)
	for byte in 0a e2; do
		python3 - "$W/raw.trace" "name$byte.trace" "$byte" <<-'PY'
			import sys
			d = bytearray(open(sys.argv[1], 'rb').read())
			i = d.find(b'glXChooseVisual') if b'glXChooseVisual' in d else d.find(b'gl')
			d[i + 2] = int(sys.argv[3], 16)
			open(sys.argv[2], 'wb').write(d)
		PY
		for prog in trace-decode trace-encode; do
			checked $prog "$PWD/name$byte.trace"
			[ "$RC" = 1 ]
			echo "# $MSG"
			[[ $MSG == *"a function name holds byte 0x$byte, which no name has" ]]
			[[ $MSG == "$prog: $PWD/name$byte.trace: call "*", byte "* ]]
		done
		# and a program that names calls in its own messages
		run "$BIN/trace-filter" --frames 0 -o cut.trace "name$byte.trace"
		[ "$status" = 1 ]
		[ "${#lines[@]}" = 1 ]
		[[ $output == *"a function name holds byte 0x$byte, which no name has" ]]
		[ ! -e cut.trace ]
	done
	# the text form: a quoted name with an escaped newline, an empty one
	{ head -n 1 "$W/text.trace"; printf '{call: 0, thread: 0, fn: "gl\\nFlush"}\n'; } >nl.txt
	checked trace-decode "$PWD/nl.txt"
	[ "$RC" = 1 ]
	[[ $MSG == "trace-decode: $PWD/nl.txt: call 0, line 2 column "*"a function name holds byte 0x0a, which no name has" ]]
	{ head -n 1 "$W/text.trace"; printf '{call: 0, thread: 0, fn: ""}\n'; } >empty.txt
	checked trace-decode "$PWD/empty.txt"
	[ "$RC" = 1 ]
	[[ $MSG == *"line 2 column "*"a function name is empty" ]]
}

@test "a text file whose first line is not a tracekit header fails at line 1 naming no call" {
	sed -n '2,$p' "$W/text.trace" >noheader.txt
	checked trace-encode "$PWD/noheader.txt"
	[ "$RC" = 1 ]
	echo "# $MSG"
	[[ $MSG == "trace-encode: $PWD/noheader.txt: line 1 column "* ]]
	[[ $MSG == *header* ]]
}

@test "a container holding no trace (apitrace's 2-byte file of a program that made no call) is exit 1" {
	printf at >magic-only.trace
	printf tr >magic-only.raw
	for f in magic-only.trace magic-only.raw; do
		for p in trace-decode trace-encode; do
			checked "$p" "$PWD/$f"
			[ "$RC" = 1 ]
			echo "# $MSG"
			[[ $MSG == *"not a trace"* ]]
		done
	done
}

@test "a raw or text trace cut inside its header fails naming no call" {
	local h
	h=$(cat "$W/header.len")
	head -c $((h + 2 - 5)) "$W/raw.trace" >hcut.raw
	head -c 40 "$W/text.trace" >hcut.txt
	for f in hcut.raw hcut.txt; do
		checked trace-decode "$PWD/$f"
		[ "$RC" = 1 ]
		echo "# $MSG"
		[ -z "$CALL" ]
		[[ $MSG == *header* || $MSG == *line\ 1\ * ]]
	done
}

@test "a header-only trace (no calls) is a valid empty trace: exit 0, and it reads back" {
	head -n 1 "$W/text.trace" >hdr.txt
	"$ASAN_BIN/trace-encode" -o hdr.trace hdr.txt
	"$ASAN_BIN/trace-encode" -z none -o hdr.raw hdr.txt
	for f in hdr.trace hdr.raw hdr.txt; do
		run "$ASAN_BIN/trace-decode" "$f"
		[ "$status" = 0 ]
		[ "$output" = "$(cat hdr.txt)" ]
	done
	# apitrace agrees that it is a trace
	apitrace dump hdr.trace
}

@test "a trace of the unsupported future format version 7 fails with exit 1 naming the version" {
	# version 7, then what a version 6 header would hold
	printf 'tr\007\006\000' >v7.raw
	printf '\007\006\000' | gzip -c >v7.gz
	printf '{tracekit: 2, semantic_version: 6, properties: {}}\n' >v2.txt
	for f in v7.raw v7.gz; do
		for p in trace-decode trace-encode; do
			checked "$p" "$PWD/$f"
			[ "$RC" = 1 ]
			echo "# $MSG"
			[[ $MSG == *"unsupported trace format version 7"* ]]
			[ -z "$CALL" ]
		done
	done
	checked trace-decode "$PWD/v2.txt"
	[ "$RC" = 1 ]
	echo "# $MSG"
	[[ $MSG == *"text form version 2"* ]]
}

@test "a failed run leaves no -o file and keeps an existing one untouched" {
	# damage at line 100, after 98 records written out (a cut end would
	# not do: it reads, with a warning)
	sed '100s/.*/{call: 98, fn: [unclosed/' "$W/full.txt" >bad.txt
	for p in trace-decode trace-encode; do
		run "$ASAN_BIN/$p" -o out "$PWD/bad.txt"
		[ "$status" = 1 ]
		[[ $output == *"bad.txt: call 98, line 100 column 16, byte "*": fn must be a function name" ]]
		[ ! -e out ]
		echo precious >out
		run "$ASAN_BIN/$p" -o out "$PWD/bad.txt"
		[ "$status" = 1 ]
		[ "$(cat out)" = precious ]
		rm out
		[ -z "$(compgen -G 'out.tmp.*')" ]
	done
}

@test "-o naming a FIFO writes into the FIFO instead of renaming a file over it" {
	# a trace, and trace-filter's report (written by other code)
	for p in trace-decode trace-encode trace-filter "trace-filter --count"; do
		mkfifo pipe
		timeout 20 cat pipe >got &
		run "$ASAN_BIN/"$p -o pipe "$W/raw.trace"
		wait
		[ "$status" = 0 ]
		[ -p pipe ]
		[ -s got ]
		if [ "$p" = "trace-filter --count" ]; then
			grep -q glXSwapBuffers got
		else
			"$ASAN_BIN/trace-decode" got >/dev/null
		fi
		[ -z "$(compgen -G 'pipe.tmp.*')" ]
		rm pipe got
	done
}

@test "a missing input file fails with exit 1 naming the file, and no -o file" {
	for p in trace-decode trace-encode; do
		run "$ASAN_BIN/$p" -o out nosuch.trace
		[ "$status" = 1 ]
		[ "${#lines[@]}" = 1 ]
		[[ $output == "$p: nosuch.trace: "* ]]
		[ ! -e out ]
	done
}

# ------------------------------------------------------------------
# Usage.

# usage_error PROG ARGS...: exit 2, a message and the usage line on stderr
usage_error() {
	local p=$1
	shift
	run "$ASAN_BIN/$p" "$@" "$W/raw.trace"
	echo "# $p $*: exit $status: $output"
	[ "$status" = 2 ]
	[[ $output == "$p: "* ]]
	[[ $output == *"usage: $p "* ]]
}

@test "an unknown option is bad usage: exit 2 and the usage line" {
	usage_error trace-decode --frobnicate
	usage_error trace-decode -x
	usage_error trace-encode --frobnicate
	usage_error trace-encode -x
}

@test "trace-encode -z lz4 (an unknown compression) is bad usage: exit 2 and the usage line" {
	usage_error trace-encode -z lz4
	usage_error trace-encode --compression=gzip
}

@test "trace-encode -q 12 (a Brotli quality out of 0-11) is bad usage: exit 2 and the usage line" {
	usage_error trace-encode -z brotli -q 12
	usage_error trace-encode -z brotli -q -1
	usage_error trace-encode -z brotli -q fast
}

@test "two inputs are bad usage: exit 2 and the usage line" {
	usage_error trace-decode "$W/text.trace"
	usage_error trace-encode "$W/text.trace"
}

@test "an option missing its value is bad usage: exit 2 and the usage line" {
	run "$ASAN_BIN/trace-encode" -o
	[ "$status" = 2 ]
	[[ $output == *"usage: trace-encode"* ]]
	run "$ASAN_BIN/trace-decode" -o
	[ "$status" = 2 ]
	[[ $output == *"usage: trace-decode"* ]]
}

@test "--help exits 0 and prints the usage line on standard output" {
	for p in trace-decode trace-encode; do
		"$ASAN_BIN/$p" --help >help.out 2>help.err
		grep -q "^usage: $p " help.out
		[ ! -s help.err ]
	done
}

@test "a Snappy or Brotli library that cannot be loaded: one message naming it and the file, exit 1, no output file" {
	fake_codecs "$W/fake"
	local t
	for t in snappy brotli; do
		run env LD_LIBRARY_PATH="$W/fake" "$BIN/trace-decode" -o "$W/fake-$t.txt" "$W/$t.trace"
		echo "$t: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" =~ ^trace-decode:\ $W/$t.trace:\ byte\ 0:\ cannot\ load\ libsnappy.so.1:\ it\ has\ no\ snappy_compress$ ||
		   "$output" =~ ^trace-decode:\ $W/$t.trace:\ byte\ 0:\ cannot\ load\ libbrotlidec.so.1:\ it\ has\ no\ BrotliDecoderCreateInstance$ ]]
		[ ! -e "$W/fake-$t.txt" ]
	done
	for t in snappy brotli; do
		run env LD_LIBRARY_PATH="$W/fake" "$BIN/trace-encode" -z $t -o "$W/fake.$t" "$W/zstd.trace"
		echo "$t: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		grep -q "^trace-encode: $W/fake.$t: cannot load lib\(snappy\|brotlienc\).so.1: it has no " <<<"$output"
		[ ! -e "$W/fake.$t" ]
	done
	# the zstd reader and writer need neither
	LD_LIBRARY_PATH="$W/fake" "$BIN/trace-encode" -z zstd -o "$W/fake.zstd" "$W/zstd.trace"
	cmp "$W/fake.zstd" "$W/zstd.trace"
}
