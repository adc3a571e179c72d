#!/usr/bin/env python3
"""tracekit's seek index in a zstd trace (lib/stream/seekindex.c), taken
apart and damaged on purpose for the tests.

    seekindex.py show TRACE
        prints the data frames, the stream's size and the index's points
    seekindex.py flip-frame TRACE POS OUT
        OUT is TRACE with a byte flipped in the middle of the data frame
        that holds stream byte POS
    seekindex.py damage TRACE HOW OUT
        OUT is TRACE with its index (or seek table) damaged as HOW says;
        the index's CRC is made again to match, except for HOW=crc, so
        that what is damaged is the field HOW names

Each damaged file must make a program that jumps with the index fail
with one message (tests/seek.bats).
"""
import struct
import subprocess
import sys
import zlib

TABLE_MAGIC = 0x184D2A5E
INDEX_MAGIC = 0x184D2A5D
FOOT_MAGIC = 0x8F92EAB1


def uint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def put(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


class Trace:
    def __init__(self, path):
        d = self.data = open(path, "rb").read()
        n, desc, magic = struct.unpack("<IBI", d[-9:])
        assert magic == FOOT_MAGIC, "no seek table"
        self.esize = 12 if desc & 0x80 else 8
        self.ts = len(d) - (n * self.esize + 9) - 8
        self.frames = []  # (file offset, compressed, uncompressed)
        at = 0
        for i in range(n):
            cs, ds = struct.unpack_from("<II", d, self.ts + 8 + i * self.esize)
            self.frames.append((at, cs, ds))
            at += cs
        self.index_at = at
        magic, size = struct.unpack_from("<II", d, at)
        assert magic == INDEX_MAGIC and size == self.ts - at - 8, "no index"
        c = d[at + 8 : self.ts]
        assert c[:4] == b"TKIX"
        i = 4
        self.version, i = uint(c, i)
        n, i = uint(c, i)
        self.points = []
        last = [0, 0, 0, 0]
        for _ in range(n):
            p = []
            for k in range(4):
                v, i = uint(c, i)
                p.append(last[k] + v)
            self.points.append(p)
            last = p
        self.ndefs, i = uint(c, i)
        self.log = subprocess.run(["zstd", "-dcq"], input=c[i:-4], stdout=subprocess.PIPE,
                                  check=True).stdout

    def index(self, version=None, points=None, ndefs=None, log=None, tag=b"TKIX", crc=True):
        points = self.points if points is None else points
        log = self.log if log is None else log
        c = bytearray(tag)
        c += put(self.version if version is None else version)
        c += put(len(points))
        last = [0, 0, 0, 0]
        for p in points:
            for k in range(4):
                c += put(p[k] - last[k])
            last = p
        c += put(len(log) if ndefs is None else ndefs)
        c += subprocess.run(["zstd", "-cq", "-3"], input=log, stdout=subprocess.PIPE,
                            check=True).stdout
        c += struct.pack("<I", zlib.crc32(bytes(c)) ^ (0 if crc else 1))
        return bytes(c)

    def rebuilt(self, content, size=None):
        d = self.data
        head = struct.pack("<II", INDEX_MAGIC, len(content) if size is None else size)
        return d[: self.index_at] + head + content + d[self.ts :]


def damage(t, how):
    d = t.data
    last = t.points[-1]
    total = sum(f[2] for f in t.frames)
    if how == "reserved":  # the seek table descriptor's reserved bits
        return d[:-5] + bytes([d[-5] | 0x04]) + d[-4:]
    if how == "table-size":  # more frames than the file holds
        return d[:-9] + struct.pack("<I", 0x0FFFFFFF) + d[-5:]
    if how == "table-magic":
        return d[: t.ts] + struct.pack("<I", 0x184D2A5C) + d[t.ts + 4 :]
    if how == "frame-past":  # a frame's compressed size runs past the table
        o = t.ts + 8
        return d[:o] + struct.pack("<I", t.ts + 1) + d[o + 4 :]
    if how == "index-size":
        return t.rebuilt(t.index(), size=t.ts - t.index_at - 8 + 1)
    if how == "tag":
        return t.rebuilt(t.index(tag=b"TKIY"))
    if how == "crc":
        return t.rebuilt(t.index(crc=False))
    if how == "version":
        return t.rebuilt(t.index(version=2))
    if how == "count":  # more points than its bytes can hold
        c = bytearray(t.index())
        c[5:6] = put(10**6)
        c[-4:] = struct.pack("<I", zlib.crc32(bytes(c[:-4])))
        return t.rebuilt(bytes(c))
    if how == "backwards":  # a point's call number below the one before's
        p = [list(x) for x in t.points]
        p[-1][1] = p[-2][1] - 1
        # the deltas are unsigned: write the descent as a wrap
        c = bytearray(b"TKIX") + put(t.version) + put(len(p))
        prev = [0, 0, 0, 0]
        for q in p:
            for k in range(4):
                c += put((q[k] - prev[k]) % 2**64)
            prev = q
        c += put(len(t.log))
        c += subprocess.run(["zstd", "-cq"], input=t.log, stdout=subprocess.PIPE,
                            check=True).stdout
        c += struct.pack("<I", zlib.crc32(bytes(c)))
        return t.rebuilt(bytes(c))
    if how == "past-stream":
        p = [list(x) for x in t.points]
        p[-1][0] = total
        return t.rebuilt(t.index(points=p))
    if how == "log-short":  # the points need more of the log than it has
        p = [list(x) for x in t.points]
        p[-1][3] = len(t.log) + 1
        return t.rebuilt(t.index(points=p))
    if how == "log-size":  # the log decompresses to another size
        return t.rebuilt(t.index(ndefs=len(t.log) + 7, points=t.points))
    if how == "kind":  # a definition of no kind
        return t.rebuilt(t.index(log=bytes([9]) + t.log[1:]))
    if how == "twice":  # the first definition again at the log's end
        first = t.log[: t.points[1][3]] if t.points[1][3] else t.log
        p = [list(x) for x in t.points]
        log = t.log[: last[3]] + first
        p[-1][3] = len(log)
        return t.rebuilt(t.index(points=p, log=log))
    if how == "mid-record":  # a point one byte into its record
        p = [list(x) for x in t.points]
        p[-1][0] += 1
        return t.rebuilt(t.index(points=p))
    raise SystemExit("unknown damage " + how)


def main():
    cmd = sys.argv[1]
    t = Trace(sys.argv[2])
    if cmd == "show":
        print("frames", len(t.frames), "stream", sum(f[2] for f in t.frames),
              "index", t.ts - t.index_at, "points", len(t.points), "log", len(t.log))
        for p in t.points:
            print("point %d %d %d %d" % tuple(p))
    elif cmd == "flip-frame":
        pos, out = int(sys.argv[3]), 0
        for at, cs, ds in t.frames:
            if out <= pos < out + ds:
                break
            out += ds
        d = bytearray(t.data)
        d[at + cs // 2] ^= 0xFF
        open(sys.argv[4], "wb").write(d)
    elif cmd == "damage":
        open(sys.argv[4], "wb").write(damage(t, sys.argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
