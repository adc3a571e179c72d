#!/usr/bin/env bats
# Programs stream: peak memory follows the record, not the trace.  The
# bundled glxgears fixture's calls, repeated 10 and 20 times (renumbered),
# make traces of 1.2 and 2.4 MB (4.2 and 8.4 MB as text), both past every
# buffer of fixed size (a Snappy chunk is 1 MiB); trace-decode and
# trace-encode, binary and text, must peak (GNU time's %M) at most 512 KiB
# higher on the 20x trace than on the 10x one: a reader or writer that kept
# what it had passed would grow by megabytes.  The figures are printed
# either way.

load helpers

# repeat K TEXT: the header, then TEXT's calls K times over, renumbered;
# the incomplete calls (which a reader puts last) once, at the end.
repeat() {
	perl -ne 'BEGIN { $k = shift }
		if ($. == 1) { print; next }
		if (/flags: \[[a-z, ]*incomplete/) { push @inc, $_ } else { push @body, $_ }
		END { my $n = 0;
			for my $l ((@body) x $k, @inc) {
				(my $c = $l) =~ s/^\{call: \d+,/"{call: " . $n++ . ","/e; print $c } }' "$@"
}

setup_file() {
	W="$BATS_FILE_TMPDIR"
	export W
	"$BIN/trace-decode" -o "$W/fixture.txt" "$DATA/glxgears.trace"
	local k
	for k in 1 10 20; do
		repeat "$k" "$W/fixture.txt" >"$W/x$k.txt"
		"$BIN/trace-encode" -o "$W/x$k.trace" "$W/x$k.txt"
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# rss PROG ARGS...: PROG's peak resident set in KB (it must succeed)
rss() {
	/usr/bin/time -f %M -o rss.out "$BIN/$1" "${@:2}" -o out
	tail -n 1 rss.out
}

# flat WHAT R10 R20: prints both figures; fails when the 20x run peaked
# more than 512 KB above the 10x run
GROWTH=512
flat() {
	echo "# $1: 10x $2 KB, 20x $3 KB (limit $(($2 + GROWTH)) KB)" >&3
	[ "$3" -le $(($2 + GROWTH)) ]
}

# bounded WHAT PROG ARGS... (INPUT is replaced by x10 / x20): flat
bounded() {
	local what=$1 prog=$2 a10=() a20=() a
	shift 2
	for a in "$@"; do
		a10+=("${a//INPUT/$W/x10}")
		a20+=("${a//INPUT/$W/x20}")
	done
	flat "$what" "$(rss "$prog" "${a10[@]}")" "$(rss "$prog" "${a20[@]}")"
}

@test "the 10x trace holds ten times the fixture's calls and reads back whole" {
	local n1 n10
	n1=$(($(wc -l <"$W/x1.txt") - 1))
	n10=$(($(wc -l <"$W/x10.txt") - 1))
	echo "# calls: 1x $n1, 10x $n10; binary: $(stat -c %s "$W/x1.trace") and $(stat -c %s "$W/x10.trace") bytes" >&3
	[ "$n1" -ge 1000 ]
	[ "$n10" -ge $((n1 * 10 - 9)) ]
	"$BIN/trace-decode" "$W/x10.trace" | cmp - "$W/x10.txt"
}

@test "trace-decode of a binary trace: its peak grows by under 512 KB from the 10x to the 20x trace" {
	bounded "trace-decode binary -> text" trace-decode INPUT.trace
}

@test "trace-decode of a text trace: its peak grows by under 512 KB from the 10x to the 20x trace" {
	bounded "trace-decode text -> text" trace-decode INPUT.txt
}

@test "trace-encode binary -> binary of a trace: its peak grows by under 512 KB from the 10x to the 20x trace" {
	bounded "trace-encode binary -> Snappy" trace-encode INPUT.trace
}

@test "trace-encode -z none of a trace: its peak grows by under 512 KB from the 10x to the 20x trace" {
	bounded "trace-encode binary -> raw" trace-encode -z none INPUT.trace
}

@test "trace-encode text -> binary of a trace: its peak grows by under 512 KB from the 10x to the 20x trace" {
	bounded "trace-encode text -> Snappy" trace-encode INPUT.txt
}

@test "trace-decode | trace-encode: neither side grows by 512 KB from a trace 10x to one 20x longer" {
	local k
	set -o pipefail
	for k in 10 20; do
		/usr/bin/time -f %M -o "dec$k" "$BIN/trace-decode" "$W/x$k.trace" |
			/usr/bin/time -f %M -o "enc$k" "$BIN/trace-encode" -o out
	done
	flat "pipe, trace-decode side" "$(tail -n 1 dec10)" "$(tail -n 1 dec20)"
	flat "pipe, trace-encode side" "$(tail -n 1 enc10)" "$(tail -n 1 enc20)"
}
