#!/usr/bin/env python3
"""alias_edit.py: vkcube's capture, as text, with its texture written
through a buffer aliasing the texture's memory, as RenderDoc's buffer over
each whole allocation made the capture layer write it.

  alias_edit.py IN OUT BOFF BSIZE LO HI [early | before] [big]
      OUT is IN with a buffer of BSIZE bytes made and bound at BOFF over
      the memory of the linear texture image, before the texture's
      tracekit.update; bytes LO..HI of that update move to an update of
      the buffer (at their offset in the buffer: shifted by the
      difference of the bind offsets), the rest stay the image's (one
      sparse update); early: the buffer and its update come before the
      image is bound; before: the buffer is made and bound before the
      image is bound, its update stays where the texture's was; big: the
      texture's memory allocated 64 MiB, a block suballocated as VMA's
      are (replay gives it no allocation of that size: objects bound over
      each other are placed apart when the later one does not fit the
      earlier's allocation).  Records renumbered in order."""
import base64
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
boff, bsize, lo, hi = (int(x) for x in sys.argv[3:7])
lines = open(src).read().split('\n')
create = next(l for l in lines if 'fn: vkCreateImage,' in l and 'VK_IMAGE_TILING_LINEAR' in l)
img = re.search(r'pImage: \[(0x[0-9a-f]+)\]', create).group(1)
bind = next(l for l in lines if 'fn: vkBindImageMemory,' in l and 'image: %s,' % img in l)
dev, mem, ioff = re.search(r'device: (0x[0-9a-f]+), image: 0x[0-9a-f]+, memory: (0x[0-9a-f]+), '
                           r'memoryOffset: (\d+)', bind).groups()
ioff = int(ioff)
opts = sys.argv[7:]
assert set(opts) <= {'early', 'before', 'big'} and not {'early', 'before'} <= set(opts)
if 'big' in opts:
    alloc = next(i for i, l in enumerate(lines)
                 if 'fn: vkAllocateMemory,' in l and 'pMemory: [%s]' % mem in l)
    lines[alloc] = re.sub(r'allocationSize: \d+', 'allocationSize: %d' % (64 << 20), lines[alloc])
at = next(i for i, l in enumerate(lines)
          if 'fn: tracekit.update, args: {object: %s, offset: 0,' % img in l)
data = base64.b64decode(re.search(r'data: !!binary "([^"]*)"', lines[at]).group(1))
assert 0 <= lo < hi <= len(data) and lo % 4 == 0 and hi % 4 == 0
assert boff <= ioff + lo and ioff + hi <= boff + bsize
buf = '0x7e57000000000001'
def rec(fn, args, ret=True):
    return '{call: 0, thread: 0, fn: %s, args: {%s}%s}' % (fn, args, ', ret: VK_SUCCESS' if ret else '')
def b64(b):
    return '!!binary "%s"' % base64.b64encode(b).decode()
new = [
    rec('vkCreateBuffer', 'device: %s, pCreateInfo: [{sType: VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, '
        'pNext: null, flags: 0, size: %d, usage: VK_BUFFER_USAGE_TRANSFER_SRC_BIT, sharingMode: '
        'VK_SHARING_MODE_EXCLUSIVE, queueFamilyIndexCount: 0, pQueueFamilyIndices: null}], '
        'pAllocator: null, pBuffer: [%s]' % (dev, bsize, buf)),
    rec('vkBindBufferMemory', 'device: %s, buffer: %s, memory: %s, memoryOffset: %d'
        % (dev, buf, mem, boff)),
    rec('tracekit.update', 'object: %s, offset: %d, data: %s'
        % (buf, ioff + lo - boff, b64(data[lo:hi])), False),
]
if lo > 0 or hi < len(data):
    # the rest of the texture: one sparse update of the image, its mask a
    # bit a word from offset 0
    words = len(data) // 4
    mask = bytearray((words + 7) // 8)
    kept = b''
    for w in range(words):
        if not lo <= 4 * w < hi:
            mask[w // 8] |= 1 << (w % 8)
            kept += data[4 * w:4 * w + 4]
    new.append(rec('tracekit.update.sparse', 'object: %s, offset: 0, mask: %s, data: %s'
                   % (img, b64(bytes(mask)), b64(kept)), False))
# before: the buffer's update stays where the texture's was, after both
# binds; early: it goes before the image's bind with the buffer
moved = 2 if 'before' in opts else 3
lines[at:at + 1] = new[moved:]
if 'early' in opts or 'before' in opts:
    at = lines.index(bind)
lines[at:at] = new[:moved]
n = None
for i, l in enumerate(lines):
    m = re.match(r'\{call: (\d+),', l)
    if m:
        n = int(m.group(1)) if n is None else n + 1
        lines[i] = '{call: %d,' % n + l[m.end():]
open(dst, 'w').write('\n'.join(lines))
