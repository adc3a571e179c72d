#!/bin/sh
# Runs each unit test binary given; fails if any fails.  Each prints its
# own "N passed, M failed" line.  test_layer_memory runs twice: with the
# kernel's write watching where it has it, and without.
status=0
for t in "$@"; do
	echo "== $t"
	"$t" || status=1
	case "$t" in
	*/test_layer_memory)
		# and with no page watched for writes (layer/watch.c)
		echo "== $t (TRACEKIT_WATCH=off)"
		TRACEKIT_WATCH=off "$t" || status=1
		;;
	esac
done
exit $status
