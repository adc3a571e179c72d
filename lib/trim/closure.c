/*
 * closure: what the range needs.  The roots (what the range names), and
 * transitively what they need: the objects their records name, the pools
 * they came from, the recordings of the command buffers the range may
 * submit, and the submits that last wrote what is read, as inputs of
 * their own.  Touches (how commands use an object's earlier contents, in
 * the order they run, per subresource) leave out the writers of what the
 * range or a setup submit drops or only copies into before reading it.
 */
#include "trim_internal.h"

typedef struct sweep sweep;
static void recording_uses(trim *t, recording *r);

/* ------------------------------------------------------------------ */
/* Touches: how commands use the earlier contents of what they name. */

/* Use U of the subresources SUBS after AT: of each, the first that drops
 * or reads decides; writes over part of it leave it open. */
void use_then(firsts *at, enum use u, uint64_t subs)
{
	uint64_t open = subs & ~(at->drop | at->read);
	if (u == USE_DISCARD)
		at->drop |= open;
	else if (u == USE_READ)
		at->read |= open;
	else
		at->write |= open;
}

/* The uses F after AT: what F drops or reads first, it drops or reads
 * where AT left it open; what F only writes stays open. */
void firsts_then(firsts *at, const firsts *f)
{
	use_then(at, USE_DISCARD, f->drop);
	use_then(at, USE_READ, f->read);
	use_then(at, USE_WRITE, f->write);
}

/* O's uses in L, made if none yet (*FRESH then). */
static touch *touch_of(touches *l, obj *o, bool *fresh)
{
	*fresh = false;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].o == o)
			return &l->v[i];
	*fresh = true;
	l->v = array_grow(l->v, l->n, &l->cap, sizeof(*l->v), 16);
	l->v[l->n] = (touch){o, {0, 0, 0}};
	return &l->v[l->n++];
}

/* O's subresources SUBS used by a command, after those in L; false if one
 * of them used O already. */
static bool touch_add(touches *l, obj *o, enum use u, uint64_t subs)
{
	bool fresh;
	use_then(&touch_of(l, o, &fresh)->f, u, subs & obj_subs(o));
	return fresh;
}

/* A barrier that keeps an image's contents (not from UNDEFINED) is no
 * use of them: what comes after it decides.  An attachment not discarded
 * is loaded, or kept where the render pass does not draw: read, as what
 * a discard names of a level's layers but not all. */
static void touch_image(void *ctx, obj *o, const VkImageSubresourceRange *r,
			enum image_use use, bool discard, int32_t expect, int32_t final)
{
	(void)expect;
	(void)final;
	if (use == IMAGE_LAYOUT_ONLY)
		return;
	if (discard && use == IMAGE_WRITE)
		touch_add(ctx, o, USE_DISCARD, image_subs_of(o, r, true));
	touch_add(ctx, o, USE_READ, image_subs(o, r));
}

/* Whether the handle F of command N is what a transfer command writes and
 * does not read: the destination of a copy, blit, resolve, fill or
 * update, the image a clear clears.  Any other use may read. */
bool transfer_dst(const char *n, const found *f)
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

/* Whether the commands touched may read what set S shows at binding AT
 * (UINT32_MAX: not known): of a recording walked, what its draws read
 * (set_read_at); at a bind of the range's, nothing (its draws touch what
 * they read: range_draw_reads); else all. */
static bool slot_read(const trim *t, const obj *s, uint32_t at)
{
	if (t->then)
		return set_read_at(t->then, s, at);
	return !t->binds_only;
}

/* SUBS of O, and what a command may read through it: what descriptor
 * sets and framebuffers hold, what views show (of an image, the levels
 * and layers of the view).  Of the source of a copy, blit or resolve,
 * SUBS are its regions' levels and layers.  Of a set, only what it shows
 * at the bindings that the draws read (slot_read): a storage image that
 * a compute shader only writes, or a binding no shader uses, is not. */
static void touch_reach(trim *t, touches *l, obj *o, uint64_t subs)
{
	if (!o || !touch_add(l, o, USE_READ, subs))
		return;
	/* a set: what it showed when the recording walked was submitted,
	 * or what it shows now */
	const recording *r = t->then;
	if (o->h == trim_types.descriptor_set && r && r->snapped) {
		for (uint32_t i = 0; i < r->nshown; i++)
			for (uint32_t k = 0; r->shown[i].set == o && k < r->shown[i].w->n; k++)
				if (slot_read(t, o, r->shown[i].w->v[k].at))
					touch_reach(t, l, r->shown[i].w->v[k].o, ~0ull);
	} else if (o->h == trim_types.descriptor_set) {
		for (uint32_t i = 0; i < o->nslots; i++)
			if (slot_read(t, o, o->slots[i].at))
				touch_reach(t, l, o->slots[i].o, ~0ull);
	}
	if (o->h == trim_types.framebuffer)
		for (uint32_t i = 0; i < o->deps.n; i++)
			touch_reach(t, l, o->deps.v[i], ~0ull);
	if (o->target)
		touch_reach(t, l, o->target, view_subs(o));
}

typedef struct draw_reads {
	trim *t;
	touches *l;
} draw_reads;

/* Binding BINDING (UINT32_MAX: any) of SET read by a draw of the range:
 * what the set shows there now. */
static void draw_read(void *ctx, uint64_t set, uint32_t binding)
{
	const draw_reads *x = ctx;
	obj *s = obj_lookup(x->t, trim_types.descriptor_set, set);
	if (!s)
		s = range_set_of(x->t, set);
	for (uint32_t i = 0; s && i < s->nslots; i++)
		if (binding_reaches(binding, s->slots[i].at))
			touch_reach(x->t, x->l, s->slots[i].o, ~0ull);
}

/* A draw, dispatch or trace NAME the range records into CB: what it may
 * read through the sets bound, where it runs (a copy into an image
 * before the draw that samples it is first). */
void range_draw_reads(trim *t, obj *cb, const char *name)
{
	draw_reads x = {t, &cb->rt};
	vk_iface_shader_reads(t->iface, cb->handle, name, draw_read, &x);
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
		obj *o = in->v[i].h == trim_types.command_buffer
				 ? range_cb_lookup(t, in->v[i].value)
				 : obj_lookup(t, in->v[i].h, in->v[i].value);
		if (o && o->h == trim_types.command_buffer && o != cb && secondaries) {
			/* a secondary it executes: its uses, here */
			touch_before(t, o);
			for (uint32_t k = 0; k < o->rt.n; k++) {
				bool fresh;
				firsts_then(&touch_of(l, o->rt.v[k].o, &fresh)->f, &o->rt.v[k].f);
			}
		} else if (o && transfer_dst(cmd->sig.name, &in->v[i])) {
			/* what it overwrites whole it drops, if used first here */
			touch_add(l, o, USE_DISCARD, transfer_dst_whole(t, cmd->sig.name, args, o));
			touch_add(l, o, USE_WRITE,
				  o->h == trim_types.image ? transfer_dst_subs(cmd->sig.name, args, o)
							   : obj_subs(o));
		} else if (o && o->h == trim_types.image && in->v[i].f &&
			   !strcmp(in->v[i].f->name, "srcImage")) {
			touch_reach(t, l, o, transfer_src_subs(cmd->sig.name, args, o));
		} else {
			touch_reach(t, l, o, ~0ull);
		}
	}
}

/* Each record of recording R that decodes, with its command, arguments
 * and the handles it names, to FN; with NAMING, only those that name
 * more than their command buffer (no draw, no dynamic state).  False
 * where a record does not decode (the others still go to FN) or FN
 * returns false (which ends the walk). */
bool recording_each(trim *t, const recording *r, bool naming, recording_fn fn, void *ctx)
{
	/* its handles are what they named then: a handle made again since
	 * (zink's views and framebuffers) is another object now */
	const recording *then = t->then;
	t->then = r;
	trace_arena a;
	trace_arena_init(&a);
	trace_call c;
	trace_call_init(&c);
	trace_error e;
	trace_error_clear(&e);
	bool ok = true;
	for (uint32_t i = 0; i < r->recs.n; i++) {
		rec *rc = r->recs.v[i];
		const vk_command_info *cmd;
		void *args;
		trim_kind_of(t, rc->sig, &cmd);
		if (!cmd || (naming && cmd->nwalk_in <= 1))
			continue;
		rec_call(rc, &c);
		if (trim_decode(&a, cmd, &c, &args, &e) < 0) {
			ok = false;
			continue;
		}
		finds in = {0};
		call_handles(t, &c, cmd, args, &in);
		bool go = fn(t, ctx, rc, &c, cmd, args, &in);
		free(in.v);
		trace_arena_reset(&a);
		if (!go) {
			ok = false;
			break;
		}
	}
	trace_arena_free(&a);
	trace_call_free(&c);
	t->then = then;
	return ok;
}

typedef struct toucher {
	obj *cb;
	touches *l;
	bool secondaries;
	sweep *sw;
} toucher;

static bool sec_uses(trim *t, sweep *sw, recording *x, touches *l);

static bool touch_one(trim *t, void *ctx, rec *rc, const trace_call *c,
		      const vk_command_info *cmd, void *args, const finds *in)
{
	toucher *u = ctx;
	(void)rc;
	(void)c;
	touch_cmd(t, u->cb, u->l, cmd, args, in, u->secondaries);
	/* the secondaries it executes, as they were recorded then: their
	 * uses, here in its order (a false "end of a not-decoding walk" if
	 * one's are not known) */
	for (uint32_t i = 1; i < in->n && !u->secondaries; i++) {
		obj *o = in->v[i].h == trim_types.command_buffer
				 ? obj_lookup(t, trim_types.command_buffer, in->v[i].value)
				 : NULL;
		recording *x = o && o != u->cb ? recording_exec(t->then, o) : NULL;
		if (x && !sec_uses(t, u->sw, x, u->l))
			return false;
	}
	return true;
}

/* The uses of recording RC's commands, into L; false if a record does
 * not decode.  Its records were read once already; those that name no
 * more than their command buffer use nothing (of Pingus' through zink,
 * most: its draws and dynamic state).  Without SECONDARIES, those of the
 * secondaries it executes are its own where they ran (what a primary
 * copies into before the secondary that draws from it, the secondary
 * does not read: Qt Quick's Canvas); SW, where a sweep works them out. */
static bool touch_recording(trim *t, recording *rc, touches *l, bool secondaries, sweep *sw)
{
	toucher u = {rc->deps.n ? rc->deps.v[0] : NULL, l, secondaries, sw};
	return recording_each(t, rc, true, touch_one, &u);
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
		touch_recording(t, cb->cur, &cb->rt, true, NULL);
}

/* ------------------------------------------------------------------ */
/* The closure of the roots. */

/* The subresources of O whose earlier contents uses F may read: all but
 * those dropped first, or only copied into (a readback buffer).  Shaders
 * may read a buffer whose device address is known without naming it. */
static uint64_t firsts_reads(const obj *o, const firsts *f)
{
	uint64_t gone = f->drop;
	if (!(o->h == trim_types.buffer && o->whole))
		gone |= f->write & ~f->read;
	return obj_subs(o) & ~gone;
}

/* What O held when the range began that the range may read: of an image
 * whose levels 1 and on it makes again from UNDEFINED, level 0; of an
 * image that nothing of the range names or shows, nothing (unless it
 * shares memory, or descriptors in buffers may show it).  SuperTuxKart
 * through zink samples some 50 images in its earlier frames; their last
 * writers were in the setup of any frame. */
uint64_t range_needs(const trim *t, const obj *o)
{
	const firsts *f = &o->range_first;
	if (o->h == trim_types.image && !(f->drop | f->read | f->write) && !o->range_named &&
	    !o->overlaps && !t->descriptor_buffers)
		return 0;
	return firsts_reads(o, f);
}

/* What L touched, read by the range's host side (range_named). */
static void touched_named(touches *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		l->v[i].o->range_named = true;
	free(l->v);
}

/* IN, what a record of the range that is no command (CMD, ARGS) names,
 * and what the views it names show: its commands may read them through
 * what the range makes, which their uses do not see (SuperTuxKart's
 * sets, made and written each frame).  Of a set, what the call copies
 * from it; what a set it writes showed before does not matter. */
void range_names(trim *t, const vk_command_info *cmd, const void *args, const finds *in)
{
	touches l = {0};
	for (uint32_t i = 0; i < in->n; i++)
		if (in->v[i].h != trim_types.descriptor_set)
			touch_reach(t, &l, obj_lookup(t, in->v[i].h, in->v[i].value), ~0ull);
	if (trim_named(cmd->sig.name, "vkUpdateDescriptorSets")) {
		const vk_args_vkUpdateDescriptorSets *a = args;
		for (uint32_t i = 0; i < a->descriptorCopyCount; i++)
			touch_reach(t, &l, obj_lookup(t, trim_types.descriptor_set,
						      (uint64_t)a->pDescriptorCopies[i].srcSet), ~0ull);
	}
	touched_named(&l);
}

/* Set S, which the range allocated, named by a command that is no bind
 * vk_iface follows: what it shows, the range reads. */
void range_set_named(trim *t, obj *s)
{
	touches l = {0};
	for (uint32_t i = 0; i < s->nslots; i++)
		touch_reach(t, &l, s->slots[i].o, ~0ull);
	touched_named(&l);
}

/* How recording R's commands use what they name, worked out once, for
 * the recordings a setup runs again. */
static void recording_uses(trim *t, recording *r)
{
	if (!r->used) {
		r->used = true;
		r->unknown = !touch_recording(t, r, &r->uses, false, NULL);
		/* held while the closure is built, as many as it keeps
		 * submits (86,000 at Pingus' frame 99): those of what submits
		 * write alone, images and buffers; of the others, all is read */
		uint32_t n = 0;
		for (uint32_t i = 0; i < r->uses.n; i++) {
			const obj *o = r->uses.v[i].o;
			if (o->h == trim_types.image || o->h == trim_types.buffer)
				r->uses.v[n++] = r->uses.v[i];
		}
		r->uses.n = r->uses.cap = n;
		r->uses.v = trace_xrealloc(r->uses.v, (n ? n : 1) * sizeof(*r->uses.v));
	}
}

/* How recording R's commands use O, first to last: NULL where that is
 * not known (or R does not name O). */
static const firsts *recording_firsts(trim *t, recording *r, const obj *o)
{
	recording_uses(t, r);
	for (uint32_t i = 0; i < r->uses.n && !r->unknown; i++)
		if (r->uses.v[i].o == o)
			return &r->uses.v[i].f;
	return NULL;
}

/* Recording R's uses of O after ALL: from L, its uses (UNKNOWN: a record
 * did not decode); where they do not name O but R does, a read. */
static void recording_then(firsts *all, const recording *r, const touches *l, bool unknown,
			   const obj *o)
{
	for (uint32_t j = 0; j < l->n && !unknown; j++)
		if (l->v[j].o == o) {
			firsts_then(all, &l->v[j].f);
			return;
		}
	if (unknown || recording_names(r, o))
		use_then(all, USE_READ, obj_subs(o));
}

/* What O held before submit S that its recordings, in their order, may
 * read: a copy in one that overwrites O whole leaves nothing of it for a
 * later one to read (GStreamer uploads into an image of its pool and
 * samples it in the next command buffer of the same submit). */
static uint64_t submit_reads(trim *t, const submit *s, const obj *o)
{
	firsts all = {0, 0, 0};
	for (uint32_t i = 0; i < s->recordings.n; i++) {
		recording *r = s->recordings.v[i];
		recording_uses(t, r);
		recording_then(&all, r, &r->uses, r->unknown, o);
	}
	return firsts_reads(o, &all);
}

/* What O held before them that uses F, through what shows it, may read:
 * of what they use (an image's levels a view shows). */
static uint64_t shown_reads(const obj *o, const firsts *f)
{
	return firsts_reads(o, f) & (f->read | f->write);
}

/* What O held before them that recording R's commands may read. */
/* What of O recording R's commands may read: all where its uses are not
 * known; none of an image or buffer that no use of it touched, one only
 * barriers name (a layout changes, the contents stay: vkd3d moves its
 * UAV image in and out of GENERAL in each frame's command buffer, and
 * each frame's submit counted as a reader of the last frame's clear of
 * it, so that a Direct3D 12 program's one-frame cut ran every frame
 * before again). */
static uint64_t recording_reads(trim *t, recording *r, const obj *o)
{
	const firsts *f = recording_firsts(t, r, o);
	if (f)
		return firsts_reads(o, f);
	bool contents = o->h == trim_types.image || o->h == trim_types.buffer;
	return r->unknown || !contents ? obj_subs(o) : 0;
}

/* Whether recording X (with its STAMP and ISTAMP) is walked now: the
 * first time it is reached (then it goes into LIST), or the first time
 * as an input. */
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
 * read it; IN, the subresources of an object they may read.  An object
 * needs the submits that wrote what the range may read of it
 * (range_needs), and as such an input, those that wrote what the setup's
 * submits may read: not what they overwrite too (a readback buffer each
 * frame copies into).  An object or recording reached both ways is
 * walked again as an input, an object again for each subresource it
 * needs anew.
 */
static void close_submit(trim *t, closure *cl, submit *s)
{
	if (s->stamp == t->stamp)
		return;
	s->stamp = t->stamp;
	vec_push(&cl->submits, s);
	submit *via = cl->via;
	cl->via = s;
	close_obj(t, cl, s->queue, true);
	for (uint32_t i = 0; i < s->recordings.n; i++)
		close_recording(t, cl, s->recordings.v[i], true);
	cl->via = via;
}

/* Whether O's contents are those of what it shows: a framebuffer's
 * attachments, a set's descriptors, a view's image or buffer. */
static bool shows_others(const obj *o)
{
	return o->h == trim_types.framebuffer || o->h == trim_types.descriptor_set ||
	       o->h == trim_types.image_view || o->h == trim_types.buffer_view;
}

/* O, which recording R may read IN of, as an input. */
static void close_input(trim *t, closure *cl, recording *r, obj *o, uint64_t in)
{
	/* what the GPU wrote into an object destroyed since: its writers
	 * went with it (not followed: counted, said) */
	if (o->lost && !o->alive && recording_reads(t, r, o) && !t->lost.n++) {
		t->lost = (trim_lost){1, cl->via ? cl->via->r->no : 0, o->handle,
				      o->h ? o->h->name : "object"};
		t->lost_obj = o;
	}
	close_obj(t, cl, o, in);
}

/*
 * As an input, what R names it may read, and what it names shows: of
 * a framebuffer, set or view, what its commands may read of what those
 * show (a pass that clears its attachments reads none of them), where
 * all its records decode.  Walked as an object, a set asked for all it
 * shows once the closure had walked it for a later submit, and for no
 * earlier reader of those images; and a set showed all that its writes
 * ever put there (Scorched3D through zink writes a set 36 times, 23
 * views in all, four at a time): the sweep took each frame's submit
 * for a reader of the last frame's images, and held every frame.
 *
 * A secondary R executes, R's uses hold where it ran (CTX: the primary):
 * what it may read is what the primary may read there, and what it
 * reaches through what it names, the primary's walk asks for.  Walked
 * so once for all primaries (CSTAMP), and on its own as well where a
 * primary's uses are not known.
 */
static void close_recording_in(trim *t, closure *cl, recording *r, bool inputs,
			       recording *ctx)
{
	if (!r || !close_visit(t, &r->stamp, ctx ? &r->cstamp : &r->istamp, inputs,
			       &cl->recordings, r))
		return;
	bool through = false;
	if (inputs) {
		recording_uses(t, r);
		through = !r->unknown;
	}
	recording *u = ctx ? ctx : r;
	for (uint32_t i = 0; i < r->deps.n; i++) {
		obj *o = r->deps.v[i];
		if (!inputs || (through && shows_others(o))) {
			close_obj(t, cl, o, 0);
		} else {
			uint64_t in = range_needs(t, o);
			if (in != obj_subs(o))
				in |= recording_reads(t, u, o);
			close_input(t, cl, u, o, in);
		}
		/* a secondary it executes (deps[0] is its own buffer) */
		if (i > 0 && o->h == trim_types.command_buffer)
			close_recording_in(t, cl, recording_exec(r, o), inputs,
					   through ? u : NULL);
	}
	for (uint32_t i = 0; through && !ctx && i < r->uses.n; i++) {
		obj *o = r->uses.v[i].o;
		if (!shows_others(o) && !recording_names(r, o))
			close_input(t, cl, r, o, shown_reads(o, &r->uses.v[i].f));
	}
}

void close_recording(trim *t, closure *cl, recording *r, bool inputs)
{
	close_recording_in(t, cl, r, inputs, NULL);
}

/* Why S is in, if it was not: O, read by the submit VIA (NULL: by the range). */
static void keep_writer(trim *t, closure *cl, submit *s, obj *o, submit *via)
{
	if (s->stamp != t->stamp) {
		s->why = o;
		s->why_via = via;
	}
	close_submit(t, cl, s);
}

/* The former writers of O whose subresources IN a submit the setup runs,
 * of call UPTO, reads: those that held them when it ran.  Each reader
 * asks for its own: a writer dropped after one reader may come before
 * another (GStreamer's pool of images, each uploaded whole again by a
 * later frame while the frames between sampled it). */
static void close_former(trim *t, closure *cl, obj *o, uint64_t in, uint64_t upto)
{
	for (uint32_t i = 0; i < o->nformer; i++) {
		const writer *f = &o->former[i];
		if (!(f->subs & in) || f->s->r->no >= upto || f->until < upto)
			continue;
		/* dropped by the reader itself: needed if read before */
		if (f->until == upto && cl->via && !(submit_reads(t, cl->via, o) & f->subs & in))
			continue;
		keep_writer(t, cl, f->s, o, cl->via);
	}
}

/* The setup runs its submits one at a time, in the capture's order, each
 * waited for: a submit it runs reads what the submits before it wrote,
 * never a later one's writes.  So an input needs the writers before the
 * last submit that reads it (a font atlas that frame 0's submit read and
 * every frame wrote again pulled each of those frames in, and through
 * their own inputs, most of a Warzone 2100 capture's submits), and the
 * former writers that held it when each reader ran (close_former); what
 * the range reads needs every writer. */
void close_obj(trim *t, closure *cl, obj *o, uint64_t in)
{
	if (!o)
		return;
	in &= obj_subs(o);
	uint64_t upto = in ? (cl->via ? cl->via->r->no : UINT64_MAX) : 0;
	if (o->stamp != t->stamp) {
		vec_push(&cl->objs, o);
		o->stamp = t->stamp;
		o->in = 0;
		o->in_upto = 0;
		o->in_last = NULL;
	} else if (!(in & ~o->in) && upto <= o->in_upto) {
		close_former(t, cl, o, in, upto);
		return;
	}
	o->in |= in;
	if (upto > o->in_upto) {
		o->in_upto = upto;
		o->in_last = cl->via;
	}
	/* asked again by a writer of its own that the walk below reached:
	 * that walk goes round once more, not a level deeper (a swapchain
	 * image every draw loads and none clears, each draw's submit its
	 * writer, was 114,000 levels deep at Pingus' frame 300: past the
	 * stack) */
	if (o->closing) {
		o->again = true;
		close_former(t, cl, o, in, upto);
		return;
	}
	o->closing = true;
	do {
		o->again = false;
		/* what it names, it needs whole */
		bool inputs = o->in != 0;
		for (uint32_t i = 0; i < o->deps.n; i++)
			close_obj(t, cl, o->deps.v[i], inputs ? ~0ull : 0);
		close_obj(t, cl, o->owner, inputs ? ~0ull : 0);
		if (o->target)
			close_obj(t, cl, o->target, inputs ? view_subs(o) : 0);
		uint64_t range = range_needs(t, o);
		for (uint32_t i = 0; i < o->nwriters; i++) {
			submit *s = o->writers[i].s;
			uint64_t subs = o->writers[i].subs;
			if (!(subs & range) && !((subs & o->in) && s->r->no < o->in_upto))
				continue;
			keep_writer(t, cl, s, o, subs & range ? NULL : o->in_last);
		}
	} while (o->again);
	o->closing = false;
	close_former(t, cl, o, in, upto);
}

static bool read_one(trim *t, void *ctx, rec *rc, const trace_call *c,
		     const vk_command_info *cmd, void *args, const finds *in)
{
	if (!trim_pruned(t, rc))
		cmd_reads(t, c, cmd, args, in, ctx);
	return true;
}

/* What recording R's commands may read of buffers: its reads, or where
 * the setup leaves commands of it out (prune.c), those of the others,
 * into OWN. */
static const breads *kept_reads(trim *t, const recording *r, breads *own)
{
	bool any = false;
	for (uint32_t i = 0; !any && i < r->recs.n; i++)
		any = trim_pruned(t, r->recs.v[i]);
	if (!any)
		return &r->reads;
	recording_each(t, r, false, read_one, own);
	return own;
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
		breads own = {0};
		const breads *rd = kept_reads(t, r, &own);
		for (uint32_t k = 0; k < rd->n; k++)
			spans_add(&rd->v[k].o->rd, rd->v[k].off, rd->v[k].end);
		breads_free(&own);
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
			close_obj(t, cl, x, 0);
	}
}


/* ------------------------------------------------------------------ */
/* Former writers that no closure can need, let go as the trace is read:
 * each holds its submit, and with it the records of its recordings.
 * GL-117 through zink clears its depth image each frame after a submit
 * that named it, and kept every frame's submit as a former writer (2.1
 * GB at frame 3000 for a cut of 1.4 MB).
 *
 * A closure needs a former writer F of O only for a submit it keeps
 * that closes O, later than F's submit and no later than the one that
 * dropped F's writes (close_former), and that one only where it reads
 * them first.  It keeps only submits some object holds as a writer, or
 * as a former writer it needs; a submit that none holds is gone for
 * good, and later submits come after every window now held.  So from
 * the writers out, the former writers needed are found to a fixed point
 * and the others let go. */

/* Whether X is WANT or leads to it as close_obj() walks (what X names,
 * its owner and target); each object once a walk (t->stamp). */
static bool walk_reaches(trim *t, obj *x, const obj *want)
{
	if (!x || x->stamp == t->stamp)
		return false;
	if (x == want)
		return true;
	x->stamp = t->stamp;
	for (uint32_t i = 0; i < x->deps.n; i++)
		if (walk_reaches(t, x->deps.v[i], want))
			return true;
	return walk_reaches(t, x->owner, want) || walk_reaches(t, x->target, want);
}

/* A sweep: the submits a closure may keep (stamped MARK), by call once
 * sorted; the uses of the recordings it worked out (a closure works out
 * its own, as things stand then). */
typedef struct sweep_uses {
	touches l;
	bool unknown;    /* a record did not decode */
} sweep_uses;

struct sweep {
	submit **v;
	uint32_t n, cap, sorted;
	uint32_t mark;
	tmap uses;       /* recording* -> index in own + 1 */
	sweep_uses *own;
	uint32_t nown, capown;
};

static void sweep_mark(sweep *sw, submit *s)
{
	if (s->stamp == sw->mark)
		return;
	s->stamp = sw->mark;
	sw->v = array_grow(sw->v, sw->n, &sw->cap, sizeof(*sw->v), 64);
	sw->v[sw->n++] = s;
}

static int by_call(const void *a, const void *b)
{
	uint64_t x = (*(submit *const *)a)->r->no, y = (*(submit *const *)b)->r->no;
	return x < y ? -1 : x > y;
}

/* Recording R's uses: its own, where a closure worked them out, else
 * the sweep's, worked out once. */
static sweep_uses sweep_uses_of(trim *t, sweep *sw, recording *r)
{
	if (r->used)
		return (sweep_uses){r->uses, r->unknown};
	uint64_t k;
	if (!tmap_get(&sw->uses, r, &k)) {
		/* its secondaries' are worked out (and held) within */
		sweep_uses u = {{0}, false};
		u.unknown = !touch_recording(t, r, &u.l, false, sw);
		sw->own = array_grow(sw->own, sw->nown, &sw->capown, sizeof(*sw->own), 8);
		sw->own[sw->nown] = u;
		k = ++sw->nown;
		tmap_put(&sw->uses, r, k);
	}
	return sw->own[k - 1];
}

/* Secondary X's uses, after those in L: its recording's own, or where
 * SW, the sweep's; false where they are not known. */
static bool sec_uses(trim *t, sweep *sw, recording *x, touches *l)
{
	touches xl;
	bool unknown;
	if (sw) {
		sweep_uses u = sweep_uses_of(t, sw, x);
		xl = u.l;
		unknown = u.unknown;
	} else {
		recording_uses(t, x);
		xl = x->uses;
		unknown = x->unknown;
	}
	for (uint32_t k = 0; k < xl.n && !unknown; k++) {
		bool fresh;
		firsts_then(&touch_of(l, xl.v[k].o, &fresh)->f, &xl.v[k].f);
	}
	return !unknown;
}

/* What O held before S that S may read, as submit_reads() finds it. */
static uint64_t sweep_submit_reads(trim *t, sweep *sw, const submit *s, const obj *o)
{
	firsts all = {0, 0, 0};
	for (uint32_t i = 0; i < s->recordings.n; i++) {
		recording *r = s->recordings.v[i];
		sweep_uses u = sweep_uses_of(t, sw, r);
		recording_then(&all, r, &u.l, u.unknown, o);
	}
	return firsts_reads(o, &all);
}

/* Whether a closure that keeps a submit of recording R may ask for SUBS
 * of O, as close_recording() walks R as an input.  What R names that
 * shows others is followed only where its uses are unknown; they are
 * worked out only when one of those leads to O. */
static bool recording_reaches(trim *t, sweep *sw, recording *r, const obj *o, uint64_t subs)
{
	if (!r)
		return false;
	bool shows = false;
	for (uint32_t i = 0; i < r->deps.n; i++) {
		obj *x = r->deps.v[i];
		if (shows_others(x))
			shows = true;
		else if (walk_reaches(t, x, o))
			return true;
		if (i > 0 && x->h == trim_types.command_buffer &&
		    recording_reaches(t, sw, recording_exec(r, x), o, subs))
			return true;
	}
	if (!shows)
		return false;
	t->stamp++;
	bool via = false;
	for (uint32_t i = 0; i < r->deps.n && !via; i++)
		via = shows_others(r->deps.v[i]) && walk_reaches(t, r->deps.v[i], o);
	if (!via)
		return false;
	sweep_uses u = sweep_uses_of(t, sw, r);
	if (u.unknown)
		return true;
	t->stamp++;
	for (uint32_t i = 0; i < u.l.n; i++) {
		obj *x = u.l.v[i].o;
		uint64_t in = shown_reads(x, &u.l.v[i].f);
		if (shows_others(x) || recording_names(r, x) || !in)
			continue;
		if (x == o ? (in & subs) != 0 : walk_reaches(t, x, o))
			return true;
	}
	return false;
}

/* Whether a closure that keeps S may ask for SUBS of O. */
static bool submit_reaches(trim *t, sweep *sw, const submit *s, const obj *o, uint64_t subs)
{
	t->stamp++;
	if (walk_reaches(t, s->queue, o))
		return true;
	for (uint32_t i = 0; i < s->recordings.n; i++)
		if (recording_reaches(t, sw, s->recordings.v[i], o, subs))
			return true;
	return false;
}

/* The marked submit of call NO, or the first after it (NULL: none). */
static submit **sweep_from(sweep *sw, uint64_t no)
{
	uint32_t lo = 0, hi = sw->sorted;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (sw->v[mid]->r->no < no)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sw->sorted ? &sw->v[lo] : NULL;
}

/* Whether a closure that keeps only the marked submits may need F, a
 * former writer of O. */
static bool former_needed(trim *t, sweep *sw, obj *o, writer *f)
{
	submit **p = sweep_from(sw, f->s->r->no + 1);
	for (; p && p < sw->v + sw->sorted && (*p)->r->no <= f->until; p++) {
		if ((*p)->r->no < f->until) {
			if (submit_reaches(t, sw, *p, o, f->subs))
				return true;
			continue;
		}
		if (!f->until_reads)
			f->until_reads = sweep_submit_reads(t, sw, *p, o) & f->subs ? 1 : 2;
		return f->until_reads == 1;
	}
	return false;
}

static void objs_writers_mark(sweep *sw, obj *o, bool formers)
{
	for (uint32_t i = 0; i < o->nwriters; i++)
		sweep_mark(sw, o->writers[i].s);
	for (uint32_t i = 0; formers && i < o->nformer; i++)
		sweep_mark(sw, o->former[i].s);
}

/* Formers under this many since the last sweep, or fewer than it left,
 * wait for the next. */
enum { FORMERS_SWEEP = 64 };

void formers_sweep(trim *t)
{
	if (t->formers_made < FORMERS_SWEEP || t->formers_made < t->formers_left)
		return;
	sweep sw = {0};
	sw.mark = ++t->stamp;
	/* what writers hold, and all that the graves hold */
	for (size_t i = 0; i < t->objs.cap; i++)
		if (t->objs.slot[i])
			objs_writers_mark(&sw, t->objs.slot[i], false);
	for (uint32_t i = 0; i < t->graves.n; i++)
		objs_writers_mark(&sw, t->graves.v[i], true);
	uint32_t kept = sw.mark;
	for (bool more = true; more;) {
		more = false;
		qsort(sw.v, sw.n, sizeof(*sw.v), by_call);
		sw.sorted = sw.n;
		for (size_t i = 0; i < t->objs.cap; i++) {
			obj *o = t->objs.slot[i];
			for (uint32_t k = 0; o && k < o->nformer; k++) {
				writer *f = &o->former[k];
				if (f->kept == kept || !former_needed(t, &sw, o, f))
					continue;
				f->kept = kept;
				more |= f->s->stamp != sw.mark;
				sweep_mark(&sw, f->s);
			}
		}
	}
	uint64_t left = 0;
	for (size_t i = 0; i < t->objs.cap; i++) {
		obj *o = t->objs.slot[i];
		uint32_t n = 0;
		for (uint32_t k = 0; o && k < o->nformer; k++) {
			if (o->former[k].kept == kept)
				o->former[n++] = o->former[k];
			else
				submit_unref(o->former[k].s);
		}
		if (o)
			o->nformer = n;
		left += n;
	}
	for (uint32_t i = 0; i < sw.nown; i++)
		free(sw.own[i].l.v);
	free(sw.own);
	tmap_free(&sw.uses);
	free(sw.v);
	t->formers_made = 0;
	t->formers_left = left;
}
