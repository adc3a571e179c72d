#!/bin/sh
# Runs each libFuzzer target for SECONDS over its committed seed corpus
# (tests/fuzz/corpus/NAME) plus a working corpus in build/fuzz/, as many
# targets at once as the machine has cores (FUZZ_JOBS to choose).
#   tests/fuzz/run.sh SECONDS build/fuzz/fuzz_NAME...
# Exits non-zero when any target finds something; the crashing input is
# left in build/fuzz/ (crash-*, leak-*, timeout-*).
set -eu
seconds=$1
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${FUZZ_JOBS:-$(nproc)}

# one target: its log in build/fuzz/NAME.log, its status in NAME.status
fuzz_one() {
	t=$1
	name=$(basename "$t" | sed 's/^fuzz_//')
	seeds="$top/tests/fuzz/corpus/$name"
	work="$top/build/fuzz/corpus-$name"
	mkdir -p "$work"
	rm -f "$top/build/fuzz/$name.status"
	status=0
	(cd "$top/build/fuzz" && "$t" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=0 \
		"$work" "$seeds" 2>"$top/build/fuzz/$name.log") || status=$?
	echo "$status" >"$top/build/fuzz/$name.status"
}

names=
running=0
for t in "$@"; do
	case "$t" in /*) ;; *) t="$PWD/$t" ;; esac
	name=$(basename "$t" | sed 's/^fuzz_//')
	names="$names $name"
	echo "== fuzz $name for ${seconds}s"
	fuzz_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

failed=0
for name in $names; do
	log="$top/build/fuzz/$name.log"
	status=$(cat "$top/build/fuzz/$name.status" 2>/dev/null || echo 1)
	if [ "$status" != 0 ]; then
		tail -40 "$log"
		echo "fuzz $name: finding above (input saved in build/fuzz/)" >&2
		failed=1
		continue
	fi
	printf '%s: ' "$name"
	grep -aE "^Done|^#[0-9]+.*DONE" "$log" | tail -1 || echo
done
exit "$failed"
