/*
 * objects: the model's lifetimes (see trim_internal.h): records kept by
 * reference count; the map of live objects by handle and type; objects
 * that die while a kept record names them (zombies); command buffers'
 * recordings and the submits that ran them.  And the handles a Vulkan
 * call names, template writes' pData included.
 */
#include "trim_internal.h"

/* ------------------------------------------------------------------ */
/* Records. */

rec *rec_new(const trace_call *c)
{
	size_t n = trace_call_pack(c, NULL);
	rec *r = trace_xcalloc(1, sizeof(*r) + n);
	trace_call_pack(c, r->packed);
	r->no = c->no;
	r->offset = c->offset;
	r->sig = c->sig;
	r->thread = c->thread;
	r->flags = c->flags;
	r->refs = 1;
	return r;
}

void rec_call(const rec *r, trace_call *c)
{
	trace_call_unpack(c, r->sig, r->packed);
	c->no = r->no;
	c->offset = r->offset;
	c->thread = r->thread;
	c->flags = r->flags;
}

rec *rec_ref(rec *r)
{
	if (r)
		r->refs++;
	return r;
}

void rec_unref(rec *r)
{
	if (!r || --r->refs)
		return;
	rec_unref(r->time);
	free(r);
}

/* ------------------------------------------------------------------ */
/* The map of live objects, by handle and handle type. */

static size_t omap_home(const omap *m, uint64_t handle, const vk_handle_info *h)
{
	uint64_t x = (handle ^ (uint64_t)(uintptr_t)h) * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 29) & (m->cap - 1);
}

static obj *omap_get(const omap *m, uint64_t handle, const vk_handle_info *h)
{
	if (!m->cap)
		return NULL;
	for (size_t i = omap_home(m, handle, h);; i = (i + 1) & (m->cap - 1)) {
		obj *o = m->slot[i];
		if (!o)
			return NULL;
		if (o->handle == handle && o->h == h)
			return o;
	}
}

static void omap_put(omap *m, obj *o)
{
	if (2 * (m->n + 1) > m->cap) {
		omap old = *m;
		m->cap = old.cap ? 2 * old.cap : 256;
		m->slot = trace_xcalloc(m->cap, sizeof(*m->slot));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i])
				omap_put(m, old.slot[i]);
		free(old.slot);
	}
	size_t i = omap_home(m, o->handle, o->h);
	while (m->slot[i])
		i = (i + 1) & (m->cap - 1);
	m->slot[i] = o;
	m->n++;
}

/* Removes o, shifting back what follows (no tombstones). */
static void omap_del(omap *m, obj *o)
{
	size_t i = omap_home(m, o->handle, o->h);
	while (m->slot[i] != o)
		i = (i + 1) & (m->cap - 1);
	m->slot[i] = NULL;
	m->n--;
	for (size_t j = (i + 1) & (m->cap - 1); m->slot[j]; j = (j + 1) & (m->cap - 1)) {
		size_t home = omap_home(m, m->slot[j]->handle, m->slot[j]->h);
		/* j's entry may move to i if its home is not in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->slot[i] = m->slot[j];
			m->slot[j] = NULL;
			i = j;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Objects. */

static void obj_unref(obj *o);

/* Lets go of the records V holds, and of V. */
void recs_release(vec *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		rec_unref(v->v[i]);
	vec_free(v);
}

/* Lets go of the objects V holds, and of V. */
void objs_release(vec *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		obj_unref(v->v[i]);
	vec_free(v);
}

/* The submits that wrote O (the graves keep them a while). */
static void obj_shed_writers(obj *o)
{
	for (uint32_t i = 0; i < o->nwriters; i++)
		submit_unref(o->writers[i].s);
	free(o->writers);
	o->writers = NULL;
	o->nwriters = o->capwriters = 0;
	for (uint32_t i = 0; i < o->nformer; i++)
		submit_unref(o->former[i].s);
	free(o->former);
	o->former = NULL;
	o->nformer = o->capformer = 0;
}

/* What descriptor set O held of V (its deps, its storage targets), let
 * go: what sets hold, the graves tell apart (graves_collect). */
static void set_held_release(obj *o, vec *v)
{
	for (uint32_t i = 0; o->h && o->h == trim_types.descriptor_set && i < v->n; i++)
		((obj *)v->v[i])->set_refs--;
	objs_release(v);
}

/* What an object dead or dying no longer needs, but its writers: its
 * contents do not matter, nothing will run its commands. */
static void obj_shed_rest(obj *o)
{
	content_unref(o->cont);
	o->cont = NULL;
	recording_unref(o->cur);
	o->cur = NULL;
	rec_unref(o->reset);
	o->reset = NULL;
	set_held_release(o, &o->storage);
	free(o->storage_at);
	o->storage_at = NULL;
}

static void obj_shed(obj *o)
{
	obj_shed_writers(o);
	obj_shed_rest(o);
}

static void obj_unref(obj *o)
{
	if (!o || --o->refs)
		return;
	obj_shed(o);
	recs_release(&o->recs);
	set_held_release(o, &o->deps);
	obj_unref(o->owner);
	obj_unref(o->target);
	vec_free(&o->views);
	free(o->slots);
	for (uint32_t i = 0; i < o->npast; i++)
		rec_unref(o->past[i].r);
	free(o->past);
	showing_unref(o->now);
	vec_free(&o->bound);
	free(o->att_layout);
	if (o->layout != o->lay1)
		free(o->layout);
	free(o->tmpl);
	spans_free(&o->rd);
	spans_free(&o->covered);
	free(o->bd);
	free(o->rt.v);
	rec_unref(o->destroy);
	free(o);
}

void obj_dep(obj *o, obj *d)
{
	if (!d || d == o || vec_has(&o->deps, d))
		return;
	d->refs++;
	d->set_refs += o->h && o->h == trim_types.descriptor_set;
	vec_push(&o->deps, d);
}

obj *obj_new(trim *t, uint64_t handle, const vk_handle_info *h)
{
	obj *o = trace_xcalloc(1, sizeof(*o));
	o->handle = handle;
	o->h = h;
	o->refs = 1;
	o->alive = true;
	image_subresources(o, 1, 1);
	o->index = -1;
	o->aspect = VK_IMAGE_ASPECT_COLOR_BIT;
	omap_put(&t->objs, o);
	return o;
}

/*
 * The graves: objects the GPU wrote that the program destroyed, with the
 * submits that wrote them, for a submit that read them before and that
 * a setup runs again (a font atlas that grows: its glyphs copied into a
 * larger image, the old one destroyed, as extremetuxracer's; a cut that
 * ran the copy without the uploads before it lost most of its menu
 * text).  A dead object and its writers name each other (a recording's
 * objects, a submit's layouts and contents): one whose every reference
 * but the grave's is its writers' is read by nothing kept, and goes with
 * them (a sweep each GRAVES_SWEEP burials past those a sweep kept; the
 * trim of glmark2's 33 scenes at frame 500 peaked at 272 MB against 214
 * without graves, for what the graves still named hold their writers'
 * recordings; Pingus' capture, 125,233 submits and 238,357 buffers in
 * 328 frames, took 6.0 GB in a minute's trim with 4096 of them kept,
 * 5.5 GB with 256, 4.6 GB with none: its trim runs out of memory all
 * the same); past GRAVES_MOST still read, those that only the graves or
 * descriptor sets' past updates hold go first (graves_collect), else
 * the oldest (then lost: a setup that reads it says so, trace-trim(1)).
 */
enum { GRAVES_MOST = 256, GRAVES_SWEEP = 4, GRAVES_QUIET = 64 };

/* GRAVES_MOST, or TRACE_TRIM_GRAVES (tests: 0 keeps none) */
static uint32_t graves_most(void)
{
	static int64_t most = -1;
	if (most < 0) {
		const char *s = getenv("TRACE_TRIM_GRAVES");
		char *end;
		unsigned long v = s && *s ? strtoul(s, &end, 10) : GRAVES_MOST;
		bool ok = s && *s && !*end && v <= GRAVES_MOST;
		most = ok ? (int64_t)v : GRAVES_MOST;
		if (s && *s && !ok)
			fprintf(stderr, "trace-trim: TRACE_TRIM_GRAVES=%s: expected 0 to %d; using %d\n", s,
				GRAVES_MOST, GRAVES_MOST);
	}
	return (uint32_t)most;
}

/* O's writers let go.  SOLE: they alone named it, so only they can read
 * it, and where one submit wrote it all, none reads what it loses. */
static void grave_close(obj *o, bool sole)
{
	bool one = true;
	for (uint32_t i = 1; one && i < o->nwriters; i++)
		one = o->writers[i].s == o->writers[0].s;
	for (uint32_t i = 0; one && i < o->nformer; i++)
		one = o->nwriters && o->former[i].s == o->writers[0].s;
	o->lost = o->nwriters > 0 && !(sole && one);
	obj_shed_writers(o);
	obj_unref(o);
}

/* Deps past which a recording looks them up in a map: below, a look
 * along them is as quick, and the maps of Pingus' 113,000 recordings
 * in a late cut took 110 MB. */
enum { DEPS_LISTED = 48 };

/* Whether recording R names O. */
bool recording_names(const recording *r, const obj *o)
{
	if (r->deps.n <= DEPS_LISTED)
		return vec_has(&r->deps, o);
	return tmap_get(&r->seen, o, NULL);
}

/* The references to O that the submits of W (N) hold, each submit and
 * recording once; SEEN holds those counted. */
static uint32_t writers_refs(const obj *o, const writer *w, uint32_t n, tmap *seen)
{
	uint32_t refs = 0;
	for (uint32_t i = 0; i < n; i++) {
		const submit *s = w[i].s;
		if (tmap_get(seen, s, NULL))
			continue;
		tmap_put(seen, s, 1);
		refs += s->queue == o;
		for (uint32_t k = 0; k < s->nsnaps; k++)
			refs += s->snaps[k].o == o;
		for (uint32_t k = 0; k < s->nbefore; k++)
			refs += s->before[k].o == o;
		for (uint32_t k = 0; k < s->recordings.n; k++) {
			const recording *r = s->recordings.v[k];
			if (tmap_get(seen, r, NULL))
				continue;
			tmap_put(seen, r, 1);
			refs += recording_names(r, o);
		}
	}
	return refs;
}

/*
 * Which graves only the graves hold (trial deletion, as CPython's cycle
 * collector finds cycles).  The nodes: the graves, and the dead objects,
 * submits and recordings they reach through what holds a reference (an
 * object's writers, former writers, deps, owner and target; a submit's
 * queue, recordings, snapshots and layouts; a recording's objects and
 * secondaries).  A node's references less those from nodes are held
 * from outside (a live object's writers, a command buffer's recording);
 * what those reach stays, and the other graves go.  Each grave held the
 * next one (Qt Quick's layers, made and destroyed as a scene toggles
 * them, each drawn by a submit that named the others): 603 graves by
 * frame 298, not one that its own writers alone held, and the oldest
 * went first at GRAVES_MOST: the font atlas the program had grown and
 * destroyed, read by a copy into the live one, lost its uploads.
 */
enum { NODE_OBJ, NODE_SUBMIT, NODE_RECORDING };

typedef struct gnode {
	void *p;
	int kind;
	int64_t held;   /* references, less those from nodes */
	int64_t by_sets;  /* ... of them descriptor sets' */
	bool reached;
} gnode;

typedef struct gwalk {
	gnode *v;
	uint32_t n, cap;
	tmap at;        /* node -> index + 1 */
	bool grow;      /* new nodes join (else only those there are met) */
	bool bad;       /* a count went below 0: not as this file knows them */
	uint32_t *todo; /* reached, their references not walked yet */
	uint32_t ntodo;
} gwalk;

/* P, of KIND, a node: its index.  Its references, all held from outside
 * until those from nodes are taken off. */
static uint32_t gnode_add(gwalk *g, void *p, int kind)
{
	g->v = array_grow(g->v, g->n, &g->cap, sizeof(*g->v), 64);
	uint32_t refs = kind == NODE_OBJ ? ((obj *)p)->refs
		      : kind == NODE_SUBMIT ? ((submit *)p)->refs
					    : ((recording *)p)->refs;
	g->v[g->n] = (gnode){p, kind, refs, kind == NODE_OBJ ? ((obj *)p)->set_refs : 0, false};
	tmap_put(&g->at, p, g->n + 1);
	return g->n++;
}

/* P, of KIND, referenced by a node (BY_SET: a descriptor set): a node
 * (a live object is none), its count less one; or where the walk is
 * reaching, reached. */
static void gnode_ref_by(gwalk *g, void *p, int kind, bool by_set)
{
	if (!p || (kind == NODE_OBJ && ((obj *)p)->alive))
		return;
	uint64_t i;
	if (!tmap_get(&g->at, p, &i)) {
		if (!g->grow)
			return;
		i = gnode_add(g, p, kind) + 1;
	}
	gnode *n = &g->v[i - 1];
	if (g->grow) {
		if (--n->held < 0 || (by_set && --n->by_sets < 0))
			g->bad = true;
	} else if (!n->reached) {
		n->reached = true;
		g->todo[g->ntodo++] = (uint32_t)(i - 1);
	}
}

static void gnode_ref(gwalk *g, void *p, int kind)
{
	gnode_ref_by(g, p, kind, false);
}

/* What node N references, to gnode_ref. */
static void gnode_refs(gwalk *g, uint32_t n)
{
	void *p = g->v[n].p;
	if (g->v[n].kind == NODE_OBJ) {
		obj *o = p;
		bool set = o->h && o->h == trim_types.descriptor_set;
		for (uint32_t i = 0; i < o->deps.n; i++)
			gnode_ref_by(g, o->deps.v[i], NODE_OBJ, set);
		gnode_ref(g, o->owner, NODE_OBJ);
		gnode_ref(g, o->target, NODE_OBJ);
		for (uint32_t i = 0; i < o->nwriters; i++)
			gnode_ref(g, o->writers[i].s, NODE_SUBMIT);
		for (uint32_t i = 0; i < o->nformer; i++)
			gnode_ref(g, o->former[i].s, NODE_SUBMIT);
	} else if (g->v[n].kind == NODE_SUBMIT) {
		submit *s = p;
		gnode_ref(g, s->queue, NODE_OBJ);
		for (uint32_t i = 0; i < s->recordings.n; i++)
			gnode_ref(g, s->recordings.v[i], NODE_RECORDING);
		for (uint32_t i = 0; i < s->nsnaps; i++)
			gnode_ref(g, s->snaps[i].o, NODE_OBJ);
		for (uint32_t i = 0; i < s->nbefore; i++)
			gnode_ref(g, s->before[i].o, NODE_OBJ);
	} else {
		recording *r = p;
		for (uint32_t i = 0; i < r->deps.n; i++)
			gnode_ref(g, r->deps.v[i], NODE_OBJ);
		for (uint32_t i = 0; i < r->execs.n; i++)
			gnode_ref(g, r->execs.v[i], NODE_RECORDING);
	}
}

/* The graves nothing outside them holds, closed; how many. */
static uint32_t graves_collect(trim *t)
{
	gwalk g = {0};
	g.grow = true;
	for (uint32_t i = 0; i < t->graves.n; i++) {
		uint32_t k = gnode_add(&g, t->graves.v[i], NODE_OBJ);
		g.v[k].held--;  /* less the grave's */
	}
	/* and the dead objects live ones name (a live set's old views, each
	 * holding its image): what holds them, sets or not, is told apart */
	for (size_t i = 0; i < t->objs.cap; i++) {
		obj *x = t->objs.slot[i];
		for (uint32_t k = 0; x && k < x->deps.n; k++) {
			obj *d = x->deps.v[k];
			if (!d->alive && !tmap_get(&g.at, d, NULL))
				gnode_add(&g, d, NODE_OBJ);
		}
	}
	for (uint32_t i = 0; i < g.n; i++)
		gnode_refs(&g, i);
	uint32_t closed = 0;
	if (!g.bad) {
		g.grow = false;
		g.todo = trace_xmalloc((g.n ? g.n : 1) * sizeof(*g.todo));
		/* what is held from outside but by descriptor sets reaches (a
		 * live object's writers, their recordings) */
		for (uint32_t i = 0; i < g.n; i++)
			if ((g.v[i].reached = g.v[i].held > g.v[i].by_sets))
				g.todo[g.ntodo++] = i;
		while (g.ntodo)
			gnode_refs(&g, g.todo[--g.ntodo]);
		for (uint32_t i = 0; i < t->graves.n; i++)
			((obj *)t->graves.v[i])->grave_weak = !g.v[i].reached;
		/* and what sets hold: a live one holds the views its updates
		 * ever wrote */
		for (uint32_t i = 0; i < g.n; i++)
			if (!g.v[i].reached && (g.v[i].reached = g.v[i].held > 0))
				g.todo[g.ntodo++] = i;
		while (g.ntodo)
			gnode_refs(&g, g.todo[--g.ntodo]);
		uint32_t k = 0;
		for (uint32_t i = 0; i < t->graves.n; i++) {
			obj *o = t->graves.v[i];
			if (g.v[i].reached) {
				t->graves.v[k++] = o;
			} else {
				grave_close(o, true);
				closed++;
			}
		}
		t->graves.n = k;
	}
	free(g.v);
	free(g.todo);
	tmap_free(&g.at);
	return closed;
}

/* The oldest grave that only descriptor sets reach (graves_collect), or
 * how many there are. */
static uint32_t oldest_weak(const trim *t)
{
	uint32_t i = 0;
	while (i < t->graves.n && !((obj *)t->graves.v[i])->grave_weak)
		i++;
	return i;
}

/* The graves read by nothing kept, closed; with FORCE, the oldest that
 * only descriptor sets reach (a set's past updates: the closure reads
 * through those only where it takes the set whole), found by a
 * collection where none is known, which closes what only the graves
 * hold; else the oldest (a collection that finds neither waits
 * GRAVES_QUIET forced sweeps). */
static void graves_sweep(trim *t, bool force)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < t->graves.n; i++) {
		obj *o = t->graves.v[i];
		if (o->refs == 1 + o->grave_refs)
			grave_close(o, true);
		else
			t->graves.v[k++] = o;
	}
	bool none = k == t->graves.n;
	t->graves.n = k;
	if (force && none && k) {
		uint32_t i = oldest_weak(t);
		if (i == k && t->graves_quiet) {
			t->graves_quiet--;
		} else if (i == k) {
			uint32_t closed = graves_collect(t);
			k = t->graves.n;
			i = oldest_weak(t);
			if (!closed && i == k)
				t->graves_quiet = GRAVES_QUIET;
		}
		if (k >= graves_most()) {
			i = i < k ? i : 0;
			grave_close(t->graves.v[i], false);
			memmove(t->graves.v + i, t->graves.v + i + 1, (--k - i) * sizeof(*t->graves.v));
			t->graves.n = k;
		}
	}
	t->graves_kept = t->graves.n;
}

static void grave_add(trim *t, obj *o)
{
	o->refs++;
	tmap seen = {0};
	o->grave_refs = writers_refs(o, o->writers, o->nwriters, &seen) +
			writers_refs(o, o->former, o->nformer, &seen);
	tmap_free(&seen);
	if (!graves_most()) {
		grave_close(o, false);
		return;
	}
	if (t->graves.n >= graves_most())
		graves_sweep(t, true);
	else if (t->graves.n >= t->graves_kept + GRAVES_SWEEP)
		graves_sweep(t, false);
	vec_push(&t->graves, o);
}

void obj_graves_free(trim *t)
{
	for (uint32_t i = 0; i < t->graves.n; i++)
		grave_close(t->graves.v[i], false);
	vec_free(&t->graves);
}

/* O ends with record R (NULL: with its pool): out of the map, kept only as
 * long as a record that is kept names it; what the GPU wrote into it,
 * kept in the graves. */
void obj_kill(trim *t, obj *o, rec *r)
{
	if (!o->alive)
		return;
	o->alive = false;
	omap_del(&t->objs, o);
	alias_unbind(o);
	obj_shed_rest(o);
	if (o->nwriters || o->nformer)
		grave_add(t, o);
	o->destroy = rec_ref(r);
	obj_unref(o);
}

/* Every object that came from POOL ends with it. */
void obj_kill_children(trim *t, obj *pool, rec *r)
{
	vec dead = {0};
	for (size_t i = 0; i < t->objs.cap; i++) {
		obj *o = t->objs.slot[i];
		if (o && o->owner == pool)
			vec_push(&dead, o);
	}
	for (uint32_t i = 0; i < dead.n; i++)
		obj_kill(t, dead.v[i], r);
	vec_free(&dead);
}

/* ------------------------------------------------------------------ */
/* Recordings and submits. */

void showing_unref(showing *w)
{
	if (w && !--w->refs)
		free(w);
}

void recording_unref(recording *r)
{
	if (!r || --r->refs)
		return;
	recs_release(&r->recs);
	for (uint32_t i = 0; i < r->execs.n; i++)
		recording_unref(r->execs.v[i]);
	vec_free(&r->execs);
	objs_release(&r->deps);
	tmap_free(&r->seen);
	free(r->writes);
	rec_unref(r->reset);
	for (uint32_t i = 0; i < r->nlays; i++)
		lay_free(&r->lays[i]);
	free(r->lays);
	breads_free(&r->reads);
	free(r->uses.v);
	for (uint32_t i = 0; i < r->nshown; i++)
		showing_unref(r->shown[i].w);
	free(r->shown);
	free(r->set_reads);
	free(r->evs);
	free(r);
}

/* The recording of secondary command buffer CB that R executes: the one
 * CB held when R's vkCmdExecuteCommands was recorded (Qt Quick frees its
 * secondaries, or records them again, after the frame's submit); CB's
 * current one where R took none. */
recording *recording_exec(const recording *r, const obj *cb)
{
	for (uint32_t i = 0; r && i < r->execs.n; i++) {
		recording *x = r->execs.v[i];
		if (x->deps.v[0] == cb)
			return x;
	}
	return cb->cur;
}

void recording_dep(recording *r, obj *o)
{
	if (!o || recording_names(r, o))
		return;
	o->refs++;
	vec_push(&r->deps, o);
	if (r->deps.n == DEPS_LISTED + 1) {
		for (uint32_t i = 0; i < r->deps.n; i++)
			tmap_put(&r->seen, r->deps.v[i], 1);
	} else if (r->deps.n > DEPS_LISTED + 1) {
		tmap_put(&r->seen, o, 1);
	}
}

/* What of O recording R writes, or NULL. */
const wrote *recording_wrote(const recording *r, const obj *o)
{
	for (uint32_t i = 0; i < r->nwrites; i++)
		if (r->writes[i].o == o)
			return &r->writes[i];
	return NULL;
}

/* A command of R writes the subresources SUBS of O, dropping what those
 * of DROPS held: where an earlier command of R wrote them, it decided. */
void recording_write(recording *r, obj *o, uint64_t subs, uint64_t drops)
{
	if (!o)
		return;
	recording_dep(r, o);
	wrote *w = (wrote *)recording_wrote(r, o);
	if (!w) {
		r->writes = array_grow(r->writes, r->nwrites, &r->capwrites, sizeof(*r->writes), 4);
		w = &r->writes[r->nwrites++];
		*w = (wrote){o, 0, 0};
	}
	w->dropped |= drops & subs & ~w->subs;
	w->subs |= subs;
}

/* Image O has LEVELS mip levels of LAYERS array layers, each with a
 * layout of its own, none known yet.  Past what a device makes (32
 * levels, 64 Ki subresources: a malformed create info) it has one layout
 * for all, as every image had before levels and layers had their own. */
void image_subresources(obj *o, uint32_t levels, uint32_t layers)
{
	if (o->layout && o->layout != o->lay1)
		free(o->layout);
	if (levels > 32 || layers > 65536 || (uint64_t)levels * layers > 65536)
		levels = layers = 1;
	o->levels = levels ? levels : 1;
	o->layers = layers ? layers : 1;
	o->nsub = o->levels * o->layers;
	o->layout = o->nsub == 1 ? o->lay1 : trace_xcalloc(3 * (size_t)o->nsub, sizeof(int32_t));
	o->sim = o->layout + o->nsub;
	o->from = o->sim + o->nsub;
	for (uint32_t i = 0; i < o->nsub; i++) {
		o->layout[i] = -1;
		o->sim[i] = o->initial;
		o->from[i] = NO_CHANGE;
	}
}

/* The levels [*L0, *L1) and layers [*A0, *A1) of image O that R names
 * (NULL: all), VK_REMAINING_* resolved and held to the image (a 2D view
 * of a 3D image names depth slices as layers: the image has one). */
void image_range(const obj *o, const VkImageSubresourceRange *r, uint32_t *l0, uint32_t *l1,
		 uint32_t *a0, uint32_t *a1)
{
	*l0 = *a0 = 0;
	*l1 = o->levels;
	*a1 = o->layers;
	if (!r)
		return;
	if (r->baseMipLevel < o->levels) {
		*l0 = r->baseMipLevel;
		if (r->levelCount != VK_REMAINING_MIP_LEVELS && r->levelCount < o->levels - *l0)
			*l1 = *l0 + r->levelCount;
	}
	if (r->baseArrayLayer < o->layers) {
		*a0 = r->baseArrayLayer;
		if (r->layerCount != VK_REMAINING_ARRAY_LAYERS && r->layerCount < o->layers - *a0)
			*a1 = *a0 + r->layerCount;
	}
}

/* The mask (obj_subs()) of the subresources of O that R names (NULL:
 * all); an image of one subresource, and any other object, has one.
 * Of an image whose bits are levels, a level R names some layers of is
 * in, unless ALL: then only the levels it names every layer of (what a
 * barrier from UNDEFINED drops of them is not all a level held). */
uint64_t image_subs_of(const obj *o, const VkImageSubresourceRange *r, bool all)
{
	if (o->nsub == 1 || !r)
		return obj_subs(o);
	uint32_t l0, l1, a0, a1;
	image_range(o, r, &l0, &l1, &a0, &a1);
	uint64_t m = 0;
	for (uint32_t l = l0; l < l1; l++) {
		if (o->nsub > 64) {
			if (!all || (a0 == 0 && a1 == o->layers))
				m |= 1ull << l;
			continue;
		}
		for (uint32_t a = a0; a < a1; a++)
			m |= 1ull << image_sub(o, l, a);
	}
	return m;
}

uint64_t image_subs(const obj *o, const VkImageSubresourceRange *r)
{
	return image_subs_of(o, r, false);
}

/* The same for the one level and the layers L of a copy's region names. */
uint64_t image_layers_subs(const obj *o, const VkImageSubresourceLayers *l)
{
	VkImageSubresourceRange r = {l->aspectMask, l->mipLevel, 1, l->baseArrayLayer,
				     l->layerCount};
	return image_subs(o, &r);
}

/* What of its image or buffer view V shows. */
uint64_t view_subs(const obj *v)
{
	if (!v->target)
		return 0;
	if (v->h != trim_types.image_view)
		return obj_subs(v->target);
	return image_subs(v->target, &v->sub);
}

/* Whether a submit left a layout on any subresource of O. */
bool image_laid(const obj *o)
{
	for (uint32_t i = 0; i < o->nsub; i++)
		if (o->layout[i] >= 0)
			return true;
	return false;
}

/* A lay of image O at the end of *V, named by nothing yet. */
lay *lay_new(lay **v, uint32_t *n, uint32_t *cap, obj *o)
{
	*v = array_grow(*v, *n, cap, sizeof(**v), 4);
	lay *l = &(*v)[(*n)++];
	*l = (lay){o, {-1, -1}, NULL};
	if (o->nsub > 1) {
		l->v = trace_xmalloc(2 * (size_t)o->nsub * sizeof(int32_t));
		for (uint32_t i = 0; i < 2 * o->nsub; i++)
			l->v[i] = -1;
	}
	return l;
}

void lay_free(lay *l)
{
	free(l->v);
}

/* A command of R expects subresources SUB of O in EXPECT and leaves them
 * in FINAL. */
void recording_layout(recording *r, obj *o, const VkImageSubresourceRange *sub, int32_t expect,
		      int32_t final)
{
	if (!o)
		return;
	lay *l = NULL;
	for (uint32_t i = 0; i < r->nlays && !l; i++)
		if (r->lays[i].o == o)
			l = &r->lays[i];
	if (!l)
		l = lay_new(&r->lays, &r->nlays, &r->caplays, o);
	uint32_t l0, l1, a0, a1;
	image_range(o, sub, &l0, &l1, &a0, &a1);
	int32_t *e = lay_expect(l), *f = lay_final(l);
	for (uint32_t a = a0; a < a1; a++)
		for (uint32_t m = l0; m < l1; m++) {
			uint32_t i = image_sub(o, m, a);
			if (e[i] < 0)
				e[i] = expect;
			f[i] = final;
		}
}

void submit_unref(submit *s)
{
	if (!s || --s->refs)
		return;
	rec_unref(s->r);
	obj_unref(s->queue);
	for (uint32_t i = 0; i < s->recordings.n; i++)
		recording_unref(s->recordings.v[i]);
	vec_free(&s->recordings);
	for (uint32_t i = 0; i < s->nsnaps; i++) {
		obj_unref(s->snaps[i].o);
		content_unref(s->snaps[i].c);
	}
	free(s->snaps);
	for (uint32_t i = 0; i < s->nbefore; i++) {
		lay_free(&s->before[i]);
		obj_unref(s->before[i].o);
	}
	free(s->before);
	breads_free(&s->reads);
	free(s->evwaits);
	free(s);
}

/* ------------------------------------------------------------------ */
/* The handles a Vulkan call names, its arguments. */

void finds_add(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
	       const vk_field *f)
{
	finds *fs = ctx;
	if (!*value)
		return;
	fs->v = array_grow(fs->v, fs->n, &fs->cap, sizeof(*fs->v), 16);
	fs->v[fs->n++] = (found){h, *value, f, top};
}

trim_handle_types trim_types;

void trim_types_init(void)
{
	trim_handle_types *ht = &trim_types;
	const struct {
		const vk_handle_info **h;
		const char *name;
	} types[] = {
		{&ht->buffer, "VkBuffer"}, {&ht->image, "VkImage"},
		{&ht->image_view, "VkImageView"}, {&ht->buffer_view, "VkBufferView"},
		{&ht->descriptor_set, "VkDescriptorSet"},
		{&ht->descriptor_update_template, "VkDescriptorUpdateTemplate"},
		{&ht->command_buffer, "VkCommandBuffer"}, {&ht->render_pass, "VkRenderPass"},
		{&ht->framebuffer, "VkFramebuffer"}, {&ht->semaphore, "VkSemaphore"},
		{&ht->fence, "VkFence"}, {&ht->queue, "VkQueue"}, {&ht->swapchain, "VkSwapchainKHR"},
		{&ht->memory, "VkDeviceMemory"}, {&ht->event, "VkEvent"},
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++)
		*types[i].h = vk_handle_lookup(types[i].name);
}

obj *obj_lookup(trim *t, const vk_handle_info *h, uint64_t v)
{
	obj *o = omap_get(&t->objs, v, h);
	const recording *r = t->then;
	/* in the range, a handle it made is its own object (trim_range) */
	if (!r && t->in_range && o && tmap_at(&t->range_made, v, (uint64_t)(uintptr_t)h))
		return NULL;
	/* the object of the handle now, most often the one it named */
	if (!r || (o && recording_names(r, o)))
		return o;
	for (uint32_t i = 0; i < r->deps.n; i++) {
		obj *x = r->deps.v[i];
		if (x->handle == v && x->h == h)
			return x;
	}
	return o;
}

/* Command buffer V: in the range, one the range allocated is its own
 * (trim_range), whatever the handle named before or not at all. */
obj *range_cb_lookup(trim *t, uint64_t v)
{
	uint64_t x;
	if (t->in_range && tmap_get(&t->range_cb, (void *)(uintptr_t)v, &x))
		return (obj *)(uintptr_t)x;
	return obj_lookup(t, trim_types.command_buffer, v);
}

/* Update template O's entries, a copy of those CI makes it with. */
void obj_template(obj *o, const VkDescriptorUpdateTemplateCreateInfo *ci)
{
	o->ntmpl = ci->descriptorUpdateEntryCount;
	o->tmpl = trace_xcalloc(o->ntmpl, sizeof(*o->tmpl));
	memcpy(o->tmpl, ci->pDescriptorUpdateEntries, o->ntmpl * sizeof(*o->tmpl));
}

/* The template a template write uses (one the range made, first) and its
 * pData, or NULL. */
const obj *template_of(trim *t, const trace_call *c, const vk_command_info *cmd,
		       const void *args, const trace_value **data)
{
	const char *n = cmd->sig.name;
	uint64_t tmpl, v;
	if (trim_named(n, "vkUpdateDescriptorSetWithTemplate"))
		tmpl = (uint64_t)((const vk_args_vkUpdateDescriptorSetWithTemplate *)args)
			       ->descriptorUpdateTemplate;
	else if (trim_named(n, "vkCmdPushDescriptorSetWithTemplate"))
		tmpl = (uint64_t)((const vk_args_vkCmdPushDescriptorSetWithTemplateKHR *)args)
			       ->descriptorUpdateTemplate;
	else
		return NULL;
	const obj *o = obj_lookup(t, trim_types.descriptor_update_template, tmpl);
	if (tmpl && tmap_get(&t->range_tmpl, (void *)(uintptr_t)tmpl, &v))
		o = (const obj *)(uintptr_t)v;
	if (!o || !o->tmpl)
		return NULL;
	for (uint32_t i = 0; i < c->sig->nargs; i++)
		if (!strcmp(c->sig->arg_names[i], "pData") && c->args[i].kind == TRACE_BLOB) {
			*data = &c->args[i];
			return o;
		}
	return NULL;
}

/* The handles in a template's pData (a blob: man/trace-format.5), after
 * those of the parameters; IN partial where a template write's are not
 * all found (its template unknown, its pData short, a type the walk does
 * not know). */
static void template_handles(trim *t, const trace_call *c, const vk_command_info *cmd,
			     const void *args, finds *in)
{
	const trace_value *v;
	const obj *o = template_of(t, c, cmd, args, &v);
	if (!o) {
		in->partial = trim_named(cmd->sig.name, "vkUpdateDescriptorSetWithTemplate") ||
			      trim_named(cmd->sig.name, "vkCmdPushDescriptorSetWithTemplate");
		return;
	}
	/* the walker may write: it gets a copy */
	void *copy = trace_arena_alloc(&t->scratch, v->len);
	memcpy(copy, v->blob, v->len);
	in->partial = !vk_walk_template_handles(o->tmpl, o->ntmpl, copy, v->len, finds_add, in);
}

/* The handles C names, into IN: its parameters', then those in a template
 * write's pData. */
void call_handles(trim *t, const trace_call *c, const vk_command_info *cmd, void *args,
		  finds *in)
{
	vk_walk_handles(cmd, args, false, finds_add, in);
	template_handles(t, c, cmd, args, in);
}

/* C's arguments decoded into *ARGS, in A (reset first); -1 with ERR. */
int trim_decode(trace_arena *a, const vk_command_info *cmd, const trace_call *c, void **args,
		trace_error *err)
{
	trace_arena_reset(a);
	*args = trace_arena_alloc(a, cmd->args_size);
	return vk_decode_args(cmd, c, a, *args, err);
}
