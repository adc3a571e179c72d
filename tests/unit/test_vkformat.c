/*
 * vkformat: the formats that hold another's texels as they are, which
 * trace-replay makes an image in when the device lacks its own, as the
 * registry's <formats> gives them.
 */
#include <vulkan/vulkan_core.h>

#include "unit.h"
#include "vkformat.h"

#include <string.h>

static bool has(const int32_t *v, uint32_t n, int32_t f)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == f)
			return true;
	return false;
}

static void test_substitutes_hold_every_texel(void)
{
	int32_t out[32];
	uint32_t n = vk_format_substitutes(VK_FORMAT_A4R4G4B4_UNORM_PACK16, out, 32);
	/* the same bits in another order first, then 8 bits a channel */
	check(n >= 6 && has(out, 3, VK_FORMAT_R4G4B4A4_UNORM_PACK16) &&
		      has(out, 3, VK_FORMAT_B4G4R4A4_UNORM_PACK16) &&
		      has(out, 3, VK_FORMAT_A4B4G4R4_UNORM_PACK16) &&
		      has(out + 3, n - 3, VK_FORMAT_R8G8B8A8_UNORM) &&
		      has(out + 3, n - 3, VK_FORMAT_B8G8R8A8_UNORM),
	      "A4R4G4B4's substitutes: %u", n);
	check(vk_format_same_bits(VK_FORMAT_A4R4G4B4_UNORM_PACK16, out[0]) &&
		      !vk_format_same_bits(VK_FORMAT_A4R4G4B4_UNORM_PACK16, out[3]),
	      "renames before widenings");
	/* 4-bit UNORM's values are 16-bit's too; 10-bit's are not (1023/15) */
	check(has(out, n, VK_FORMAT_R16G16B16A16_UNORM) &&
		      !has(out, n, VK_FORMAT_A2R10G10B10_UNORM_PACK32) &&
		      !has(out, n, VK_FORMAT_R8G8B8A8_SRGB) && !has(out, n, VK_FORMAT_R8G8B8A8_SNORM),
	      "widenings keep each value and numeric format");
	n = vk_format_substitutes(VK_FORMAT_R8G8B8A8_UNORM, out, 32);
	check(n >= 2 && out[0] == VK_FORMAT_B8G8R8A8_UNORM &&
		      has(out, n, VK_FORMAT_A8B8G8R8_UNORM_PACK32),
	      "R8G8B8A8_UNORM: B8G8R8A8 first, then other layouts of 8 bits (%u)", n);
	check(!has(out, n, VK_FORMAT_B8G8R8A8_SRGB), "SRGB is another numeric format");
	n = vk_format_substitutes(VK_FORMAT_R5G6B5_UNORM_PACK16, out, 32);
	check(n == 1 && out[0] == VK_FORMAT_B5G6R5_UNORM_PACK16, "R5G6B5: %u substitutes", n);
	/* alpha's bit moved to the other end: the same channels, each in
	 * as many bits; R5G6B5 lacks alpha; 5-bit UNORM's k/31 is 10-bit's
	 * 33k/1023 */
	n = vk_format_substitutes(VK_FORMAT_A1R5G5B5_UNORM_PACK16, out, 32);
	check(has(out, n, VK_FORMAT_R5G5B5A1_UNORM_PACK16) &&
		      vk_format_same_bits(VK_FORMAT_A1R5G5B5_UNORM_PACK16,
					  VK_FORMAT_R5G5B5A1_UNORM_PACK16) &&
		      !has(out, n, VK_FORMAT_R5G6B5_UNORM_PACK16) &&
		      has(out, n, VK_FORMAT_A2R10G10B10_UNORM_PACK32),
	      "A1R5G5B5 as R5G5B5A1");
	check(vk_format_substitutes(VK_FORMAT_D32_SFLOAT, out, 32) == 0 &&
		      vk_format_substitutes(VK_FORMAT_BC1_RGB_UNORM_BLOCK, out, 32) == 0 &&
		      vk_format_substitutes(VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, out, 32) == 0,
	      "depth, compressed and planar formats have none");
	n = vk_format_substitutes(VK_FORMAT_R32_SFLOAT, out, 32);
	check(n == 1 && out[0] == VK_FORMAT_R64_SFLOAT, "a float widens as it is");
	check(vk_format_substitutes(VK_FORMAT_A4R4G4B4_UNORM_PACK16, out, 1) == 1, "at most MAX");
}

static void test_views_follow_the_rename(void)
{
	check(vk_format_view_rename(VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM,
				    VK_FORMAT_B8G8R8A8_UNORM) == VK_FORMAT_B8G8R8A8_UNORM,
	      "the image's own format");
	check(vk_format_view_rename(VK_FORMAT_R8G8B8A8_SRGB, VK_FORMAT_R8G8B8A8_UNORM,
				    VK_FORMAT_B8G8R8A8_UNORM) == VK_FORMAT_B8G8R8A8_SRGB,
	      "its SRGB sibling, under the new names");
	check(vk_format_view_rename(VK_FORMAT_R32_UINT, VK_FORMAT_R8G8B8A8_UNORM,
				    VK_FORMAT_B8G8R8A8_UNORM) == VK_FORMAT_R32_UINT,
	      "a view of other bits reads them the same");
	check(vk_format_view_rename(VK_FORMAT_R8G8B8A8_UINT, VK_FORMAT_R8G8B8A8_UNORM,
				    VK_FORMAT_B8G8R8A8_UNORM) == VK_FORMAT_B8G8R8A8_UINT,
	      "its UINT sibling too");
	check(vk_format_view_rename(VK_FORMAT_A4R4G4B4_UNORM_PACK16,
				    VK_FORMAT_A4R4G4B4_UNORM_PACK16, VK_FORMAT_R8G8B8A8_UNORM) ==
		      VK_FORMAT_R8G8B8A8_UNORM,
	      "a widened image's view");
	check(vk_format_view_rename(VK_FORMAT_R8G8B8A8_SRGB, VK_FORMAT_R8G8B8A8_UNORM,
				    VK_FORMAT_R16G16B16A16_UNORM) == -1,
	      "no 16-bit SRGB: none");
	/* zink views its A8B8G8R8_SRGB_PACK32 images as R8G8B8A8_UNORM: the
	 * same bytes */
	check(vk_format_view_rename(VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_A8B8G8R8_SRGB_PACK32,
				    VK_FORMAT_B8G8R8A8_SRGB) == VK_FORMAT_B8G8R8A8_UNORM,
	      "a view of the same bits in another packing");
	/* a view that swaps red and blue reads other bits: as it is */
	check(vk_format_view_rename(VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM,
				    VK_FORMAT_B8G8R8A8_UNORM) == VK_FORMAT_B8G8R8A8_UNORM,
	      "a view of other bits");
}

static void test_names(void)
{
	check(!strcmp(vk_format_name(VK_FORMAT_A4R4G4B4_UNORM_PACK16),
		      "VK_FORMAT_A4R4G4B4_UNORM_PACK16") && !strcmp(vk_format_name(-5), "VkFormat"),
	      "names");
}

int main(void)
{
	test_substitutes_hold_every_texel();
	test_views_follow_the_rename();
	test_names();
	return unit_done("test_vkformat");
}
