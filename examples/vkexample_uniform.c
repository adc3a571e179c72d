/*
 * vkexample_uniform.c: the ways vkexample's uniforms reach the device,
 * besides the mapping: --uniform-update uploads them with
 * vkCmdUpdateBuffer first in the frame's command buffer, and
 * --uniform-template writes their descriptors through an update template
 * (as zink writes its sets).  With --uniform-offset 16 the replay of
 * either on a device that wants 64 has their bytes to move.
 * --uniform-storage reads them from a storage buffer instead, which the
 * shaders declare readonly (ro) or not (rw: the fragment shader, with
 * fragmentStoresAndAtomics enabled): written by the host each frame, as
 * SuperTuxKart writes its instance data.  --anim-unsampled draws with a
 * fragment shader that declares the compute pattern and does not use it.
 */
#include "common.h"
#include "scene.h"
#include "vkexample.h"

#include "vkexample_frag.h"
#include "vkexample_ro_frag.h"
#include "vkexample_ro_vert.h"
#include "vkexample_rw_frag.h"
#include "vkexample_unsampled_frag.h"
#include "vkexample_vert.h"

void frame_shaders(VkShaderModule *vert, VkShaderModule *frag)
{
	if (g.ubo_storage == 1) {
		*vert = create_shader(vkexample_ro_vert, sizeof(vkexample_ro_vert));
		*frag = create_shader(vkexample_ro_frag, sizeof(vkexample_ro_frag));
	} else if (g.ubo_storage == 2) {
		/* (a vertex stage may write only with vertexPipelineStoresAndAtomics) */
		*vert = create_shader(vkexample_ro_vert, sizeof(vkexample_ro_vert));
		*frag = create_shader(vkexample_rw_frag, sizeof(vkexample_rw_frag));
	} else {
		*vert = create_shader(vkexample_vert, sizeof(vkexample_vert));
		/* --anim-unsampled: binding 2, the pattern, declared and not used */
		*frag = g.anim_unsampled
			? create_shader(vkexample_unsampled_frag, sizeof(vkexample_unsampled_frag))
			: create_shader(vkexample_frag, sizeof(vkexample_frag));
	}
}

void uniform_upload(VkCommandBuffer cb, unsigned slot, const struct frame_ubo *u)
{
	VkBufferMemoryBarrier ub = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_UNIFORM_READ_BIT,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.buffer = g.ubo.buf,
		.offset = (VkDeviceSize)slot * UBO_STRIDE + g.ubo_offset,
		.size = sizeof(*u),
	};

	vkCmdUpdateBuffer(cb, g.ubo.buf, ub.offset, sizeof(*u), u);
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_VERTEX_SHADER_BIT,
			     0, 0, NULL, 1, &ub, 0, NULL);
}

void uniform_template_write(VkDescriptorType type, const VkDescriptorBufferInfo *b)
{
	VkDescriptorUpdateTemplateEntry te = { 0, 0, 1, type, 0, sizeof(*b) };
	VkDescriptorUpdateTemplateCreateInfo tci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO,
		.descriptorUpdateEntryCount = 1,
		.pDescriptorUpdateEntries = &te,
		.templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET,
		.descriptorSetLayout = g.gfx_dsl,
	};
	VkDescriptorUpdateTemplate t;
	unsigned i;

	VK(vkCreateDescriptorUpdateTemplate(ex.dev, &tci, NULL, &t));
	for (i = 0; i < FRAMES_IN_FLIGHT; i++)
		vkUpdateDescriptorSetWithTemplate(ex.dev, g.gfx_set[i], t, &b[i]);
	vkDestroyDescriptorUpdateTemplate(ex.dev, t, NULL);
}
