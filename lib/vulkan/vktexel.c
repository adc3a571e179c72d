/*
 * vktexel: 4-byte texels into 8-bit RGBA (see vktexel.h).
 */
#include "vktexel.h"

typedef enum layout { L_NONE, L_BGRA8, L_RGBA8, L_A2R10G10B10, L_A2B10G10R10 } layout;

static layout layout_of(VkFormat f)
{
	switch (f) {
	case VK_FORMAT_B8G8R8A8_UNORM:
	case VK_FORMAT_B8G8R8A8_SRGB:
		return L_BGRA8;
	case VK_FORMAT_R8G8B8A8_UNORM:
	case VK_FORMAT_R8G8B8A8_SRGB:
	case VK_FORMAT_A8B8G8R8_UNORM_PACK32:
	case VK_FORMAT_A8B8G8R8_SRGB_PACK32:
		return L_RGBA8;
	case VK_FORMAT_A2R10G10B10_UNORM_PACK32:
		return L_A2R10G10B10;
	case VK_FORMAT_A2B10G10R10_UNORM_PACK32:
		return L_A2B10G10R10;
	default:
		return L_NONE;
	}
}

bool vk_texels_known(VkFormat format)
{
	return layout_of(format) != L_NONE;
}

bool vk_texels_to_rgba(VkFormat format, const uint8_t *in, uint8_t *rgba, size_t n,
		       bool keep_alpha)
{
	layout l = layout_of(format);
	if (l == L_NONE)
		return false;
	for (size_t i = 0; i < n; i++, in += 4, rgba += 4) {
		uint32_t v = (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
			     (uint32_t)in[3] << 24;
		uint8_t a = in[3];
		switch (l) {
		case L_BGRA8:
			rgba[0] = in[2], rgba[1] = in[1], rgba[2] = in[0];
			break;
		case L_RGBA8:
			rgba[0] = in[0], rgba[1] = in[1], rgba[2] = in[2];
			break;
		case L_A2R10G10B10:
			rgba[0] = (uint8_t)(v >> 22), rgba[1] = (uint8_t)(v >> 12), rgba[2] = (uint8_t)(v >> 2);
			a = (uint8_t)((v >> 30) * 85);
			break;
		case L_A2B10G10R10:
			rgba[0] = (uint8_t)(v >> 2), rgba[1] = (uint8_t)(v >> 12), rgba[2] = (uint8_t)(v >> 22);
			a = (uint8_t)((v >> 30) * 85);
			break;
		case L_NONE:
			break;
		}
		rgba[3] = keep_alpha ? a : 255;
	}
	return true;
}
