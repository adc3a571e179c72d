#!/usr/bin/env python3
"""wsi_surface.py PLATFORM: makes and destroys a surface of PLATFORM
(wayland, xcb or xlib) with made-up window-system pointers (0x1000,
0x2000) and window 42, then ends its instance: Mesa's drivers and the
loader only keep what a surface's create info holds, so no window system
is needed.  A layer that read what the pointers point at would crash."""
import ctypes as C
import sys

EXTS = {  # platform: (extension, create info sType, surface command)
    'wayland': (b'VK_KHR_wayland_surface', 1000006000, 'vkCreateWaylandSurfaceKHR'),
    'xcb': (b'VK_KHR_xcb_surface', 1000005000, 'vkCreateXcbSurfaceKHR'),
    'xlib': (b'VK_KHR_xlib_surface', 1000004000, 'vkCreateXlibSurfaceKHR'),
}


class InstanceCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_int), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('pApplicationInfo', C.c_void_p), ('enabledLayerCount', C.c_uint32),
                ('ppEnabledLayerNames', C.c_void_p), ('enabledExtensionCount', C.c_uint32),
                ('ppEnabledExtensionNames', C.POINTER(C.c_char_p))]


# each platform's create info: sType, pNext, flags, then its own members
class WaylandCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_int), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('display', C.c_void_p), ('surface', C.c_void_p)]


class XcbCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_int), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('connection', C.c_void_p), ('window', C.c_uint32)]


class XlibCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_int), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('dpy', C.c_void_p), ('window', C.c_ulong)]


def main():
    plat = sys.argv[1]
    ext, stype, create = EXTS[plat]
    vk = C.CDLL('libvulkan.so.1')
    names = (C.c_char_p * 2)(b'VK_KHR_surface', ext)
    inst = C.c_void_p()
    vk.vkCreateInstance.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p]
    r = vk.vkCreateInstance(C.byref(InstanceCreateInfo(1, None, 0, None, 0, None, 2, names)),
                            None, C.byref(inst))
    if r:
        sys.exit('vkCreateInstance: %d' % r)
    ci = {'wayland': lambda: WaylandCreateInfo(stype, None, 0, 0x1000, 0x2000),
          'xcb': lambda: XcbCreateInfo(stype, None, 0, 0x1000, 42),
          'xlib': lambda: XlibCreateInfo(stype, None, 0, 0x1000, 42)}[plat]()
    surface = C.c_uint64()
    fn = getattr(vk, create)
    fn.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]
    r = fn(inst, C.byref(ci), None, C.byref(surface))
    if r:
        sys.exit('%s: %d' % (create, r))
    vk.vkDestroySurfaceKHR.argtypes = [C.c_void_p, C.c_uint64, C.c_void_p]
    vk.vkDestroySurfaceKHR(inst, surface, None)
    vk.vkDestroyInstance.argtypes = [C.c_void_p, C.c_void_p]
    vk.vkDestroyInstance(inst, None)


main()
