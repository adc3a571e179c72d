#!/bin/bash
# Runs bats suites side by side, as many at once as the machine has cores
# (BATS_JOBS to choose), the longest first; each suite's TAP output is
# printed whole when it ends, with its time and each test's.  Exits 1 when a test of any
# suite failed (or a suite could not run), naming those suites last.
#   tests/run-bats.sh tests/*.bats
# A suite runs alone in its files; what suites share is the machine: each
# starts its own Xvfb on a display the server picks (helpers.bash).
set -u
jobs=${BATS_JOBS:-$(nproc)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# The slowest suites first, so that the last to end is a short one (their
# order by time on a clean clone); the others keep the order given.
slow="badinput replay-vk hostile trim gl replay-vma layer filter example seek layer-paths ffmpeg vma"
order=()
for s in $slow; do
	for f in "$@"; do
		[ "$(basename "$f" .bats)" = "$s" ] && order+=("$f")
	done
done
for f in "$@"; do
	case " $slow " in *" $(basename "$f" .bats) "*) ;; *) order+=("$f") ;; esac
done

# one suite: its output, then its time; the status in NAME.status
run_one() {
	local f=$1 name start status=0
	name=$(basename "$f" .bats)
	start=$(date +%s)
	bats --timing --formatter tap "$f" >"$logs/$name.out" 2>&1 || status=$?
	echo "# $f: $(($(date +%s) - start)) s" >>"$logs/$name.out"
	echo "$status" >"$logs/$name.status"
	# whole, and one suite at a time
	flock "$logs/print.lock" cat "$logs/$name.out"
}

running=0
for f in "${order[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_one "$f" &
	running=$((running + 1))
done
wait

failed=
for f in "${order[@]}"; do
	name=$(basename "$f" .bats)
	[ "$(cat "$logs/$name.status" 2>/dev/null || echo 1)" = 0 ] || failed="$failed $f"
done
if [ -n "$failed" ]; then
	echo "# failed:$failed"
	exit 1
fi
echo "# all $# suites passed"
