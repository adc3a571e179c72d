/*
 * alias: buffers and images bound over the same bytes of one memory.
 * The capture layer writes each shared byte once, as an update of one of
 * the objects bound over it, and a trim keeps the objects the range uses,
 * not memory: where that one is not kept (RenderDoc binds a buffer of its
 * own over each whole allocation, and the layer may name it for the
 * program's texture), its update goes with it.  So the bytes an update
 * writes are copied to every other object bound over them that takes
 * them (buffers and linear images), and an object bound over bytes
 * another holds takes those: each object's contents are what its memory
 * held.  A memory with one object costs nothing more.
 */
#include "trim_internal.h"

/* The bytes [A, B) of memory that Y is bound over: [*lo, *hi), false if
 * none. */
static bool clip(uint64_t a, uint64_t b, const obj *y, uint64_t *lo, uint64_t *hi)
{
	*lo = a > y->moff ? a : y->moff;
	*hi = b < y->moff + y->msize ? b : y->moff + y->msize;
	return *lo < *hi;
}

/* FROM's bytes over [LO, HI) of their memory into TO. */
static void share(obj *to, const obj *from, uint64_t lo, uint64_t hi)
{
	content_copy(to, lo - to->moff, from, lo - from->moff, hi - lo);
}

/* O's bytes [OFF, END), just written, into the others bound over them
 * (shifted by the difference of their offsets, clipped to what they
 * share). */
void alias_spread(obj *o, uint64_t off, uint64_t end)
{
	const obj *m = o->mem;
	if (!m || m->bound.n < 2 || end <= off)
		return;
	for (uint32_t i = 0; i < m->bound.n; i++) {
		obj *x = m->bound.v[i];
		uint64_t lo, hi;
		if (x == o || !x->takes)
			continue;
		if (clip(o->moff + off, o->moff + end, x, &lo, &hi))
			share(x, o, lo, hi);
	}
}

/* O bound to memory M at OFF: it takes what those bound there before
 * hold of its bytes. */
static void bind(obj *o, obj *m, uint64_t off)
{
	if (!o || !m || o->mem)
		return;  /* a sparse or unknown memory, or bound already */
	o->mem = m;
	o->moff = off;
	o->overlaps |= !o->msize;  /* (its extent unknown: it may) */
	for (uint32_t i = 0; i < m->bound.n; i++) {
		obj *y = m->bound.v[i];
		uint64_t lo, hi;
		if (!clip(off, off + o->msize, y, &lo, &hi) && o->msize)
			continue;
		o->overlaps = y->overlaps = true;
		if (o->takes && y->cont && o->msize)
			share(o, y, lo, hi);
	}
	vec_push(&m->bound, o);
}

/* O dies: its binding ends, and a memory's bindings with it. */
void alias_unbind(obj *o)
{
	obj *m = o->mem;
	for (uint32_t i = 0; m && i < m->bound.n; i++)
		if (m->bound.v[i] == o) {
			m->bound.v[i] = m->bound.v[--m->bound.n];
			break;
		}
	o->mem = NULL;
	for (uint32_t i = 0; i < o->bound.n; i++)
		((obj *)o->bound.v[i])->mem = NULL;
	vec_free(&o->bound);
}

/* Whether a bind's or a requirement query's chain names one plane of a
 * disjoint image: a plane's bytes, not the image's. */
static bool plane_of(const void *next)
{
	return vk_chain_find(next, VK_STRUCTURE_TYPE_BIND_IMAGE_PLANE_MEMORY_INFO) ||
	       vk_chain_find(next, VK_STRUCTURE_TYPE_IMAGE_PLANE_MEMORY_REQUIREMENTS_INFO);
}

static void bind_handles(trim *t, const vk_handle_info *h, uint64_t o, uint64_t m, uint64_t off)
{
	bind(obj_lookup(t, h, o), obj_lookup(t, trim_types.memory, m), off);
}

static void image_size(trim *t, uint64_t image, VkDeviceSize size)
{
	obj *o = obj_lookup(t, trim_types.image, image);
	if (o && !o->mem)
		o->msize = size;
}

/* A call before the range that binds memory, or says how much an image
 * takes (its bytes in memory: the create info does not say). */
void alias_call(trim *t, const char *n, const void *args)
{
	const vk_handle_info *hb = trim_types.buffer, *hi = trim_types.image;
	if (!strcmp(n, "vkBindBufferMemory")) {
		const vk_args_vkBindBufferMemory *a = args;
		bind_handles(t, hb, (uint64_t)a->buffer, (uint64_t)a->memory, a->memoryOffset);
	} else if (trim_named(n, "vkBindBufferMemory2")) {
		const vk_args_vkBindBufferMemory2 *a = args;
		const VkBindBufferMemoryInfo *b = a->pBindInfos;
		for (uint32_t i = 0; b && i < a->bindInfoCount; i++)
			bind_handles(t, hb, (uint64_t)b[i].buffer, (uint64_t)b[i].memory,
				     b[i].memoryOffset);
	} else if (!strcmp(n, "vkBindImageMemory")) {
		const vk_args_vkBindImageMemory *a = args;
		bind_handles(t, hi, (uint64_t)a->image, (uint64_t)a->memory, a->memoryOffset);
	} else if (trim_named(n, "vkBindImageMemory2")) {
		/* (a plane of a disjoint image: its bytes are not the image's) */
		const vk_args_vkBindImageMemory2 *a = args;
		for (uint32_t i = 0; a->pBindInfos && i < a->bindInfoCount; i++)
			if (!plane_of(a->pBindInfos[i].pNext))
				bind_handles(t, hi, (uint64_t)a->pBindInfos[i].image,
					     (uint64_t)a->pBindInfos[i].memory,
					     a->pBindInfos[i].memoryOffset);
	} else if (!strcmp(n, "vkGetImageMemoryRequirements")) {
		const vk_args_vkGetImageMemoryRequirements *a = args;
		if (a->pMemoryRequirements)
			image_size(t, (uint64_t)a->image, a->pMemoryRequirements->size);
	} else if (trim_named(n, "vkGetImageMemoryRequirements2")) {
		const vk_args_vkGetImageMemoryRequirements2 *a = args;
		if (a->pInfo && a->pMemoryRequirements && !plane_of(a->pInfo->pNext))
			image_size(t, (uint64_t)a->pInfo->image,
				   a->pMemoryRequirements->memoryRequirements.size);
	}
}
