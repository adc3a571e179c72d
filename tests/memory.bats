#!/usr/bin/env bats
# Programs stream: peak memory follows the record, not the trace.  The
# bundled glxgears fixture's calls, repeated 10 times (renumbered), make a
# trace ten times longer; trace-decode and trace-encode, on the 1x and the
# 10x trace, binary and text, must stay within 1.5 times the 1x peak RSS
# plus 4 MiB (GNU time's %M).  The figures are printed either way.

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
	for k in 1 10; do
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

# bounded WHAT PROG ARGS... (INPUT is replaced by x1 / x10): prints both
# figures; fails when the 10x run's peak passes 1.5 x the 1x run's + 4096 KB
bounded() {
	local what=$1 prog=$2 a1=() a10=() a r1 r10 limit
	shift 2
	for a in "$@"; do
		a1+=("${a//INPUT/$W/x1}")
		a10+=("${a//INPUT/$W/x10}")
	done
	r1=$(rss "$prog" "${a1[@]}")
	r10=$(rss "$prog" "${a10[@]}")
	limit=$((r1 * 3 / 2 + 4096))
	echo "# $what: 1x $r1 KB, 10x $r10 KB (limit $limit KB)" >&3
	[ "$r10" -le "$limit" ]
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

@test "trace-decode of a binary trace 10x longer peaks within 1.5x the memory (+4 MiB)" {
	bounded "trace-decode binary -> text" trace-decode INPUT.trace
}

@test "trace-decode of a text trace 10x longer peaks within 1.5x the memory (+4 MiB)" {
	bounded "trace-decode text -> text" trace-decode INPUT.txt
}

@test "trace-encode binary -> binary of a trace 10x longer peaks within 1.5x the memory (+4 MiB)" {
	bounded "trace-encode binary -> Snappy" trace-encode INPUT.trace
}

@test "trace-encode -z none of a trace 10x longer peaks within 1.5x the memory (+4 MiB)" {
	bounded "trace-encode binary -> raw" trace-encode -z none INPUT.trace
}

@test "trace-encode text -> binary of a trace 10x longer peaks within 1.5x the memory (+4 MiB)" {
	bounded "trace-encode text -> Snappy" trace-encode INPUT.txt
}

@test "trace-decode | trace-encode of a trace 10x longer: neither side grows past 1.5x (+4 MiB)" {
	local r1 r10 limit k
	set -o pipefail
	for k in 1 10; do
		/usr/bin/time -f %M -o "dec$k" "$BIN/trace-decode" "$W/x$k.trace" |
			/usr/bin/time -f %M -o "enc$k" "$BIN/trace-encode" -o out
	done
	r1=$(tail -n 1 dec1) r10=$(tail -n 1 dec10) limit=$(($(tail -n 1 dec1) * 3 / 2 + 4096))
	echo "# pipe, trace-decode side: 1x $r1 KB, 10x $r10 KB (limit $limit KB)" >&3
	[ "$r10" -le "$limit" ]
	r1=$(tail -n 1 enc1) r10=$(tail -n 1 enc10) limit=$(($(tail -n 1 enc1) * 3 / 2 + 4096))
	echo "# pipe, trace-encode side: 1x $r1 KB, 10x $r10 KB (limit $limit KB)" >&3
	[ "$r10" -le "$limit" ]
}
