#!/usr/bin/env python3
"""update_runs.py MOST < TEXT: of the trace's memory updates (text form),
those of more than MOST runs of adjacent words: their number and their
data bytes, then those of the others ('many BYTES few BYTES')."""
import base64
import re
import sys

most = int(sys.argv[1])
many = many_bytes = few_bytes = 0
for line in sys.stdin:
    if 'fn: tracekit.update' not in line:
        continue
    data = re.search(r'data: !!binary "([^"]*)"', line)
    size = len(base64.b64decode(data.group(1))) if data else 0
    mask = re.search(r'mask: !!binary "([^"]*)"', line)
    runs = 1
    if mask:
        bits = ''.join(format(b, '08b')[::-1] for b in base64.b64decode(mask.group(1)))
        runs = len(re.findall('1+', bits))
    if runs > most:
        many += 1
        many_bytes += size
    else:
        few_bytes += size
print(many, many_bytes, few_bytes)
