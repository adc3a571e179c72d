#!/usr/bin/env python3
"""Generates the capture layer's dispatch tables and wrappers.

    layer_gen.py [--registry DIR] OUTDIR

writes OUTDIR/layer_gen.h (per level, a dispatch table of every command
the registry has) and OUTDIR/layer_gen.c, which layer/capture.c includes:
the tables' initialisers, a wrapper per command that records the call
(enter before calling down, leave after) and the name table that
vkGet*ProcAddr answer from.  Commands in HAND are written in
layer/capture.c; commands in HOOKS call hand-written code in layer/memory.c,
layer/refs.c or layer/screenshot.c before (pre) or after (post) calling
down; commands in DOWN call down through hand-written code in
layer/screenshot.c; commands in TEMPLATE_CREATE record their update
template with its entries packed, and those in TEMPLATE_DATA their pData
as the bytes the template reads, packed alike.  Every vkCmd* wrapper
tells layer/refs.c what the command references (tk_cmd_refs), and every
command that hands out a device address says so (tk_note_address).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib', 'vulkan'))
import vkschema_gen as vg  # noqa: E402

# The loader's own and the layer's entry points: written by hand.
HAND = {
    'vkCreateInstance', 'vkDestroyInstance', 'vkCreateDevice', 'vkDestroyDevice',
    'vkGetInstanceProcAddr', 'vkGetDeviceProcAddr',
    'vkEnumerateInstanceVersion', 'vkEnumerateInstanceLayerProperties',
    'vkEnumerateInstanceExtensionProperties',
}

# What the memory tracking needs to see: (pre, post) per command.
HOOKS = {
    'vkAllocateMemory': (False, True),
    'vkFreeMemory': (True, False),
    'vkMapMemory': (False, True),
    'vkUnmapMemory': (True, False),
    'vkCreateBuffer': (False, True),
    'vkDestroyBuffer': (True, False),
    'vkCreateImage': (False, True),
    'vkDestroyImage': (True, False),
    'vkBindBufferMemory': (False, True),
    'vkBindImageMemory': (False, True),
    'vkBindBufferMemory2': (False, True),
    'vkBindBufferMemory2KHR': (False, True),
    'vkBindImageMemory2': (False, True),
    'vkBindImageMemory2KHR': (False, True),
    'vkQueueSubmit': (True, False),
    'vkQueueSubmit2': (True, False),
    'vkQueueSubmit2KHR': (True, False),
    # what command buffers reference (layer/refs.c)
    'vkAllocateCommandBuffers': (False, True),
    'vkFreeCommandBuffers': (True, False),
    'vkBeginCommandBuffer': (True, False),
    'vkDestroyCommandPool': (True, False),
    'vkCreateBufferView': (False, True),
    'vkDestroyBufferView': (True, False),
    'vkCreateImageView': (False, True),
    'vkDestroyImageView': (True, False),
    'vkCreateFramebuffer': (False, True),
    'vkDestroyFramebuffer': (True, False),
    'vkAllocateDescriptorSets': (False, True),
    'vkFreeDescriptorSets': (True, False),
    'vkResetDescriptorPool': (True, False),
    'vkDestroyDescriptorPool': (True, False),
    'vkUpdateDescriptorSets': (False, True),
    'vkUpdateDescriptorSetWithTemplate': (False, True),
    'vkUpdateDescriptorSetWithTemplateKHR': (False, True),
    'vkCreateDescriptorUpdateTemplate': (False, True),
    'vkCreateDescriptorUpdateTemplateKHR': (False, True),
    'vkDestroyDescriptorUpdateTemplate': (True, False),
    'vkDestroyDescriptorUpdateTemplateKHR': (True, False),
    # screenshots (layer/screenshot.c)
    'vkGetDeviceQueue': (False, True),
    'vkGetDeviceQueue2': (False, True),
    'vkDestroySwapchainKHR': (True, False),
    # draws packed at the struct's stride (layer/capture.c)
    'vkCmdDrawMultiEXT': (True, False),
    'vkCmdDrawMultiIndexedEXT': (True, False),
}

# Commands whose call down is hand-written (layer/screenshot.c,
# layer/capture.c): tk_down_NAME(dev or inst, &a) calls the next layer,
# possibly with arguments of its own, or changes what it answers; the
# trace records what the application passed and was given.
DOWN = {'vkCreateSwapchainKHR', 'vkQueuePresentKHR', 'vkEnumerateDeviceExtensionProperties'}

# Commands with a hook once their record is queued, tk_queued_NAME(dev):
# screenshots number presents in the order their records go into the
# trace (layer/screenshot.c).
QUEUED = {'vkQueuePresentKHR'}

# Commands whose pData (a void* the registry gives no length) holds the
# descriptors of an update template: recorded as a blob of the bytes the
# template reads, packed as the trace's template says
# (tk_enter_template_data, layer/refs.c), not as an address.
TEMPLATE_DATA = {
    'vkUpdateDescriptorSetWithTemplate': ('descriptorUpdateTemplate', 'pData'),
    'vkUpdateDescriptorSetWithTemplateKHR': ('descriptorUpdateTemplate', 'pData'),
    'vkCmdPushDescriptorSetWithTemplateKHR': ('descriptorUpdateTemplate', 'pData'),
    'vkCmdPushDescriptorSetWithTemplate': ('descriptorUpdateTemplate', 'pData'),
}

# Commands that make an update template: recorded with its entries packed
# (tk_enter_template_create, layer/refs.c) to read pData as recorded.
TEMPLATE_CREATE = {'vkCreateDescriptorUpdateTemplate', 'vkCreateDescriptorUpdateTemplateKHR'}

# Calls too frequent and too uninteresting to record: none.  (A capture
# records what the application called; the loader's own calls to the
# layer, such as vkGetDeviceProcAddr, are not application calls.)


def address_getter(c):
    """A command that hands out a device address (of a buffer, memory, an
    acceleration structure, an image view): after it, shaders may read
    memory no command buffer names, and every submit scans everything."""
    return c.name.startswith('vkGet') and 'Address' in c.name and c.level == 'DEVICE'


def owner_var(c):
    return 'dev' if c.level == 'DEVICE' else 'inst'


def missing_result(ret):
    """What a wrapper answers when the next layer has no entry for it: the
    call is not made (an application that calls a command it was never
    given a pointer to)."""
    if ret == 'void':
        return ''
    if ret == 'VkResult':
        return ' VK_ERROR_EXTENSION_NOT_PRESENT'
    return ' 0'


def gen(m):
    out = [vg.HEAD.rstrip().replace('lib/vulkan/vkschema_gen.py', 'layer/layer_gen.py'), '']
    inst = [c for c in m.commands.values() if c.level == 'INSTANCE']
    dev = [c for c in m.commands.values() if c.level == 'DEVICE']

    hdr = [out[0], '#ifndef LAYER_GEN_H', '#define LAYER_GEN_H']
    for name, cmds in (('tk_instance_disp', inst), ('tk_device_disp', dev)):
        hdr.append('typedef struct %s {' % name)
        for c in cmds:
            vg.guarded(hdr, c.protect, ['\tPFN_%s %s;' % (c.name, c.name)])
        hdr.append('} %s;' % name)
        hdr.append('')
    hdr.append('#endif')

    for level, cmds, get, owner in (('instance', inst, 'gipa', 'VkInstance'),
                                    ('device', dev, 'gdpa', 'VkDevice')):
        out.append('static void tk_%s_disp_init(tk_%s_disp *d, PFN_vkGet%sProcAddr %s, %s %s)'
                   % (level, level, owner[2:], get, owner, level))
        out.append('{')
        for c in cmds:
            vg.guarded(out, c.protect, ['\td->%s = (PFN_%s)%s(%s, "%s");' % (c.name, c.name, get, level, c.name)])
        out.append('}')
        out.append('')

    for c in m.commands.values():
        if c.name in HAND:
            continue
        pre, post = HOOKS.get(c.name, (False, False))
        lines = []
        if pre:
            lines.append('void tk_pre_%s(tk_device *dev, vk_args_%s *a);' % (c.name, c.name))
        if post:
            lines.append('void tk_post_%s(tk_device *dev, vk_args_%s *a);' % (c.name, c.name))
        if c.name in DOWN:
            owner = 'tk_device *dev' if c.level == 'DEVICE' else 'tk_instance *inst'
            lines.append('%s tk_down_%s(%s, vk_args_%s *a);' % (c.ret, c.name, owner, c.name))
        if c.name in QUEUED:
            lines.append('void tk_queued_%s(tk_device *dev);' % c.name)
        decl = ', '.join('%s %s' % (vg.c_type(f), f.name) for f in c.params)
        args = ', '.join(f.name for f in c.params)
        lines.append('static VKAPI_ATTR %s VKAPI_CALL tk_%s(%s)' % (c.ret, c.name, decl))
        lines.append('{')
        # inside: an ending signal's handler waits until the thread leaves
        lines.append('\ttk_in();')
        obj = c.params[0].name
        if c.level == 'DEVICE':
            lines.append('\ttk_device *dev = tk_device_of(%s);' % obj)
            disp = 'dev->disp'
        else:
            lines.append('\ttk_instance *inst = tk_instance_of(%s);' % obj)
            disp = 'inst->disp'
        # the next layer's entry: never NULL when called (tk_*_next, capture.c)
        table = 'tk_device_disp' if c.level == 'DEVICE' else 'tk_instance_disp'
        # (an atomic read: tk_gipa or tk_gdpa may fill an empty entry
        # while another thread calls; relaxed, a plain load on x86)
        lines.append('\tPFN_%s down = %s ? __atomic_load_n(&%s.%s, __ATOMIC_RELAXED) : NULL;'
                     % (c.name, owner_var(c), disp, c.name))
        lines.append('\tif (!down && !(down = (PFN_%s)tk_%s_next(%s, offsetof(%s, %s), "%s"))) {'
                     % (c.name, 'device' if c.level == 'DEVICE' else 'instance', owner_var(c),
                        table, c.name, c.name))
        lines.append('\t\ttk_out();')
        lines.append('\t\treturn%s;' % missing_result(c.ret))
        lines.append('\t}')
        lines.append('\tvk_args_%s a = { %s };' % (c.name, args))
        if pre:
            lines.append('\ttk_pre_%s(dev, &a);' % c.name)
        if address_getter(c):
            lines.append('\ttk_note_address(dev);')
        if c.name in TEMPLATE_DATA:
            tmpl, data = TEMPLATE_DATA[c.name]
            idx = [f.name for f in c.params].index(data)
            lines.append('\ttk_rec *rec = tk_enter_template_data(dev, &vk_cmd_%s, &a, %d, (uint64_t)a.%s, a.%s);'
                         % (c.name, idx, tmpl, data))
        elif c.name in TEMPLATE_CREATE:
            lines.append('\ttk_rec *rec = tk_enter_template_create(&vk_cmd_%s, &a, &a.pCreateInfo);' % c.name)
        else:
            lines.append('\ttk_rec *rec = tk_enter(&vk_cmd_%s, &a);' % c.name)
        call = 'down(%s)' % args
        if c.name in DOWN:
            call = 'tk_down_%s(%s, &a)' % (c.name, 'dev' if c.level == 'DEVICE' else 'inst')
        # the driver's call is the program's: a signal there is handled
        # at once, as without the layer (no lock of ours is held; the
        # DOWN functions hold theirs across it)
        direct = c.name not in DOWN
        if direct:
            lines.append('\ttk_out();')
        if c.ret == 'void':
            lines.append('\t%s;' % call)
        else:
            lines.append('\ta.result = %s;' % call)
        if direct:
            lines.append('\ttk_in();')
        if post:
            lines.append('\ttk_post_%s(dev, &a);' % c.name)
        if c.name.startswith('vkCmd'):
            # the buffers, images, views, descriptor sets... it references:
            # what a submit of the command buffer may read (layer/refs.c)
            lines.append('\tstatic _Atomic uint8_t how;')
            lines.append('\ttk_cmd_refs(dev, &vk_cmd_%s, &a, &how);' % c.name)
        lines.append('\ttk_leave(rec, &vk_cmd_%s, &a);' % c.name)
        if c.name in QUEUED:
            lines.append('\ttk_queued_%s(dev);' % c.name)
        lines.append('\ttk_out();')
        if c.ret != 'void':
            lines.append('\treturn a.result;')
        lines.append('}')
        vg.guarded(out, c.protect, lines)
    out.append('')

    # the names vkGet*ProcAddr answer, sorted for bsearch
    vg.c_array(out, 'static const tk_entry tk_entries[]',
               ((c.protect, '{ "%s", (PFN_vkVoidFunction)tk_%s, %d, offsetof(%s, %s) },'
                 % (c.name, c.name, 1 if c.level == 'DEVICE' else 0,
                    'tk_device_disp' if c.level == 'DEVICE' else 'tk_instance_disp', c.name))
                for c in sorted(m.commands.values(), key=lambda c: c.name) if c.name not in HAND))
    out.append('')

    # the extensions the layer records, sorted for bsearch: a device
    # extension newer than the registry is hidden from the application
    # (its commands would pass through unrecorded)
    vg.c_array(out, 'static const char *const tk_known_extensions[]',
               ((None, '"%s",' % name) for name in sorted(m.extensions)))
    return '\n'.join(hdr) + '\n', '\n'.join(out) + '\n'


def main(argv):
    reg_dir = vg.REGISTRY
    if len(argv) > 2 and argv[1] == '--registry':
        reg_dir = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) != 2:
        sys.exit('usage: layer_gen.py [--registry DIR] OUTDIR')
    m = vg.load(reg_dir)
    os.makedirs(argv[1], exist_ok=True)
    h, c = gen(m)
    vg.write(os.path.join(argv[1], 'layer_gen.h'), h)
    vg.write(os.path.join(argv[1], 'layer_gen.c'), c)


if __name__ == '__main__':
    main(sys.argv)
