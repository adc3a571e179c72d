/*
 * vkwalk.c: walking the handles of decoded arguments (trace-replay's
 * remapping, trim's references), and what a descriptor update template's
 * pData holds, read, packed and walked by its entries.
 */
#include "vkschema_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
/* the descriptor types and info structs of update templates (types and
 * constants only: libtrace does not link libvulkan) */
#include <vulkan/vulkan_core.h>

/* ------------------------------------------------------------------ */
/* Walking the handles of decoded arguments (trace-replay's remapping). */

typedef struct walk {
	vk_handle_fn fn;
	void *ctx;
} walk;

static void walk_struct(walk *w, const vk_struct_info *s, uint8_t *p);

int vk_by_name(const vk_named *table, size_t n, const char *name, int dflt)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, table[i].name))
			return table[i].code;
	return dflt;
}

const void *vk_chain_find(const void *next, int32_t stype)
{
	const base_in *b = next;
	while (b && (int32_t)b->sType != stype)
		b = b->pNext;
	return b;
}

static void walk_pnext(walk *w, const base_in *b)
{
	for (; b; b = b->pNext) {
		const vk_struct_info *s = vk_struct_by_stype(b->sType);
		if (s && s->handles)
			walk_struct(w, s, (uint8_t *)b);
	}
}

/* N elements of F's base type at P (handles or structs). */
static void walk_elems(walk *w, const vk_field *f, uint8_t *p, uint64_t n, bool top)
{
	if (f->base == VK_B_HANDLE) {
		for (uint64_t i = 0; i < n; i++)
			w->fn(w->ctx, f->ref, (uint64_t *)(p + i * 8), top, f);
		return;
	}
	const vk_struct_info *s = f->ref;
	for (uint64_t i = 0; i < n; i++)
		walk_struct(w, s, p + i * f->size);
}

bool vk_field_walked(const vk_field *f)
{
	if (f->flags & (VK_F_PNEXT | VK_F_TYPED_HANDLE))
		return true;
	if (f->base == VK_B_HANDLE)
		return true;
	return f->base == VK_B_STRUCT && f->ref && ((const vk_struct_info *)f->ref)->handles;
}

static void walk_field(walk *w, const vk_field *fields, const vk_field *f, uint8_t *base, bool top)
{
	uint8_t *fp = base + f->offset;
	if (f->flags & VK_F_PNEXT) {
		walk_pnext(w, read_ptr(fp));
		return;
	}
	if ((f->flags & VK_F_TYPED_HANDLE) && !f->ptr) {
		const vk_field *t = &fields[f->typed_by];
		const vk_handle_info *h = vk_typed_handle_type(t, read_sint(base + t->offset, t->size));
		w->fn(w->ctx, h, (uint64_t *)fp, top, f);
		return;
	}
	if (f->ptr == 0) {
		walk_elems(w, f, fp, f->count ? f->count : 1, top && !f->count);
		return;
	}
	uint8_t *p = (uint8_t *)read_ptr(fp);
	if (!p)
		return;
	uint64_t n = vk_field_len(fields, f, base);
	if (f->ptr == 1) {
		walk_elems(w, f, p, n, false);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint8_t *q = (uint8_t *)read_ptr(p + i * sizeof(void *));
		if (q)
			walk_elems(w, f, q, 1, false);
	}
}

/* One handle, most of what is walked, without walk_field's cases. */
static inline bool plain_handle(const vk_field *f)
{
	return f->base == VK_B_HANDLE && !f->ptr && !f->count && !(f->flags & VK_F_TYPED_HANDLE);
}

/* The members vk_field_walked picks, listed by the generator: a barrier's
 * eleven looked at one by one cost mpv's replay a quarter of its walk. */
static void walk_struct(walk *w, const vk_struct_info *s, uint8_t *p)
{
	for (uint32_t i = 0; i < s->nwalk; i++) {
		const vk_field *f = &s->fields[s->walk[i]];
		if (plain_handle(f))
			w->fn(w->ctx, f->ref, (uint64_t *)(p + f->offset), false, f);
		else
			walk_field(w, s->fields, f, p, false);
	}
}

void vk_walk_handles(const vk_command_info *cmd, void *args, bool outputs, vk_handle_fn fn,
		     void *ctx)
{
	walk w = { fn, ctx };
	const uint16_t *idx = outputs ? cmd->walk_out : cmd->walk_in;
	uint32_t n = outputs ? cmd->nwalk_out : cmd->nwalk_in;
	for (uint32_t i = 0; i < n; i++) {
		const vk_field *f = &cmd->params[idx[i]];
		if (plain_handle(f))
			fn(ctx, f->ref, (uint64_t *)((uint8_t *)args + f->offset), true, f);
		else
			walk_field(&w, cmd->params, f, args, true);
	}
}

void vk_walk_struct_handles(const vk_struct_info *s, void *p, vk_handle_fn fn, void *ctx)
{
	walk w = { fn, ctx };
	walk_struct(&w, s, p);
}

extern const vk_typed_handle vk_typed_VkObjectType[], vk_typed_VkDebugReportObjectTypeEXT[];
extern const uint32_t vk_ntyped_VkObjectType, vk_ntyped_VkDebugReportObjectTypeEXT;

const vk_handle_info vk_handle_untyped = { "an object of no type the registry names", 0, NULL, 0 };

const vk_handle_info *vk_typed_handle_type(const vk_field *type_field, int64_t value)
{
	bool report = !strcmp(type_field->type, "VkDebugReportObjectTypeEXT");
	const vk_typed_handle *t = report ? vk_typed_VkDebugReportObjectTypeEXT : vk_typed_VkObjectType;
	uint32_t lo = 0, hi = report ? vk_ntyped_VkDebugReportObjectTypeEXT : vk_ntyped_VkObjectType;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t[mid].value == value)
			return t[mid].handle;
		if (t[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &vk_handle_untyped;
}

int32_t vk_command_index(const vk_command_info *cmd)
{
	uint32_t lo = 0, hi = vk_ncommands;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(cmd->sig.name, vk_commands[mid]->sig.name);
		if (!c)
			return (int32_t)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* Descriptor update templates: what pData holds. */

/* What one descriptor of a template entry reads from pData. */
typedef enum tdesc {
	TD_SAMPLER,        /* VkDescriptorImageInfo: its sampler */
	TD_IMAGE_SAMPLER,  /* VkDescriptorImageInfo: sampler and imageView */
	TD_IMAGE,          /* VkDescriptorImageInfo: its imageView */
	TD_BUFFER,         /* VkDescriptorBufferInfo */
	TD_TEXEL,          /* a VkBufferView */
	TD_INLINE,         /* descriptorCount bytes, no handle */
	TD_ACCEL_KHR,      /* a VkAccelerationStructureKHR */
	TD_ACCEL_NV,       /* a VkAccelerationStructureNV */
	TD_UNKNOWN,
} tdesc;

static tdesc tdesc_of(int32_t type)
{
	switch (type) {
	case VK_DESCRIPTOR_TYPE_SAMPLER:
		return TD_SAMPLER;
	case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
		return TD_IMAGE_SAMPLER;
	case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
	case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
	case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT:
	case VK_DESCRIPTOR_TYPE_SAMPLE_WEIGHT_IMAGE_QCOM:
	case VK_DESCRIPTOR_TYPE_BLOCK_MATCH_IMAGE_QCOM:
		return TD_IMAGE;
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
		return TD_BUFFER;
	case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER:
		return TD_TEXEL;
	case VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK:
		return TD_INLINE;
	case VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR:
		return TD_ACCEL_KHR;
	case VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_NV:
		return TD_ACCEL_NV;
	default: /* mutable descriptors, what later extensions add */
		return TD_UNKNOWN;
	}
}

static uint64_t tdesc_size(tdesc d)
{
	switch (d) {
	case TD_SAMPLER: case TD_IMAGE_SAMPLER: case TD_IMAGE:
		return sizeof(VkDescriptorImageInfo);
	case TD_BUFFER:
		return sizeof(VkDescriptorBufferInfo);
	default: /* handles */
		return 8;
	}
}

/* Where descriptor J of entry E starts in pData and how many bytes it
 * reads; false on an overflow (a template no device would accept). */
static bool tdesc_range(const VkDescriptorUpdateTemplateEntry *e, tdesc d, uint64_t j,
			uint64_t *at, uint64_t *len)
{
	if (d == TD_INLINE) {  /* the count is in bytes; the stride unused */
		*at = e->offset;
		*len = e->descriptorCount;
		return true;
	}
	*len = tdesc_size(d);
	if (j && e->stride > (UINT64_MAX - e->offset - *len) / j)
		return false;
	*at = e->offset + j * e->stride;
	return true;
}

bool vk_template_data_size(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			   uint64_t *size)
{
	uint64_t end = 0;
	for (uint32_t i = 0; i < n; i++) {
		tdesc d = tdesc_of(e[i].descriptorType);
		if (d == TD_UNKNOWN)
			return false;
		if (!e[i].descriptorCount)
			continue;
		uint64_t at, len;
		uint64_t last = d == TD_INLINE ? 0 : e[i].descriptorCount - 1;
		if (!tdesc_range(&e[i], d, last, &at, &len) || at > UINT64_MAX - len)
			return false;
		if (at + len > end)
			end = at + len;
	}
	*size = end;
	return true;
}

/* The registry's member STRUCT.NAME: what the walk hands to vk_handle_fn. */
static const vk_field *member(const char *st, const char *name)
{
	const vk_struct_info *s = vk_struct_lookup(st);
	for (uint32_t i = 0; s && !s->blob && i < s->nfields; i++)
		if (!strcmp(s->fields[i].name, name))
			return &s->fields[i];
	return NULL;
}

/* Where a descriptor of each kind holds its handles: the registry's
 * members ST.A (and ST.B), in the info struct the data holds when INFO,
 * else the data is the array that the member points to. */
typedef struct tdesc_members {
	const char *st, *a, *b;
	bool info;
} tdesc_members;

static const tdesc_members tdesc_handles[] = {
	[TD_SAMPLER] = {"VkDescriptorImageInfo", "sampler", NULL, true},
	[TD_IMAGE_SAMPLER] = {"VkDescriptorImageInfo", "sampler", "imageView", true},
	[TD_IMAGE] = {"VkDescriptorImageInfo", "imageView", NULL, true},
	[TD_BUFFER] = {"VkDescriptorBufferInfo", "buffer", NULL, true},
	[TD_TEXEL] = {"VkWriteDescriptorSet", "pTexelBufferView", NULL, false},
	[TD_ACCEL_KHR] = {"VkWriteDescriptorSetAccelerationStructureKHR", "pAccelerationStructures",
			  NULL, false},
	[TD_ACCEL_NV] = {"VkWriteDescriptorSetAccelerationStructureNV", "pAccelerationStructures",
			 NULL, false},
};

/* tdesc_handles' members, looked up once (an update through a template
 * looked them up by name per entry) */
static const vk_field *members_of[sizeof(tdesc_handles) / sizeof(tdesc_handles[0])][2];
static pthread_once_t members_once = PTHREAD_ONCE_INIT;

static void members_find(void)
{
	for (size_t d = 0; d < sizeof(tdesc_handles) / sizeof(tdesc_handles[0]); d++) {
		const tdesc_members *m = &tdesc_handles[d];
		members_of[d][0] = m->st ? member(m->st, m->a) : NULL;
		members_of[d][1] = m->st && m->b ? member(m->st, m->b) : NULL;
	}
}

/* The handle at P (F's member, at its offset in an info struct when
 * INFO), unaligned as pData may be. */
static void visit(walk *w, const vk_field *f, uint8_t *p, bool info)
{
	if (!f || f->base != VK_B_HANDLE)
		return;
	uint8_t *q = info ? p + f->offset : p;
	uint64_t v;
	memcpy(&v, q, 8);
	w->fn(w->ctx, f->ref, &v, false, f);
	memcpy(q, &v, 8);
}

bool vk_walk_template_handles(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			      void *data, uint64_t size, vk_handle_fn fn, void *ctx)
{
	walk w = { fn, ctx };
	bool ok = true;
	for (uint32_t i = 0; i < n; i++) {
		tdesc d = tdesc_of(e[i].descriptorType);
		if (d == TD_UNKNOWN)
			ok = false;
		if (d == TD_UNKNOWN || d == TD_INLINE)
			continue;
		const tdesc_members *m = &tdesc_handles[d];
		pthread_once(&members_once, members_find);
		const vk_field *a = members_of[d][0], *b = members_of[d][1];
		for (uint64_t j = 0; j < e[i].descriptorCount; j++) {
			uint64_t at, len;
			if (!tdesc_range(&e[i], d, j, &at, &len) || at > size || len > size - at) {
				ok = false;
				break;
			}
			visit(&w, a, (uint8_t *)data + at, m->info);
			visit(&w, b, (uint8_t *)data + at, m->info);
		}
	}
	return ok;
}

/* The bytes of one descriptor's info that its type reads, from its start:
 * a sampled image's sampler and a sampler's view and layout are ignored,
 * so a copy leaves them zero. */
static void tdesc_read(tdesc d, uint64_t *from, uint64_t *len)
{
	*from = 0;
	*len = tdesc_size(d);
	if (d == TD_SAMPLER) {
		*len = sizeof(VkSampler);
	} else if (d == TD_IMAGE) {
		*from = offsetof(VkDescriptorImageInfo, imageView);
		*len -= *from;
	}
}

bool vk_template_pack(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
		      struct VkDescriptorUpdateTemplateEntry *packed, uint64_t *size)
{
	uint64_t at = 0, end;
	if (!vk_template_data_size(e, n, &end))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		tdesc d = tdesc_of(e[i].descriptorType);
		uint64_t one = d == TD_INLINE ? 1 : tdesc_size(d);
		at = (at + 7) & ~(uint64_t)7;
		packed[i] = e[i];
		packed[i].offset = (size_t)at;
		if (d != TD_INLINE)
			packed[i].stride = (size_t)one;
		at += one * e[i].descriptorCount;
		if (at > UINT32_MAX)
			return false; /* more than a blob holds */
	}
	*size = at;
	return true;
}

void vk_template_data_pack(const struct VkDescriptorUpdateTemplateEntry *e,
			   const struct VkDescriptorUpdateTemplateEntry *packed, uint32_t n,
			   const void *src, void *dst)
{
	const uint8_t *from_p = src;
	uint8_t *to_p = dst;
	for (uint32_t i = 0; i < n; i++) {
		tdesc d = tdesc_of(e[i].descriptorType);
		if (d == TD_INLINE) {
			memcpy(to_p + packed[i].offset, from_p + e[i].offset, e[i].descriptorCount);
			continue;
		}
		uint64_t from, len;
		tdesc_read(d, &from, &len);
		for (uint64_t j = 0; j < e[i].descriptorCount; j++) {
			uint64_t at, to, one;
			if (!tdesc_range(&e[i], d, j, &at, &one) ||
			    !tdesc_range(&packed[i], d, j, &to, &one))
				break; /* not after vk_template_pack() */
			memcpy(to_p + to + from, from_p + at + from, len);
		}
	}
}

bool vk_walk_template_data(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			   uint64_t size, vk_template_fn fn, void *ctx)
{
	bool ok = true;
	for (uint32_t i = 0; i < n; i++) {
		tdesc d = tdesc_of(e[i].descriptorType);
		if (d == TD_UNKNOWN) {
			ok = false;
			continue;
		}
		/* an inline block's count is its bytes: one descriptor */
		uint64_t count = d == TD_INLINE ? 1 : e[i].descriptorCount;
		for (uint64_t j = 0; j < count; j++) {
			uint64_t at, len;
			if (!tdesc_range(&e[i], d, j, &at, &len) || at > size || len > size - at) {
				ok = false;
				break;
			}
			fn(ctx, &e[i], (uint32_t)j, at, len);
		}
	}
	return ok;
}

/* ------------------------------------------------------------------ */
/* The descriptors of a write or a template's data, one by one. */

_Static_assert(sizeof(VkBufferView) == 8, "a texel view's handle is 8 bytes");

/* D's type as what a descriptor holds. */
static void descriptor_holds(vk_descriptor *d, tdesc kind, const VkDescriptorImageInfo *image,
			     const VkDescriptorBufferInfo *buffer, const uint64_t *view)
{
	if (kind == TD_SAMPLER || kind == TD_IMAGE_SAMPLER || kind == TD_IMAGE)
		d->image = image;
	else if (kind == TD_BUFFER)
		d->buffer = buffer;
	else if (kind == TD_TEXEL)
		d->texel_view = view;
}

void vk_write_descriptors(const struct VkWriteDescriptorSet *w, vk_descriptor_fn fn, void *ctx)
{
	tdesc kind = tdesc_of(w->descriptorType);
	/* an inline block's count is its bytes: one descriptor */
	uint32_t count = kind == TD_INLINE ? 1 : w->descriptorCount;
	for (uint32_t i = 0; i < count; i++) {
		vk_descriptor d = {w->dstBinding, w->dstArrayElement + i, w->descriptorType};
		uint64_t view = 0;
		if (kind == TD_TEXEL && w->pTexelBufferView) /* the others may be left dangling */
			memcpy(&view, &w->pTexelBufferView[i], sizeof(view));
		descriptor_holds(&d, kind, w->pImageInfo ? &w->pImageInfo[i] : NULL,
				 w->pBufferInfo ? &w->pBufferInfo[i] : NULL,
				 w->pTexelBufferView ? &view : NULL);
		fn(ctx, &d);
	}
}

typedef struct descriptor_walk {
	const uint8_t *data;
	vk_descriptor_fn fn;
	void *ctx;
} descriptor_walk;

/* A template's descriptor: its bytes (LEN, as its type reads them) copied
 * out, pData being unaligned. */
static void template_descriptor(void *ctx, const VkDescriptorUpdateTemplateEntry *e,
				uint32_t index, uint64_t at, uint64_t len)
{
	const descriptor_walk *w = ctx;
	union {
		VkDescriptorImageInfo image;
		VkDescriptorBufferInfo buffer;
		uint64_t view;
	} u;
	memset(&u, 0, sizeof(u));
	memcpy(&u, w->data + at, len < sizeof(u) ? len : sizeof(u));
	vk_descriptor d = {e->dstBinding, e->dstArrayElement + index, e->descriptorType};
	descriptor_holds(&d, tdesc_of(e->descriptorType), &u.image, &u.buffer, &u.view);
	w->fn(w->ctx, &d);
}

bool vk_template_descriptors(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			     const void *data, uint64_t size, vk_descriptor_fn fn, void *ctx)
{
	descriptor_walk w = {data, fn, ctx};
	return vk_walk_template_data(e, n, size, template_descriptor, &w);
}
