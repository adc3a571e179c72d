#!/usr/bin/env python3
"""update-frames.py RAW FRAME_BYTES < decoded trace: checks that every
frame of RAW (FRAME_BYTES each) stands whole in some buffer's or image's
bytes, as the trace's tracekit.update and tracekit.update.sparse records
leave them at one of its vkQueueSubmit records.  Prints what it found;
exits 1 naming the frames it did not find."""
import base64
import re
import sys

BLOB = re.compile(r'(\w+): !!binary "([^"]*)"')
CREATE = re.compile(r'fn: vkCreate(?:Buffer|Image),.*p(?:Buffer|Image): \[(0x[0-9a-f]+)\]')
FIELD = re.compile(r'(object|offset): (0x[0-9a-f]+|\d+)')


def apply(objects, line):
    f = dict(FIELD.findall(line))
    blobs = {k: base64.b64decode(v) for k, v in BLOB.findall(line)}
    obj = objects.setdefault(f["object"], bytearray())
    off = int(f["offset"], 0)
    data = blobs["data"]
    if "mask" not in blobs:
        runs = [(off, data)]
    else:  # a bit a 4-byte word from offset, the set words in order
        mask, runs, k = blobs["mask"], [], 0
        for w in range(8 * len(mask)):
            if mask[w // 8] >> (w % 8) & 1:
                runs.append((off + 4 * w, data[4 * k:4 * k + 4]))
                k += 1
    for at, b in runs:
        if len(obj) < at + len(b):
            obj.extend(bytes(at + len(b) - len(obj)))
        obj[at:at + len(b)] = b


def main():
    raw = open(sys.argv[1], "rb").read()
    size = int(sys.argv[2])
    frames = [raw[k * size:(k + 1) * size] for k in range(len(raw) // size)]
    found, objects, submits = set(), {}, 0
    for line in sys.stdin:
        if "fn: tracekit.update" in line:
            apply(objects, line)
        elif CREATE.search(line):  # a handle made again starts empty
            objects.pop(CREATE.search(line).group(1), None)
        elif "fn: vkQueueSubmit" in line:
            submits += 1
            for k, fr in enumerate(frames):
                if k not in found and any(fr in o for o in objects.values()):
                    found.add(k)
    missing = sorted(set(range(len(frames))) - found)
    print("%d frames, %d submits, %d objects updated; missing: %s"
          % (len(frames), submits, len(objects), missing or "none"))
    sys.exit(1 if missing or not frames else 0)


main()
