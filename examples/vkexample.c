/*
 * vkexample: a small Vulkan program for tracekit's capture and replay
 * tests.  Headless by default: no window system, no surface, no swapchain,
 * so its trace has no present and no frames.  With --present it also opens
 * an X window (xcb) and presents every frame there, so that its trace has
 * one vkQueuePresentKHR per frame and frame-based tools (trace-replay
 * --screenshot, trace-trim --frames) work on it.
 *
 * Every frame it
 *   - writes a rotation matrix (from the frame number, no clock) into a
 *     uniform buffer that stays mapped for the whole run,
 *   - runs a compute shader that writes an animated pattern into a storage
 *     image,
 *   - draws a cube textured with a pattern uploaded once through a staging
 *     buffer and modulated by the compute image, into an offscreen colour
 *     image with a depth buffer,
 *   - with --mips, first makes the texture's mipmaps again from its level 0
 *     (blits level by level, as after the upload), and samples it with a
 *     LOD bias so that several levels show; with --events the last two
 *     layout changes of that are a vkCmdWaitEvents of a vkCmdSetEvent;
 *     with --compute-mips a compute shader makes them instead, level i
 *     from UNDEFINED, read from level i - 1 through a view of that level
 *     and written through a storage view of its own (a depth pyramid's,
 *     a bloom chain's way); --compute-mips-once makes them so once, at
 *     load, and the frames only sample them; --templates writes the
 *     pass's descriptors through an update template, as zink does;
 *     --push-templates pushes them through one, no set of them
 *     (vkCmdPushDescriptorSetWithTemplateKHR, VK_KHR_push_descriptor),
 *   - with --depth-read-only, draws the cube with dynamic rendering and
 *     then two bars, each in a pass of its own over a depth image in
 *     a read-only layout: the cube's, and a mask only the upload writes
 *     (vkexample_hud.c); --depth-read-only-rp draws the same passes with
 *     render passes (vkCmdBeginRenderPass) instead,
 *   - with --rewrite-source, samples a patch copied at load from a buffer
 *     filled before, after and by every frame (=destroy: destroyed after),
 *   - with --present, acquires a swapchain image, blits the colour image
 *     into it (a blit, so the window's B8G8R8A8 takes our R8G8B8A8) and
 *     presents it,
 *   - with --submit2, submits it by vkQueueSubmit2 (Vulkan 1.3),
 *   - with --anim-pair, writes the compute pattern into one of two images
 *     by turns, the frame slot's set written again each frame to show the
 *     one the frame writes,
 *   - with --anim-unsampled, keeps the pattern's image from frame to frame
 *     and draws the cube with a shader that declares it and does not
 *     sample it: no frame reads what an earlier one wrote there,
 *   - with --fresh-command-buffers, frees the slot's command buffer each
 *     frame and allocates another,
 *   - with --secondary, records the cube's draw each frame into the
 *     slot's secondary command buffer, executed in the pass (vkexample_
 *     secondary.c),
 *   - with --staging-image, uploads the texture's level 0 into an image
 *     of transfer usage alone, then copies it over (vkCmdCopyImage),
 *   - with --uniform-offset N, keeps the frame's uniforms at byte N of
 *     their slot (16: an offset llvmpipe takes and an NVIDIA GPU does
 *     not); with --uniform-update, writes them by vkCmdUpdateBuffer first
 *     in the frame's command buffer instead of through the mapping;
 *     --uniform-dynamic binds them as a dynamic uniform buffer (its
 *     dynamic offset 0); --uniform-template writes their descriptors by
 *     vkUpdateDescriptorSetWithTemplate (vkexample_uniform.c),
 *   - and, when asked, copies the colour image to a host buffer and writes
 *     it as DIR/frame-N.png.
 *
 * For a few calls it prints, one per line, the exact values it passed
 * ("vkCreateBuffer size=16384 usage=0x1"), so a test can find them in a
 * trace.  Frames are deterministic: the same frame number gives the same
 * pixels on every run.
 *
 *   vkexample [--frames N] [--png-dir DIR] [--dump-frames A,B,...]
 *             [--gpu N] [--validate] [--still] [--present] [--no-cleanup]
 *             [--mips] [--events] [--compute-mips] [--compute-mips-once]
 *             [--templates] [--push-templates] [--depth-read-only]
 *             [--depth-read-only-rp] [--rewrite-source[=destroy]] [--submit2]
 *             [--staging-image]
 *
 * --no-cleanup ends with exit(0) after the last frame, nothing destroyed:
 * a program that leaves its instance and device to the end of the process.
 *
 * Exit 0 on success, 1 on a Vulkan error (the call and the VkResult name
 * are printed) or, with --validate, if the validation layer reported an
 * error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <vulkan/vulkan.h>

#include "common.h"
#include "png.h"
#include "scene.h"
#include "vkexample.h"
#include "window.h"

#include "vkexample_comp.h"

/* ------------------------------------------------------------------ */
/* PNG: lib/base/png.c (zlib only), shared with trace-replay */
static void write_png(const char *path, const unsigned char *rgba, uint32_t w, uint32_t h)
{
	if (png_write_rgba(path, rgba, w, h) != 0)
		die("%s: write failed: %s", path, strerror(errno));
}

/* ------------------------------------------------------------------ */
/* the Vulkan objects */

struct vkexample g;

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
					      VkDebugUtilsMessageTypeFlagsEXT type,
					      const VkDebugUtilsMessengerCallbackDataEXT *data,
					      void *user)
{
	(void)type;
	(void)user;
	if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
		g.validation_errors++;
		fprintf(stderr, "%s: validation error: %s\n", ex.prog, data->pMessage);
	} else if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
		fprintf(stderr, "%s: validation warning: %s\n", ex.prog, data->pMessage);
	}
	return VK_FALSE;
}

VkShaderModule create_shader(const uint32_t *code, size_t size)
{
	VkShaderModuleCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = size,
		.pCode = code,
	};
	VkShaderModule m;

	logv("vkCreateShaderModule codeSize=%zu", ci.codeSize);
	VK(vkCreateShaderModule(ex.dev, &ci, NULL, &m));
	return m;
}
/* ------------------------------------------------------------------ */
/* setup */

static int has_layer(const char *name)
{
	uint32_t n = 0, i;
	VkLayerProperties *props;
	int found = 0;

	VK(vkEnumerateInstanceLayerProperties(&n, NULL));
	props = calloc(n ? n : 1, sizeof(*props));
	if (!props)
		die("out of memory");
	VK(vkEnumerateInstanceLayerProperties(&n, props));
	for (i = 0; i < n; i++)
		if (!strcmp(props[i].layerName, name))
			found = 1;
	free(props);
	return found;
}

static void create_instance(const struct options *o)
{
	static const char *validation = "VK_LAYER_KHRONOS_validation";
	const char *exts[3];
	uint32_t next = 0;
	VkDebugUtilsMessengerCreateInfoEXT mi = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
				   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = debug_cb,
	};

	if (o->validate) {
		if (!has_layer(validation))
			die("--validate: %s is not installed (Debian: vulkan-validationlayers)",
			    validation);
		exts[next++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	}
	if (o->present)
		next += win_instance_extensions(exts + next);
	ex_create_instance(&validation, o->validate ? 1 : 0, exts, next, o->validate ? &mi : NULL);
	if (o->validate) {
		PFN_vkCreateDebugUtilsMessengerEXT create =
			(PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
				ex.instance, "vkCreateDebugUtilsMessengerEXT");
		if (!create)
			die("vkCreateDebugUtilsMessengerEXT not found");
		VK(create(ex.instance, &mi, NULL, &g.messenger));
	}
}

/* A family that draws and computes, and presents to the window if any. */
static int draws(uint32_t family, const VkQueueFamilyProperties *qf)
{
	VkQueueFlags both = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;

	return (qf->queueFlags & both) == both && win_can_present(family);
}

static void create_device(const struct options *o)
{
	static const VkFormat depth_formats[] = {
		VK_FORMAT_D32_SFLOAT, VK_FORMAT_X8_D24_UNORM_PACK32, VK_FORMAT_D16_UNORM,
	};
	const char *name, *exts[3];
	uint32_t family, next = 0, i;
	VkFormatProperties fp;
	VkPhysicalDeviceVulkan13Features v13 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
		.dynamicRendering = o->depth_read_only && !o->render_pass,
		.synchronization2 = o->submit2 != 0,
	};
	int v13_wanted = v13.dynamicRendering || v13.synchronization2;

	ex_pick_gpu(o->gpu);
	name = ex.props.deviceName;
	printf("device %u: %s\n", o->gpu, name);
	family = ex_queue_family(draws);
	if (family == UINT32_MAX)
		die("%s has no queue family with graphics and compute%s", name,
		    win.surface ? " that can present to the window" : "");

	g.depth_format = VK_FORMAT_UNDEFINED;
	for (i = 0; i < sizeof(depth_formats) / sizeof(depth_formats[0]); i++) {
		vkGetPhysicalDeviceFormatProperties(ex.gpu, depth_formats[i], &fp);
		if (fp.optimalTilingFeatures & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT) {
			g.depth_format = depth_formats[i];
			break;
		}
	}
	if (g.depth_format == VK_FORMAT_UNDEFINED)
		die("%s: no depth format", name);
	vkGetPhysicalDeviceFormatProperties(ex.gpu, COLOR_FORMAT, &fp);
	if (!(fp.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT))
		die("%s: R8G8B8A8_UNORM cannot be a storage image", name);

	if (win.surface)
		exts[next++] = VK_KHR_SWAPCHAIN_EXTENSION_NAME;
	if (o->extension)
		exts[next++] = o->extension;
	if (o->push_templates)
		exts[next++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
	if (v13_wanted && ex.props.apiVersion < VK_API_VERSION_1_3)
		die("%s: %s has Vulkan %u.%u, not 1.3",
		    o->submit2 ? "--submit2" : "--depth-read-only", name,
		    VK_API_VERSION_MAJOR(ex.props.apiVersion),
		    VK_API_VERSION_MINOR(ex.props.apiVersion));
	/* --uniform-storage rw: a fragment shader that may write */
	VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
					v13_wanted ? &v13 : NULL};
	f2.features.fragmentStoresAndAtomics = VK_TRUE;
	ex_create_device(family, exts, next,
			 o->ubo_storage == 2 ? (void *)&f2 : v13_wanted ? (void *)&v13 : NULL);
}

static void create_resources(void)
{
	struct vertex verts[CUBE_VERTICES];
	uint16_t idx[CUBE_INDICES];
	void *p;

	g.pool = ex_create_command_pool();

	g.color = create_image(COLOR_FORMAT, WIDTH, HEIGHT, 1,
			       VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
			       VK_IMAGE_ASPECT_COLOR_BIT);
	g.depth = create_image(g.depth_format, WIDTH, HEIGHT, 1,
			       VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
			       VK_IMAGE_ASPECT_DEPTH_BIT);
	g.tex = create_image(COLOR_FORMAT, TEX_SIZE, TEX_SIZE, g.tex_levels,
			     VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
				     (g.tex_levels > 1 ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0) |
				     (g.compute_mips ? VK_IMAGE_USAGE_STORAGE_BIT : 0),
			     VK_IMAGE_ASPECT_COLOR_BIT);
	g.anim = create_image(COLOR_FORMAT, ANIM_SIZE, ANIM_SIZE, 1,
			      VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
			      VK_IMAGE_ASPECT_COLOR_BIT);
	g.tex_sampler = create_sampler(VK_FILTER_LINEAR, VK_SAMPLER_ADDRESS_MODE_REPEAT,
				       g.tex_levels > 1 ? 2.0f : 0.0f);
	g.anim_sampler = create_sampler(VK_FILTER_NEAREST, VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
					0.0f);

	/* vertices and indices in one host-visible buffer, written once through
	 * a map that is then undone */
	cube(verts, idx);
	g.geometry = ex_create_buffer(sizeof(verts) + sizeof(idx),
				   VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_INDEX_BUFFER_BIT,
				   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	logv("vkMapMemory offset=0 size=%llu", (unsigned long long)g.geometry.size);
	VK(vkMapMemory(ex.dev, g.geometry.mem, 0, g.geometry.size, 0, &p));
	memcpy(p, verts, sizeof(verts));
	memcpy((char *)p + sizeof(verts), idx, sizeof(idx));
	ex_flush_buffer(&g.geometry);
	vkUnmapMemory(ex.dev, g.geometry.mem);

	/* the uniform buffer: one slot per frame in flight, mapped for good */
	g.ubo = ex_create_buffer((VkDeviceSize)UBO_STRIDE * FRAMES_IN_FLIGHT,
			      (g.ubo_storage ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
					     : VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT) |
			      (g.ubo_update ? VK_BUFFER_USAGE_TRANSFER_DST_BIT : 0),
			      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
			      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	logv("vkMapMemory offset=0 size=%llu", (unsigned long long)g.ubo.size);
	VK(vkMapMemory(ex.dev, g.ubo.mem, 0, g.ubo.size, 0, &g.ubo_ptr));

	g.readback = ex_create_buffer((VkDeviceSize)WIDTH * HEIGHT * 4,
				   VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				   VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
}

static void create_descriptors(void)
{
	VkDescriptorType ubo_type = g.ubo_storage ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
				  : g.ubo_dynamic ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC
						  : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
	VkDescriptorSetLayoutBinding gfx_b[3] = {
		{ 0, ubo_type, 1,
		  VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, NULL },
		{ 1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL },
		{ 2, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL },
	};
	VkDescriptorSetLayoutBinding comp_b = {
		0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL,
	};
	VkDescriptorSetLayoutCreateInfo li = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
	};
	VkDescriptorPoolSize sizes[3] = {
		{ ubo_type, FRAMES_IN_FLIGHT },
		{ VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 2 * FRAMES_IN_FLIGHT },
		{ VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1 },
	};
	VkDescriptorPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = FRAMES_IN_FLIGHT + 1,
		.poolSizeCount = 3,
		.pPoolSizes = sizes,
	};
	VkDescriptorSetLayout layouts[FRAMES_IN_FLIGHT];
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
	};
	VkPushConstantRange push = { VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t) };
	VkPipelineLayoutCreateInfo pli = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
	};
	VkDescriptorImageInfo tex_info = {
		g.tex_sampler, g.tex.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
	};
	VkDescriptorImageInfo anim_info = { g.anim_sampler, g.anim.view, VK_IMAGE_LAYOUT_GENERAL };
	VkDescriptorImageInfo storage_info = { VK_NULL_HANDLE, g.anim.view, VK_IMAGE_LAYOUT_GENERAL };
	VkWriteDescriptorSet w[3 * FRAMES_IN_FLIGHT + 1];
	VkDescriptorBufferInfo ubo_info[FRAMES_IN_FLIGHT];
	uint32_t i, nw = 0;

	li.bindingCount = 3;
	li.pBindings = gfx_b;
	VK(vkCreateDescriptorSetLayout(ex.dev, &li, NULL, &g.gfx_dsl));
	li.bindingCount = 1;
	li.pBindings = &comp_b;
	VK(vkCreateDescriptorSetLayout(ex.dev, &li, NULL, &g.comp_dsl));

	logv("vkCreateDescriptorPool maxSets=%u poolSizeCount=%u", pi.maxSets, pi.poolSizeCount);
	VK(vkCreateDescriptorPool(ex.dev, &pi, NULL, &g.dpool));
	for (i = 0; i < FRAMES_IN_FLIGHT; i++)
		layouts[i] = g.gfx_dsl;
	ai.descriptorPool = g.dpool;
	ai.descriptorSetCount = FRAMES_IN_FLIGHT;
	ai.pSetLayouts = layouts;
	VK(vkAllocateDescriptorSets(ex.dev, &ai, g.gfx_set));
	ai.descriptorSetCount = 1;
	ai.pSetLayouts = &g.comp_dsl;
	VK(vkAllocateDescriptorSets(ex.dev, &ai, &g.comp_set));

	memset(w, 0, sizeof(w));
	for (i = 0; i < FRAMES_IN_FLIGHT; i++) {
		ubo_info[i].buffer = g.ubo.buf;
		ubo_info[i].offset = (VkDeviceSize)i * UBO_STRIDE + g.ubo_offset;
		ubo_info[i].range = sizeof(struct frame_ubo);
		if (!g.ubo_template) {  /* (else by a template, below) */
			w[nw].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
			w[nw].dstSet = g.gfx_set[i];
			w[nw].dstBinding = 0;
			w[nw].descriptorCount = 1;
			w[nw].descriptorType = ubo_type;
			w[nw].pBufferInfo = &ubo_info[i];
			nw++;
		}
		w[nw].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
		w[nw].dstSet = g.gfx_set[i];
		w[nw].dstBinding = 1;
		w[nw].descriptorCount = 1;
		w[nw].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
		w[nw].pImageInfo = &tex_info;
		nw++;
		w[nw].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
		w[nw].dstSet = g.gfx_set[i];
		w[nw].dstBinding = 2;
		w[nw].descriptorCount = 1;
		w[nw].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
		w[nw].pImageInfo = &anim_info;
		nw++;
	}
	w[nw].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
	w[nw].dstSet = g.comp_set;
	w[nw].dstBinding = 0;
	w[nw].descriptorCount = 1;
	w[nw].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
	w[nw].pImageInfo = &storage_info;
	nw++;
	vkUpdateDescriptorSets(ex.dev, nw, w, 0, NULL);
	if (g.ubo_template)
		uniform_template_write(ubo_type, ubo_info);

	pli.pSetLayouts = &g.gfx_dsl;
	VK(vkCreatePipelineLayout(ex.dev, &pli, NULL, &g.gfx_layout));
	pli.pSetLayouts = &g.comp_dsl;
	pli.pushConstantRangeCount = 1;
	pli.pPushConstantRanges = &push;
	VK(vkCreatePipelineLayout(ex.dev, &pli, NULL, &g.comp_layout));
}

static void create_render_pass(void)
{
	VkAttachmentDescription att[2] = {
		{
			.format = COLOR_FORMAT,
			.samples = VK_SAMPLE_COUNT_1_BIT,
			.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
			.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
			.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
			.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
			.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
			.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		},
		{
			.format = g.depth_format,
			.samples = VK_SAMPLE_COUNT_1_BIT,
			.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
			.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
			.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
			.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
			.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
			.finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
		},
	};
	VkAttachmentReference cref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkAttachmentReference dref = { 1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
	VkSubpassDescription sub = {
		.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
		.colorAttachmentCount = 1,
		.pColorAttachments = &cref,
		.pDepthStencilAttachment = &dref,
	};
	VkSubpassDependency deps[2] = {
		/* the previous frame's attachment writes and copy read finish
		 * before this frame clears */
		{
			.srcSubpass = VK_SUBPASS_EXTERNAL,
			.dstSubpass = 0,
			.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
					VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT |
					VK_PIPELINE_STAGE_TRANSFER_BIT,
			.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
					VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
					VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT,
			.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
					 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
					 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
					 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
		},
		/* the colour writes finish before the copy to the host buffer */
		{
			.srcSubpass = 0,
			.dstSubpass = VK_SUBPASS_EXTERNAL,
			.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
			.dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT,
			.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
		},
	};
	VkRenderPassCreateInfo ri = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
		.attachmentCount = 2,
		.pAttachments = att,
		.subpassCount = 1,
		.pSubpasses = &sub,
		.dependencyCount = 2,
		.pDependencies = deps,
	};
	VkImageView views[2] = { g.color.view, g.depth.view };
	VkFramebufferCreateInfo fi = {
		.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
		.attachmentCount = 2,
		.pAttachments = views,
		.width = WIDTH,
		.height = HEIGHT,
		.layers = 1,
	};

	/* --strokes: the load reads the colour image (both passes say so:
	 * their dependencies make them compatible or not) */
	if (g.strokes)
		deps[0].dstAccessMask |= VK_ACCESS_COLOR_ATTACHMENT_READ_BIT;
	VK(vkCreateRenderPass(ex.dev, &ri, NULL, &g.render_pass));
	if (g.strokes) {
		/* the colour image loaded, as the pass before left it (a
		 * compatible pass: the framebuffer and pipeline serve both) */
		att[0].loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
		att[0].initialLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
		VK(vkCreateRenderPass(ex.dev, &ri, NULL, &g.load_pass));
	}
	fi.renderPass = g.render_pass;
	VK(vkCreateFramebuffer(ex.dev, &fi, NULL, &g.framebuffer));
}

static void create_pipelines(void)
{
	VkPipelineShaderStageCreateInfo stages[2] = {
		{
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_VERTEX_BIT,
			.pName = "main",
		},
		{
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_FRAGMENT_BIT,
			.pName = "main",
		},
	};
	VkVertexInputBindingDescription vb = { 0, sizeof(struct vertex), VK_VERTEX_INPUT_RATE_VERTEX };
	VkVertexInputAttributeDescription va[3] = {
		{ 0, 0, VK_FORMAT_R32G32B32_SFLOAT, offsetof(struct vertex, pos) },
		{ 1, 0, VK_FORMAT_R32G32_SFLOAT, offsetof(struct vertex, uv) },
		{ 2, 0, VK_FORMAT_R32G32B32_SFLOAT, offsetof(struct vertex, normal) },
	};
	VkPipelineVertexInputStateCreateInfo vi = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO,
		.vertexBindingDescriptionCount = 1,
		.pVertexBindingDescriptions = &vb,
		.vertexAttributeDescriptionCount = 3,
		.pVertexAttributeDescriptions = va,
	};
	VkPipelineInputAssemblyStateCreateInfo ia = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
		.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
	};
	VkPipelineViewportStateCreateInfo vps = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
		.viewportCount = 1,
		.scissorCount = 1,
	};
	VkPipelineRasterizationStateCreateInfo rs = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
		.polygonMode = VK_POLYGON_MODE_FILL,
		.cullMode = VK_CULL_MODE_NONE,
		.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE,
		.lineWidth = 1.0f,
	};
	VkPipelineMultisampleStateCreateInfo ms = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
		.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT,
	};
	VkPipelineDepthStencilStateCreateInfo ds = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO,
		.depthTestEnable = VK_TRUE,
		.depthWriteEnable = VK_TRUE,
		.depthCompareOp = VK_COMPARE_OP_LESS,
	};
	VkPipelineColorBlendAttachmentState cba = {
		.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
				  VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT,
	};
	VkPipelineColorBlendStateCreateInfo cb = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
		.attachmentCount = 1,
		.pAttachments = &cba,
	};
	VkDynamicState dyn[2] = { VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR };
	VkFormat color_format = COLOR_FORMAT;
	VkPipelineRenderingCreateInfo dr = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
		.colorAttachmentCount = 1,
		.pColorAttachmentFormats = &color_format,
		.depthAttachmentFormat = g.depth_format,
	};
	VkPipelineDynamicStateCreateInfo dy = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
		.dynamicStateCount = 2,
		.pDynamicStates = dyn,
	};
	VkGraphicsPipelineCreateInfo gi = {
		.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
		.stageCount = 2,
		.pStages = stages,
		.pVertexInputState = &vi,
		.pInputAssemblyState = &ia,
		.pViewportState = &vps,
		.pRasterizationState = &rs,
		.pMultisampleState = &ms,
		.pDepthStencilState = &ds,
		.pColorBlendState = &cb,
		.pDynamicState = &dy,
		.layout = g.gfx_layout,
		.renderPass = g.render_pass,
		.subpass = 0,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.pName = "main",
		},
		.layout = g.comp_layout,
	};

	frame_shaders(&g.vert, &g.frag);
	g.comp = create_shader(vkexample_comp, sizeof(vkexample_comp));
	stages[0].module = g.vert;
	stages[1].module = g.frag;
	ci.stage.module = g.comp;
	if (g.hud_render_pass) {
		gi.renderPass = g.hud_rp[HUD_CUBE];
	} else if (g.hud) {
		gi.pNext = &dr;
		gi.renderPass = VK_NULL_HANDLE;
	}
	VK(vkCreateGraphicsPipelines(ex.dev, VK_NULL_HANDLE, 1, &gi, NULL, &g.gfx_pipe));
	if (g.hud)
		hud_create_pipeline(&gi);
	if (g.discard_pipe) {
		/* "ignored if the pipeline has rasterization disabled": an
		 * address nothing may read (the validation layer of Debian 12
		 * reads pMultisampleState: not with --validate) */
		const void *dangling = (const void *)(uintptr_t)0x10;
		VkPipeline p;
		rs.rasterizerDiscardEnable = VK_TRUE;
		gi.pViewportState = dangling;
		gi.pMultisampleState = dangling;
		gi.pDepthStencilState = dangling;
		gi.pColorBlendState = dangling;
		VK(vkCreateGraphicsPipelines(ex.dev, VK_NULL_HANDLE, 1, &gi, NULL, &p));
		vkDestroyPipeline(ex.dev, p, NULL);
	}
	VK(vkCreateComputePipelines(ex.dev, VK_NULL_HANDLE, 1, &ci, NULL, &g.comp_pipe));
}

static void create_frames(int events, int carry)
{
	VkFenceCreateInfo fi = {
		.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
		.flags = VK_FENCE_CREATE_SIGNALED_BIT,
	};
	int i;

	VkEventCreateInfo ei = { .sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO };

	ex_command_buffers(g.pool, FRAMES_IN_FLIGHT, g.cmd);
	for (i = 0; i < FRAMES_IN_FLIGHT; i++) {
		VK(vkCreateFence(ex.dev, &fi, NULL, &g.fence[i]));
		if (events)
			VK(vkCreateEvent(ex.dev, &ei, NULL, &g.event[i]));
	}
	if (carry)
		VK(vkCreateEvent(ex.dev, &ei, NULL, &g.carry));
}

/* ------------------------------------------------------------------ */
/* frames */

/* The colour image, TRANSFER_SRC_OPTIMAL after the render pass, into
 * swapchain image TARGET: a blit, so that a B8G8R8A8 swapchain takes our
 * R8G8B8A8 (a copy would not swap the channels). */
static void blit_to_swapchain(VkCommandBuffer cb, VkImage target)
{
	VkImageBlit region = {
		.srcSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.srcOffsets = { { 0, 0, 0 }, { WIDTH, HEIGHT, 1 } },
		.dstSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.dstOffsets = { { 0, 0, 0 },
				{ (int32_t)win.extent.width, (int32_t)win.extent.height, 1 } },
	};

	/* the submit waits for the acquire at the transfer stage: the layout
	 * change starts there too, after the presentation engine let go */
	image_barrier(cb, target, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		      VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
		      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
	vkCmdBlitImage(cb, g.color.img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		       target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region, VK_FILTER_NEAREST);
	/* the present's semaphore wait makes the write visible to it */
	image_barrier(cb, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		      VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_PIPELINE_STAGE_TRANSFER_BIT,
		      VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0);
}

/* Records frame FRAME in slot SLOT's command buffer; TARGET: the swapchain
 * image to show it in (--present), else VK_NULL_HANDLE. */
/* PASS (g.render_pass or g.load_pass) begun over the colour and depth
 * images. */
void frame_pass_begin(VkCommandBuffer cb, VkRenderPass pass)
{
	VkClearValue clear[2] = {
		{ .color = { { 0.10f, 0.12f, 0.16f, 1.0f } } },
		{ .depthStencil = { 1.0f, 0 } },
	};
	VkRenderPassBeginInfo rp = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
		.renderPass = pass,
		.framebuffer = g.framebuffer,
		.renderArea = { { 0, 0 }, { WIDTH, HEIGHT } },
		.clearValueCount = 2,
		.pClearValues = clear,
	};

	vkCmdBeginRenderPass(cb, &rp, secondary_on() ? VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS
					       : VK_SUBPASS_CONTENTS_INLINE);
}

/* The cube's pipeline bound, the whole image its viewport. */
void bind_cube(VkCommandBuffer cb)
{
	VkViewport vp = { 0.0f, 0.0f, (float)WIDTH, (float)HEIGHT, 0.0f, 1.0f };
	VkRect2D sc = { { 0, 0 }, { WIDTH, HEIGHT } };

	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, g.gfx_pipe);
	vkCmdSetViewport(cb, 0, 1, &vp);
	vkCmdSetScissor(cb, 0, 1, &sc);
}

/* The cube drawn with slot SLOT's set (the pass begun); FIRST: the
 * draw's arguments logged. */
void draw_cube(VkCommandBuffer cb, unsigned slot, int first)
{
	VkDeviceSize vb_offset = 0;
	VkDeviceSize ib_offset = sizeof(struct vertex) * CUBE_VERTICES;

	bind_cube(cb);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, g.gfx_layout, 0, 1,
				&g.gfx_set[slot], g.ubo_dynamic, &(uint32_t){0});
	vkCmdBindVertexBuffers(cb, 0, 1, &g.geometry.buf, &vb_offset);
	vkCmdBindIndexBuffer(cb, g.geometry.buf, ib_offset, VK_INDEX_TYPE_UINT16);
	if (first) {
		logv("vkCmdBindIndexBuffer offset=%llu indexType=%d",
		     (unsigned long long)ib_offset, VK_INDEX_TYPE_UINT16);
		logv("vkCmdDrawIndexed indexCount=%u instanceCount=%u firstIndex=%u "
		     "vertexOffset=%d firstInstance=%u",
		     (unsigned)CUBE_INDICES, 1u, 0u, 0, 0u);
	}
	vkCmdDrawIndexed(cb, CUBE_INDICES, 1, 0, 0, 0);
}

static void record_frame(VkCommandBuffer cb, unsigned slot, unsigned frame, int dump,
			 const struct frame_ubo *u, VkImage target)
{
	/* --secondary: begun without ONE_TIME_SUBMIT, as Qt Quick begins
	 * the primaries that execute its passes */
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = secondary_on() ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	uint32_t groups = (ANIM_SIZE + 7) / 8;
	uint32_t push = frame;
	int first = frame == 0;
	VkImage anim = pair_image(frame)->img;
	VkDescriptorSet comp_set = pair_comp_set(frame);

	VK(vkBeginCommandBuffer(cb, &bi));
	stamps_begin(cb, slot);
	rewrite_source_frame(cb, frame);
	if (g.ubo_update)
		uniform_upload(cb, slot, u);

	/* compute: the previous frame's sampling of the image is done before
	 * this frame writes it.  The pass writes every texel, so the old
	 * contents are discarded (from UNDEFINED): that also tells a trimmer
	 * that this frame does not need the earlier frames' dispatches, which
	 * a GENERAL to GENERAL barrier would keep, every one of them (as
	 * --anim-unsampled does: then only a trimmer that sees nothing
	 * read it leaves them out). */
	image_barrier(cb, anim,
		      g.anim_unsampled && !first ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_UNDEFINED,
		      VK_IMAGE_LAYOUT_GENERAL,
		      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0,
		      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g.comp_pipe);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g.comp_layout, 0, 1,
				&comp_set, 0, NULL);
	vkCmdPushConstants(cb, g.comp_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
	if (first)
		logv("vkCmdDispatch groupCountX=%u groupCountY=%u groupCountZ=%u", groups, groups, 1u);
	vkCmdDispatch(cb, groups, groups, 1);
	/* ... and its writes are visible to the fragment shader */
	image_barrier(cb, anim, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL,
		      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
		      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);

	/* --mips: the levels made again from level 0, after the previous
	 * frame sampled them.  Levels 1 and on are written whole: from
	 * UNDEFINED, their old contents dropped (level 0 is kept); with
	 * --events, the last layout changes wait for this slot's event,
	 * reset here first (its last frame in this slot is done); with
	 * --compute-mips, a dispatch per level; with --compute-mips-once,
	 * none: they were made at load */
	if (g.mips_once) {
		/* sampled only */
	} else if (g.compute_mips) {
		compute_mips(cb);
	} else if (g.tex_levels > 1) {
		levels_change(cb, g.tex.img, 1, g.tex_levels - 1, VK_IMAGE_LAYOUT_UNDEFINED,
			      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
			      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0,
			      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
		if (g.event[slot])
			vkCmdResetEvent(cb, g.event[slot], VK_PIPELINE_STAGE_TRANSFER_BIT);
		make_mips(cb, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, g.event[slot]);
	}

	/* --carry-event: the event the previous frame set, waited for (a
	 * cut of this frame finds it set only if its setup sets it) */
	if (g.carry && frame > 0)
		vkCmdWaitEvents(cb, 1, &g.carry, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
				VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0, NULL, 0, NULL, 0, NULL);

	/* draw */
	if (g.hud)
		hud_begin(cb);
	else
		frame_pass_begin(cb, g.strokes && frame > 0 ? g.load_pass : g.render_pass);
	if (secondary_on())
		secondary_draw(cb, g.render_pass, slot, first);
	else
		draw_cube(cb, slot, first);
	if (g.hud)
		hud_end(cb);
	else
		vkCmdEndRenderPass(cb);
	if (g.carry)
		vkCmdSetEvent(cb, g.carry, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
	if (target)
		blit_to_swapchain(cb, target);

	/* the colour image (now TRANSFER_SRC_OPTIMAL) to the host buffer */
	if (dump)
		copy_color_to_host(cb, g.readback.buf, 0, 0, WIDTH, HEIGHT);
	stamps_end(cb, slot);
	VK(vkEndCommandBuffer(cb));
}

void copy_color_to_host(VkCommandBuffer cb, VkBuffer buf, int32_t x, int32_t y, uint32_t w,
			uint32_t h)
{
	VkBufferImageCopy region = {
		.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.imageOffset = { x, y, 0 },
		.imageExtent = { w, h, 1 },
	};
	VkBufferMemoryBarrier hb = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_HOST_READ_BIT,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.buffer = buf,
		.size = VK_WHOLE_SIZE,
	};

	vkCmdCopyImageToBuffer(cb, g.color.img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf, 1,
			       &region);
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0,
			     NULL, 1, &hb, 0, NULL);
}

static void save_frame(const struct options *o, unsigned frame)
{
	char path[4096];
	void *p;

	if (!g.readback.coherent) {
		VkMappedMemoryRange r = {
			.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
			.memory = g.readback.mem,
			.size = VK_WHOLE_SIZE,
		};
		VK(vkMapMemory(ex.dev, g.readback.mem, 0, VK_WHOLE_SIZE, 0, &p));
		VK(vkInvalidateMappedMemoryRanges(ex.dev, 1, &r));
	} else {
		VK(vkMapMemory(ex.dev, g.readback.mem, 0, VK_WHOLE_SIZE, 0, &p));
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/frame-%u.png", o->png_dir, frame) >=
	    sizeof(path))
		die("--png-dir: path too long");
	write_png(path, p, WIDTH, HEIGHT);
	vkUnmapMemory(ex.dev, g.readback.mem);
	printf("wrote %s\n", path);
}

/* --submit2: the frame's submit of run_frames by vkQueueSubmit2, the
 * same waits and signals. */
static void submit2(const VkSubmitInfo *si, VkFence fence)
{
	VkSemaphoreSubmitInfo wait = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
		.semaphore = si->waitSemaphoreCount ? si->pWaitSemaphores[0] : VK_NULL_HANDLE,
		.stageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT,
	};
	VkSemaphoreSubmitInfo signal = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
		.semaphore = si->signalSemaphoreCount ? si->pSignalSemaphores[0] : VK_NULL_HANDLE,
		.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
	};
	VkCommandBufferSubmitInfo cb = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
		.commandBuffer = si->pCommandBuffers[0],
	};
	VkSubmitInfo2 s2 = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
		.waitSemaphoreInfoCount = si->waitSemaphoreCount,
		.pWaitSemaphoreInfos = &wait,
		.commandBufferInfoCount = 1,
		.pCommandBufferInfos = &cb,
		.signalSemaphoreInfoCount = si->signalSemaphoreCount,
		.pSignalSemaphoreInfos = &signal,
	};

	VK(vkQueueSubmit2(ex.queue, 1, &s2, fence));
}

static void run_frames(const struct options *o)
{
	unsigned frame;

	for (frame = 0; frame < o->frames; frame++) {
		unsigned slot = frame % FRAMES_IN_FLIGHT;
		int dump = want_dump(o, frame);
		struct frame_ubo u;
		uint32_t index = 0;
		VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
		VkSubmitInfo si = {
			.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			.commandBufferCount = 1,
			.pCommandBuffers = &g.cmd[slot],
		};

		/* this slot's previous frame is done with its uniforms and
		 * command buffer */
		VK(vkWaitForFences(ex.dev, 1, &g.fence[slot], VK_TRUE, UINT64_MAX));
		VK(vkResetFences(ex.dev, 1, &g.fence[slot]));
		stamps_frame(slot, frame);
		if (o->fresh_cbs) {
			vkFreeCommandBuffers(ex.dev, g.pool, 1, &g.cmd[slot]);
			ex_command_buffers(g.pool, 1, &g.cmd[slot]);
		}

		frame_ubo_fill(&u, frame, o->still, (float)WIDTH / HEIGHT);
		if (!g.ubo_update) {
			memcpy((char *)g.ubo_ptr + (size_t)slot * UBO_STRIDE + g.ubo_offset, &u,
			       sizeof(u));
			ex_flush_buffer(&g.ubo);
		}
		pair_frame(slot, frame);

		if (win.swapchain) {
			index = win_acquire(ex.dev, slot);
			si.waitSemaphoreCount = 1;
			si.pWaitSemaphores = &win.acquired[slot];
			si.pWaitDstStageMask = &wait_stage;
			si.signalSemaphoreCount = 1;
			si.pSignalSemaphores = &win.rendered[index];
		}
		record_frame(g.cmd[slot], slot, frame, dump, &u,
			     win.swapchain ? win.images[index] : VK_NULL_HANDLE);
		/* --strokes: the last of the frame's strokes signals its fence */
		VkFence fence = g.strokes ? VK_NULL_HANDLE : g.fence[slot];
		if (o->submit2)
			submit2(&si, fence);
		else
			VK(vkQueueSubmit(ex.queue, 1, &si, fence));
		if (g.strokes)
			strokes_frame(slot, g.fence[slot]);
		probe_frame(slot);
		if (o->wait_each)
			VK(vkWaitForFences(ex.dev, 1, &g.fence[slot], VK_TRUE, UINT64_MAX));
		if (win.swapchain)
			win_present(ex.queue, index);
		if (dump) {
			VK(vkWaitForFences(ex.dev, 1, &g.fence[slot], VK_TRUE, UINT64_MAX));
			save_frame(o, frame);
		}
	}
	VK(vkWaitForFences(ex.dev, FRAMES_IN_FLIGHT, g.fence, VK_TRUE, UINT64_MAX));
	printf("frames %u\n", o->frames);
}

static void destroy_all(void)
{
	int i;

	VK(vkDeviceWaitIdle(ex.dev));
	for (i = 0; i < FRAMES_IN_FLIGHT; i++) {
		vkDestroyFence(ex.dev, g.fence[i], NULL);
		if (g.event[i])
			vkDestroyEvent(ex.dev, g.event[i], NULL);
		if (g.carry && i == 0)
			vkDestroyEvent(ex.dev, g.carry, NULL);
	}
	if (win.swapchain)
		win_destroy_swapchain();
	vkFreeCommandBuffers(ex.dev, g.pool, FRAMES_IN_FLIGHT, g.cmd);
	strokes_destroy();
	probe_destroy();
	stamps_destroy();
	pair_destroy();
	secondary_destroy();
	vkDestroyPipeline(ex.dev, g.gfx_pipe, NULL);
	vkDestroyPipeline(ex.dev, g.comp_pipe, NULL);
	if (g.hud)
		hud_destroy();
	if (g.compute_mips) {
		vkDestroyPipeline(ex.dev, g.mip_pipe, NULL);
		vkDestroyShaderModule(ex.dev, g.mip, NULL);
		vkDestroyPipelineLayout(ex.dev, g.mip_layout, NULL);
		vkDestroyDescriptorPool(ex.dev, g.mip_pool, NULL);
		if (g.mip_template)
			vkDestroyDescriptorUpdateTemplate(ex.dev, g.mip_template, NULL);
		vkDestroyDescriptorSetLayout(ex.dev, g.mip_dsl, NULL);
		for (i = 0; i < (int)g.tex_levels; i++)
			vkDestroyImageView(ex.dev, g.level_view[i], NULL);
	}
	vkDestroyShaderModule(ex.dev, g.vert, NULL);
	vkDestroyShaderModule(ex.dev, g.frag, NULL);
	vkDestroyShaderModule(ex.dev, g.comp, NULL);
	vkDestroyFramebuffer(ex.dev, g.framebuffer, NULL);
	vkDestroyRenderPass(ex.dev, g.render_pass, NULL);
	if (g.load_pass)
		vkDestroyRenderPass(ex.dev, g.load_pass, NULL);
	vkDestroyPipelineLayout(ex.dev, g.gfx_layout, NULL);
	vkDestroyPipelineLayout(ex.dev, g.comp_layout, NULL);
	vkDestroyDescriptorPool(ex.dev, g.dpool, NULL);
	vkDestroyDescriptorSetLayout(ex.dev, g.gfx_dsl, NULL);
	vkDestroyDescriptorSetLayout(ex.dev, g.comp_dsl, NULL);
	vkUnmapMemory(ex.dev, g.ubo.mem);
	ex_destroy_buffer(&g.ubo);
	ex_destroy_buffer(&g.geometry);
	ex_destroy_buffer(&g.readback);
	ex_destroy_buffer(&g.patch_src);
	vkDestroySampler(ex.dev, g.tex_sampler, NULL);
	vkDestroySampler(ex.dev, g.anim_sampler, NULL);
	destroy_image(&g.anim);
	destroy_image(&g.tex);
	destroy_image(&g.depth);
	destroy_image(&g.color);
	vkDestroyCommandPool(ex.dev, g.pool, NULL);
	vkDestroyDevice(ex.dev, NULL);
	if (g.messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy =
			(PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
				ex.instance, "vkDestroyDebugUtilsMessengerEXT");
		if (destroy)
			destroy(ex.instance, g.messenger, NULL);
	}
	win_destroy_surface();
	vkDestroyInstance(ex.instance, NULL);
	win_close();
}

/* --term-handler: Vulkan from a signal handler, as ioquake3's does */
static void on_term(int sig)
{
	(void)sig;
	if (ex.dev)
		vkDeviceWaitIdle(ex.dev);
	exit(3);
}

int main(int argc, char **argv)
{
	struct options o;

	ex.prog = "vkexample";
	ex.log = 1;
	parse_options(argc, argv, &o);
	if (o.png_dir && mkdir(o.png_dir, 0777) != 0 && errno != EEXIST)
		die("--png-dir %s: %s", o.png_dir, strerror(errno));

	if (o.term_handler) {
		struct sigaction sa = { .sa_handler = on_term };
		sigaction(SIGTERM, &sa, NULL);
	}
	if (o.present)
		win_open((VkExtent2D){ WIDTH, HEIGHT }, "vkexample");
	if ((o.depth_read_only && !o.render_pass) || o.submit2)
		ex.api = VK_API_VERSION_1_3;
	create_instance(&o);
	if (o.present)
		win_create_surface();
	create_device(&o);
	g.tex_levels = 1;
	if (o.mips)
		while (TEX_SIZE >> g.tex_levels)
			g.tex_levels++;
	g.compute_mips = o.compute_mips;
	g.mips_once = o.mips_once;
	g.staging_image = o.staging_image;
	g.templates = o.templates;
	g.copy_sets = o.copy_sets;
	g.push_templates = o.push_templates;
	g.discard_pipe = o.discard_pipe;
	g.hud = o.depth_read_only;
	g.strokes = o.strokes;
	g.ubo_offset = o.ubo_offset;
	g.ubo_update = o.ubo_update;
	g.ubo_dynamic = o.ubo_dynamic;
	g.ubo_storage = o.ubo_storage;
	g.anim_unsampled = o.anim_unsampled;
	g.ubo_template = o.ubo_template;
	g.hud_render_pass = o.render_pass;
	create_resources();
	upload();
	if (o.rewrite_source)
		rewrite_source(o.rewrite_source == 2);
	create_descriptors();
	create_render_pass();
	create_pipelines();
	if (g.compute_mips)
		create_mip_pass();
	if (g.mips_once)
		compute_mips_once();
	create_frames(o.events, o.carry_event);
	if (o.strokes)
		strokes_create(o.strokes);
	if (o.read_pixel)
		probe_create();
	if (o.timestamps)
		stamps_create();
	if (o.anim_pair)
		pair_create();
	if (o.secondary)
		secondary_create();
	if (o.present)
		win_create_swapchain(FRAMES_IN_FLIGHT);
	run_frames(&o);
	if (o.no_cleanup)
		exit(0);
	destroy_all();
	free(o.dump);

	fflush(stdout);
	if (g.validation_errors) {
		fprintf(stderr, "%s: %u validation errors\n", ex.prog, g.validation_errors);
		return 1;
	}
	return 0;
}
