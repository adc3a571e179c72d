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
 *
 * --depth-read-only-rp draws the same passes with render passes
 * (vkCmdBeginRenderPass), one a pass, whose depth attachment is loaded,
 * stored and in the pass's layout from start to end (initialLayout,
 * finalLayout and the subpass's reference alike): the barriers between
 * the passes are the same pipeline barriers, so are the pixels.
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

/* The passes: the colour image too or not, both attachments cleared or
 * both loaded (LOAD), both stored; the depth image's layout. */
static const struct hud_pass_kind {
	int color;
	VkAttachmentLoadOp load;
	VkImageLayout layout;
} passes[HUD_PASSES] = {
	[HUD_MASK_WRITE] = { 0, VK_ATTACHMENT_LOAD_OP_CLEAR,
			     VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL },
	[HUD_CUBE] = { 1, VK_ATTACHMENT_LOAD_OP_CLEAR,
		       VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL },
	[HUD_BAR] = { 1, VK_ATTACHMENT_LOAD_OP_LOAD, VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL },
	[HUD_MASK_BAR] = { 1, VK_ATTACHMENT_LOAD_OP_LOAD,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL },
};

static const struct image *pass_depth(enum hud_pass p)
{
	return p == HUD_MASK_WRITE || p == HUD_MASK_BAR ? &g.mask : &g.depth;
}

/* --depth-read-only-rp: pass P's render pass and framebuffer, the colour
 * image attachment 0 if the pass has it, the depth image after it.  Its
 * layouts never change inside the pass (initial, reference and final
 * alike), so no subpass dependency: the pipeline barriers around the
 * pass order it, as they do dynamic rendering's. */
static void create_pass(enum hud_pass p)
{
	const struct hud_pass_kind *k = &passes[p];
	VkAttachmentDescription att[2];
	VkImageView views[2];
	VkAttachmentReference cref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkAttachmentReference dref = { (uint32_t)k->color, k->layout };
	VkSubpassDescription sub = {
		.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
		.colorAttachmentCount = k->color ? 1 : 0,
		.pColorAttachments = k->color ? &cref : NULL,
		.pDepthStencilAttachment = &dref,
	};
	VkRenderPassCreateInfo ri = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
		.pAttachments = att,
		.subpassCount = 1,
		.pSubpasses = &sub,
	};
	VkFramebufferCreateInfo fi = {
		.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
		.pAttachments = views,
		.width = WIDTH,
		.height = HEIGHT,
		.layers = 1,
	};
	uint32_t n = 0;

	if (k->color) {
		att[n] = (VkAttachmentDescription){
			.format = COLOR_FORMAT,
			.samples = VK_SAMPLE_COUNT_1_BIT,
			.loadOp = k->load,
			.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
			.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
			.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
			.initialLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
			.finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
		};
		views[n++] = g.color.view;
	}
	/* the stencil's ops as the depth's: a read-only pass loads and
	 * stores every aspect (the depth formats here have no stencil) */
	att[n] = (VkAttachmentDescription){
		.format = g.depth_format,
		.samples = VK_SAMPLE_COUNT_1_BIT,
		.loadOp = k->load,
		.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.stencilLoadOp = k->load,
		.stencilStoreOp = VK_ATTACHMENT_STORE_OP_STORE,
		.initialLayout = k->layout,
		.finalLayout = k->layout,
	};
	views[n++] = pass_depth(p)->view;
	ri.attachmentCount = fi.attachmentCount = n;
	VK(vkCreateRenderPass(ex.dev, &ri, NULL, &g.hud_rp[p]));
	fi.renderPass = g.hud_rp[p];
	VK(vkCreateFramebuffer(ex.dev, &fi, NULL, &g.hud_fb[p]));
}

/* Pass P begun: a render pass (--depth-read-only-rp) or dynamic
 * rendering. */
static void begin_pass(VkCommandBuffer cb, enum hud_pass p)
{
	const struct hud_pass_kind *k = &passes[p];
	VkClearValue clear[2] = {
		{ .color = { { 0.10f, 0.12f, 0.16f, 1.0f } } },
		{ .depthStencil = { 1.0f, 0 } },
	};
	VkRenderPassBeginInfo rb = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
		.renderPass = g.hud_rp[p],
		.framebuffer = g.hud_fb[p],
		.renderArea = { { 0, 0 }, { WIDTH, HEIGHT } },
		.clearValueCount = k->color ? 2 : 1,
		.pClearValues = k->color ? clear : clear + 1,
	};
	VkRenderingAttachmentInfo c = {
		.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
		.imageView = g.color.view,
		.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
		.loadOp = k->load,
		.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.clearValue = clear[0],
	};
	VkRenderingAttachmentInfo d = {
		.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
		.imageView = pass_depth(p)->view,
		.imageLayout = k->layout,
		.loadOp = k->load,
		.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.clearValue = clear[1],
	};
	VkRenderingInfo ri = {
		.sType = VK_STRUCTURE_TYPE_RENDERING_INFO,
		.renderArea = { { 0, 0 }, { WIDTH, HEIGHT } },
		.layerCount = 1,
		.colorAttachmentCount = k->color ? 1 : 0,
		.pColorAttachments = k->color ? &c : NULL,
		.pDepthAttachment = &d,
	};

	if (g.hud_render_pass)
		vkCmdBeginRenderPass(cb, &rb, VK_SUBPASS_CONTENTS_INLINE);
	else
		vkCmdBeginRendering(cb, &ri);
}

static void end_pass(VkCommandBuffer cb)
{
	if (g.hud_render_pass)
		vkCmdEndRenderPass(cb);
	else
		vkCmdEndRendering(cb);
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
	if (g.hud_render_pass)
		for (i = 0; i < HUD_PASSES; i++)
			create_pass((enum hud_pass)i);
	attachment_barrier(cb, g.mask.img, VK_IMAGE_ASPECT_DEPTH_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
	begin_pass(cb, HUD_MASK_WRITE);
	vkCmdClearAttachments(cb, 1, &zero, 4, stripes);
	end_pass(cb);
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
	begin_pass(cb, HUD_CUBE);
}

/* A HUD pass, HUD_BAR or HUD_MASK_BAR: the bar P over its depth image,
 * read-only. */
static void hud_pass(VkCommandBuffer cb, enum hud_pass pass, const struct hud_push *p)
{
	attachment_barrier(cb, g.color.img, VK_IMAGE_ASPECT_COLOR_BIT,
			   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
			   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
	begin_pass(cb, pass);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, g.hud_pipe);
	vkCmdPushConstants(cb, g.hud_layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT,
			   0, sizeof(*p), p);
	vkCmdDraw(cb, 4, 1, 0, 0);
	end_pass(cb);
}

void hud_end(VkCommandBuffer cb)
{
	/* across the cube, through its nearest faces; at the bottom, hidden
	 * where the mask's stripes are */
	static const struct hud_push bar = { { -0.9f, -0.12f, 0.9f, 0.12f },
					     { 0.95f, 0.60f, 0.10f, 1.0f }, 0.974f };
	static const struct hud_push mask_bar = { { -0.9f, 0.70f, 0.9f, 0.85f },
						  { 0.20f, 0.85f, 0.30f, 1.0f }, 0.5f };

	end_pass(cb);
	attachment_barrier(cb, g.depth.img, VK_IMAGE_ASPECT_DEPTH_BIT,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
			   VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL);
	hud_pass(cb, HUD_BAR, &bar);
	hud_pass(cb, HUD_MASK_BAR, &mask_bar);
	image_barrier(cb, g.color.img, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
		      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		      VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
		      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_READ_BIT);
}

void hud_destroy(void)
{
	int i;

	for (i = 0; i < HUD_PASSES; i++) {
		if (g.hud_fb[i])
			vkDestroyFramebuffer(ex.dev, g.hud_fb[i], NULL);
		if (g.hud_rp[i])
			vkDestroyRenderPass(ex.dev, g.hud_rp[i], NULL);
	}
	vkDestroyPipeline(ex.dev, g.hud_pipe, NULL);
	vkDestroyPipelineLayout(ex.dev, g.hud_layout, NULL);
	vkDestroyShaderModule(ex.dev, g.hud_vert, NULL);
	vkDestroyShaderModule(ex.dev, g.hud_frag, NULL);
	destroy_image(&g.mask);
}
