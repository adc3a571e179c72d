/*
 * Formats the replaying device lacks.  zink on llvmpipe makes its
 * VK_FORMAT_A4R4G4B4_UNORM_PACK16 textures with color-attachment usage
 * and fills them by blits from R8G8B8A8 images; NVIDIA's driver samples
 * that format but cannot render to it or blit into it, and an image made
 * so anyway lost Armagetron Advanced's menu text.  Where the device
 * cannot make an image in its format for its usage, the replay makes it
 * in one that holds each texel as it is (lib/vulkan/vkformat.h): the
 * same channels in another order (B4G4R4A4), else in more bits
 * (R8G8B8A8: NVIDIA's driver renders to no 16-bit 4444 format), the
 * fewest bytes first, then the most of what the usage does well (blits,
 * filtering, blending).
 * Whatever moves channels (draws, blits, clears, samplers, storage) then
 * works as captured: views, render passes, dynamic rendering's formats
 * and framebuffers name the new format.  What moves bytes does not: a
 * copy between the image and a buffer or an image made as captured goes
 * through a shadow image in the captured format (which the device can
 * copy with and blit with) and a blit; where the device cannot blit so,
 * or both images were made otherwise, the copy is said once for each
 * image.  Where no format serves, the
 * replay stops, naming the format and the usage the device lacks, rather
 * than hand the driver an image it cannot make.
 *
 * TRACE_REPLAY_FORMAT_LACKS=FORMAT:USAGE[,...] (tests) takes the device
 * for one that lacks FORMAT for USAGE (VK_FORMAT_R8G8B8A8_UNORM:
 * VK_IMAGE_USAGE_SAMPLED_BIT), and the format features that usage takes.
 */
#include "dump.h"
#include "replay_internal.h"
#include "vkformat.h"

#include <pthread.h>
#include <stdlib.h>

/* An image made renamed (obj.ren). */
struct rename {
	int32_t from, to;
	VkImageType type;
	VkExtent3D extent;
	uint32_t mips, layers;
	VkImage shadow;          /* in the trace's format, for copies of its bytes */
	vkd_allocation shadow_mem;
	int shadow_state;        /* 0 not tried, 1 made, -1 the device has none */
	bool said;               /* a copy of its bytes was warned of */
};

#define MAX_LACKS 8

static struct lack {
	int32_t format;
	VkImageUsageFlags usage;
} lacks[MAX_LACKS];
static uint32_t nlacks;
static pthread_once_t lacks_once = PTHREAD_ONCE_INIT;

static void read_lacks(void)
{
	const char *env = getenv("TRACE_REPLAY_FORMAT_LACKS");
	const vk_enum_info *fe = vk_enum_lookup("VkFormat");
	const vk_bitmask_info *ub = vk_bitmask_lookup("VkImageUsageFlags");
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", env ? env : "");
	for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		struct lack l = {-1, 0};
		if (colon) {
			*colon = 0;
			for (uint32_t i = 0; fe && i < fe->sig.nvalues; i++)
				if (!strcmp(fe->sig.values[i].name, item))
					l.format = (int32_t)fe->sig.values[i].value;
			for (uint32_t i = 0; ub && i < ub->sig.nflags; i++)
				if (!strcmp(ub->sig.flags[i].name, colon + 1))
					l.usage = (VkImageUsageFlags)ub->sig.flags[i].value;
		}
		if (l.format < 0 || !l.usage || nlacks == MAX_LACKS) {
			fprintf(stderr, "%s: TRACE_REPLAY_FORMAT_LACKS: %s: not FORMAT:USAGE\n",
				trace_cli_self.prog, item);
			exit(1);
		}
		lacks[nlacks++] = l;
	}
}

static VkImageUsageFlags lacked(int32_t format)
{
	pthread_once(&lacks_once, read_lacks);
	VkImageUsageFlags u = 0;
	for (uint32_t i = 0; i < nlacks; i++)
		if (lacks[i].format == format)
			u |= lacks[i].usage;
	return u;
}

/* The format features an image's usage takes (and, BETTER, those that
 * make it do its work well: a transfer's blits, a sampler's filtering,
 * an attachment's blending). */
static VkFormatFeatureFlags usage_features(VkImageUsageFlags u, bool better)
{
	static const struct { VkImageUsageFlags u; VkFormatFeatureFlags need, better; } t[] = {
		{VK_IMAGE_USAGE_TRANSFER_SRC_BIT, VK_FORMAT_FEATURE_TRANSFER_SRC_BIT,
		 VK_FORMAT_FEATURE_BLIT_SRC_BIT},
		{VK_IMAGE_USAGE_TRANSFER_DST_BIT, VK_FORMAT_FEATURE_TRANSFER_DST_BIT,
		 VK_FORMAT_FEATURE_BLIT_DST_BIT},
		{VK_IMAGE_USAGE_SAMPLED_BIT, VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT,
		 VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT},
		{VK_IMAGE_USAGE_STORAGE_BIT, VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT, 0},
		{VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT,
		 VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BLEND_BIT},
		{VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
		 VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT, 0},
	};
	VkFormatFeatureFlags f = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (u & t[i].u)
			f |= t[i].need | (better ? t[i].better : 0);
	return f;
}

/* What the device makes of FORMAT for CI's type, tiling, usage and flags. */
static VkResult image_props(VkPhysicalDevice phys, int32_t format, const VkImageCreateInfo *ci,
			    VkImageFormatProperties *p)
{
	if (ci->usage & lacked(format))
		return VK_ERROR_FORMAT_NOT_SUPPORTED;
	return vkGetPhysicalDeviceImageFormatProperties(phys, (VkFormat)format, ci->imageType,
							ci->tiling, ci->usage, ci->flags, p);
}

static VkFormatFeatureFlags features(VkPhysicalDevice phys, int32_t format, VkImageTiling tiling)
{
	VkFormatProperties fp;
	vkGetPhysicalDeviceFormatProperties(phys, (VkFormat)format, &fp);
	VkFormatFeatureFlags f = tiling == VK_IMAGE_TILING_LINEAR ? fp.linearTilingFeatures
								  : fp.optimalTilingFeatures;
	return f & ~usage_features(lacked(format), true);
}

/*
 * The rename of FROM the device has for CI (an image's create info), or
 * for a color attachment where CI is NULL: of those that serve, the one
 * with the most of the features any usage does well by, the same ranking
 * for images and attachments so that both come to the same format.  0 if
 * none serves.
 */
static int32_t choose(VkPhysicalDevice phys, int32_t from, const VkImageCreateInfo *ci,
		      VkImageFormatProperties *props)
{
	const VkFormatFeatureFlags good = usage_features(~0u, true);
	int32_t cand[32], best = 0;
	int best_tier = 1 << 30, best_score = -1;
	uint32_t n = vk_format_substitutes(from, cand, 32);
	for (uint32_t i = 0; i < n && i < 32; i++) {
		VkImageFormatProperties p;
		VkFormatFeatureFlags f = features(phys, cand[i],
						  ci ? ci->tiling : VK_IMAGE_TILING_OPTIMAL);
		if (ci ? image_props(phys, cand[i], ci, &p) != VK_SUCCESS
		       : !(f & VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT))
			continue;
		/* the same bits first, then the fewest bytes, then the most
		 * features */
		int tier = vk_format_same_bits(from, cand[i]) ? 0
							      : vk_format_layout_of(cand[i])->block_size;
		int score = __builtin_popcount(f & good);
		if (tier < best_tier || (tier == best_tier && score > best_score)) {
			best_tier = tier;
			best_score = score;
			best = cand[i];
			if (props)
				*props = p;
		}
	}
	return best;
}

/* "VK_IMAGE_USAGE_X_BIT|..." of the usage bits the device lacks FORMAT
 * for one by one, or "its usage and flags" where it is their combination */
static const char *lacked_usage(VkPhysicalDevice phys, int32_t format,
				const VkImageCreateInfo *ci, char *buf, size_t size)
{
	const vk_bitmask_info *ub = vk_bitmask_lookup("VkImageUsageFlags");
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t i = 0; ub && i < ub->sig.nflags && at < size; i++) {
		VkImageCreateInfo one = *ci;
		one.usage = (VkImageUsageFlags)ub->sig.flags[i].value;
		one.flags = 0;
		VkImageFormatProperties p;
		if (!(ci->usage & one.usage) || image_props(phys, format, &one, &p) == VK_SUCCESS)
			continue;
		at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "|" : "",
				       ub->sig.flags[i].name);
	}
	return at ? buf : "its usage and flags";
}

/* The format list a mutable image may carry, renamed as its views are. */
static void rename_list(vkr *r, VkImageCreateInfo *ci, int32_t from, int32_t to)
{
	VkImageFormatListCreateInfo *l = (VkImageFormatListCreateInfo *)vk_chain_find(
		ci->pNext, VK_STRUCTURE_TYPE_IMAGE_FORMAT_LIST_CREATE_INFO);
	if (!l || !l->viewFormatCount || !l->pViewFormats)
		return;
	VkFormat *v = trace_arena_alloc(&r->arena, l->viewFormatCount * sizeof(*v));
	for (uint32_t i = 0; i < l->viewFormatCount; i++) {
		int32_t w = vk_format_view_rename(l->pViewFormats[i], from, to);
		v[i] = (VkFormat)(w < 0 ? to : w);
	}
	l->pViewFormats = v;
}

static void say_rename(vkr *r, int32_t from, int32_t to, const char *usage)
{
	size_t n = sizeof(r->rename_said) / sizeof(r->rename_said[0]);
	for (size_t i = 0; i < n; i++) {
		if (r->rename_said[i][0] == from && r->rename_said[i][1] == to)
			return;
		if (!r->rename_said[i][0]) {
			r->rename_said[i][0] = from;
			r->rename_said[i][1] = to;
			break;
		}
	}
	vkr_warn(r, "vkCreateImage: %s has no %s image for %s; made as %s, the same channels %s",
		 r->d->vk.props.deviceName, vk_format_name(from), usage, vk_format_name(to),
		 vk_format_same_bits(from, to) ? "in another order" : "in more bits");
}

/* An image's levels, layers and extent within what the replay device
 * makes of its format (llvmpipe made an image of 4294967295 mip levels
 * and crashed drawing with it). */
static void image_limits(vkr *r, const VkImageCreateInfo *ci, const VkImageFormatProperties *p)
{
	const struct { const char *name; uint32_t v, max; } lim[] = {
		{"mipLevels", ci->mipLevels, p->maxMipLevels},
		{"arrayLayers", ci->arrayLayers, p->maxArrayLayers},
		{"extent.width", ci->extent.width, p->maxExtent.width},
		{"extent.height", ci->extent.height, p->maxExtent.height},
		{"extent.depth", ci->extent.depth, p->maxExtent.depth},
	};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if (lim[i].v > lim[i].max)
			vkr_fatal(r, "pCreateInfo: %s %u, but %s makes %u at most of this format",
				  lim[i].name, lim[i].v, r->d->vk.props.deviceName, lim[i].max);
}

int32_t vkr_image_format(vkr *r, VkImageCreateInfo *ci)
{
	/* a tiling of DRM format modifiers, video usage (of a video
	 * profile) and external memory are asked of another query, with
	 * what the chain holds; the device cannot say what it has not been
	 * asked: made as captured */
	const VkImageUsageFlags video = VK_IMAGE_USAGE_VIDEO_DECODE_DST_BIT_KHR |
		VK_IMAGE_USAGE_VIDEO_DECODE_SRC_BIT_KHR | VK_IMAGE_USAGE_VIDEO_DECODE_DPB_BIT_KHR |
		0xe000;  /* the provisional encode bits */
	if (r->checking ||
	    (ci->tiling != VK_IMAGE_TILING_OPTIMAL && ci->tiling != VK_IMAGE_TILING_LINEAR) ||
	    (ci->usage & video) ||
	    vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO))
		return 0;
	VkPhysicalDevice phys = r->d->vk.physical;
	VkImageFormatProperties p;
	VkResult res = image_props(phys, ci->format, ci, &p);
	if (res == VK_SUCCESS) {
		image_limits(r, ci, &p);
		return 0;
	}
	if (res != VK_ERROR_FORMAT_NOT_SUPPORTED)
		return 0;  /* out of memory, or a driver that cannot say: as captured */
	int32_t from = ci->format, to = choose(phys, from, ci, &p);
	char buf[512];
	const char *usage = lacked_usage(phys, from, ci, buf, sizeof(buf));
	if (!to)
		vkr_fatal(r, "pCreateInfo: %s has no %s image (tiling %s) for %s, nor one that "
			  "holds its texels", r->d->vk.props.deviceName,
			  vk_format_name(from),
			  ci->tiling == VK_IMAGE_TILING_LINEAR ? "linear" : "optimal", usage);
	say_rename(r, from, to, usage);
	ci->format = (VkFormat)to;
	rename_list(r, ci, from, to);
	image_limits(r, ci, &p);
	return from;
}

void vkr_image_renamed(vkr *r, obj *o, int32_t from, const VkImageCreateInfo *ci)
{
	struct rename *n = trace_xcalloc(1, sizeof(*n));
	n->from = from;
	n->to = ci->format;
	n->type = ci->imageType;
	n->extent = ci->extent;
	n->mips = ci->mipLevels;
	n->layers = ci->arrayLayers;
	o->ren = n;
	r->renamed++;
	/* --dump reads the image in the format it is made in (a copy of it
	 * into a buffer comes through the shadow: the trace's) */
	dump_image *im = r->dump ? vkr_dump_image(r->dump, o->cap) : NULL;
	if (im)
		im->live = ci->format;
}

void vkr_rename_free(obj *o)
{
	struct rename *n = o->ren;
	if (!n)
		return;
	if (n->shadow) {
		vkDestroyImage(o->dev->vk.device, n->shadow, NULL);
		vkd_free(&o->dev->vk, &n->shadow_mem);
	}
	free(n);
	o->ren = NULL;
}

/* Color attachment formats the device lacks, in the rename it has (the
 * same an image of that format with color-attachment usage is made in). */
static void attachment_format(VkPhysicalDevice phys, VkFormat *f)
{
	if (!vk_format_layout_of(*f) ||
	    (features(phys, *f, VK_IMAGE_TILING_OPTIMAL) & VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT))
		return;
	int32_t to = choose(phys, *f, NULL, NULL);
	if (to)
		*f = (VkFormat)to;
}

static void rendering_formats(VkPhysicalDevice phys, const void *next)
{
	VkPipelineRenderingCreateInfo *p = (VkPipelineRenderingCreateInfo *)vk_chain_find(
		next, VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO);
	for (uint32_t i = 0; p && p->pColorAttachmentFormats && i < p->colorAttachmentCount; i++)
		attachment_format(phys, (VkFormat *)&p->pColorAttachmentFormats[i]);
	VkCommandBufferInheritanceRenderingInfo *c =
		(VkCommandBufferInheritanceRenderingInfo *)vk_chain_find(
			next, VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_RENDERING_INFO);
	for (uint32_t i = 0; c && c->pColorAttachmentFormats && i < c->colorAttachmentCount; i++)
		attachment_format(phys, (VkFormat *)&c->pColorAttachmentFormats[i]);
	VkFramebufferAttachmentsCreateInfo *fa = (VkFramebufferAttachmentsCreateInfo *)vk_chain_find(
		next, VK_STRUCTURE_TYPE_FRAMEBUFFER_ATTACHMENTS_CREATE_INFO);
	for (uint32_t i = 0; fa && fa->pAttachmentImageInfos && i < fa->attachmentImageInfoCount; i++) {
		const VkFramebufferAttachmentImageInfo *ii = &fa->pAttachmentImageInfos[i];
		for (uint32_t j = 0; ii->pViewFormats && j < ii->viewFormatCount; j++)
			if (ii->usage & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT)
				attachment_format(phys, (VkFormat *)&ii->pViewFormats[j]);
	}
}

enum { AT_NONE, AT_PASS, AT_PASS2, AT_PIPELINES, AT_BEGIN, AT_FRAMEBUFFER };

int vkr_attachments_kind(const vk_command_info *cmd)
{
	static const vk_named table[] = {
		{"vkCreateRenderPass", AT_PASS},
		{"vkCreateRenderPass2", AT_PASS2},
		{"vkCreateRenderPass2KHR", AT_PASS2},
		{"vkCreateGraphicsPipelines", AT_PIPELINES},
		{"vkBeginCommandBuffer", AT_BEGIN},
		{"vkCreateFramebuffer", AT_FRAMEBUFFER},
	};
	return VK_BY_NAME(table, cmd->sig.name, AT_NONE);
}

void vkr_attachment_formats(VkPhysicalDevice phys, int kind, void *args)
{
	switch (kind) {
	case AT_PASS: {
		const VkRenderPassCreateInfo *ci = ((vk_args_vkCreateRenderPass *)args)->pCreateInfo;
		for (uint32_t i = 0; ci && ci->pAttachments && i < ci->attachmentCount; i++)
			attachment_format(phys, (VkFormat *)&ci->pAttachments[i].format);
		return;
	}
	case AT_PASS2: {
		const VkRenderPassCreateInfo2 *ci = ((vk_args_vkCreateRenderPass2 *)args)->pCreateInfo;
		for (uint32_t i = 0; ci && ci->pAttachments && i < ci->attachmentCount; i++)
			attachment_format(phys, (VkFormat *)&ci->pAttachments[i].format);
		return;
	}
	case AT_PIPELINES: {
		vk_args_vkCreateGraphicsPipelines *a = args;
		for (uint32_t i = 0; a->pCreateInfos && i < a->createInfoCount; i++)
			rendering_formats(phys, a->pCreateInfos[i].pNext);
		return;
	}
	case AT_BEGIN: {
		/* (a secondary command buffer's inheritance only) */
		const VkCommandBufferBeginInfo *bi = ((vk_args_vkBeginCommandBuffer *)args)->pBeginInfo;
		if (bi && bi->pInheritanceInfo)
			rendering_formats(phys, bi->pInheritanceInfo->pNext);
		return;
	}
	case AT_FRAMEBUFFER: {
		const VkFramebufferCreateInfo *ci = ((vk_args_vkCreateFramebuffer *)args)->pCreateInfo;
		if (ci)
			rendering_formats(phys, ci->pNext);
		return;
	}
	default:
		return;
	}
}

static obj *renamed_image(vkr *r, uint64_t cap)
{
	obj *o = cap ? vkr_obj_get(r, cap) : NULL;
	return o && o->ren ? o : NULL;
}

/* A view of image O in its format, or in a sibling of it (SRGB), in the
 * image's new format's sibling; a mutable image's view of other bits
 * reads them in the new order: said. */
static void rename_view(vkr *r, VkImageViewCreateInfo *vi, obj *o)
{
	int32_t v = vi->format, w = vk_format_view_rename(v, o->ren->from, o->ren->to);
	if (w < 0)
		vkr_fatal(r, "pCreateInfo: a %s view of an image made as %s for %s: no format "
			  "reads its channels as the image now holds them", vk_format_name(v),
			  vk_format_name(o->ren->to), vk_format_name(o->ren->from));
	if (!vk_format_same_places(v, o->ren->from))
		vkr_warn(r, "a %s view of an image made as %s for %s reads the bits there, not the "
			 "capture's",
			 vk_format_name(v), vk_format_name(o->ren->to), vk_format_name(o->ren->from));
	vi->format = (VkFormat)w;
}

/* Once for each image: a copy of O's bytes, which are not the trace's. */
static void say_bytes(vkr *r, obj *o)
{
	if (o->ren->said)
		return;
	o->ren->said = true;
	vkr_warn(r, "%s copies the bytes of an image made as %s for %s: in the new order",
		 r->call->sig->name, vk_format_name(o->ren->to), vk_format_name(o->ren->from));
}

/* O's shadow: an image in the trace's format that the device copies
 * into and out of, of O's extent, levels and layers, made at the first
 * copy that needs it.  False where the device has none, or cannot blit
 * between it and O that way (INTO: from the shadow into O). */
static bool shadow(vkr *r, obj *o, bool into)
{
	struct rename *n = o->ren;
	VkPhysicalDevice phys = r->d->vk.physical;
	if (!(features(phys, n->from, VK_IMAGE_TILING_OPTIMAL) &
	      (into ? VK_FORMAT_FEATURE_BLIT_SRC_BIT : VK_FORMAT_FEATURE_BLIT_DST_BIT)) ||
	    !(features(phys, n->to, VK_IMAGE_TILING_OPTIMAL) &
	      (into ? VK_FORMAT_FEATURE_BLIT_DST_BIT : VK_FORMAT_FEATURE_BLIT_SRC_BIT)))
		return false;
	if (n->shadow_state)
		return n->shadow_state > 0;
	n->shadow_state = -1;
	VkImageCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
		.imageType = n->type,
		.format = (VkFormat)n->from,
		.extent = n->extent,
		.mipLevels = n->mips,
		.arrayLayers = n->layers,
		.samples = VK_SAMPLE_COUNT_1_BIT,
		.tiling = VK_IMAGE_TILING_OPTIMAL,
		.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
		.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
	};
	VkImageFormatProperties p;
	if (image_props(phys, n->from, &ci, &p) != VK_SUCCESS)
		return false;
	VkDevice dev = r->d->vk.device;
	if (vkCreateImage(dev, &ci, NULL, &n->shadow) != VK_SUCCESS) {
		n->shadow = VK_NULL_HANDLE;
		return false;
	}
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(dev, n->shadow, &req);
	uint32_t type;
	vkd_request rq = {.size = req.size, .alignment = req.alignment, .kind = VKD_KIND_OPTIMAL,
			  .dedicated = true, .dedicated_image = n->shadow};
	if (vkd_find_memory_type(&r->d->vk, req.memoryTypeBits, 0,
				 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, 0, &type) < 0 ||
	    vkd_alloc(&r->d->vk, NULL, type, &rq, &n->shadow_mem) != VK_SUCCESS ||
	    vkBindImageMemory(dev, n->shadow, n->shadow_mem.memory, n->shadow_mem.offset) !=
		    VK_SUCCESS) {
		vkDestroyImage(dev, n->shadow, NULL);
		vkd_free(&r->d->vk, &n->shadow_mem);
		n->shadow = VK_NULL_HANDLE;
		return false;
	}
	n->shadow_state = 1;
	return true;
}

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst,
		    uint32_t n, const VkImageMemoryBarrier *b)
{
	vkCmdPipelineBarrier(cb, src, dst, 0, 0, NULL, 0, NULL, n, b);
}

/* A copy of bytes into or out of a renamed image: where the call names
 * the image and its layout, and the image's regions, as blits between it
 * and its shadow (the same places in both). */
typedef struct via {
	bool into;
	VkImage *image;
	VkImageLayout *layout;
	uint32_t n;
	VkImageBlit *blits;
} via;

static VkImageBlit blit_of(VkImageSubresourceLayers s, VkOffset3D at, VkExtent3D ex)
{
	VkOffset3D end = {at.x + (int32_t)ex.width, at.y + (int32_t)ex.height,
			  at.z + (int32_t)ex.depth};
	return (VkImageBlit){s, {at, end}, s, {at, end}};
}

/* A copy between a buffer and an image, of either form and direction,
 * whose image is renamed (*O, NULL for none: nothing more is read);
 * false for a region of another kind (a rotated copy's). */
static bool via_buffer(vkr *r, const cmd_entry *e, void *args, via *v, obj **o)
{
	const char *n = e->cmd->sig.name;
	bool two = strchr(n, '2');
	const VkBufferImageCopy *r1 = NULL;
	const VkBufferImageCopy2 *r2 = NULL;
	v->into = !strncmp(n, "vkCmdCopyBufferToImage", 22);
	if (v->into && !two) {
		vk_args_vkCmdCopyBufferToImage *a = args;
		*v = (via){true, &a->dstImage, &a->dstImageLayout, a->regionCount, NULL};
		r1 = a->pRegions;
	} else if (v->into) {
		VkCopyBufferToImageInfo2 *i = (VkCopyBufferToImageInfo2 *)
			((vk_args_vkCmdCopyBufferToImage2 *)args)->pCopyBufferToImageInfo;
		if (!i)
			return false;
		*v = (via){true, &i->dstImage, &i->dstImageLayout, i->regionCount, NULL};
		r2 = i->pRegions;
	} else if (!two) {
		vk_args_vkCmdCopyImageToBuffer *a = args;
		*v = (via){false, &a->srcImage, &a->srcImageLayout, a->regionCount, NULL};
		r1 = a->pRegions;
	} else {
		VkCopyImageToBufferInfo2 *i = (VkCopyImageToBufferInfo2 *)
			((vk_args_vkCmdCopyImageToBuffer2 *)args)->pCopyImageToBufferInfo;
		if (!i)
			return false;
		*v = (via){false, &i->srcImage, &i->srcImageLayout, i->regionCount, NULL};
		r2 = i->pRegions;
	}
	*o = renamed_image(r, H(*v->image));
	if (!*o)
		return false;
	v->blits = trace_arena_alloc(&r->arena, (size_t)v->n * sizeof(*v->blits));
	for (uint32_t i = 0; i < v->n; i++) {
		if (r2 && r2[i].pNext)
			return false;
		v->blits[i] = r2 ? blit_of(r2[i].imageSubresource, r2[i].imageOffset, r2[i].imageExtent)
				 : blit_of(r1[i].imageSubresource, r1[i].imageOffset, r1[i].imageExtent);
	}
	return true;
}

/* A copy between two images, where one of them is renamed (INTO: the
 * destination) and the other is not, or is renamed otherwise. */
static bool via_image(vkr *r, const cmd_entry *e, void *args, via *v, bool into)
{
	const VkImageCopy *r1 = NULL;
	const VkImageCopy2 *r2 = NULL;
	if (!strchr(e->cmd->sig.name, '2')) {
		vk_args_vkCmdCopyImage *a = args;
		*v = into ? (via){true, &a->dstImage, &a->dstImageLayout, a->regionCount, NULL}
			  : (via){false, &a->srcImage, &a->srcImageLayout, a->regionCount, NULL};
		r1 = a->pRegions;
	} else {
		VkCopyImageInfo2 *i = (VkCopyImageInfo2 *)((vk_args_vkCmdCopyImage2 *)args)->pCopyImageInfo;
		if (!i)
			return false;
		*v = into ? (via){true, &i->dstImage, &i->dstImageLayout, i->regionCount, NULL}
			  : (via){false, &i->srcImage, &i->srcImageLayout, i->regionCount, NULL};
		r2 = i->pRegions;
	}
	v->blits = trace_arena_alloc(&r->arena, (size_t)v->n * sizeof(*v->blits));
	for (uint32_t i = 0; i < v->n; i++) {
		if (r2 && r2[i].pNext)
			return false;
		VkImageSubresourceLayers s = into ? (r2 ? r2[i].dstSubresource : r1[i].dstSubresource)
						  : (r2 ? r2[i].srcSubresource : r1[i].srcSubresource);
		VkOffset3D at = into ? (r2 ? r2[i].dstOffset : r1[i].dstOffset)
				     : (r2 ? r2[i].srcOffset : r1[i].srcOffset);
		v->blits[i] = blit_of(s, at, r2 ? r2[i].extent : r1[i].extent);
	}
	return true;
}

/*
 * A copy of bytes into or out of renamed image O, by way of its shadow: a
 * copy into O goes into the shadow, as the trace's format lays its bytes
 * out, then a blit takes it into O channel by channel; a copy out of O
 * is a blit into the shadow, then the copy from there.  The call itself
 * is made (vkr_invoke) with the shadow for O; barriers on both images
 * around the blit, whatever stages the program's own named.
 */
static void through_shadow(vkr *r, const cmd_entry *e, void *args, obj *o, via *v)
{
	vkr_remap_args(r, e->cmd, args);
	VkCommandBuffer cb;
	memcpy(&cb, (uint8_t *)args + e->cmd->params[0].offset, sizeof(cb));
	VkImageLayout layout = *v->layout;
	VkImage img = (VkImage)(uintptr_t)o->live, sh = o->ren->shadow;
	VkImageSubresourceRange all = {VK_IMAGE_ASPECT_COLOR_BIT, 0, VK_REMAINING_MIP_LEVELS, 0,
				       VK_REMAINING_ARRAY_LAYERS};
	VkImageMemoryBarrier b[2] = {
		{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, VK_ACCESS_MEMORY_WRITE_BIT,
		 v->into ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT, layout, layout,
		 VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, img, all},
		{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
		 VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		 VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, sh, all},
	};
	barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 2, b);
	b[1].srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
	b[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
	b[1].oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
	b[1].newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
	if (!v->into) {
		/* out: O's channels into the shadow, which the copy then reads */
		vkCmdBlitImage(cb, img, layout, sh, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, v->n,
			       v->blits, VK_FILTER_NEAREST);
		barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 1, &b[1]);
	}
	*v->image = sh;
	*v->layout = v->into ? VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
			     : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
	vkr_invoke(r, e, args);
	if (!v->into)
		return;
	/* in: the shadow's bytes into O's channels */
	barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 1, &b[1]);
	vkCmdBlitImage(cb, sh, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, img, layout, v->n, v->blits,
		       VK_FILTER_NEAREST);
	b[0].srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
	b[0].dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
	barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 1, &b[0]);
}

/* Whether two images hold their bytes alike: neither renamed, or both
 * the same way. */
static bool alike(const obj *a, const obj *b)
{
	if (!a || !b)
		return !a && !b;
	return a->ren->from == b->ren->from && a->ren->to == b->ren->to;
}

bool vkr_format_note(vkr *r, const cmd_entry *e, void *args)
{
	switch ((enum special)e->special) {
	case SP_CREATE_VIEW: {
		VkImageViewCreateInfo *vi =
			(VkImageViewCreateInfo *)((vk_args_vkCreateImageView *)args)->pCreateInfo;
		obj *o = vi ? renamed_image(r, H(vi->image)) : NULL;
		if (o)
			rename_view(r, vi, o);
		return false;
	}
	case SP_BUFFER_IMAGE: {
		via v;
		obj *o = NULL;
		bool ok = via_buffer(r, e, args, &v, &o);
		if (!o)
			return false;
		if (ok && shadow(r, o, v.into)) {
			through_shadow(r, e, args, o, &v);
			return true;
		}
		say_bytes(r, o);
		return false;
	}
	case SP_IMAGE_IMAGE: {
		uint64_t src, dst;
		if (!strchr(e->cmd->sig.name, '2')) {
			src = H(((vk_args_vkCmdCopyImage *)args)->srcImage);
			dst = H(((vk_args_vkCmdCopyImage *)args)->dstImage);
		} else {
			const VkCopyImageInfo2 *i = ((vk_args_vkCmdCopyImage2 *)args)->pCopyImageInfo;
			src = i ? H(i->srcImage) : 0;
			dst = i ? H(i->dstImage) : 0;
		}
		obj *s = renamed_image(r, src), *d = renamed_image(r, dst), *o = d ? d : s;
		if (alike(s, d))
			return false;
		via v;
		/* one side renamed: through its shadow; both, otherwise: said */
		if (!(s && d) && via_image(r, e, args, &v, d != NULL) && shadow(r, o, v.into)) {
			through_shadow(r, e, args, o, &v);
			return true;
		}
		say_bytes(r, o);
		return false;
	}
	default:
		return false;
	}
}
