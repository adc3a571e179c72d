#!/bin/sh
# Runs each unit test binary given; fails if any fails.  Each prints its
# own "N passed, M failed" line.
status=0
for t in "$@"; do
	echo "== $t"
	"$t" || status=1
done
exit $status
