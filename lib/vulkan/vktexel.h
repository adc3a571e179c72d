/*
 * vktexel: a swapchain's or an attachment's texels of 4 bytes as 8-bit
 * RGBA, for a PNG.  One table of the formats for the capture layer's
 * screenshots, trace-replay's screenshots and its --dump: each knew its
 * own (the replay's screenshots lacked the 10-bit formats that zink on
 * Wayland presents).  Plain C over the Vulkan types: no libvulkan call.
 */
#ifndef TRACE_VKTEXEL_H
#define TRACE_VKTEXEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

/* Whether vk_texels_to_rgba converts FORMAT. */
bool vk_texels_known(VkFormat format);

/*
 * N texels of FORMAT at IN (4 bytes each, packed) into RGBA (4 bytes
 * each): red, green and blue to 8 bits (10-bit ones truncated), alpha
 * kept where KEEP_ALPHA, else 255 (what a window shows with an opaque
 * composite: a swapchain image's alpha is often left at 0).  False, with
 * nothing written, for a format vk_texels_known does not take.
 */
bool vk_texels_to_rgba(VkFormat format, const uint8_t *in, uint8_t *rgba, size_t n,
		       bool keep_alpha);

#endif
