/*
 * contents: the bytes the host wrote into a buffer or image (its
 * tracekit.update records), as extents over shared blocks, copied on
 * write so that a submit's view of them costs a reference; a sparse
 * update is merged with what they held into one extent per stretch.
 * What an update writes, objects bound over the same bytes of its memory
 * take too (alias.c).
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

void content_unref(content *c)
{
	if (!c || --c->refs)
		return;
	for (uint32_t i = 0; i < c->n; i++)
		block_unref(c->e[i].b);
	free(c->e);
	free(c);
}

content *content_ref(content *c)
{
	c->refs++;
	return c;
}

/* Whether extent B goes on from A, in the same block: one extent. */
static bool extent_joins(const extent *a, const extent *b)
{
	return a->b == b->b && a->off + a->len == b->off && a->boff + a->len == b->boff;
}

/* O's contents, its own to change (copied if a submit shares them): the
 * extents that content_append left one after another in a block, one
 * extent in the copy. */
static content *content_own(obj *o)
{
	content *c = o->cont;
	if (c && c->refs == 1)
		return c;
	content *n = trace_xcalloc(1, sizeof(*n));
	n->refs = 1;
	if (c) {
		n->cap = c->n + 4;
		n->e = trace_xmalloc(n->cap * sizeof(*n->e));
		for (uint32_t i = 0; i < c->n; i++) {
			if (n->n && extent_joins(&n->e[n->n - 1], &c->e[i])) {
				n->e[n->n - 1].len += c->e[i].len;
				continue;
			}
			n->e[n->n++] = c->e[i];
			c->e[i].b->refs++;
		}
		content_unref(c);
	}
	o->cont = n;
	return n;
}

static void content_push(content *c, extent e)
{
	c->e = array_grow(c->e, c->n, &c->cap, sizeof(*c->e), 4);
	c->e[c->n++] = e;
}

/*
 * What content_replace writes past the last extent of C, which submits
 * share: appended, the extents they see (the first of C's at the time)
 * left as they are, so that a write after a submit costs an extent, not
 * a copy of them all.  Bytes just after the last extent go on in its
 * block where they fit, as an extent of their own.
 */
static void content_append(content *c, uint64_t off, uint64_t len, const uint8_t *data,
			   const uint8_t *known)
{
	const extent *left = &c->e[c->n - 1];
	block *lb = left->b;
	if (!known && left->off + left->len == off && lb->used == left->boff + left->len) {
		if (lb->cap - lb->used >= len) {
			memcpy(lb->data + lb->used, data, len);
			lb->refs++;
			content_push(c, (extent){off, len, lb, lb->used});
			lb->used += len;
		} else {
			uint64_t room = left->len < BLOCK_ROOM_MOST / 2 ? 2 * left->len : BLOCK_ROOM_MOST;
			content_push(c, (extent){off, len, block_new(data, len, room > len ? room : len), 0});
		}
		return;
	}
	block *b = block_new(data, len, len);
	for (uint64_t x = 0; x < len;) {
		if (known && !known[x]) {
			x++;
			continue;
		}
		uint64_t y = known ? x + 1 : len;
		while (y < len && known[y])
			y++;
		b->refs++;
		content_push(c, (extent){off + x, y - x, b, x});
		x = y;
	}
	block_unref(b);
}

/*
 * The bytes [OFF, OFF + LEN) of DATA into O's contents, those KNOWN marks
 * (NULL: all), as one block: one extent per stretch of marked bytes; the
 * extents there before go (a sparse update's caller read them into DATA
 * first).  One pass over the extents, however many stretches.  A write
 * just after an extent goes on in its block where it has room, or in a
 * new one with room for twice that extent: a ring of small updates, a
 * submit reading each (Pingus: 32,768 of 32 bytes into a 1 MiB vertex
 * buffer, each bound by its own draw), is a few extents, so a submit's
 * view of them, which the next write copies, stays a few too.
 */
static void content_replace(obj *o, uint64_t off, uint64_t len, const uint8_t *data,
			    const uint8_t *known)
{
	if (!len)
		return;
	size_t stretches = 1;
	if (known) {
		stretches = 0;
		for (uint64_t i = 0; i < len; i++)
			if (known[i] && (i == 0 || !known[i - 1]))
				stretches++;
		if (stretches == 1 && known[0] && known[len - 1])
			known = NULL;  /* all of it: a copy from an alias */
	}
	content *c = o->cont;
	if (c && c->refs > 1 && c->n && c->e[c->n - 1].off + c->e[c->n - 1].len <= off) {
		content_append(c, off, len, data, known);
		return;
	}
	c = content_own(o);
	uint64_t end = off + len;
	/* the extents before, the pieces left of those it overlaps, the new
	 * ones, the pieces right of them, the extents after */
	extent *out = trace_xmalloc((c->n + 2 + stretches) * sizeof(*out));
	uint32_t k = 0, i = 0;
	for (; i < c->n && c->e[i].off + c->e[i].len <= off; i++)
		out[k++] = c->e[i];
	extent right = {0};
	for (; i < c->n && c->e[i].off < end; i++) {
		extent e = c->e[i];
		if (e.off < off) {
			extent l = e;
			l.len = off - e.off;
			l.b->refs++;
			out[k++] = l;
		}
		if (e.off + e.len > end) {
			right = e;
			right.boff += end - e.off;
			right.len = e.off + e.len - end;
			right.off = end;
			right.b->refs++;
		}
		block_unref(e.b);
	}
	extent *left = k ? &out[k - 1] : NULL;
	if (!known && left && left->off + left->len == off &&
	    left->b->used == left->boff + left->len) {
		/* just after an extent that ends where its block's bytes do */
		block *lb = left->b;
		if (lb->cap - lb->used >= len) {
			memcpy(lb->data + lb->used, data, len);
			lb->used += len;
			left->len += len;
		} else {
			uint64_t room = left->len < BLOCK_ROOM_MOST / 2 ? 2 * left->len : BLOCK_ROOM_MOST;
			block *b = block_new(data, len, room > len ? room : len);
			out[k++] = (extent){off, len, b, 0};
		}
	} else {
		block *b = block_new(data, len, len);
		for (uint64_t x = 0; x < len;) {
			if (known && !known[x]) {
				x++;
				continue;
			}
			uint64_t y = known ? x + 1 : len;
			while (y < len && known[y])
				y++;
			b->refs++;
			out[k++] = (extent){off + x, y - x, b, x};
			x = y;
		}
		block_unref(b);  /* its extents hold it */
	}
	if (right.b)
		out[k++] = right;
	uint32_t rest = c->n - i;
	if (rest)
		memcpy(out + k, c->e + i, rest * sizeof(*out));
	free(c->e);
	c->cap = c->n + 2 + (uint32_t)stretches;
	c->e = out;
	c->n = k + rest;
}

static void content_write(obj *o, uint64_t off, const uint8_t *data, uint64_t len)
{
	content_replace(o, off, len, data, NULL);
}

/* The bytes of O's contents over [OFF, OFF + LEN) into BUF, KNOWN[i] set
 * for each byte it holds. */
static void content_read(const obj *o, uint64_t off, uint64_t len, uint8_t *buf, uint8_t *known)
{
	const content *c = o->cont;
	uint64_t end = off + len;
	for (uint32_t i = 0; c && i < c->n; i++) {
		const extent *e = &c->e[i];
		if (e->off + e->len <= off || e->off >= end)
			continue;
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
	for (uint32_t i = 0; o->cont && i < o->cont->n; i++) {
		const extent *e = &o->cont->e[i];
		if (e->off < off + len && e->off + e->len > off)
			return true;
	}
	return false;
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
	for (uint32_t i = 0; from->cont && i <= from->cont->n; i++) {
		const extent *e = i < from->cont->n ? &from->cont->e[i] : NULL;
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
