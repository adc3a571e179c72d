/*
 * What a submit may read: per command buffer, the buffers and images its
 * commands reference, so that a queue submit compares only their mapped
 * memory with the shadow (memory.c) instead of every mapped range.
 *
 * While a command buffer records, each vkCmd* wrapper hands its arguments
 * here; the schema's tables (lib/vulkan/vkschema.h) say where the handles are,
 * in the parameters, the structs and arrays they point at and the pNext
 * chains, so no command is listed by hand but the few that pass handles
 * as untyped bytes (push descriptors by template) and the copies from
 * buffers (copies[]: which bytes they read).  Kept per command buffer:
 * buffers and images, with the range of each it may read (a buffer
 * descriptor's, a copy's source regions; otherwise all: a buffer zink
 * streams uniforms through is a megabyte, of which a frame reads a few
 * hundred bytes); buffer and image views (their buffer or image and range
 * at submit); framebuffers (their attachments); descriptor sets (their
 * contents at submit, from vkUpdateDescriptorSets and update
 * templates: a set used by a command buffer cannot change without the
 * command buffer being recorded again, unless it was made to be updated
 * after binding, and then the submit is what sees its contents); and the
 * secondary command buffers it executes.
 *
 * What cannot be known makes the submit scan everything, as before:
 * commands that pass untyped data the layer does not read, a pNext struct
 * the registry lacks, descriptors it does not follow (acceleration
 * structures, unknown types), copies between descriptor sets, and, for
 * the rest of the device's life, any device address handed out (shaders
 * may then read memory that no command names).  Over-counting is harmless:
 * bytes not compared at one submit stay different from the shadow and are
 * written at the first submit that may read them (or at the unmap or free).
 */
#include "layer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a buffer or image that may be read: [lo, hi) from its start,
 * hi TK_ALL for up to its end. */
typedef struct tk_ref {
	uint64_t h;
	VkDeviceSize lo, hi;
} tk_ref;

/* References, one per key (a handle, or a descriptor slot), with the
 * bounds of their ranges when several. */
typedef struct tk_ranges {
	tk_map at;             /* handle -> index in v + 1 */
	tk_ref *v;
	size_t n, cap;
} tk_ranges;

typedef struct tk_cbuf {
	uint64_t pool;
	bool unknown;          /* references that cannot be known */
	uint64_t epoch;        /* collected in this scan already */
	tk_ranges objs;         /* buffers and images */
	tk_map views;          /* buffer and image views: a set (value 1) */
	tk_map fbs;            /* framebuffers */
	tk_map sets;           /* descriptor sets */
	tk_map cbs;            /* secondary command buffers executed */
} tk_cbuf;

typedef struct tk_dset {
	uint64_t pool;
	bool unknown;
	/* (binding, element, kind) -> the handle written there and the
	 * range it reads (h 0: none now): a write that rolls over into the
	 * next binding is kept under its own binding, which only ever keeps
	 * more than is there */
	tk_ranges slots;
} tk_dset;

/* A buffer view's buffer and range, an image view's image (all of it). */
typedef struct tk_view {
	uint64_t of;
	VkDeviceSize lo, hi;
} tk_view;

typedef struct tk_fb {
	uint32_t n;
	uint64_t *views;
} tk_fb;

typedef struct tk_template {
	uint32_t n;
	VkDescriptorUpdateTemplateEntry *e;      /* the application's */
	bool sized;            /* the bytes of pData it reads are known: the */
	VkDescriptorUpdateTemplateEntry *packed; /* trace's entries read them */
	uint64_t size;         /* packed, and records pData as a blob of SIZE */
} tk_template;

enum { K_NONE, K_OBJ, K_VIEW, K_FB, K_SET, K_CB };

/* How a vkCmd* is handled, cached per command (the wrapper's HOW). */
enum { HOW_UNSEEN, HOW_NOTHING, HOW_WALK, HOW_UNKNOWN, HOW_PUSH_TEMPLATE,
       HOW_COPY_BUFFER, HOW_COPY_BUFFER2, HOW_BUFFER_TO_IMAGE, HOW_BUFFER_TO_IMAGE2 };

#define ONE ((void *)(uintptr_t)1)

/* ------------------------------------------------------------------ */
/* The schema: which handle types and structs matter. */

static const vk_handle_info *h_buffer, *h_image, *h_bview, *h_iview, *h_fb, *h_set, *h_cb;
static const vk_struct_info *s_write;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;
static tk_map struct_memo; /* vk_struct_info -> its F_* flags + 1, made once */
static bool memo_done;

static int struct_flags(const vk_struct_info *s, int depth);

static void types_init(void)
{
	h_buffer = vk_handle_lookup("VkBuffer");
	h_image = vk_handle_lookup("VkImage");
	h_bview = vk_handle_lookup("VkBufferView");
	h_iview = vk_handle_lookup("VkImageView");
	h_fb = vk_handle_lookup("VkFramebuffer");
	h_set = vk_handle_lookup("VkDescriptorSet");
	h_cb = vk_handle_lookup("VkCommandBuffer");
	s_write = vk_struct_lookup("VkWriteDescriptorSet");
	for (uint32_t i = 0; i < vk_nstructs; i++)
		struct_flags(vk_structs[i], 0);
	memo_done = true;
}

static int kind_of(const vk_handle_info *h)
{
	if (!h)
		return K_NONE;
	if (h == h_buffer || h == h_image)
		return K_OBJ;
	if (h == h_bview || h == h_iview)
		return K_VIEW;
	if (h == h_fb)
		return K_FB;
	if (h == h_set)
		return K_SET;
	if (h == h_cb)
		return K_CB;
	return K_NONE;
}

enum { F_REF = 1, F_VOID = 2 };

static int field_flags(const vk_field *f, int depth)
{
	if (f->flags & VK_F_PNEXT)
		return F_REF;
	switch (f->base) {
	case VK_B_HANDLE:
		return kind_of(f->ref) != K_NONE ? F_REF : 0;
	case VK_B_STRUCT:
		if (f->ref == s_write)
			return F_REF;
		return f->ref ? struct_flags(f->ref, depth + 1) : 0;
	case VK_B_VOID:
		return f->ptr ? F_VOID : 0;
	default:
		return 0;
	}
}

/* What a struct can hold: F_REF (a handle that matters, or a pNext
 * chain, which may), F_VOID (untyped bytes).  Worked out for every struct
 * once, in types_init(); read without a lock after. */
static int struct_flags(const vk_struct_info *s, int depth)
{
	uintptr_t memo = (uintptr_t)tk_map_get(&struct_memo, (uint64_t)(uintptr_t)s);
	if (memo)
		return (int)memo - 1;
	if (s->blob)
		return 0;
	if (depth > 8)
		return F_REF | F_VOID;
	int r = 0;
	for (uint32_t i = 0; i < s->nfields; i++)
		r |= field_flags(&s->fields[i], depth);
	if (!memo_done) /* a depth cut short gives more flags, never fewer */
		tk_map_put(&struct_memo, (uint64_t)(uintptr_t)s, (void *)(uintptr_t)(r + 1));
	return r;
}

/* Copies from a buffer: the registry says which handles they name, not
 * which bytes of the source they read (their regions) nor that the
 * destination is written, not read.  A staging buffer zink reuses holds a
 * megabyte of what earlier copies left, of which a copy reads a few
 * kilobytes. */
static const vk_named copies[] = {
	{ "vkCmdCopyBuffer", HOW_COPY_BUFFER },
	{ "vkCmdCopyBuffer2", HOW_COPY_BUFFER2 },
	{ "vkCmdCopyBuffer2KHR", HOW_COPY_BUFFER2 },
	{ "vkCmdCopyBufferToImage", HOW_BUFFER_TO_IMAGE },
	{ "vkCmdCopyBufferToImage2", HOW_BUFFER_TO_IMAGE2 },
	{ "vkCmdCopyBufferToImage2KHR", HOW_BUFFER_TO_IMAGE2 },
};

static int how_of(const vk_command_info *cmd)
{
	int how = VK_BY_NAME(copies, cmd->sig.name, 0);
	if (how)
		return how;
	int r = 0;
	for (uint32_t i = 1; i < cmd->nparams; i++) /* 0: the command buffer */
		r |= field_flags(&cmd->params[i], 0);
	if (r & F_VOID) {
		const char *n = cmd->sig.name;
		if (!strcmp(n, "vkCmdPushDescriptorSetWithTemplateKHR"))
			return HOW_PUSH_TEMPLATE;
		/* data the device reads inline, or only a marker's value */
		if (strcmp(n, "vkCmdPushConstants") && strcmp(n, "vkCmdUpdateBuffer") &&
		    strcmp(n, "vkCmdSetCheckpointNV"))
			return HOW_UNKNOWN;
	}
	return r & F_REF ? HOW_WALK : HOW_NOTHING;
}

/* ------------------------------------------------------------------ */
/* Walking a command's arguments. */

static void set_add(tk_map *m, uint64_t h)
{
	if (h && !tk_map_get(m, h))
		tk_map_put(m, h, ONE);
}

/* The ref of handle H in S, made (empty: lo > hi) if new. */
static tk_ref *ranges_at(tk_ranges *s, uint64_t h)
{
	size_t i = (size_t)(uintptr_t)tk_map_get(&s->at, h);
	if (i)
		return &s->v[i - 1];
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = realloc(s->v, sizeof(*s->v) * s->cap);
	}
	s->v[s->n] = (tk_ref){ h, TK_ALL, 0 };
	tk_map_put(&s->at, h, (void *)(uintptr_t)++s->n);
	return &s->v[s->n - 1];
}

static void ranges_add(tk_ranges *s, uint64_t h, VkDeviceSize lo, VkDeviceSize hi)
{
	if (!h)
		return;
	tk_ref *r = ranges_at(s, h);
	if (lo < r->lo)
		r->lo = lo;
	if (hi > r->hi)
		r->hi = hi;
}

static void ranges_free(tk_ranges *s)
{
	tk_map_free(&s->at);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Handle H of kind KIND, of which [lo, hi) may be read (buffers: others
 * are read whole). */
static void cb_add(tk_cbuf *cb, int kind, uint64_t h, VkDeviceSize lo, VkDeviceSize hi)
{
	switch (kind) {
	case K_OBJ: ranges_add(&cb->objs, h, lo, hi); break;
	case K_VIEW: set_add(&cb->views, h); break;
	case K_FB: set_add(&cb->fbs, h); break;
	case K_SET: set_add(&cb->sets, h); break;
	case K_CB: set_add(&cb->cbs, h); break;
	default: break;
	}
}

static uint64_t read_u(const void *p, uint32_t size)
{
	uint64_t v = 0;
	switch (size) {
	case 1: v = *(const uint8_t *)p; break;
	case 2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
	case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
	default: memcpy(&v, p, 8); break;
	}
	return v;
}

static const void *read_p(const uint8_t *p)
{
	const void *q;
	memcpy(&q, p, sizeof(q));
	return q;
}

/* Where a descriptor of TYPE keeps its handle; its kind. */
typedef enum { D_NONE, D_IMAGE, D_BUFFER, D_TEXEL, D_UNKNOWN } dkind;

static dkind dkind_of(VkDescriptorType t)
{
	switch (t) {
	case VK_DESCRIPTOR_TYPE_SAMPLER:
	case VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK:
		return D_NONE;
	case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
	case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
	case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
	case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT:
	case VK_DESCRIPTOR_TYPE_SAMPLE_WEIGHT_IMAGE_QCOM:
	case VK_DESCRIPTOR_TYPE_BLOCK_MATCH_IMAGE_QCOM:
		return D_IMAGE;
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
		return D_BUFFER;
	case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER:
		return D_TEXEL;
	default: /* acceleration structures, mutable, what comes later */
		return D_UNKNOWN;
	}
}

/* The handle a descriptor of TYPE (kind K) at P holds, its K_* kind and
 * the range of it the descriptor reads (views: their own, at submit).  A
 * dynamic buffer reads from its offset plus one given at bind: up to the
 * end, then. */
static tk_ref descriptor_at(VkDescriptorType type, dkind k, const uint8_t *p, int *kind)
{
	tk_ref r = { 0, 0, TK_ALL };
	switch (k) {
	case D_IMAGE:
		*kind = K_VIEW;
		r.h = (uint64_t)((const VkDescriptorImageInfo *)p)->imageView;
		break;
	case D_BUFFER: {
		const VkDescriptorBufferInfo *b = (const VkDescriptorBufferInfo *)p;
		*kind = K_OBJ;
		r.h = (uint64_t)b->buffer;
		r.lo = b->offset;
		if (type != VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC &&
		    type != VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC &&
		    b->range != VK_WHOLE_SIZE && b->range <= TK_ALL - b->offset)
			r.hi = b->offset + b->range;
		break;
	}
	case D_TEXEL:
		*kind = K_VIEW;
		r.h = (uint64_t)*(const VkBufferView *)p;
		break;
	default:
		*kind = K_NONE;
		break;
	}
	return r;
}

static size_t dstride(dkind k)
{
	return k == D_IMAGE ? sizeof(VkDescriptorImageInfo)
	       : k == D_BUFFER ? sizeof(VkDescriptorBufferInfo) : sizeof(VkBufferView);
}

/* The array of a VkWriteDescriptorSet that its type says is there. */
static const uint8_t *write_array(const VkWriteDescriptorSet *w, dkind k)
{
	return k == D_IMAGE ? (const uint8_t *)w->pImageInfo
	       : k == D_BUFFER ? (const uint8_t *)w->pBufferInfo
	       : k == D_TEXEL ? (const uint8_t *)w->pTexelBufferView : NULL;
}

typedef struct walker {
	tk_cbuf *cb;
} walker;

static void walk_struct(walker *w, const vk_struct_info *s, const uint8_t *p, int depth);

static void walk_write(walker *w, const VkWriteDescriptorSet *wr)
{
	/* a push descriptor: what it names, the command buffer reads */
	dkind k = dkind_of(wr->descriptorType);
	if (k == D_NONE)
		return;
	const uint8_t *a = write_array(wr, k);
	if (k == D_UNKNOWN || !a) {
		if (k == D_UNKNOWN || wr->descriptorCount > 0)
			w->cb->unknown = true;
		return;
	}
	for (uint32_t i = 0; i < wr->descriptorCount; i++) {
		int kind;
		tk_ref r = descriptor_at(wr->descriptorType, k, a + i * dstride(k), &kind);
		cb_add(w->cb, kind, r.h, r.lo, r.hi);
	}
}

static void walk_pnext(walker *w, const VkBaseInStructure *b, int depth)
{
	for (; b; b = b->pNext) {
		const vk_struct_info *s = vk_struct_by_stype(b->sType);
		if (!s) {
			w->cb->unknown = true;
			return;
		}
		if (struct_flags(s, 0) & F_VOID)
			w->cb->unknown = true;
		walk_struct(w, s, (const uint8_t *)b, depth + 1);
	}
}

static void walk_elems(walker *w, const vk_field *f, const uint8_t *p, uint64_t n, int depth)
{
	if (f->base == VK_B_HANDLE) {
		int kind = kind_of(f->ref);
		for (uint64_t i = 0; kind != K_NONE && i < n; i++)
			cb_add(w->cb, kind, read_u(p + i * 8, 8), 0, TK_ALL);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (f->ref == s_write)
			walk_write(w, (const VkWriteDescriptorSet *)(p + i * f->size));
		else
			walk_struct(w, f->ref, p + i * f->size, depth + 1);
	}
}

static void walk_field(walker *w, const vk_field *fields, const vk_field *f, const uint8_t *base,
		       int depth)
{
	if (depth > 16)
		return;
	const uint8_t *fp = base + f->offset;
	if (f->flags & VK_F_PNEXT) {
		walk_pnext(w, read_p(fp), depth);
		return;
	}
	if (f->base != VK_B_HANDLE && f->base != VK_B_STRUCT)
		return;
	if (f->base == VK_B_STRUCT && (!f->ref || !(field_flags(f, 0) & F_REF)))
		return;
	if (f->ptr == 0) {
		walk_elems(w, f, fp, f->count ? f->count : 1, depth);
		return;
	}
	const uint8_t *p = read_p(fp);
	if (!p)
		return;
	uint64_t n = vk_field_len(fields, f, base);
	if (f->ptr == 1) {
		walk_elems(w, f, p, n, depth);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *q = read_p(p + i * sizeof(void *));
		if (q)
			walk_elems(w, f, q, 1, depth);
	}
}

static void walk_struct(walker *w, const vk_struct_info *s, const uint8_t *p, int depth)
{
	if (s->blob)
		return;
	for (uint32_t i = 0; i < s->nfields; i++)
		walk_field(w, s->fields, &s->fields[i], p, depth);
}

/* The descriptors a template writes from DATA, to ADD(ctx, kind, handle);
 * false for one the layer does not follow. */
static bool template_walk(const tk_template *t, const void *data,
			  void (*add)(void *ctx, uint32_t binding, uint32_t element, int kind,
				      tk_ref r),
			  void *ctx)
{
	bool ok = true;
	for (uint32_t i = 0; i < t->n && data; i++) {
		const VkDescriptorUpdateTemplateEntry *e = &t->e[i];
		dkind k = dkind_of(e->descriptorType);
		if (k == D_NONE)
			continue;
		if (k == D_UNKNOWN) {
			ok = false;
			continue;
		}
		for (uint32_t j = 0; j < e->descriptorCount; j++) {
			int kind;
			tk_ref r = descriptor_at(e->descriptorType, k,
						 (const uint8_t *)data + e->offset + j * e->stride, &kind);
			add(ctx, e->dstBinding, e->dstArrayElement + j, kind, r);
		}
	}
	return ok;
}

static void add_to_cb(void *ctx, uint32_t binding, uint32_t element, int kind, tk_ref r)
{
	(void)binding;
	(void)element;
	cb_add(ctx, kind, r.h, r.lo, r.hi);
}

/* The bytes [off, off + size) of SRC a copy reads; of a copy into an
 * image, from the region's offset to the end (its size would take the
 * format's texel size). */
static void copy_from(tk_cbuf *cb, VkBuffer src, VkDeviceSize off, VkDeviceSize size)
{
	VkDeviceSize hi = size <= TK_ALL - off ? off + size : TK_ALL;
	ranges_add(&cb->objs, (uint64_t)src, off, hi);
}

/* HOW_COPY_*: what copy ARGS reads; false where a pNext chain is there
 * (walked as any command is then). */
static bool copy_refs(tk_cbuf *cb, int how, const void *args)
{
	switch (how) {
	case HOW_COPY_BUFFER: {
		const vk_args_vkCmdCopyBuffer *a = args;
		for (uint32_t i = 0; a->pRegions && i < a->regionCount; i++)
			copy_from(cb, a->srcBuffer, a->pRegions[i].srcOffset, a->pRegions[i].size);
		return true;
	}
	case HOW_COPY_BUFFER2: {
		const VkCopyBufferInfo2 *c = ((const vk_args_vkCmdCopyBuffer2 *)args)->pCopyBufferInfo;
		for (uint32_t i = 0; c && c->pRegions && i < c->regionCount; i++)
			if (c->pNext || c->pRegions[i].pNext)
				return false;
		for (uint32_t i = 0; c && c->pRegions && i < c->regionCount; i++)
			copy_from(cb, c->srcBuffer, c->pRegions[i].srcOffset, c->pRegions[i].size);
		return true;
	}
	case HOW_BUFFER_TO_IMAGE: {
		const vk_args_vkCmdCopyBufferToImage *a = args;
		for (uint32_t i = 0; a->pRegions && i < a->regionCount; i++)
			copy_from(cb, a->srcBuffer, a->pRegions[i].bufferOffset, TK_ALL);
		return true;
	}
	default: {
		const VkCopyBufferToImageInfo2 *c =
			((const vk_args_vkCmdCopyBufferToImage2 *)args)->pCopyBufferToImageInfo;
		for (uint32_t i = 0; c && c->pRegions && i < c->regionCount; i++)
			if (c->pNext || c->pRegions[i].pNext)
				return false;
		for (uint32_t i = 0; c && c->pRegions && i < c->regionCount; i++)
			copy_from(cb, c->srcBuffer, c->pRegions[i].bufferOffset, TK_ALL);
		return true;
	}
	}
}

void tk_cmd_refs(tk_device *dev, const vk_command_info *cmd, const void *args,
		 _Atomic uint8_t *how_cache)
{
	int how = *how_cache;
	if (how == HOW_UNSEEN) {
		pthread_once(&types_once, types_init);
		how = how_of(cmd);
		*how_cache = (uint8_t)how;
	}
	if (how == HOW_NOTHING || !tk_tracing())
		return;
	VkCommandBuffer handle = *(const VkCommandBuffer *)args;
	pthread_mutex_lock(&dev->refs_lock);
	tk_cbuf *cb = tk_map_get(&dev->cbufs, (uint64_t)handle);
	if (!cb) {
		/* allocated before the layer knew of it: made now */
		cb = calloc(1, sizeof(*cb));
		tk_map_put(&dev->cbufs, (uint64_t)handle, cb);
	}
	walker w = { cb };
	if (how == HOW_UNKNOWN) {
		cb->unknown = true;
	} else if (how == HOW_PUSH_TEMPLATE) {
		const vk_args_vkCmdPushDescriptorSetWithTemplateKHR *a = args;
		tk_template *t = tk_map_get(&dev->templates, (uint64_t)a->descriptorUpdateTemplate);
		if (!t || !template_walk(t, a->pData, add_to_cb, cb))
			cb->unknown = true;
	} else if (how == HOW_WALK || !copy_refs(cb, how, args)) {
		for (uint32_t i = 1; i < cmd->nparams; i++)
			walk_field(&w, cmd->params, &cmd->params[i], args, 0);
	}
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_note_address(tk_device *dev)
{
	if (!dev->full_scan) {
		pthread_mutex_lock(&dev->lock);
		dev->full_scan = true;
		pthread_mutex_unlock(&dev->lock);
	}
}

/* ------------------------------------------------------------------ */
/* Command buffers and descriptor sets: each kept under its handle with
 * the pool it came from, the first field of both, so that one set of
 * helpers allocates, frees and drops a pool's worth of either. */

_Static_assert(offsetof(tk_cbuf, pool) == 0 && offsetof(tk_dset, pool) == 0,
	       "pooled_* read the pool as the first field");

typedef void pooled_free_fn(void *obj);

/* N objects of SIZE bytes from POOL, under HANDLES (a handle reused
 * without a free in between drops what was there). */
static void pooled_alloc(tk_device *dev, tk_map *map, pooled_free_fn *drop, size_t size,
			 uint64_t pool, uint32_t n, void *const *handles)
{
	pthread_mutex_lock(&dev->refs_lock);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t *obj = calloc(1, size);
		*obj = pool;
		drop(tk_map_del(map, (uint64_t)handles[i]));
		tk_map_put(map, (uint64_t)handles[i], obj);
	}
	pthread_mutex_unlock(&dev->refs_lock);
}

static void pooled_free(tk_device *dev, tk_map *map, pooled_free_fn *drop, uint32_t n,
			void *const *handles)
{
	pthread_mutex_lock(&dev->refs_lock);
	for (uint32_t i = 0; handles && i < n; i++)
		drop(tk_map_del(map, (uint64_t)handles[i]));
	pthread_mutex_unlock(&dev->refs_lock);
}

/* All that came from POOL, which is destroyed or reset. */
static void pooled_drop_pool(tk_device *dev, tk_map *map, pooled_free_fn *drop, uint64_t pool)
{
	pthread_mutex_lock(&dev->refs_lock);
	for (size_t i = 0; i < map->cap; i++) {
		uint64_t *obj = map->vals[i];
		if (obj && *obj == pool) {
			drop(obj);
			map->vals[i] = NULL;
		}
	}
	pthread_mutex_unlock(&dev->refs_lock);
}

/* ------------------------------------------------------------------ */
/* Command buffers. */

static void cbuf_clear(tk_cbuf *cb)
{
	ranges_free(&cb->objs);
	tk_map_free(&cb->views);
	tk_map_free(&cb->fbs);
	tk_map_free(&cb->sets);
	tk_map_free(&cb->cbs);
	cb->unknown = false;
}

static void cbuf_free(void *obj)
{
	tk_cbuf *cb = obj;
	if (cb) {
		cbuf_clear(cb);
		free(cb);
	}
}

void tk_post_vkAllocateCommandBuffers(tk_device *dev, vk_args_vkAllocateCommandBuffers *a)
{
	if (a->result == VK_SUCCESS)
		pooled_alloc(dev, &dev->cbufs, cbuf_free, sizeof(tk_cbuf),
			     (uint64_t)a->pAllocateInfo->commandPool,
			     a->pAllocateInfo->commandBufferCount, (void *const *)a->pCommandBuffers);
}

void tk_pre_vkFreeCommandBuffers(tk_device *dev, vk_args_vkFreeCommandBuffers *a)
{
	pooled_free(dev, &dev->cbufs, cbuf_free, a->commandBufferCount,
		    (void *const *)a->pCommandBuffers);
}

void tk_pre_vkBeginCommandBuffer(tk_device *dev, vk_args_vkBeginCommandBuffer *a)
{
	pthread_mutex_lock(&dev->refs_lock);
	tk_cbuf *cb = tk_map_get(&dev->cbufs, (uint64_t)a->commandBuffer);
	if (cb)
		cbuf_clear(cb);
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_pre_vkDestroyCommandPool(tk_device *dev, vk_args_vkDestroyCommandPool *a)
{
	if (a->commandPool)
		pooled_drop_pool(dev, &dev->cbufs, cbuf_free, (uint64_t)a->commandPool);
}

/* ------------------------------------------------------------------ */
/* Views and framebuffers. */

static void view_put(tk_device *dev, VkResult r, uint64_t view, uint64_t of, VkDeviceSize lo,
		     VkDeviceSize hi)
{
	if (r != VK_SUCCESS)
		return;
	tk_view *v = malloc(sizeof(*v));
	*v = (tk_view){ of, lo, hi };
	pthread_mutex_lock(&dev->refs_lock);
	free(tk_map_del(&dev->views, view));
	tk_map_put(&dev->views, view, v);
	pthread_mutex_unlock(&dev->refs_lock);
}

static void view_del(tk_device *dev, uint64_t view)
{
	pthread_mutex_lock(&dev->refs_lock);
	free(tk_map_del(&dev->views, view));
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_post_vkCreateBufferView(tk_device *dev, vk_args_vkCreateBufferView *a)
{
	const VkBufferViewCreateInfo *ci = a->pCreateInfo;
	VkDeviceSize hi = ci->range != VK_WHOLE_SIZE && ci->range <= TK_ALL - ci->offset
		? ci->offset + ci->range : TK_ALL;
	view_put(dev, a->result, (uint64_t)*a->pView, (uint64_t)ci->buffer, ci->offset, hi);
}

void tk_pre_vkDestroyBufferView(tk_device *dev, vk_args_vkDestroyBufferView *a)
{
	view_del(dev, (uint64_t)a->bufferView);
}

void tk_post_vkCreateImageView(tk_device *dev, vk_args_vkCreateImageView *a)
{
	view_put(dev, a->result, (uint64_t)*a->pView, (uint64_t)a->pCreateInfo->image, 0, TK_ALL);
}

void tk_pre_vkDestroyImageView(tk_device *dev, vk_args_vkDestroyImageView *a)
{
	view_del(dev, (uint64_t)a->imageView);
}

static void fb_free(tk_fb *fb)
{
	if (fb) {
		free(fb->views);
		free(fb);
	}
}

void tk_post_vkCreateFramebuffer(tk_device *dev, vk_args_vkCreateFramebuffer *a)
{
	if (a->result != VK_SUCCESS)
		return;
	const VkFramebufferCreateInfo *ci = a->pCreateInfo;
	tk_fb *fb = calloc(1, sizeof(*fb));
	/* imageless framebuffers get their views at vkCmdBeginRenderPass */
	if (!(ci->flags & VK_FRAMEBUFFER_CREATE_IMAGELESS_BIT) && ci->pAttachments) {
		fb->n = ci->attachmentCount;
		fb->views = calloc(fb->n + 1, sizeof(uint64_t));
		for (uint32_t i = 0; i < fb->n; i++)
			fb->views[i] = (uint64_t)ci->pAttachments[i];
	}
	pthread_mutex_lock(&dev->refs_lock);
	fb_free(tk_map_del(&dev->fbs, (uint64_t)*a->pFramebuffer));
	tk_map_put(&dev->fbs, (uint64_t)*a->pFramebuffer, fb);
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_pre_vkDestroyFramebuffer(tk_device *dev, vk_args_vkDestroyFramebuffer *a)
{
	pthread_mutex_lock(&dev->refs_lock);
	fb_free(tk_map_del(&dev->fbs, (uint64_t)a->framebuffer));
	pthread_mutex_unlock(&dev->refs_lock);
}

/* ------------------------------------------------------------------ */
/* Descriptor sets and update templates. */

static uint64_t slot_key(uint32_t binding, uint32_t element, int kind)
{
	return ((uint64_t)binding << 34 | (uint64_t)(element & 0x3fffffffu) << 4 | (uint64_t)kind) + 1;
}

static void dset_free(void *obj)
{
	tk_dset *s = obj;
	if (s) {
		ranges_free(&s->slots);
		free(s);
	}
}

static void slot_put(void *ctx, uint32_t binding, uint32_t element, int kind, tk_ref r)
{
	tk_dset *s = ctx;
	if (kind == K_NONE)
		return;
	uint64_t key = slot_key(binding, element, kind);
	if (!r.h && !tk_map_get(&s->slots.at, key))
		return;
	tk_ref *slot = ranges_at(&s->slots, key);
	*slot = r;
}

void tk_post_vkAllocateDescriptorSets(tk_device *dev, vk_args_vkAllocateDescriptorSets *a)
{
	if (a->result == VK_SUCCESS)
		pooled_alloc(dev, &dev->dsets, dset_free, sizeof(tk_dset),
			     (uint64_t)a->pAllocateInfo->descriptorPool,
			     a->pAllocateInfo->descriptorSetCount, (void *const *)a->pDescriptorSets);
}

void tk_pre_vkFreeDescriptorSets(tk_device *dev, vk_args_vkFreeDescriptorSets *a)
{
	pooled_free(dev, &dev->dsets, dset_free, a->descriptorSetCount,
		    (void *const *)a->pDescriptorSets);
}

void tk_pre_vkResetDescriptorPool(tk_device *dev, vk_args_vkResetDescriptorPool *a)
{
	pooled_drop_pool(dev, &dev->dsets, dset_free, (uint64_t)a->descriptorPool);
}

void tk_pre_vkDestroyDescriptorPool(tk_device *dev, vk_args_vkDestroyDescriptorPool *a)
{
	if (a->descriptorPool)
		pooled_drop_pool(dev, &dev->dsets, dset_free, (uint64_t)a->descriptorPool);
}

/* A set the layer does not know (made before it looked): from now on,
 * followed as unknown. */
static tk_dset *dset_of(tk_device *dev, uint64_t handle)
{
	tk_dset *s = tk_map_get(&dev->dsets, handle);
	if (!s && handle) {
		s = calloc(1, sizeof(*s));
		s->unknown = true;
		tk_map_put(&dev->dsets, handle, s);
	}
	return s;
}

void tk_post_vkUpdateDescriptorSets(tk_device *dev, vk_args_vkUpdateDescriptorSets *a)
{
	pthread_mutex_lock(&dev->refs_lock);
	for (uint32_t i = 0; a->pDescriptorWrites && i < a->descriptorWriteCount; i++) {
		const VkWriteDescriptorSet *w = &a->pDescriptorWrites[i];
		tk_dset *s = dset_of(dev, (uint64_t)w->dstSet);
		if (!s)
			continue;
		dkind k = dkind_of(w->descriptorType);
		const uint8_t *arr = write_array(w, k);
		if (k == D_NONE)
			continue;
		if (k == D_UNKNOWN || !arr) {
			if (k == D_UNKNOWN || w->descriptorCount > 0)
				s->unknown = true;
			continue;
		}
		for (uint32_t j = 0; j < w->descriptorCount; j++) {
			int kind;
			tk_ref r = descriptor_at(w->descriptorType, k, arr + j * dstride(k), &kind);
			slot_put(s, w->dstBinding, w->dstArrayElement + j, kind, r);
		}
	}
	/* a copy moves descriptors whose slots were kept by where they were
	 * written: the set copied into is followed as unknown */
	for (uint32_t i = 0; a->pDescriptorCopies && i < a->descriptorCopyCount; i++) {
		tk_dset *s = dset_of(dev, (uint64_t)a->pDescriptorCopies[i].dstSet);
		if (s)
			s->unknown = true;
	}
	pthread_mutex_unlock(&dev->refs_lock);
}

static void update_with_template(tk_device *dev, VkDescriptorSet set,
				 VkDescriptorUpdateTemplate tmpl, const void *data)
{
	pthread_mutex_lock(&dev->refs_lock);
	tk_dset *s = dset_of(dev, (uint64_t)set);
	tk_template *t = tk_map_get(&dev->templates, (uint64_t)tmpl);
	if (s && (!t || !template_walk(t, data, slot_put, s)))
		s->unknown = true;
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_post_vkUpdateDescriptorSetWithTemplate(tk_device *dev,
					       vk_args_vkUpdateDescriptorSetWithTemplate *a)
{
	update_with_template(dev, a->descriptorSet, a->descriptorUpdateTemplate, a->pData);
}

void tk_post_vkUpdateDescriptorSetWithTemplateKHR(tk_device *dev,
						  vk_args_vkUpdateDescriptorSetWithTemplateKHR *a)
{
	update_with_template(dev, a->descriptorSet, a->descriptorUpdateTemplate, a->pData);
}

static void template_free(tk_template *t)
{
	if (t) {
		free(t->e);
		free(t->packed);
		free(t);
	}
}

static void template_make(tk_device *dev, VkResult r, const VkDescriptorUpdateTemplateCreateInfo *ci,
			  VkDescriptorUpdateTemplate handle)
{
	if (r != VK_SUCCESS)
		return;
	tk_template *t = calloc(1, sizeof(*t));
	t->n = ci->descriptorUpdateEntryCount;
	t->e = calloc(t->n + 1, sizeof(*t->e));
	if (t->n)
		memcpy(t->e, ci->pDescriptorUpdateEntries, sizeof(*t->e) * t->n);
	t->packed = calloc(t->n + 1, sizeof(*t->packed));
	t->sized = vk_template_pack(t->e, t->n, t->packed, &t->size);
	pthread_mutex_lock(&dev->refs_lock);
	template_free(tk_map_del(&dev->templates, (uint64_t)handle));
	tk_map_put(&dev->templates, (uint64_t)handle, t);
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_post_vkCreateDescriptorUpdateTemplate(tk_device *dev,
					      vk_args_vkCreateDescriptorUpdateTemplate *a)
{
	template_make(dev, a->result, a->pCreateInfo, *a->pDescriptorUpdateTemplate);
}

void tk_post_vkCreateDescriptorUpdateTemplateKHR(tk_device *dev,
						 vk_args_vkCreateDescriptorUpdateTemplateKHR *a)
{
	template_make(dev, a->result, a->pCreateInfo, *a->pDescriptorUpdateTemplate);
}

/*
 * The trace holds each template with its entries packed, so that pData is
 * recorded as only the bytes they read: zink's entries point into its
 * context struct, some 27 KB of which a push of five uniform buffers reads
 * 120 bytes, and a zero gap still costs Snappy 3 bytes in 64.  The call
 * goes down with the application's entries; vk_template_pack() decides,
 * here and in template_make(), which templates are packed, alike.
 */
tk_rec *tk_enter_template_create(const vk_command_info *cmd, void *args,
				 const VkDescriptorUpdateTemplateCreateInfo **info)
{
	const VkDescriptorUpdateTemplateCreateInfo *app = *info;
	if (!tk_tracing() || !app || !app->pDescriptorUpdateEntries)
		return tk_enter(cmd, args);
	uint32_t n = app->descriptorUpdateEntryCount;
	VkDescriptorUpdateTemplateEntry *packed = calloc(n + 1, sizeof(*packed));
	uint64_t size;
	if (!packed || !vk_template_pack(app->pDescriptorUpdateEntries, n, packed, &size)) {
		free(packed);
		return tk_enter(cmd, args);
	}
	VkDescriptorUpdateTemplateCreateInfo ci = *app;
	ci.pDescriptorUpdateEntries = packed;
	*info = &ci;
	tk_rec *rec = tk_enter(cmd, args);
	*info = app;
	free(packed);
	return rec;
}

typedef struct packing {
	const tk_template *t;
	const void *data;
} packing;

static void fill_packed(void *ctx, uint8_t *blob)
{
	const packing *p = ctx;
	vk_template_data_pack(p->t->e, p->t->packed, p->t->n, p->data, blob);
}

tk_rec *tk_enter_template_data(tk_device *dev, const vk_command_info *cmd, const void *args,
			       uint32_t param, uint64_t handle, const void *data)
{
	if (!tk_tracing())
		return NULL;
	/* a template lives until the application destroys it, which it
	 * must not while a call uses it: past the lookup, no lock */
	pthread_mutex_lock(&dev->refs_lock);
	const tk_template *t = tk_map_get(&dev->templates, handle);
	pthread_mutex_unlock(&dev->refs_lock);
	if (!t || !t->sized || !data)
		return tk_enter(cmd, args);
	packing p = { t, data };
	return tk_enter_blob(cmd, args, param, t->size, fill_packed, &p);
}

static void template_del(tk_device *dev, VkDescriptorUpdateTemplate handle)
{
	pthread_mutex_lock(&dev->refs_lock);
	template_free(tk_map_del(&dev->templates, (uint64_t)handle));
	pthread_mutex_unlock(&dev->refs_lock);
}

void tk_pre_vkDestroyDescriptorUpdateTemplate(tk_device *dev,
					      vk_args_vkDestroyDescriptorUpdateTemplate *a)
{
	template_del(dev, a->descriptorUpdateTemplate);
}

void tk_pre_vkDestroyDescriptorUpdateTemplateKHR(tk_device *dev,
						 vk_args_vkDestroyDescriptorUpdateTemplateKHR *a)
{
	template_del(dev, a->descriptorUpdateTemplate);
}

/* ------------------------------------------------------------------ */
/* At a submit. */

static void mark_view(tk_device *dev, uint64_t view, tk_mark_fn *mark)
{
	const tk_view *v = tk_map_get(&dev->views, view);
	if (v)
		mark(dev, v->of, v->lo, v->hi);
}

static bool collect(tk_device *dev, tk_cbuf *cb, tk_mark_fn *mark, int depth)
{
	if (cb->unknown || depth > 4)
		return false;
	if (cb->epoch == dev->epoch)
		return true;
	cb->epoch = dev->epoch;
	for (size_t i = 0; i < cb->objs.n; i++)
		mark(dev, cb->objs.v[i].h, cb->objs.v[i].lo, cb->objs.v[i].hi);
	for (size_t i = 0; i < cb->views.cap; i++)
		if (cb->views.vals[i])
			mark_view(dev, cb->views.keys[i], mark);
	for (size_t i = 0; i < cb->fbs.cap; i++) {
		tk_fb *fb = cb->fbs.vals[i] ? tk_map_get(&dev->fbs, cb->fbs.keys[i]) : NULL;
		for (uint32_t j = 0; fb && j < fb->n; j++)
			mark_view(dev, fb->views[j], mark);
	}
	for (size_t i = 0; i < cb->sets.cap; i++) {
		if (!cb->sets.vals[i])
			continue;
		tk_dset *s = tk_map_get(&dev->dsets, cb->sets.keys[i]);
		if (!s || s->unknown)
			return false;
		for (size_t j = 0; j < s->slots.at.cap; j++) {
			size_t at = (size_t)(uintptr_t)s->slots.at.vals[j];
			const tk_ref *r = at ? &s->slots.v[at - 1] : NULL;
			if (!r || !r->h)
				continue;
			if (((s->slots.at.keys[j] - 1) & 0xf) == K_OBJ)
				mark(dev, r->h, r->lo, r->hi);
			else
				mark_view(dev, r->h, mark);
		}
	}
	for (size_t i = 0; i < cb->cbs.cap; i++) {
		if (!cb->cbs.vals[i])
			continue;
		tk_cbuf *sec = tk_map_get(&dev->cbufs, cb->cbs.keys[i]);
		if (!sec || !collect(dev, sec, mark, depth + 1))
			return false;
	}
	return true;
}

bool tk_refs_collect(tk_device *dev, VkCommandBuffer handle, tk_mark_fn *mark)
{
	tk_cbuf *cb = tk_map_get(&dev->cbufs, (uint64_t)handle);
	return cb && collect(dev, cb, mark, 0);
}

void tk_refs_fini(tk_device *dev)
{
	for (size_t i = 0; i < dev->cbufs.cap; i++)
		cbuf_free(dev->cbufs.vals[i]);
	for (size_t i = 0; i < dev->fbs.cap; i++)
		fb_free(dev->fbs.vals[i]);
	for (size_t i = 0; i < dev->dsets.cap; i++)
		dset_free(dev->dsets.vals[i]);
	for (size_t i = 0; i < dev->templates.cap; i++)
		template_free(dev->templates.vals[i]);
	for (size_t i = 0; i < dev->views.cap; i++)
		free(dev->views.vals[i]);
	tk_map_free(&dev->cbufs);
	tk_map_free(&dev->views);
	tk_map_free(&dev->fbs);
	tk_map_free(&dev->dsets);
	tk_map_free(&dev->templates);
}
