/*
 * Uniform buffers at offsets this device refuses, moved.
 *
 * A capture's device may take a uniform buffer descriptor at an offset
 * that the replay's does not: llvmpipe's minUniformBufferOffsetAlignment
 * is 16, an NVIDIA GPU's 64, an Intel one's 64, and Qt Quick packs its
 * uniforms 16 bytes apart on llvmpipe.  Bound as they are, the replay
 * device reads them from the offset rounded down: a Qt Quick particle
 * scene captured on llvmpipe lost most of its particles on an H100.
 *
 * Such a descriptor (VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, written by
 * vkUpdateDescriptorSets or a template, or copied) is given a slot of ours
 * instead, a buffer range at the device's alignment, and the bytes the
 * program meant are copied into the slot on the device, in queue order:
 *
 *   - before each submitted command buffer that binds a set with a moved
 *     descriptor (or executes a secondary that does), by a command buffer
 *     of ours put just before it in its batch: what the host wrote before
 *     the submit, and the work submitted before it, are in the slot when
 *     the program's commands read it;
 *   - after each transfer command that writes a buffer a moved
 *     descriptor reads (vkCmdCopyBuffer, vkCmdUpdateBuffer,
 *     vkCmdFillBuffer, vkCmdCopyImageToBuffer), in the command buffer
 *     that records it: uniforms uploaded in the command buffer that reads
 *     them land in the slot before the render pass that follows.
 *
 * Each copy has a full barrier before it and after it.  Not followed: a
 * shader's stores into a uniform buffer's bytes (a storage buffer over
 * the same memory), descriptors with dynamic offsets and pushed ones
 * (said once), and work on several queues reading one set at once.
 *
 * --uniform-alignment N replays as if the device's alignment were N, to
 * try a trace for a coarser device on this one.
 */
#include "replay_internal.h"

#define CHUNK ((VkDeviceSize)1 << 20)  /* slots are carved from buffers of this size */
#define CLASSES 21                     /* size classes: 2^0 .. 2^20 bytes */

typedef struct uslot {
	VkBuffer buf;
	VkDeviceSize off, len;
	uint8_t cls;      /* CLASSES: a buffer of its own (larger than CHUNK / 2) */
	VkDeviceMemory own;
} uslot;

/* One moved descriptor of a set: its element reads SIZE bytes of SRC at
 * OFF, from SLOT. */
typedef struct ushadow {
	uint32_t binding, element;
	VkBuffer src;
	VkDeviceSize off, size;
	uslot slot;
} ushadow;

typedef struct uset {
	ushadow *v;
	uint32_t n, cap;
} uset;

/* A command buffer that binds sets with moved descriptors: their copies,
 * recorded into PRE at its first submit after it was begun. */
typedef struct ucb {
	VkDescriptorSet *sets;
	uint32_t n, cap;
	VkCommandBuffer pre;
	uint32_t family;  /* pre's pool's */
	bool stale;       /* begun since pre was recorded */
} ucb;

struct vkr_uniforms {
	VkDeviceSize align;
	tmap sets;      /* (live set, TAG_USET) -> uset* */
	tmap srcs;      /* (live buffer, TAG_USRC) -> the moved descriptors reading it */
	tmap cbs;       /* (live command buffer, TAG_UCB) -> ucb* */
	struct {
		VkBuffer buf;
		VkDeviceMemory mem;
		VkDeviceSize used;
	} *chunks;
	uint32_t nchunks, capchunks;
	uslot *free[CLASSES];
	uint32_t nfree[CLASSES], capfree[CLASSES];
	struct {
		uint32_t family;
		VkCommandPool pool;
	} pools[8];
	uint32_t npools;
};

/* ------------------------------------------------------------------ */
/* Slots. */

static uint8_t class_of(VkDeviceSize size)
{
	uint8_t c = 0;
	while (((VkDeviceSize)1 << c) < size)
		c++;
	return c;
}

static uint32_t memory_type(vkr *r, uint32_t bits)
{
	uint32_t type = 0;
	if (vkd_find_memory_type(&r->d->vk, bits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
				 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 0, &type) < 0)
		vkr_fatal(r, "no memory type of this device takes a uniform buffer of replay's "
			  "(for descriptors at offsets it refuses)");
	return type;
}

/* A buffer of SIZE bytes over memory of its own. */
static void make_buffer(vkr *r, VkDeviceSize size, VkBuffer *buf, VkDeviceMemory *mem)
{
	VkDevice dev = r->d->vk.device;
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
				  .usage = VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
					   VK_BUFFER_USAGE_TRANSFER_DST_BIT};
	VkMemoryRequirements req;
	if (vkCreateBuffer(dev, &bci, NULL, buf) != VK_SUCCESS)
		vkr_fatal(r, "vkCreateBuffer of %llu bytes failed (a slot for uniform descriptors "
			  "at offsets this device refuses)", (unsigned long long)size);
	vkGetBufferMemoryRequirements(dev, *buf, &req);
	VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				    .allocationSize = req.size,
				    .memoryTypeIndex = memory_type(r, req.memoryTypeBits)};
	if (vkAllocateMemory(dev, &mai, NULL, mem) != VK_SUCCESS ||
	    vkBindBufferMemory(dev, *buf, *mem, 0) != VK_SUCCESS)
		vkr_fatal(r, "vkAllocateMemory of %llu bytes failed (a slot for uniform descriptors "
			  "at offsets this device refuses)", (unsigned long long)req.size);
}

static uslot slot_take(vkr *r, vkr_uniforms *u, VkDeviceSize size)
{
	if (size < u->align)
		size = u->align;
	uint8_t c = class_of(size);
	if (size > CHUNK / 2) {
		uslot s = {.cls = CLASSES, .len = size};
		make_buffer(r, size, &s.buf, &s.own);
		return s;
	}
	if (u->nfree[c])
		return u->free[c][--u->nfree[c]];
	VkDeviceSize len = (VkDeviceSize)1 << c;
	if (!u->nchunks || u->chunks[u->nchunks - 1].used + len > CHUNK) {
		if (u->nchunks == u->capchunks) {
			u->capchunks = u->capchunks ? 2 * u->capchunks : 4;
			u->chunks = trace_xrealloc(u->chunks, u->capchunks * sizeof(*u->chunks));
		}
		u->chunks[u->nchunks].used = 0;
		make_buffer(r, CHUNK, &u->chunks[u->nchunks].buf, &u->chunks[u->nchunks].mem);
		u->nchunks++;
	}
	uslot s = {.buf = u->chunks[u->nchunks - 1].buf, .off = u->chunks[u->nchunks - 1].used,
		   .len = len, .cls = c};
	u->chunks[u->nchunks - 1].used += len;  /* (len is a power of two >= align) */
	return s;
}

static void slot_give(vkr *r, vkr_uniforms *u, uslot s)
{
	if (s.cls == CLASSES) {
		vkDestroyBuffer(r->d->vk.device, s.buf, NULL);
		vkFreeMemory(r->d->vk.device, s.own, NULL);
		return;
	}
	if (u->nfree[s.cls] == u->capfree[s.cls]) {
		u->capfree[s.cls] = u->capfree[s.cls] ? 2 * u->capfree[s.cls] : 16;
		u->free[s.cls] = trace_xrealloc(u->free[s.cls], u->capfree[s.cls] * sizeof(uslot));
	}
	u->free[s.cls][u->nfree[s.cls]++] = s;
}

/* ------------------------------------------------------------------ */
/* Moved descriptors, by set. */

static void src_count(vkr_uniforms *u, VkBuffer src, int d)
{
	uint64_t *n = tmap_at(&u->srcs, H(src), TAG_USRC);
	if (!n && d > 0)
		tmap_set(&u->srcs, H(src), TAG_USRC, (uint64_t)d);
	else if (n && (*n += (uint64_t)(int64_t)d) == 0)
		tmap_del(&u->srcs, H(src), TAG_USRC, NULL);
}

static uset *set_of(vkr_uniforms *u, VkDescriptorSet set)
{
	uint64_t *p = tmap_at(&u->sets, H(set), TAG_USET);
	return p ? (uset *)(uintptr_t)*p : NULL;
}

static void drop_at(vkr *r, vkr_uniforms *u, uset *s, uint32_t i)
{
	src_count(u, s->v[i].src, -1);
	slot_give(r, u, s->v[i].slot);
	s->v[i] = s->v[--s->n];
}

static void set_drop(vkr *r, vkr_uniforms *u, VkDescriptorSet set)
{
	uset *s = set_of(u, set);
	if (!s)
		return;
	while (s->n)
		drop_at(r, u, s, s->n - 1);
	free(s->v);
	free(s);
	tmap_del(&u->sets, H(set), TAG_USET, NULL);
}

/* The descriptor at (BINDING, ELEMENT) of SET is not moved (any more). */
static void unmove(vkr *r, vkr_uniforms *u, VkDescriptorSet set, uint32_t binding,
		   uint32_t element)
{
	uset *s = set_of(u, set);
	for (uint32_t i = 0; s && i < s->n; i++)
		if (s->v[i].binding == binding && s->v[i].element == element) {
			drop_at(r, u, s, i);
			return;
		}
}

/* The descriptor at (BINDING, ELEMENT) of SET reads SIZE bytes of SRC at
 * OFF: its slot, reused where it is large enough. */
static const ushadow *move(vkr *r, vkr_uniforms *u, VkDescriptorSet set, uint32_t binding,
			   uint32_t element, VkBuffer src, VkDeviceSize off, VkDeviceSize size)
{
	uset *s = set_of(u, set);
	if (!s) {
		s = trace_xcalloc(1, sizeof(*s));
		tmap_set(&u->sets, H(set), TAG_USET, (uint64_t)(uintptr_t)s);
	}
	ushadow *h = NULL;
	for (uint32_t i = 0; i < s->n && !h; i++)
		if (s->v[i].binding == binding && s->v[i].element == element)
			h = &s->v[i];
	if (h && h->slot.len < size) {
		slot_give(r, u, h->slot);
		h->slot = slot_take(r, u, size);
	} else if (!h) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 4;
			s->v = trace_xrealloc(s->v, s->cap * sizeof(*s->v));
		}
		h = &s->v[s->n++];
		h->binding = binding;
		h->element = element;
		h->slot = slot_take(r, u, size);
		h->src = VK_NULL_HANDLE;
	}
	if (h->src)
		src_count(u, h->src, -1);
	src_count(u, src, 1);
	h->src = src;
	h->off = off;
	h->size = size;
	r->uniforms_moved++;
	return h;
}

/* ------------------------------------------------------------------ */
/* The copies. */

static void barrier(VkCommandBuffer cb, bool after)
{
	VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			     .srcAccessMask = after ? VK_ACCESS_TRANSFER_WRITE_BIT
						    : VK_ACCESS_MEMORY_WRITE_BIT,
			     .dstAccessMask = after ? VK_ACCESS_UNIFORM_READ_BIT |
						      VK_ACCESS_SHADER_READ_BIT |
						      VK_ACCESS_TRANSFER_WRITE_BIT
						    : VK_ACCESS_TRANSFER_READ_BIT |
						      VK_ACCESS_TRANSFER_WRITE_BIT};
	vkCmdPipelineBarrier(cb, after ? VK_PIPELINE_STAGE_TRANSFER_BIT
				       : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
			     after ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
				   : VK_PIPELINE_STAGE_TRANSFER_BIT,
			     0, 1, &b, 0, NULL, 0, NULL);
}

static void copy(vkr *r, VkCommandBuffer cb, const ushadow *h)
{
	VkBufferCopy c = {.srcOffset = h->off, .dstOffset = h->slot.off, .size = h->size};
	vkCmdCopyBuffer(cb, h->src, h->slot.buf, 1, &c);
	r->uniform_copies++;
}

/* Command buffer CB (live) wrote [OFF, OFF + SIZE) of BUF on the
 * device: the slots that read those bytes, copied again after it. */
static void written(vkr *r, vkr_uniforms *u, VkCommandBuffer cb, VkBuffer buf,
		    VkDeviceSize off, VkDeviceSize size)
{
	if (!tmap_at(&u->srcs, H(buf), TAG_USRC))
		return;
	bool any = false;
	for (size_t i = 0; i < u->sets.cap; i++) {
		if (!tmap_used(&u->sets, i))
			continue;
		uset *s = (uset *)(uintptr_t)u->sets.vals[i];
		for (uint32_t k = 0; k < s->n; k++) {
			const ushadow *h = &s->v[k];
			if (h->src != buf || h->off >= off + size || h->off + h->size <= off)
				continue;
			if (!any)
				barrier(cb, false);
			any = true;
			copy(r, cb, h);
		}
	}
	if (any)
		barrier(cb, true);
}

static ucb *cb_of(vkr_uniforms *u, VkCommandBuffer cb, bool make)
{
	uint64_t *p = tmap_at(&u->cbs, H(cb), TAG_UCB);
	if (p || !make)
		return p ? (ucb *)(uintptr_t)*p : NULL;
	ucb *c = trace_xcalloc(1, sizeof(*c));
	tmap_set(&u->cbs, H(cb), TAG_UCB, (uint64_t)(uintptr_t)c);
	return c;
}

static void cb_bound(vkr_uniforms *u, VkCommandBuffer cb, VkDescriptorSet set)
{
	ucb *c = cb_of(u, cb, true);
	for (uint32_t i = 0; i < c->n; i++)
		if (c->sets[i] == set)
			return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->sets = trace_xrealloc(c->sets, c->cap * sizeof(*c->sets));
	}
	c->sets[c->n++] = set;
	c->stale = true;
}

static VkCommandPool pool_for(vkr *r, vkr_uniforms *u, uint32_t family)
{
	for (uint32_t i = 0; i < u->npools; i++)
		if (u->pools[i].family == family)
			return u->pools[i].pool;
	if (u->npools == sizeof(u->pools) / sizeof(u->pools[0]))
		vkr_fatal(r, "command buffers on more than %u queue families bind moved uniform "
			  "descriptors", u->npools);
	VkCommandPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
				      .queueFamilyIndex = family};
	VkCommandPool p;
	if (vkCreateCommandPool(r->d->vk.device, &ci, NULL, &p) != VK_SUCCESS)
		vkr_fatal(r, "vkCreateCommandPool failed (for the copies of moved uniform "
			  "descriptors)");
	u->pools[u->npools].family = family;
	u->pools[u->npools++].pool = p;
	return p;
}

/* C's copies, recorded for a submit to a queue of FAMILY where they are
 * not yet: its command buffer of ours, or null where it binds nothing
 * moved any more. */
static VkCommandBuffer pre_of(vkr *r, vkr_uniforms *u, ucb *c, uint32_t family)
{
	VkDevice dev = r->d->vk.device;
	if (c->pre && !c->stale && c->family == family)
		return c->pre;
	if (c->pre && c->family != family) {
		vkFreeCommandBuffers(dev, pool_for(r, u, c->family), 1, &c->pre);
		c->pre = VK_NULL_HANDLE;
	}
	if (!c->pre) {
		VkCommandBufferAllocateInfo ai = {
			.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
			.commandPool = pool_for(r, u, family),
			.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
		if (vkAllocateCommandBuffers(dev, &ai, &c->pre) != VK_SUCCESS)
			vkr_fatal(r, "vkAllocateCommandBuffers failed (for the copies of moved "
				  "uniform descriptors)");
		c->family = family;
	}
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
	vkBeginCommandBuffer(c->pre, &bi);
	barrier(c->pre, false);
	for (uint32_t i = 0; i < c->n; i++) {
		uset *s = set_of(u, c->sets[i]);
		for (uint32_t k = 0; s && k < s->n; k++)
			copy(r, c->pre, &s->v[k]);
	}
	barrier(c->pre, true);
	if (vkEndCommandBuffer(c->pre) != VK_SUCCESS)
		vkr_fatal(r, "vkEndCommandBuffer failed (the copies of moved uniform descriptors)");
	c->stale = false;
	return c->pre;
}

static void cb_free(vkr *r, vkr_uniforms *u, VkCommandBuffer cb)
{
	ucb *c = cb_of(u, cb, false);
	if (!c)
		return;
	if (c->pre)
		vkFreeCommandBuffers(r->d->vk.device, pool_for(r, u, c->family), 1, &c->pre);
	free(c->sets);
	free(c);
	tmap_del(&u->cbs, H(cb), TAG_UCB, NULL);
}

/* ------------------------------------------------------------------ */
/* The records. */

VkDeviceSize vkr_uniform_alignment(const vkr *r)
{
	VkDeviceSize a = r->d->vk.props.limits.minUniformBufferOffsetAlignment;
	return r->opt->uniform_align > a ? r->opt->uniform_align : a;
}

/* Whether write W's element I is a descriptor to move (capture values). */
static bool misplaced(const VkWriteDescriptorSet *w, uint32_t i, VkDeviceSize align)
{
	return w->descriptorType == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER && w->pBufferInfo &&
	       w->pBufferInfo[i].buffer && w->pBufferInfo[i].offset % align;
}

/* Says once a descriptor whose offset the device refuses and that is not
 * moved (a storage buffer, a dynamic uniform buffer: their bytes are
 * not followed). */
static void unmoved(vkr *r, const VkWriteDescriptorSet *w, uint32_t k, bool push)
{
	const VkPhysicalDeviceLimits *l = &r->d->vk.props.limits;
	VkDescriptorType t = w->descriptorType;
	bool uniform = t == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC ||
		       (push && t == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER);
	bool storage = t == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER ||
		       t == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
	VkDeviceSize align = uniform ? vkr_uniform_alignment(r)
			     : storage ? l->minStorageBufferOffsetAlignment : 0;
	for (uint32_t i = 0; align && w->pBufferInfo && i < w->descriptorCount; i++) {
		if (w->pBufferInfo[i].offset % align == 0)
			continue;
		r->said_alignment = true;
		vkr_warn(r, "pDescriptorWrites[%u].pBufferInfo[%u].offset %llu is not a multiple "
			 "of this device's %s (%llu), which the capture's device may have "
			 "allowed: its shaders may read other bytes (replay moves those of "
			 "uniform buffers without dynamic offsets in sets only)",
			 k, i, (unsigned long long)w->pBufferInfo[i].offset,
			 uniform ? "minUniformBufferOffsetAlignment"
				 : "minStorageBufferOffsetAlignment",
			 (unsigned long long)align);
		return;
	}
}

void vkr_uniforms_push(vkr *r, const vk_args_vkCmdPushDescriptorSetKHR *a)
{
	if (r->said_alignment || r->checking || !r->d->vk.device)
		return;
	for (uint32_t k = 0; a->pDescriptorWrites && k < a->descriptorWriteCount; k++)
		if (!r->said_alignment)
			unmoved(r, &a->pDescriptorWrites[k], k, true);
}

void vkr_uniforms_dynamic(vkr *r, const vk_args_vkCmdBindDescriptorSets *a)
{
	if (r->said_alignment || r->checking || !r->d->vk.device)
		return;
	const VkPhysicalDeviceLimits *l = &r->d->vk.props.limits;
	VkDeviceSize align = vkr_uniform_alignment(r);
	if (l->minStorageBufferOffsetAlignment < align)
		align = l->minStorageBufferOffsetAlignment;
	for (uint32_t i = 0; a->pDynamicOffsets && i < a->dynamicOffsetCount; i++) {
		if (a->pDynamicOffsets[i] % align == 0)
			continue;
		r->said_alignment = true;
		vkr_warn(r, "pDynamicOffsets[%u] %u is not a multiple of this device's "
			 "minUniformBufferOffsetAlignment (%llu) or minStorageBufferOffsetAlignment "
			 "(%llu), which the capture's device may have allowed: its shaders may read "
			 "other bytes (replay moves those of uniform buffers without dynamic offsets "
			 "in sets only)", i, a->pDynamicOffsets[i],
			 (unsigned long long)vkr_uniform_alignment(r),
			 (unsigned long long)l->minStorageBufferOffsetAlignment);
		return;
	}
}

/* The bytes descriptor B (capture values; WHAT names it) reads: its
 * range, or to its buffer's end. */
static VkDeviceSize range_of(vkr *r, const VkDescriptorBufferInfo *b, const char *what)
{
	if (b->range != VK_WHOLE_SIZE)
		return b->range;
	uint64_t *o = tmap_at(&r->objects, H(b->buffer), TAG_OBJ);
	obj *ob = o ? (obj *)(uintptr_t)*o : NULL;
	if (!ob || ob->create_size <= b->offset)
		vkr_fatal(r, "%s: offset %llu past the end of VkBuffer 0x%llx", what,
			  (unsigned long long)b->offset, (unsigned long long)H(b->buffer));
	return ob->create_size - b->offset;
}

static vkr_uniforms *uniforms_start(vkr *r)
{
	vkr_uniforms *u = trace_xcalloc(1, sizeof(*u));
	u->align = vkr_uniform_alignment(r);
	r->d->uniforms = u;
	return u;
}

bool vkr_uniforms_update(vkr *r, const cmd_entry *e, vk_args_vkUpdateDescriptorSets *a)
{
	if (r->checking || !r->d->vk.device)
		return false;
	vkr_uniforms *u = r->d->uniforms;
	VkDeviceSize align = u ? u->align : vkr_uniform_alignment(r);
	/* the sizes of the moved ones, from the capture's buffers */
	VkDeviceSize *size = NULL;
	uint32_t nsize = 0;
	for (uint32_t k = 0; a->pDescriptorWrites && k < a->descriptorWriteCount; k++) {
		const VkWriteDescriptorSet *w = &a->pDescriptorWrites[k];
		if (!r->said_alignment)
			unmoved(r, w, k, false);
		if (w->descriptorType == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER && w->pBufferInfo)
			nsize += w->descriptorCount;
	}
	for (uint32_t k = 0, at = 0; a->pDescriptorWrites && k < a->descriptorWriteCount; k++) {
		const VkWriteDescriptorSet *w = &a->pDescriptorWrites[k];
		if (w->descriptorType != VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER || !w->pBufferInfo)
			continue;
		for (uint32_t i = 0; i < w->descriptorCount; i++, at++) {
			if (!misplaced(w, i, align))
				continue;
			if (!size)
				size = trace_arena_alloc(&r->arena, nsize * sizeof(*size));
			const VkDescriptorBufferInfo *b = &w->pBufferInfo[i];
			char what[64];
			snprintf(what, sizeof(what), "pDescriptorWrites[%u].pBufferInfo[%u]", k, i);
			size[at] = range_of(r, b, what);
		}
	}
	if (!size && !u)
		return false;
	if (!u)
		u = uniforms_start(r);
	vkr_remap_args(r, e->cmd, a);
	VkWriteDescriptorSet *w = NULL;
	if (a->descriptorWriteCount) {
		w = trace_arena_alloc(&r->arena, a->descriptorWriteCount * sizeof(*w));
		memcpy(w, a->pDescriptorWrites, a->descriptorWriteCount * sizeof(*w));
	}
	for (uint32_t k = 0, at = 0; k < a->descriptorWriteCount; k++) {
		bool uniform = w[k].descriptorType == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER &&
			       w[k].pBufferInfo;
		VkDescriptorBufferInfo *b = NULL;
		for (uint32_t i = 0; i < w[k].descriptorCount; i++) {
			uint32_t el = w[k].dstArrayElement + i;
			if (!uniform || !size || !misplaced(&w[k], i, align)) {
				unmove(r, u, w[k].dstSet, w[k].dstBinding, el);
				at += uniform;
				continue;
			}
			if (!b) {
				b = trace_arena_alloc(&r->arena, w[k].descriptorCount * sizeof(*b));
				memcpy(b, w[k].pBufferInfo, w[k].descriptorCount * sizeof(*b));
				w[k].pBufferInfo = b;
			}
			const ushadow *h = move(r, u, w[k].dstSet, w[k].dstBinding, el, b[i].buffer,
						b[i].offset, size[at++]);
			b[i] = (VkDescriptorBufferInfo){h->slot.buf, h->slot.off, h->size};
		}
	}
	a->pDescriptorWrites = w;
	vkr_invoke(r, e, a);
	/* copies of moved descriptors: moved again, to slots of their own */
	for (uint32_t k = 0; a->pDescriptorCopies && k < a->descriptorCopyCount; k++) {
		const VkCopyDescriptorSet *c = &a->pDescriptorCopies[k];
		uset *from = set_of(u, c->srcSet);
		for (uint32_t i = 0; i < c->descriptorCount; i++) {
			const ushadow *h = NULL;
			for (uint32_t j = 0; from && j < from->n && !h; j++)
				if (from->v[j].binding == c->srcBinding &&
				    from->v[j].element == c->srcArrayElement + i)
					h = &from->v[j];
			uint32_t el = c->dstArrayElement + i;
			if (!h) {
				unmove(r, u, c->dstSet, c->dstBinding, el);
				continue;
			}
			ushadow src = *h;  /* (move may grow the set it is in) */
			const ushadow *t = move(r, u, c->dstSet, c->dstBinding, el, src.src, src.off,
						src.size);
			VkDescriptorBufferInfo bi = {t->slot.buf, t->slot.off, t->size};
			VkWriteDescriptorSet one = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
						    .dstSet = c->dstSet, .dstBinding = c->dstBinding,
						    .dstArrayElement = el, .descriptorCount = 1,
						    .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
						    .pBufferInfo = &bi};
			vkUpdateDescriptorSets(r->d->vk.device, 1, &one, 0, NULL);
		}
	}
	return true;
}

/* A template's entry K, element I: its buffer info in DATA. */
static VkDescriptorBufferInfo template_info(const tmpl *t, uint32_t k, uint32_t i,
					    const uint8_t *data)
{
	VkDescriptorBufferInfo b;
	memcpy(&b, data + t->e[k].offset + (size_t)i * t->e[k].stride, sizeof(b));
	return b;
}

VkDeviceSize *vkr_uniforms_template_sizes(vkr *r, const cmd_entry *e, const tmpl *t,
					  const uint8_t *data)
{
	if (r->checking || !r->d->vk.device || !data)
		return NULL;
	VkDeviceSize align = r->d->uniforms ? r->d->uniforms->align : vkr_uniform_alignment(r);
	bool push = e->uniform != UK_TEMPLATE_SET;
	VkDeviceSize *size = NULL;
	uint32_t n = 0, at = 0;
	for (uint32_t k = 0; k < t->n; k++)
		if (t->e[k].descriptorType == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)
			n += t->e[k].descriptorCount;
	for (uint32_t k = 0; k < t->n; k++) {
		VkDescriptorType type = t->e[k].descriptorType;
		bool uniform = type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER ||
			       type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC;
		for (uint32_t i = 0; uniform && i < t->e[k].descriptorCount; i++) {
			VkDescriptorBufferInfo b = template_info(t, k, i, data);
			at += type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
			if (!b.buffer || b.offset % align == 0)
				continue;
			if (push || type != VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER) {
				if (!r->said_alignment)
					vkr_warn(r, "pData: entry %u, descriptor %u: offset %llu is not a "
						 "multiple of this device's "
						 "minUniformBufferOffsetAlignment (%llu), which the "
						 "capture's device may have allowed: its shaders may read "
						 "other bytes (replay moves those of uniform buffers "
						 "without dynamic offsets in sets only)", k, i,
						 (unsigned long long)b.offset, (unsigned long long)align);
				r->said_alignment = true;
				continue;
			}
			if (!size)
				size = trace_arena_alloc(&r->arena, n * sizeof(*size));
			char what[64];
			snprintf(what, sizeof(what), "pData: entry %u, descriptor %u", k, i);
			size[at - 1] = range_of(r, &b, what);
		}
	}
	if (size && !r->d->uniforms)
		uniforms_start(r);
	return size;
}

void vkr_uniforms_template_move(vkr *r, uint64_t cap_set, const tmpl *t, uint8_t *data,
				const VkDeviceSize *size)
{
	vkr_uniforms *u = r->d->uniforms;
	uint64_t live;
	if (!u || !data || !vkr_map_get(r, r->h_descriptor_set, cap_set, &live) || !live)
		return;
	VkDescriptorSet set = (VkDescriptorSet)(uintptr_t)live;
	for (uint32_t k = 0, at = 0; k < t->n; k++) {
		bool uniform = t->e[k].descriptorType == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
		for (uint32_t i = 0; i < t->e[k].descriptorCount; i++) {
			uint32_t el = t->e[k].dstArrayElement + i;
			VkDescriptorBufferInfo b;
			if (!uniform || !size || !size[at] ||
			    !(b = template_info(t, k, i, data)).buffer || b.offset % u->align == 0) {
				unmove(r, u, set, t->e[k].dstBinding, el);
				at += uniform;
				continue;
			}
			const ushadow *h = move(r, u, set, t->e[k].dstBinding, el, b.buffer, b.offset,
						size[at++]);
			b = (VkDescriptorBufferInfo){h->slot.buf, h->slot.off, h->size};
			memcpy(data + t->e[k].offset + (size_t)i * t->e[k].stride, &b, sizeof(b));
		}
	}
}

void vkr_uniforms_entry(cmd_entry *e)
{
	static const vk_named table[] = {
		{"vkCmdBindDescriptorSets", UK_BIND_SETS},
		{"vkCmdExecuteCommands", UK_EXECUTE},
		{"vkBeginCommandBuffer", UK_BEGIN},
		{"vkResetCommandBuffer", UK_BEGIN},
		{"vkFreeCommandBuffers", UK_FREE_CBS},
		{"vkCmdCopyBuffer", UK_COPY},
		{"vkCmdCopyBuffer2", UK_COPY2},
		{"vkCmdCopyBuffer2KHR", UK_COPY2},
		{"vkCmdUpdateBuffer", UK_UPDATE},
		{"vkCmdFillBuffer", UK_FILL},
		{"vkCmdCopyImageToBuffer", UK_IMAGE},
		{"vkCmdCopyImageToBuffer2", UK_IMAGE2},
		{"vkCmdCopyImageToBuffer2KHR", UK_IMAGE2},
		{"vkAllocateDescriptorSets", UK_ALLOC_SETS},
		{"vkFreeDescriptorSets", UK_FREE_SETS},
		{"vkDestroyBuffer", UK_DESTROY_BUFFER},
		{"vkUpdateDescriptorSetWithTemplate", UK_TEMPLATE_SET},
		{"vkUpdateDescriptorSetWithTemplateKHR", UK_TEMPLATE_SET},
		{"vkCmdPushDescriptorSetWithTemplateKHR", UK_TEMPLATE_PUSH},
		{"vkCmdPushDescriptorSetWithTemplate", UK_TEMPLATE_PUSH},
		{"vkCmdPushDescriptorSetKHR", UK_PUSH},
		{"vkCmdPushDescriptorSet", UK_PUSH},
	};
	e->uniform = (uint8_t)VK_BY_NAME(table, e->cmd->sig.name, UK_NONE);
}

void vkr_uniforms_before(vkr *r, const cmd_entry *e, void *args)
{
	vkr_uniforms *u = r->d->uniforms;
	uint64_t live;
	if (e->uniform != UK_DESTROY_BUFFER ||
	    !vkr_map_get(r, r->h_buffer, H(((vk_args_vkDestroyBuffer *)args)->buffer), &live) ||
	    !tmap_at(&u->srcs, live, TAG_USRC))
		return;
	/* the descriptors that read it: their sets cannot be bound again */
	for (size_t i = 0; i < u->sets.cap; i++) {
		if (!tmap_used(&u->sets, i))
			continue;
		uset *s = (uset *)(uintptr_t)u->sets.vals[i];
		for (uint32_t k = s->n; k-- > 0;)
			if (H(s->v[k].src) == live)
				drop_at(r, u, s, k);
	}
}

void vkr_uniforms_after(vkr *r, const cmd_entry *e, void *args)
{
	vkr_uniforms *u = r->d->uniforms;
	switch ((enum uniform_kind)e->uniform) {
	case UK_BIND_SETS: {
		vk_args_vkCmdBindDescriptorSets *a = args;
		for (uint32_t i = 0; a->pDescriptorSets && i < a->descriptorSetCount; i++)
			if (set_of(u, a->pDescriptorSets[i]))
				cb_bound(u, a->commandBuffer, a->pDescriptorSets[i]);
		return;
	}
	case UK_EXECUTE: {
		vk_args_vkCmdExecuteCommands *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++) {
			ucb *c = cb_of(u, a->pCommandBuffers[i], false);
			for (uint32_t k = 0; c && k < c->n; k++)
				cb_bound(u, a->commandBuffer, c->sets[k]);
		}
		return;
	}
	case UK_BEGIN: {
		ucb *c = cb_of(u, ((vk_args_vkBeginCommandBuffer *)args)->commandBuffer, false);
		if (c) {
			c->n = 0;
			c->stale = true;
		}
		return;
	}
	case UK_FREE_CBS: {
		vk_args_vkFreeCommandBuffers *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++)
			if (a->pCommandBuffers[i])
				cb_free(r, u, a->pCommandBuffers[i]);
		return;
	}
	case UK_COPY: {
		vk_args_vkCmdCopyBuffer *a = args;
		for (uint32_t i = 0; a->pRegions && i < a->regionCount; i++)
			written(r, u, a->commandBuffer, a->dstBuffer, a->pRegions[i].dstOffset,
				a->pRegions[i].size);
		return;
	}
	case UK_COPY2: {
		vk_args_vkCmdCopyBuffer2 *a = args;
		const VkCopyBufferInfo2 *c = a->pCopyBufferInfo;
		for (uint32_t i = 0; c && c->pRegions && i < c->regionCount; i++)
			written(r, u, a->commandBuffer, c->dstBuffer, c->pRegions[i].dstOffset,
				c->pRegions[i].size);
		return;
	}
	case UK_UPDATE: {
		vk_args_vkCmdUpdateBuffer *a = args;
		written(r, u, a->commandBuffer, a->dstBuffer, a->dstOffset, a->dataSize);
		return;
	}
	case UK_FILL: {
		vk_args_vkCmdFillBuffer *a = args;
		written(r, u, a->commandBuffer, a->dstBuffer, a->dstOffset,
			a->size == VK_WHOLE_SIZE ? UINT64_MAX - a->dstOffset : a->size);
		return;
	}
	case UK_IMAGE: {
		vk_args_vkCmdCopyImageToBuffer *a = args;
		written(r, u, a->commandBuffer, a->dstBuffer, 0, UINT64_MAX);
		return;
	}
	case UK_IMAGE2: {
		vk_args_vkCmdCopyImageToBuffer2 *a = args;
		if (a->pCopyImageToBufferInfo)
			written(r, u, a->commandBuffer, a->pCopyImageToBufferInfo->dstBuffer, 0,
				UINT64_MAX);
		return;
	}
	case UK_ALLOC_SETS:
	case UK_FREE_SETS: {
		/* a set made again with a handle of a set freed (or its pool
		 * reset) has none moved */
		vk_args_vkFreeDescriptorSets *f = args;
		vk_args_vkAllocateDescriptorSets *m = args;
		const VkDescriptorSet *sets = e->uniform == UK_FREE_SETS ? f->pDescriptorSets
									  : m->pDescriptorSets;
		uint32_t n = e->uniform == UK_FREE_SETS ? f->descriptorSetCount
			     : m->pAllocateInfo ? m->pAllocateInfo->descriptorSetCount : 0;
		for (uint32_t i = 0; sets && i < n; i++)
			if (sets[i])
				set_drop(r, u, sets[i]);
		return;
	}
	default:
		return;
	}
}

/* The command buffers of batch SI (live), each that binds moved
 * descriptors after its copies: a copy of SI in the arena, or SI. */
static const VkCommandBuffer *with_copies(vkr *r, vkr_uniforms *u, uint32_t family,
					  const VkCommandBuffer *cbs, uint32_t *n)
{
	uint32_t more = 0;
	for (uint32_t i = 0; cbs && i < *n; i++) {
		ucb *c = cb_of(u, cbs[i], false);
		more += c && c->n;
	}
	if (!more)
		return cbs;
	VkCommandBuffer *v = trace_arena_alloc(&r->arena, (*n + more) * sizeof(*v));
	uint32_t k = 0;
	for (uint32_t i = 0; i < *n; i++) {
		ucb *c = cb_of(u, cbs[i], false);
		if (c && c->n)
			v[k++] = pre_of(r, u, c, family);
		v[k++] = cbs[i];
	}
	*n = k;
	return v;
}

static uint32_t family_of(vkr *r, VkQueue queue)
{
	uint64_t *f = tmap_at(&r->d->queues, H(queue), TAG_QUEUE);
	return f ? (uint32_t)*f : 0;
}

const VkSubmitInfo *vkr_uniforms_submit(vkr *r, VkQueue queue, const VkSubmitInfo *si,
					uint32_t n)
{
	vkr_uniforms *u = r->d->uniforms;
	if (!u || !u->cbs.n || !si)
		return si;
	VkSubmitInfo *s = NULL;
	uint32_t family = family_of(r, queue);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = si[i].commandBufferCount;
		const VkCommandBuffer *v = with_copies(r, u, family, si[i].pCommandBuffers, &k);
		if (v == si[i].pCommandBuffers)
			continue;
		if (!s) {
			s = trace_arena_alloc(&r->arena, n * sizeof(*s));
			memcpy(s, si, n * sizeof(*s));
		}
		s[i].pCommandBuffers = v;
		s[i].commandBufferCount = k;
	}
	return s ? s : si;
}

const VkSubmitInfo2 *vkr_uniforms_submit2(vkr *r, VkQueue queue, const VkSubmitInfo2 *si,
					  uint32_t n)
{
	vkr_uniforms *u = r->d->uniforms;
	if (!u || !u->cbs.n || !si)
		return si;
	VkSubmitInfo2 *s = NULL;
	uint32_t family = family_of(r, queue);
	for (uint32_t i = 0; i < n; i++) {
		const VkCommandBufferSubmitInfo *c = si[i].pCommandBufferInfos;
		uint32_t more = 0;
		for (uint32_t j = 0; c && j < si[i].commandBufferInfoCount; j++) {
			ucb *b = cb_of(u, c[j].commandBuffer, false);
			more += b && b->n;
		}
		if (!more)
			continue;
		if (!s) {
			s = trace_arena_alloc(&r->arena, n * sizeof(*s));
			memcpy(s, si, n * sizeof(*s));
		}
		VkCommandBufferSubmitInfo *v = trace_arena_alloc(
			&r->arena, (si[i].commandBufferInfoCount + more) * sizeof(*v));
		uint32_t k = 0;
		for (uint32_t j = 0; j < si[i].commandBufferInfoCount; j++) {
			ucb *b = cb_of(u, c[j].commandBuffer, false);
			if (b && b->n) {
				v[k] = c[j];  /* (its device mask) */
				v[k++].commandBuffer = pre_of(r, u, b, family);
			}
			v[k++] = c[j];
		}
		s[i].pCommandBufferInfos = v;
		s[i].commandBufferInfoCount = k;
	}
	return s ? s : si;
}

void vkr_uniforms_free(vkr_device *d)
{
	vkr_uniforms *u = d->uniforms;
	if (!u)
		return;
	VkDevice dev = d->vk.device;
	for (size_t i = 0; i < u->cbs.cap; i++)
		if (tmap_used(&u->cbs, i)) {
			ucb *c = (ucb *)(uintptr_t)u->cbs.vals[i];
			free(c->sets);
			free(c);
		}
	for (size_t i = 0; i < u->sets.cap; i++)
		if (tmap_used(&u->sets, i)) {
			uset *s = (uset *)(uintptr_t)u->sets.vals[i];
			for (uint32_t k = 0; k < s->n; k++)
				if (s->v[k].slot.cls == CLASSES) {
					vkDestroyBuffer(dev, s->v[k].slot.buf, NULL);
					vkFreeMemory(dev, s->v[k].slot.own, NULL);
				}
			free(s->v);
			free(s);
		}
	for (uint32_t i = 0; i < u->npools; i++)
		vkDestroyCommandPool(dev, u->pools[i].pool, NULL);
	for (uint32_t i = 0; i < u->nchunks; i++) {
		vkDestroyBuffer(dev, u->chunks[i].buf, NULL);
		vkFreeMemory(dev, u->chunks[i].mem, NULL);
	}
	for (int c = 0; c < CLASSES; c++)
		free(u->free[c]);
	free(u->chunks);
	tmap_free(&u->sets);
	tmap_free(&u->srcs);
	tmap_free(&u->cbs);
	free(u);
	d->uniforms = NULL;
}
