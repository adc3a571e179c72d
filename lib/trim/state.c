/*
 * state: what the Vulkan calls before the range do to the live state:
 * the objects they make and destroy and the records that made and
 * changed them, command buffers' recordings, the submits that wrote
 * buffers and images, semaphores and fences.  See trim_internal.h.
 */
#include "trim_internal.h"
#include "vkpass.h"
#include "vksync.h"

/* R belongs to O (once). */
void obj_attach(obj *o, rec *r)
{
	if (!vec_has(&o->recs, r))
		vec_push(&o->recs, rec_ref(r));
}

/* R belongs to O: O keeps it, and everything it names. */
static void obj_attach_all(trim *t, obj *o, rec *r, const finds *in)
{
	obj_attach(o, r);
	for (uint32_t i = 0; i < in->n; i++)
		obj_dep(o, obj_lookup(t, in->v[i].h, in->v[i].value));
}

void trim_keep_global(trim *t, rec *r)
{
	vec_push(&t->globals, rec_ref(r));
	t->live_records++;
}

/* A record that names only dispatchable objects (an instance's count
 * query, a physical device's memory properties, a debug name of a queue)
 * belongs to the last it names, the most particular (a debug name's
 * object after its device): kept with it, and dropped with an instance
 * or device the range does not use.  One that names none is kept for
 * good. */
static void keep_with_dispatchable(trim *t, rec *r, const finds *in)
{
	obj *o = NULL;
	for (uint32_t i = in->n; i-- > 0 && !o;)
		if (in->v[i].h && in->v[i].h->dispatchable)
			o = obj_lookup(t, in->v[i].h, in->v[i].value);
	if (!o) {
		trim_keep_global(t, r);
		return;
	}
	obj_attach_all(t, o, r, in);
	t->live_records++;
}

/* Update R of set S, where none of S's descriptors shows what it wrote
 * any more, since update BY: no longer one of S's records.  No submit
 * bound S since R: what R wrote no command saw, and it goes.  One did:
 * the setup runs R only where it runs one of those (setup.c).  A copy
 * from S took what it wrote: it stays.  Zink writes its sets again and
 * again, a GL program's every frame, and the setup ran every write. */
static void set_superseded(trim *t, obj *s, rec *r, const rec *by)
{
	if (!r || r->no < s->copied)
		return;
	for (uint32_t i = 0; i < s->nslots; i++)
		if (s->slots[i].by == r)
			return;
	for (uint32_t i = 0; i < s->recs.n; i++) {
		if (s->recs.v[i] != r)
			continue;
		s->recs.v[i] = s->recs.v[--s->recs.n];
		if (r->no < s->used) {
			s->past = array_grow(s->past, s->npast, &s->cappast, sizeof(*s->past), 4);
			s->past[s->npast++] = (past){r, by->no};
		} else {
			rec_unref(r);
			t->live_records--;
		}
		return;
	}
}

/* Set S's descriptor BINDING, ELEM shows O now (NULL: nothing), written
 * by update R; with BINDING UINT32_MAX, O is shown for good, unless it is
 * already. */
static void set_slot(trim *t, obj *s, uint32_t binding, uint32_t elem, obj *o, rec *r)
{
	s->updated = ++t->set_updates;
	showing_unref(s->now);
	s->now = NULL;
	for (uint32_t i = 0; i < s->nslots; i++) {
		slot *x = &s->slots[i];
		if (x->binding != binding || (binding == UINT32_MAX ? x->o != o : x->elem != elem))
			continue;
		if (binding != UINT32_MAX) {
			rec *old = x->by;
			x->o = o;
			if (r && old != r) {
				x->by = r;
				set_superseded(t, s, old, r);
			}
		}
		return;
	}
	if (o == s || (!o && binding == UINT32_MAX))
		return;
	s->slots = array_grow(s->slots, s->nslots, &s->capslots, sizeof(*s->slots), 4);
	uint32_t at = binding == UINT32_MAX ? UINT32_MAX
					    : vk_iface_binding_at(t->iface, s->handle, binding, elem);
	s->slots[s->nslots++] = (slot){binding, elem, o, r, at};
}

typedef struct holder {
	trim *t;
	obj *s;
	rec *r;         /* the update */
	bool unknown;   /* a descriptor of a type this does not follow */
} holder;

/* What descriptor D shows: its view or buffer. */
static void descriptor_holds(void *ctx, const vk_descriptor *d)
{
	holder *h = ctx;
	bool known;
	obj *o = descriptor_shows(h->t, d, &known);
	if (!known)
		h->unknown = true;
	else
		set_slot(h->t, h->s, d->binding, d->element, o, h->r);
}

/* Of an update of set S that names IN, where it wrote what this does not
 * follow (acceleration structures hide in a write's pNext): all that
 * the update names, for good. */
static void holds_unknown(trim *t, const holder *h, const finds *in)
{
	for (uint32_t i = 0; h->unknown && i < in->n; i++) {
		obj *o = obj_lookup(t, in->v[i].h, in->v[i].value);
		if (o && o->h != trim_types.descriptor_set &&
		    o->h != trim_types.descriptor_update_template && !o->h->dispatchable)
			set_slot(t, h->s, UINT32_MAX, 0, o, h->r);
	}
}

/* What a template write (C, CMD, ARGS, naming IN) puts into set S; all
 * it names, for good, where its entries or data are not known. */
static void template_holds(trim *t, obj *s, rec *r, const trace_call *c,
			   const vk_command_info *cmd, const void *args, const finds *in)
{
	holder h = {t, s, r, false};
	const trace_value *v;
	const obj *tm = template_of(t, c, cmd, args, &v);
	if (!tm || !vk_template_descriptors(tm->tmpl, tm->ntmpl, v->blob, v->len,
					    descriptor_holds, &h))
		h.unknown = true;
	holds_unknown(t, &h, in);
}

/* What write W puts into its set S. */
static void write_holds(trim *t, obj *s, rec *r, const VkWriteDescriptorSet *w,
			const finds *in)
{
	holder h = {t, s, r, false};
	vk_write_descriptors(w, descriptor_holds, &h);
	holds_unknown(t, &h, in);
}

/* Set S lets shaders write the storage targets ST (storage_targets()):
 * a command that binds it writes them.  What an earlier write of the
 * same binding put there stays: a writer too many, never one missing. */
static void set_storage(obj *s, const stargets *st)
{
	for (uint32_t k = 0; k < st->o.n; k++) {
		obj *o = st->o.v[k];
		uint32_t at = st->at[k], i = 0;
		while (i < s->storage.n && (s->storage.v[i] != o || s->storage_at[i] != at))
			i++;
		if (i < s->storage.n)
			continue;
		o->refs++;
		o->set_refs++;
		vec_push(&s->storage, o);
		s->storage_at = trace_xrealloc(s->storage_at, s->storage.cap * sizeof(*s->storage_at));
		s->storage_at[s->storage.n - 1] = at;
	}
}

/* What copy CP puts into set S from FROM of storage descriptors: what
 * FROM has at its source binding or after (a copy runs on into the next
 * bindings), at any binding of S. */
static void copy_storage(obj *s, const obj *from, const VkCopyDescriptorSet *cp)
{
	stargets st = {0};
	for (uint32_t k = 0; from && from != s && k < from->storage.n; k++)
		if (from->storage_at[k] == UINT32_MAX || from->storage_at[k] >= cp->srcBinding) {
			vec_push(&st.o, from->storage.v[k]);
			st.at = trace_xrealloc(st.at, st.o.cap * sizeof(*st.at));
			st.at[st.o.n - 1] = UINT32_MAX;
		}
	set_storage(s, &st);
	stargets_free(&st);
}

/* What copy CP (update R; NULL: the range's) puts into set S from FROM. */
static void copy_holds(trim *t, obj *s, obj *from, const VkCopyDescriptorSet *cp, rec *r)
{
	for (uint32_t k = 0; from && k < cp->descriptorCount; k++) {
		obj *o = NULL;
		for (uint32_t j = 0; j < from->nslots; j++)
			if (from->slots[j].binding == cp->srcBinding &&
			    from->slots[j].elem == cp->srcArrayElement + k)
				o = from->slots[j].o;
		set_slot(t, s, cp->dstBinding, cp->dstArrayElement + k, o, r);
	}
	for (uint32_t j = 0; from && from != s && j < from->nslots; j++)
		if (from->slots[j].binding == UINT32_MAX)
			set_slot(t, s, UINT32_MAX, 0, from->slots[j].o, r);
	if (from && r)
		from->copied = r->no;
}

/* Each set written keeps the record and all it names (the setup makes
 * them for it), but holds only what its own writes put there: a set
 * written in the same call as another does not read the other's texture. */
static void update_sets(trim *t, rec *r, const void *args, const finds *in)
{
	const vk_args_vkUpdateDescriptorSets *a = args;
	const vk_handle_info *hset = trim_types.descriptor_set;
	for (uint32_t i = 0; i < a->descriptorWriteCount; i++) {
		obj *s = obj_lookup(t, hset, (uint64_t)a->pDescriptorWrites[i].dstSet);
		if (!s)
			continue;
		obj_attach_all(t, s, r, in);
		write_holds(t, s, r, &a->pDescriptorWrites[i], in);
		bsink sk = {s, NULL};
		write_reads(t, &sk, &a->pDescriptorWrites[i]);
		stargets st = {0};
		storage_targets(t, s->handle, &a->pDescriptorWrites[i], &st);
		set_storage(s, &st);
		stargets_free(&st);
	}
	for (uint32_t i = 0; i < a->descriptorCopyCount; i++) {
		obj *s = obj_lookup(t, hset, (uint64_t)a->pDescriptorCopies[i].dstSet);
		obj *from = obj_lookup(t, hset, (uint64_t)a->pDescriptorCopies[i].srcSet);
		if (!s)
			continue;
		obj_attach_all(t, s, r, in);
		/* which buffer bytes it copies matters little: all of them,
		 * for good; what the descriptors show, one by one */
		for (uint32_t k = 0; from && from != s && k < from->nbd; k++)
			set_bdesc(s, UINT32_MAX, 0, from->bd[k].r.o, from->bd[k].r.off,
				  from->bd[k].r.end);
		copy_holds(t, s, from, &a->pDescriptorCopies[i], r);
		copy_storage(s, from, &a->pDescriptorCopies[i]);
	}
}

/* Set HANDLE in the range: from before it, or one it allocated. */
static obj *set_of(trim *t, uint64_t handle)
{
	obj *s = obj_lookup(t, trim_types.descriptor_set, handle);
	return s ? s : range_set_of(t, handle);
}

/* A set update of the range (vkUpdateDescriptorSets or through a
 * template): what the sets show after it, for the range's own commands.
 * The setup makes them as they were before the range, with the updates
 * it had. */
void range_set_update(trim *t, const trace_call *c, const vk_command_info *cmd,
		      const void *args, const finds *in)
{
	if (!trim_named(cmd->sig.name, "vkUpdateDescriptorSets")) {
		obj *s = set_of(t, (uint64_t)((const vk_args_vkUpdateDescriptorSetWithTemplate *)args)->descriptorSet);
		if (s)
			template_holds(t, s, NULL, c, cmd, args, in);
		return;
	}
	const vk_args_vkUpdateDescriptorSets *a = args;
	for (uint32_t i = 0; i < a->descriptorWriteCount; i++) {
		obj *s = set_of(t, (uint64_t)a->pDescriptorWrites[i].dstSet);
		if (s)
			write_holds(t, s, NULL, &a->pDescriptorWrites[i], in);
	}
	for (uint32_t i = 0; i < a->descriptorCopyCount; i++) {
		obj *s = set_of(t, (uint64_t)a->pDescriptorCopies[i].dstSet);
		if (s)
			copy_holds(t, s, set_of(t, (uint64_t)a->pDescriptorCopies[i].srcSet),
				   &a->pDescriptorCopies[i], NULL);
	}
}

static VkImageAspectFlags aspect_of(VkFormat f)
{
	switch (f) {
	case VK_FORMAT_D16_UNORM:
	case VK_FORMAT_X8_D24_UNORM_PACK32:
	case VK_FORMAT_D32_SFLOAT: return VK_IMAGE_ASPECT_DEPTH_BIT;
	case VK_FORMAT_S8_UINT: return VK_IMAGE_ASPECT_STENCIL_BIT;
	case VK_FORMAT_D16_UNORM_S8_UINT:
	case VK_FORMAT_D24_UNORM_S8_UINT:
	case VK_FORMAT_D32_SFLOAT_S8_UINT:
		return VK_IMAGE_ASPECT_DEPTH_BIT | VK_IMAGE_ASPECT_STENCIL_BIT;
	default: return VK_IMAGE_ASPECT_COLOR_BIT;
	}
}

/* The stencil layout of depth/stencil reference R: its own, or one a
 * VkAttachmentReferenceStencilLayout gives. */
static VkImageLayout stencil_layout(const VkAttachmentReference2 *r)
{
	for (const VkBaseInStructure *p = r->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_ATTACHMENT_REFERENCE_STENCIL_LAYOUT)
			return ((const VkAttachmentReferenceStencilLayout *)p)->stencilLayout;
	return r->layout;
}

/*
 * Whether render pass CI only reads attachment I: a depth/stencil one,
 * its contents kept (not from UNDEFINED, loaded and stored, each aspect),
 * that every subpass names at most as its depth/stencil attachment in a
 * layout read-only for each aspect, or as an input: draws may not write
 * an aspect there, as under dynamic rendering (access.c).  A colour,
 * resolve or depth/stencil resolve use writes.
 */
static bool render_pass_read_only(const VkRenderPassCreateInfo2 *ci, uint32_t i)
{
	const VkAttachmentDescription2 *d = &ci->pAttachments[i];
	VkImageAspectFlags aspect = aspect_of(d->format);
	bool depth = aspect & VK_IMAGE_ASPECT_DEPTH_BIT, stencil = aspect & VK_IMAGE_ASPECT_STENCIL_BIT;
	if ((!depth && !stencil) || d->initialLayout == VK_IMAGE_LAYOUT_UNDEFINED ||
	    (depth && !ops_keep(d->loadOp, d->storeOp)) ||
	    (stencil && !ops_keep(d->stencilLoadOp, d->stencilStoreOp)))
		return false;
	for (uint32_t s = 0; s < ci->subpassCount; s++) {
		const VkSubpassDescription2 *sp = &ci->pSubpasses[s];
		for (uint32_t k = 0; k < sp->colorAttachmentCount; k++)
			if (sp->pColorAttachments[k].attachment == i ||
			    (sp->pResolveAttachments && sp->pResolveAttachments[k].attachment == i))
				return false;
		const VkAttachmentReference2 *ds = sp->pDepthStencilAttachment;
		if (ds && ds->attachment == i &&
		    ((depth && !layout_read_only(ds->layout, false)) ||
		     (stencil && !layout_read_only(stencil_layout(ds), true))))
			return false;
		for (const VkBaseInStructure *p = sp->pNext; p; p = p->pNext) {
			const VkSubpassDescriptionDepthStencilResolve *r = (const void *)p;
			if (p->sType == VK_STRUCTURE_TYPE_SUBPASS_DESCRIPTION_DEPTH_STENCIL_RESOLVE &&
			    r->pDepthStencilResolveAttachment &&
			    r->pDepthStencilResolveAttachment->attachment == i)
				return false;
		}
	}
	return true;
}

/* Render pass O's attachments: their layouts, whether their contents go
 * at the start (a transition from UNDEFINED, or nothing loaded), and
 * whether they are only read. */
static void attachments(obj *o, const VkRenderPassCreateInfo2 *ci)
{
	o->natt = ci->attachmentCount;
	o->att_layout = trace_xcalloc(2 * o->natt, sizeof(*o->att_layout));
	for (uint32_t i = 0; i < ci->attachmentCount; i++) {
		const VkAttachmentDescription2 *d = &ci->pAttachments[i];
		o->att_layout[2 * i] = d->initialLayout;
		o->att_layout[2 * i + 1] = d->finalLayout;
		if (i < 32 && (d->initialLayout == VK_IMAGE_LAYOUT_UNDEFINED ||
			       (load_op_discards(d->loadOp) && load_op_discards(d->stencilLoadOp))))
			o->discard |= 1u << i;
		if (i < 32 && render_pass_read_only(ci, i))
			o->read_only |= 1u << i;
	}
}

/* Creation: the object remembers what later analysis wants of it. */
static void created(trim *t, obj *o, const char *n, const void *args)
{
	if (!strcmp(n, "vkCreateBuffer")) {
		const VkBufferCreateInfo *ci = ((const vk_args_vkCreateBuffer *)args)->pCreateInfo;
		o->usage = ci->usage;
		o->whole = ci->flags & VK_BUFFER_CREATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT;
		o->msize = ci->size;
		o->takes = true;
	} else if (!strcmp(n, "vkCreateImage")) {
		const VkImageCreateInfo *ci = ((const vk_args_vkCreateImage *)args)->pCreateInfo;
		o->usage = ci->usage;
		o->initial = ci->initialLayout;
		image_subresources(o, ci->mipLevels, ci->arrayLayers);
		o->aspect = aspect_of(ci->format);
		o->format = ci->format;
		o->extent = ci->extent;
		o->takes = ci->tiling == VK_IMAGE_TILING_LINEAR;
	} else if (!strcmp(n, "vkGetDeviceQueue")) {
		const vk_args_vkGetDeviceQueue *a = args;
		o->family = a->queueFamilyIndex;
		o->device = (uint64_t)(uintptr_t)a->device;
	} else if (!strcmp(n, "vkGetDeviceQueue2")) {
		const vk_args_vkGetDeviceQueue2 *a = args;
		o->family = a->pQueueInfo->queueFamilyIndex;
		o->device = (uint64_t)(uintptr_t)a->device;
	} else if (!strcmp(n, "vkCreateImageView")) {
		const vk_args_vkCreateImageView *a = args;
		o->target = obj_lookup(t, trim_types.image, (uint64_t)a->pCreateInfo->image);
		o->sub = a->pCreateInfo->subresourceRange;
	} else if (!strcmp(n, "vkCreateBufferView")) {
		const VkBufferViewCreateInfo *ci = ((const vk_args_vkCreateBufferView *)args)->pCreateInfo;
		o->target = obj_lookup(t, trim_types.buffer, (uint64_t)ci->buffer);
		o->voff = ci->offset;
		o->vend = ci->range == VK_WHOLE_SIZE ? UINT64_MAX : span_upto(ci->offset, ci->range);
	} else if (!strcmp(n, "vkCreateFramebuffer")) {
		const VkFramebufferCreateInfo *ci = ((const vk_args_vkCreateFramebuffer *)args)->pCreateInfo;
		const vk_handle_info *hv = trim_types.image_view;
		if (!(ci->flags & VK_FRAMEBUFFER_CREATE_IMAGELESS_BIT))
			for (uint32_t i = 0; i < ci->attachmentCount && ci->pAttachments; i++)
				vec_push(&o->views, obj_lookup(t, hv, (uint64_t)ci->pAttachments[i]));
	} else if (!strcmp(n, "vkCreateRenderPass")) {
		VkRenderPassCreateInfo2 *ci =
			vk_render_pass2_of(((const vk_args_vkCreateRenderPass *)args)->pCreateInfo);
		attachments(o, ci);
		free(ci);
	} else if (trim_named(n, "vkCreateRenderPass2")) {
		attachments(o, ((const vk_args_vkCreateRenderPass2 *)args)->pCreateInfo);
	} else if (trim_named(n, "vkCreateDescriptorUpdateTemplate")) {
		const VkDescriptorUpdateTemplateCreateInfo *ci =
			((const vk_args_vkCreateDescriptorUpdateTemplate *)args)->pCreateInfo;
		obj_template(o, ci);
	} else if (!strcmp(n, "vkCreateFence")) {
		const vk_args_vkCreateFence *a = args;
		o->fence = a->pCreateInfo->flags & VK_FENCE_CREATE_SIGNALED_BIT ? 1 : 2;
	} else if (!strcmp(n, "vkCreateEvent")) {
		o->device = (uint64_t)(uintptr_t)((const vk_args_vkCreateEvent *)args)->device;
	}
	if (o->target)
		o->target->refs++;
}

/* Whether objects of type MADE that CMD makes come from an object of type
 * FROM it names, and end with it: an allocation's pool, the parent the
 * registry gives the handle; a get's non-dispatchable object, as a
 * swapchain's images, which vkDestroySwapchainKHR takes along (the
 * registry gives VkImage's parent as VkDevice).  Wine's d3d on Vulkan
 * destroys a swapchain and its next one's images come back with the same
 * handles: taken for the old ones, they were never made again. */
static bool made_from(const vk_command_info *cmd, const vk_handle_info *made,
		      const vk_handle_info *from)
{
	if (!from || from->dispatchable)
		return false;
	if (cmd->action == VK_ACTION_GET)
		return true;
	if (cmd->action != VK_ACTION_ALLOCATE || !made->parent)
		return false;
	size_t n = strlen(from->name);
	for (const char *p = made->parent; (p = strstr(p, from->name)); p += n)
		if ((p == made->parent || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static void create(trim *t, rec *r, const vk_command_info *cmd, const void *args, const finds *in)
{
	finds out = {0};
	vk_walk_handles(cmd, (void *)args, true, finds_add, &out);
	const char *n = cmd->sig.name;
	if (!out.n) {
		/* a count query: the call that fills comes next */
		keep_with_dispatchable(t, r, in);
		free(out.v);
		return;
	}
	obj *owner = NULL;
	for (uint32_t i = 0; i < in->n && !owner; i++)
		if (made_from(cmd, out.v[0].h, in->v[i].h))
			owner = obj_lookup(t, in->v[i].h, in->v[i].value);
	for (uint32_t i = 0; i < out.n; i++) {
		obj *o = obj_lookup(t, out.v[i].h, out.v[i].value);
		if (o && (cmd->action == VK_ACTION_GET || !strncmp(n, "vkEnumerate", 11)))
			continue; /* asked again: the first answer made it */
		if (o) /* a handle reused without a destroy we saw */
			obj_kill(t, o, NULL);
		o = obj_new(t, out.v[i].value, out.v[i].h);
		obj_attach_all(t, o, r, in);
		if (owner) {
			owner->refs++;
			o->owner = owner;
			owner->owns = true;
		}
		created(t, o, n, args);
		if (!strcmp(n, "vkGetSwapchainImagesKHR"))
			o->index = i;
		t->live_records++;
	}
	if (!strcmp(n, "vkCreateSemaphore")) {
		const vk_args_vkCreateSemaphore *a = args;
		obj *o = obj_lookup(t, out.v[0].h, out.v[0].value);
		for (const VkBaseInStructure *p = a->pCreateInfo->pNext; p; p = p->pNext)
			if (p->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {
				const VkSemaphoreTypeCreateInfo *ty = (const void *)p;
				if (ty->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE) {
					o->timeline = true;
					o->value = ty->initialValue;
				}
			}
		o->device = (uint64_t)(uintptr_t)a->device;
	}
	if (!strcmp(n, "vkCreateFence") || (!strcmp(n, "vkCreateSemaphore") &&
					    obj_lookup(t, out.v[0].h, out.v[0].value)->timeline))
		r->fixup = obj_lookup(t, out.v[0].h, out.v[0].value);
	free(out.v);
}

static void destroy(trim *t, rec *r, const vk_command_info *cmd, const finds *in)
{
	for (uint32_t i = 0; i < in->n; i++) {
		if (in->v[i].h != cmd->object)
			continue;
		obj *o = obj_lookup(t, in->v[i].h, in->v[i].value);
		if (!o)
			continue;
		if (o->owns)
			obj_kill_children(t, o, r);
		obj_kill(t, o, r);
	}
}

/* The command buffer a vkCmd* (or begin, end, reset) names first. */
obj *finds_command_buffer(trim *t, const finds *in)
{
	if (in->n && in->v[0].top && in->v[0].h == trim_types.command_buffer)
		return range_cb_lookup(t, in->v[0].value);
	return NULL;
}

/* CB reset by record R: its recording goes, R is kept for the next. */
static void reset_command_buffer(obj *cb, rec *r)
{
	recording_unref(cb->cur);
	cb->cur = NULL;
	rec_unref(cb->reset);
	cb->reset = rec_ref(r);
}

static recording *recording_new(obj *cb)
{
	recording *r = trace_xcalloc(1, sizeof(*r));
	r->refs = 1;
	/* it needs its command buffer: the cycle ends when the buffer dies */
	recording_dep(r, cb);
	r->reset = cb->reset;
	cb->reset = NULL;
	recording_unref(cb->cur);
	cb->cur = r;
	return r;
}

static void recording_image(void *ctx, obj *o, const VkImageSubresourceRange *sub,
			    enum image_use use, bool discard, int32_t expect, int32_t final)
{
	recording *rc = ctx;
	recording_dep(rc, o);
	if (use == IMAGE_WRITE)
		recording_write(rc, o, image_subs(o, sub),
				discard ? image_subs_of(o, sub, true) : 0);
	if (expect >= 0)
		recording_layout(rc, o, sub, expect, final);
}

/* The writes (and layouts) of commands whose structs say more than their
 * handles: barriers, render passes, push descriptors (through templates
 * too). */
static void record_special(trim *t, recording *rc, const trace_call *c,
			   const vk_command_info *cmd, const void *args)
{
	const char *n = cmd->sig.name;
	stargets st = {0};
	command_images(t, n, args, recording_image, rc);
	/* (pushed storage descriptors: written, whatever the shaders declare) */
	if (trim_named(n, "vkCmdPushDescriptorSet")) {
		const vk_args_vkCmdPushDescriptorSetKHR *a = args;
		for (uint32_t i = 0; i < a->descriptorWriteCount; i++)
			storage_targets(t, 0, &a->pDescriptorWrites[i], &st);
	} else if (trim_named(n, "vkCmdPushDescriptorSetWithTemplate")) {
		template_targets(t, 0, c, cmd, args, &st);
	}
	for (uint32_t i = 0; i < st.o.n; i++)
		storage_written(rc, st.o.v[i]);
	stargets_free(&st);
}

/* A command recorded: what it names, what it writes. */
static void record(trim *t, rec *r, const trace_call *c, const vk_command_info *cmd,
		   const void *args, const finds *in)
{
	obj *cb = finds_command_buffer(t, in);
	if (!cb)
		return;
	recording *rc = cb->cur ? cb->cur : recording_new(cb);
	vec_push(&rc->recs, rec_ref(r));
	t->live_records++;
	const char *n = cmd->sig.name;
	record_special(t, rc, c, cmd, args);
	bool shaders = trim_cmd_class(t, cmd) & TC_SHADERS;
	if (shaders)
		shader_writes(t, rc, cb->handle, n);
	recording_set_reads_add(t, rc, n, shaders, cb->handle, in);
	/* a set bound by a command vk_iface does not follow (a
	 * vkCmdBindDescriptorSets2): its draws' writes are not known, so all
	 * its storage counts as written here */
	bool followed = bind_followed(t, n, cb->handle, in);
	if (!strcmp(n, "vkEndCommandBuffer"))
		rc->ended = true;
	event_record(t, rc, cmd, args);
	cmd_reads(t, c, cmd, args, in, &rc->reads);
	for (uint32_t i = 1; i < in->n; i++) {
		const found *f = &in->v[i];
		obj *o = obj_lookup(t, f->h, f->value);
		if (!o)
			continue;
		recording_dep(rc, o);
		/* a secondary it executes: as recorded now, whatever becomes
		 * of the buffer after */
		if (o->h == trim_types.command_buffer && o != cb && o->cur &&
		    !vec_has(&rc->execs, o->cur)) {
			o->cur->refs++;
			vec_push(&rc->execs, o->cur);
		}
		const char *fn = f->f ? f->f->name : "";
		if (f->h == trim_types.buffer && !strncmp(fn, "dst", 3))
			recording_write(rc, o, obj_subs(o), transfer_dst_whole(t, n, args, o));
		else if (f->h == trim_types.image &&
			 (!strcmp(fn, "dstImage") || (f->top && !strcmp(fn, "image"))))
			recording_write(rc, o, transfer_dst_subs(n, args, o),
					transfer_dst_whole(t, n, args, o));
		else if (f->h == trim_types.descriptor_set && !followed)
			for (uint32_t k = 0; k < o->storage.n; k++)
				storage_written(rc, o->storage.v[k]);
	}
}

/* The objects a submit names, directly or through views, descriptor sets
 * and framebuffers, into ALL; of them, into OUT, those whose contents or
 * layouts it sees: host-written buffers and images.  Of a set, what it
 * shows now.  Not a zombie: a set's records keep the views written into
 * it before its latest update, and those views' images, after their
 * destroy (zink rewrites a set and destroys the texture it named: the
 * setup then gave that image a layout, or contents, after its
 * vkDestroyImage). */
static void reach(trim *t, obj *o, vec *out, vec *all)
{
	if (!o || !o->alive || o->stamp == t->stamp)
		return;
	o->stamp = t->stamp;
	vec_push(all, o);
	if (o->cont || image_laid(o))
		vec_push(out, o);
	for (uint32_t i = 0; o->h == trim_types.descriptor_set && i < o->nslots; i++)
		reach(t, o->slots[i].o, out, all);
	if (o->h == trim_types.framebuffer)
		for (uint32_t i = 0; i < o->deps.n; i++)
			reach(t, o->deps.v[i], out, all);
	if (o->target)
		reach(t, o->target, out, all);
}

/* The buffer bytes the descriptor sets RC binds hold now, into OUT; with
 * SECONDARIES, those of the secondary command buffers it executes too
 * (their own reads as well). */
void recording_set_reads(trim *t, const recording *rc, breads *out, bool secondaries)
{
	for (uint32_t i = 0; i < rc->deps.n; i++) {
		const obj *o = rc->deps.v[i];
		if (o->h == trim_types.descriptor_set) {
			for (uint32_t k = 0; k < o->nbd; k++)
				breads_add(out, o->bd[k].r.o, o->bd[k].r.off, o->bd[k].r.end);
		} else if (secondaries && i > 0 && o->h == trim_types.command_buffer &&
			   recording_exec(rc, o)) {
			const recording *sec = recording_exec(rc, o);
			for (uint32_t k = 0; k < sec->reads.n; k++)
				breads_add(out, sec->reads.v[k].o, sec->reads.v[k].off,
					   sec->reads.v[k].end);
			recording_set_reads(t, sec, out, false);
		}
	}
}

/* Whether every recording of OLD that writes O is in S: S does again
 * all that OLD did to O. */
static bool supersedes(const submit *s, const submit *old, const obj *o)
{
	for (uint32_t i = 0; i < old->recordings.n; i++) {
		const recording *r = old->recordings.v[i];
		if (recording_wrote(r, o) && !vec_has(&s->recordings, r))
			return false;
	}
	return true;
}

/* X's subresources SUBS of O dropped by S: a former writer of them, if a
 * writing submit named O after X (the setup may run it: it reads what X
 * wrote), with a reference of its own to X's submit. */
static void add_former(trim *t, obj *o, const writer *x, uint64_t subs, const submit *s)
{
	if (!subs || o->named <= x->s->r->no)
		return;
	o->former = array_grow(o->former, o->nformer, &o->capformer, sizeof(*o->former), 2);
	o->former[o->nformer++] = (writer){x->s, subs, s->r->no, 0, 0};
	x->s->refs++;
	t->formers_made++;
}

/* S writes W->subs of O, and ends what earlier writers wrote of
 * W->dropped: a writer left holding none of O, or whose writes S does
 * again, is no longer one (but may be a former one: add_former).  A
 * texture whose levels 1 and on each frame makes again from UNDEFINED
 * keeps the upload (level 0) and the last frame's submit (the others)
 * as writers, not every frame's; a pool of images each uploaded whole
 * by a copy (GStreamer's) keeps each image's last upload. */
static void add_writer(trim *t, obj *o, submit *s, const wrote *w)
{
	/* S drops nothing and runs no recording an earlier submit ran (each
	 * of those holds one that writes O): no writer ends, none need be
	 * looked at.  A swapchain image that every draw of Pingus' loads
	 * and none clears has 114,000 writers by frame 300. */
	bool fresh = !w->dropped;
	for (uint32_t i = 0; fresh && i < s->recordings.n; i++)
		fresh = ((const recording *)s->recordings.v[i])->submits == 0;
	uint32_t k = 0;
	writer *own = NULL;
	for (uint32_t i = 0; !fresh && i < o->nwriters; i++) {
		writer x = o->writers[i];
		if (x.s != s) {
			bool gone = supersedes(s, x.s, o);
			add_former(t, o, &x, gone ? x.subs : x.subs & w->dropped, s);
			x.subs &= ~w->dropped;
			if (!x.subs || gone) {
				submit_unref(x.s);
				continue;
			}
		}
		o->writers[k++] = x;
	}
	if (!fresh)
		o->nwriters = k;
	/* S, if it writes O already, is the last writer: it came last */
	if (o->nwriters && o->writers[o->nwriters - 1].s == s)
		own = &o->writers[o->nwriters - 1];
	if (own) {
		own->subs |= w->subs;
		return;
	}
	o->writers = array_grow(o->writers, o->nwriters, &o->capwriters, sizeof(*o->writers), 2);
	o->writers[o->nwriters++] = (writer){s, w->subs, UINT64_MAX, 0, 0};
	s->refs++;
}

static void timeline_signal(trim *t, uint64_t sem, uint64_t value)
{
	obj *o = obj_lookup(t, trim_types.semaphore, sem);
	if (o && o->timeline && value > o->value)
		o->value = value;
}

/* A semaphore a batch (or an acquire: QUEUE 0) signals: a timeline one
 * takes VALUE, a binary one holds a signal until something waits. */
static void semaphore_signal(trim *t, uint64_t sem, uint64_t value, uint64_t queue)
{
	obj *o = obj_lookup(t, trim_types.semaphore, sem);
	if (o && o->timeline) {
		timeline_signal(t, sem, value);
	} else if (o) {
		o->pending = true;
		o->signal_queue = queue;
	}
}

/* A wait uses up a binary semaphore's signal; a timeline one keeps its
 * value. */
static void semaphore_wait(trim *t, uint64_t sem)
{
	obj *o = obj_lookup(t, trim_types.semaphore, sem);
	if (o && !o->timeline)
		o->pending = false;
}

static void fence_signal(trim *t, uint64_t fence)
{
	obj *o = obj_lookup(t, trim_types.fence, fence);
	if (o)
		o->fence = 1;
}

/* vk_sync_walk's uses, as the trimmer keeps them: what a batch signals
 * remembers its queue (put_signals signals it there again). */
static void sync_use(void *ctx, const vk_sync_use *u)
{
	trim *t = ctx;
	if (u->fence) {
		if (u->op == VK_SYNC_SIGNAL)
			fence_signal(t, u->handle);
	} else if (u->op == VK_SYNC_WAIT) {
		semaphore_wait(t, u->handle);
	} else if (u->op == VK_SYNC_SIGNAL) {
		semaphore_signal(t, u->handle, u->value ? *u->value : 0, u->queue);
	}
}

/*
 * What a submit, a sparse bind, an acquire or a present does to
 * semaphores and fences.  The setup runs no submit with its semaphores,
 * so it needs to know which binary ones the range finds signaled
 * (put_signals).  An acquire that got no image signals nothing.  Only
 * these: fences and semaphores that the host waits for, signals or
 * resets keep the state their queue work gave them.
 */
static void sync_call(trim *t, const vk_command_info *cmd, void *args)
{
	vk_sync_cmd kind = vk_sync_command(cmd);
	VkResult res = VK_SUCCESS;
	switch (kind) {
	case VK_SYNC_ACQUIRE:
		res = ((const vk_args_vkAcquireNextImageKHR *)args)->result;
		break;
	case VK_SYNC_ACQUIRE2:
		res = ((const vk_args_vkAcquireNextImage2KHR *)args)->result;
		break;
	case VK_SYNC_QUEUE_SUBMIT:
	case VK_SYNC_QUEUE_SUBMIT2:
	case VK_SYNC_BIND_SPARSE:
	case VK_SYNC_PRESENT:
		break;
	default:
		return;
	}
	vk_sync_walk(kind, args, res, sync_use, t);
}

/* A submit: the semaphores and fences it signals (sync_call); for the
 * commands that write, a submit that the writers of what they wrote
 * remember. */
/* What set S shows now, shared until it is updated. */
static showing *set_showing(obj *s)
{
	if (!s->now) {
		s->now = trace_xmalloc(sizeof(*s->now) + s->nslots * sizeof(*s->now->v));
		s->now->refs = 1;
		s->now->n = 0;
		for (uint32_t i = 0; i < s->nslots; i++)
			if (s->slots[i].o)
				s->now->v[s->now->n++] = (shown_slot){s->slots[i].o, s->slots[i].at};
	}
	s->now->refs++;
	return s->now;
}

/* What the sets recording RC binds (and those of the secondaries it
 * executes) show now, into what it showed: at its first submit all, at
 * a later one what was written since (a set updated after it was bound,
 * where the set's layout lets it be). */
static void recording_snap(trim *t, recording *rc, uint64_t no)
{
	bool again = rc->snapped != 0;
	for (uint32_t i = 0; i < rc->deps.n; i++) {
		obj *o = rc->deps.v[i];
		recording *sec = i > 0 && o->h == trim_types.command_buffer ? recording_exec(rc, o) : NULL;
		if (sec && sec != rc)
			recording_snap(t, sec, no);
		if (o->h != trim_types.descriptor_set)
			continue;
		o->used = no;
		if (again && o->updated < rc->snapped)
			continue;
		rc->shown = array_grow(rc->shown, rc->nshown, &rc->capshown, sizeof(*rc->shown), 4);
		rc->shown[rc->nshown++] = (shown){o, set_showing(o)};
	}
	rc->snapped = t->set_updates + 1;
}

static void queue_submit(trim *t, rec *r, const vk_command_info *cmd, void *args,
			 const finds *in)
{
	const vk_handle_info *hcb = trim_types.command_buffer;
	submit *s = trace_xcalloc(1, sizeof(*s));
	s->refs = 1;
	s->r = rec_ref(r);
	r->sub = s;
	if (in->n && in->v[0].top) {
		s->queue = obj_lookup(t, in->v[0].h, in->v[0].value);
		if (s->queue)
			s->queue->refs++;
	}
	for (uint32_t i = 0; i < in->n; i++) {
		if (in->v[i].h != hcb)
			continue;
		obj *cb = obj_lookup(t, hcb, in->v[i].value);
		if (cb && cb->cur && !vec_has(&s->recordings, cb->cur)) {
			cb->cur->refs++;
			vec_push(&s->recordings, cb->cur);
		}
	}
	for (uint32_t i = 0; i < s->recordings.n; i++)
		recording_snap(t, s->recordings.v[i], r->no);
	sync_call(t, cmd, args);
	event_submit(s);  /* before what remembers S: its waits */
	/* its recordings and the secondaries' they execute, as recorded
	 * (a list of its own only where there are secondaries) */
	vec ran = {0};
	bool execs = false;
	for (uint32_t i = 0; i < s->recordings.n && !execs; i++)
		execs = ((recording *)s->recordings.v[i])->execs.n > 0;
	if (execs) {
		for (uint32_t i = 0; i < s->recordings.n; i++)
			vec_push(&ran, s->recordings.v[i]);
		for (uint32_t i = 0; i < ran.n; i++) {
			recording *rc = ran.v[i];
			for (uint32_t j = 0; j < rc->execs.n; j++)
				if (!vec_has(&ran, rc->execs.v[j]))
					vec_push(&ran, rc->execs.v[j]);
		}
	} else {
		ran = s->recordings;
	}
	bool writes = false;
	for (uint32_t i = 0; i < ran.n && !writes; i++)
		writes = ((recording *)ran.v[i])->nwrites > 0;
	if (writes) {
		/* what the host had written into what it names, and the
		 * layouts of its images, as they were: through its
		 * secondaries too (Qt Quick draws its layers' textures in
		 * secondaries, their matrices in buffers written before) */
		vec seen = {0}, named = {0};
		t->stamp++;
		for (uint32_t i = 0; i < ran.n; i++) {
			recording *rc = ran.v[i];
			for (uint32_t j = 0; j < rc->deps.n; j++)
				reach(t, rc->deps.v[j], &seen, &named);
		}
		s->snaps = trace_xcalloc(seen.n, sizeof(*s->snaps));
		s->before = trace_xcalloc(seen.n, sizeof(*s->before));
		for (uint32_t i = 0; i < seen.n; i++) {
			obj *o = seen.v[i];
			if (o->cont) {
				o->refs++;
				s->snaps[s->nsnaps++] = (snap){o, content_ref(o->cont)};
			}
			if (image_laid(o)) {
				o->refs++;
				uint32_t cap = UINT32_MAX;  /* room for all made above */
				lay *l = lay_new(&s->before, &s->nbefore, &cap, o);
				memcpy(lay_expect(l), o->layout, o->nsub * sizeof(int32_t));
				memcpy(lay_final(l), o->layout, o->nsub * sizeof(int32_t));
			}
		}
		/* room was made for all it reaches; it keeps what it holds (a
		 * draw of zink's reaches some 100 objects, 2 of them written) */
		s->snaps = trace_xrealloc(s->snaps, (s->nsnaps ? s->nsnaps : 1) * sizeof(*s->snaps));
		s->before = trace_xrealloc(s->before, (s->nbefore ? s->nbefore : 1) * sizeof(*s->before));
		for (uint32_t i = 0; i < s->recordings.n; i++)
			recording_set_reads(t, s->recordings.v[i], &s->reads, true);
		for (uint32_t i = 0; i < ran.n; i++) {
			recording *rc = ran.v[i];
			for (uint32_t j = 0; j < rc->nwrites; j++)
				if (rc->writes[j].o->alive)
					add_writer(t, rc->writes[j].o, s, &rc->writes[j]);
		}
		formers_sweep(t);
		for (uint32_t i = 0; i < s->recordings.n; i++)
			((recording *)s->recordings.v[i])->submits++;
		/* after its own writes: a later drop keeps the writers before;
		 * every object it names, also a buffer only the device wrote
		 * (a fill that a copy read, then a later fill dropped) */
		for (uint32_t i = 0; i < named.n; i++)
			((obj *)named.v[i])->named = s->r->no;
		vec_free(&seen);
		vec_free(&named);
	}
	if (execs)
		vec_free(&ran);
	for (uint32_t i = 0; i < s->recordings.n; i++) {
		recording *rc = s->recordings.v[i];
		for (uint32_t j = 0; j < rc->nlays; j++) {
			lay *l = &rc->lays[j];
			const int32_t *f = lay_final(l);
			for (uint32_t k = 0; k < l->o->nsub; k++)
				if (f[k] >= 0)
					l->o->layout[k] = f[k];
		}
	}
	submit_unref(s);
}

/* A USE call: it belongs to the non-dispatchable objects of the command's
 * own type it names (a descriptor set it updates, a buffer it binds), or,
 * for commands of a dispatchable object, to the first non-dispatchable
 * handle found inside its structs; with neither, to the dispatchable
 * objects it names (keep_with_dispatchable). */
static void other(trim *t, rec *r, const vk_command_info *cmd, const finds *in)
{
	bool attached = false;
	if (cmd->object && !cmd->object->dispatchable) {
		for (uint32_t i = 0; i < in->n; i++)
			if (in->v[i].h == cmd->object) {
				obj *o = obj_lookup(t, in->v[i].h, in->v[i].value);
				if (o) {
					obj_attach_all(t, o, r, in);
					attached = true;
				}
			}
	} else {
		/* the objects of the first non-dispatchable type it names */
		const vk_handle_info *ty = NULL;
		for (uint32_t i = 0; i < in->n; i++) {
			if (!in->v[i].h || in->v[i].h->dispatchable || (ty && in->v[i].h != ty))
				continue;
			obj *o = obj_lookup(t, in->v[i].h, in->v[i].value);
			if (o) {
				ty = o->h;
				obj_attach_all(t, o, r, in);
				attached = true;
			}
		}
	}
	if (!attached)
		keep_with_dispatchable(t, r, in);
	else
		t->live_records++;
}


int trim_vk_before(trim *t, const trace_call *c, enum kind k, const vk_command_info *cmd)
{
	if (k == K_UPDATE)
		return content_track(t, c);
	if (!cmd)
		return 0;  /* tracekit's own records */
	void *args;
	if (trim_decode(&t->scratch, cmd, c, &args, t->err) < 0 ||
	    trim_known(t, cmd, args, t->err) < 0)
		return -1;
	if (trim_cmd_class(t, cmd) & TC_IFACE) {
		/* what it says of a record that breaks the rules is replay's
		 * to say: trim follows what it can */
		trace_error ignored = {0};
		vk_iface_note(t->iface, cmd, args, vk_record_result(c) < 0, &ignored);
	}
	if (k == K_DROP)
		return 0;
	if (k == K_SYNC) {
		sync_call(t, cmd, args);
		return 0;
	}
	finds in = {0};
	call_handles(t, c, cmd, args, &in);
	buffer_host_use(t, cmd->sig.name, &in);
	rec *r = rec_new(c);
	switch (k) {
	case K_CREATE: create(t, r, cmd, args, &in); break;
	case K_DESTROY: destroy(t, r, cmd, &in); break;
	case K_BEGIN: {
		obj *cb = finds_command_buffer(t, &in);
		if (cb) {
			recording_new(cb);
			record(t, r, c, cmd, args, &in);
		}
		break;
	}
	case K_RECORD: record(t, r, c, cmd, args, &in); break;
	case K_RESET_CB: {
		obj *cb = finds_command_buffer(t, &in);
		if (cb)
			reset_command_buffer(cb, r);
		break;
	}
	case K_RESET_CMD_POOL: {
		obj *pool = in.n > 1 ? obj_lookup(t, in.v[1].h, in.v[1].value) : NULL;
		for (size_t i = 0; pool && i < t->objs.cap; i++) {
			obj *cb = t->objs.slot[i];
			if (cb && cb->owner == pool)
				reset_command_buffer(cb, r);
		}
		break;
	}
	case K_RESET_DESC_POOL: {
		obj *pool = in.n > 1 ? obj_lookup(t, in.v[1].h, in.v[1].value) : NULL;
		if (pool) /* sets kept for a record that names them end here */
			obj_kill_children(t, pool, r);
		break;
	}
	case K_SUBMIT:
	case K_SUBMIT2: queue_submit(t, r, cmd, args, &in); break;
	case K_RESET_FENCES: {
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = obj_lookup(t, in.v[i].h, in.v[i].value);
			if (o && o->h == trim_types.fence)
				o->fence = 2;
		}
		break;
	}
	case K_SIGNAL: {
		const VkSemaphoreSignalInfo *si = ((const vk_args_vkSignalSemaphore *)args)->pSignalInfo;
		timeline_signal(t, (uint64_t)si->semaphore, si->value);
		break;
	}
	case K_UPDATE_SETS: update_sets(t, r, args, &in); break;
	case K_EVENT: event_host(t, cmd, args); break;
	default:
		other(t, r, cmd, &in);
		alias_call(t, cmd->sig.name, args);
		if (trim_named(cmd->sig.name, "vkUpdateDescriptorSetWithTemplate")) {
			const vk_args_vkUpdateDescriptorSetWithTemplate *a = args;
			bsink sk = {obj_lookup(t, trim_types.descriptor_set, (uint64_t)a->descriptorSet),
				    NULL};
			stargets st = {0};
			if (sk.set) {
				template_holds(t, sk.set, r, c, cmd, args, &in);
				template_reads(t, &sk, c, cmd, args);
				template_targets(t, sk.set->handle, c, cmd, args, &st);
				set_storage(sk.set, &st);
			}
			stargets_free(&st);
		}
		break;
	}
	rec_unref(r);
	free(in.v);
	return 0;
}
