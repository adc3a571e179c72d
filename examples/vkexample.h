/*
 * vkexample: what its files share (vkexample.c: options, set-up, frames;
 * vkexample_texture.c: images, their layout changes, the texture's upload,
 * mipmaps and --rewrite-source's patch; vkexample_hud.c: the passes of
 * --depth-read-only and --depth-read-only-rp; vkexample_strokes.c and
 * vkexample_probe.c: the submits of --strokes and --read-pixel).  The
 * program is one device for its whole run, so its Vulkan objects are the
 * global g, as the set-up in common.h is ex.
 */
#ifndef EXAMPLES_VKEXAMPLE_H
#define EXAMPLES_VKEXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "common.h"
#include "scene.h"

#define WIDTH 256
#define HEIGHT 256
#define COLOR_FORMAT VK_FORMAT_R8G8B8A8_UNORM
#define ANIM_SIZE 128
#define FRAMES_IN_FLIGHT 2
/* slot stride in the uniform buffer: 256 is the largest
 * minUniformBufferOffsetAlignment the spec allows, so it fits any device */
#define UBO_STRIDE 256

/* vkexample_hud.c's passes: the mask's stripes (the upload), then in
 * each frame the cube, the bar over its depth, the bar over the mask */
enum hud_pass { HUD_MASK_WRITE, HUD_CUBE, HUD_BAR, HUD_MASK_BAR, HUD_PASSES };

struct image {
	VkImage img;
	VkDeviceMemory mem;
	VkImageView view;
};

struct vkexample {
	VkDebugUtilsMessengerEXT messenger;
	VkCommandPool pool;
	VkFormat depth_format;

	struct image color, depth, tex, anim;
	VkSampler tex_sampler, anim_sampler;
	struct buffer geometry, ubo, readback;
	void *ubo_ptr;
	unsigned ubo_offset;	/* --uniform-offset: the uniforms' byte in their slot */
	int ubo_update;		/* --uniform-update: written by vkCmdUpdateBuffer */
	int ubo_dynamic;	/* --uniform-dynamic: a dynamic uniform buffer */
	int ubo_template;	/* --uniform-template: written by a template */
	int ubo_storage;	/* --uniform-storage: 0 no, 1 ro, 2 rw */
	int anim_unsampled;	/* --anim-unsampled: the pattern kept, not sampled */

	VkDescriptorSetLayout gfx_dsl, comp_dsl;
	VkDescriptorPool dpool;
	VkDescriptorSet gfx_set[FRAMES_IN_FLIGHT], comp_set;
	VkPipelineLayout gfx_layout, comp_layout;
	VkRenderPass render_pass;
	VkFramebuffer framebuffer;
	VkShaderModule vert, frag, comp;
	VkPipeline gfx_pipe, comp_pipe;
	int discard_pipe;

	VkCommandBuffer cmd[FRAMES_IN_FLIGHT];
	VkFence fence[FRAMES_IN_FLIGHT];
	VkEvent event[FRAMES_IN_FLIGHT];	/* --events */
	VkEvent carry;				/* --carry-event */

	uint32_t tex_levels;	/* 1, or with --mips a full chain */

	/* --compute-mips: a view of each level of the texture, and for each
	 * level from 1 a set of the view before it and its own */
	int compute_mips;
	int mips_once;		/* --compute-mips-once: made at load alone */
	int staging_image;	/* --staging-image: level 0 copied from an image */
	int templates;		/* --templates: the sets written by a template */
	int copy_sets;		/* --copy-sets: ... copied from a set written first */
	int push_templates;	/* --push-templates: no sets, pushed by one */
	VkDescriptorUpdateTemplate mip_template;
	PFN_vkCmdPushDescriptorSetWithTemplateKHR push_template;
	VkImageView level_view[16];
	VkDescriptorSetLayout mip_dsl;
	VkDescriptorPool mip_pool;
	VkDescriptorSet mip_set[16];
	VkPipelineLayout mip_layout;
	VkShaderModule mip;
	VkPipeline mip_pipe;

	/* --depth-read-only: dynamic rendering, two HUD passes, the mask;
	 * --depth-read-only-rp: the same passes, a render pass each */
	int hud;
	int hud_render_pass;
	VkRenderPass hud_rp[HUD_PASSES];
	VkFramebuffer hud_fb[HUD_PASSES];
	struct image mask;
	VkShaderModule hud_vert, hud_frag;
	VkPipelineLayout hud_layout;
	VkPipeline hud_pipe;

	/* --rewrite-source: what the texture's patch is copied from */
	struct buffer patch_src;

	/* --strokes: the submits a frame after its own; the pass that loads
	 * the colour image, every frame's after frame 0 */
	unsigned strokes;
	VkRenderPass load_pass;

	unsigned validation_errors;
};
extern struct vkexample g;

/* vkexample_options.c: the command line */
struct options {
	unsigned frames;
	unsigned gpu;
	int validate;
	int still;		/* rotation fixed at frame 0's; compute still moves */
	int present;		/* an X window and a swapchain */
	int no_cleanup;		/* exit(0) after the frames, nothing destroyed */
	int wait_each;		/* a fence wait right after each submit */
	int mips;		/* a mipmapped texture, its levels made every frame */
	int events;		/* ... ending in a vkCmdWaitEvents */
	int carry_event;	/* an event each frame sets and the next waits for */
	int compute_mips;	/* ... made by a compute shader, level by level */
	int mips_once;		/* ... once, at load, in a submit of their own */
	int templates;		/* ... its sets written through a template */
	int copy_sets;		/* ... copied from a set of their own */
	int push_templates;	/* ... no sets: pushed through a template */
	int term_handler;	/* a SIGTERM handler that calls Vulkan, then exit(3) */
	int discard_pipe;	/* a pipeline more, its ignored states dangling */
	int depth_read_only;	/* dynamic rendering, HUD passes of read-only depth */
	int render_pass;	/* ... render passes instead of dynamic rendering */
	int rewrite_source;	/* a patch from a buffer filled again after */
	int submit2;		/* frames submitted by vkQueueSubmit2 (Vulkan 1.3) */
	int staging_image;	/* the texture's upload through an image of its own */
	unsigned strokes;	/* submits a frame more, each a triangle, never cleared */
	int read_pixel;		/* a texel of each frame read back by a submit of its own */
	int timestamps;		/* each frame's GPU time: timestamps, copied and read */
	int anim_pair;		/* two compute images by turns, the sets written again */
	int anim_unsampled;	/* the compute image kept from frame to frame, not sampled */
	int secondary;		/* the draw in a secondary command buffer */
	int fresh_cbs;		/* a frame's command buffer freed, another allocated */
	unsigned ubo_offset;	/* the uniforms at this byte of their slot */
	int ubo_update;		/* ... written by vkCmdUpdateBuffer in the frame */
	int ubo_dynamic;	/* ... bound as a dynamic uniform buffer */
	int ubo_template;	/* ... their descriptors written by a template */
	int ubo_storage;	/* ... read from a storage buffer: 1 readonly, 2 not */
	const char *png_dir;
	const char *extension;	/* one more device extension to enable */
	unsigned *dump;		/* frame numbers to dump; NULL: every frame */
	size_t ndump;
};
void parse_options(int argc, char **argv, struct options *o);
/* Whether frame FRAME is saved as a PNG. */
int want_dump(const struct options *o, unsigned frame);

/* vkexample.c */
VkShaderModule create_shader(const uint32_t *code, size_t size);

/* vkexample_uniform.c: --uniform-update's upload of slot SLOT's uniforms
 * U into CB, and --uniform-template's write of each frame set's binding 0
 * (of TYPE) as B says, by a template */
void uniform_upload(VkCommandBuffer cb, unsigned slot, const struct frame_ubo *u);
void uniform_template_write(VkDescriptorType type, const VkDescriptorBufferInfo *b);
/* The cube's vertex and fragment shaders, as --uniform-storage asks. */
void frame_shaders(VkShaderModule *vert, VkShaderModule *frag);

/* vkexample_texture.c: images */
struct image create_image(VkFormat format, uint32_t w, uint32_t h, uint32_t levels,
			  VkImageUsageFlags usage, VkImageAspectFlags aspect);
void destroy_image(struct image *im);
/* A sampler; with a LOD BIAS, one of all the image's levels, picked
 * nearest. */
VkSampler create_sampler(VkFilter filter, VkSamplerAddressMode mode, float bias);
/* Levels [LEVEL, LEVEL + COUNT) of colour image IMG from layout FROM to TO. */
void levels_change(VkCommandBuffer cb, VkImage img, uint32_t level, uint32_t count,
		   VkImageLayout from, VkImageLayout to, VkPipelineStageFlags src_stage,
		   VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
		   VkAccessFlags dst_access);
/* Level 0 of colour image IMG from layout FROM to TO. */
void image_barrier(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to,
		   VkPipelineStageFlags src_stage, VkAccessFlags src_access,
		   VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

/* vkexample_texture.c: the texture */
/* The texture through a staging buffer (and its mipmaps made); the
 * storage image into GENERAL; with --depth-read-only, the mask written. */
void upload(void);
/* --mips: levels 1 and on blitted from level 0, left in SHADER_READ_ONLY
 * (level 0 from FROM); with EVENT, the last layout changes wait for it. */
void make_mips(VkCommandBuffer cb, VkImageLayout from, VkEvent event);
/* --compute-mips: the views, sets (with --push-templates, none: a
 * template of pushes) and pipeline of the pass, and the pass. */
void create_mip_pass(void);
void compute_mips(VkCommandBuffer cb);
/* --compute-mips-once: the pass, in a submit of its own, waited for. */
void compute_mips_once(void);
/* --rewrite-source: a patch of level 0 copied from g.patch_src, which a
 * submit fills before the copy's and another fills again after it; and
 * each frame's fill of it in CB (nothing without --rewrite-source).
 * DESTROY: the buffer destroyed after the copy instead, no fill after. */
void rewrite_source(int destroy);
void rewrite_source_frame(VkCommandBuffer cb, unsigned frame);

/* vkexample_hud.c: --depth-read-only, --depth-read-only-rp */
/* The mask, a depth image, made (and with --depth-read-only-rp, the
 * passes' render passes and framebuffers), and its stripes written in
 * the upload's command buffer CB, then left read-only. */
void hud_write_mask(VkCommandBuffer cb);
/* The bars' pipeline: CUBE's (dynamic rendering, or a render pass
 * compatible with the passes') but for its shaders, vertices and depth
 * state. */
void hud_create_pipeline(const VkGraphicsPipelineCreateInfo *cube);
/* The cube's pass begun; the cube's draw, then hud_end(): the HUD passes,
 * the colour image left in TRANSFER_SRC as the render pass leaves it. */
void hud_begin(VkCommandBuffer cb);
void hud_end(VkCommandBuffer cb);
void hud_destroy(void);

/* vkexample.c: the frame's pass begun (or g.load_pass), the cube's
 * pipeline bound over the whole image */
void frame_pass_begin(VkCommandBuffer cb, VkRenderPass pass);
void bind_cube(VkCommandBuffer cb);
void draw_cube(VkCommandBuffer cb, unsigned slot, int first);

/* vkexample_strokes.c: --strokes */
void strokes_create(unsigned n);
void strokes_frame(unsigned slot, VkFence fence);
void strokes_destroy(void);

/* vkexample.c: W x H texels of the colour image from X, Y (it in
 * TRANSFER_SRC_OPTIMAL) copied into BUF, made visible to the host. */
void copy_color_to_host(VkCommandBuffer cb, VkBuffer buf, int32_t x, int32_t y, uint32_t w,
			uint32_t h);

/* vkexample_probe.c: --read-pixel */
void probe_create(void);
void probe_frame(unsigned slot);
void probe_destroy(void);
/* ... --timestamps: the slot's queries at the start and end of CB, and
 * read once its fence is waited for */
void stamps_create(void);
void stamps_begin(VkCommandBuffer cb, unsigned slot);
void stamps_end(VkCommandBuffer cb, unsigned slot);
void stamps_frame(unsigned slot, unsigned frame);
void stamps_destroy(void);

/* vkexample_pair.c: --anim-pair; the image FRAME's compute pass writes
 * and its draw samples, the set that pass writes it through */
void pair_create(void);
const struct image *pair_image(unsigned frame);
VkDescriptorSet pair_comp_set(unsigned frame);
void pair_frame(unsigned slot, unsigned frame);
void pair_destroy(void);

/* vkexample_secondary.c: --secondary; the cube's draw recorded into the
 * slot's secondary command buffer and executed in CB's pass PASS */
void secondary_create(void);
int secondary_on(void);
void secondary_draw(VkCommandBuffer cb, VkRenderPass pass, unsigned slot, int first);
void secondary_destroy(void);

#endif
