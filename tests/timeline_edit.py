#!/usr/bin/env python3
"""timeline_edit.py: a capture, as text, with each timeline semaphore it
makes started STEP higher than the one made before it (the Nth made has
initialValue N * STEP plus its own), every value it is waited for or
signalled to in a vkQueueSubmit raised as much.  The program is the same
one; only its counters start higher, as a program's that numbers its
frames from a running count does.  Replay that recycles a semaphore whose
last value is below the new one's first must raise the counter without a
signal of the old one's still pending.

  timeline_edit.py IN OUT STEP"""
import re
import sys

src, dst, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
made = 0
base = {}  # live timeline semaphore -> what its values are raised by
LIST = r'%s: \[([^\]]*)\]'


def raise_values(seg, sems_key, vals_key):
    """SEG (one VkSubmitInfo) with the values of the semaphores of
    SEMS_KEY that are timelines raised."""
    sems = re.search(LIST % sems_key, seg)
    vals = re.search(LIST % vals_key, seg)
    if not sems or not vals or not vals.group(1).strip():
        return seg
    hs = [h.strip() for h in sems.group(1).split(',')]
    vs = [int(v) for v in vals.group(1).split(',')]
    assert len(hs) == len(vs), seg
    vs = [v + base.get(h, 0) for h, v in zip(hs, vs)]
    return seg[:vals.start(1)] + ', '.join(map(str, vs)) + seg[vals.end(1):]


out = []
for line in open(src).read().split('\n'):
    if 'fn: vkCreateSemaphore,' in line and 'VK_SEMAPHORE_TYPE_TIMELINE' in line:
        made += 1
        h = re.search(r'pSemaphore: \[(0x[0-9a-f]+)\]', line).group(1)
        init = int(re.search(r'initialValue: (\d+)', line).group(1))
        base[h] = made * step
        line = re.sub(r'initialValue: \d+', 'initialValue: %d' % (init + made * step), line)
    elif 'fn: vkDestroySemaphore,' in line:
        base.pop(re.search(r'semaphore: (0x[0-9a-f]+)', line).group(1), None)
    elif 'fn: vkQueueSubmit,' in line:
        parts = line.split('{sType: VK_STRUCTURE_TYPE_SUBMIT_INFO,')
        for i in range(1, len(parts)):
            parts[i] = raise_values(parts[i], 'pWaitSemaphores', 'pWaitSemaphoreValues')
            parts[i] = raise_values(parts[i], 'pSignalSemaphores', 'pSignalSemaphoreValues')
        line = '{sType: VK_STRUCTURE_TYPE_SUBMIT_INFO,'.join(parts)
    else:
        for fn in ('vkWaitSemaphores', 'vkSignalSemaphore', 'vkQueueSubmit2'):
            assert 'fn: %s' % fn not in line, 'timeline_edit.py: %s not handled' % fn
    out.append(line)
assert made, 'timeline_edit.py: no timeline semaphore in %s' % src
open(dst, 'w').write('\n'.join(out))
