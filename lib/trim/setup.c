/*
 * setup: writing the setup prefix, between tracekit.setup.begin and
 * tracekit.setup.end: the closure's records in the trace's order; its
 * submits run one at a time, without their semaphores and fences, after
 * the contents they read and the layouts they expect; then the contents
 * and layouts as the range found them, fences and timeline semaphores
 * created in the state they had, events set or reset as they were, and
 * the binary semaphores left signaled signaled by a submit of the
 * setup's own.
 */
#include "trim_internal.h"

#include <inttypes.h>

/* The setup being written, and where. */
typedef struct out {
	trim *t;
	trace_writer *w;
	uint64_t *no;
	trim_stats *st;
	trace_error *err;
	trace_arena arena;
	trace_call call;       /* a kept record, unpacked */
	obj *queue;            /* of the last submit written */
	uint32_t thread;
	vec changed;           /* obj*: images with layout changes waiting (from) */
	const closure *cl;     /* what the setup makes (its queues) */
	VkImageMemoryBarrier *bar;  /* those changes as barriers */
	uint32_t nbar, capbar;
} out;

static int put(out *o, trace_call *c)
{
	c->no = (*o->no)++;
	o->st->records++;
	return trace_writer_call(o->w, c, o->err);
}

static int put_pseudo(out *o, const char *name)
{
	trace_call c;
	trace_call_init(&c);
	c.sig = trace_sigtab_func(o->t->sigs, name, 0, NULL);
	c.args = NULL;
	int rc = put(o, &c);
	trace_call_free(&c);
	return rc;
}

static const trace_func_sig *update_sig(out *o, const trace_func_sig *sig)
{
	return trace_sigtab_func(o->t->sigs, sig->name, sig->nargs,
				 (const char *const *)sig->arg_names);
}

/* A stretch of X's bytes to write: LEN at OFF, from DATA. */
typedef struct piece {
	uint64_t off, len;
	const uint8_t *data;
} piece;

typedef struct pieces {
	piece *v;
	uint32_t n, cap;
} pieces;

/* The bytes [OFF, OFF + LEN) of DATA that ALLOW (NULL: all) lets by, onto
 * P, joined to the piece before where they follow it. */
static void add_piece(pieces *p, uint64_t off, uint64_t len, const uint8_t *data,
		      const spans *allow)
{
	span all = {0, UINT64_MAX};
	const span *v = allow ? allow->v : &all;
	uint32_t n = allow ? allow->n : 1;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].end <= off || v[i].off >= off + len)
			continue;
		uint64_t a = v[i].off > off ? v[i].off : off;
		uint64_t b = v[i].end < off + len ? v[i].end : off + len;
		p->v = array_grow(p->v, p->n, &p->cap, sizeof(*p->v), 16);
		p->v[p->n++] = (piece){a, b - a, data + (a - off)};
	}
}

/* A gap of unwritten bytes a sparse update spans rather than end: its
 * mask costs a bit a word, a record of its own some 40 bytes. */
enum { SPARSE_GAP = 1024 };

/* Pieces P[I..] that one sparse update can write: each a whole number of
 * words at a whole number of words from the first, gaps under
 * SPARSE_GAP; how many (1: write P[I] plain). */
static uint32_t sparse_run(const piece *p, uint32_t n, uint32_t i)
{
	uint32_t k = i;
	while (k < n && (p[k].off - p[i].off) % 4 == 0 && p[k].len % 4 == 0 &&
	       (k == i || p[k].off - (p[k - 1].off + p[k - 1].len) <= SPARSE_GAP))
		k++;
	return k - i > 1 ? k - i : 1;
}

/* P[0..N) as one update of X: plain if one piece, else sparse (a mask of
 * the words written from the first piece's offset, and those words). */
static int put_pieces(out *o, const obj *x, const piece *p, uint32_t n)
{
	uint64_t off = p[0].off, reach = p[n - 1].off + p[n - 1].len - off, bytes = 0;
	for (uint32_t i = 0; i < n; i++)
		bytes += p[i].len;
	uint8_t *data = trace_xmalloc(bytes ? bytes : 1), *mask = NULL;
	uint32_t masklen = (uint32_t)((reach / 4 + 7) / 8);
	if (n > 1)
		mask = trace_xcalloc(masklen, 1);
	uint64_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(data + at, p[i].data, p[i].len);
		at += p[i].len;
		for (uint64_t w = (p[i].off - off) / 4; mask && w < (p[i].off + p[i].len - off) / 4; w++)
			mask[w / 8] |= (uint8_t)(1u << (w % 8));
	}
	trace_call c;
	trace_call_init(&c);
	c.sig = update_sig(o, mask ? &vk_update_sparse_sig : &vk_update_sig);
	c.args = trace_call_values(&c, mask ? 4 : 3);
	c.args[0] = (trace_value){.kind = TRACE_POINTER, .u = x->handle};
	c.args[1] = (trace_value){.kind = TRACE_UINT, .u = off};
	if (mask)
		c.args[2] = (trace_value){.kind = TRACE_BLOB, .len = masklen, .blob = mask};
	c.args[mask ? 3 : 2] = (trace_value){.kind = TRACE_BLOB, .len = (uint32_t)bytes,
					     .blob = data};
	o->st->updates++;
	o->st->update_bytes += bytes;
	int rc = put(o, &c);
	trace_call_free(&c);
	free(data);
	free(mask);
	return rc;
}

/* Equal bytes shorter than this, between bytes that changed, are written
 * again with them: a piece costs its array entry, and sparse updates
 * take words. */
enum { SAME_LEAST = 8 };

/*
 * The bytes of extent E (of the contents the setup writes now) that the
 * extents of FROM (what it wrote last) from *J on do not hold as they
 * are, onto P through ALLOW: the stretches of equal bytes, whole words
 * from E's start, left out.  A sparse update rewrites its whole span as
 * one extent (contents.c), so an extent new since FROM is mostly old
 * bytes where the program changes a little of a large buffer each frame:
 * foobillardplus' 1 MiB vertex buffer, 11 KiB a frame, was written whole
 * before each of 77 submits a cut ran again (78 MB of update bytes in a
 * 74 MB cut).
 */
static void add_changed(pieces *p, const extent *e, ext_iter *j, const spans *allow)
{
	uint64_t eo = e->off, ee = e->off + e->len, open = eo;
	const uint8_t *d = e->b->data + e->boff;
	const extent *f;
	while ((f = ext_at(j)) && f->off + f->len <= eo)
		ext_next(j);
	for (ext_iter k = *j; (f = ext_at(&k)) && f->off < ee;) {
		/* FROM's pieces a window's edge cut, one extent again */
		extent g = *f;
		for (ext_next(&k); (f = ext_at(&k)) && extent_joins(&g, f); ext_next(&k))
			g.len += f->len;
		f = &g;
		uint64_t a = f->off > eo ? f->off : eo;
		uint64_t b = f->off + f->len < ee ? f->off + f->len : ee;
		const uint8_t *fd = f->b->data + f->boff + (a - f->off);
		if (f->b == e->b && f->off - f->boff == eo - e->boff) {
			/* the same bytes of one block: equal, unread (a ring's
			 * extent grown since, its old part) */
			uint64_t lo = eo + ((a - eo + 3) & ~(uint64_t)3);
			uint64_t hi = eo + ((b - eo) & ~(uint64_t)3);
			if (hi >= lo + SAME_LEAST) {
				if (lo > open)
					add_piece(p, open, lo - open, d + (open - eo), allow);
				open = hi;
			}
			continue;
		}
		for (uint64_t x = a; x < b;) {
			while (x < b && d[x - eo] != fd[x - a])
				x++;
			uint64_t same = x;
			while (x < b && d[x - eo] == fd[x - a])
				x++;
			/* whole words from E's first byte, as sparse updates take them */
			uint64_t lo = eo + ((same - eo + 3) & ~(uint64_t)3);
			uint64_t hi = eo + ((x - eo) & ~(uint64_t)3);
			if (hi < lo + SAME_LEAST)
				continue;
			if (lo > open)
				add_piece(p, open, lo - open, d + (open - eo), allow);
			open = hi;
		}
	}
	if (ee > open)
		add_piece(p, open, ee - open, d + (open - eo), allow);
}

/* The bytes of TO that FROM lacks, the bytes ALLOW (NULL: all) lets by,
 * as few updates of X as they make: adjacent extents as one stretch, and
 * stretches a word apart (a vertex member here and there) as one sparse
 * update, never one record per captured update. */
static int put_contents(out *o, obj *x, const content *to, const content *from,
			const spans *allow)
{
	if (!to || to == from)
		return 0;
	pieces p = {0};
	ext_iter j = {from, 0, 0}, over = j;  /* FROM's extents at E, over E */
	const extent *e, *f;
	for (ext_iter i = {to, 0, 0}; (e = ext_at(&i));) {
		/* the pieces a window's edge cut, one extent again: equal runs
		 * across the edge are left out whole */
		extent m = *e;
		bool same = true;
		do {
			while ((f = ext_at(&j)) && f->off < e->off)
				ext_next(&j);
			same = same && f && !memcmp(f, e, sizeof(*e));
			if (e->off != m.off)
				m.len += e->len;
			ext_next(&i);
		} while ((e = ext_at(&i)) && extent_joins(&m, e));
		if (!same)
			add_changed(&p, &m, &over, allow);
	}
	/* adjacent pieces as one stretch, copied together */
	pieces joined = {0};
	uint8_t **bufs = NULL;
	uint32_t nbufs = 0, capbufs = 0;
	for (uint32_t i = 0, k; i < p.n; i = k) {
		uint64_t len = p.v[i].len;
		for (k = i + 1; k < p.n && p.v[k].off == p.v[k - 1].off + p.v[k - 1].len; k++)
			len += p.v[k].len;
		const uint8_t *data = p.v[i].data;
		if (k - i > 1) {
			uint8_t *buf = trace_xmalloc(len);
			for (uint32_t m = i; m < k; m++)
				memcpy(buf + (p.v[m].off - p.v[i].off), p.v[m].data, p.v[m].len);
			bufs = array_grow(bufs, nbufs, &capbufs, sizeof(*bufs), 8);
			bufs[nbufs++] = buf;
			data = buf;
		}
		joined.v = array_grow(joined.v, joined.n, &joined.cap, sizeof(*joined.v), 16);
		joined.v[joined.n++] = (piece){p.v[i].off, len, data};
	}
	int rc = 0;
	for (uint32_t i = 0, k; rc == 0 && i < joined.n; i += k) {
		k = sparse_run(joined.v, joined.n, i);
		rc = put_pieces(o, x, joined.v + i, k);
	}
	for (uint32_t i = 0; i < nbufs; i++)
		free(bufs[i]);
	free(bufs);
	free(joined.v);
	free(p.v);
	return rc;
}

static int put_encoded(out *o, const vk_command_info *cmd, const void *args)
{
	trace_call c;
	trace_call_init(&c);
	vk_encode_call(cmd, &c, args);
	c.thread = o->thread;
	int rc = put(o, &c);
	trace_call_free(&c);
	return rc;
}

/* Subresource I of image X goes from the layout the setup left it in to
 * LAYOUT, unless a change waiting to be written moves it already. */
static void want_layout(out *o, obj *x, uint32_t i, int32_t layout)
{
	if (layout == VK_IMAGE_LAYOUT_UNDEFINED || layout < 0 || x->sim[i] == layout ||
	    x->from[i] != NO_CHANGE)
		return;
	if (!vec_has(&o->changed, x))
		vec_push(&o->changed, x);
	x->from[i] = x->sim[i];
	x->sim[i] = layout;
}

/* Every subresource of X to what LAYOUT (x->nsub of them) says. */
static void want_layouts(out *o, obj *x, const int32_t *layout)
{
	for (uint32_t i = 0; i < x->nsub; i++)
		want_layout(o, x, i, layout[i]);
}

/* Whether subresource I of image X changes from the same layout to the
 * same layout as subresource K. */
static bool same_change(const obj *x, uint32_t i, uint32_t k)
{
	return x->from[i] != NO_CHANGE && x->from[i] == x->from[k] && x->sim[i] == x->sim[k];
}

static void put_barrier(out *o, obj *x, uint32_t level, uint32_t nlevels, uint32_t layer,
			uint32_t nlayers, int32_t from, int32_t to)
{
	o->bar = array_grow(o->bar, o->nbar, &o->capbar, sizeof(*o->bar), 8);
	o->bar[o->nbar++] = (VkImageMemoryBarrier){
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
		.oldLayout = (VkImageLayout)from,
		.newLayout = (VkImageLayout)to,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = (VkImage)(uintptr_t)x->handle,
		.subresourceRange = {x->aspect, level, nlevels, layer, nlayers},
	};
}

/* The changes waiting on image X as barriers, as few as the image's
 * layouts allow: a run of levels of one layer that change alike is one
 * barrier, and the same run of the layers after it that change alike
 * too joins it (a mipmap chain made level by level, left in
 * TRANSFER_SRC but for its last level in TRANSFER_DST, takes two). */
static void image_barriers(out *o, obj *x)
{
	for (uint32_t a = 0; a < x->layers; a++)
		for (uint32_t l = 0; l < x->levels; l++) {
			uint32_t i = image_sub(x, l, a);
			if (x->from[i] == NO_CHANGE)
				continue;
			uint32_t l1 = l + 1, a1 = a + 1;
			while (l1 < x->levels && same_change(x, image_sub(x, l1, a), i))
				l1++;
			for (bool alike = true; alike && a1 < x->layers; a1 += alike) {
				for (uint32_t m = l; m < l1 && alike; m++)
					alike = same_change(x, image_sub(x, m, a1), i);
			}
			put_barrier(o, x, l, l1 - l, a, a1 - a, x->from[i], x->sim[i]);
			for (uint32_t b = a; b < a1; b++)
				for (uint32_t m = l; m < l1; m++)
					x->from[image_sub(x, m, b)] = NO_CHANGE;
			l = l1 - 1;
		}
}

/* Whether a recording of submit S before its Kth uses subresource I of
 * image X: the Kth then finds it in the layout that one leaves, not in
 * one the setup gives it (zink's upload command buffer moves a texture
 * from VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL to ..._TRANSFER_DST_OPTIMAL,
 * the draws' command buffer after it in the same submit back). */
static bool laid_earlier(const submit *s, uint32_t k, const obj *x, uint32_t i)
{
	for (uint32_t j = 0; j < k; j++) {
		recording *r = s->recordings.v[j];
		for (uint32_t m = 0; m < r->nlays; m++)
			if (r->lays[m].o == x && lay_expect(&r->lays[m])[i] >= 0)
				return true;
	}
	return false;
}

/* The device of image X: the one its create or get named. */
static uint64_t image_device(const obj *x)
{
	for (uint32_t i = 0; i < x->deps.n; i++) {
		const obj *d = x->deps.v[i];
		if (d->h && d->h->dispatchable && !strcmp(d->h->name, "VkDevice"))
			return d->handle;
	}
	return 0;
}

/* A queue of the setup's on DEVICE: QUEUE if it is one, else the first
 * of the closure's (NULL: none). */
static obj *queue_on(out *o, obj *queue, uint64_t device)
{
	if (!queue || queue->device == device || !device)
		return queue;
	for (uint32_t i = 0; i < o->cl->objs.n; i++) {
		obj *q = o->cl->objs.v[i];
		if (q->alive && q->h == trim_types.queue && q->device == device)
			return q;
	}
	return NULL;
}

static int put_barriers(out *o, obj *queue);

/* The layout changes wanted, as command buffers of the setup's own, one
 * on each device whose images changed (Qt Quick's two windows each have
 * a device of their own: one device's barriers named the other's images):
 * on QUEUE, or a queue of the image's device; what the submits the setup
 * leaves out did to layouts. */
static int put_layouts(out *o, obj *queue)
{
	if (!o->changed.n || !queue)
		return 0;
	int rc = 0;
	while (o->changed.n && rc == 0) {
		uint64_t dev = image_device(o->changed.v[0]);
		uint32_t kept = 0;
		for (uint32_t i = 0; i < o->changed.n; i++) {
			obj *x = o->changed.v[i];
			if (image_device(x) == dev)
				image_barriers(o, x);
			else
				o->changed.v[kept++] = x;
		}
		o->changed.n = kept;
		obj *q = queue_on(o, queue, dev);
		if (q)
			rc = put_barriers(o, q);
		o->nbar = 0;
	}
	o->changed.n = 0;
	return rc;
}

/* A command buffer of the setup's own on QUEUE, begun: *CB, from *POOL. */
static int cb_open(out *o, obj *queue, VkCommandBuffer *cb, VkCommandPool *pool)
{
	trim *t = o->t;
	VkDevice dev = (VkDevice)(uintptr_t)queue->device;
	*pool = (VkCommandPool)(uintptr_t)(0x7ace000000000000ull + 2 * ++t->fake);
	*cb = (VkCommandBuffer)(uintptr_t)(0x7ace000000000001ull + 2 * t->fake);
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .queueFamilyIndex = queue->family};
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					  .commandPool = *pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					  .commandBufferCount = 1};
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	vk_args_vkCreateCommandPool a1 = {dev, &pci, NULL, pool, VK_SUCCESS};
	vk_args_vkAllocateCommandBuffers a2 = {dev, &ai, cb, VK_SUCCESS};
	vk_args_vkBeginCommandBuffer a3 = {*cb, &bi, VK_SUCCESS};
	int rc = put_encoded(o, &vk_cmd_vkCreateCommandPool, &a1);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkAllocateCommandBuffers, &a2);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkBeginCommandBuffer, &a3);
	return rc;
}

/* CB (of cb_open) ended, submitted on QUEUE and waited for; its POOL
 * destroyed. */
static int cb_close(out *o, obj *queue, VkCommandBuffer cb, VkCommandPool pool)
{
	VkDevice dev = (VkDevice)(uintptr_t)queue->device;
	VkQueue q = (VkQueue)(uintptr_t)queue->handle;
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
			   .pCommandBuffers = &cb};
	vk_args_vkEndCommandBuffer a5 = {cb, VK_SUCCESS};
	vk_args_vkQueueSubmit a6 = {q, 1, &si, VK_NULL_HANDLE, VK_SUCCESS};
	vk_args_vkQueueWaitIdle a7 = {q, VK_SUCCESS};
	vk_args_vkDestroyCommandPool a8 = {dev, pool, NULL};
	int rc = put_encoded(o, &vk_cmd_vkEndCommandBuffer, &a5);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkQueueSubmit, &a6);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkQueueWaitIdle, &a7);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkDestroyCommandPool, &a8);
	return rc;
}

/* The barriers gathered (o->bar), in a command buffer of the setup's own
 * on QUEUE, submitted and waited for. */
static int put_barriers(out *o, obj *queue)
{
	VkCommandBuffer cb;
	VkCommandPool pool;
	int rc = cb_open(o, queue, &cb, &pool);
	vk_args_vkCmdPipelineBarrier a4 = {cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
					   VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 0, NULL,
					   o->nbar, o->bar};
	o->nbar = 0;
	if (!rc) rc = put_encoded(o, &vk_cmd_vkCmdPipelineBarrier, &a4);
	if (!rc) rc = cb_close(o, queue, cb, pool);
	return rc;
}

/* A setup submit runs alone: no semaphores to wait for or signal (their
 * partners are not in the setup), no fence (fences start in the state
 * the range expects), and the queue idle after it. */
static int put_submit(out *o, rec *r)
{
	trim *t = o->t;
	const vk_command_info *cmd;
	enum kind k = trim_kind_of(t, r->sig, &cmd);
	void *args;
	rec_call(r, &o->call);
	if (trim_decode(&o->arena, cmd, &o->call, &args, o->err) < 0)
		return -1;
	VkQueue queue;
	if (k == K_SUBMIT) {
		vk_args_vkQueueSubmit *a = args;
		for (uint32_t i = 0; i < a->submitCount; i++) {
			VkSubmitInfo *si = (VkSubmitInfo *)&a->pSubmits[i];
			si->waitSemaphoreCount = 0;
			si->pWaitSemaphores = NULL;
			si->pWaitDstStageMask = NULL;
			si->signalSemaphoreCount = 0;
			si->pSignalSemaphores = NULL;
			const VkBaseInStructure **p = (const VkBaseInStructure **)&si->pNext;
			while (*p) {
				if ((*p)->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
					*p = (*p)->pNext;
				else
					p = (const VkBaseInStructure **)&(*p)->pNext;
			}
		}
		a->fence = VK_NULL_HANDLE;
		queue = a->queue;
	} else {
		vk_args_vkQueueSubmit2 *a = args;
		for (uint32_t i = 0; i < a->submitCount; i++) {
			VkSubmitInfo2 *si = (VkSubmitInfo2 *)&a->pSubmits[i];
			si->waitSemaphoreInfoCount = 0;
			si->pWaitSemaphoreInfos = NULL;
			si->signalSemaphoreInfoCount = 0;
			si->pSignalSemaphoreInfos = NULL;
		}
		a->fence = VK_NULL_HANDLE;
		queue = a->queue;
	}
	trace_call c;
	trace_call_init(&c);
	vk_encode_call(cmd, &c, args);
	c.thread = r->thread;
	int rc = put(o, &c);
	if (rc == 0) {
		trace_call_reset(&c);
		vk_args_vkQueueWaitIdle wa = {queue, VK_SUCCESS};
		vk_encode_call(&vk_cmd_vkQueueWaitIdle, &c, &wa);
		c.thread = r->thread;
		rc = put(o, &c);
	}
	trace_call_free(&c);
	o->st->submits++;
	return rc;
}

/* --verbose: submit S run again, after BYTES of memory contents. */
static void explain(trim *t, const submit *s, uint64_t bytes)
{
	const obj *o = s->why;
	fprintf(t->explain, "trace-trim: setup: the submit of call %" PRIu64 ", after %" PRIu64
		" bytes of contents: it wrote %s 0x%" PRIx64 ", which ", s->r->no, bytes,
		o && o->h ? o->h->name : "an object", o ? o->handle : 0);
	if (s->why_via)
		fprintf(t->explain, "the submit of call %" PRIu64 " may read", s->why_via->r->no);
	else
		fprintf(t->explain, "the range may read");
	uint64_t left = 0;
	for (uint32_t i = 0; i < s->recordings.n; i++) {
		const recording *r = s->recordings.v[i];
		for (uint32_t k = 0; k < r->recs.n; k++)
			left += trim_pruned(t, r->recs.v[k]);
	}
	if (left)
		fprintf(t->explain, "; without %" PRIu64 " transfer%s whose results nothing reads",
			left, left == 1 ? "" : "s");
	fprintf(t->explain, "\n");
}

void trim_explain(trim *t, FILE *f)
{
	t->explain = f;
}

/* A fence or timeline semaphore created in the state it had when the
 * range began. */
static int put_fixup(out *o, rec *r)
{
	obj *x = r->fixup;
	const vk_command_info *cmd;
	trim_kind_of(o->t, r->sig, &cmd);
	void *args;
	rec_call(r, &o->call);
	if (trim_decode(&o->arena, cmd, &o->call, &args, o->err) < 0)
		return -1;
	if (x->h == trim_types.fence) {
		VkFenceCreateInfo *ci = (VkFenceCreateInfo *)((vk_args_vkCreateFence *)args)->pCreateInfo;
		if (x->fence == 1)
			ci->flags |= VK_FENCE_CREATE_SIGNALED_BIT;
		else if (x->fence == 2)
			ci->flags &= ~(VkFenceCreateFlags)VK_FENCE_CREATE_SIGNALED_BIT;
	} else {
		const VkSemaphoreCreateInfo *ci = ((vk_args_vkCreateSemaphore *)args)->pCreateInfo;
		VkSemaphoreTypeCreateInfo *ty = (VkSemaphoreTypeCreateInfo *)vk_chain_find(
			ci->pNext, VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
		if (ty)
			ty->initialValue = x->value;
	}
	trace_call c;
	trace_call_init(&c);
	vk_encode_call(cmd, &c, args);
	c.thread = r->thread;
	int rc = put(o, &c);
	trace_call_free(&c);
	return rc;
}

/* The queue to signal binary semaphore X on: the one its signal was
 * submitted to, if the setup makes that queue, else (an acquire's, or a
 * queue the range does not use) the first the setup makes on its device. */
static obj *signal_queue(trim *t, const closure *cl, const obj *x)
{
	obj *want = x->signal_queue ? obj_lookup(t, trim_types.queue, x->signal_queue) : NULL, *first = NULL;
	for (uint32_t i = 0; i < cl->objs.n; i++) {
		obj *q = cl->objs.v[i];
		if (!q->alive || q->h != trim_types.queue || q->device != x->device)
			continue;
		if (q == want)
			return q;
		if (!first)
			first = q;
	}
	return first;
}

/*
 * The binary semaphores the range finds signaled: a submit before it
 * signaled them, or an acquire did, and nothing waited since (vkcube's
 * present waits for what the submit before it signaled).  The setup's
 * submits run without their semaphores, so it signals them itself: one
 * submit of no command buffers per queue, after the rest of the setup,
 * then a wait for that queue, as after the setup's other submits: the
 * range may destroy one it never waits on (vkd3d destroys the last
 * frame's), which is valid only once the signal is done, and the capture
 * knew that by fences the setup does not replay.
 */
static int put_signals(out *o, const closure *cl)
{
	vec sems = {0};
	for (uint32_t i = 0; i < cl->objs.n; i++) {
		obj *x = cl->objs.v[i];
		if (x->alive && x->h == trim_types.semaphore && !x->timeline && x->pending)
			vec_push(&sems, x);
	}
	VkSemaphore *v = trace_xcalloc(sems.n + 1, sizeof(*v));
	int rc = 0;
	while (rc == 0 && sems.n) {
		obj *q = signal_queue(o->t, cl, sems.v[0]);
		uint32_t n = 0, k = 0;
		for (uint32_t i = 0; i < sems.n; i++) {
			obj *x = sems.v[i];
			if (signal_queue(o->t, cl, x) == q)
				v[n++] = (VkSemaphore)(uintptr_t)x->handle;
			else
				sems.v[k++] = x;
		}
		sems.n = k;
		if (!q) /* no queue of its device: nothing in the range submits */
			continue;
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
				   .signalSemaphoreCount = n,
				   .pSignalSemaphores = v};
		vk_args_vkQueueSubmit a = {(VkQueue)(uintptr_t)q->handle, 1, &si, VK_NULL_HANDLE,
					   VK_SUCCESS};
		rc = put_encoded(o, &vk_cmd_vkQueueSubmit, &a);
		vk_args_vkQueueWaitIdle w = {(VkQueue)(uintptr_t)q->handle, VK_SUCCESS};
		if (rc == 0)
			rc = put_encoded(o, &vk_cmd_vkQueueWaitIdle, &w);
	}
	free(v);
	vec_free(&sems);
	return rc;
}

/* Into CB: event X as the command that last changed it before the range
 * left it.  A vkCmdSetEvent names that command's stages again, which a
 * vkCmdWaitEvents of the range names as its source (the validation layer
 * checks that they agree); a vkCmdSetEvent2 its dependencies' stages and
 * accesses as one memory barrier, not the buffers and images its
 * barriers name, which the setup may not make. */
static int put_event_cmd(out *o, VkCommandBuffer cb, const evop *op)
{
	VkEvent ev = (VkEvent)(uintptr_t)op->ev->handle;
	const char *n = op->cmd->sig.name;
	if (trim_named(n, "vkCmdSetEvent2")) {
		VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
				       .srcStageMask = op->stage, .srcAccessMask = op->src_access,
				       .dstStageMask = op->dst_stage, .dstAccessMask = op->dst_access};
		VkDependencyInfo di = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
				       .memoryBarrierCount = 1, .pMemoryBarriers = &mb};
		vk_args_vkCmdSetEvent2 a = {cb, ev, &di};
		return put_encoded(o, op->cmd, &a);
	}
	if (trim_named(n, "vkCmdResetEvent2")) {
		vk_args_vkCmdResetEvent2 a = {cb, ev, op->stage};
		return put_encoded(o, op->cmd, &a);
	}
	vk_args_vkCmdSetEvent a = {cb, ev, (VkPipelineStageFlags)op->stage};
	return put_encoded(o, op->set ? &vk_cmd_vkCmdSetEvent : &vk_cmd_vkCmdResetEvent, &a);
}

/* Before setup submit S: the events it waits for and does not set first,
 * as they were when the capture submitted it. */
static int put_event_waits(out *o, const submit *s)
{
	obj *q = NULL;
	VkCommandBuffer cb = VK_NULL_HANDLE;
	VkCommandPool pool = VK_NULL_HANDLE;
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < s->nevwaits; i++) {
		const evop *op = &s->evwaits[i];
		if (!op->cmd) {
			vk_args_vkSetEvent a = {(VkDevice)(uintptr_t)op->ev->device,
						(VkEvent)(uintptr_t)op->ev->handle, VK_SUCCESS};
			rc = put_encoded(o, &vk_cmd_vkSetEvent, &a);
			continue;
		}
		if (!q && !(q = queue_on(o, s->queue, op->ev->device)))
			return 0;
		if (cb == VK_NULL_HANDLE)
			rc = cb_open(o, q, &cb, &pool);
		if (rc == 0)
			rc = put_event_cmd(o, cb, op);
	}
	if (rc == 0 && cb != VK_NULL_HANDLE)
		rc = cb_close(o, q, cb, pool);
	return rc;
}

/*
 * The events the range may use, as it found them (events.c), after the
 * setup's submits (which may set or reset them as they did before): one
 * the host set or reset last, by the host again; one a submit did, by a
 * command buffer of the setup's own on that submit's queue (or the first
 * of its device the setup makes), for the range's waits may name its
 * stages and an event made VK_EVENT_CREATE_DEVICE_ONLY_BIT (ANGLE's)
 * cannot be set from the host.
 */
static int put_events(out *o, const closure *cl)
{
	vec evs = {0};
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < cl->objs.n; i++) {
		obj *x = cl->objs.v[i];
		if (!x->alive || x->h != trim_types.event || !x->ev_changed)
			continue;
		if (x->ev_last.cmd) {
			vec_push(&evs, x);
			continue;
		}
		vk_args_vkSetEvent a = {(VkDevice)(uintptr_t)x->device,
					(VkEvent)(uintptr_t)x->handle, VK_SUCCESS};
		rc = put_encoded(o, x->ev_last.set ? &vk_cmd_vkSetEvent : &vk_cmd_vkResetEvent, &a);
	}
	while (rc == 0 && evs.n) {
		obj *q = signal_queue(o->t, cl, evs.v[0]);
		VkCommandBuffer cb = VK_NULL_HANDLE;
		VkCommandPool pool = VK_NULL_HANDLE;
		if (q) /* none: nothing of the range's device submits */
			rc = cb_open(o, q, &cb, &pool);
		uint32_t k = 0;
		for (uint32_t i = 0; i < evs.n; i++) {
			obj *x = evs.v[i];
			if (signal_queue(o->t, cl, x) != q)
				evs.v[k++] = x;
			else if (q && rc == 0)
				rc = put_event_cmd(o, cb, &x->ev_last);
		}
		evs.n = k;
		if (q && rc == 0)
			rc = cb_close(o, q, cb, pool);
	}
	vec_free(&evs);
	return rc;
}

static void collect(trim *t, vec *recs, rec *r)
{
	if (r && r->stamp != t->stamp) {
		r->stamp = t->stamp;
		vec_push(recs, r);
	}
}

static int by_no(const void *a, const void *b)
{
	const rec *x = *(rec *const *)a, *y = *(rec *const *)b;
	return x->no < y->no ? -1 : x->no > y->no;
}

/* A set a submit of the setup binds, and the submit's call. */
typedef struct bound {
	const obj *set;
	uint64_t no;
} bound;

typedef struct bounds {
	bound *v;
	uint32_t n, cap;
} bounds;

static int by_set_no(const void *a, const void *b)
{
	const bound *x = a, *y = b;
	if (x->set != y->set)
		return (uintptr_t)x->set < (uintptr_t)y->set ? -1 : 1;
	return x->no < y->no ? -1 : x->no > y->no;
}

static void bounds_add(bounds *b, const recording *r, uint64_t no)
{
	for (uint32_t i = 0; r && i < r->deps.n; i++) {
		const obj *o = r->deps.v[i];
		if (o->h == trim_types.descriptor_set) {
			b->v = array_grow(b->v, b->n, &b->cap, sizeof(*b->v), 64);
			b->v[b->n++] = (bound){o, no};
		} else if (i > 0 && o->h == trim_types.command_buffer && recording_exec(r, o) != r) {
			bounds_add(b, recording_exec(r, o), no);
		}
	}
}

/* The updates of the closure's sets that later ones wrote over, where a
 * submit the setup runs bound the set while they showed (state.c: past):
 * into RECS. */
static void collect_past(trim *t, const closure *cl, vec *recs)
{
	bounds b = {0};
	for (uint32_t i = 0; i < cl->submits.n; i++) {
		const submit *s = cl->submits.v[i];
		for (uint32_t k = 0; k < s->recordings.n; k++)
			bounds_add(&b, s->recordings.v[k], s->r->no);
	}
	if (b.n)
		qsort(b.v, b.n, sizeof(*b.v), by_set_no);
	for (uint32_t i = 0; i < cl->objs.n && b.n; i++) {
		const obj *x = cl->objs.v[i];
		for (uint32_t k = 0; k < x->npast; k++) {
			const past *p = &x->past[k];
			/* the first bound after the update's call */
			uint32_t lo = 0, hi = b.n;
			bound key = {x, p->r->no};
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (by_set_no(&b.v[mid], &key) <= 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < b.n && b.v[lo].set == x && b.v[lo].no < p->until)
				collect(t, recs, p->r);
		}
	}
	free(b.v);
}

/* X's contents as the range found them: of a buffer what may be read, of
 * either what the range does not write before its first submit. */
static int put_final(out *o, obj *x)
{
	spans allow = {0};
	if (x->h == trim_types.buffer)
		for (uint32_t i = 0; i < x->rd.n; i++)
			spans_add(&allow, x->rd.v[i].off, x->rd.v[i].end);
	else
		spans_add(&allow, 0, UINT64_MAX);
	for (uint32_t i = 0; i < x->covered.n; i++)
		spans_sub(&allow, x->covered.v[i].off, x->covered.v[i].end);
	int rc = put_contents(o, x, x->cont, x->emitted, &allow);
	spans_free(&allow);
	return rc;
}

int trim_write_setup(trim *t, trace_writer *w, uint64_t *no, trim_stats *stats,
		     trace_error *err)
{
	trim_stats dummy;
	out o = {t, w, no, stats ? stats : &dummy, err, {0}};
	memset(o.st, 0, sizeof(*o.st));
	trace_arena_init(&o.arena);
	trace_call_init(&o.call);
	o.st->live_objects = t->objs.n;
	o.st->live_records = t->live_records;

	/* what the range needs: what it names and everything those need,
	 * then the physical devices and queues of its instances and devices */
	closure cl = {0};
	o.cl = &cl;
	t->stamp++;
	/* a command buffer's recording from before only if the range may
	 * submit it: not those it records afresh, nor those a kept submit
	 * ran (their recording now may be a later one) */
	for (uint32_t i = 0; i < t->roots.n; i++) {
		obj *x = t->roots.v[i];
		close_obj(t, &cl, x, 0);
		if (x->h == trim_types.command_buffer && x->range_use == 2)
			close_recording(t, &cl, x->cur, false);
	}
	close_dispatchable(t, &cl);
	o.st->pruned = trim_prune(t, &cl);
	closure_readable(t, &cl);
	o.st->lost = t->lost;

	vec recs = {0};
	t->stamp++;
	for (uint32_t i = 0; i < t->globals.n; i++)
		collect(t, &recs, t->globals.v[i]);
	for (uint32_t i = 0; i < cl.objs.n; i++) {
		obj *x = cl.objs.v[i];
		for (uint32_t k = 0; k < x->recs.n; k++)
			collect(t, &recs, x->recs.v[k]);
		collect(t, &recs, x->destroy);
		/* a reset since its last recording: a kept submit may run that
		 * recording, and without the reset the range's vkBeginCommandBuffer
		 * finds it executable, which a pool made without
		 * RESET_COMMAND_BUFFER_BIT forbids (Chromium's ANGLE resets its
		 * pools after each frame's fence) */
		if (x->h == trim_types.command_buffer)
			collect(t, &recs, x->reset);
		x->emitted = NULL;
		for (uint32_t k = 0; k < x->nsub; k++) {
			x->sim[k] = x->initial;
			x->from[k] = NO_CHANGE;
		}
	}
	for (uint32_t i = 0; i < cl.recordings.n; i++) {
		recording *r = cl.recordings.v[i];
		collect(t, &recs, r->reset);
		for (uint32_t k = 0; k < r->recs.n; k++)
			if (!trim_pruned(t, r->recs.v[k]))
				collect(t, &recs, r->recs.v[k]);
	}
	for (uint32_t i = 0; i < cl.submits.n; i++)
		collect(t, &recs, ((submit *)cl.submits.v[i])->r);
	collect_past(t, &cl, &recs);
	if (recs.n) /* a range from the first call has none: qsort wants an array */
		qsort(recs.v, recs.n, sizeof(*recs.v), by_no);
	o.st->objects = cl.objs.n;

	/* the closure's objects carry stamp t->stamp - 1 */
	uint32_t in_closure = t->stamp - 1;
	const rec *time = NULL;  /* VMA: the last tracekit.time written */
	int rc = put_pseudo(&o, TRIM_SETUP_BEGIN);
	for (uint32_t i = 0; rc == 0 && i < recs.n; i++) {
		rec *r = recs.v[i];
		if (r->sub) {
			submit *s = r->sub;
			uint64_t bytes = o.st->update_bytes;
			for (uint32_t k = 0; rc == 0 && k < s->nsnaps; k++) {
				obj *x = s->snaps[k].o;
				if (x->stamp != in_closure)
					continue;
				rc = put_contents(&o, x, s->snaps[k].c, x->emitted,
						  x->h == trim_types.buffer ? &x->rd : NULL);
				x->emitted = s->snaps[k].c;
			}
			o.thread = r->thread;
			for (uint32_t k = 0; k < s->nbefore; k++)
				if (s->before[k].o->stamp == in_closure)
					want_layouts(&o, s->before[k].o, lay_expect(&s->before[k]));
			for (uint32_t k = 0; k < s->recordings.n; k++) {
				recording *rcd = s->recordings.v[k];
				for (uint32_t m = 0; m < rcd->nlays; m++) {
					lay *l = &rcd->lays[m];
					if (l->o->stamp != in_closure)
						continue;
					const int32_t *e = lay_expect(l);
					for (uint32_t u = 0; u < l->o->nsub; u++)
						if (e[u] >= 0 && !laid_earlier(s, k, l->o, u))
							want_layout(&o, l->o, u, e[u]);
				}
			}
			if (rc == 0)
				rc = put_layouts(&o, s->queue);
			if (rc == 0)
				rc = put_event_waits(&o, s);
			if (rc == 0)
				rc = put_submit(&o, r);
			if (t->explain)
				explain(t, s, o.st->update_bytes - bytes);
			for (uint32_t k = 0; k < s->recordings.n; k++) {
				recording *rcd = s->recordings.v[k];
				for (uint32_t m = 0; m < rcd->nlays; m++) {
					lay *l = &rcd->lays[m];
					const int32_t *f = lay_final(l);
					for (uint32_t u = 0; u < l->o->nsub; u++)
						if (f[u] >= 0)
							l->o->sim[u] = f[u];
				}
			}
			if (s->queue)
				o.queue = s->queue;
		} else if (r->fixup) {
			rc = put_fixup(&o, r);
		} else {
			if (r->time && r->time != time && rc == 0) {
				rec_call(r->time, &o.call);
				rc = put(&o, &o.call);
				time = r->time;
			}
			rec_call(r, &o.call);
			if (rc == 0)
				rc = put(&o, &o.call);
		}
	}
	/* the contents and layouts as the range found them */
	for (uint32_t i = 0; rc == 0 && i < cl.objs.n; i++) {
		obj *x = cl.objs.v[i];
		if (x->alive && x->cont && range_needs(t, x))
			rc = put_final(&o, x);
		if (x->alive && !o.queue && x->h == trim_types.queue)
			o.queue = x;
		if (x->alive)
			want_layouts(&o, x, x->layout);
	}
	if (rc == 0)
		rc = put_layouts(&o, o.queue);
	if (rc == 0)
		rc = put_events(&o, &cl);
	if (rc == 0)
		rc = put_signals(&o, &cl);
	if (rc == 0 && t->last_time && t->last_time != time) {
		rec_call(t->last_time, &o.call);
		rc = put(&o, &o.call);
	}
	if (rc == 0)
		rc = put_pseudo(&o, TRIM_SETUP_END);
	vec_free(&recs);
	vec_free(&cl.objs);
	vec_free(&cl.recordings);
	vec_free(&cl.submits);
	free(o.bar);
	vec_free(&o.changed);
	trace_arena_free(&o.arena);
	trace_call_free(&o.call);
	return rc;
}
