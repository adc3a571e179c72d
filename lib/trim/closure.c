/*
 * closure: what the range needs.  The roots (what the range names), and
 * transitively what they need: the objects their records name, the pools
 * they came from, the recordings of the command buffers the range may
 * submit, and the submits that last wrote what is read, as inputs of
 * their own.  Touches (how commands use an object's earlier contents, in
 * the order they run) leave out the writers of what the range or a
 * setup submit drops or only copies into before reading it.
 */
#include "trim_internal.h"

/* ------------------------------------------------------------------ */
/* Touches: how commands use the earlier contents of what they name. */

/* Use U after AT: the first that discards or reads decides; writes over
 * part of the contents leave it open. */
void use_then(enum use *at, enum use u)
{
	if (*at == USE_NONE || *at == USE_WRITE)
		*at = u;
}

/* O used by a command, after those in L; false if one of them used it. */
static bool touch_add(touches *l, obj *o, enum use u)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].o == o) {
			use_then(&l->v[i].u, u);
			return false;
		}
	l->v = array_grow(l->v, l->n, &l->cap, sizeof(*l->v), 16);
	l->v[l->n++] = (touch){o, u};
	return true;
}

/* A barrier that keeps an image's contents (not from UNDEFINED) is no
 * use of them: what comes after it decides.  An attachment not discarded
 * is loaded, or kept where the render pass does not draw: read. */
static void touch_image(void *ctx, obj *o, const VkImageSubresourceRange *r, bool write,
			bool discard, int32_t expect, int32_t final)
{
	(void)r;
	(void)expect;
	(void)final;
	if (write)
		touch_add(ctx, o, discard ? USE_DISCARD : USE_READ);
}

/* Whether the handle F of command N is what a transfer command writes and
 * does not read: the destination of a copy, blit, resolve, fill or
 * update, the image a clear clears.  Any other use may read. */
static bool transfer_dst(const char *n, const found *f)
{
	static const char *const copies[] = {
		"vkCmdCopyBuffer", "vkCmdCopyBuffer2", "vkCmdCopyImage", "vkCmdCopyImage2",
		"vkCmdBlitImage", "vkCmdBlitImage2", "vkCmdCopyBufferToImage",
		"vkCmdCopyBufferToImage2", "vkCmdCopyImageToBuffer", "vkCmdCopyImageToBuffer2",
		"vkCmdResolveImage", "vkCmdResolveImage2", "vkCmdFillBuffer", "vkCmdUpdateBuffer",
		"vkCmdCopyQueryPoolResults",
	};
	const char *fn = f->f ? f->f->name : "";
	if (f->h != trim_types.buffer && f->h != trim_types.image)
		return false;
	if (trim_named(n, "vkCmdClearColorImage") || trim_named(n, "vkCmdClearDepthStencilImage"))
		return f->top && !strcmp(fn, "image");
	for (size_t i = 0; i < sizeof(copies) / sizeof(*copies); i++)
		if (trim_named(n, copies[i]))
			return !strcmp(fn, f->h == trim_types.buffer ? "dstBuffer" : "dstImage");
	return false;
}

/* O, and what a command may read through it: what descriptor sets and
 * framebuffers hold, what views show. */
static void touch_reach(touches *l, obj *o)
{
	if (!o || !touch_add(l, o, USE_READ))
		return;
	if (o->h == trim_types.descriptor_set)
		for (uint32_t i = 0; i < o->held.n; i++)
			touch_reach(l, o->held.v[i]);
	if (o->h == trim_types.framebuffer)
		for (uint32_t i = 0; i < o->deps.n; i++)
			touch_reach(l, o->deps.v[i]);
	touch_reach(l, o->target);
}

/* A command of command buffer CB: its uses, into L.  With SECONDARIES,
 * the uses of the range's secondaries it executes too (touch_before);
 * without, a secondary is walked on its own. */
void touch_cmd(trim *t, obj *cb, touches *l, const vk_command_info *cmd,
	       const void *args, const finds *in, bool secondaries)
{
	command_images(t, cmd->sig.name, args, touch_image, l);
	if (barrier_cmd(cmd->sig.name))
		return;
	for (uint32_t i = 1; i < in->n; i++) {
		obj *o = obj_lookup(t, in->v[i].h, in->v[i].value);
		if (o && o->h == trim_types.command_buffer && o != cb && secondaries) {
			/* a secondary it executes: its uses, here */
			touch_before(t, o);
			for (uint32_t k = 0; k < o->rt.n; k++)
				touch_add(l, o->rt.v[k].o, o->rt.v[k].u);
		} else if (o && transfer_dst(cmd->sig.name, &in->v[i])) {
			touch_add(l, o, USE_WRITE);
		} else {
			touch_reach(l, o);
		}
	}
}

/* The uses of recording RC's commands, into L; false if a record does
 * not decode.  Its records were read once already. */
static bool touch_recording(trim *t, recording *rc, touches *l, bool secondaries)
{
	obj *cb = rc->deps.n ? rc->deps.v[0] : NULL;
	trace_arena a;
	trace_arena_init(&a);
	trace_error e;
	trace_error_clear(&e);
	bool ok = true;
	for (uint32_t i = 0; i < rc->recs.n; i++) {
		const trace_call *c = &((rec *)rc->recs.v[i])->c;
		const vk_command_info *cmd;
		trim_kind_of(t, c, &cmd);
		if (!cmd)
			continue;
		void *args;
		if (trim_decode(&a, cmd, c, &args, &e) < 0) {
			ok = false;
			continue;
		}
		finds in = {0};
		call_handles(t, c, cmd, args, &in);
		touch_cmd(t, cb, l, cmd, args, &in, secondaries);
		free(in.v);
	}
	trace_arena_free(&a);
	return ok;
}

/* CB's recording from before the range, as uses, when the range goes on
 * recording it or submits it.  A record that does not decode now is
 * left out. */
void touch_before(trim *t, obj *cb)
{
	if (cb->rstate)
		return;
	cb->rstate = 1;
	if (cb->cur)
		touch_recording(t, cb->cur, &cb->rt, true);
}

/* ------------------------------------------------------------------ */
/* The closure of the roots. */

/* Whether nothing the range does can read what O held when it began: it
 * drops it first, or only copies into it (a readback buffer).  Shaders
 * may read a buffer whose device address is known without naming it. */
bool range_overwrites(const obj *o)
{
	return o->range_first == USE_DISCARD ||
	       (o->range_first == USE_WRITE && !(o->h == trim_types.buffer && o->whole));
}

/* Whether recording R's commands may read what O held before them: all
 * but those that drop it first or only copy into it.  Worked out once,
 * for the recordings a setup runs again. */
static bool recording_reads(trim *t, recording *r, const obj *o)
{
	if (!r->used) {
		r->used = true;
		r->unknown = !touch_recording(t, r, &r->uses, false);
	}
	if (r->unknown)
		return true;
	for (uint32_t i = 0; i < r->uses.n; i++)
		if (r->uses.v[i].o == o)
			return r->uses.v[i].u != USE_DISCARD && r->uses.v[i].u != USE_WRITE;
	return true;
}

/* Whether X (with its STAMP and ISTAMP) is walked now: the first time it
 * is reached (then it goes into LIST), or the first time as an input. */
static bool close_visit(const trim *t, uint32_t *stamp, uint32_t *istamp, bool inputs,
			vec *list, void *x)
{
	if (*stamp == t->stamp && (!inputs || *istamp == t->stamp))
		return false;
	if (*stamp != t->stamp)
		vec_push(list, x);
	*stamp = t->stamp;
	if (inputs)
		*istamp = t->stamp;
	return true;
}

/*
 * INPUTS: reached from a submit the setup runs again, whose commands may
 * read it.  An object the range overwrites (range_overwrites) needs the
 * submits that wrote it only as such an input, and not where the setup's
 * submits overwrite it too (a readback buffer each frame copies into);
 * an object or recording reached both ways is walked again as an input.
 */
static void close_submit(trim *t, closure *cl, submit *s)
{
	if (s->stamp == t->stamp)
		return;
	s->stamp = t->stamp;
	vec_push(&cl->submits, s);
	close_obj(t, cl, s->queue, true);
	for (uint32_t i = 0; i < s->recordings.n; i++)
		close_recording(t, cl, s->recordings.v[i], true);
}

void close_recording(trim *t, closure *cl, recording *r, bool inputs)
{
	if (!r || !close_visit(t, &r->stamp, &r->istamp, inputs, &cl->recordings, r))
		return;
	for (uint32_t i = 0; i < r->deps.n; i++) {
		obj *o = r->deps.v[i];
		close_obj(t, cl, o, inputs && !(range_overwrites(o) && !recording_reads(t, r, o)));
		/* a secondary it executes (deps[0] is its own buffer) */
		if (i > 0 && o->h == trim_types.command_buffer)
			close_recording(t, cl, o->cur, inputs);
	}
}

void close_obj(trim *t, closure *cl, obj *o, bool inputs)
{
	if (!o || !close_visit(t, &o->stamp, &o->istamp, inputs, &cl->objs, o))
		return;
	for (uint32_t i = 0; i < o->deps.n; i++)
		close_obj(t, cl, o->deps.v[i], inputs);
	close_obj(t, cl, o->owner, inputs);
	close_obj(t, cl, o->target, inputs);
	if (inputs || !range_overwrites(o))
		for (uint32_t i = 0; i < o->writers.n; i++)
			close_submit(t, cl, o->writers.v[i]);
}

/* The bytes of its buffers the closure may read: what the recordings it
 * runs read directly, through the descriptor sets they bind (as they are
 * now, and as they were at each submit it runs again), and what the range
 * reads.  A buffer whose device address was asked for (zink makes every
 * buffer able to have one, and asks for none) or may be known from an
 * earlier run is read whole. */
void closure_readable(trim *t, const closure *cl)
{
	breads all = {0};
	for (uint32_t i = 0; i < cl->objs.n; i++) {
		obj *x = cl->objs.v[i];
		x->rd.n = 0;
		if (x->h == trim_types.buffer && x->whole)
			spans_add(&x->rd, 0, UINT64_MAX);
	}
	for (uint32_t i = 0; i < cl->objs.n; i++) {
		obj *x = cl->objs.v[i];
		if (x->h == trim_types.descriptor_set && tmap_get(&t->rooted, x, NULL))
			for (uint32_t k = 0; k < x->nbd; k++)
				spans_add(&x->bd[k].r.o->rd, x->bd[k].r.off, x->bd[k].r.end);
	}
	for (uint32_t i = 0; i < cl->recordings.n; i++) {
		const recording *r = cl->recordings.v[i];
		for (uint32_t k = 0; k < r->reads.n; k++)
			spans_add(&r->reads.v[k].o->rd, r->reads.v[k].off, r->reads.v[k].end);
		recording_set_reads(t, r, &all, false);
	}
	for (uint32_t i = 0; i < cl->submits.n; i++) {
		const submit *s = cl->submits.v[i];
		for (uint32_t k = 0; k < s->reads.n; k++)
			spans_add(&s->reads.v[k].o->rd, s->reads.v[k].off, s->reads.v[k].end);
	}
	for (uint32_t k = 0; k < all.n; k++)
		spans_add(&all.v[k].o->rd, all.v[k].off, all.v[k].end);
	for (uint32_t k = 0; k < t->range_reads.n; k++)
		spans_add(&t->range_reads.v[k].o->rd, t->range_reads.v[k].off,
			  t->range_reads.v[k].end);
	breads_free(&all);
}

/* The physical devices and queues of the instances and devices the
 * closure holds (what the range names reaches those), whether the range
 * names them or not; an instance or device the range does not reach (a
 * probe instance made first, a second device) stays out, and with it
 * whatever it holds. */
void close_dispatchable(trim *t, closure *cl)
{
	for (size_t i = 0; i < t->objs.cap; i++) {
		obj *x = t->objs.slot[i];
		if (!x || !x->h || !x->h->dispatchable || x->h == trim_types.command_buffer ||
		    x->stamp == t->stamp || !strcmp(x->h->name, "VkInstance") ||
		    !strcmp(x->h->name, "VkDevice") || !x->deps.n)
			continue;
		bool held = true;
		for (uint32_t k = 0; k < x->deps.n && held; k++)
			held = ((obj *)x->deps.v[k])->stamp == t->stamp;
		if (held)
			close_obj(t, cl, x, false);
	}
}

