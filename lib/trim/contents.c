/*
 * contents: the bytes the host wrote into a buffer or image (its
 * tracekit.update records), as extents over shared blocks, in windows of
 * 64 KiB of the object's bytes, copied on write so that a submit's view
 * of them costs a reference and a write after it copies the window list
 * and the windows written; a sparse update is merged with what they held
 * into one extent per stretch.  What an update writes, objects bound over
 * the same bytes of its memory take too (alias.c).
 */
#include "trim_internal.h"

/* What a block made for a write just after another grows by at most. */
#define BLOCK_ROOM_MOST ((uint64_t)4 << 20)

/* A block of LEN bytes of DATA with room for CAP, one reference. */
static block *block_new(const uint8_t *data, uint64_t len, uint64_t cap)
{
	block *b = trace_xmalloc(sizeof(*b) + cap);
	b->refs = 1;
	b->used = len;
	b->cap = cap;
	memcpy(b->data, data, len);
	return b;
}

static void block_unref(block *b)
{
	if (b && !--b->refs)
		free(b);
}

/* The first byte past window KEY's (saturating at the last window). */
static uint64_t win_end(uint64_t key)
{
	return key >= UINT64_MAX >> WIN_SHIFT ? UINT64_MAX : (key + 1) << WIN_SHIFT;
}

static void win_unref(win *w)
{
	if (--w->refs)
		return;
	for (uint32_t i = 0; i < w->n; i++)
		block_unref(w->e[i].b);
	free(w->e);
	free(w);
}

void content_unref(content *c)
{
	if (!c || --c->refs)
		return;
	for (uint32_t i = 0; i < c->n; i++)
		win_unref(c->w[i]);
	free(c->w);
	free(c);
}

content *content_ref(content *c)
{
	c->refs++;
	return c;
}

/* O's contents, its own to change: a submit's view shares the window
 * list, so a write copies that (the windows it writes, win_own). */
static content *content_own(obj *o)
{
	content *c = o->cont;
	if (c && c->refs == 1)
		return c;
	content *n = trace_xcalloc(1, sizeof(*n));
	n->refs = 1;
	if (c) {
		n->cap = n->n = c->n;
		n->w = trace_xmalloc((n->cap ? n->cap : 1) * sizeof(*n->w));
		memcpy(n->w, c->w, c->n * sizeof(*n->w));
		for (uint32_t i = 0; i < n->n; i++)
			n->w[i]->refs++;
		content_unref(c);
	}
	o->cont = n;
	return n;
}

/* The index of C's first window whose key is at least KEY. */
static uint32_t win_find(const content *c, uint64_t key)
{
	uint32_t lo = 0, hi = c ? c->n : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->w[mid]->key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index of W's first extent that ends past OFF. */
static uint32_t ext_find(const win *w, uint64_t off)
{
	uint32_t lo = 0, hi = w->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (w->e[mid].off + w->e[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A walk over C's extents from the first that ends past OFF. */
static ext_iter ext_seek(const content *c, uint64_t off)
{
	ext_iter it = {c, win_find(c, off >> WIN_SHIFT), 0};
	if (c && it.w < c->n && c->w[it.w]->key == off >> WIN_SHIFT)
		it.i = ext_find(c->w[it.w], off);
	return it;
}

/* Window KEY of C (its own), its own to change: made, or copied if a
 * view shares it. */
static win *win_own(content *c, uint64_t key)
{
	uint32_t i = win_find(c, key);
	if (i < c->n && c->w[i]->key == key) {
		win *w = c->w[i];
		if (w->refs == 1)
			return w;
		win *n = trace_xcalloc(1, sizeof(*n));
		n->refs = 1;
		n->key = key;
		n->cap = w->n + 4;
		n->e = trace_xmalloc(n->cap * sizeof(*n->e));
		memcpy(n->e, w->e, w->n * sizeof(*n->e));
		n->n = w->n;
		for (uint32_t k = 0; k < n->n; k++)
			n->e[k].b->refs++;
		win_unref(w);
		c->w[i] = n;
		return n;
	}
	c->w = array_grow(c->w, c->n, &c->cap, sizeof(*c->w), 4);
	memmove(c->w + i + 1, c->w + i, (c->n - i) * sizeof(*c->w));
	c->n++;
	win *n = trace_xcalloc(1, sizeof(*n));
	n->refs = 1;
	n->key = key;
	c->w[i] = n;
	return n;
}

/* The extent of C that ends at OFF, NULL if none does. */
static const extent *extent_ending(const content *c, uint64_t off)
{
	if (!c || !off)
		return NULL;
	uint64_t key = (off - 1) >> WIN_SHIFT;
	uint32_t i = win_find(c, key);
	if (i == c->n || c->w[i]->key != key)
		return NULL;
	const win *w = c->w[i];
	uint32_t k = ext_find(w, off - 1);
	return k < w->n && w->e[k].off + w->e[k].len == off ? &w->e[k] : NULL;
}

/* The first byte of KNOWN from I on (up to N) that is marked, or that is
 * not: a sparse update of a large buffer marks a few words of megabytes,
 * so the walks go eight bytes at a time, or by memchr. */
static uint64_t next_known(const uint8_t *known, uint64_t i, uint64_t n)
{
	for (; i < n && (i & 7); i++)
		if (known[i])
			return i;
	for (uint64_t word; i + 8 <= n; i += 8) {
		memcpy(&word, known + i, 8);
		if (word)
			break;
	}
	while (i < n && !known[i])
		i++;
	return i;
}

static uint64_t next_unknown(const uint8_t *known, uint64_t i, uint64_t n)
{
	const uint8_t *z = i < n ? memchr(known + i, 0, n - i) : NULL;
	return z ? (uint64_t)(z - known) : n;
}

/*
 * [LO, HI) of window W, those bytes KNOWN marks (NULL: all), made the
 * bytes of block B from BOFF on: the extents there go, and those the
 * stretches make come in, the first joined to the one before it where
 * they go on in one block.
 */
static void win_replace(win *w, uint64_t lo, uint64_t hi, block *b, uint64_t boff,
			const uint8_t *known)
{
	uint64_t len = hi - lo;
	size_t stretches = 1;
	if (known) {
		stretches = 0;
		for (uint64_t i = next_known(known, 0, len); i < len;
		     i = next_known(known, next_unknown(known, i, len), len))
			stretches++;
	}
	/* the extents before, the pieces left of those it overlaps, the new
	 * ones, the pieces right of them, the extents after */
	extent *out = trace_xmalloc((w->n + 2 + stretches) * sizeof(*out));
	uint32_t i = ext_find(w, lo), k = i;
	if (i)
		memcpy(out, w->e, i * sizeof(*out));
	extent right = {0};
	for (; i < w->n && w->e[i].off < hi; i++) {
		extent e = w->e[i];
		if (e.off < lo) {
			extent l = e;
			l.len = lo - e.off;
			l.b->refs++;
			out[k++] = l;
		}
		if (e.off + e.len > hi) {
			right = e;
			right.boff += hi - e.off;
			right.len = e.off + e.len - hi;
			right.off = hi;
			right.b->refs++;
		}
		block_unref(e.b);
	}
	for (uint64_t x = known ? next_known(known, 0, len) : 0; x < len;) {
		uint64_t y = known ? next_unknown(known, x, len) : len;
		extent n = {lo + x, y - x, b, boff + x};
		if (k && extent_joins(&out[k - 1], &n)) {
			out[k - 1].len += n.len;
		} else {
			b->refs++;
			out[k++] = n;
		}
		x = known ? next_known(known, y, len) : y;
	}
	if (right.b)
		out[k++] = right;
	uint32_t rest = w->n - i;
	if (rest)
		memcpy(out + k, w->e + i, rest * sizeof(*out));
	free(w->e);
	w->cap = w->n + 2 + (uint32_t)stretches;
	w->e = out;
	w->n = k + rest;
}

/*
 * The bytes [OFF, OFF + LEN) of DATA into O's contents, those KNOWN marks
 * (NULL: all), as one block: one extent per stretch of marked bytes in
 * each window; the extents there before go (a sparse update's caller
 * read them into DATA first).  A write just after an extent goes on in
 * its block where it has room, or in a new one with room for twice that
 * extent: a ring of small updates (Pingus: 32-byte ones into a 1 MiB
 * vertex buffer, each bound by a draw of its own) stays a few extents.
 */
static void content_replace(obj *o, uint64_t off, uint64_t len, const uint8_t *data,
			    const uint8_t *known)
{
	if (!len)
		return;
	if (known && next_unknown(known, 0, len) == len)
		known = NULL;  /* all of it: a copy from an alias */
	uint64_t end = off + len < off ? UINT64_MAX : off + len;
	len = end - off;
	const extent *left = known ? NULL : extent_ending(o->cont, off);
	block *b;
	uint64_t boff = 0;
	if (left && left->b->used == left->boff + left->len) {
		/* just after an extent that ends where its block's bytes do */
		b = left->b;
		if (b->cap - b->used >= len) {
			boff = b->used;
			memcpy(b->data + boff, data, len);
			b->used += len;
			b->refs++;
		} else {
			uint64_t room = left->len < BLOCK_ROOM_MOST / 2 ? 2 * left->len : BLOCK_ROOM_MOST;
			b = block_new(data, len, room > len ? room : len);
		}
	} else {
		b = block_new(data, len, len);
	}
	content *c = content_own(o);
	for (uint64_t key = off >> WIN_SHIFT; key <= (end - 1) >> WIN_SHIFT; key++) {
		uint64_t lo = key << WIN_SHIFT > off ? key << WIN_SHIFT : off;
		uint64_t hi = win_end(key) < end ? win_end(key) : end;
		if (known) {
			/* none of it known: no window made for it */
			if (next_known(known + (lo - off), 0, hi - lo) == hi - lo)
				continue;
		}
		win_replace(win_own(c, key), lo, hi, b, boff + (lo - off),
			    known ? known + (lo - off) : NULL);
		if (key == UINT64_MAX >> WIN_SHIFT)
			break;
	}
	block_unref(b);  /* its extents hold it */
}

static void content_write(obj *o, uint64_t off, const uint8_t *data, uint64_t len)
{
	content_replace(o, off, len, data, NULL);
}

/* The bytes of O's contents over [OFF, OFF + LEN) into BUF, KNOWN[i] set
 * for each byte it holds. */
static void content_read(const obj *o, uint64_t off, uint64_t len, uint8_t *buf, uint8_t *known)
{
	uint64_t end = off + len;
	const extent *e;
	for (ext_iter it = ext_seek(o->cont, off); (e = ext_at(&it)) && e->off < end; ext_next(&it)) {
		uint64_t a = e->off > off ? e->off : off;
		uint64_t b = e->off + e->len < end ? e->off + e->len : end;
		memcpy(buf + (a - off), e->b->data + e->boff + (a - e->off), b - a);
		memset(known + (a - off), 1, b - a);
	}
}

typedef struct scatter {
	uint64_t off;
	uint8_t *buf, *known;
} scatter;

static void scatter_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	const scatter *x = ctx;
	memcpy(x->buf + (off - x->off), data, len);
	memset(x->known + (off - x->off), 1, len);
}

/*
 * U into O's contents.  A sparse update writes a word here and there: it
 * is merged with what the contents held over its span and written as one
 * extent (one per stretch of bytes known after it), in one pass: not as a
 * content_write per run of words, thousands a frame where a buffer's
 * every vertex changes one member, each copying the extent list.
 */
static void content_update(obj *o, const vk_update *u)
{
	if (!u->mask) {
		content_write(o, u->offset, u->data, u->len);
		return;
	}
	uint64_t len = u->end - u->offset;
	if (!len)
		return;
	scatter x = { u->offset, trace_xmalloc(len), trace_xcalloc(len, 1) };
	content_read(o, u->offset, len, x.buf, x.known);
	vk_update_runs(u, scatter_run, &x);
	content_replace(o, u->offset, len, x.buf, x.known);
	free(x.buf);
	free(x.known);
}

/* Whether O's contents hold any of [OFF, OFF + LEN). */
static bool content_holds(const obj *o, uint64_t off, uint64_t len)
{
	ext_iter it = ext_seek(o->cont, off);
	const extent *e = ext_at(&it);
	return e && e->off < off + len;
}

/* The LEN bytes of FROM's contents at FROM_OFF, those it holds, into
 * TO's at TO_OFF, over what TO held there: merged as a sparse update is,
 * so that the bytes FROM lacks keep what TO had. */
static void copy_span(obj *to, uint64_t to_off, const obj *from, uint64_t from_off, uint64_t len)
{
	uint8_t *buf = trace_xmalloc(len), *known = trace_xcalloc(len, 1);
	content_read(to, to_off, len, buf, known);
	content_read(from, from_off, len, buf, known);
	content_replace(to, to_off, len, buf, known);
	free(buf);
	free(known);
}

void content_copy(obj *to, uint64_t to_off, const obj *from, uint64_t from_off, uint64_t len)
{
	if (!len || !content_holds(from, from_off, len))
		return;
	/* over what FROM holds there, in pieces of at most COPY_SPAN bytes
	 * (an edited size made the overlap of two objects a terabyte), each
	 * as many of its sorted extents as fit: one piece, as a whole copy
	 * was, for what a real trace shares */
	enum { COPY_SPAN = 16 << 20 };
	uint64_t end = from_off + len < from_off ? UINT64_MAX : from_off + len;
	uint64_t lo = 0, hi = 0;
	for (ext_iter it = ext_seek(from->cont, from_off);; ext_next(&it)) {
		const extent *e = ext_at(&it);
		if (e && e->off >= end)
			e = NULL;
		uint64_t a = e ? (e->off > from_off ? e->off : from_off) : 0;
		uint64_t b = e ? (e->off + e->len < end ? e->off + e->len : end) : 0;
		if (e && a >= b)
			continue;
		if (hi > lo && (!e || b - lo > COPY_SPAN)) {
			copy_span(to, to_off + (lo - from_off), from, lo, hi - lo);
			hi = lo;
		}
		if (!e)
			break;
		if (hi == lo)
			lo = a;
		hi = b;
	}
}

/* A tracekit.update into U, and the buffer or image it writes into *O
 * (NULL: neither is alive); -1 if it does not read. */
int content_update_read(trim *t, const trace_call *c, vk_update *u, obj **o)
{
	if (vk_update_read(c, u, t->err) < 0)
		return -1;
	*o = obj_lookup(t, trim_types.buffer, u->object);
	if (!*o)
		*o = obj_lookup(t, trim_types.image, u->object);
	return 0;
}

int content_track(trim *t, const trace_call *c)
{
	vk_update u;
	obj *o;
	if (content_update_read(t, c, &u, &o) < 0)
		return -1;
	if (o) {
		content_update(o, &u);
		alias_spread(o, u.offset, u.end);
	}
	return 0;
}
