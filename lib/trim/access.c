/*
 * access: what commands and descriptors access.  The buffer bytes they
 * may read: a descriptor's range, a copy's source regions, a bound vertex
 * buffer from its offset, a buffer named beside an offset from there on,
 * any other all of it; of the image a copy, blit or resolve reads, the
 * levels and layers of its regions.  The images they write (render pass
 * attachments, barriers from UNDEFINED, storage descriptors), whether
 * they discard what was there, and the layouts they expect and leave.
 */
#include "trim_internal.h"

/* Set S's buffer descriptor BINDING, ELEM reads [OFF, END) of O; one
 * copied in (BINDING UINT32_MAX) is added unless it is there. */
void set_bdesc(obj *s, uint32_t binding, uint32_t elem, obj *o, uint64_t off, uint64_t end)
{
	bread r = {o, off, end};
	for (uint32_t i = 0; i < s->nbd; i++) {
		bdesc *d = &s->bd[i];
		if (binding != UINT32_MAX && d->binding == binding && d->elem == elem) {
			d->r = r;
			return;
		}
		if (binding == UINT32_MAX && d->r.o == o && d->r.off == off && d->r.end == end)
			return;
	}
	s->bd = array_grow(s->bd, s->nbd, &s->capbd, sizeof(*s->bd), 4);
	s->bd[s->nbd++] = (bdesc){binding, elem, r};
}

static void bsink_put(bsink *k, uint32_t binding, uint32_t elem, obj *o, uint64_t off,
		      uint64_t end)
{
	if (!o)
		return;
	if (k->set)
		set_bdesc(k->set, binding, elem, o, off, end);
	else
		breads_add(k->out, o, off, end);
}

/* A buffer descriptor: its range; a dynamic one from its offset on (the
 * offset at bind time adds to it); a storage one all of the buffer, as
 * shaders may write it. */
static void buffer_info(trim *t, bsink *k, uint32_t binding, uint32_t elem, VkDescriptorType ty,
			const VkDescriptorBufferInfo *bi)
{
	obj *o = obj_lookup(t, trim_types.buffer, (uint64_t)bi->buffer);
	uint64_t off = bi->offset, end = UINT64_MAX;
	if (ty == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER || ty == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC)
		off = 0;
	else if (ty == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER && bi->range != VK_WHOLE_SIZE)
		end = span_upto(off, bi->range);
	bsink_put(k, binding, elem, o, off, end);
}

static void texel_view(trim *t, bsink *k, uint32_t binding, uint32_t elem, VkDescriptorType ty,
		       uint64_t view)
{
	obj *v = obj_lookup(t, trim_types.buffer_view, view);
	if (!v || !v->target)
		return;
	if (ty == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER)
		bsink_put(k, binding, elem, v->target, 0, UINT64_MAX);
	else
		bsink_put(k, binding, elem, v->target, v->voff, v->vend);
}

typedef struct reads {
	trim *t;
	bsink *k;
} reads;

/* A descriptor's buffer or texel view, into the reads' sink; images,
 * samplers and inline blocks read none, and acceleration structures read
 * their buffers whole (see buffer_host_use). */
static void descriptor_reads(void *ctx, const vk_descriptor *d)
{
	const reads *r = ctx;
	if (d->buffer)
		buffer_info(r->t, r->k, d->binding, d->element, d->type, d->buffer);
	else if (d->texel_view)
		texel_view(r->t, r->k, d->binding, d->element, d->type, *d->texel_view);
}

void write_reads(trim *t, bsink *k, const VkWriteDescriptorSet *w)
{
	reads r = {t, k};
	vk_write_descriptors(w, descriptor_reads, &r);
}

/* The buffer descriptors of a template write.  With a descriptor type the
 * walk does not know, its buffers are not found at all (nor kept). */
void template_reads(trim *t, bsink *k, const trace_call *c, const vk_command_info *cmd,
		    const void *args)
{
	const trace_value *v;
	const obj *o = template_of(t, c, cmd, args, &v);
	if (!o)
		return;
	reads r = {t, k};
	vk_template_descriptors(o->tmpl, o->ntmpl, v->blob, v->len, descriptor_reads, &r);
}

/* A parameter of CMD by name, as an unsigned value, or false. */
static bool param_u64(const vk_command_info *cmd, const void *args, const char *name, uint64_t *v)
{
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		if (strcmp(f->name, name) || f->ptr || f->base != VK_B_UINT || f->size > 8)
			continue;
		*v = 0;
		memcpy(v, (const uint8_t *)args + f->offset, f->size); /* little-endian */
		return true;
	}
	return false;
}

/* Bytes a copy to or from a buffer moves a texel of ASPECT of depth or
 * stencil format F: depth 2 or 4, stencil 1; 0 for an aspect that is
 * not one of F's alone. */
static uint32_t depth_stencil_bytes(int32_t f, VkImageAspectFlags aspect)
{
	bool d16 = f == VK_FORMAT_D16_UNORM || f == VK_FORMAT_D16_UNORM_S8_UINT;
	bool depth = f != VK_FORMAT_S8_UINT;
	bool stencil = f == VK_FORMAT_S8_UINT || f >= VK_FORMAT_D16_UNORM_S8_UINT;
	if (aspect == VK_IMAGE_ASPECT_DEPTH_BIT && depth)
		return d16 ? 2 : 4;
	return aspect == VK_IMAGE_ASPECT_STENCIL_BIT && stencil;
}

/* Bytes per texel block of a format (of ASPECT, for depth and stencil),
 * and the block's width and height; 0 when this does not know it (then
 * a copy reads to the buffer's end). */
static uint32_t texel_block(int32_t f, VkImageAspectFlags aspect, uint32_t *bw, uint32_t *bh)
{
	*bw = *bh = 1;
	if (f >= VK_FORMAT_BC1_RGB_UNORM_BLOCK && f <= VK_FORMAT_EAC_R11G11_SNORM_BLOCK) {
		*bw = *bh = 4;
		if (f <= VK_FORMAT_BC1_RGBA_SRGB_BLOCK || f == VK_FORMAT_BC4_UNORM_BLOCK ||
		    f == VK_FORMAT_BC4_SNORM_BLOCK ||
		    (f >= VK_FORMAT_ETC2_R8G8B8_UNORM_BLOCK && f <= VK_FORMAT_ETC2_R8G8B8A1_SRGB_BLOCK) ||
		    f == VK_FORMAT_EAC_R11_UNORM_BLOCK || f == VK_FORMAT_EAC_R11_SNORM_BLOCK)
			return 8;
		return 16;
	}
	if (f == VK_FORMAT_R4G4_UNORM_PACK8)
		return 1;
	if (f <= VK_FORMAT_A1R5G5B5_UNORM_PACK16)
		return f > VK_FORMAT_UNDEFINED ? 2 : 0;
	if (f <= VK_FORMAT_R8_SRGB)
		return 1;
	if (f <= VK_FORMAT_R8G8_SRGB)
		return 2;
	if (f <= VK_FORMAT_B8G8R8_SRGB)
		return 3;
	if (f <= VK_FORMAT_A2B10G10R10_SINT_PACK32)
		return 4;
	if (f <= VK_FORMAT_R16_SFLOAT)
		return 2;
	if (f <= VK_FORMAT_R16G16_SFLOAT)
		return 4;
	if (f <= VK_FORMAT_R16G16B16_SFLOAT)
		return 6;
	if (f <= VK_FORMAT_R16G16B16A16_SFLOAT)
		return 8;
	if (f <= VK_FORMAT_R32_SFLOAT)
		return 4;
	if (f <= VK_FORMAT_R32G32_SFLOAT)
		return 8;
	if (f <= VK_FORMAT_R32G32B32_SFLOAT)
		return 12;
	if (f <= VK_FORMAT_R32G32B32A32_SFLOAT)
		return 16;
	if (f <= VK_FORMAT_R64_SFLOAT)
		return 8;
	if (f <= VK_FORMAT_R64G64_SFLOAT)
		return 16;
	if (f <= VK_FORMAT_R64G64B64_SFLOAT)
		return 24;
	if (f <= VK_FORMAT_R64G64B64A64_SFLOAT)
		return 32;
	if (f <= VK_FORMAT_E5B9G9R9_UFLOAT_PACK32)
		return 4;
	if (f <= VK_FORMAT_D32_SFLOAT_S8_UINT)
		return depth_stencil_bytes(f, aspect);
	return 0;  /* ASTC, planar, later ones */
}

/* The bytes a copy between buffer and image moves of the buffer: whole
 * rows and slices of the region's extent, from its offset. */
static uint64_t copy_end(const obj *img, uint64_t off, uint32_t row, uint32_t height,
			 VkExtent3D ext, const VkImageSubresourceLayers *l)
{
	uint32_t bw = 1, bh = 1, layers = l->layerCount;
	uint32_t bytes_per = img ? texel_block(img->format, l->aspectMask, &bw, &bh) : 0;
	uint64_t w = row ? row : ext.width, h = height ? height : ext.height;
	uint64_t slices = (uint64_t)ext.depth * layers;
	/* past any real image (and past what the product below holds) */
	if (!bytes_per || w > 65536 || h > 65536 || slices > 65536)
		return UINT64_MAX;
	return span_upto(off, ((w + bw - 1) / bw) * ((h + bh - 1) / bh) * bytes_per * slices);
}

/* The bytes of buffer O a copy of region R into image IMG reads. */
static void region_reads(breads *out, obj *o, const obj *img, const VkBufferImageCopy *r)
{
	breads_add(out, o, r->bufferOffset,
		   copy_end(img, r->bufferOffset, r->bufferRowLength, r->bufferImageHeight,
			    r->imageExtent, &r->imageSubresource));
}

bool barrier_cmd(const char *n)
{
	return strstr(n, "Barrier") || trim_named(n, "vkCmdWaitEvents") ||
	       trim_named(n, "vkCmdWaitEvents2") || trim_named(n, "vkCmdSetEvent2");
}

/* The vertex buffers a bind names, from their offsets (to their sizes,
 * if bound with them); false if N is no vertex buffer bind. */
static bool vertex_reads(trim *t, const char *n, const void *args, breads *out)
{
	const vk_handle_info *hb = trim_types.buffer;
	if (!strcmp(n, "vkCmdBindVertexBuffers")) {
		const vk_args_vkCmdBindVertexBuffers *a = args;
		for (uint32_t i = 0; i < a->bindingCount && a->pBuffers && a->pOffsets; i++)
			breads_add(out, obj_lookup(t, hb, (uint64_t)a->pBuffers[i]), a->pOffsets[i],
				   UINT64_MAX);
		return true;
	}
	if (!trim_named(n, "vkCmdBindVertexBuffers2"))
		return false;
	const vk_args_vkCmdBindVertexBuffers2 *a = args;
	for (uint32_t i = 0; i < a->bindingCount && a->pBuffers && a->pOffsets; i++) {
		uint64_t off = a->pOffsets[i], end = UINT64_MAX;
		if (a->pSizes && a->pSizes[i] != VK_WHOLE_SIZE)
			end = span_upto(off, a->pSizes[i]);
		breads_add(out, obj_lookup(t, hb, (uint64_t)a->pBuffers[i]), off, end);
	}
	return true;
}

/* The regions a copy from a buffer reads; false if N is no such copy. */
static bool copy_reads(trim *t, const char *n, const void *args, breads *out)
{
	const vk_handle_info *hb = trim_types.buffer;
	if (!strcmp(n, "vkCmdCopyBuffer")) {
		const vk_args_vkCmdCopyBuffer *a = args;
		obj *o = obj_lookup(t, hb, (uint64_t)a->srcBuffer);
		for (uint32_t i = 0; i < a->regionCount; i++)
			breads_add(out, o, a->pRegions[i].srcOffset,
				   span_upto(a->pRegions[i].srcOffset, a->pRegions[i].size));
	} else if (trim_named(n, "vkCmdCopyBuffer2")) {
		const VkCopyBufferInfo2 *ci = ((const vk_args_vkCmdCopyBuffer2 *)args)->pCopyBufferInfo;
		obj *o = obj_lookup(t, hb, (uint64_t)ci->srcBuffer);
		for (uint32_t i = 0; i < ci->regionCount; i++)
			breads_add(out, o, ci->pRegions[i].srcOffset,
				   span_upto(ci->pRegions[i].srcOffset, ci->pRegions[i].size));
	} else if (!strcmp(n, "vkCmdCopyBufferToImage")) {
		const vk_args_vkCmdCopyBufferToImage *a = args;
		obj *o = obj_lookup(t, hb, (uint64_t)a->srcBuffer);
		const obj *img = obj_lookup(t, trim_types.image, (uint64_t)a->dstImage);
		for (uint32_t i = 0; i < a->regionCount; i++)
			region_reads(out, o, img, &a->pRegions[i]);
	} else if (trim_named(n, "vkCmdCopyBufferToImage2")) {
		const VkCopyBufferToImageInfo2 *ci =
			((const vk_args_vkCmdCopyBufferToImage2 *)args)->pCopyBufferToImageInfo;
		obj *o = obj_lookup(t, hb, (uint64_t)ci->srcBuffer);
		const obj *img = obj_lookup(t, trim_types.image, (uint64_t)ci->dstImage);
		for (uint32_t i = 0; i < ci->regionCount; i++) {
			const VkBufferImageCopy2 *r = &ci->pRegions[i];
			VkBufferImageCopy r1 = {r->bufferOffset, r->bufferRowLength,
						r->bufferImageHeight, r->imageSubresource,
						r->imageOffset, r->imageExtent};
			region_reads(out, o, img, &r1);
		}
	} else {
		return false;
	}
	return true;
}

/* The bytes of buffers a command may read, into OUT: the regions it copies
 * from, the vertex buffers it binds, its push descriptors, a buffer it
 * names beside an offset (index, indirect, counts) from there on; any
 * other buffer it names, all of it; none of what it writes (dst*) nor
 * what its barriers name. */
void cmd_reads(trim *t, const trace_call *c, const vk_command_info *cmd, const void *args,
	       const finds *in, breads *out)
{
	const char *n = cmd->sig.name;
	bsink k = {NULL, out};
	if (barrier_cmd(n) || vertex_reads(t, n, args, out) || copy_reads(t, n, args, out))
		return;
	if (trim_named(n, "vkCmdPushDescriptorSet")) {
		const vk_args_vkCmdPushDescriptorSetKHR *a = args;
		for (uint32_t i = 0; i < a->descriptorWriteCount; i++)
			write_reads(t, &k, &a->pDescriptorWrites[i]);
		return;
	}
	if (trim_named(n, "vkCmdPushDescriptorSetWithTemplate")) {
		template_reads(t, &k, c, cmd, args);
		return;
	}
	for (uint32_t i = 0; i < in->n; i++) {
		const found *f = &in->v[i];
		const char *fn = f->f ? f->f->name : "";
		if (f->h != trim_types.buffer || !strncmp(fn, "dst", 3))
			continue;
		/* buffer, offset; countBuffer, countBufferOffset */
		char at[64];
		uint64_t off = 0;
		bool plain = !strcmp(fn, "buffer");
		snprintf(at, sizeof(at), "%s%s", plain ? "" : fn, plain ? "offset" : "Offset");
		if (!f->top || !param_u64(cmd, args, at, &off))
			off = 0;
		breads_add(out, obj_lookup(t, trim_types.buffer, f->value), off, UINT64_MAX);
	}
}

/* A call outside command buffers that names a buffer: one that makes,
 * binds, sizes or describes it reads nothing; any other (a device
 * address, an acceleration structure over it, a host copy) may read all
 * of it. */
void buffer_host_use(trim *t, const char *n, const finds *in)
{
	static const char *const harmless[] = {
		"vkCreateBuffer", "vkDestroyBuffer", "vkBindBufferMemory", "vkGetBufferMemoryRequirements",
		"vkUpdateDescriptorSet", "vkCmd", "vkQueueSubmit", "vkSetDebugUtils", "vkDebugMarker",
	};
	for (size_t i = 0; i < sizeof(harmless) / sizeof(*harmless); i++)
		if (!strncmp(n, harmless[i], strlen(harmless[i])))
			return;
	for (uint32_t i = 0; i < in->n; i++)
		if (in->v[i].h == trim_types.buffer) {
			obj *o = obj_lookup(t, trim_types.buffer, in->v[i].value);
			if (o)
				o->whole = true;
		}
}

static bool storage_type(VkDescriptorType ty)
{
	return ty == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE || ty == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER ||
	       ty == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER ||
	       ty == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
}

/* The view or buffer descriptor D shows (NULL: none, as a sampler's);
 * *KNOWN false for a type whose handles D does not hold (acceleration
 * structures hide in a write's pNext). */
obj *descriptor_shows(trim *t, const vk_descriptor *d, bool *known)
{
	*known = true;
	switch (d->type) {
	case VK_DESCRIPTOR_TYPE_SAMPLER:
		return NULL;
	case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
	case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
	case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
	case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT:
		return d->image ? obj_lookup(t, trim_types.image_view, (uint64_t)d->image->imageView)
				: NULL;
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
		return d->buffer ? obj_lookup(t, trim_types.buffer, (uint64_t)d->buffer->buffer) : NULL;
	case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER:
		return d->texel_view ? obj_lookup(t, trim_types.buffer_view, *d->texel_view) : NULL;
	default:
		*known = false;
		return NULL;
	}
}

typedef struct targets {
	trim *t;
	uint64_t set;
	stargets *out;
} targets;

void stargets_free(stargets *st)
{
	vec_free(&st->o);
	free(st->at);
	st->at = NULL;
}

/* What a storage descriptor lets shaders write: an image view (what of
 * its image it shows: storage_written()), a buffer, a texel buffer
 * (through its view, all of the buffer); at the binding of the set its
 * element lands in (a write runs on into the next bindings). */
static void descriptor_target(void *ctx, const vk_descriptor *d)
{
	const targets *x = ctx;
	bool known;
	if (!storage_type(d->type))
		return;
	obj *o = descriptor_shows(x->t, d, &known);
	if (o && o->h == trim_types.buffer_view)
		o = o->target;
	if (!o || (o->h == trim_types.image_view && !o->target))
		return;
	uint32_t at = x->set ? vk_iface_binding_at(x->t->iface, x->set, d->binding, d->element)
			     : UINT32_MAX;
	stargets *st = x->out;
	for (uint32_t k = 0; k < st->o.n; k++)
		if (st->o.v[k] == o && st->at[k] == at)
			return;
	vec_push(&st->o, o);
	st->at = trace_xrealloc(st->at, st->o.cap * sizeof(*st->at));
	st->at[st->o.n - 1] = at;
}

/* What a write of storage descriptors into SET (0: a push) lets shaders
 * write, into OUT. */
void storage_targets(trim *t, uint64_t set, const VkWriteDescriptorSet *w, stargets *out)
{
	targets x = {t, set, out};
	if (storage_type(w->descriptorType))
		vk_write_descriptors(w, descriptor_target, &x);
}

/* ... and a template write (an update of a set or a push): zink writes
 * all its descriptors so.  With a descriptor type the walk does not
 * know, none of its targets are found. */
void template_targets(trim *t, uint64_t set, const trace_call *c, const vk_command_info *cmd,
		      const void *args, stargets *out)
{
	const trace_value *v;
	const obj *o = template_of(t, c, cmd, args, &v);
	targets x = {t, set, out};
	if (o)
		vk_template_descriptors(o->tmpl, o->ntmpl, v->blob, v->len, descriptor_target, &x);
}

typedef struct shader_write {
	trim *t;
	recording *rc;
} shader_write;

/* Binding BINDING of SET (UINT32_MAX: any) written by a draw. */
static void set_written(void *ctx, uint64_t set, uint32_t binding)
{
	const shader_write *x = ctx;
	obj *s = obj_lookup(x->t, trim_types.descriptor_set, set);
	for (uint32_t k = 0; s && k < s->storage.n; k++)
		if (binding_reaches(binding, s->storage_at[k]))
			storage_written(x->rc, s->storage.v[k]);
}

/* Command NAME of RC, recorded into command buffer CB: the storage
 * descriptors of the sets bound that its shaders may write, written.  A
 * binding that every stage of the bound pipeline using it declares
 * NonWritable (GLSL's readonly) is not: SuperTuxKart's per-frame instance
 * buffer, read by its shaders only, made each one-frame cut run 41
 * frames again when a bind counted as a write. */
void shader_writes(trim *t, recording *rc, uint64_t cb, const char *name)
{
	shader_write x = {t, rc};
	vk_iface_shader_writes(t->iface, cb, name, set_written, &x);
}

/* Whether command NAME, recorded into command buffer CB and naming IN,
 * binds descriptor sets as vk_iface follows them: vkCmdBindDescriptorSets,
 * each set it names bound there now.  Then the draws that follow say
 * which bindings of them they read; of a set bound another way
 * (vkCmdBindDescriptorSets2, a bind point it does not follow), any
 * command may read all. */
bool bind_followed(const trim *t, const char *name, uint64_t cb, const finds *in)
{
	if (strcmp(name, "vkCmdBindDescriptorSets"))
		return false;
	for (uint32_t i = 0; i < in->n; i++)
		if (in->v[i].h == trim_types.descriptor_set &&
		    !vk_iface_set_bound(t->iface, cb, in->v[i].value))
			return false;
	return true;
}

typedef struct reads_of {
	trim *t;
	recording *rc;
} reads_of;

static void set_read_add(recording *rc, obj *s, uint32_t binding)
{
	for (uint32_t k = 0; k < rc->nset_reads; k++)
		if (rc->set_reads[k].set == s && rc->set_reads[k].binding == binding)
			return;
	rc->set_reads = array_grow(rc->set_reads, rc->nset_reads, &rc->capset_reads,
				   sizeof(*rc->set_reads), 4);
	rc->set_reads[rc->nset_reads++] = (set_read){s, binding};
}

/* Binding BINDING of SET (UINT32_MAX: any) read by a draw. */
static void set_read_one(void *ctx, uint64_t set, uint32_t binding)
{
	const reads_of *x = ctx;
	obj *s = obj_lookup(x->t, trim_types.descriptor_set, set);
	if (s)
		set_read_add(x->rc, s, binding);
}

/* Command NAME of RC (in command buffer CB, naming IN; SHADERS: one that
 * runs them): the bindings of the sets bound that its shaders may read
 * (a binding every stage of the bound pipeline using it declares
 * NonReadable, GLSL's writeonly, or that no stage uses, is not read: the
 * cut of a frame that binds a storage image a compute shader only writes
 * ran every earlier frame's dispatch again); of a set it binds in a way
 * vk_iface does not follow, all of them. */
void recording_set_reads_add(trim *t, recording *rc, const char *name, bool shaders,
			     uint64_t cb, const finds *in)
{
	reads_of x = {t, rc};
	if (shaders) {
		vk_iface_shader_reads(t->iface, cb, name, set_read_one, &x);
		return;
	}
	if (bind_followed(t, name, cb, in))
		return;
	for (uint32_t i = 0; i < in->n; i++) {
		obj *s = in->v[i].h == trim_types.descriptor_set
				 ? obj_lookup(t, in->v[i].h, in->v[i].value) : NULL;
		if (s)
			set_read_add(rc, s, UINT32_MAX);
	}
}

/* Whether a command of recording R may read what SET shows at binding AT
 * (UINT32_MAX: not known): what its draws read, once it ended; before,
 * all (the range may go on recording it, and its draws come later). */
bool set_read_at(const recording *r, const obj *set, uint32_t at)
{
	if (!r->ended)
		return true;
	for (uint32_t k = 0; k < r->nset_reads; k++)
		if (r->set_reads[k].set == set && binding_reaches(r->set_reads[k].binding, at))
			return true;
	return false;
}

/* A command of RC may write what storage descriptor O (storage_targets())
 * names: of an image, the levels and layers of the view only (a compute
 * pass that makes level i from level i - 1 writes no other level), of a
 * buffer all of it. */
void storage_written(recording *rc, obj *o)
{
	if (o->h == trim_types.image_view)
		recording_write(rc, o->target, view_subs(o), 0);
	else
		recording_write(rc, o, obj_subs(o), 0);
}

/* Whether a load op drops what the attachment held: CLEAR and DONT_CARE
 * do; LOAD reads it, NONE keeps it. */
bool load_op_discards(VkAttachmentLoadOp op)
{
	return op == VK_ATTACHMENT_LOAD_OP_CLEAR || op == VK_ATTACHMENT_LOAD_OP_DONT_CARE;
}

/* The images a render pass instance writes, and which it discards: the
 * levels and layers of the attachments' views. */
static void render_pass_images(trim *t, const VkRenderPassBeginInfo *bi, image_fn fn, void *ctx)
{
	obj *rp = obj_lookup(t, trim_types.render_pass, (uint64_t)bi->renderPass);
	obj *fb = obj_lookup(t, trim_types.framebuffer, (uint64_t)bi->framebuffer);
	if (!fb)
		return;
	const vk_handle_info *hv = trim_types.image_view;
	vec views = {0};
	for (uint32_t i = 0; i < fb->views.n; i++)
		vec_push(&views, fb->views.v[i]);
	for (const VkBaseInStructure *p = bi->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_RENDER_PASS_ATTACHMENT_BEGIN_INFO) {
			const VkRenderPassAttachmentBeginInfo *ab = (const void *)p;
			for (uint32_t i = 0; i < ab->attachmentCount; i++)
				vec_push(&views, obj_lookup(t, hv, (uint64_t)ab->pAttachments[i]));
		}
	for (uint32_t i = 0; i < views.n; i++) {
		obj *v = views.v[i];
		if (!v || !v->target)
			continue;
		bool known = rp && i < rp->natt;
		bool read = rp && i < 32 && (rp->read_only >> i & 1);
		fn(ctx, v->target, &v->sub, read ? IMAGE_READ : IMAGE_WRITE,
		   rp && i < 32 && (rp->discard >> i & 1),
		   known ? rp->att_layout[2 * i] : -1, known ? rp->att_layout[2 * i + 1] : -1);
	}
	vec_free(&views);
}

bool layout_read_only(VkImageLayout layout, bool stencil)
{
	switch ((int)layout) {
	case VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL:
	case VK_IMAGE_LAYOUT_READ_ONLY_OPTIMAL:
		return true;
	case VK_IMAGE_LAYOUT_DEPTH_READ_ONLY_STENCIL_ATTACHMENT_OPTIMAL:
	case VK_IMAGE_LAYOUT_DEPTH_READ_ONLY_OPTIMAL:
		return !stencil;
	case VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_STENCIL_READ_ONLY_OPTIMAL:
	case VK_IMAGE_LAYOUT_STENCIL_READ_ONLY_OPTIMAL:
		return stencil;
	default:
		return false;
	}
}

/*
 * How a render pass instance of dynamic rendering uses attachment A: a
 * depth or stencil attachment (STENCIL says which) in a layout read-only
 * for its aspect, loaded and stored, reads the image and leaves it as it
 * was (draws must not write that aspect there); zink draws its HUD and
 * 2D passes so, and counting them as writes chained every frame of an
 * OpenArena capture to the one before through its depth buffer.  A
 * clear, or contents left undefined (DONT_CARE), writes.
 */
bool ops_keep(VkAttachmentLoadOp load, VkAttachmentStoreOp store)
{
	return (load == VK_ATTACHMENT_LOAD_OP_LOAD || load == VK_ATTACHMENT_LOAD_OP_NONE_EXT) &&
	       (store == VK_ATTACHMENT_STORE_OP_STORE || store == VK_ATTACHMENT_STORE_OP_NONE);
}

static enum image_use attachment_use(const VkRenderingAttachmentInfo *a, bool depth_stencil,
				     bool stencil)
{
	if (depth_stencil && layout_read_only(a->imageLayout, stencil) &&
	    ops_keep(a->loadOp, a->storeOp))
		return IMAGE_READ;
	return IMAGE_WRITE;
}

static void rendering_images(trim *t, const VkRenderingInfo *ri, image_fn fn, void *ctx)
{
	const vk_handle_info *hv = trim_types.image_view;
	const VkRenderingAttachmentInfo *att[34];
	uint32_t n = 0;
	for (uint32_t i = 0; i < ri->colorAttachmentCount && n < 32; i++)
		att[n++] = &ri->pColorAttachments[i];
	uint32_t ncolor = n;
	if (ri->pDepthAttachment)
		att[n++] = ri->pDepthAttachment;
	if (ri->pStencilAttachment)
		att[n++] = ri->pStencilAttachment;
	for (uint32_t i = 0; i < n; i++) {
		obj *v = obj_lookup(t, hv, (uint64_t)att[i]->imageView);
		bool stencil = att[i] == ri->pStencilAttachment;
		if (v && v->target)
			fn(ctx, v->target, &v->sub, attachment_use(att[i], i >= ncolor, stencil),
			   load_op_discards(att[i]->loadOp), att[i]->imageLayout, att[i]->imageLayout);
		v = obj_lookup(t, hv, (uint64_t)att[i]->resolveImageView);
		if (v && v->target)
			fn(ctx, v->target, &v->sub, IMAGE_WRITE, false, att[i]->resolveImageLayout,
			   att[i]->resolveImageLayout);
	}
}

/* A barrier changes the layout of the subresources R of image O, not
 * their contents, unless it comes from UNDEFINED: then what they held is
 * gone (a mipmap chain made again from its level 0 drops the other
 * levels, from UNDEFINED, and keeps level 0). */
static void barrier_image(obj *o, const VkImageSubresourceRange *r, VkImageLayout from,
			  VkImageLayout to, image_fn fn, void *ctx)
{
	if (!o)
		return;
	bool undefined = from == VK_IMAGE_LAYOUT_UNDEFINED;
	fn(ctx, o, r, undefined ? IMAGE_WRITE : IMAGE_LAYOUT_ONLY, undefined, from, to);
}

static void image_barriers(trim *t, uint32_t n, const VkImageMemoryBarrier *b, image_fn fn,
			   void *ctx)
{
	for (uint32_t i = 0; i < n && b; i++)
		barrier_image(obj_lookup(t, trim_types.image, (uint64_t)b[i].image),
			      &b[i].subresourceRange, b[i].oldLayout, b[i].newLayout, fn, ctx);
}

static void dependency_images(trim *t, const VkDependencyInfo *d, image_fn fn, void *ctx)
{
	for (uint32_t i = 0; d && i < d->imageMemoryBarrierCount; i++) {
		const VkImageMemoryBarrier2 *b = &d->pImageMemoryBarriers[i];
		barrier_image(obj_lookup(t, trim_types.image, (uint64_t)b->image),
			      &b->subresourceRange, b->oldLayout, b->newLayout, fn, ctx);
	}
}

/* The images of commands whose structs say more than their handles:
 * barriers (a wait for events changes layouts as a pipeline barrier
 * does), render passes. */
void command_images(trim *t, const char *n, const void *args, image_fn fn, void *ctx)
{
	if (!strcmp(n, "vkCmdPipelineBarrier")) {
		const vk_args_vkCmdPipelineBarrier *a = args;
		image_barriers(t, a->imageMemoryBarrierCount, a->pImageMemoryBarriers, fn, ctx);
	} else if (!strcmp(n, "vkCmdWaitEvents")) {
		const vk_args_vkCmdWaitEvents *a = args;
		image_barriers(t, a->imageMemoryBarrierCount, a->pImageMemoryBarriers, fn, ctx);
	} else if (trim_named(n, "vkCmdPipelineBarrier2")) {
		dependency_images(t, ((const vk_args_vkCmdPipelineBarrier2 *)args)->pDependencyInfo,
				  fn, ctx);
	} else if (trim_named(n, "vkCmdWaitEvents2")) {
		/* one dependency per event: each event's barriers */
		const vk_args_vkCmdWaitEvents2 *a = args;
		for (uint32_t i = 0; i < a->eventCount && a->pDependencyInfos; i++)
			dependency_images(t, &a->pDependencyInfos[i], fn, ctx);
	} else if (!strcmp(n, "vkCmdBeginRenderPass")) {
		render_pass_images(t, ((const vk_args_vkCmdBeginRenderPass *)args)->pRenderPassBegin,
				   fn, ctx);
	} else if (trim_named(n, "vkCmdBeginRenderPass2")) {
		render_pass_images(t, ((const vk_args_vkCmdBeginRenderPass2 *)args)->pRenderPassBegin,
				   fn, ctx);
	} else if (trim_named(n, "vkCmdBeginRendering")) {
		rendering_images(t, ((const vk_args_vkCmdBeginRendering *)args)->pRenderingInfo, fn,
				 ctx);
	}
}

/* A destination region of an image transfer command: its level and
 * layers, and the box it writes, between corners A and B (a blit's two,
 * or a copy's offset and offset + extent, in 64 bits: a hostile extent
 * does not wrap); or a clear's range R. */
typedef struct dst_region {
	const VkImageSubresourceLayers *l;
	VkOffset3D a;
	int64_t bx, by, bz;
	const VkImageSubresourceRange *r;
} dst_region;

typedef void (*region_fn)(void *ctx, const obj *img, const dst_region *d);

static void each_copy(region_fn fn, void *ctx, const obj *img, const VkImageSubresourceLayers *l,
		      VkOffset3D off, VkExtent3D ext)
{
	dst_region d = {l, off, (int64_t)off.x + ext.width, (int64_t)off.y + ext.height,
			(int64_t)off.z + ext.depth, NULL};
	fn(ctx, img, &d);
}

#define EACH_COPY(n, regions, layers, off, ext)                                              \
	for (uint32_t k = 0; (regions) && k < (n); k++)                                      \
		each_copy(fn, ctx, img, &(regions)[k].layers, (regions)[k].off, (regions)[k].ext)

static void each_blit(region_fn fn, void *ctx, const obj *img, const VkImageSubresourceLayers *l,
		      const VkOffset3D c[2])
{
	dst_region d = {l, c[0], c[1].x, c[1].y, c[1].z, NULL};
	fn(ctx, img, &d);
}

static void each_range(region_fn fn, void *ctx, const obj *img, uint32_t n,
		       const VkImageSubresourceRange *r)
{
	for (uint32_t k = 0; r && k < n; k++) {
		dst_region d = {.r = &r[k]};
		fn(ctx, img, &d);
	}
}

/* FN for each destination region of image transfer command N (ARGS) into
 * IMG: copies, blits and resolves into an image, clears; false for any
 * other command. */
static bool dst_regions(const char *n, const void *args, const obj *img, region_fn fn, void *ctx)
{
	if (!strcmp(n, "vkCmdCopyBufferToImage")) {
		const vk_args_vkCmdCopyBufferToImage *a = args;
		EACH_COPY(a->regionCount, a->pRegions, imageSubresource, imageOffset, imageExtent);
	} else if (trim_named(n, "vkCmdCopyBufferToImage2")) {
		const VkCopyBufferToImageInfo2 *i =
			((const vk_args_vkCmdCopyBufferToImage2 *)args)->pCopyBufferToImageInfo;
		if (i)
			EACH_COPY(i->regionCount, i->pRegions, imageSubresource, imageOffset,
				  imageExtent);
	} else if (!strcmp(n, "vkCmdCopyImage")) {
		const vk_args_vkCmdCopyImage *a = args;
		EACH_COPY(a->regionCount, a->pRegions, dstSubresource, dstOffset, extent);
	} else if (trim_named(n, "vkCmdCopyImage2")) {
		const VkCopyImageInfo2 *i = ((const vk_args_vkCmdCopyImage2 *)args)->pCopyImageInfo;
		if (i)
			EACH_COPY(i->regionCount, i->pRegions, dstSubresource, dstOffset, extent);
	} else if (!strcmp(n, "vkCmdResolveImage")) {
		const vk_args_vkCmdResolveImage *a = args;
		EACH_COPY(a->regionCount, a->pRegions, dstSubresource, dstOffset, extent);
	} else if (trim_named(n, "vkCmdResolveImage2")) {
		const VkResolveImageInfo2 *i =
			((const vk_args_vkCmdResolveImage2 *)args)->pResolveImageInfo;
		if (i)
			EACH_COPY(i->regionCount, i->pRegions, dstSubresource, dstOffset, extent);
	} else if (!strcmp(n, "vkCmdBlitImage")) {
		const vk_args_vkCmdBlitImage *a = args;
		for (uint32_t k = 0; a->pRegions && k < a->regionCount; k++)
			each_blit(fn, ctx, img, &a->pRegions[k].dstSubresource,
				  a->pRegions[k].dstOffsets);
	} else if (trim_named(n, "vkCmdBlitImage2")) {
		const VkBlitImageInfo2 *i = ((const vk_args_vkCmdBlitImage2 *)args)->pBlitImageInfo;
		for (uint32_t k = 0; i && i->pRegions && k < i->regionCount; k++)
			each_blit(fn, ctx, img, &i->pRegions[k].dstSubresource,
				  i->pRegions[k].dstOffsets);
	} else if (!strcmp(n, "vkCmdClearColorImage")) {
		const vk_args_vkCmdClearColorImage *a = args;
		each_range(fn, ctx, img, a->rangeCount, a->pRanges);
	} else if (!strcmp(n, "vkCmdClearDepthStencilImage")) {
		const vk_args_vkCmdClearDepthStencilImage *a = args;
		each_range(fn, ctx, img, a->rangeCount, a->pRanges);
	} else {
		return false;
	}
	return true;
}

static void written(void *ctx, const obj *img, const dst_region *d)
{
	*(uint64_t *)ctx |= d->r ? image_subs(img, d->r) : image_layers_subs(img, d->l);
}

/* The subresources of image IMG that transfer command N (ARGS) writes as
 * its destination: its regions' levels and layers, a clear's ranges; all
 * of them for any other command. */
uint64_t transfer_dst_subs(const char *n, const void *args, const obj *img)
{
	uint64_t m = 0;
	if (img->nsub == 1 || !dst_regions(n, args, img, written, &m))
		return obj_subs(img);
	return m;
}

/* Whether corners A and B, either way round, span 0 to a level's size N
 * (the level 0 size shifted: 0 is 1). */
static bool spans_level(int64_t a, int64_t b, int64_t n)
{
	return (a < b ? a : b) == 0 && (a < b ? b : a) == (n ? n : 1);
}

/* Of a region D of image IMG, the levels and layers it writes whole: all
 * of each level, in every aspect the format has (a clear's range: whole
 * levels and layers of the aspects it names). */
static void written_whole(void *ctx, const obj *img, const dst_region *d)
{
	uint64_t *m = ctx;
	if (d->r) {
		if (d->r->aspectMask == img->aspect)
			*m |= image_subs_of(img, d->r, true);
		return;
	}
	uint32_t lv = d->l->mipLevel;
	if (!img->extent.width || lv >= 32 || d->l->aspectMask != img->aspect)
		return;
	if (!spans_level(d->a.x, d->bx, img->extent.width >> lv) ||
	    !spans_level(d->a.y, d->by, img->extent.height >> lv) ||
	    !spans_level(d->a.z, d->bz, img->extent.depth >> lv))
		return;
	VkImageSubresourceRange r = {d->l->aspectMask, lv, 1, d->l->baseArrayLayer,
				     d->l->layerCount};
	*m |= image_subs_of(img, &r, true);
}

/* Whether a region of a copy from image IMG covers buffer O from its
 * first byte to its last: rows and slices packed tight from offset 0 (a
 * readback buffer of the region's size, as glReadPixels through zink). */
static bool image_copy_covers(const obj *img, const obj *o, VkDeviceSize off, uint32_t row,
			      uint32_t height, const VkImageSubresourceLayers *l, VkExtent3D e)
{
	return img && !off && (!row || row == e.width) && (!height || height == e.height) &&
	       copy_end(img, 0, row, height, e, l) == o->msize;
}

/* What transfer command N (ARGS) overwrites whole of O, its destination,
 * so that nothing of what O held there before can show: an image's
 * levels and layers that a region covers in full (each region alone),
 * that a clear names; a buffer that a copy, fill or update covers from
 * its first byte to its last.  None of a buffer whose device address a
 * shader may read it through before. */
uint64_t transfer_dst_whole(trim *t, const char *n, const void *args, const obj *o)
{
	uint64_t m = 0;
	if (o->h == trim_types.buffer) {
		uint64_t off = 1, len = 0;
		if (o->whole || !o->msize)
			return 0;
		if (!strcmp(n, "vkCmdFillBuffer")) {
			const vk_args_vkCmdFillBuffer *a = args;
			off = a->dstOffset;
			len = a->size == VK_WHOLE_SIZE ? (o->msize - off) & ~3ull : a->size;
		} else if (!strcmp(n, "vkCmdUpdateBuffer")) {
			const vk_args_vkCmdUpdateBuffer *a = args;
			off = a->dstOffset;
			len = a->dataSize;
		} else if (!strcmp(n, "vkCmdCopyBuffer")) {
			const vk_args_vkCmdCopyBuffer *a = args;
			for (uint32_t k = 0; a->pRegions && k < a->regionCount; k++)
				if (!a->pRegions[k].dstOffset && a->pRegions[k].size == o->msize)
					off = 0, len = o->msize;
		} else if (trim_named(n, "vkCmdCopyBuffer2")) {
			const VkCopyBufferInfo2 *ci =
				((const vk_args_vkCmdCopyBuffer2 *)args)->pCopyBufferInfo;
			for (uint32_t k = 0; ci && ci->pRegions && k < ci->regionCount; k++)
				if (!ci->pRegions[k].dstOffset && ci->pRegions[k].size == o->msize)
					off = 0, len = o->msize;
		} else if (!strcmp(n, "vkCmdCopyImageToBuffer")) {
			const vk_args_vkCmdCopyImageToBuffer *a = args;
			const obj *img = obj_lookup(t, trim_types.image, (uint64_t)(uintptr_t)a->srcImage);
			for (uint32_t k = 0; a->pRegions && k < a->regionCount; k++) {
				const VkBufferImageCopy *r = &a->pRegions[k];
				if (image_copy_covers(img, o, r->bufferOffset, r->bufferRowLength,
						      r->bufferImageHeight, &r->imageSubresource,
						      r->imageExtent))
					off = 0, len = o->msize;
			}
		} else if (trim_named(n, "vkCmdCopyImageToBuffer2")) {
			const VkCopyImageToBufferInfo2 *ci =
				((const vk_args_vkCmdCopyImageToBuffer2 *)args)->pCopyImageToBufferInfo;
			const obj *img = ci ? obj_lookup(t, trim_types.image,
							 (uint64_t)(uintptr_t)ci->srcImage) : NULL;
			for (uint32_t k = 0; img && ci->pRegions && k < ci->regionCount; k++) {
				const VkBufferImageCopy2 *r = &ci->pRegions[k];
				if (image_copy_covers(img, o, r->bufferOffset, r->bufferRowLength,
						      r->bufferImageHeight, &r->imageSubresource,
						      r->imageExtent))
					off = 0, len = o->msize;
			}
		}
		return off == 0 && len == o->msize ? obj_subs(o) : 0;
	}
	dst_regions(n, args, o, written_whole, &m);
	return m;
}

/* The subresources of image IMG that command N (ARGS) reads as its
 * source (srcImage): the levels and layers of its regions' sources, for
 * copies, blits and resolves (to an image or a buffer); all of them for
 * any other command.  A mipmap chain blitted level by level reads level
 * i - 1 alone to make level i. */
uint64_t transfer_src_subs(const char *n, const void *args, const obj *img)
{
	uint64_t m = 0;
	uint32_t k;
	if (img->nsub == 1)
		return obj_subs(img);
	if (!strcmp(n, "vkCmdCopyImage")) {
		const vk_args_vkCmdCopyImage *a = args;
		for (k = 0; a->pRegions && k < a->regionCount; k++)
			m |= image_layers_subs(img, &a->pRegions[k].srcSubresource);
	} else if (trim_named(n, "vkCmdCopyImage2")) {
		const VkCopyImageInfo2 *i = ((const vk_args_vkCmdCopyImage2 *)args)->pCopyImageInfo;
		for (k = 0; i && i->pRegions && k < i->regionCount; k++)
			m |= image_layers_subs(img, &i->pRegions[k].srcSubresource);
	} else if (!strcmp(n, "vkCmdBlitImage")) {
		const vk_args_vkCmdBlitImage *a = args;
		for (k = 0; a->pRegions && k < a->regionCount; k++)
			m |= image_layers_subs(img, &a->pRegions[k].srcSubresource);
	} else if (trim_named(n, "vkCmdBlitImage2")) {
		const VkBlitImageInfo2 *i = ((const vk_args_vkCmdBlitImage2 *)args)->pBlitImageInfo;
		for (k = 0; i && i->pRegions && k < i->regionCount; k++)
			m |= image_layers_subs(img, &i->pRegions[k].srcSubresource);
	} else if (!strcmp(n, "vkCmdResolveImage")) {
		const vk_args_vkCmdResolveImage *a = args;
		for (k = 0; a->pRegions && k < a->regionCount; k++)
			m |= image_layers_subs(img, &a->pRegions[k].srcSubresource);
	} else if (trim_named(n, "vkCmdResolveImage2")) {
		const VkResolveImageInfo2 *i =
			((const vk_args_vkCmdResolveImage2 *)args)->pResolveImageInfo;
		for (k = 0; i && i->pRegions && k < i->regionCount; k++)
			m |= image_layers_subs(img, &i->pRegions[k].srcSubresource);
	} else if (!strcmp(n, "vkCmdCopyImageToBuffer")) {
		const vk_args_vkCmdCopyImageToBuffer *a = args;
		for (k = 0; a->pRegions && k < a->regionCount; k++)
			m |= image_layers_subs(img, &a->pRegions[k].imageSubresource);
	} else if (trim_named(n, "vkCmdCopyImageToBuffer2")) {
		const VkCopyImageToBufferInfo2 *i =
			((const vk_args_vkCmdCopyImageToBuffer2 *)args)->pCopyImageToBufferInfo;
		for (k = 0; i && i->pRegions && k < i->regionCount; k++)
			m |= image_layers_subs(img, &i->pRegions[k].imageSubresource);
	} else {
		return obj_subs(img);
	}
	return m;
}
