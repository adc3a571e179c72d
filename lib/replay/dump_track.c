/*
 * --dump: which images and buffers each recorded command writes, followed
 * as the trace records them (capture handles; before the call is made).
 *
 * A command buffer keeps the events of its commands since its
 * vkBeginCommandBuffer: a transfer's destination, a pass's attachments, a
 * draw's or dispatch's storage descriptors, an image's new layout.  A
 * submit applies them in order: the layouts to each image's last known
 * one, the writes to what the call dumps.  Layouts are one per image, not
 * per mip or layer: the last barrier, copy or pass that named the image
 * says it (a program that leaves mips in different layouts is read as the
 * last one says).
 */
#include "dump.h"
#include "vkpass.h"

enum code {
	C_NONE = 1,
	C_CREATE_IMAGE, C_CREATE_BUFFER, C_CREATE_VIEW, C_CREATE_BVIEW, C_CREATE_FB,
	C_CREATE_RP, C_CREATE_RP2, C_CREATE_TEMPLATE, C_ALLOC_SETS, C_UPDATE_SETS,
	C_UPDATE_TEMPLATE, C_CREATE_SWAPCHAIN, C_SWAPCHAIN_IMAGES, C_BEGIN_CB,
	C_COPY_BUFFER, C_COPY_BUFFER2, C_COPY_IMAGE, C_COPY_IMAGE2, C_COPY_B2I, C_COPY_B2I2,
	C_COPY_I2B, C_COPY_I2B2, C_BLIT, C_BLIT2, C_RESOLVE, C_RESOLVE2, C_FILL, C_UPDATE_BUFFER,
	C_CLEAR_COLOR, C_CLEAR_DS, C_QUERY_COPY, C_BARRIER, C_BARRIER2, C_WAIT_EVENTS,
	C_WAIT_EVENTS2, C_BEGIN_RP, C_BEGIN_RP2, C_BEGIN_RENDERING, C_END_PASS, C_BIND_SETS,
	C_PUSH_SET, C_PUSH_TEMPLATE, C_DISPATCH, C_DRAW, C_TRACE_RAYS, C_EXEC_CMDS,
	C_SUBMIT, C_SUBMIT2,
};

typedef struct named_code {
	const char *name;
	uint8_t code;
} named_code;

static const named_code codes[] = {
	{"vkCreateImage", C_CREATE_IMAGE},
	{"vkCreateBuffer", C_CREATE_BUFFER},
	{"vkCreateImageView", C_CREATE_VIEW},
	{"vkCreateBufferView", C_CREATE_BVIEW},
	{"vkCreateFramebuffer", C_CREATE_FB},
	{"vkCreateRenderPass", C_CREATE_RP},
	{"vkCreateRenderPass2", C_CREATE_RP2},
	{"vkCreateDescriptorUpdateTemplate", C_CREATE_TEMPLATE},
	{"vkAllocateDescriptorSets", C_ALLOC_SETS},
	{"vkUpdateDescriptorSets", C_UPDATE_SETS},
	{"vkUpdateDescriptorSetWithTemplate", C_UPDATE_TEMPLATE},
	{"vkCreateSwapchainKHR", C_CREATE_SWAPCHAIN},
	{"vkGetSwapchainImagesKHR", C_SWAPCHAIN_IMAGES},
	{"vkBeginCommandBuffer", C_BEGIN_CB},
	{"vkCmdCopyBuffer", C_COPY_BUFFER},
	{"vkCmdCopyBuffer2", C_COPY_BUFFER2},
	{"vkCmdCopyImage", C_COPY_IMAGE},
	{"vkCmdCopyImage2", C_COPY_IMAGE2},
	{"vkCmdCopyBufferToImage", C_COPY_B2I},
	{"vkCmdCopyBufferToImage2", C_COPY_B2I2},
	{"vkCmdCopyImageToBuffer", C_COPY_I2B},
	{"vkCmdCopyImageToBuffer2", C_COPY_I2B2},
	{"vkCmdBlitImage", C_BLIT},
	{"vkCmdBlitImage2", C_BLIT2},
	{"vkCmdResolveImage", C_RESOLVE},
	{"vkCmdResolveImage2", C_RESOLVE2},
	{"vkCmdFillBuffer", C_FILL},
	{"vkCmdUpdateBuffer", C_UPDATE_BUFFER},
	{"vkCmdClearColorImage", C_CLEAR_COLOR},
	{"vkCmdClearDepthStencilImage", C_CLEAR_DS},
	{"vkCmdCopyQueryPoolResults", C_QUERY_COPY},
	{"vkCmdPipelineBarrier", C_BARRIER},
	{"vkCmdPipelineBarrier2", C_BARRIER2},
	{"vkCmdWaitEvents", C_WAIT_EVENTS},
	{"vkCmdWaitEvents2", C_WAIT_EVENTS2},
	{"vkCmdBeginRenderPass", C_BEGIN_RP},
	{"vkCmdBeginRenderPass2", C_BEGIN_RP2},
	{"vkCmdBeginRendering", C_BEGIN_RENDERING},
	{"vkCmdEndRenderPass", C_END_PASS},
	{"vkCmdEndRenderPass2", C_END_PASS},
	{"vkCmdEndRendering", C_END_PASS},
	{"vkCmdBindDescriptorSets", C_BIND_SETS},
	{"vkCmdPushDescriptorSet", C_PUSH_SET},
	{"vkCmdPushDescriptorSetKHR", C_PUSH_SET},
	{"vkCmdPushDescriptorSetWithTemplate", C_PUSH_TEMPLATE},
	{"vkCmdPushDescriptorSetWithTemplateKHR", C_PUSH_TEMPLATE},
	{"vkCmdExecuteCommands", C_EXEC_CMDS},
	{"vkQueueSubmit", C_SUBMIT},
	{"vkQueueSubmit2", C_SUBMIT2},
};

static enum code code_of(dump_state *d, const vk_command_info *cmd)
{
	uint64_t *h = tmap_at(&d->codes, (uint64_t)(uintptr_t)cmd, 0);
	if (h)
		return (enum code)*h;
	const char *n = cmd->alias_of ? cmd->alias_of : cmd->sig.name;
	enum code c = C_NONE;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(n, codes[i].name))
			c = (enum code)codes[i].code;
	if (c == C_NONE && cmd->action == VK_ACTION_RECORD) {
		if (!strncmp(n, "vkCmdDispatch", 13))
			c = C_DISPATCH;
		else if (!strncmp(n, "vkCmdDraw", 9))
			c = C_DRAW;
		else if (!strncmp(n, "vkCmdTraceRays", 14))
			c = C_TRACE_RAYS;
	}
	tmap_set(&d->codes, (uint64_t)(uintptr_t)cmd, 0, c);
	return c;
}


static void *get_ptr(const tmap *m, uint64_t cap)
{
	uint64_t *h = cap ? tmap_at(m, cap, 0) : NULL;
	return h ? (void *)(uintptr_t)*h : NULL;
}

/* Puts P for CAP, freeing what was there (a capture value made again). */
static void put_ptr(tmap *m, uint64_t cap, void *p)
{
	uint64_t old;
	if (!cap) {
		free(p);
		return;
	}
	if (tmap_del(m, cap, 0, &old))
		free((void *)(uintptr_t)old);
	tmap_set(m, cap, 0, H(p));
}

dump_cb *vkr_dump_cb(dump_state *d, uint64_t cap)
{
	dump_cb *cb = get_ptr(&d->cbs, cap);
	if (!cb && cap) {
		cb = trace_xcalloc(1, sizeof(*cb));
		tmap_set(&d->cbs, cap, 0, H(cb));
	}
	return cb;
}

dump_image *vkr_dump_image(dump_state *d, uint64_t cap)
{
	return get_ptr(&d->images, cap);
}

static uint64_t image_of_view(dump_state *d, uint64_t view)
{
	uint64_t *h = view ? tmap_at(&d->views, view, 0) : NULL;
	return h ? *h : 0;
}

static void event(dump_cb *cb, uint64_t no, uint8_t kind, uint64_t cap, int32_t layout,
		  uint8_t role, uint8_t index)
{
	if (!cap)
		return;
	if (cb->n == cb->cap) {
		cb->cap = cb->cap ? cb->cap * 2 : 16;
		cb->ev = trace_xrealloc(cb->ev, cb->cap * sizeof(*cb->ev));
	}
	cb->ev[cb->n++] = (dump_event){.cap = cap, .no = no, .layout = layout, .kind = kind,
				       .role = role, .index = index};
}

static void write_image(dump_cb *cb, uint64_t no, uint64_t cap, int32_t layout)
{
	event(cb, no, EV_WRITE_IMAGE, cap, layout, ROLE_DST, 0);
}

static void write_buffer(dump_cb *cb, uint64_t no, uint64_t cap)
{
	event(cb, no, EV_WRITE_BUFFER, cap, -1, ROLE_DST, 0);
}

static void copy_to_buffer(dump_state *d, dump_cb *cb, uint64_t no, uint64_t image,
			   uint64_t buffer, const VkBufferImageCopy *r1, const VkBufferImageCopy2 *r2,
			   uint32_t n)
{
	dump_image *im = vkr_dump_image(d, image);
	for (uint32_t i = 0; i < n; i++) {
		event(cb, no, EV_WRITE_BUFFER, buffer, -1, ROLE_DST, 0);
		if (!cb->n || cb->ev[cb->n - 1].cap != buffer)
			return;
		dump_event *e = &cb->ev[cb->n - 1];
		e->has_copy = true;
		e->copy = r1 ? (dump_copy){r1[i].bufferOffset, r1[i].bufferRowLength,
			r1[i].bufferImageHeight, r1[i].imageExtent.width, r1[i].imageExtent.height,
			r1[i].imageExtent.depth, im ? (int32_t)im->format : -1}
			: (dump_copy){r2[i].bufferOffset, r2[i].bufferRowLength, r2[i].bufferImageHeight,
			r2[i].imageExtent.width, r2[i].imageExtent.height, r2[i].imageExtent.depth,
			im ? (int32_t)im->format : -1};
	}
}

/* Where a transfer command's arguments hold the image or buffer it writes,
 * and the image's layout: at those offsets in its arguments or, for the
 * commands of VK_KHR_copy_commands2, in the struct that its argument at
 * INFO points at (0: none; the command buffer is every command's first). */
typedef struct transfer_dst {
	bool image;
	uint16_t info, dst, layout;
} transfer_dst;

static const transfer_dst transfer_dsts[] = {
	[C_COPY_BUFFER] = {false, 0, offsetof(vk_args_vkCmdCopyBuffer, dstBuffer), 0},
	[C_COPY_BUFFER2] = {false, offsetof(vk_args_vkCmdCopyBuffer2, pCopyBufferInfo),
			    offsetof(VkCopyBufferInfo2, dstBuffer), 0},
	[C_COPY_IMAGE] = {true, 0, offsetof(vk_args_vkCmdCopyImage, dstImage),
			  offsetof(vk_args_vkCmdCopyImage, dstImageLayout)},
	[C_COPY_IMAGE2] = {true, offsetof(vk_args_vkCmdCopyImage2, pCopyImageInfo),
			   offsetof(VkCopyImageInfo2, dstImage),
			   offsetof(VkCopyImageInfo2, dstImageLayout)},
	[C_COPY_B2I] = {true, 0, offsetof(vk_args_vkCmdCopyBufferToImage, dstImage),
			offsetof(vk_args_vkCmdCopyBufferToImage, dstImageLayout)},
	[C_COPY_B2I2] = {true, offsetof(vk_args_vkCmdCopyBufferToImage2, pCopyBufferToImageInfo),
			 offsetof(VkCopyBufferToImageInfo2, dstImage),
			 offsetof(VkCopyBufferToImageInfo2, dstImageLayout)},
	[C_BLIT] = {true, 0, offsetof(vk_args_vkCmdBlitImage, dstImage),
		    offsetof(vk_args_vkCmdBlitImage, dstImageLayout)},
	[C_BLIT2] = {true, offsetof(vk_args_vkCmdBlitImage2, pBlitImageInfo),
		     offsetof(VkBlitImageInfo2, dstImage), offsetof(VkBlitImageInfo2, dstImageLayout)},
	[C_RESOLVE] = {true, 0, offsetof(vk_args_vkCmdResolveImage, dstImage),
		       offsetof(vk_args_vkCmdResolveImage, dstImageLayout)},
	[C_RESOLVE2] = {true, offsetof(vk_args_vkCmdResolveImage2, pResolveImageInfo),
			offsetof(VkResolveImageInfo2, dstImage),
			offsetof(VkResolveImageInfo2, dstImageLayout)},
	[C_FILL] = {false, 0, offsetof(vk_args_vkCmdFillBuffer, dstBuffer), 0},
	[C_UPDATE_BUFFER] = {false, 0, offsetof(vk_args_vkCmdUpdateBuffer, dstBuffer), 0},
	[C_QUERY_COPY] = {false, 0, offsetof(vk_args_vkCmdCopyQueryPoolResults, dstBuffer), 0},
	[C_CLEAR_COLOR] = {true, 0, offsetof(vk_args_vkCmdClearColorImage, image),
			   offsetof(vk_args_vkCmdClearColorImage, imageLayout)},
	[C_CLEAR_DS] = {true, 0, offsetof(vk_args_vkCmdClearDepthStencilImage, image),
			offsetof(vk_args_vkCmdClearDepthStencilImage, imageLayout)},
};

static void transfer_write(dump_cb *cb, uint64_t no, const transfer_dst *t, const void *args)
{
	const uint8_t *at = args;
	if (t->info) {
		memcpy(&at, at + t->info, sizeof(at));
		if (!at)
			return;
	}
	if (!t->image) {
		VkBuffer buffer;
		memcpy(&buffer, at + t->dst, sizeof(buffer));
		write_buffer(cb, no, H(buffer));
		return;
	}
	VkImage image;
	VkImageLayout l;
	memcpy(&image, at + t->dst, sizeof(image));
	memcpy(&l, at + t->layout, sizeof(l));
	write_image(cb, no, H(image), (int32_t)l);
}

static void layout(dump_cb *cb, uint64_t no, uint64_t image, VkImageLayout l)
{
	event(cb, no, EV_LAYOUT, image, (int32_t)l, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Descriptor sets: their storage descriptors. */

static bool storage_type(VkDescriptorType t)
{
	return t == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE || t == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER ||
	       t == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC ||
	       t == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
}

static void set_put(dump_set *s, uint32_t binding, uint32_t element, uint8_t what, uint64_t cap,
		    int32_t lay)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->d[i].binding == binding && s->d[i].element == element) {
			s->d[i] = (dump_desc){binding, element, cap, what, lay};
			return;
		}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->d = trace_xrealloc(s->d, s->cap * sizeof(*s->d));
	}
	s->d[s->n++] = (dump_desc){binding, element, cap, what, lay};
}

/* A descriptor written into set CTX: kept where it is a storage one. */
static void set_write(void *ctx, const vk_descriptor *x)
{
	dump_set *s = ctx;
	if (!storage_type(x->type))
		return;
	if (x->image)
		set_put(s, x->binding, x->element, 0, H(x->image->imageView),
			(int32_t)x->image->imageLayout);
	else if (x->texel_view)
		set_put(s, x->binding, x->element, 2, *x->texel_view, -1);
	else if (x->buffer)
		set_put(s, x->binding, x->element, 1, H(x->buffer->buffer), -1);
}

static dump_set *set_of(dump_state *d, uint64_t cap)
{
	dump_set *s = get_ptr(&d->sets, cap);
	if (!s && cap) {
		s = trace_xcalloc(1, sizeof(*s));
		tmap_set(&d->sets, cap, 0, H(s));
	}
	return s;
}

static void set_free(dump_set *s)
{
	if (s)
		free(s->d);
	free(s);
}

/* The template's descriptors in pData (a blob of the record) into S. */
static void tmpl_write(vkr *r, uint64_t tcap, const void *data, dump_set *s)
{
	uint64_t *h = tmap_at(&r->templates, tcap, TAG_TEMPLATE);
	const tmpl *t = h ? (const tmpl *)(uintptr_t)*h : NULL;
	const trace_call *c = r->call;
	uint64_t size = 0;
	for (uint32_t i = 0; i < c->sig->nargs; i++)
		if (!strcmp(c->sig->arg_names[i], "pData") && c->args[i].kind == TRACE_BLOB)
			size = c->args[i].len;
	if (!t || !data || !s)
		return;
	vk_template_descriptors(t->e, t->n, data, size, set_write, s);
}

static int bind_index(VkPipelineBindPoint bp)
{
	switch (bp) {
	case VK_PIPELINE_BIND_POINT_GRAPHICS: return 0;
	case VK_PIPELINE_BIND_POINT_COMPUTE: return 1;
	case VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR: return 2;
	default: return -1;
	}
}

/* A draw's or dispatch's writes: the storage descriptors bound at BP. */
static void shader_writes(dump_state *d, dump_cb *cb, uint64_t no, int bp)
{
	if (bp < 0)
		return;
	for (int s = 0; s < 33; s++) {
		const dump_set *set = s < 32 ? get_ptr(&d->sets, cb->sets[bp][s]) : &cb->push[bp];
		for (size_t i = 0; set && i < set->n; i++) {
			const dump_desc *x = &set->d[i];
			if (x->what == 0) {
				event(cb, no, EV_WRITE_IMAGE, image_of_view(d, x->cap), x->layout,
				      ROLE_STORAGE, 0);
			} else {
				uint64_t buf = x->cap;
				if (x->what == 2) {
					uint64_t *h = tmap_at(&d->bviews, x->cap, 0);
					buf = h ? *h : 0;
				}
				event(cb, no, EV_WRITE_BUFFER, buf, -1, ROLE_STORAGE, 0);
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* Render passes. */

/* role, index, final layout of each attachment a subpass writes */
static uint32_t *pass_make(uint32_t n)
{
	uint32_t *p = trace_xcalloc(1 + 3 * (size_t)n, sizeof(uint32_t));
	p[0] = n;
	for (uint32_t i = 0; i < n; i++)
		p[1 + 3 * i] = UINT32_MAX;  /* not written */
	return p;
}

static void pass_role(uint32_t *p, uint32_t att, uint32_t role, uint32_t index)
{
	if (att != VK_ATTACHMENT_UNUSED && att < p[0] && p[1 + 3 * att] == UINT32_MAX) {
		p[1 + 3 * att] = role;
		p[2 + 3 * att] = index;
	}
}

/* A render pass made (vkCreateRenderPass's in the second form): each
 * attachment's final layout and its roles in the subpasses. */
static void pass_made(dump_state *d, const VkRenderPassCreateInfo2 *ci, const VkRenderPass *made)
{
	if (!ci || !made || !*made)
		return;
	uint32_t n = ci->pAttachments ? ci->attachmentCount : 0;
	uint32_t *p = pass_make(n);
	for (uint32_t i = 0; i < n; i++)
		p[3 + 3 * i] = (uint32_t)ci->pAttachments[i].finalLayout;
	for (uint32_t s = 0; ci->pSubpasses && s < ci->subpassCount; s++) {
		const VkSubpassDescription2 *sp = &ci->pSubpasses[s];
		for (uint32_t i = 0; sp->pColorAttachments && i < sp->colorAttachmentCount; i++) {
			pass_role(p, sp->pColorAttachments[i].attachment, ROLE_COLOR, i);
			if (sp->pResolveAttachments)
				pass_role(p, sp->pResolveAttachments[i].attachment, ROLE_RESOLVE, i);
		}
		if (sp->pDepthStencilAttachment)
			pass_role(p, sp->pDepthStencilAttachment->attachment, ROLE_DEPTH, 0);
	}
	put_ptr(&d->passes, H(*made), p);
}

static void pass_begin(dump_state *d, dump_cb *cb, uint64_t no, const VkRenderPassBeginInfo *bi)
{
	if (!bi)
		return;
	const uint32_t *p = get_ptr(&d->passes, H(bi->renderPass));
	const uint64_t *fb = get_ptr(&d->fbs, H(bi->framebuffer));
	const VkImageView *views = NULL;
	uint32_t nviews = 0;
	for (const VkBaseInStructure *b = bi->pNext; b; b = b->pNext)
		if (b->sType == VK_STRUCTURE_TYPE_RENDER_PASS_ATTACHMENT_BEGIN_INFO) {
			const VkRenderPassAttachmentBeginInfo *ab = (const void *)b;
			views = ab->pAttachments;
			nviews = ab->attachmentCount;
		}
	cb->in_pass = true;
	cb->pass_first = cb->n;
	for (uint32_t i = 0; p && i < p[0]; i++) {
		if (p[1 + 3 * i] == UINT32_MAX)
			continue;
		uint64_t view = views ? (i < nviews ? H(views[i]) : 0) : fb && i < fb[0] ? fb[1 + i] : 0;
		event(cb, no, EV_WRITE_IMAGE, image_of_view(d, view), (int32_t)p[3 + 3 * i],
		      (uint8_t)p[1 + 3 * i], (uint8_t)p[2 + 3 * i]);
	}
	cb->pass_end = cb->n;
}

static void rendering_begin(dump_state *d, dump_cb *cb, uint64_t no, const VkRenderingInfo *ri)
{
	if (!ri)
		return;
	cb->in_pass = !(ri->flags & VK_RENDERING_SUSPENDING_BIT);
	cb->pass_first = cb->n;
	for (uint32_t i = 0; ri->pColorAttachments && i < ri->colorAttachmentCount; i++) {
		const VkRenderingAttachmentInfo *a = &ri->pColorAttachments[i];
		event(cb, no, EV_WRITE_IMAGE, image_of_view(d, H(a->imageView)), (int32_t)a->imageLayout,
		      ROLE_COLOR, (uint8_t)i);
		if (a->resolveMode)
			event(cb, no, EV_WRITE_IMAGE, image_of_view(d, H(a->resolveImageView)),
			      (int32_t)a->resolveImageLayout, ROLE_RESOLVE, (uint8_t)i);
	}
	const VkRenderingAttachmentInfo *ds[2] = {ri->pDepthAttachment, ri->pStencilAttachment};
	for (int k = 0; k < 2; k++)
		if (ds[k] && ds[k]->imageView && (!k || !ds[0] || ds[0]->imageView != ds[1]->imageView))
			event(cb, no, EV_WRITE_IMAGE, image_of_view(d, H(ds[k]->imageView)),
			      (int32_t)ds[k]->imageLayout, ROLE_DEPTH, 0);
	cb->pass_end = cb->n;
}

static void barriers(dump_cb *cb, uint64_t no, const VkImageMemoryBarrier *b, uint32_t n)
{
	for (uint32_t i = 0; b && i < n; i++)
		if (b[i].newLayout != VK_IMAGE_LAYOUT_UNDEFINED)
			layout(cb, no, H(b[i].image), b[i].newLayout);
}

static void dependency(dump_cb *cb, uint64_t no, const VkDependencyInfo *di)
{
	for (uint32_t i = 0; di && di->pImageMemoryBarriers && i < di->imageMemoryBarrierCount; i++)
		if (di->pImageMemoryBarriers[i].newLayout != VK_IMAGE_LAYOUT_UNDEFINED)
			layout(cb, no, H(di->pImageMemoryBarriers[i].image),
			       di->pImageMemoryBarriers[i].newLayout);
}

/* ------------------------------------------------------------------ */
/* What a record does, before it is made. */

static uint64_t cb_arg(const void *args)
{
	VkCommandBuffer c;
	memcpy(&c, args, sizeof(c));  /* every vkCmd* has it first */
	return H(c);
}

static dump_image *image_new(dump_state *d, uint64_t cap)
{
	dump_image *im = trace_xcalloc(1, sizeof(*im));
	put_ptr(&d->images, cap, im);
	return im;
}

void vkr_dump_track(vkr *r, const cmd_entry *e, void *args)
{
	dump_state *d = r->dump;
	enum code code = code_of(d, e->cmd);
	uint64_t no = r->call->no;
	dump_cb *cb = e->cmd->action == VK_ACTION_RECORD || code == C_BEGIN_CB
		? vkr_dump_cb(d, cb_arg(args)) : NULL;
	if (!cb && e->cmd->action == VK_ACTION_RECORD)
		return;
	switch (code) {
	case C_NONE:
	case C_SUBMIT:
	case C_SUBMIT2:
		return;
	case C_CREATE_IMAGE: {
		vk_args_vkCreateImage *a = args;
		VkImageCreateInfo *ci = (VkImageCreateInfo *)a->pCreateInfo;
		if (!ci || !a->pImage || !*a->pImage)
			return;
		dump_image *im = image_new(d, H(*a->pImage));
		*im = (dump_image){ci->imageType, ci->format, ci->extent, ci->mipLevels, ci->arrayLayers,
				   ci->samples, ci->usage, ci->flags, (int32_t)ci->initialLayout,
				   ci->format};
		/* to be read by a copy (a transient attachment cannot be) */
		VkFormatProperties fp;
		vkGetPhysicalDeviceFormatProperties(r->d->vk.physical, ci->format, &fp);
		VkFormatFeatureFlags f = ci->tiling == VK_IMAGE_TILING_LINEAR ? fp.linearTilingFeatures
									: fp.optimalTilingFeatures;
		if (!(ci->usage & VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT) &&
		    (f & VK_FORMAT_FEATURE_TRANSFER_SRC_BIT))
			ci->usage |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
		im->usage = ci->usage;
		return;
	}
	case C_CREATE_BUFFER: {
		vk_args_vkCreateBuffer *a = args;
		if (a->pCreateInfo)
			((VkBufferCreateInfo *)a->pCreateInfo)->usage |= VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
		return;
	}
	case C_CREATE_VIEW: {
		vk_args_vkCreateImageView *a = args;
		if (a->pCreateInfo && a->pView && *a->pView)
			tmap_set(&d->views, H(*a->pView), 0, H(a->pCreateInfo->image));
		return;
	}
	case C_CREATE_BVIEW: {
		vk_args_vkCreateBufferView *a = args;
		if (a->pCreateInfo && a->pView && *a->pView)
			tmap_set(&d->bviews, H(*a->pView), 0, H(a->pCreateInfo->buffer));
		return;
	}
	case C_CREATE_FB: {
		vk_args_vkCreateFramebuffer *a = args;
		const VkFramebufferCreateInfo *ci = a->pCreateInfo;
		if (!ci || !a->pFramebuffer || !*a->pFramebuffer)
			return;
		bool imageless = ci->flags & VK_FRAMEBUFFER_CREATE_IMAGELESS_BIT;
		uint32_t n = imageless || !ci->pAttachments ? 0 : ci->attachmentCount;
		uint64_t *fb = trace_xcalloc(1 + (size_t)n, sizeof(uint64_t));
		fb[0] = n;
		for (uint32_t i = 0; i < n; i++)
			fb[1 + i] = H(ci->pAttachments[i]);
		put_ptr(&d->fbs, H(*a->pFramebuffer), fb);
		return;
	}
	case C_CREATE_RP: {
		vk_args_vkCreateRenderPass *a = args;
		VkRenderPassCreateInfo2 *ci = vk_render_pass2_of(a->pCreateInfo);
		pass_made(d, ci, a->pRenderPass);
		free(ci);
		return;
	}
	case C_CREATE_RP2: {
		vk_args_vkCreateRenderPass2 *a = args;
		pass_made(d, a->pCreateInfo, a->pRenderPass);
		return;
	}
	case C_CREATE_TEMPLATE: {
		vk_args_vkCreateDescriptorUpdateTemplate *a = args;
		if (a->pCreateInfo && a->pDescriptorUpdateTemplate && *a->pDescriptorUpdateTemplate)
			tmap_set(&d->tmpls, H(*a->pDescriptorUpdateTemplate), 0,
				 (uint64_t)(bind_index(a->pCreateInfo->pipelineBindPoint) + 1));
		return;
	}
	case C_ALLOC_SETS: {
		vk_args_vkAllocateDescriptorSets *a = args;
		uint32_t n = a->pAllocateInfo ? a->pAllocateInfo->descriptorSetCount : 0;
		for (uint32_t i = 0; a->pDescriptorSets && i < n; i++) {
			uint64_t old;
			if (a->pDescriptorSets[i] && tmap_del(&d->sets, H(a->pDescriptorSets[i]), 0, &old))
				set_free((dump_set *)(uintptr_t)old);
		}
		return;
	}
	case C_UPDATE_SETS: {
		vk_args_vkUpdateDescriptorSets *a = args;
		for (uint32_t i = 0; a->pDescriptorWrites && i < a->descriptorWriteCount; i++)
			if (storage_type(a->pDescriptorWrites[i].descriptorType))
				vk_write_descriptors(&a->pDescriptorWrites[i], set_write,
						     set_of(d, H(a->pDescriptorWrites[i].dstSet)));
		for (uint32_t i = 0; a->pDescriptorCopies && i < a->descriptorCopyCount; i++) {
			const VkCopyDescriptorSet *c = &a->pDescriptorCopies[i];
			dump_set *src = get_ptr(&d->sets, H(c->srcSet));
			for (size_t k = 0; src && k < src->n; k++) {
				dump_desc x = src->d[k];
				if (x.binding != c->srcBinding || x.element < c->srcArrayElement ||
				    x.element - c->srcArrayElement >= c->descriptorCount)
					continue;
				set_put(set_of(d, H(c->dstSet)), c->dstBinding,
					c->dstArrayElement + x.element - c->srcArrayElement, x.what, x.cap,
					x.layout);
			}
		}
		return;
	}
	case C_UPDATE_TEMPLATE: {
		vk_args_vkUpdateDescriptorSetWithTemplate *a = args;
		tmpl_write(r, H(a->descriptorUpdateTemplate), a->pData, set_of(d, H(a->descriptorSet)));
		return;
	}
	case C_CREATE_SWAPCHAIN: {
		vk_args_vkCreateSwapchainKHR *a = args;
		const VkSwapchainCreateInfoKHR *ci = a->pCreateInfo;
		if (!ci || !a->pSwapchain || !*a->pSwapchain)
			return;
		dump_image *im = trace_xcalloc(1, sizeof(*im));
		*im = (dump_image){VK_IMAGE_TYPE_2D, ci->imageFormat,
				   {ci->imageExtent.width, ci->imageExtent.height, 1}, 1,
				   ci->imageArrayLayers ? ci->imageArrayLayers : 1, VK_SAMPLE_COUNT_1_BIT,
				   ci->imageUsage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0,
				   VK_IMAGE_LAYOUT_UNDEFINED, ci->imageFormat};
		put_ptr(&d->chains, H(*a->pSwapchain), im);
		return;
	}
	case C_SWAPCHAIN_IMAGES: {
		vk_args_vkGetSwapchainImagesKHR *a = args;
		const dump_image *sc = get_ptr(&d->chains, H(a->swapchain));
		if (!sc || !a->pSwapchainImages || !a->pSwapchainImageCount)
			return;
		for (uint32_t i = 0; i < *a->pSwapchainImageCount; i++)
			if (a->pSwapchainImages[i])
				*image_new(d, H(a->pSwapchainImages[i])) = *sc;
		return;
	}
	case C_BEGIN_CB:
		if (!cb)
			return;
		cb->n = 0;
		memset(cb->sets, 0, sizeof(cb->sets));
		for (int i = 0; i < 3; i++)
			cb->push[i].n = 0;
		cb->ndeferred = 0;
		{
			vk_args_vkBeginCommandBuffer *a = args;
			cb->in_pass = a->pBeginInfo &&
				(a->pBeginInfo->flags & VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT);
			cb->pass_first = cb->pass_end = 0;
		}
		return;
	case C_COPY_BUFFER:
	case C_COPY_BUFFER2:
	case C_COPY_IMAGE:
	case C_COPY_IMAGE2:
	case C_COPY_B2I:
	case C_COPY_B2I2:
	case C_BLIT:
	case C_BLIT2:
	case C_RESOLVE:
	case C_RESOLVE2:
	case C_FILL:
	case C_UPDATE_BUFFER:
	case C_QUERY_COPY:
	case C_CLEAR_COLOR:
	case C_CLEAR_DS:
		transfer_write(cb, no, &transfer_dsts[code], args);
		return;
	case C_COPY_I2B: {
		vk_args_vkCmdCopyImageToBuffer *a = args;
		layout(cb, no, H(a->srcImage), a->srcImageLayout);
		copy_to_buffer(d, cb, no, H(a->srcImage), H(a->dstBuffer), a->pRegions, NULL,
			       a->pRegions ? a->regionCount : 0);
		return;
	}
	case C_COPY_I2B2: {
		const VkCopyImageToBufferInfo2 *i =
			((vk_args_vkCmdCopyImageToBuffer2 *)args)->pCopyImageToBufferInfo;
		if (!i)
			return;
		layout(cb, no, H(i->srcImage), i->srcImageLayout);
		copy_to_buffer(d, cb, no, H(i->srcImage), H(i->dstBuffer), NULL, i->pRegions,
			       i->pRegions ? i->regionCount : 0);
		return;
	}
	case C_BARRIER: {
		vk_args_vkCmdPipelineBarrier *a = args;
		barriers(cb, no, a->pImageMemoryBarriers, a->imageMemoryBarrierCount);
		return;
	}
	case C_WAIT_EVENTS: {
		vk_args_vkCmdWaitEvents *a = args;
		barriers(cb, no, a->pImageMemoryBarriers, a->imageMemoryBarrierCount);
		return;
	}
	case C_BARRIER2:
		dependency(cb, no, ((vk_args_vkCmdPipelineBarrier2 *)args)->pDependencyInfo);
		return;
	case C_WAIT_EVENTS2: {
		vk_args_vkCmdWaitEvents2 *a = args;
		for (uint32_t i = 0; a->pDependencyInfos && i < a->eventCount; i++)
			dependency(cb, no, &a->pDependencyInfos[i]);
		return;
	}
	case C_BEGIN_RP:
		pass_begin(d, cb, no, ((vk_args_vkCmdBeginRenderPass *)args)->pRenderPassBegin);
		return;
	case C_BEGIN_RP2:
		pass_begin(d, cb, no, ((vk_args_vkCmdBeginRenderPass2 *)args)->pRenderPassBegin);
		return;
	case C_BEGIN_RENDERING:
		rendering_begin(d, cb, no, ((vk_args_vkCmdBeginRendering *)args)->pRenderingInfo);
		return;
	case C_END_PASS:
		cb->in_pass = false;
		return;
	case C_BIND_SETS: {
		vk_args_vkCmdBindDescriptorSets *a = args;
		int bp = bind_index(a->pipelineBindPoint);
		for (uint32_t i = 0; bp >= 0 && a->pDescriptorSets && i < a->descriptorSetCount; i++)
			if (a->firstSet + i < 32)
				cb->sets[bp][a->firstSet + i] = H(a->pDescriptorSets[i]);
		return;
	}
	case C_PUSH_SET: {
		vk_args_vkCmdPushDescriptorSetKHR *a = args;
		int bp = bind_index(a->pipelineBindPoint);
		for (uint32_t i = 0; bp >= 0 && a->pDescriptorWrites && i < a->descriptorWriteCount; i++)
			vk_write_descriptors(&a->pDescriptorWrites[i], set_write, &cb->push[bp]);
		return;
	}
	case C_PUSH_TEMPLATE: {
		vk_args_vkCmdPushDescriptorSetWithTemplateKHR *a = args;
		uint64_t *h = tmap_at(&d->tmpls, H(a->descriptorUpdateTemplate), 0);
		if (h && *h)
			tmpl_write(r, H(a->descriptorUpdateTemplate), a->pData, &cb->push[*h - 1]);
		return;
	}
	case C_DISPATCH:
		shader_writes(d, cb, no, 1);
		return;
	case C_DRAW:
		shader_writes(d, cb, no, 0);
		return;
	case C_TRACE_RAYS:
		shader_writes(d, cb, no, 2);
		return;
	case C_EXEC_CMDS: {
		vk_args_vkCmdExecuteCommands *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++) {
			dump_cb *sec = get_ptr(&d->cbs, H(a->pCommandBuffers[i]));
			for (size_t k = 0; sec && sec != cb && k < sec->n; k++) {
				dump_event ev = sec->ev[k];
				event(cb, ev.no, ev.kind, ev.cap, ev.layout, ev.role, ev.index);
				cb->ev[cb->n - 1].has_copy = ev.has_copy;
				cb->ev[cb->n - 1].copy = ev.copy;
			}
		}
		return;
	}
	}
}

/* ------------------------------------------------------------------ */
/* What a submit or a command wrote. */

void vkr_dump_add_item(dump_items *it, const dump_item *add)
{
	dump_item *x = NULL;
	for (size_t i = 0; i < it->n && !x; i++)
		if (it->v[i].cap == add->cap)
			x = &it->v[i];
	if (!x) {
		if (it->n == it->cap) {
			it->cap = it->cap ? it->cap * 2 : 8;
			it->v = trace_xrealloc(it->v, it->cap * sizeof(*it->v));
		}
		x = &it->v[it->n++];
		*x = *add;
		x->copies = NULL;
		x->ncopies = 0;
	}
	for (size_t i = 0; i < add->ncopies; i++) {
		x->copies = trace_xrealloc(x->copies, (x->ncopies + 1) * sizeof(*x->copies));
		x->copies[x->ncopies++] = add->copies[i];
	}
}

static void add_event(dump_items *out, const dump_event *ev)
{
	dump_copy c = ev->copy;
	dump_item it = {.cap = ev->cap, .image = ev->kind == EV_WRITE_IMAGE, .role = ev->role,
			.index = ev->index, .layout = -1, .copies = ev->has_copy ? &c : NULL,
			.ncopies = ev->has_copy};
	vkr_dump_add_item(out, &it);
}

void vkr_dump_apply(vkr *r, dump_cb *cb, dump_items *out)
{
	for (size_t i = 0; i < cb->n; i++) {
		const dump_event *ev = &cb->ev[i];
		if (ev->kind != EV_WRITE_BUFFER && ev->layout >= 0) {
			dump_image *im = vkr_dump_image(r->dump, ev->cap);
			if (im)
				im->layout = ev->layout;
		}
		if (out && ev->kind != EV_LAYOUT)
			add_event(out, ev);
	}
}

void vkr_dump_cmd_items(dump_state *d, dump_cb *cb, const uint64_t *nos, size_t nnos,
			dump_items *out)
{
	(void)d;
	for (size_t i = 0; i < cb->n; i++)
		for (size_t k = 0; k < nnos; k++)
			if (cb->ev[i].no == nos[k] && cb->ev[i].kind != EV_LAYOUT)
				add_event(out, &cb->ev[i]);
}

static void free_all(tmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (tmap_used(m, i))
			free((void *)(uintptr_t)m->vals[i]);
	tmap_free(m);
}

void vkr_dump_free_tracking(vkr *r)
{
	dump_state *d = r->dump;
	for (size_t i = 0; i < d->sets.cap; i++)
		if (tmap_used(&d->sets, i))
			set_free((dump_set *)(uintptr_t)d->sets.vals[i]);
	tmap_free(&d->sets);
	for (size_t i = 0; i < d->cbs.cap; i++)
		if (tmap_used(&d->cbs, i)) {
			dump_cb *cb = (dump_cb *)(uintptr_t)d->cbs.vals[i];
			free(cb->ev);
			for (int k = 0; k < 3; k++)
				free(cb->push[k].d);
			free(cb->deferred);
			free(cb->plans);
			free(cb);
		}
	tmap_free(&d->cbs);
	free_all(&d->images);
	free_all(&d->fbs);
	free_all(&d->passes);
	free_all(&d->chains);
	TMAP_FREE(&d->codes, &d->views, &d->bviews, &d->tmpls, &d->warned);
}
