#!/bin/sh
# Runs each libFuzzer target for SECONDS over its committed seed corpus
# (tests/fuzz/corpus/NAME) plus a working corpus in build/fuzz/.
#   tests/fuzz/run.sh SECONDS build/fuzz/fuzz_NAME...
# Exits non-zero on the first finding; the crashing input is left in
# build/fuzz/ (crash-*, leak-*, timeout-*).
set -eu
seconds=$1
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
for t in "$@"; do
	case "$t" in /*) ;; *) t="$PWD/$t" ;; esac
	name=$(basename "$t" | sed 's/^fuzz_//')
	seeds="$top/tests/fuzz/corpus/$name"
	work="$top/build/fuzz/corpus-$name"
	mkdir -p "$work"
	echo "== fuzz $name for ${seconds}s"
	(cd "$top/build/fuzz" && "$t" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=0 \
		"$work" "$seeds" 2>"$top/build/fuzz/$name.log") || {
		tail -40 "$top/build/fuzz/$name.log"
		echo "fuzz $name: finding above (input saved in build/fuzz/)" >&2
		exit 1
	}
	grep -aE "^Done|^#[0-9]+.*DONE" "$top/build/fuzz/$name.log" | tail -1 || true
done
