#!/usr/bin/env python3
"""updates.py: what a decoded trace's tracekit.update and
tracekit.update.sparse records leave in its buffers and images, checked at
its vkQueueSubmit records.  Reads the trace as text on standard input.

  updates.py frames RAW FRAME_BYTES
      every frame of RAW (FRAME_BYTES each) stands whole in some object's
      bytes at some submit (ffmpeg's uploads)
  updates.py slices SLICE_BYTES
      examples/vkthreads: at each submit, the slice of the shared buffer
      its thread's last vkCmdCopyBuffer reads holds what that thread wrote
      for that frame

Prints what it found; exits 1 naming what it did not find."""
import base64
import re
import struct
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


def frames(lines, raw_path, size):
    raw = open(raw_path, "rb").read()
    frames = [raw[k * size:(k + 1) * size] for k in range(len(raw) // size)]
    found, objects, submits = set(), {}, 0
    for line in lines:
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
    return 1 if missing or not frames else 0


def pattern(thread, frame, size):
    """examples/vkthreads.c's pattern(): SIZE bytes of 32-bit words."""
    m = 0xffffffff
    return struct.pack("<%dI" % (size // 4), *[
        ((thread + 1) * 0x01000193 & m) ^ (frame * 0x9e3779b9 & m) ^ (w * 2654435761 & m)
        for w in range(size // 4)])


COPY = re.compile(r"thread: (\d+), fn: vkCmdCopyBuffer, args: \{commandBuffer: \S+, "
                  r"srcBuffer: (0x[0-9a-f]+),.*srcOffset: (\d+),")
THREAD = re.compile(r"thread: (\d+), fn: vkQueueSubmit,")


def slices(lines, size):
    objects, last_copy, done, bad = {}, {}, {}, []
    for line in lines:
        if "fn: tracekit.update" in line:
            apply(objects, line)
        elif COPY.search(line):
            m = COPY.search(line)
            if m.group(1) not in last_copy:  # the first copy reads the shared slice
                last_copy[m.group(1)] = (m.group(2), int(m.group(3)))
        elif THREAD.search(line):
            th = THREAD.search(line).group(1)
            buf, off = last_copy[th]
            frame = done.get(th, 0)
            done[th] = frame + 1
            got = bytes(objects.get(buf, b"")[off:off + size])
            if got != pattern(off // size, frame, size):
                bad.append((th, frame))
    print("%d threads, %s submits each; slices not as written: %s"
          % (len(done), sorted(set(done.values())), bad[:10] or "none"))
    return 1 if bad or not done else 0


def main():
    if sys.argv[1] == "frames":
        sys.exit(frames(sys.stdin, sys.argv[2], int(sys.argv[3])))
    sys.exit(slices(sys.stdin, int(sys.argv[2])))


main()
