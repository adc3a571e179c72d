/*
 * vkformat: the formats that hold another's texels as they are (see
 * vkformat.h).
 */
#include "vkformat.h"

#include <string.h>

const vk_format_layout *vk_format_layout_of(int32_t format)
{
	uint32_t lo = 0, hi = vk_nformat_layouts;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (vk_format_layouts[mid].format < format)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < vk_nformat_layouts && vk_format_layouts[lo].format == format
		       ? &vk_format_layouts[lo] : NULL;
}

/* Whether A's channel names are B's in another order (or the same). */
static bool same_channels(const vk_format_layout *a, const vk_format_layout *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (!memchr(b->chan, a->chan[i], b->n))
			return false;
	return true;
}

/* Channel C's place in F, or -1. */
static int place(const vk_format_layout *f, char c)
{
	const char *p = memchr(f->chan, c, f->n);
	return p ? (int)(p - f->chan) : -1;
}

/* Whether every value of channel I of F is one of channel J of G, the
 * same number: the same numeric format, in as many bits or in more
 * that hold each value exactly (a 4-bit UNORM's k/15 is 8-bit's 17k/255;
 * integers and floats widen as they are). */
static bool holds(const vk_format_layout *f, int i, const vk_format_layout *g, int j)
{
	if (strcmp(f->numeric[i], g->numeric[j]))
		return false;
	if (f->bits[i] == g->bits[j])
		return true;
	if (g->bits[j] < f->bits[i])
		return false;
	const char *n = f->numeric[i];
	if (!strcmp(n, "UNORM"))
		return g->bits[j] % f->bits[i] == 0;
	return !strcmp(n, "UINT") || !strcmp(n, "SINT") || !strcmp(n, "SFLOAT");
}

/* Whether G holds every texel of F: the same channels, each as holds()
 * says; true for F itself. */
static bool widens(const vk_format_layout *f, const vk_format_layout *g)
{
	if (!same_channels(f, g))
		return false;
	for (int i = 0; i < f->n; i++)
		if (!holds(f, i, g, place(g, f->chan[i])))
			return false;
	return true;
}

uint32_t vk_format_substitutes(int32_t format, int32_t *out, uint32_t max)
{
	const vk_format_layout *f = vk_format_layout_of(format);
	uint32_t n = 0;
	/* each channel in as many bits first, then in more, by size */
	for (int pass = 0; f && pass < 2; pass++)
		for (uint32_t size = f->block_size; size <= (pass ? 16u : f->block_size); size++)
			for (uint32_t i = 0; i < vk_nformat_layouts; i++) {
				const vk_format_layout *g = &vk_format_layouts[i];
				if (g == f || g->block_size != size || !widens(f, g) ||
				    widens(g, f) == (pass == 1))
					continue;
				if (n < max)
					out[n++] = g->format;
			}
	return n;
}

bool vk_format_same_bits(int32_t a, int32_t b)
{
	const vk_format_layout *fa = vk_format_layout_of(a), *fb = vk_format_layout_of(b);
	return fa && fb && widens(fa, fb) && widens(fb, fa);
}

/* Where channel I of F lies in a texel's bits, counted from the least
 * significant of its first byte: a packed word lists its channels from
 * the most significant bit down, the others from the first byte up. */
static uint32_t bit_at(const vk_format_layout *f, int i)
{
	uint32_t before = 0;
	for (int j = 0; j < i; j++)
		before += f->bits[j];
	return f->packed ? f->packed - before - f->bits[i] : before;
}

/* Whether A and B put each channel in the same bits (whatever their
 * numeric formats): R8G8B8A8 and A8B8G8R8_PACK32 do, B8G8R8A8 does not. */
static bool same_places(const vk_format_layout *a, const vk_format_layout *b)
{
	if (a->block_size != b->block_size || !same_channels(a, b))
		return false;
	for (int i = 0; i < a->n; i++) {
		int j = place(b, a->chan[i]);
		if (a->bits[i] != b->bits[j] || bit_at(a, i) != bit_at(b, j))
			return false;
	}
	return true;
}

bool vk_format_same_places(int32_t a, int32_t b)
{
	const vk_format_layout *fa = vk_format_layout_of(a), *fb = vk_format_layout_of(b);
	return fa && fb && same_places(fa, fb);
}

int32_t vk_format_view_rename(int32_t v, int32_t from, int32_t to)
{
	const vk_format_layout *fv = vk_format_layout_of(v), *ff = vk_format_layout_of(from),
			       *ft = vk_format_layout_of(to);
	if (!fv || !ff || !ft || !same_places(fv, ff))
		return v;
	/* TO's channels in TO's bits, each of V's numeric format */
	for (uint32_t i = 0; i < vk_nformat_layouts; i++) {
		const vk_format_layout *g = &vk_format_layouts[i];
		bool ok = g->packed == ft->packed && same_places(g, ft);
		for (int j = 0; ok && j < g->n; j++)
			ok = !strcmp(g->numeric[j], fv->numeric[place(fv, g->chan[j])]);
		if (ok)
			return g->format;
	}
	return -1;
}

const char *vk_format_name(int32_t format)
{
	const vk_enum_info *e = vk_enum_lookup("VkFormat");
	const char *n = e ? trace_enum_name(&e->sig, format) : NULL;
	return n ? n : "VkFormat";
}
