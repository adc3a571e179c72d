/*
 * vkexample --depth-read-only: the frame drawn with dynamic rendering
 * (Vulkan 1.3's vkCmdBeginRendering) in three passes, as zink draws a
 * game's scene and then its HUD:
 *   - the cube, clearing and writing the depth buffer,
 *   - a bar over it, the depth buffer in DEPTH_STENCIL_READ_ONLY_OPTIMAL,
 *     loaded and stored, tested and not written (the cube hides part of
 *     the bar),
 *   - a second bar, the same way over a depth image of its own, the mask,
 *     which only the load-time upload writes (stripes that hide the bar).
 * So every frame reads the mask and none writes it: a trimmer that took
 * a read-only pass for a write would make each frame the mask's writer
 * and keep all the frames before a cut.
 */
#include <string.h>

#include <vulkan/vulkan.h>

#include "common.h"
#include "vkexample.h"

#include "hud_vert.h"
#include "hud_frag.h"

/* the shaders' push constant block */
struct hud_push {
	float rect[4];		/* x0, y0, x1, y1 in clip space */
	float color[4];
	float depth;
};

/* The colour image (ASPECT colour) or a depth image from layout FROM to
 * TO, after the attachment writes of the pass or frame before (and the
 * colour image's copy or blit there), ahead of this pass's. */
static void attachment_barrier(VkCommandBuffer cb, VkImage img, VkImageAspectFlags aspect,
			       VkImageLayout from, VkImageLayout to)
{
	int c = aspect == VK_IMAGE_ASPECT_COLOR_BIT;
	VkPipelineStageFlags stages = c ? VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT
					: VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
						  VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
	VkAccessFlags write = c ? VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
				: VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
	VkAccessFlags read = c ? VK_ACCESS_COLOR_ATTACHMENT_READ_BIT
			       : VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
	VkImageMemoryBarrier b = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = write,
		.dstAccessMask = read | write,
		.oldLayout = from,
		.newLayout = to,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = img,
		.subresourceRange = { aspect, 0, 1, 0, 1 },
	};

	vkCmdPipelineBarrier(cb, stages | (c ? VK_PIPELINE_STAGE_TRANSFER_BIT : 0), stages, 0, 0,
			     NULL, 0, NULL, 1, &b);
}

/* A pass over the colour image (unless COLOR is 0) and depth image DEPTH
 * in LAYOUT, both cleared or both loaded (LOAD), both stored. */
static void begin_pass(VkCommandBuffer cb, int color, VkAttachmentLoadOp load, VkImageView depth,
		       VkImageLayout layout)
{
	VkRenderingAttachmentInfo c = {
		.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
		.imageView = g.color.view,
		.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
		.loadOp = load,
		.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.clearValue.color = { { 0.10f, 0.12f, 0.16f, 1.0f } },
	};
	VkRenderingAttachmentInfo d = {
		.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
		.imageView = depth,
		.imageLayout = layout,
		.loadOp = load,
		.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.clearValue.depthStencil = { 1.0f, 0 },
	};
	VkRenderingInfo ri = {
		.sType = VK_STRUCTURE_TYPE_RENDERING_INFO,
		.renderArea = { { 0, 0 }, { WIDTH, HEIGHT } },
		.layerCount = 1,
		.colorAttachmentCount = color ? 1 : 0,
		.pColorAttachments = color ? &c : NULL,
		.pDepthAttachment = &d,
	};

	vkCmdBeginRendering(cb, &ri);
}

void hud_write_mask(VkCommandBuffer cb)
{
	VkClearAttachment zero = { VK_IMAGE_ASPECT_DEPTH_BIT, 0, { .depthStencil = { 0.0f, 0 } } };
	VkClearRect stripes[4];
	int i;

	g.mask = create_image(g.depth_format, WIDTH, HEIGHT, 1,
			      VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT, VK_IMAGE_ASPECT_DEPTH_BIT);
	for (i = 0; i < 4; i++)
		stripes[i] = (VkClearRect){ { { 40 + 48 * i, 0 }, { 24, HEIGHT } }, 0, 1 };
	attachment_barrier(cb, g.mask.img, VK_IMAGE_ASPECT_DEPTH_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
	begin_pass(cb, 0, VK_ATTACHMENT_LOAD_OP_CLEAR, g.mask.view,
		   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
	vkCmdClearAttachments(cb, 1, &zero, 4, stripes);
	vkCmdEndRendering(cb);
	attachment_barrier(cb, g.mask.img, VK_IMAGE_ASPECT_DEPTH_BIT,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL);
}

void hud_create_pipeline(const VkGraphicsPipelineCreateInfo *cube)
{
	VkGraphicsPipelineCreateInfo gi = *cube;
	VkPipelineShaderStageCreateInfo stages[2];
	VkPipelineVertexInputStateCreateInfo vi = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO,
	};
	VkPipelineInputAssemblyStateCreateInfo ia = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
		.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP,
	};
	/* depth writes off: in a read-only layout a draw must not write */
	VkPipelineDepthStencilStateCreateInfo ds = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO,
		.depthTestEnable = VK_TRUE,
		.depthCompareOp = VK_COMPARE_OP_LESS,
	};
	VkPushConstantRange push = {
		VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(struct hud_push),
	};
	VkPipelineLayoutCreateInfo pli = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &push,
	};

	memcpy(stages, cube->pStages, sizeof(stages));
	g.hud_vert = create_shader(hud_vert, sizeof(hud_vert));
	g.hud_frag = create_shader(hud_frag, sizeof(hud_frag));
	stages[0].module = g.hud_vert;
	stages[1].module = g.hud_frag;
	VK(vkCreatePipelineLayout(ex.dev, &pli, NULL, &g.hud_layout));
	gi.pStages = stages;
	gi.pVertexInputState = &vi;
	gi.pInputAssemblyState = &ia;
	gi.pDepthStencilState = &ds;
	gi.layout = g.hud_layout;
	VK(vkCreateGraphicsPipelines(ex.dev, VK_NULL_HANDLE, 1, &gi, NULL, &g.hud_pipe));
}

void hud_begin(VkCommandBuffer cb)
{
	attachment_barrier(cb, g.color.img, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
			   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
	attachment_barrier(cb, g.depth.img, VK_IMAGE_ASPECT_DEPTH_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
	begin_pass(cb, 1, VK_ATTACHMENT_LOAD_OP_CLEAR, g.depth.view,
		   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
}

/* A HUD pass: the bar P over depth image DEPTH, read-only. */
static void hud_pass(VkCommandBuffer cb, VkImageView depth, const struct hud_push *p)
{
	attachment_barrier(cb, g.color.img, VK_IMAGE_ASPECT_COLOR_BIT,
			   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
			   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
	begin_pass(cb, 1, VK_ATTACHMENT_LOAD_OP_LOAD, depth,
		   VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, g.hud_pipe);
	vkCmdPushConstants(cb, g.hud_layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT,
			   0, sizeof(*p), p);
	vkCmdDraw(cb, 4, 1, 0, 0);
	vkCmdEndRendering(cb);
}

void hud_end(VkCommandBuffer cb)
{
	/* across the cube, through its nearest faces; at the bottom, hidden
	 * where the mask's stripes are */
	static const struct hud_push bar = { { -0.9f, -0.12f, 0.9f, 0.12f },
					     { 0.95f, 0.60f, 0.10f, 1.0f }, 0.974f };
	static const struct hud_push mask_bar = { { -0.9f, 0.70f, 0.9f, 0.85f },
						  { 0.20f, 0.85f, 0.30f, 1.0f }, 0.5f };

	vkCmdEndRendering(cb);
	attachment_barrier(cb, g.depth.img, VK_IMAGE_ASPECT_DEPTH_BIT,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL);
	hud_pass(cb, g.depth.view, &bar);
	hud_pass(cb, g.mask.view, &mask_bar);
	image_barrier(cb, g.color.img, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
		      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		      VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
		      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_READ_BIT);
}

void hud_destroy(void)
{
	vkDestroyPipeline(ex.dev, g.hud_pipe, NULL);
	vkDestroyPipelineLayout(ex.dev, g.hud_layout, NULL);
	vkDestroyShaderModule(ex.dev, g.hud_vert, NULL);
	vkDestroyShaderModule(ex.dev, g.hud_frag, NULL);
	destroy_image(&g.mask);
}
