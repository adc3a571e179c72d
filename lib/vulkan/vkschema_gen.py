#!/usr/bin/env python3
"""Generates the Vulkan schema of libtrace from the registry (vk.xml).

    vkschema_gen.py [--registry DIR] OUTDIR

writes OUTDIR/vkschema_gen.c (the tables lib/vulkan/vkschema.h declares),
OUTDIR/vkschema_cmds.h (per command: the argument struct, the descriptor
and typed encode/decode helpers) and OUTDIR/vkcall_gen.c (per command, a
thunk that makes the call from its argument struct: trace-replay's).  layer/layer_gen.py imports load().

The registry is the source of truth: nothing here names a Vulkan command
or struct except the few the registry cannot describe (see SPECIAL_*).
"""
import os
import re
import sys

REGISTRY = '/usr/share/vulkan/registry'

# Linux's platforms, in the order their headers go (xlib_xrandr's needs
# xlib's Display), each guarded by its protect macro and always enabled: a
# window system's commands are recorded, decoded and replayed whether or
# not the build has the window system's development headers (without
# libwayland-dev, vkCreateWaylandSurfaceKHR went past the layer
# unrecorded).  Every other platform (win32, android, metal, macos, ios,
# fuchsia, ggp, vi, directfb, screen) is left out: its types need headers
# Debian lacks.
PLATFORMS = {
    'xlib': 'X11/Xlib.h',
    'xlib_xrandr': 'X11/extensions/Xrandr.h',
    'xcb': 'xcb/xcb.h',
    'wayland': 'wayland-client.h',
    'provisional': None,  # vulkan_beta.h ships with the headers
}

# The types the registry takes from those headers, declared as the headers
# declare them, for a build that lacks one: the commands hand them on, and
# the schema records the pointers as values and the XIDs as integers.
PLATFORM_TYPES = {
    'Display': 'typedef struct _XDisplay Display;',
    'VisualID': 'typedef unsigned long VisualID;',
    'Window': 'typedef unsigned long Window;',
    'RROutput': 'typedef unsigned long RROutput;',
    'xcb_connection_t': 'typedef struct xcb_connection_t xcb_connection_t;',
    'xcb_visualid_t': 'typedef uint32_t xcb_visualid_t;',
    'xcb_window_t': 'typedef uint32_t xcb_window_t;',
    'wl_display': 'struct wl_display;',
    'wl_surface': 'struct wl_surface;',
}

SCALARS = {
    'uint8_t': 'UINT', 'uint16_t': 'UINT', 'uint32_t': 'UINT', 'uint64_t': 'UINT',
    'int8_t': 'SINT', 'int16_t': 'SINT', 'int32_t': 'SINT', 'int64_t': 'SINT',
    'int': 'SINT', 'size_t': 'UINT', 'float': 'FLOAT', 'double': 'DOUBLE',
    'char': 'CHAR', 'void': 'VOID',
}

# the kind of a type by its registry category, where the category says it
CATEGORY_KINDS = {
    'struct': 'STRUCT', 'union': 'UNION', 'enum': 'ENUM', 'bitmask': 'BITMASK',
    'handle': 'HANDLE', 'funcpointer': 'PTRVAL',
}


class Field:
    pass


class Model:
    pass


def member_decl(elem):
    """(type, name, ptr depth, const, fixed-array C count or None)."""
    typ = elem.find('type').text
    name = elem.find('name').text
    head, tail, seen = elem.text or '', '', False
    for ch in elem:
        if ch.tag == 'name':
            seen = True
            tail += ch.tail or ''
        elif ch.tag == 'comment':
            tail += ch.tail or ''
        elif seen:
            tail += (ch.text or '') + (ch.tail or '')
        else:
            head += (ch.text or '') + (ch.tail or '')
    ptr = head.count('*')
    const = head.strip().startswith('const')
    dims = re.findall(r'\[([^\]]+)\]', tail.split(':')[0])
    count = '*'.join('(%s)' % d.strip() for d in dims) if dims else None
    bits = ':' in tail
    return typ, name, ptr, const, count, bits


def enum_value(e, extnumber=None):
    """The integer value of an <enum>, or None for an alias."""
    if e.get('alias'):
        return None
    if e.get('value') is not None:
        v = e.get('value')
        if v.startswith('('):
            return None
        # C suffixes: 1000.0F, 0xFFU; an F of a hex number is a digit
        # (VK_SHADER_STAGE_ALL is 0x7FFFFFFF)
        v = v.rstrip('UL') if v.lower().startswith('0x') else v.rstrip('ULF')
        return int(v, 0)
    if e.get('bitpos') is not None:
        return 1 << int(e.get('bitpos'))
    if e.get('offset') is not None:
        n = int(e.get('extnumber') or extnumber)
        v = 1000000000 + (n - 1) * 1000 + int(e.get('offset'))
        return -v if e.get('dir') == '-' else v
    return None


def load(registry=REGISTRY):
    sys.path.insert(0, registry)
    import reg
    r = reg.Registry()
    r.loadFile(os.path.join(registry, 'vk.xml'))
    root = r.reg
    protect_of = {p.get('name'): p.get('protect')
                  for p in root.findall('platforms/platform')}

    # What the headers define: the features and the supported extensions,
    # each item with the protect macro of its requirers (None: unguarded).
    guard = {}     # item name -> protect or None
    enum_ext = {}  # enum group -> [(name, value)]
    left_out = []
    ext_of_cmd = {}

    def require(blocks, protect, extnumber, extname):
        for req in blocks:
            for t in req.findall('type') + req.findall('command'):
                n = t.get('name')
                if t.tag == 'command' and extname:
                    ext_of_cmd.setdefault(n, extname)
                if protect is None:
                    guard[n] = None
                elif n not in guard:
                    guard[n] = protect
            for e in req.findall('enum'):
                g = e.get('extends')
                if g is None:
                    continue
                v = enum_value(e, extnumber)
                if v is not None:
                    enum_ext.setdefault(g, []).append((e.get('name'), v))

    for f in root.findall('feature'):
        if 'vulkan' in f.get('api', 'vulkan').split(','):
            require(f.findall('require'), None, None, None)
    exts = []
    for x in root.findall('extensions/extension'):
        if 'vulkan' not in x.get('supported', '').split(','):
            continue
        plat = x.get('platform')
        if plat and plat not in PLATFORMS:
            left_out.append(x.get('name'))
            continue
        exts.append(x.get('name'))
        require(x.findall('require'), protect_of[plat] if plat else None,
                x.get('number'), x.get('name'))

    types = {n: ti.elem for n, ti in r.typedict.items()}
    m = Model()
    m.left_out = left_out
    m.extensions = exts
    # (platform, protect, header, the declarations of its types)
    m.platforms = []
    for p, h in PLATFORMS.items():
        decls = []
        for n, e in types.items():
            if h and e.get('requires') == h:
                if n not in PLATFORM_TYPES:
                    raise SystemExit('vkschema_gen.py: %s, a type of <%s>: add its '
                                     'declaration to PLATFORM_TYPES' % (n, h))
                decls.append(PLATFORM_TYPES[n])
        m.platforms.append((p, protect_of[p], h, decls))

    # pull in what required structs and commands reference
    def closure(n, prot):
        e = types.get(n)
        if e is None or e.get('alias'):
            if e is not None and e.get('alias'):
                closure(e.get('alias'), prot)
            return
        if n in guard and (guard[n] is None or guard[n] == prot):
            pass
        if n not in guard:
            guard[n] = prot
        for mem in e.findall('member'):
            t = mem.find('type').text
            if t not in guard:
                closure(t, guard[n])
        req = e.get('requires') or e.get('bitvalues')
        if e.get('category') == 'bitmask' and req and req not in guard:
            guard[req] = guard[n]
    for n in list(guard):
        closure(n, guard[n])
    for n, ci in r.cmddict.items():
        if n in guard and not ci.elem.get('alias'):
            for p in ci.elem.findall('param'):
                t = p.find('type').text
                if t not in guard:
                    closure(t, guard[n])

    # enums and bitmasks
    m.enums = {}
    for grp in root.findall('enums'):
        gname = grp.get('name')
        if gname not in guard or grp.get('type') not in ('enum', 'bitmask'):
            continue
        vals = []
        for e in grp.findall('enum'):
            v = enum_value(e)
            if v is not None:
                vals.append((e.get('name'), v))
        seen = {n for n, _ in vals}
        for n, v in enum_ext.get(gname, []):
            if n not in seen:
                seen.add(n)
                vals.append((n, v))
        m.enums[gname] = (grp.get('type'), int(grp.get('bitwidth', '32')), vals)
    # enums the registry declares with no values group (reserved)
    m.bitmasks = {}
    for n, e in types.items():
        if e.get('category') == 'bitmask' and not e.get('alias') and n in guard:
            bits = e.get('requires') or e.get('bitvalues')
            width = 64 if 'VkFlags64' in ''.join(e.itertext()) else 32
            m.bitmasks[n] = (bits if bits in m.enums else None, width)
        if e.get('category') == 'enum' and n in guard and n not in m.enums and not e.get('alias'):
            m.enums[n] = ('enum', 32, [])

    # handles
    m.handles = {}
    for n, e in types.items():
        if e.get('category') == 'handle' and not e.get('alias') and n in guard:
            disp = 'VK_DEFINE_HANDLE' == (e.find('type').text if e.find('type') is not None else '')
            m.handles[n] = (disp, e.get('parent'), e.get('objtypeenum'))

    def kind_of(t, ptr):
        e = types.get(t)
        while e is not None and e.get('alias'):
            t = e.get('alias')
            e = types.get(t)
        if t in SCALARS:
            return SCALARS[t], t
        if t == 'VkBool32':
            return 'BOOL32', t
        if e is None:
            return 'OPAQUE', t
        cat = e.get('category')
        if cat in CATEGORY_KINDS:
            return CATEGORY_KINDS[cat], t
        if cat == 'basetype':
            under = e.find('type')
            if under is None:
                return ('PTRVAL' if ptr else 'OPAQUE'), t
            if '*' in ''.join(e.itertext()):
                return 'PTRVAL', t
            return SCALARS.get(under.text, 'OPAQUE'), t
        req = e.get('requires') or ''
        if req.startswith('vk_video'):
            return 'OPAQUE', t  # Std* types of video.xml: their bytes
        return 'EXTERN', t      # platform types: Display*, xcb_window_t

    def parse_len(f, siblings, owner):
        ln = f.elem.get('altlen') or f.elem.get('len')
        f.len_op, f.len_ref, f.len_arg = 'NONE', -1, '0'
        f.nullterm = f.single = False
        if not ln:
            return
        parts = [p.strip() for p in ln.split(',')]
        if parts[-1] == 'null-terminated':
            f.nullterm = True
            parts = parts[:-1]
        elif len(parts) > 1 and parts[-1] == '1':
            f.single = True
            parts = parts[:-1]
        if not parts:
            return
        x = parts[0]
        names = [s.name for s in siblings]
        mm = re.fullmatch(r'(\w+)', x)
        if mm and x in names:
            f.len_op, f.len_ref = 'MEMBER', names.index(x)
            return
        mm = re.fullmatch(r'(\w+) / 4', x)
        if mm:
            f.len_op, f.len_ref = 'DIV4', names.index(mm.group(1))
            return
        mm = re.fullmatch(r'\((\w+) \+ 31\) / 32', x)
        if mm:
            f.len_op, f.len_ref = 'SAMPLES', names.index(mm.group(1))
            return
        mm = re.fullmatch(r'2\*VK_UUID_SIZE', x)
        if mm:
            f.len_op, f.len_arg = 'CONST', '2*VK_UUID_SIZE'
            return
        mm = re.fullmatch(r'(\w+)->(\w+)', x)
        if mm:
            s = siblings[names.index(mm.group(1))]
            f.len_op, f.len_ref = 'FIELD', names.index(mm.group(1))
            f.len_arg = 'offsetof(%s, %s)' % (s.type, mm.group(2))
            return
        raise SystemExit('vkschema_gen.py: %s.%s: unknown len "%s"' % (owner, f.name, ln))

    def fields(elems, owner, is_param):
        out = []
        for el in elems:
            f = Field()
            f.elem = el
            f.type, f.name, f.ptr, f.const, f.count, f.bits = member_decl(el)
            f.kind, f.base = kind_of(f.type, f.ptr)
            f.optional = (el.get('optional') or '').startswith('true')
            f.noauto = el.get('noautovalidity') == 'true'
            f.out = (is_param and f.ptr > 0 and not f.const and f.kind not in ('EXTERN',))
            out.append(f)
        names = [f.name for f in out]
        for f in out:
            parse_len(f, out, owner)
            # a uint64_t handle whose type a sibling VkObjectType or
            # VkDebugReportObjectTypeEXT names (debug names, private data)
            typed_by = f.elem.get('objecttype')
            f.typed_by = names.index(typed_by) if typed_by else None
            if is_param and f.count:
                # an array parameter (const float blendConstants[4]) is a pointer
                f.ptr, f.len_op, f.len_arg, f.count = 1, 'CONST', f.count, None
        return out

    # structs and unions, in dependency-free name order
    m.structs = {}
    for n, e in sorted(types.items()):
        if e.get('category') not in ('struct', 'union') or e.get('alias') or n not in guard:
            continue
        s = Model()
        s.name = n
        s.union = e.get('category') == 'union'
        s.fields = fields(e.findall('member'), n, False)
        s.bits = any(f.bits for f in s.fields)
        s.stype = None
        for f in s.fields:
            if f.name == 'sType' and f.elem.get('values'):
                s.stype = f.elem.get('values').split(',')[0]
        s.extends = (e.get('structextends') or '').split(',') if e.get('structextends') else []
        s.protect = guard[n]
        m.structs[n] = s

    # commands, aliases included (they share the parameters of their target)
    m.commands = {}
    for n, ci in sorted(r.cmddict.items()):
        if n not in guard:
            continue
        el = ci.elem
        target = el.get('alias')
        if target:
            el = r.cmddict[target].elem
        proto = el.find('proto')
        c = Model()
        c.name = n
        c.alias = target
        c.protect = guard[n]
        c.ret = proto.find('type').text
        c.params = fields(el.findall('param'), n, True)
        c.ext = ext_of_cmd.get(n)
        c.level = level_of(c, m.handles)
        c.action, c.object = action_of(c, m.handles)
        # where a vkCmd* may be recorded: inside a render pass instance,
        # outside one, or both (the registry's renderpass attribute)
        c.renderpass = (el.get('renderpass') or 'any').upper()
        m.commands[n] = c
    m.guard = guard
    m.types = types
    m.formats = load_formats(root, m.enums.get('VkFormat'))
    return m


# The registry's <formats>: per VkFormat, the bytes of a texel block, the
# bits of its packed word and its channels in the order of their bits.
# Only formats of red, green, blue and alpha channels, uncompressed and of
# one plane: the ones another format can hold texel for texel
# (trace-replay's substitutes, lib/vulkan/vkformat.h).
def load_formats(root, vkformat):
    if not vkformat:
        return []
    value = dict(vkformat[2])
    out = []
    for f in root.findall('formats/format'):
        comps = f.findall('component')
        if (f.get('name') not in value or f.get('compressed') or f.findall('plane')
                or f.get('chroma') or f.get('texelsPerBlock') != '1'
                or not 1 <= len(comps) <= 4
                or any(c.get('name') not in 'RGBA' or not c.get('bits', '').isdigit()
                       for c in comps)):
            continue
        out.append((value[f.get('name')], f.get('name'), int(f.get('blockSize')), int(f.get('packed') or 0),
                    [(c.get('name'), int(c.get('bits')), c.get('numericFormat'))
                     for c in comps]))
    return sorted(out)


def gen_formats(out, m):
    out.append('const vk_format_layout vk_format_layouts[] = {')
    for v, name, size, packed, comps in m.formats:
        pad = comps + [('', 0, None)] * (4 - len(comps))
        out.append('\t{ %d, %d, %d, %d, "%s", { %s }, { %s } }, /* %s */'
                   % (v, size, packed, len(comps), ''.join(c[0] for c in comps),
                      ', '.join(str(c[1]) for c in pad),
                      ', '.join('"%s"' % c[2] if c[2] else 'NULL' for c in pad), name))
    out.append('};')
    out.append('const uint32_t vk_nformat_layouts = %d;' % len(m.formats))


GLOBAL = ('vkCreateInstance', 'vkEnumerateInstanceVersion',
          'vkEnumerateInstanceLayerProperties', 'vkEnumerateInstanceExtensionProperties',
          'vkGetInstanceProcAddr')


def level_of(c, handles):
    if c.name in GLOBAL:
        return 'GLOBAL'
    first = c.params[0].type if c.params else None
    if first in ('VkDevice', 'VkQueue', 'VkCommandBuffer') and c.name != 'vkGetDeviceProcAddr':
        return 'DEVICE'
    if c.name == 'vkGetDeviceProcAddr':
        return 'DEVICE'
    return 'INSTANCE'


def action_of(c, handles):
    """What the command does to objects, from its name and parameter types."""
    outs = [p for p in c.params if p.kind == 'HANDLE' and p.out]
    ins = [p for p in c.params if p.kind == 'HANDLE' and p.ptr == 0]
    n = c.name
    if n.startswith('vkCmd'):
        return 'RECORD', None
    for prefix, action in (('vkCreate', 'CREATE'), ('vkAllocate', 'ALLOCATE')):
        if n.startswith(prefix) and outs:
            return action, outs[-1].type
    if n.startswith('vkDestroy') or n.startswith('vkFree'):
        action = 'DESTROY' if n.startswith('vkDestroy') else 'FREE'
        arrays = [p for p in c.params if p.kind == 'HANDLE' and p.ptr == 1]
        obj = arrays[-1].type if arrays else (ins[-1].type if ins else None)
        return action, obj
    if n.startswith('vkGet') and outs:
        return 'GET', outs[-1].type
    return 'USE', None


# ---------------------------------------------------------------------
# C output

HEAD = '/* Generated by lib/vulkan/vkschema_gen.py from the Vulkan registry: do not edit. */\n'


def guarded(out, protect, lines):
    if protect:
        out.append('#ifdef %s' % protect)
    out.extend(lines)
    if protect:
        out.append('#endif')


def c_array(out, decl, rows):
    """Appends the array DECL = { ... };, a line a row: each row a
    (protect, text) pair, the text under #ifdef protect where it has one."""
    out.append(decl + ' = {')
    for protect, text in rows:
        guarded(out, protect, ['\t' + text])
    out.append('};')


def c_table(out, elem, name, rows, extern=False):
    """The global table vk_NAME of ELEM (c_array's rows) and its length
    vk_nNAME, declared extern first where no header declares them."""
    if extern:
        out.append('extern const %s vk_%s[];' % (elem, name))
    c_array(out, 'const %s vk_%s[]' % (elem, name), rows)
    if extern:
        out.append('extern const uint32_t vk_n%s;' % name)
    out.append('const uint32_t vk_n%s = sizeof(vk_%s) / sizeof(vk_%s[0]);' % (name, name, name))


def prelude(m):
    """vulkan.h, then each platform's header and its part of the Vulkan
    headers, whether or not the build has the header: where it lacks one,
    the types the registry takes from it are declared instead."""
    out = ['#define VK_ENABLE_BETA_EXTENSIONS', '#include <vulkan/vulkan.h>']
    for plat, prot, hdr, decls in m.platforms:
        if not hdr:
            continue
        out += ['#if __has_include(<%s>)' % hdr, '#include <%s>' % hdr, '#else']
        out += decls
        out += ['#endif', '#ifndef %s' % prot, '#define %s' % prot, '#endif',
                '#include <vulkan/vulkan_%s.h>' % plat]
    out += ['#include <stddef.h>', '#include "vkschema.h"', '']
    return out


def c_type(f):
    """The C declaration type of a parameter, for argument structs."""
    t = ('const ' if f.const else '') + f.type
    if f.ptr == 2:
        t += '*' if not f.const else '* const'
        t += '*'
    elif f.ptr == 1:
        t += '*'
    if f.type in ('wl_display', 'wl_surface'):
        t = 'struct ' + t
    return t


def field_init(f, owner, m):
    kind = f.kind
    if kind == 'STRUCT' and m.structs.get(f.base) and m.structs[f.base].bits:
        kind = 'UNION'  # bitfields: written as the struct's bytes
    extern_ptr = f.ptr > 0 and kind == 'EXTERN'
    if extern_ptr:
        kind, size = 'PTRVAL', 'sizeof(void *)'
    elif kind in ('VOID', 'EXTERN') and f.ptr == 0:
        size = 'sizeof(%s)' % f.type if kind == 'EXTERN' else '1'
    elif kind == 'VOID':
        size = '1'
    else:
        size = 'sizeof(%s)' % (('struct ' + f.base) if f.base in ('wl_display', 'wl_surface') else f.base)
    ref = 'NULL'
    if kind in ('STRUCT',):
        ref = '&vk_struct_%s' % f.base
    elif kind == 'ENUM' and f.base in m.enums:
        ref = '&vk_enum_%s' % f.base
    elif kind == 'BITMASK' and f.base in m.bitmasks:
        ref = '&vk_bitmask_%s' % f.base
    elif kind == 'HANDLE':
        ref = '&vk_handle_%s' % f.base
    flags = []
    if f.const:
        flags.append('VK_F_CONST')
    if f.optional:
        flags.append('VK_F_OPTIONAL')
    if getattr(f, 'noauto', False):
        flags.append('VK_F_NOAUTO')
    if extern_ptr:
        flags.append('VK_F_ADDRESS')
    if f.out:
        flags.append('VK_F_OUT')
    if f.nullterm:
        flags.append('VK_F_NULLTERM')
    if f.single:
        flags.append('VK_F_SINGLE')
    if f.name == 'pNext' and f.ptr == 1:
        flags.append('VK_F_PNEXT')
    if f.name == 'sType' and kind == 'ENUM':
        flags.append('VK_F_STYPE')
    typed_by = getattr(f, 'typed_by', None)
    if typed_by is not None:
        flags.append('VK_F_TYPED_HANDLE')
    return ('{ "%s", "%s", offsetof(%s, %s), %s, VK_B_%s, %d, %s, %s, %d, VK_LEN_%s, %s, %s, %d }'
            % (f.name, f.type, owner, f.name, size, kind, f.ptr, ' | '.join(flags) or '0',
               f.count or '0', f.len_ref, f.len_op, f.len_arg, ref,
               typed_by if typed_by is not None else 0))


def gen_c(m):
    out = [HEAD.rstrip(), '/*', ' * Extensions left out (platform headers a Linux build lacks):']
    for i in range(0, len(m.left_out), 4):
        out.append(' *   ' + ' '.join(m.left_out[i:i + 4]))
    out.append(' */')
    out += prelude(m)
    out.append('#include "vkschema_cmds.h"')
    out.append('')

    # enums
    for n, (typ, width, vals) in sorted(m.enums.items()):
        prot = m.guard.get(n)
        lines = ['static const trace_enum_entry vk_enum_values_%s[] = {' % n]
        lines += ['\t{ "%s", %d },' % (vn, v) for vn, v in vals] or ['\t{ NULL, 0 },']
        lines.append('};')
        # what a trace carries: per value a signature of it alone, the
        # first name the registry gives it, sorted by value for a search
        first = {}
        for i, (vn, v) in enumerate(vals):
            first.setdefault(v, i)
        ones = sorted(first.items())
        if ones:
            lines.append('static const trace_enum_sig vk_enum_ones_%s[] = {' % n)
            lines += ['\t{ 1, (trace_enum_entry *)&vk_enum_values_%s[%d] },' % (n, i)
                      for _, i in ones]
            lines.append('};')
        lines.append('const vk_enum_info vk_enum_%s = { "%s", { %d, (trace_enum_entry *)vk_enum_values_%s }, %d, %s };'
                         % (n, n, len(vals), n, len(ones),
                            'vk_enum_ones_%s' % n if ones else 'NULL'))
        if typ == 'bitmask':
            lines.append('static const trace_bitmask_flag vk_flag_values_%s[] = {' % n)
            # a zero flag (..._NONE) first: apitrace's dump matches a zero
            # value only against the first flag, and warns otherwise
            flags = sorted(vals, key=lambda nv: nv[1] != 0)
            lines += ['\t{ "%s", 0x%xull },' % (vn, v & ((1 << 64) - 1)) for vn, v in flags] or ['\t{ NULL, 0 },']
            lines.append('};')
            # what a trace carries: the flags up to the last a value shows
            lines.append('static const trace_bitmask_sig vk_flag_prefix_%s[] = {' % n)
            lines += ['\t{ %d, (trace_bitmask_flag *)vk_flag_values_%s },' % (k, n)
                      for k in range(len(flags) + 1)]
            lines.append('};')
        out += lines
    for n, (bits, width) in sorted(m.bitmasks.items()):
        if bits:
            out.append('const vk_bitmask_info vk_bitmask_%s = { "%s", %d, { %d, (trace_bitmask_flag *)vk_flag_values_%s }, vk_flag_prefix_%s };'
                       % (n, n, width // 8, len(m.enums[bits][2]), bits, bits))
        else:
            out.append('const vk_bitmask_info vk_bitmask_%s = { "%s", %d, { 0, NULL }, NULL };' % (n, n, width // 8))
    out.append('')

    # handles
    for n, (disp, parent, objtype) in sorted(m.handles.items()):
        prot = m.guard.get(n)
        guarded(out, prot, ['const vk_handle_info vk_handle_%s = { "%s", %d, %s, %s };'
                            % (n, n, int(disp), '"%s"' % parent if parent else 'NULL',
                               objtype if objtype else '0')])
    out.append('')

    # structs: declarations first, then fields
    for n, s in m.structs.items():
        guarded(out, s.protect, ['extern const vk_struct_info vk_struct_%s;' % n])
    for n, s in m.structs.items():
        lines = ['static const vk_field vk_fields_%s[] = {' % n]
        if s.bits:  # written as bytes: offsetof cannot name a bitfield
            lines.append('\t{ NULL },')
        else:
            lines += ['\t%s,' % field_init(f, n, m) for f in s.fields]
        lines.append('};')
        lines.append('static const char *const vk_names_%s[] = { %s };'
                     % (n, ', '.join('"%s"' % f.name for f in s.fields)))
        walk = [] if s.union or s.bits else walked(m, s.fields)
        lines += walk_table('vk_walk_%s' % n, walk)
        lines.append('const vk_struct_info vk_struct_%s = { { "%s", %d, (const char **)vk_names_%s }, sizeof(%s), %s, %d, %d, vk_fields_%s, %d, %d, %s };'
                     % (n, n, len(s.fields), n, n, s.stype or '-1', int(s.union or s.bits),
                        0 if s.bits else len(s.fields), n, int(has_handles(m, n)),
                        len(walk), 'vk_walk_%s' % n if walk else 'NULL'))
        guarded(out, s.protect, lines)
    out.append('')
    c_table(out, 'vk_struct_info *const', 'structs',
            ((s.protect, '&vk_struct_%s,' % n) for n, s in m.structs.items()))
    stypes = dict(m.enums['VkStructureType'][2])
    out.append('/* the structs that have an sType, by its value (pNext chains) */')
    c_table(out, 'vk_struct_info *const', 'structs_by_stype',
            ((s.protect, '&vk_struct_%s, /* %d */' % (n, stypes[s.stype]))
             for n, s in sorted(((n, s) for n, s in m.structs.items() if s.stype),
                                key=lambda x: stypes[x[1].stype])))
    out.append('')

    # commands
    for n, c in m.commands.items():
        owner = 'vk_args_%s' % n
        lines = ['static const vk_field vk_params_%s[] = {' % n]
        lines += ['\t%s,' % field_init(f, owner, m) for f in c.params]
        if c.ret != 'void':
            r = Field()
            r.elem = None
            r.type, r.name, r.ptr, r.const, r.count = c.ret, 'result', 0, False, None
            r.kind, r.base = kind_of_simple(m, c.ret)
            r.optional = r.out = r.nullterm = r.single = False
            r.len_ref, r.len_op, r.len_arg = -1, 'NONE', '0'
            lines.append('\t%s,' % field_init(r, owner, m))
        lines.append('};')
        names = [f.name for f in c.params]
        lines.append('static const char *const vk_pnames_%s[] = { %s };'
                     % (n, ', '.join('"%s"' % x for x in names) or 'NULL'))
        walk_in = walked(m, c.params, False)
        walk_out = walked(m, c.params, True)
        lines += walk_table('vk_walk_in_%s' % n, walk_in)
        lines += walk_table('vk_walk_out_%s' % n, walk_out)
        lines.append('const vk_command_info vk_cmd_%s = { { "%s", %d, (const char **)vk_pnames_%s }, sizeof(%s), %d, vk_params_%s, %s, VK_LEVEL_%s, VK_ACTION_%s, %s, %s, VK_RENDERPASS_%s, %d, %s, %d, %s };'
                     % (n, n, len(names), n, owner, len(names), n,
                        '&vk_params_%s[%d]' % (n, len(names)) if c.ret != 'void' else 'NULL',
                        c.level, c.action,
                        '&vk_handle_%s' % c.object if c.object else 'NULL',
                        '"%s"' % c.alias if c.alias else 'NULL', c.renderpass,
                        len(walk_in), 'vk_walk_in_%s' % n if walk_in else 'NULL',
                        len(walk_out), 'vk_walk_out_%s' % n if walk_out else 'NULL'))
        guarded(out, c.protect, lines)
    out.append('')
    c_table(out, 'vk_command_info *const', 'commands',
            ((c.protect, '&vk_cmd_%s,' % n) for n, c in m.commands.items()))
    out.append('')
    c_table(out, 'vk_enum_info *const', 'enums', ((None, '&vk_enum_%s,' % n) for n in sorted(m.enums)))
    c_table(out, 'vk_bitmask_info *const', 'bitmasks',
            ((None, '&vk_bitmask_%s,' % n) for n in sorted(m.bitmasks)))
    c_table(out, 'vk_handle_info *const', 'handles',
            ((m.guard.get(n), '&vk_handle_%s,' % n) for n in sorted(m.handles)))
    out.append('')
    gen_typed_handles(out, m)
    out.append('')
    gen_formats(out, m)
    return '\n'.join(out) + '\n'


def gen_typed_handles(out, m):
    """The handle type each value of VkObjectType and of
    VkDebugReportObjectTypeEXT names, sorted by value: what a uint64_t
    handle typed by a sibling field is (vk_typed_handle_type).  A
    VK_DEBUG_REPORT_OBJECT_TYPE_X_EXT names the handle whose
    VK_OBJECT_TYPE_X the registry gives."""
    by_objtype = {objtype: n for n, (_, _, objtype) in m.handles.items() if objtype}
    enums = (('VkObjectType', 'VK_OBJECT_TYPE_', ''),
             ('VkDebugReportObjectTypeEXT', 'VK_DEBUG_REPORT_OBJECT_TYPE_', '_EXT'))
    for enum, prefix, suffix in enums:
        rows = {}
        for name, value in m.enums.get(enum, ('', 0, []))[2]:
            if not name.startswith(prefix) or not name.endswith(suffix):
                continue
            key = 'VK_OBJECT_TYPE_' + name[len(prefix):len(name) - len(suffix)]
            handle = by_objtype.get(key)
            if handle and value not in rows:
                rows[value] = handle
        c_table(out, 'vk_typed_handle', 'typed_%s' % enum,
                ((m.guard.get(h), '{ %d, &vk_handle_%s },' % (v, h)) for v, h in sorted(rows.items())),
                extern=True)


def walked(m, fields, out=None):
    """The indexes of FIELDS that walking handles visits (vk_field_walked:
    a pNext chain, a handle, a typed handle, a struct that holds one); of a
    command's parameters, its outputs (OUT True) or its inputs."""
    idx = []
    for i, f in enumerate(fields):
        if out is not None and bool(f.out) != out:
            continue
        st = m.structs.get(f.base) if f.kind == 'STRUCT' else None
        if ((f.name == 'pNext' and f.ptr == 1) or f.kind == 'HANDLE'
                or getattr(f, 'typed_by', None) is not None
                or (st is not None and not st.bits and has_handles(m, f.base))):
            idx.append(i)
    return idx


def walk_table(name, idx):
    return ['static const uint16_t %s[] = { %s };' % (name, ', '.join(map(str, idx)))] if idx else []


def has_handles(m, name, seen=None):
    """Whether struct NAME holds a handle in a member, or in a struct a
    member holds or points at (pNext chains are not followed: replay walks
    them link by link)."""
    seen = seen if seen is not None else set()
    if name in seen:
        return False
    seen.add(name)
    s = m.structs.get(name)
    if s is None or s.union or s.bits:
        return False
    for f in s.fields:
        if f.name == 'pNext':
            continue
        if f.kind == 'HANDLE' or f.typed_by is not None:
            return True
        if f.kind == 'STRUCT' and has_handles(m, f.base, seen):
            return True
    return False


def gen_call(m):
    """OUTDIR/vkcall_gen.c: per command, a thunk that calls the command
    through a function pointer with the members of its vk_args_NAME (the
    result stored back), and vk_calls[], parallel to vk_commands[]."""
    out = [HEAD.rstrip()]
    out += prelude(m)
    out += ['#include "vkschema_cmds.h"', '',
            'typedef void (*vk_call_fn)(PFN_vkVoidFunction fn, void *args);', '']
    for n, c in m.commands.items():
        lines = ['static void vk_call_%s(PFN_vkVoidFunction fn, void *p)' % n, '{']
        call = ', '.join('a->%s' % f.name for f in c.params)
        if c.params or c.ret != 'void':
            lines.append('\tvk_args_%s *a = p;' % n)
        else:
            lines.append('\t(void)p;')
        res = 'a->result = ' if c.ret != 'void' else ''
        lines.append('\t%s((PFN_%s)fn)(%s);' % (res, n, call))
        lines.append('}')
        guarded(out, c.protect, lines)
    out.append('')
    out.append('/* parallel to vk_commands[]: the same commands, in the same order */')
    c_table(out, 'vk_call_fn', 'calls', ((c.protect, 'vk_call_%s,' % n) for n, c in m.commands.items()),
            extern=True)
    return '\n'.join(out) + '\n'


def kind_of_simple(m, t):
    if t in SCALARS:
        return SCALARS[t], t
    if t == 'VkBool32':
        return 'BOOL32', t
    if t in m.enums:
        return 'ENUM', t
    if t == 'PFN_vkVoidFunction':
        return 'PTRVAL', t
    if t in ('VkDeviceAddress', 'VkDeviceSize'):
        return 'UINT', t
    raise SystemExit('vkschema_gen.py: unknown return type ' + t)


def gen_h(m):
    out = [HEAD.rstrip(), '#ifndef VKSCHEMA_CMDS_H', '#define VKSCHEMA_CMDS_H']
    out += prelude(m)
    for n, c in m.commands.items():
        lines = ['typedef struct vk_args_%s {' % n]
        lines += ['\t%s %s;' % (c_type(f), f.name) for f in c.params]
        if c.ret != 'void':
            lines.append('\t%s result;' % c.ret)
        if not c.params and c.ret == 'void':
            lines.append('\tint unused;')
        lines.append('} vk_args_%s;' % n)
        lines.append('extern const vk_command_info vk_cmd_%s;' % n)
        decl = ', '.join('%s %s' % (c_type(f), f.name) for f in c.params)
        call = ', '.join(f.name for f in c.params)
        res = ', result' if c.ret != 'void' else ''
        resdecl = (', %s result' % c.ret) if c.ret != 'void' else ''
        lines.append('/* %s: the live arguments into c, inputs at VK_PHASE_ENTER, outputs and result at VK_PHASE_LEAVE */' % n)
        lines.append('static inline void vk_encode_%s(trace_call *c, vk_phase phase%s%s)'
                     % (n, ', ' + decl if decl else '', resdecl))
        lines.append('{')
        lines.append('\tvk_args_%s a = { %s };' % (n, call + res if call or res else '0'))
        lines.append('\tvk_encode_args(&vk_cmd_%s, c, &a, phase);' % n)
        lines.append('}')
        lines.append('static inline int vk_decode_%s(const trace_call *c, trace_arena *arena, vk_args_%s *a, trace_error *err)' % (n, n))
        lines.append('{')
        lines.append('\treturn vk_decode_args(&vk_cmd_%s, c, arena, a, err);' % n)
        lines.append('}')
        guarded(out, c.protect, lines)
    out.append('#endif')
    return '\n'.join(out) + '\n'


def write(path, text):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    reg_dir = REGISTRY
    if len(argv) > 2 and argv[1] == '--registry':
        reg_dir = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) != 2:
        sys.exit('usage: vkschema_gen.py [--registry DIR] OUTDIR')
    m = load(reg_dir)
    os.makedirs(argv[1], exist_ok=True)
    write(os.path.join(argv[1], 'vkschema_cmds.h'), gen_h(m))
    write(os.path.join(argv[1], 'vkschema_gen.c'), gen_c(m))
    write(os.path.join(argv[1], 'vkcall_gen.c'), gen_call(m))


if __name__ == '__main__':
    main(sys.argv)
