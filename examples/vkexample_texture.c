/*
 * vkexample's images (vkexample.h): creation, samplers, layout changes;
 * and its texture: the upload through a staging buffer and the mipmaps,
 * blitted level by level (--mips, --events) or made by a compute pass
 * (--compute-mips, every frame; --compute-mips-once, at load), its
 * descriptors in sets or pushed (--push-templates); and --rewrite-source's
 * patch of it.
 */
#include <string.h>

#include <vulkan/vulkan.h>

#include "common.h"
#include "scene.h"
#include "vkexample.h"

#include "mipdown_comp.h"

/* ------------------------------------------------------------------ */
/* images */

struct image create_image(VkFormat format, uint32_t w, uint32_t h, uint32_t levels,
			  VkImageUsageFlags usage, VkImageAspectFlags aspect)
{
	VkImageCreateInfo ii = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
		.imageType = VK_IMAGE_TYPE_2D,
		.format = format,
		.extent = { w, h, 1 },
		.mipLevels = levels,
		.arrayLayers = 1,
		.samples = VK_SAMPLE_COUNT_1_BIT,
		.tiling = VK_IMAGE_TILING_OPTIMAL,
		.usage = usage,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
		.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
	};
	VkImageViewCreateInfo vi = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
		.viewType = VK_IMAGE_VIEW_TYPE_2D,
		.format = format,
		.subresourceRange = { aspect, 0, levels, 0, 1 },
	};
	VkMemoryRequirements req;
	struct image im;

	logv("vkCreateImage imageType=%d format=%d extent=%ux%ux%u mipLevels=%u arrayLayers=%u "
	     "samples=%d tiling=%d usage=0x%x",
	     ii.imageType, ii.format, ii.extent.width, ii.extent.height, ii.extent.depth,
	     ii.mipLevels, ii.arrayLayers, ii.samples, ii.tiling, ii.usage);
	VK(vkCreateImage(ex.dev, &ii, NULL, &im.img));
	vkGetImageMemoryRequirements(ex.dev, im.img, &req);
	im.mem = ex_allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, NULL);
	VK(vkBindImageMemory(ex.dev, im.img, im.mem, 0));
	/* (an image of transfer usage alone has no view) */
	im.view = VK_NULL_HANDLE;
	vi.image = im.img;
	if (usage & ~(VkImageUsageFlags)(VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
					 VK_IMAGE_USAGE_TRANSFER_DST_BIT))
		VK(vkCreateImageView(ex.dev, &vi, NULL, &im.view));
	return im;
}

void destroy_image(struct image *im)
{
	vkDestroyImageView(ex.dev, im->view, NULL);
	vkDestroyImage(ex.dev, im->img, NULL);
	vkFreeMemory(ex.dev, im->mem, NULL);
	memset(im, 0, sizeof(*im));
}

VkSampler create_sampler(VkFilter filter, VkSamplerAddressMode mode, float bias)
{
	VkSamplerCreateInfo si = {
		.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO,
		.magFilter = filter,
		.minFilter = filter,
		.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST,
		.addressModeU = mode,
		.addressModeV = mode,
		.addressModeW = mode,
		.mipLodBias = bias,
		.maxLod = bias ? VK_LOD_CLAMP_NONE : 0.0f,
		.borderColor = VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK,
	};
	VkSampler s;

	logv("vkCreateSampler magFilter=%d minFilter=%d mipmapMode=%d addressModeU=%d "
	     "addressModeV=%d addressModeW=%d",
	     si.magFilter, si.minFilter, si.mipmapMode, si.addressModeU, si.addressModeV,
	     si.addressModeW);
	VK(vkCreateSampler(ex.dev, &si, NULL, &s));
	return s;
}


static VkImageMemoryBarrier levels_barrier(VkImage img, uint32_t level, uint32_t count,
					   VkImageLayout from, VkImageLayout to,
					   VkAccessFlags src_access, VkAccessFlags dst_access)
{
	VkImageMemoryBarrier b = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = src_access,
		.dstAccessMask = dst_access,
		.oldLayout = from,
		.newLayout = to,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = img,
		.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, level, count, 0, 1 },
	};
	return b;
}

void levels_change(VkCommandBuffer cb, VkImage img, uint32_t level, uint32_t count,
		   VkImageLayout from, VkImageLayout to, VkPipelineStageFlags src_stage,
		   VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
		   VkAccessFlags dst_access)
{
	VkImageMemoryBarrier b = levels_barrier(img, level, count, from, to, src_access, dst_access);

	vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

void image_barrier(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to,
		   VkPipelineStageFlags src_stage, VkAccessFlags src_access,
		   VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
	levels_change(cb, img, 0, 1, from, to, src_stage, src_access, dst_stage, dst_access);
}

/* ------------------------------------------------------------------ */
/* the texture */

/*
 * The texture's levels 1 and on from its level 0, the standard way, in
 * TRANSFER_SRC (LEVEL0, from layout FROM) and TRANSFER_DST (the others):
 * level i - 1 to TRANSFER_SRC and blitted into level i, then all levels
 * to SHADER_READ_ONLY in two barriers (levels 0 to n - 2 from
 * TRANSFER_SRC, the last from TRANSFER_DST); with EVENT, those two are a
 * wait for the event, set after the last blit.
 */
void make_mips(VkCommandBuffer cb, VkImageLayout from, VkEvent event)
{
	uint32_t n = g.tex_levels, i;
	VkImageMemoryBarrier last[2];

	levels_change(cb, g.tex.img, 0, 1, from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		      VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
		      VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_READ_BIT);
	for (i = 1; i < n; i++) {
		int32_t s = TEX_SIZE >> (i - 1), d = TEX_SIZE >> i;
		VkImageBlit region = {
			.srcSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, i - 1, 0, 1 },
			.srcOffsets = { { 0, 0, 0 }, { s, s, 1 } },
			.dstSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, i, 0, 1 },
			.dstOffsets = { { 0, 0, 0 }, { d, d, 1 } },
		};

		if (i > 1)
			levels_change(cb, g.tex.img, i - 1, 1, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
				      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
				      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
				      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
		vkCmdBlitImage(cb, g.tex.img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, g.tex.img,
			       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region, VK_FILTER_LINEAR);
	}
	last[0] = levels_barrier(g.tex.img, 0, n - 1, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
				 VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
				 VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);
	last[1] = levels_barrier(g.tex.img, n - 1, 1, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
				 VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
				 VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);
	if (event) {
		vkCmdSetEvent(cb, event, VK_PIPELINE_STAGE_TRANSFER_BIT);
		vkCmdWaitEvents(cb, 1, &event, VK_PIPELINE_STAGE_TRANSFER_BIT,
				VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, NULL, 0, NULL, 2, last);
	} else {
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, 0, NULL, 0, NULL, 2,
				     last);
	}
}

/* --staging-image: REGION of BUF into ST (made here, transfer usage
 * alone), then ST into the texture's level 0 (in TRANSFER_DST_OPTIMAL) by
 * vkCmdCopyImage: a copy between two images, one a texture and one not */
static void copy_from_image(VkCommandBuffer cb, VkBuffer buf, const VkBufferImageCopy *region,
			    struct image *st)
{
	VkImageCopy copy = {
		.srcSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.dstSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.extent = { TEX_SIZE, TEX_SIZE, 1 },
	};

	*st = create_image(COLOR_FORMAT, TEX_SIZE, TEX_SIZE, 1,
			   VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
			   VK_IMAGE_ASPECT_COLOR_BIT);
	image_barrier(cb, st->img, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		      VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_WRITE_BIT);
	vkCmdCopyBufferToImage(cb, buf, st->img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, region);
	image_barrier(cb, st->img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_READ_BIT);
	logv("vkCmdCopyImage extent=%ux%ux%u", copy.extent.width, copy.extent.height,
	     copy.extent.depth);
	vkCmdCopyImage(cb, st->img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, g.tex.img,
		       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
}

void upload(void)
{
	struct buffer staging;
	VkCommandBuffer cb;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkBufferImageCopy region = {
		.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.imageExtent = { TEX_SIZE, TEX_SIZE, 1 },
	};
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
	};
	struct image st = { 0 };
	void *p;

	staging = ex_create_buffer(TEX_SIZE * TEX_SIZE * 4, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
				VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	logv("vkMapMemory offset=0 size=%llu", (unsigned long long)staging.size);
	VK(vkMapMemory(ex.dev, staging.mem, 0, staging.size, 0, &p));
	texture_pattern(p);
	ex_flush_buffer(&staging);
	vkUnmapMemory(ex.dev, staging.mem);

	ex_command_buffers(g.pool, 1, &cb);
	VK(vkBeginCommandBuffer(cb, &bi));
	levels_change(cb, g.tex.img, 0, g.tex_levels, VK_IMAGE_LAYOUT_UNDEFINED,
		      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0,
		      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
	logv("vkCmdCopyBufferToImage bufferOffset=%llu imageExtent=%ux%ux%u",
	     (unsigned long long)region.bufferOffset, region.imageExtent.width,
	     region.imageExtent.height, region.imageExtent.depth);
	if (g.staging_image)
		copy_from_image(cb, staging.buf, &region, &st);
	else
		vkCmdCopyBufferToImage(cb, staging.buf, g.tex.img,
				       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
	if (g.tex_levels > 1 && !g.compute_mips)
		make_mips(cb, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_NULL_HANDLE);
	else
		image_barrier(cb, g.tex.img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
			      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
			      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
			      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
	/* --compute-mips-once: levels 1 and on wait in GENERAL for the pass */
	if (g.mips_once)
		levels_change(cb, g.tex.img, 1, g.tex_levels - 1,
			      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL,
			      VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
			      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
	image_barrier(cb, g.anim.img, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
		      VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		      VK_ACCESS_SHADER_WRITE_BIT);
	if (g.hud)
		hud_write_mask(cb);
	VK(vkEndCommandBuffer(cb));
	si.pCommandBuffers = &cb;
	VK(vkQueueSubmit(ex.queue, 1, &si, VK_NULL_HANDLE));
	VK(vkQueueWaitIdle(ex.queue));
	vkFreeCommandBuffers(ex.dev, g.pool, 1, &cb);
	ex_destroy_buffer(&staging);
	if (g.staging_image)
		destroy_image(&st);
}

/* The descriptors that make level I (from 1): level i - 1's view
 * (sampled, in SHADER_READ_ONLY) and level i's (storage, in GENERAL), in
 * the order of the bindings, so that they are an update template's data
 * too. */
static void mip_descriptors(uint32_t i, VkDescriptorImageInfo info[2])
{
	info[0] = (VkDescriptorImageInfo){ g.anim_sampler, g.level_view[i - 1],
					   VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL };
	info[1] = (VkDescriptorImageInfo){ VK_NULL_HANDLE, g.level_view[i],
					   VK_IMAGE_LAYOUT_GENERAL };
}

/* An update template of the pass's two bindings, of TYPE: into a set of
 * g.mip_dsl, or pushed for g.mip_layout's set 0 (each type's fields
 * alone: the others, ignored, stay 0, as --templates' captures had them). */
static void create_mip_template(VkDescriptorUpdateTemplateType type)
{
	int push = type == VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR;
	VkDescriptorUpdateTemplateEntry te[2] = {
		{ 0, 0, 1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 0,
		  sizeof(VkDescriptorImageInfo) },
		{ 1, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, sizeof(VkDescriptorImageInfo),
		  sizeof(VkDescriptorImageInfo) },
	};
	VkDescriptorUpdateTemplateCreateInfo tci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO,
		.descriptorUpdateEntryCount = 2,
		.pDescriptorUpdateEntries = te,
		.templateType = type,
		.descriptorSetLayout = push ? VK_NULL_HANDLE : g.mip_dsl,
		.pipelineBindPoint = push ? VK_PIPELINE_BIND_POINT_COMPUTE : 0,
		.pipelineLayout = push ? g.mip_layout : VK_NULL_HANDLE,
		.set = 0,
	};

	VK(vkCreateDescriptorUpdateTemplate(ex.dev, &tci, NULL, &g.mip_template));
}

/* For each level i from 1, a set of its descriptors, written with
 * vkUpdateDescriptorSets or, with --templates, through an update
 * template; with --copy-sets, copied (VkCopyDescriptorSet) from a set
 * written first, one per level too. */
static void create_mip_sets(void)
{
	uint32_t n = g.tex_levels, i;
	VkDescriptorPoolSize sizes[2] = {
		{ VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 2 * (n - 1) },
		{ VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 2 * (n - 1) },
	};
	VkDescriptorPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = 2 * (n - 1),
		.poolSizeCount = 2,
		.pPoolSizes = sizes,
	};
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorSetCount = 1,
		.pSetLayouts = &g.mip_dsl,
	};

	VK(vkCreateDescriptorPool(ex.dev, &pi, NULL, &g.mip_pool));
	ai.descriptorPool = g.mip_pool;
	if (g.templates)
		create_mip_template(VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET);
	for (i = 1; i < n; i++) {
		VkDescriptorImageInfo info[2];	/* src, dst */
		VkWriteDescriptorSet w[2] = {
			{
				.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				.dstBinding = 0,
				.descriptorCount = 1,
				.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
				.pImageInfo = &info[0],
			},
			{
				.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				.dstBinding = 1,
				.descriptorCount = 1,
				.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
				.pImageInfo = &info[1],
			},
		};

		VkDescriptorSet from;
		VkCopyDescriptorSet cp[2] = {
			{ VK_STRUCTURE_TYPE_COPY_DESCRIPTOR_SET, NULL, VK_NULL_HANDLE, 0, 0,
			  VK_NULL_HANDLE, 0, 0, 1 },
			{ VK_STRUCTURE_TYPE_COPY_DESCRIPTOR_SET, NULL, VK_NULL_HANDLE, 1, 0,
			  VK_NULL_HANDLE, 1, 0, 1 },
		};

		mip_descriptors(i, info);
		VK(vkAllocateDescriptorSets(ex.dev, &ai, &g.mip_set[i]));
		w[0].dstSet = w[1].dstSet = g.mip_set[i];
		if (g.copy_sets) {
			VK(vkAllocateDescriptorSets(ex.dev, &ai, &from));
			w[0].dstSet = w[1].dstSet = from;
			vkUpdateDescriptorSets(ex.dev, 2, w, 0, NULL);
			cp[0].srcSet = cp[1].srcSet = from;
			cp[0].dstSet = cp[1].dstSet = g.mip_set[i];
			vkUpdateDescriptorSets(ex.dev, 0, NULL, 2, cp);
		} else if (g.templates)
			vkUpdateDescriptorSetWithTemplate(ex.dev, g.mip_set[i], g.mip_template,
							  info);
		else
			vkUpdateDescriptorSets(ex.dev, 2, w, 0, NULL);
	}
}

/* --compute-mips: a view of each level of the texture; the sets of their
 * descriptors (create_mip_sets()); the pipeline that reads one level and
 * writes the next.  With --push-templates, no pool and no sets: the set
 * layout is one of push descriptors, and a template of type
 * PUSH_DESCRIPTORS is what compute_mips() pushes each level's with
 * (VK_KHR_push_descriptor, which create_device() enabled). */
void create_mip_pass(void)
{
	uint32_t i;
	VkDescriptorSetLayoutBinding b[2] = {
		{ 0, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL },
		{ 1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL },
	};
	VkDescriptorSetLayoutCreateInfo li = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.flags = g.push_templates ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR
					  : 0,
		.bindingCount = 2,
		.pBindings = b,
	};
	VkPipelineLayoutCreateInfo pli = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &g.mip_dsl,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.pName = "main",
		},
	};

	for (i = 0; i < g.tex_levels; i++) {
		VkImageViewCreateInfo vi = {
			.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
			.image = g.tex.img,
			.viewType = VK_IMAGE_VIEW_TYPE_2D,
			.format = COLOR_FORMAT,
			.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, i, 1, 0, 1 },
		};
		VK(vkCreateImageView(ex.dev, &vi, NULL, &g.level_view[i]));
	}
	VK(vkCreateDescriptorSetLayout(ex.dev, &li, NULL, &g.mip_dsl));
	VK(vkCreatePipelineLayout(ex.dev, &pli, NULL, &g.mip_layout));
	if (g.push_templates) {
		create_mip_template(VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR);
		g.push_template = (PFN_vkCmdPushDescriptorSetWithTemplateKHR)vkGetDeviceProcAddr(
			ex.dev, "vkCmdPushDescriptorSetWithTemplateKHR");
		if (!g.push_template)
			die("--push-templates: vkCmdPushDescriptorSetWithTemplateKHR not found");
	} else {
		create_mip_sets();
	}
	g.mip = create_shader(mipdown_comp, sizeof(mipdown_comp));
	ci.stage.module = g.mip;
	ci.layout = g.mip_layout;
	VK(vkCreateComputePipelines(ex.dev, VK_NULL_HANDLE, 1, &ci, NULL, &g.mip_pipe));
}

/* --compute-mips: levels 1 and on made again, each from UNDEFINED (the
 * dispatch writes every texel), from level i - 1, and left in
 * SHADER_READ_ONLY for the next level's dispatch and the draw.  Level 0
 * stays in SHADER_READ_ONLY from the upload on.  --compute-mips-once
 * takes them from GENERAL instead, where the upload left them: then the
 * pass writes them through its storage views alone, no barrier of it
 * dropping what they held (what a trimmer must see to keep it). */
void compute_mips(VkCommandBuffer cb)
{
	VkImageLayout from = g.mips_once ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_UNDEFINED;
	uint32_t i;

	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g.mip_pipe);
	for (i = 1; i < g.tex_levels; i++) {
		uint32_t groups = ((TEX_SIZE >> i) + 7) / 8;

		levels_change(cb, g.tex.img, i, 1, from, VK_IMAGE_LAYOUT_GENERAL,
			      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0,
			      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
		if (g.push_templates) {
			VkDescriptorImageInfo info[2];

			mip_descriptors(i, info);
			g.push_template(cb, g.mip_template, g.mip_layout, 0, info);
		} else {
			vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g.mip_layout,
						0, 1, &g.mip_set[i], 0, NULL);
		}
		vkCmdDispatch(cb, groups, groups, 1);
		levels_change(cb, g.tex.img, i, 1, VK_IMAGE_LAYOUT_GENERAL,
			      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
			      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
			      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
				      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
			      VK_ACCESS_SHADER_READ_BIT);
	}
}


void compute_mips_once(void)
{
	VkCommandBuffer cb;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &cb,
	};

	ex_command_buffers(g.pool, 1, &cb);
	VK(vkBeginCommandBuffer(cb, &bi));
	compute_mips(cb);
	VK(vkEndCommandBuffer(cb));
	VK(vkQueueSubmit(ex.queue, 1, &si, VK_NULL_HANDLE));
	VK(vkQueueWaitIdle(ex.queue));
	vkFreeCommandBuffers(ex.dev, g.pool, 1, &cb);
}

/* ------------------------------------------------------------------ */
/* --rewrite-source */

/* One command buffer of g.pool, begun for one submit. */
static VkCommandBuffer once_begin(void)
{
	VkCommandBuffer cb;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};

	ex_command_buffers(g.pool, 1, &cb);
	VK(vkBeginCommandBuffer(cb, &bi));
	return cb;
}

/* CB ended, submitted alone, waited for and freed. */
static void once_submit(VkCommandBuffer cb)
{
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &cb,
	};

	VK(vkEndCommandBuffer(cb));
	VK(vkQueueSubmit(ex.queue, 1, &si, VK_NULL_HANDLE));
	VK(vkQueueWaitIdle(ex.queue));
	vkFreeCommandBuffers(ex.dev, g.pool, 1, &cb);
}

/*
 * Three submits at load, each of its own: g.patch_src filled with yellow,
 * then copied into the middle of the texture's level 0 (which the frames
 * sample), then filled again with blue, which nothing reads; and every
 * frame fills it again (rewrite_source_frame()).  The buffer lives on to
 * the end, so the later fills stay writers of what the copy read: a
 * trimmer that runs the copy again needs the first fill, none of the
 * later ones (a staging buffer or a font atlas written again after use).
 * With DESTROY, the buffer is destroyed once the copy is done: what the
 * copy read is the GPU's writing of an object that no longer exists.
 */
void rewrite_source(int destroy)
{
	enum { SIZE = TEX_SIZE / 2, AT = TEX_SIZE / 4 };
	VkBufferImageCopy region = {
		.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.imageOffset = { AT, AT, 0 },
		.imageExtent = { SIZE, SIZE, 1 },
	};
	VkCommandBuffer cb;

	g.patch_src = ex_create_buffer(SIZE * SIZE * 4,
				       VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
					       VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
	cb = once_begin();
	vkCmdFillBuffer(cb, g.patch_src.buf, 0, VK_WHOLE_SIZE, 0xff00ffff);	/* RGBA yellow */
	once_submit(cb);

	cb = once_begin();
	image_barrier(cb, g.tex.img, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
		      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
		      0, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
	vkCmdCopyBufferToImage(cb, g.patch_src.buf, g.tex.img,
			       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
	image_barrier(cb, g.tex.img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
		      VK_ACCESS_SHADER_READ_BIT);
	once_submit(cb);
	if (destroy) {
		ex_destroy_buffer(&g.patch_src);
		return;
	}

	cb = once_begin();
	vkCmdFillBuffer(cb, g.patch_src.buf, 0, VK_WHOLE_SIZE, 0xffff0000);	/* RGBA blue */
	once_submit(cb);
}

/* --rewrite-source: the frame's fill of g.patch_src, with FRAME's value,
 * after the last frame's (each frame in flight fills it); nothing reads
 * it.  Without --rewrite-source, nothing. */
void rewrite_source_frame(VkCommandBuffer cb, unsigned frame)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
	};

	if (!g.patch_src.buf)
		return;
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
			     0, 1, &mb, 0, NULL, 0, NULL);
	vkCmdFillBuffer(cb, g.patch_src.buf, 0, VK_WHOLE_SIZE, 0xff000000 | frame);
}
