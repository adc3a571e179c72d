/*
 * vkformat: formats that hold another's texels as they are: its channels
 * in another order (VK_FORMAT_A4R4G4B4_UNORM_PACK16 and B4G4R4A4,
 * R8G8B8A8 and B8G8R8A8) or in more bits (A4R4G4B4 in R8G8B8A8), from
 * the registry's <formats> (vk_format_layouts, generated): the replay
 * makes an image the device lacks in its captured format in one of them
 * (lib/replay/formats.c).  Plain C: no libvulkan call.
 */
#ifndef TRACE_VKFORMAT_H
#define TRACE_VKFORMAT_H

#include "vkschema.h"

/* FORMAT's layout, or NULL for a format the table leaves out (compressed,
 * planar, depth and stencil, one the registry does not describe). */
const vk_format_layout *vk_format_layout_of(int32_t format);

/*
 * The formats other than FORMAT that hold each of its texels as it is,
 * into OUT (at most MAX), best first: those of the same channels each in
 * as many bits, in another order or packing (B4G4R4A4 for A4R4G4B4,
 * R5G5B5A1 for A1R5G5B5), then those of the same channels in more bits
 * that hold every value exactly (4-bit UNORM in 8: 17k/255 is k/15),
 * smallest first; in the registry's order within each.  Returns how many.
 */
uint32_t vk_format_substitutes(int32_t format, int32_t *out, uint32_t max);

/* Whether A and B give each channel the same bits (the channels in
 * another order, not in more bits). */
bool vk_format_same_bits(int32_t a, int32_t b);

/* Whether A and B put each channel in the same bits, whatever their
 * numeric formats (R8G8B8A8_UNORM and A8B8G8R8_SRGB_PACK32 do). */
bool vk_format_same_places(int32_t a, int32_t b);

/*
 * A view format V of an image made as TO in place of FROM (one of FROM's
 * substitutes): where V puts each channel in the bits FROM does (FROM
 * itself, its SRGB or UINT sibling, R8G8B8A8 for A8B8G8R8_PACK32), the
 * format of TO's channels and bits in V's numeric formats; otherwise V
 * itself (a mutable image's view of other bits).  -1 where no format has
 * them.
 */
int32_t vk_format_view_rename(int32_t v, int32_t from, int32_t to);

/* FORMAT's name from the registry ("VK_FORMAT_R8G8B8A8_UNORM"), or
 * "VkFormat" for a value it does not name. */
const char *vk_format_name(int32_t format);

#endif
