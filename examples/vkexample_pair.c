/*
 * vkexample_pair.c: --anim-pair, the compute pattern written into one of
 * two images by turns, a frame slot's pair of frames at a time, and the
 * slot's set written again before each frame to show the one its frame
 * writes (its last use is done: the slot's fence was waited for).  A set
 * then shows each image in turn, as zink's sets do: each frame reads what
 * it wrote itself, never the other image, and a trim must not take every
 * earlier frame for what the set once showed (Scorched3D through zink).
 */
#include "vkexample.h"

static int on;
static struct image other;
static VkDescriptorPool pool;
static VkDescriptorSet comp_other;

void pair_create(void)
{
	VkDescriptorPoolSize size = { VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1 };
	VkDescriptorPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = 1,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorSetCount = 1,
		.pSetLayouts = &g.comp_dsl,
	};
	VkDescriptorImageInfo info = { VK_NULL_HANDLE, VK_NULL_HANDLE, VK_IMAGE_LAYOUT_GENERAL };
	VkWriteDescriptorSet w = {
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
		.descriptorCount = 1,
		.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
		.pImageInfo = &info,
	};

	on = 1;
	other = create_image(COLOR_FORMAT, ANIM_SIZE, ANIM_SIZE, 1,
			     VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
			     VK_IMAGE_ASPECT_COLOR_BIT);
	VK(vkCreateDescriptorPool(ex.dev, &pi, NULL, &pool));
	ai.descriptorPool = pool;
	VK(vkAllocateDescriptorSets(ex.dev, &ai, &comp_other));
	info.imageView = other.view;
	w.dstSet = comp_other;
	vkUpdateDescriptorSets(ex.dev, 1, &w, 0, NULL);
}

/* Whether FRAME writes and samples the other image. */
static int turn(unsigned frame)
{
	return on && (frame / FRAMES_IN_FLIGHT) % 2;
}

const struct image *pair_image(unsigned frame)
{
	return turn(frame) ? &other : &g.anim;
}

VkDescriptorSet pair_comp_set(unsigned frame)
{
	return turn(frame) ? comp_other : g.comp_set;
}

/* SLOT's set shows the image FRAME writes. */
void pair_frame(unsigned slot, unsigned frame)
{
	VkDescriptorImageInfo info = {
		g.anim_sampler, pair_image(frame)->view, VK_IMAGE_LAYOUT_GENERAL,
	};
	VkWriteDescriptorSet w = {
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
		.dstSet = g.gfx_set[slot],
		.dstBinding = 2,
		.descriptorCount = 1,
		.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
		.pImageInfo = &info,
	};

	if (on)
		vkUpdateDescriptorSets(ex.dev, 1, &w, 0, NULL);
}

void pair_destroy(void)
{
	if (!on)
		return;
	vkDestroyDescriptorPool(ex.dev, pool, NULL);
	destroy_image(&other);
}
