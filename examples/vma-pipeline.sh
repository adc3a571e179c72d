#!/bin/sh
# A VMA call recording through a pipeline: import it, drop every call to one
# function on the text form, and write the recording back.  Run from the
# repository root after `make`:
#   examples/vma-pipeline.sh [RECORDING [FUNCTION]]
set -eu

recording=${1:-tests/data/vma/vma-docs-example-v1.8.csv}
function=${2:-vmaDestroyBuffer}
bin=${BIN:-bin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The recording as a stream, and as text: one record a line.
"$bin/vma-import" -o "$out/recording.trace" "$recording"
"$bin/trace-decode" "$out/recording.trace" >"$out/recording.txt"
echo "$(grep -c ", fn: vma" "$out/recording.txt") calls, $(grep -c ", fn: $function," "$out/recording.txt") of them to $function"

# Edit with grep, write a recording again.
grep -v ", fn: $function," "$out/recording.txt" | "$bin/vma-export" >"$out/edited.csv"
echo "$(grep -cE ",$function(,|$)" "$out/edited.csv" || true) calls to $function left in the edited recording"

# Unedited, the way back gives the recording it started from (trailing blanks
# aside, which VMA's own replayer would not read either).
"$bin/vma-export" "$out/recording.trace" | sed 's/[ \t]*\r*$//' >"$out/back.csv"
sed 's/[ \t]*\r*$//' "$recording" | cmp - "$out/back.csv"
echo "unedited, the recording comes back identical"
