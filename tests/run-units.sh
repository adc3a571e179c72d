#!/bin/sh
# Runs each unit test binary given; fails if any fails.  Each prints its
# own "N passed, M failed" line.  test_layer_memory runs three times:
# with the kernel's write watching where it pays, everywhere it can be
# had, and nowhere.
status=0
for t in "$@"; do
	echo "== $t"
	"$t" || status=1
	case "$t" in
	*/test_layer_memory)
		# and with every mapping watched for writes, and none (layer/watch.c)
		echo "== $t (TRACEKIT_WATCH=always)"
		TRACEKIT_WATCH=always "$t" || status=1
		echo "== $t (TRACEKIT_WATCH=off)"
		TRACEKIT_WATCH=off "$t" || status=1
		;;
	esac
done
exit $status
