/*
 * Image subresources: a VkImageSubresourceRange, VkImageSubresourceLayers
 * or VkImageSubresource in what a call reads (a view's range, a barrier's,
 * a copy's layers) whose mip levels or array layers pass those of the
 * image it is of stops the replay before the driver uses it (llvmpipe
 * crashed drawing through a view of mip level 4294967295).  Which image
 * a subresource is of, the registry says by names only: srcSubresource
 * is srcImage's, dstSubresource dstImage's, subresourceRange, pRanges
 * and pSubresource image's, imageSubresource the one image beside it;
 * looked for in the struct that holds it, then in the structs and the
 * command around that.  Images made by vkCreateImage only (their levels
 * and layers are in the record); pNext chains are not followed.
 */
#include "replay_internal.h"

/* The fields of one struct (or the command's parameters) and what holds it. */
typedef struct scope {
	const vk_field *fields;
	uint32_t n;
	const uint8_t *base;
	const struct scope *up;
} scope;

typedef struct subres {
	vkr *r;
	const vk_struct_info *range, *layers, *one;
} subres;

/* What was found of KEY (a struct or a member), remembered by its address
 * in a table of SUBRES_MEMO (a barrier's image looked for by name, and the
 * structs walked into, were most of what these checks cost mpv's replay). */
static int16_t *memo(vkr *r, const void *key, bool *known)
{
	size_t slot = trace_ptr_slot(key, SUBRES_MEMO_BITS);
	*known = r->subres_memo.key[slot] == key;
	r->subres_memo.key[slot] = key;
	return &r->subres_memo.val[slot];
}

/* The image (a handle of H_IMAGE) subresource field F is of, or 0. */
static uint64_t image_of(vkr *r, const scope *sc, const vk_field *f, const vk_handle_info *h_image)
{
	const char *name = f->name;
	bool known;
	int16_t *at = memo(r, f, &known);
	/* found in its own struct: where (-1: more than one) */
	if (known && *at >= 0) {
		uint64_t v;
		memcpy(&v, sc->base + sc->fields[*at].offset, 8);
		return v;
	}
	if (known && *at == -1)
		return 0;
	const char *want = !strcmp(name, "srcSubresource") ? "srcImage"
		: !strcmp(name, "dstSubresource") ? "dstImage"
		: !strcmp(name, "imageSubresource") ? NULL : "image";
	*at = -2;  /* not in its own struct: looked for each time */
	for (bool own = true; sc; sc = sc->up, own = false) {
		uint64_t v = 0;
		int found = 0;
		for (uint32_t i = 0; i < sc->n; i++) {
			const vk_field *g = &sc->fields[i];
			if (g->base != VK_B_HANDLE || g->ptr || g->count || g->ref != h_image ||
			    (want && strcmp(g->name, want)))
				continue;
			memcpy(&v, sc->base + g->offset, 8);
			if (own)
				*at = found ? -1 : (int16_t)i;
			found++;
		}
		if (found)
			return found == 1 ? v : 0;
	}
	return 0;
}

/* Member BASE (its value B) and COUNT (C; NULL: one) of the N mip levels
 * or array layers (UNIT) of IMAGE: within them. */
static void within(vkr *r, const vk_field *f, const char *base, uint32_t b, const char *count,
		   uint32_t c, uint32_t n, const char *unit, uint64_t image)
{
	bool rest = c == VK_REMAINING_MIP_LEVELS;  /* = VK_REMAINING_ARRAY_LAYERS */
	if (b < n && (!count || rest || (c && c <= n - b)))
		return;
	if (count)
		vkr_fatal(r, "%s: %s %u, %s %u, but VkImage 0x%llx has %u %s", f->name, base, b,
			  count, c, (unsigned long long)image, n, unit);
	vkr_fatal(r, "%s: %s %u, but VkImage 0x%llx has %u %s", f->name, base, b,
		  (unsigned long long)image, n, unit);
}

static void check_one(subres *k, const vk_field *f, const vk_struct_info *s, const uint8_t *p,
		      const scope *sc)
{
	uint64_t cap = image_of(k->r, sc, f, k->r->h_image);
	obj *o = cap ? vkr_obj_get(k->r, cap) : NULL;
	/* a swapchain's image: one level, its layers (llvmpipe crashed
	 * drawing through a view of vkcube's from baseMipLevel 4294967295:
	 * mutants.py seed 2717873790) */
	uint32_t mips = o ? o->mips : 1;
	uint32_t nlayers = o ? o->layers : cap ? vkr_swapchain_image_layers(k->r, cap) : 0;
	if (o ? !o->mips : !nlayers)
		return;
	bool layers = !o || !o->three_d;
	if (s == k->range) {
		const VkImageSubresourceRange *x = (const void *)p;
		within(k->r, f, "baseMipLevel", x->baseMipLevel, "levelCount", x->levelCount, mips,
		       "mip levels", cap);
		if (layers)
			within(k->r, f, "baseArrayLayer", x->baseArrayLayer, "layerCount", x->layerCount,
			       nlayers, "array layers", cap);
	} else if (s == k->layers) {
		const VkImageSubresourceLayers *x = (const void *)p;
		within(k->r, f, "mipLevel", x->mipLevel, NULL, 0, mips, "mip levels", cap);
		if (layers)
			within(k->r, f, "baseArrayLayer", x->baseArrayLayer, "layerCount", x->layerCount,
			       nlayers, "array layers", cap);
	} else {
		const VkImageSubresource *x = (const void *)p;
		within(k->r, f, "mipLevel", x->mipLevel, NULL, 0, mips, "mip levels", cap);
		if (layers)
			within(k->r, f, "arrayLayer", x->arrayLayer, NULL, 0, nlayers, "array layers",
			       cap);
	}
}

/* How deep in a parameter a subresource is looked for. */
#define HOLDS_DEPTH 8

static bool holds(const subres *k, const vk_struct_info *s, int depth);

/* Whether S, not a subresource, holds one (a region's offset and extent
 * were walked into for each of mpv's copies). */
static bool holds_within(subres *k, const vk_struct_info *s)
{
	bool known;
	int16_t *v = memo(k->r, s, &known);
	if (!known)
		*v = holds(k, s, HOLDS_DEPTH);
	return *v;
}

/* TOP: the command's parameters, of which those in PARAMS (a bit each:
 * vkr_subres_reads) alone; else a struct's members. */
static void walk_fields(subres *k, const scope *sc, bool top, uint64_t params)
{
	for (uint32_t i = 0; i < sc->n; i++) {
		const vk_field *f = &sc->fields[i];
		const vk_struct_info *s = f->ref;
		if (top && !(params >> (i < 63 ? i : 63) & 1))
			continue;
		if (f->base != VK_B_STRUCT || !s || s->blob || (top && (f->flags & VK_F_OUT)) ||
		    f->ptr > 1)
			continue;
		bool one = s == k->range || s == k->layers || s == k->one;
		if (!one && !holds_within(k, s))
			continue;
		const uint8_t *p = sc->base + f->offset;
		uint64_t n = f->count ? f->count : 1;
		if (f->ptr) {
			memcpy(&p, sc->base + f->offset, sizeof(p));
			n = p ? vk_field_len(sc->fields, f, sc->base) : 0;
		}
		for (uint64_t j = 0; j < n; j++, p += s->size) {
			if (one) {
				check_one(k, f, s, p, sc);
				continue;
			}
			scope in = {s->fields, s->nfields, p, sc};
			walk_fields(k, &in, false, 0);
		}
	}
}

/* Whether S (a struct type) holds a subresource, within DEPTH levels. */
static bool holds(const subres *k, const vk_struct_info *s, int depth)
{
	if (s == k->range || s == k->layers || s == k->one)
		return true;
	if (!depth || s->blob)
		return false;
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		if (f->base == VK_B_STRUCT && f->ref && f->ptr <= 1 && holds(k, f->ref, depth - 1))
			return true;
	}
	return false;
}

static void subres_init(subres *k, vkr *r)
{
	k->r = r;
	k->range = r->s_range;
	k->layers = r->s_layers;
	k->one = r->s_one;
}

uint64_t vkr_subres_reads(vkr *r, const vk_command_info *cmd)
{
	subres k;
	subres_init(&k, r);
	uint64_t params = 0;
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		if (f->base == VK_B_STRUCT && f->ref && !(f->flags & VK_F_OUT) && f->ptr <= 1 &&
		    holds(&k, f->ref, HOLDS_DEPTH))
			params |= (uint64_t)1 << (i < 63 ? i : 63);  /* (63: the rest) */
	}
	return params;
}

void vkr_subres_check(vkr *r, const cmd_entry *e, void *args)
{
	subres k;
	subres_init(&k, r);
	scope top = {e->cmd->params, e->cmd->nparams, args, NULL};
	walk_fields(&k, &top, true, e->subres);
}
