/*
 * prune.c: the transfer commands of the setup's submits whose results
 * nothing may read: left out of the setup, and with them the bytes they
 * read.  A submit the setup runs again for one object it wrote runs every
 * command recorded into it, and each of those reads what it reads: Warzone
 * 2100 records a frame's uploads into the frame's one command buffer, and
 * a setup that ran its first frame's submit again for a 32-byte copy ran
 * the copy of a 2048x2048 texture too, into an image the program
 * destroyed before the range, with the 16 MiB staging buffer it came from.
 *
 * A copy, blit, resolve, fill, update or clear is left out when none of
 * its destinations is needed: alive when the range begins (the range may
 * read it), read where a buffer's device address may be known, bound over
 * bytes another object was bound over at the same time, or named by a
 * command of the setup's (or the range's) recordings other than a
 * transfer left out or a barrier (through descriptor sets, framebuffers
 * and views too).  A transfer kept needs its sources, so a chain of copies
 * is followed back to where it stops mattering.  Barriers stay: they name
 * the images whose layouts the commands around them expect.  A recording
 * the range may submit (its command buffer's current one, where the range
 * names that) keeps all of its commands; with a secondary command buffer
 * executed (whose commands this walk does not follow), or a record that
 * does not decode, none is left out, nor with a push through a
 * descriptor update template that does not walk whole (its template
 * unknown, its pData short, a type the walk does not know): a push that
 * walks names what its pData holds, as any command its parameters.
 */
#include "trim_internal.h"

typedef struct xfer {
	rec *r;
	obj **dst, **src;
	uint32_t ndst, nsrc;
	bool live, sourced;  /* kept; its sources needed */
} xfer;

typedef struct pruner {
	trim *t;
	tmap need;      /* obj* -> 1: named by a command kept */
	tmap run;       /* recording* -> 1: one a submit of the setup runs */
	xfer *x;
	uint32_t n, cap;
} pruner;

static void need(pruner *p, obj *o)
{
	if (!o || tmap_get(&p->need, o, NULL))
		return;
	tmap_put(&p->need, o, 1);
	/* a set: all its writes named (held leaves out what a template
	 * update wrote), a framebuffer: its attachments */
	if (o->h == trim_types.descriptor_set || o->h == trim_types.framebuffer)
		for (uint32_t i = 0; i < o->deps.n; i++)
			need(p, o->deps.v[i]);
	need(p, o->target);
}

static bool needed(const pruner *p, const obj *o)
{
	return o->alive || tmap_get(&p->t->rooted, o, NULL) || tmap_get(&p->need, o, NULL) ||
	       (o->h == trim_types.buffer && o->whole) || o->overlaps;
}

typedef struct walker {
	pruner *p;
	bool prunable;
} walker;

/* A command of a recording: what a kept one names, needed; a transfer of
 * a recording it may prune, kept for the second pass.  False (the walk
 * ends, nothing is pruned) at a secondary executed or a push through a
 * template. */
static bool walk_one(trim *t, void *ctx, rec *rc, const trace_call *c,
		     const vk_command_info *cmd, void *args, const finds *in)
{
	(void)c;
	walker *w = ctx;
	pruner *p = w->p;
	const char *n = cmd->sig.name;
	(void)args;
	if (trim_named(n, "vkCmdExecuteCommands") ||
	    (trim_named(n, "vkCmdPushDescriptorSetWithTemplate") && in->partial))
		return false;
	xfer x = {.r = rc};
	for (uint32_t k = 1; k < in->n; k++) {
		obj *o = obj_lookup(t, in->v[k].h, in->v[k].value);
		if (!o)
			continue;
		if (transfer_dst(n, &in->v[k])) {
			x.dst = trace_xrealloc(x.dst, (x.ndst + 1) * sizeof(*x.dst));
			x.dst[x.ndst++] = o;
		} else {
			x.src = trace_xrealloc(x.src, (x.nsrc + 1) * sizeof(*x.src));
			x.src[x.nsrc++] = o;
		}
	}
	if (x.ndst && w->prunable && !barrier_cmd(n)) {
		p->x = array_grow(p->x, p->n, &p->cap, sizeof(*p->x), 16);
		p->x[p->n++] = x;
		return true;
	}
	if (!barrier_cmd(n)) {
		for (uint32_t k = 0; k < x.ndst; k++)
			need(p, x.dst[k]);
		for (uint32_t k = 0; k < x.nsrc; k++)
			need(p, x.src[k]);
	}
	free(x.dst);
	free(x.src);
	return true;
}

uint64_t trim_prune(trim *t, const closure *cl)
{
	pruner p = {.t = t};
	bool ok = true;
	for (uint32_t i = 0; i < cl->submits.n; i++) {
		const submit *s = cl->submits.v[i];
		for (uint32_t k = 0; k < s->recordings.n; k++)
			tmap_put(&p.run, s->recordings.v[k], 1);
	}
	for (uint32_t i = 0; ok && i < cl->recordings.n; i++) {
		recording *r = cl->recordings.v[i];
		obj *cb = r->deps.n ? r->deps.v[0] : NULL;
		/* (a recording the range may submit is its command buffer's
		 * current one: an earlier one was recorded over before it) */
		bool prunable = cb && (cb->cur != r || !tmap_get(&t->rooted, cb, NULL)) &&
				tmap_get(&p.run, r, NULL);
		walker w = {&p, prunable};
		ok = recording_each(t, r, false, walk_one, &w);
	}
	uint64_t pruned = 0;
	if (ok) {
		/* a transfer kept needs its sources: until none is added */
		for (bool grew = true; grew;) {
			grew = false;
			for (uint32_t i = 0; i < p.n; i++) {
				xfer *x = &p.x[i];
				for (uint32_t k = 0; !x->live && k < x->ndst; k++)
					x->live = needed(&p, x->dst[k]);
				if (!x->live || x->sourced)
					continue;
				for (uint32_t k = 0; k < x->nsrc; k++)
					need(&p, x->src[k]);
				x->sourced = true;
				grew = true;
			}
		}
		for (uint32_t i = 0; i < p.n; i++)
			if (!p.x[i].live) {
				tmap_put(&t->pruned, p.x[i].r, 1);
				pruned++;
			}
		/* a lost object (GPU-written, destroyed) that only transfers
		 * left out and barriers named is read by nothing now */
		if (t->lost.n == 1 && t->lost_obj && !needed(&p, t->lost_obj))
			t->lost = (trim_lost){0};
	}
	for (uint32_t i = 0; i < p.n; i++) {
		free(p.x[i].dst);
		free(p.x[i].src);
	}
	free(p.x);
	TMAP_FREE(&p.need, &p.run);
	return pruned;
}

/* Whether the setup leaves record R out. */
bool trim_pruned(const trim *t, const rec *r)
{
	return t->pruned.n && tmap_get(&t->pruned, r, NULL);
}
