/*
 * vktrim: the live state of a trace and the setup prefix a range needs.
 * See vktrim.h for the model; the parts:
 *
 *   rec        a record kept, shared by reference count
 *   obj        a Vulkan object (or a VMA pool or allocation) alive, or
 *              dead but still named by a record someone keeps (a zombie:
 *              its destroying record is kept with it)
 *   recording  one recording of a command buffer, begin to end
 *   submit     a submit whose commands wrote buffers or images, with the
 *              host-written contents it read, as they were then
 *   content    the bytes the host wrote into a buffer or image: extents
 *              over shared blocks, copied on write, so that a submit's
 *              view of them costs a reference
 *
 * References run one way: records and recordings name objects, objects
 * name their writers only while alive.  What nothing names is freed.
 */
/* first: it includes <vulkan/vulkan.h> with the platforms it describes */
#include "vkschema_cmds.h"

#include "vktrim.h"

#include "tmap.h"
#include "vkschema.h"
#include "vma.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small containers. */

typedef struct vec {
	void **v;
	uint32_t n, cap;
} vec;

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		abort();
	return p;
}

static void vpush(vec *v, void *p)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 4;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
		if (!v->v)
			abort();
	}
	v->v[v->n++] = p;
}

static bool vhas(const vec *v, const void *p)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (v->v[i] == p)
			return true;
	return false;
}

static void vfree(vec *v)
{
	free(v->v);
	*v = (vec){0};
}

/* ------------------------------------------------------------------ */
/* The model. */

typedef struct submit submit;
typedef struct recording recording;

typedef struct rec {
	trace_call c;
	uint32_t refs;
	uint32_t stamp;     /* collected for this setup */
	submit *sub;        /* a submit's record: written with its care */
	struct obj *fixup;  /* a fence's or semaphore's creation: its state */
} rec;

typedef struct block {
	uint32_t refs;
	uint8_t data[];
} block;

typedef struct extent {
	uint64_t off, len;
	block *b;
	uint64_t boff;
} extent;

typedef struct content {
	uint32_t refs;
	uint32_t n, cap;
	extent *e;
} content;

typedef struct obj obj;
struct obj {
	uint64_t handle;
	const vk_handle_info *h;   /* NULL: a VMA object */
	uint32_t refs;             /* 1 while alive, + 1 per record set naming it */
	bool alive;
	uint32_t stamp;            /* in the closure being built */
	vec recs;                  /* rec*: creation, then what changed it */
	vec deps;                  /* obj*: what those records name */
	obj *owner;                /* the pool it came from */
	rec *destroy;              /* a zombie's end */
	content *cont;             /* buffers, images: host-written bytes */
	const content *emitted;    /* while writing: what the setup has written */
	vec writers;               /* submit*: the last to write it */
	recording *cur;            /* command buffers: the current recording */
	rec *reset;                /* command buffers: a reset since the last begin */
	uint64_t usage;
	obj *target;               /* views: the image or buffer */
	vec views;                 /* framebuffers: attachments (obj*, not referenced) */
	uint32_t discard;          /* render passes: attachments whose contents go */
	vec storage;               /* descriptor sets: written through storage descriptors */
	int fence;                 /* fences: 0 as created, 1 signaled, 2 unsignaled */
	uint64_t value;            /* timeline semaphores: the last value signaled */
	bool signaled;
	/* images: the layout the last submit left (-1 unknown), the one the
	 * setup has left so far, and what a barrier on them names */
	int32_t layout, sim, initial;
	VkImageAspectFlags aspect;
	/* render passes: each attachment's initial and final layout */
	uint32_t natt;
	int32_t *att_layout;       /* 2 per attachment */
	/* queues: their family and device */
	uint32_t family;
	uint64_t device;
	int range_use;             /* command buffers: 0, 1 re-recorded first in the range, 2 used */
	VkDescriptorUpdateTemplateEntry *tmpl;  /* update templates: their entries */
	uint32_t ntmpl;
};

/* An image's layout across one recording: what its first command needs
 * (UNDEFINED: anything) and what the last leaves. */
typedef struct lay {
	obj *o;
	int32_t expect, final;
} lay;

struct recording {
	uint32_t refs;
	uint32_t stamp;
	vec recs;
	vec deps;                  /* obj*, referenced */
	tmap seen;                 /* obj* -> 1 for deps */
	vec writes;                /* obj* (in deps) the commands write */
	vec discards;              /* obj* whose earlier contents they discard */
	rec *reset;                /* the reset before its begin */
	lay *lays;
	uint32_t nlays, caplays;
};

typedef struct snap {
	obj *o;
	content *c;
} snap;

struct submit {
	uint32_t refs;
	uint32_t stamp;
	rec *r;
	obj *queue;
	vec recordings;            /* recording*, referenced */
	snap *snaps;               /* host-written contents it saw */
	uint32_t nsnaps;
	lay *before;               /* the layouts of the images it names, then */
	uint32_t nbefore;
};

typedef struct omap {
	obj **slot;
	size_t cap, n;
} omap;

/* How a function changes the state; found once per signature. */
enum kind {
	K_UNSEEN = 0,
	K_OTHER,          /* attach to its subjects, or keep globally */
	K_DROP,           /* nothing the setup needs: waits, presents, maps */
	K_CREATE,
	K_DESTROY,
	K_BEGIN,
	K_RECORD,
	K_RESET_CB,
	K_RESET_CMD_POOL,
	K_RESET_DESC_POOL,
	K_SUBMIT,
	K_SUBMIT2,
	K_RESET_FENCES,
	K_SIGNAL,
	K_UPDATE_SETS,
	K_UPDATE,         /* tracekit.update */
	K_VMA_CREATE,
	K_VMA_DESTROY,
	K_VMA_MAP,
	K_VMA_UNMAP,
	K_VMA_OTHER,
	K_VMA_GLOBAL,     /* keep the last of each */
	K_VMA_TIME,
};

struct trim {
	trim_api api;
	trace_sigtab *sigs;
	omap objs;
	vec globals;          /* rec*: records with no object to belong to */
	tmap kinds;           /* sig -> kind + 1 */
	tmap cmds;            /* sig -> vk_command_info* */
	trace_arena scratch;
	uint32_t stamp;
	vec roots;            /* obj*: what the range names */
	tmap rooted;
	rec *last_time;       /* VMA: the last tracekit.time */
	trace_error *err;
	const trace_call *call;
	uint64_t live_records;
	uint64_t fake;        /* handles of objects the setup makes itself */
};

/* ------------------------------------------------------------------ */
/* Records. */

static rec *rec_new(const trace_call *c)
{
	rec *r = xcalloc(1, sizeof(*r));
	trace_call_init(&r->c);
	trace_call_copy(&r->c, c);
	r->refs = 1;
	return r;
}

static rec *rec_ref(rec *r)
{
	if (r)
		r->refs++;
	return r;
}

static void rec_unref(rec *r)
{
	if (!r || --r->refs)
		return;
	trace_call_free(&r->c);
	free(r);
}

/* ------------------------------------------------------------------ */
/* Contents: extents over shared blocks. */

static void block_unref(block *b)
{
	if (b && !--b->refs)
		free(b);
}

static void content_unref(content *c)
{
	if (!c || --c->refs)
		return;
	for (uint32_t i = 0; i < c->n; i++)
		block_unref(c->e[i].b);
	free(c->e);
	free(c);
}

static content *content_ref(content *c)
{
	c->refs++;
	return c;
}

/* O's contents, its own to change (copied if a submit shares them). */
static content *content_own(obj *o)
{
	content *c = o->cont;
	if (c && c->refs == 1)
		return c;
	content *n = xcalloc(1, sizeof(*n));
	n->refs = 1;
	if (c) {
		n->cap = c->n + 4;
		n->e = xmalloc(n->cap * sizeof(*n->e));
		memcpy(n->e, c->e, c->n * sizeof(*n->e));
		n->n = c->n;
		for (uint32_t i = 0; i < n->n; i++)
			n->e[i].b->refs++;
		content_unref(c);
	}
	o->cont = n;
	return n;
}

static void content_write(obj *o, uint64_t off, const uint8_t *data, uint64_t len)
{
	if (!len)
		return;
	content *c = content_own(o);
	block *b = xmalloc(sizeof(*b) + len);
	b->refs = 0;
	memcpy(b->data, data, len);
	uint64_t end = off + len;
	/* the extents before, the pieces left of those it overlaps, the new
	 * one, the pieces right of them, the extents after */
	extent *out = xmalloc((c->n + 2) * sizeof(*out));
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
	b->refs++;
	out[k++] = (extent){off, len, b, 0};
	if (right.b)
		out[k++] = right;
	/* at most one more than before, or two where it splits one */
	uint32_t rest = c->n - i;
	if (rest)
		memcpy(out + k, c->e + i, rest * sizeof(*out));
	free(c->e);
	c->cap = c->n + 2;
	c->e = out;
	c->n = k + rest;
}

/* ------------------------------------------------------------------ */
/* Objects. */

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
		m->slot = xcalloc(m->cap, sizeof(*m->slot));
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

static void recording_unref(recording *r);
static void submit_unref(submit *s);

static void obj_unref(obj *o);

/* What an object dead or dying no longer needs: its contents do not
 * matter, nothing will run its commands. */
static void obj_shed(obj *o)
{
	for (uint32_t i = 0; i < o->writers.n; i++)
		submit_unref(o->writers.v[i]);
	vfree(&o->writers);
	content_unref(o->cont);
	o->cont = NULL;
	recording_unref(o->cur);
	o->cur = NULL;
	rec_unref(o->reset);
	o->reset = NULL;
	for (uint32_t i = 0; i < o->storage.n; i++)
		obj_unref(o->storage.v[i]);
	vfree(&o->storage);
}

static void obj_unref(obj *o)
{
	if (!o || --o->refs)
		return;
	obj_shed(o);
	for (uint32_t i = 0; i < o->recs.n; i++)
		rec_unref(o->recs.v[i]);
	vfree(&o->recs);
	for (uint32_t i = 0; i < o->deps.n; i++)
		obj_unref(o->deps.v[i]);
	vfree(&o->deps);
	obj_unref(o->owner);
	obj_unref(o->target);
	vfree(&o->views);
	free(o->att_layout);
	free(o->tmpl);
	rec_unref(o->destroy);
	free(o);
}

static void obj_dep(obj *o, obj *d)
{
	if (!d || d == o || vhas(&o->deps, d))
		return;
	d->refs++;
	vpush(&o->deps, d);
}

static obj *obj_new(trim *t, uint64_t handle, const vk_handle_info *h)
{
	obj *o = xcalloc(1, sizeof(*o));
	o->handle = handle;
	o->h = h;
	o->refs = 1;
	o->alive = true;
	o->layout = -1;
	o->aspect = VK_IMAGE_ASPECT_COLOR_BIT;
	omap_put(&t->objs, o);
	return o;
}

/* O ends with record R (NULL: with its pool): out of the map, kept only as
 * long as a record that is kept names it. */
static void obj_kill(trim *t, obj *o, rec *r)
{
	if (!o->alive)
		return;
	o->alive = false;
	omap_del(&t->objs, o);
	obj_shed(o);
	o->destroy = rec_ref(r);
	obj_unref(o);
}

/* Every object that came from POOL ends with it. */
static void kill_children(trim *t, obj *pool, rec *r)
{
	vec dead = {0};
	for (size_t i = 0; i < t->objs.cap; i++) {
		obj *o = t->objs.slot[i];
		if (o && o->owner == pool)
			vpush(&dead, o);
	}
	for (uint32_t i = 0; i < dead.n; i++)
		obj_kill(t, dead.v[i], r);
	vfree(&dead);
}

/* ------------------------------------------------------------------ */
/* Recordings and submits. */

static void recording_unref(recording *r)
{
	if (!r || --r->refs)
		return;
	for (uint32_t i = 0; i < r->recs.n; i++)
		rec_unref(r->recs.v[i]);
	vfree(&r->recs);
	for (uint32_t i = 0; i < r->deps.n; i++)
		obj_unref(r->deps.v[i]);
	vfree(&r->deps);
	tmap_free(&r->seen);
	vfree(&r->writes);
	vfree(&r->discards);
	rec_unref(r->reset);
	free(r->lays);
	free(r);
}

static void recording_dep(recording *r, obj *o)
{
	if (!o || tmap_get(&r->seen, o, NULL))
		return;
	tmap_put(&r->seen, o, 1);
	o->refs++;
	vpush(&r->deps, o);
}

static void recording_write(recording *r, obj *o, bool discard)
{
	if (!o)
		return;
	recording_dep(r, o);
	if (vhas(&r->writes, o))
		return;
	vpush(&r->writes, o);
	if (discard)
		vpush(&r->discards, o);
}

static void recording_layout(recording *r, obj *o, int32_t expect, int32_t final)
{
	if (!o)
		return;
	for (uint32_t i = 0; i < r->nlays; i++)
		if (r->lays[i].o == o) {
			r->lays[i].final = final;
			return;
		}
	if (r->nlays == r->caplays) {
		r->caplays = r->caplays ? 2 * r->caplays : 4;
		r->lays = realloc(r->lays, r->caplays * sizeof(*r->lays));
		if (!r->lays)
			abort();
	}
	r->lays[r->nlays++] = (lay){o, expect, final};
}

static void submit_unref(submit *s)
{
	if (!s || --s->refs)
		return;
	rec_unref(s->r);
	obj_unref(s->queue);
	for (uint32_t i = 0; i < s->recordings.n; i++)
		recording_unref(s->recordings.v[i]);
	vfree(&s->recordings);
	for (uint32_t i = 0; i < s->nsnaps; i++) {
		obj_unref(s->snaps[i].o);
		content_unref(s->snaps[i].c);
	}
	free(s->snaps);
	for (uint32_t i = 0; i < s->nbefore; i++)
		obj_unref(s->before[i].o);
	free(s->before);
	free(s);
}

/* ------------------------------------------------------------------ */
/* Classifying functions. */

static bool named(const char *n, const char *base)
{
	size_t k = strlen(base);
	return !strncmp(n, base, k) && (!n[k] || !strcmp(n + k, "KHR") || !strcmp(n + k, "EXT"));
}

static enum kind vk_kind(const char *n, const vk_command_info *cmd)
{
	static const char *const drop[] = {
		"vkQueuePresentKHR", "vkAcquireNextImageKHR", "vkAcquireNextImage2KHR",
		"vkWaitForFences", "vkGetFenceStatus", "vkWaitSemaphores",
		"vkGetSemaphoreCounterValue", "vkQueueWaitIdle", "vkDeviceWaitIdle",
		"vkGetQueryPoolResults", "vkMapMemory", "vkMapMemory2", "vkUnmapMemory",
		"vkUnmapMemory2", "vkFlushMappedMemoryRanges", "vkInvalidateMappedMemoryRanges",
		"vkGetEventStatus", "vkSetEvent", "vkResetEvent", "vkQueueBindSparse",
		"vkGetSwapchainStatusKHR", "vkGetDeviceMemoryCommitment",
		"vkGetInstanceProcAddr", "vkGetDeviceProcAddr",
	};
	for (size_t i = 0; i < sizeof(drop) / sizeof(*drop); i++)
		if (named(n, drop[i]))
			return K_DROP;
	if (named(n, "vkQueueSubmit"))
		return K_SUBMIT;
	if (named(n, "vkQueueSubmit2"))
		return K_SUBMIT2;
	if (named(n, "vkBeginCommandBuffer"))
		return K_BEGIN;
	if (named(n, "vkEndCommandBuffer"))
		return K_RECORD;
	if (named(n, "vkResetCommandBuffer"))
		return K_RESET_CB;
	if (named(n, "vkResetCommandPool"))
		return K_RESET_CMD_POOL;
	if (named(n, "vkResetDescriptorPool"))
		return K_RESET_DESC_POOL;
	if (named(n, "vkResetFences"))
		return K_RESET_FENCES;
	if (named(n, "vkSignalSemaphore"))
		return K_SIGNAL;
	if (named(n, "vkUpdateDescriptorSets"))
		return K_UPDATE_SETS;
	switch (cmd->action) {
	case VK_ACTION_CREATE:
	case VK_ACTION_ALLOCATE:
	case VK_ACTION_GET: return K_CREATE;
	case VK_ACTION_DESTROY:
	case VK_ACTION_FREE: return K_DESTROY;
	case VK_ACTION_RECORD: return K_RECORD;
	default: return K_OTHER;
	}
}

static enum kind vma_kind(const char *n)
{
	if (!strcmp(n, "tracekit.time"))
		return K_VMA_TIME;
	if (!strncmp(n, "tracekit.", 9))
		return K_DROP;
	const vma_function *f = vma_function_lookup(n, strlen(n));
	if (!f)
		return K_UNSEEN;
	if (!strncmp(n, "vmaFree", 7) || !strncmp(n, "vmaDestroy", 10))
		return K_VMA_DESTROY;
	if (!strcmp(n, "vmaMapMemory"))
		return K_VMA_MAP;
	if (!strcmp(n, "vmaUnmapMemory"))
		return K_VMA_UNMAP;
	for (uint32_t i = 0; i < f->nparams; i++)
		if (f->params[i].output)
			return K_VMA_CREATE;
	for (uint32_t i = 0; i < f->nparams; i++)
		if (f->params[i].type == VMA_POINTER || f->params[i].type == VMA_POINTER_LIST)
			return K_VMA_OTHER;
	return K_VMA_GLOBAL;
}

static enum kind kind_of(trim *t, const trace_call *c, const vk_command_info **cmd)
{
	uint64_t v;
	*cmd = NULL;
	if (tmap_get(&t->cmds, c->sig, &v))
		*cmd = (const vk_command_info *)(uintptr_t)v;
	if (tmap_get(&t->kinds, c->sig, &v))
		return (enum kind)(v - 1);
	const char *n = c->sig->name;
	enum kind k = K_UNSEEN;
	if (t->api == TRIM_VMA) {
		k = vma_kind(n);
	} else if (!strcmp(n, VK_UPDATE_CALL)) {
		k = K_UPDATE;
	} else if (!strncmp(n, "tracekit.", 9)) {
		k = K_DROP;
	} else if ((*cmd = trace_vk_command(n))) {
		k = vk_kind(n, *cmd);
		tmap_put(&t->cmds, c->sig, (uint64_t)(uintptr_t)*cmd);
	}
	tmap_put(&t->kinds, c->sig, (uint64_t)k + 1);
	return k;
}

/* ------------------------------------------------------------------ */
/* The handles a Vulkan call names. */

typedef struct found {
	const vk_handle_info *h;
	uint64_t value;
	const vk_field *f;
	bool top;
} found;

typedef struct finds {
	found *v;
	uint32_t n, cap;
} finds;

static void find_fn(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		    const vk_field *f)
{
	finds *fs = ctx;
	if (!*value)
		return;
	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 16;
		fs->v = realloc(fs->v, fs->cap * sizeof(*fs->v));
		if (!fs->v)
			abort();
	}
	fs->v[fs->n++] = (found){h, *value, f, top};
}

/* The handle types the state looks at, found in the schema once. */
static struct {
	const vk_handle_info *buffer;
	const vk_handle_info *image;
	const vk_handle_info *image_view;
	const vk_handle_info *buffer_view;
	const vk_handle_info *descriptor_set;
	const vk_handle_info *descriptor_update_template;
	const vk_handle_info *command_buffer;
	const vk_handle_info *render_pass;
	const vk_handle_info *framebuffer;
	const vk_handle_info *semaphore;
	const vk_handle_info *fence;
	const vk_handle_info *queue;
} H;

static void handles_init(void)
{
	H.buffer = vk_handle_lookup("VkBuffer");
	H.image = vk_handle_lookup("VkImage");
	H.image_view = vk_handle_lookup("VkImageView");
	H.buffer_view = vk_handle_lookup("VkBufferView");
	H.descriptor_set = vk_handle_lookup("VkDescriptorSet");
	H.descriptor_update_template = vk_handle_lookup("VkDescriptorUpdateTemplate");
	H.command_buffer = vk_handle_lookup("VkCommandBuffer");
	H.render_pass = vk_handle_lookup("VkRenderPass");
	H.framebuffer = vk_handle_lookup("VkFramebuffer");
	H.semaphore = vk_handle_lookup("VkSemaphore");
	H.fence = vk_handle_lookup("VkFence");
	H.queue = vk_handle_lookup("VkQueue");
}

static obj *lookup(trim *t, const vk_handle_info *h, uint64_t v)
{
	return omap_get(&t->objs, v, h);
}

/* The handles in a template's pData (a blob: man/trace-format.5), after
 * those of the parameters. */
static void template_handles(trim *t, const trace_call *c, const vk_command_info *cmd,
			     const void *args, finds *in)
{
	const char *n = cmd->sig.name;
	uint64_t tmpl;
	if (named(n, "vkUpdateDescriptorSetWithTemplate"))
		tmpl = (uint64_t)((const vk_args_vkUpdateDescriptorSetWithTemplate *)args)
			       ->descriptorUpdateTemplate;
	else if (named(n, "vkCmdPushDescriptorSetWithTemplate"))
		tmpl = (uint64_t)((const vk_args_vkCmdPushDescriptorSetWithTemplateKHR *)args)
			       ->descriptorUpdateTemplate;
	else
		return;
	obj *o = lookup(t, H.descriptor_update_template, tmpl);
	if (!o || !o->tmpl)
		return;
	for (uint32_t i = 0; i < c->sig->nargs; i++) {
		const trace_value *v = &c->args[i];
		if (strcmp(c->sig->arg_names[i], "pData") || v->kind != TRACE_BLOB)
			continue;
		/* the walker may write: it gets a copy */
		void *copy = trace_arena_alloc(&t->scratch, v->len);
		memcpy(copy, v->blob, v->len);
		vk_walk_template_handles(o->tmpl, o->ntmpl, copy, v->len, find_fn, in);
	}
}

/* ------------------------------------------------------------------ */
/* Before the range. */

static void attach(obj *o, rec *r)
{
	if (!vhas(&o->recs, r))
		vpush(&o->recs, rec_ref(r));
}

/* R belongs to O: O keeps it, and everything it names. */
static void attach_all(trim *t, obj *o, rec *r, const finds *in)
{
	attach(o, r);
	for (uint32_t i = 0; i < in->n; i++)
		obj_dep(o, lookup(t, in->v[i].h, in->v[i].value));
}

static void keep_global(trim *t, rec *r)
{
	vpush(&t->globals, rec_ref(r));
	t->live_records++;
}

static bool storage_type(VkDescriptorType ty)
{
	return ty == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE || ty == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER ||
	       ty == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER ||
	       ty == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
}

/* What a write of storage descriptors lets shaders write: images (through
 * their views), buffers, texel buffers (through theirs). */
static void storage_targets(trim *t, const VkWriteDescriptorSet *w, vec *out)
{
	if (!storage_type(w->descriptorType))
		return;
	const vk_handle_info *himg = H.image_view;
	const vk_handle_info *hbuf = H.buffer;
	const vk_handle_info *hbv = H.buffer_view;
	for (uint32_t i = 0; i < w->descriptorCount; i++) {
		obj *o = NULL;
		if (w->descriptorType == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE && w->pImageInfo)
			o = lookup(t, himg, (uint64_t)w->pImageInfo[i].imageView);
		else if (w->descriptorType == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER &&
			 w->pTexelBufferView)
			o = lookup(t, hbv, (uint64_t)w->pTexelBufferView[i]);
		else if (w->pBufferInfo)
			o = lookup(t, hbuf, (uint64_t)w->pBufferInfo[i].buffer);
		if (o && o->target)
			o = o->target;
		if (o && !vhas(out, o))
			vpush(out, o);
	}
}

static void update_sets(trim *t, rec *r, const void *args, const finds *in)
{
	const vk_args_vkUpdateDescriptorSets *a = args;
	const vk_handle_info *hset = H.descriptor_set;
	for (uint32_t i = 0; i < a->descriptorWriteCount; i++) {
		obj *s = lookup(t, hset, (uint64_t)a->pDescriptorWrites[i].dstSet);
		if (!s)
			continue;
		attach_all(t, s, r, in);
		vec st = {0};
		storage_targets(t, &a->pDescriptorWrites[i], &st);
		for (uint32_t k = 0; k < st.n; k++) {
			obj *o = st.v[k];
			if (!vhas(&s->storage, o)) {
				o->refs++;
				vpush(&s->storage, o);
			}
		}
		vfree(&st);
	}
	for (uint32_t i = 0; i < a->descriptorCopyCount; i++) {
		obj *s = lookup(t, hset, (uint64_t)a->pDescriptorCopies[i].dstSet);
		if (s)
			attach_all(t, s, r, in);
	}
}

static VkImageAspectFlags aspect_of(VkFormat f)
{
	switch (f) {
	case VK_FORMAT_D16_UNORM:
	case VK_FORMAT_X8_D24_UNORM_PACK32:
	case VK_FORMAT_D32_SFLOAT: return VK_IMAGE_ASPECT_DEPTH_BIT;
	case VK_FORMAT_S8_UINT: return VK_IMAGE_ASPECT_STENCIL_BIT;
	case VK_FORMAT_D16_UNORM_S8_UINT:
	case VK_FORMAT_D24_UNORM_S8_UINT:
	case VK_FORMAT_D32_SFLOAT_S8_UINT:
		return VK_IMAGE_ASPECT_DEPTH_BIT | VK_IMAGE_ASPECT_STENCIL_BIT;
	default: return VK_IMAGE_ASPECT_COLOR_BIT;
	}
}

/* Render pass O's attachment I: its layouts, and whether its contents go
 * at the start (a transition from UNDEFINED, or nothing loaded). */
static void attachment(obj *o, uint32_t i, VkImageLayout initial, VkImageLayout final,
		       VkAttachmentLoadOp load, VkAttachmentLoadOp stencil_load)
{
	o->att_layout[2 * i] = initial;
	o->att_layout[2 * i + 1] = final;
	if (i < 32 && (initial == VK_IMAGE_LAYOUT_UNDEFINED ||
		       (load != VK_ATTACHMENT_LOAD_OP_LOAD && stencil_load != VK_ATTACHMENT_LOAD_OP_LOAD)))
		o->discard |= 1u << i;
}

/* Creation: the object remembers what later analysis wants of it. */
static void created(trim *t, obj *o, const char *n, const void *args)
{
	if (!strcmp(n, "vkCreateBuffer")) {
		o->usage = ((const vk_args_vkCreateBuffer *)args)->pCreateInfo->usage;
	} else if (!strcmp(n, "vkCreateImage")) {
		const VkImageCreateInfo *ci = ((const vk_args_vkCreateImage *)args)->pCreateInfo;
		o->usage = ci->usage;
		o->initial = ci->initialLayout;
		o->aspect = aspect_of(ci->format);
	} else if (!strcmp(n, "vkGetDeviceQueue")) {
		const vk_args_vkGetDeviceQueue *a = args;
		o->family = a->queueFamilyIndex;
		o->device = (uint64_t)(uintptr_t)a->device;
	} else if (!strcmp(n, "vkGetDeviceQueue2")) {
		const vk_args_vkGetDeviceQueue2 *a = args;
		o->family = a->pQueueInfo->queueFamilyIndex;
		o->device = (uint64_t)(uintptr_t)a->device;
	} else if (!strcmp(n, "vkCreateImageView")) {
		const vk_args_vkCreateImageView *a = args;
		o->target = lookup(t, H.image, (uint64_t)a->pCreateInfo->image);
	} else if (!strcmp(n, "vkCreateBufferView")) {
		const vk_args_vkCreateBufferView *a = args;
		o->target = lookup(t, H.buffer, (uint64_t)a->pCreateInfo->buffer);
	} else if (!strcmp(n, "vkCreateFramebuffer")) {
		const VkFramebufferCreateInfo *ci = ((const vk_args_vkCreateFramebuffer *)args)->pCreateInfo;
		const vk_handle_info *hv = H.image_view;
		if (!(ci->flags & VK_FRAMEBUFFER_CREATE_IMAGELESS_BIT))
			for (uint32_t i = 0; i < ci->attachmentCount && ci->pAttachments; i++)
				vpush(&o->views, lookup(t, hv, (uint64_t)ci->pAttachments[i]));
	} else if (!strcmp(n, "vkCreateRenderPass")) {
		const VkRenderPassCreateInfo *ci = ((const vk_args_vkCreateRenderPass *)args)->pCreateInfo;
		o->natt = ci->attachmentCount;
		o->att_layout = xcalloc(2 * o->natt, sizeof(*o->att_layout));
		for (uint32_t i = 0; i < ci->attachmentCount; i++) {
			const VkAttachmentDescription *d = &ci->pAttachments[i];
			attachment(o, i, d->initialLayout, d->finalLayout, d->loadOp, d->stencilLoadOp);
		}
	} else if (named(n, "vkCreateRenderPass2")) {
		const VkRenderPassCreateInfo2 *ci = ((const vk_args_vkCreateRenderPass2 *)args)->pCreateInfo;
		o->natt = ci->attachmentCount;
		o->att_layout = xcalloc(2 * o->natt, sizeof(*o->att_layout));
		for (uint32_t i = 0; i < ci->attachmentCount; i++) {
			const VkAttachmentDescription2 *d = &ci->pAttachments[i];
			attachment(o, i, d->initialLayout, d->finalLayout, d->loadOp, d->stencilLoadOp);
		}
	} else if (named(n, "vkCreateDescriptorUpdateTemplate")) {
		const VkDescriptorUpdateTemplateCreateInfo *ci =
			((const vk_args_vkCreateDescriptorUpdateTemplate *)args)->pCreateInfo;
		o->ntmpl = ci->descriptorUpdateEntryCount;
		o->tmpl = xcalloc(o->ntmpl, sizeof(*o->tmpl));
		memcpy(o->tmpl, ci->pDescriptorUpdateEntries, o->ntmpl * sizeof(*o->tmpl));
	} else if (!strcmp(n, "vkCreateFence")) {
		const vk_args_vkCreateFence *a = args;
		o->fence = a->pCreateInfo->flags & VK_FENCE_CREATE_SIGNALED_BIT ? 1 : 2;
	}
	if (o->target)
		o->target->refs++;
}

static void create(trim *t, rec *r, const vk_command_info *cmd, const void *args, const finds *in)
{
	finds out = {0};
	vk_walk_handles(cmd, (void *)args, true, find_fn, &out);
	const char *n = cmd->sig.name;
	if (!out.n) {
		/* a count query: the call that fills comes next */
		keep_global(t, r);
		free(out.v);
		return;
	}
	obj *owner = NULL;
	if (cmd->action == VK_ACTION_ALLOCATE)
		for (uint32_t i = 0; i < in->n && !owner; i++)
			if (in->v[i].h && strstr(in->v[i].h->name, "Pool"))
				owner = lookup(t, in->v[i].h, in->v[i].value);
	for (uint32_t i = 0; i < out.n; i++) {
		obj *o = lookup(t, out.v[i].h, out.v[i].value);
		if (o && cmd->action == VK_ACTION_GET)
			continue; /* asked again: the first answer made it */
		if (o) /* a handle reused without a destroy we saw */
			obj_kill(t, o, NULL);
		o = obj_new(t, out.v[i].value, out.v[i].h);
		attach_all(t, o, r, in);
		if (owner) {
			owner->refs++;
			o->owner = owner;
		}
		created(t, o, n, args);
		t->live_records++;
	}
	if (!strcmp(n, "vkCreateSemaphore")) {
		const vk_args_vkCreateSemaphore *a = args;
		obj *o = lookup(t, out.v[0].h, out.v[0].value);
		for (const VkBaseInStructure *p = a->pCreateInfo->pNext; p; p = p->pNext)
			if (p->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {
				const VkSemaphoreTypeCreateInfo *ty = (const void *)p;
				if (ty->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE) {
					o->signaled = true;
					o->value = ty->initialValue;
				}
			}
	}
	if (!strcmp(n, "vkCreateFence") || (!strcmp(n, "vkCreateSemaphore") &&
					    lookup(t, out.v[0].h, out.v[0].value)->signaled))
		r->fixup = lookup(t, out.v[0].h, out.v[0].value);
	free(out.v);
}

static void destroy(trim *t, rec *r, const vk_command_info *cmd, const finds *in)
{
	for (uint32_t i = 0; i < in->n; i++) {
		if (in->v[i].h != cmd->object)
			continue;
		obj *o = lookup(t, in->v[i].h, in->v[i].value);
		if (!o)
			continue;
		if (strstr(o->h->name, "Pool"))
			kill_children(t, o, r);
		obj_kill(t, o, r);
	}
}

/* The command buffer a vkCmd* (or begin, end, reset) names first. */
static obj *command_buffer(trim *t, const finds *in)
{
	if (in->n && in->v[0].top && in->v[0].h == H.command_buffer)
		return lookup(t, in->v[0].h, in->v[0].value);
	return NULL;
}

static recording *recording_new(obj *cb)
{
	recording *r = xcalloc(1, sizeof(*r));
	r->refs = 1;
	/* it needs its command buffer: the cycle ends when the buffer dies */
	recording_dep(r, cb);
	r->reset = cb->reset;
	cb->reset = NULL;
	recording_unref(cb->cur);
	cb->cur = r;
	return r;
}

/* The images a render pass instance writes, and which it discards. */
static void render_pass_writes(trim *t, recording *rc, const VkRenderPassBeginInfo *bi)
{
	obj *rp = lookup(t, H.render_pass, (uint64_t)bi->renderPass);
	obj *fb = lookup(t, H.framebuffer, (uint64_t)bi->framebuffer);
	if (!fb)
		return;
	const vk_handle_info *hv = H.image_view;
	vec views = {0};
	for (uint32_t i = 0; i < fb->views.n; i++)
		vpush(&views, fb->views.v[i]);
	for (const VkBaseInStructure *p = bi->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_RENDER_PASS_ATTACHMENT_BEGIN_INFO) {
			const VkRenderPassAttachmentBeginInfo *ab = (const void *)p;
			for (uint32_t i = 0; i < ab->attachmentCount; i++)
				vpush(&views, lookup(t, hv, (uint64_t)ab->pAttachments[i]));
		}
	for (uint32_t i = 0; i < views.n; i++) {
		obj *v = views.v[i];
		if (!v || !v->target)
			continue;
		recording_write(rc, v->target, rp && i < 32 && (rp->discard >> i & 1));
		if (rp && i < rp->natt)
			recording_layout(rc, v->target, rp->att_layout[2 * i], rp->att_layout[2 * i + 1]);
	}
	vfree(&views);
}

static void rendering_writes(trim *t, recording *rc, const VkRenderingInfo *ri)
{
	const vk_handle_info *hv = H.image_view;
	const VkRenderingAttachmentInfo *att[34];
	uint32_t n = 0;
	for (uint32_t i = 0; i < ri->colorAttachmentCount && n < 32; i++)
		att[n++] = &ri->pColorAttachments[i];
	if (ri->pDepthAttachment)
		att[n++] = ri->pDepthAttachment;
	if (ri->pStencilAttachment)
		att[n++] = ri->pStencilAttachment;
	for (uint32_t i = 0; i < n; i++) {
		obj *v = lookup(t, hv, (uint64_t)att[i]->imageView);
		if (v && v->target) {
			recording_write(rc, v->target, att[i]->loadOp != VK_ATTACHMENT_LOAD_OP_LOAD);
			recording_layout(rc, v->target, att[i]->imageLayout, att[i]->imageLayout);
		}
		v = lookup(t, hv, (uint64_t)att[i]->resolveImageView);
		if (v && v->target) {
			recording_write(rc, v->target, false);
			recording_layout(rc, v->target, att[i]->resolveImageLayout,
					 att[i]->resolveImageLayout);
		}
	}
}

/* A barrier changes an image's layout, not its contents, unless it comes
 * from UNDEFINED: then what was there is gone. */
static void barrier_image(recording *rc, obj *o, VkImageLayout from, VkImageLayout to)
{
	if (!o)
		return;
	recording_dep(rc, o);
	if (from == VK_IMAGE_LAYOUT_UNDEFINED)
		recording_write(rc, o, true);
	recording_layout(rc, o, from, to);
}

static void barrier_writes(trim *t, recording *rc, const VkImageMemoryBarrier *b, uint32_t n)
{
	const vk_handle_info *hi = H.image;
	for (uint32_t i = 0; i < n; i++) {
		obj *o = lookup(t, hi, (uint64_t)b[i].image);
		barrier_image(rc, o, b[i].oldLayout, b[i].newLayout);
	}
}

static void barrier2_writes(trim *t, recording *rc, const VkDependencyInfo *d)
{
	const vk_handle_info *hi = H.image;
	for (uint32_t i = 0; i < d->imageMemoryBarrierCount; i++) {
		const VkImageMemoryBarrier2 *b = &d->pImageMemoryBarriers[i];
		obj *o = lookup(t, hi, (uint64_t)b->image);
		barrier_image(rc, o, b->oldLayout, b->newLayout);
	}
}

/* The writes (and layouts) of commands whose structs say more than their
 * handles: barriers, render passes, push descriptors. */
static void record_special(trim *t, recording *rc, const char *n, const void *args)
{
	if (!strcmp(n, "vkCmdPipelineBarrier")) {
		const vk_args_vkCmdPipelineBarrier *a = args;
		barrier_writes(t, rc, a->pImageMemoryBarriers, a->imageMemoryBarrierCount);
	} else if (named(n, "vkCmdPipelineBarrier2")) {
		barrier2_writes(t, rc, ((const vk_args_vkCmdPipelineBarrier2 *)args)->pDependencyInfo);
	} else if (!strcmp(n, "vkCmdBeginRenderPass")) {
		render_pass_writes(t, rc, ((const vk_args_vkCmdBeginRenderPass *)args)->pRenderPassBegin);
	} else if (named(n, "vkCmdBeginRenderPass2")) {
		render_pass_writes(t, rc, ((const vk_args_vkCmdBeginRenderPass2 *)args)->pRenderPassBegin);
	} else if (named(n, "vkCmdBeginRendering")) {
		rendering_writes(t, rc, ((const vk_args_vkCmdBeginRendering *)args)->pRenderingInfo);
	} else if (named(n, "vkCmdPushDescriptorSet")) {
		const vk_args_vkCmdPushDescriptorSetKHR *a = args;
		vec st = {0};
		for (uint32_t i = 0; i < a->descriptorWriteCount; i++)
			storage_targets(t, &a->pDescriptorWrites[i], &st);
		for (uint32_t i = 0; i < st.n; i++)
			recording_write(rc, st.v[i], false);
		vfree(&st);
	}
}

/* A command recorded: what it names, what it writes. */
static void record(trim *t, rec *r, const vk_command_info *cmd, const void *args, const finds *in)
{
	obj *cb = command_buffer(t, in);
	if (!cb)
		return;
	recording *rc = cb->cur ? cb->cur : recording_new(cb);
	vpush(&rc->recs, rec_ref(r));
	t->live_records++;
	const char *n = cmd->sig.name;
	record_special(t, rc, n, args);
	for (uint32_t i = 1; i < in->n; i++) {
		const found *f = &in->v[i];
		obj *o = lookup(t, f->h, f->value);
		if (!o)
			continue;
		recording_dep(rc, o);
		const char *fn = f->f ? f->f->name : "";
		if (f->h == H.buffer && !strncmp(fn, "dst", 3))
			recording_write(rc, o, false);
		else if (f->h == H.image &&
			 (!strcmp(fn, "dstImage") || (f->top && !strcmp(fn, "image"))))
			recording_write(rc, o, false);
		else if (f->h == H.descriptor_set)
			for (uint32_t k = 0; k < o->storage.n; k++)
				recording_write(rc, o->storage.v[k], false);
	}
}

/* The contents a submit sees: buffers and images its commands name,
 * directly or through views, descriptor sets and framebuffers. */
static void reach(trim *t, obj *o, vec *out)
{
	if (!o || o->stamp == t->stamp)
		return;
	o->stamp = t->stamp;
	if (o->cont || o->layout >= 0)
		vpush(out, o);
	if (o->h == H.descriptor_set || o->h == H.framebuffer)
		for (uint32_t i = 0; i < o->deps.n; i++)
			reach(t, o->deps.v[i], out);
	if (o->target)
		reach(t, o->target, out);
}

/* Whether every recording of OLD that writes O is in S: S does again
 * all that OLD did to O. */
static bool supersedes(const submit *s, const submit *old, const obj *o)
{
	for (uint32_t i = 0; i < old->recordings.n; i++) {
		const recording *r = old->recordings.v[i];
		if (vhas(&r->writes, o) && !vhas(&s->recordings, r))
			return false;
	}
	return true;
}

static void add_writer(obj *o, submit *s, bool discard)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < o->writers.n; i++) {
		submit *w = o->writers.v[i];
		if (discard || supersedes(s, w, o))
			submit_unref(w);
		else
			o->writers.v[k++] = w;
	}
	o->writers.n = k;
	s->refs++;
	vpush(&o->writers, s);
}

static void timeline_signal(trim *t, uint64_t sem, uint64_t value)
{
	obj *o = lookup(t, H.semaphore, sem);
	if (o && o->signaled && value > o->value)
		o->value = value;
}

static void fence_signal(trim *t, uint64_t fence)
{
	obj *o = lookup(t, H.fence, fence);
	if (o)
		o->fence = 1;
}

/* A submit: the fences and timeline values it signals; for the commands
 * that write, a submit that the writers of what they wrote remember. */
static void queue_submit(trim *t, rec *r, enum kind k, const void *args, const finds *in)
{
	const vk_handle_info *hcb = H.command_buffer;
	submit *s = xcalloc(1, sizeof(*s));
	s->refs = 1;
	s->r = rec_ref(r);
	r->sub = s;
	if (in->n && in->v[0].top) {
		s->queue = lookup(t, in->v[0].h, in->v[0].value);
		if (s->queue)
			s->queue->refs++;
	}
	for (uint32_t i = 0; i < in->n; i++) {
		if (in->v[i].h != hcb)
			continue;
		obj *cb = lookup(t, hcb, in->v[i].value);
		if (cb && cb->cur && !vhas(&s->recordings, cb->cur)) {
			cb->cur->refs++;
			vpush(&s->recordings, cb->cur);
		}
	}
	if (k == K_SUBMIT) {
		const vk_args_vkQueueSubmit *a = args;
		for (uint32_t i = 0; i < a->submitCount; i++) {
			const VkSubmitInfo *si = &a->pSubmits[i];
			for (const VkBaseInStructure *p = si->pNext; p; p = p->pNext) {
				if (p->sType != VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
					continue;
				const VkTimelineSemaphoreSubmitInfo *ts = (const void *)p;
				for (uint32_t j = 0; j < ts->signalSemaphoreValueCount &&
						     j < si->signalSemaphoreCount; j++)
					timeline_signal(t, (uint64_t)si->pSignalSemaphores[j],
							ts->pSignalSemaphoreValues[j]);
			}
		}
		fence_signal(t, (uint64_t)a->fence);
	} else {
		const vk_args_vkQueueSubmit2 *a = args;
		for (uint32_t i = 0; i < a->submitCount; i++)
			for (uint32_t j = 0; j < a->pSubmits[i].signalSemaphoreInfoCount; j++) {
				const VkSemaphoreSubmitInfo *ss = &a->pSubmits[i].pSignalSemaphoreInfos[j];
				timeline_signal(t, (uint64_t)ss->semaphore, ss->value);
			}
		fence_signal(t, (uint64_t)a->fence);
	}
	bool writes = false;
	for (uint32_t i = 0; i < s->recordings.n && !writes; i++)
		writes = ((recording *)s->recordings.v[i])->writes.n > 0;
	if (writes) {
		/* what the host had written into what it names, and the
		 * layouts of its images, as they were */
		vec seen = {0};
		t->stamp++;
		for (uint32_t i = 0; i < s->recordings.n; i++) {
			recording *rc = s->recordings.v[i];
			for (uint32_t j = 0; j < rc->deps.n; j++)
				reach(t, rc->deps.v[j], &seen);
		}
		s->snaps = xcalloc(seen.n, sizeof(*s->snaps));
		s->before = xcalloc(seen.n, sizeof(*s->before));
		for (uint32_t i = 0; i < seen.n; i++) {
			obj *o = seen.v[i];
			if (o->cont) {
				o->refs++;
				s->snaps[s->nsnaps++] = (snap){o, content_ref(o->cont)};
			}
			if (o->layout >= 0) {
				o->refs++;
				s->before[s->nbefore++] = (lay){o, o->layout, o->layout};
			}
		}
		vfree(&seen);
		for (uint32_t i = 0; i < s->recordings.n; i++) {
			recording *rc = s->recordings.v[i];
			for (uint32_t j = 0; j < rc->writes.n; j++) {
				obj *o = rc->writes.v[j];
				if (o->alive)
					add_writer(o, s, vhas(&rc->discards, o));
			}
		}
	}
	for (uint32_t i = 0; i < s->recordings.n; i++) {
		recording *rc = s->recordings.v[i];
		for (uint32_t j = 0; j < rc->nlays; j++)
			rc->lays[j].o->layout = rc->lays[j].final;
	}
	submit_unref(s);
}

static int update(trim *t, const trace_call *c)
{
	const trace_value *a = c->args;
	if (c->sig->nargs < 3 || a[0].kind != TRACE_POINTER || a[1].kind != TRACE_UINT ||
	    a[2].kind != TRACE_BLOB) {
		trace_error_set(t->err, "malformed %s: wants object (pointer), offset, data (blob)",
				VK_UPDATE_CALL);
		return -1;
	}
	obj *o = lookup(t, H.buffer, a[0].u);
	if (!o)
		o = lookup(t, H.image, a[0].u);
	if (o)
		content_write(o, a[1].u, a[2].blob, a[2].len);
	return 0;
}

/* A USE call: it belongs to the non-dispatchable objects of the command's
 * own type it names (a descriptor set it updates, a buffer it binds), or,
 * for commands of a dispatchable object, to the first non-dispatchable
 * handle found inside its structs; with neither, it is kept for good. */
static void other(trim *t, rec *r, const vk_command_info *cmd, const finds *in)
{
	bool attached = false;
	if (cmd->object && !cmd->object->dispatchable) {
		for (uint32_t i = 0; i < in->n; i++)
			if (in->v[i].h == cmd->object) {
				obj *o = lookup(t, in->v[i].h, in->v[i].value);
				if (o) {
					attach_all(t, o, r, in);
					attached = true;
				}
			}
	} else {
		/* the objects of the first non-dispatchable type it names */
		const vk_handle_info *ty = NULL;
		for (uint32_t i = 0; i < in->n; i++) {
			if (!in->v[i].h || in->v[i].h->dispatchable || (ty && in->v[i].h != ty))
				continue;
			obj *o = lookup(t, in->v[i].h, in->v[i].value);
			if (o) {
				ty = o->h;
				attach_all(t, o, r, in);
				attached = true;
			}
		}
	}
	if (!attached)
		keep_global(t, r);
	else
		t->live_records++;
}

static int vk_before(trim *t, const trace_call *c, enum kind k, const vk_command_info *cmd)
{
	if (k == K_DROP)
		return 0;
	if (k == K_UPDATE)
		return update(t, c);
	trace_arena_reset(&t->scratch);
	void *args = trace_arena_alloc(&t->scratch, cmd->args_size);
	if (vk_decode_args(cmd, c, &t->scratch, args, t->err) < 0)
		return -1;
	finds in = {0};
	vk_walk_handles(cmd, args, false, find_fn, &in);
	template_handles(t, c, cmd, args, &in);
	rec *r = rec_new(c);
	switch (k) {
	case K_CREATE: create(t, r, cmd, args, &in); break;
	case K_DESTROY: destroy(t, r, cmd, &in); break;
	case K_BEGIN: {
		obj *cb = command_buffer(t, &in);
		if (cb) {
			recording_new(cb);
			record(t, r, cmd, args, &in);
		}
		break;
	}
	case K_RECORD: record(t, r, cmd, args, &in); break;
	case K_RESET_CB: {
		obj *cb = command_buffer(t, &in);
		if (cb) {
			recording_unref(cb->cur);
			cb->cur = NULL;
			rec_unref(cb->reset);
			cb->reset = rec_ref(r);
		}
		break;
	}
	case K_RESET_CMD_POOL: {
		obj *pool = in.n > 1 ? lookup(t, in.v[1].h, in.v[1].value) : NULL;
		for (size_t i = 0; pool && i < t->objs.cap; i++) {
			obj *cb = t->objs.slot[i];
			if (cb && cb->owner == pool) {
				recording_unref(cb->cur);
				cb->cur = NULL;
				rec_unref(cb->reset);
				cb->reset = rec_ref(r);
			}
		}
		break;
	}
	case K_RESET_DESC_POOL: {
		obj *pool = in.n > 1 ? lookup(t, in.v[1].h, in.v[1].value) : NULL;
		if (pool) /* sets kept for a record that names them end here */
			kill_children(t, pool, r);
		break;
	}
	case K_SUBMIT:
	case K_SUBMIT2: queue_submit(t, r, k, args, &in); break;
	case K_RESET_FENCES: {
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = lookup(t, in.v[i].h, in.v[i].value);
			if (o && o->h == H.fence)
				o->fence = 2;
		}
		break;
	}
	case K_SIGNAL: {
		const VkSemaphoreSignalInfo *si = ((const vk_args_vkSignalSemaphore *)args)->pSignalInfo;
		timeline_signal(t, (uint64_t)si->semaphore, si->value);
		break;
	}
	case K_UPDATE_SETS: update_sets(t, r, args, &in); break;
	default: other(t, r, cmd, &in); break;
	}
	rec_unref(r);
	free(in.v);
	return 0;
}

/* VMA: pointers are the objects, the function table says which a call
 * makes; a map and its unmap cancel; of other calls on an object (user
 * data, touches, infos) the last of each function is its state. */
static void vma_pointers(const trace_call *c, const vma_function *f, bool outputs, vec *out)
{
	for (uint32_t i = 0; i < f->nparams && i < c->sig->nargs; i++) {
		if (f->params[i].output != outputs)
			continue;
		const trace_value *v = &c->args[i];
		if (v->kind == TRACE_POINTER && v->u)
			vpush(out, (void *)(uintptr_t)v->u);
		else if (v->kind == TRACE_ARRAY)
			for (uint32_t k = 0; k < v->len; k++)
				if (v->items[k].kind == TRACE_POINTER && v->items[k].u)
					vpush(out, (void *)(uintptr_t)v->items[k].u);
	}
}

static void vma_replace(obj *o, rec *r)
{
	for (uint32_t i = 0; i < o->recs.n; i++) {
		rec *x = o->recs.v[i];
		if (i > 0 && x->c.sig == r->c.sig) {
			rec_unref(x);
			o->recs.v[i] = rec_ref(r);
			return;
		}
	}
	attach(o, r);
}

static int vma_before(trim *t, const trace_call *c, enum kind k)
{
	if (k == K_DROP)
		return 0;
	rec *r = rec_new(c);
	if (k == K_VMA_TIME) {
		rec_unref(t->last_time);
		t->last_time = r;
		return 0;
	}
	const char *n = c->sig->name;
	const vma_function *f = vma_function_lookup(n, strlen(n));
	vec in = {0}, out = {0};
	vma_pointers(c, f, false, &in);
	vma_pointers(c, f, true, &out);
	switch (k) {
	case K_VMA_CREATE:
		for (uint32_t i = 0; i < out.n; i++) {
			uint64_t h = (uint64_t)(uintptr_t)out.v[i];
			obj *o = lookup(t, NULL, h);
			if (o)
				obj_kill(t, o, NULL);
			o = obj_new(t, h, NULL);
			attach(o, r);
			for (uint32_t j = 0; j < in.n; j++)
				obj_dep(o, lookup(t, NULL, (uint64_t)(uintptr_t)in.v[j]));
		}
		break;
	case K_VMA_DESTROY:
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]);
			if (o)
				obj_kill(t, o, r);
		}
		break;
	case K_VMA_MAP:
	case K_VMA_UNMAP:
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]);
			if (!o)
				continue;
			rec *last = o->recs.n > 1 ? o->recs.v[o->recs.n - 1] : NULL;
			if (k == K_VMA_UNMAP && last && !strcmp(last->c.sig->name, "vmaMapMemory")) {
				rec_unref(last);
				o->recs.n--;
			} else {
				vpush(&o->recs, rec_ref(r));
			}
		}
		break;
	case K_VMA_OTHER: {
		bool attached = false;
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]);
			if (o) {
				vma_replace(o, r);
				attached = true;
			}
		}
		if (!attached)
			keep_global(t, r);
		break;
	}
	default: {
		/* global: vmaCreateAllocator stays, of others the last */
		uint32_t i = 0;
		if (strcmp(n, "vmaCreateAllocator"))
			for (; i < t->globals.n; i++)
				if (((rec *)t->globals.v[i])->c.sig == c->sig)
					break;
		if (i < t->globals.n) {
			rec_unref(t->globals.v[i]);
			t->globals.v[i] = rec_ref(r);
		} else {
			keep_global(t, r);
		}
		break;
	}
	}
	vfree(&in);
	vfree(&out);
	rec_unref(r);
	return 0;
}

static void set_where(trace_error *err, const trace_call *c)
{
	err->call = (int64_t)c->no;
	err->offset = c->offset;
}

int trim_before(trim *t, const trace_call *c, trace_error *err)
{
	const vk_command_info *cmd;
	enum kind k = kind_of(t, c, &cmd);
	t->err = err;
	if (k == K_UNSEEN) {
		trace_error_set(err, "%s is not a %s call: trace-trim cuts Vulkan captures and "
				"VMA recordings", c->sig->name,
				t->api == TRIM_VMA ? "VMA" : "Vulkan");
		set_where(err, c);
		return -1;
	}
	int rc = t->api == TRIM_VMA ? vma_before(t, c, k) : vk_before(t, c, k, cmd);
	if (rc < 0)
		set_where(err, c);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The range: what it names. */

static void root(trim *t, obj *o)
{
	if (o && !tmap_get(&t->rooted, o, NULL)) {
		tmap_put(&t->rooted, o, 1);
		vpush(&t->roots, o);
	}
}

int trim_range(trim *t, const trace_call *c, trace_error *err)
{
	const vk_command_info *cmd;
	enum kind k = kind_of(t, c, &cmd);
	t->err = err;
	if (t->api == TRIM_VMA) {
		if (k == K_UNSEEN || k == K_DROP || k == K_VMA_TIME)
			return 0;
		const vma_function *f = vma_function_lookup(c->sig->name, strlen(c->sig->name));
		vec in = {0};
		vma_pointers(c, f, false, &in);
		for (uint32_t i = 0; i < in.n; i++)
			root(t, lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]));
		vfree(&in);
		return 0;
	}
	if (k == K_UPDATE) {
		if (c->sig->nargs >= 1 && c->args[0].kind == TRACE_POINTER) {
			root(t, lookup(t, H.buffer, c->args[0].u));
			root(t, lookup(t, H.image, c->args[0].u));
		}
		return 0;
	}
	if (!cmd) {
		if (k == K_UNSEEN) {
			trace_error_set(err, "%s is not a Vulkan call: trace-trim cuts Vulkan "
					"captures and VMA recordings", c->sig->name);
			set_where(err, c);
			return -1;
		}
		return 0;
	}
	trace_arena_reset(&t->scratch);
	void *args = trace_arena_alloc(&t->scratch, cmd->args_size);
	if (vk_decode_args(cmd, c, &t->scratch, args, err) < 0) {
		set_where(err, c);
		return -1;
	}
	finds in = {0};
	vk_walk_handles(cmd, args, false, find_fn, &in);
	template_handles(t, c, cmd, args, &in);
	for (uint32_t i = 0; i < in.n; i++) {
		obj *o = lookup(t, in.v[i].h, in.v[i].value);
		root(t, o);
		/* a command buffer the range records afresh before it
		 * submits it does not need its recording from before */
		if (o && o->h == H.command_buffer && !o->range_use)
			o->range_use = k == K_BEGIN && i == 0 ? 1 : 2;
	}
	free(in.v);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The closure of the roots. */

typedef struct closure {
	vec objs;
	vec recordings;
	vec submits;
} closure;

static void close_recording(trim *t, closure *cl, recording *r);
static void close_obj(trim *t, closure *cl, obj *o);

static void close_submit(trim *t, closure *cl, submit *s)
{
	if (s->stamp == t->stamp)
		return;
	s->stamp = t->stamp;
	vpush(&cl->submits, s);
	close_obj(t, cl, s->queue);
	for (uint32_t i = 0; i < s->recordings.n; i++)
		close_recording(t, cl, s->recordings.v[i]);
}

static void close_recording(trim *t, closure *cl, recording *r)
{
	if (!r || r->stamp == t->stamp)
		return;
	r->stamp = t->stamp;
	vpush(&cl->recordings, r);
	for (uint32_t i = 0; i < r->deps.n; i++)
		close_obj(t, cl, r->deps.v[i]);
}

static void close_obj(trim *t, closure *cl, obj *o)
{
	if (!o || o->stamp == t->stamp)
		return;
	o->stamp = t->stamp;
	vpush(&cl->objs, o);
	for (uint32_t i = 0; i < o->deps.n; i++)
		close_obj(t, cl, o->deps.v[i]);
	close_obj(t, cl, o->owner);
	close_obj(t, cl, o->target);
	if (o->range_use != 1)
		close_recording(t, cl, o->cur);
	for (uint32_t i = 0; i < o->writers.n; i++)
		close_submit(t, cl, o->writers.v[i]);
}

/* ------------------------------------------------------------------ */
/* Writing the setup. */

typedef struct out {
	trim *t;
	trace_writer *w;
	uint64_t *no;
	trim_stats *st;
	trace_error *err;
	trace_arena arena;
	obj *queue;            /* of the last submit written */
	uint32_t thread;
	VkImageMemoryBarrier *bar;  /* layout changes waiting to be written */
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

static const trace_func_sig *update_sig(out *o)
{
	return trace_sigtab_func(o->t->sigs, vk_update_sig.name, vk_update_sig.nargs,
				 (const char *const *)vk_update_sig.arg_names);
}

/* The extents of TO that FROM lacks, as updates of X (runs of adjacent
 * extents as one). */
static int put_contents(out *o, obj *x, const content *to, const content *from)
{
	if (!to || to == from)
		return 0;
	uint32_t j = 0, i = 0;
	while (i < to->n) {
		const extent *e = &to->e[i];
		while (from && j < from->n && from->e[j].off < e->off)
			j++;
		if (from && j < from->n && !memcmp(&from->e[j], e, sizeof(*e))) {
			i++;
			continue;
		}
		/* a run of extents to write */
		uint32_t k = i + 1;
		while (k < to->n && to->e[k].off == to->e[k - 1].off + to->e[k - 1].len) {
			uint32_t jj = j;
			while (from && jj < from->n && from->e[jj].off < to->e[k].off)
				jj++;
			if (from && jj < from->n && !memcmp(&from->e[jj], &to->e[k], sizeof(*e)))
				break;
			k++;
		}
		uint64_t len = to->e[k - 1].off + to->e[k - 1].len - e->off;
		trace_call c;
		trace_call_init(&c);
		c.sig = update_sig(o);
		c.args = trace_call_values(&c, 3);
		c.args[0] = (trace_value){.kind = TRACE_POINTER, .u = x->handle};
		c.args[1] = (trace_value){.kind = TRACE_UINT, .u = e->off};
		uint8_t *data = trace_arena_alloc(&c.arena, len);
		for (uint32_t m = i; m < k; m++)
			memcpy(data + (to->e[m].off - e->off), to->e[m].b->data + to->e[m].boff,
			       to->e[m].len);
		c.args[2] = (trace_value){.kind = TRACE_BLOB, .len = (uint32_t)len, .blob = data};
		o->st->updates++;
		o->st->update_bytes += len;
		int rc = put(o, &c);
		trace_call_free(&c);
		if (rc < 0)
			return rc;
		i = k;
	}
	return 0;
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

/* Image X goes from the layout the setup left it in to LAYOUT. */
static void want_layout(out *o, obj *x, int32_t layout)
{
	if (layout == VK_IMAGE_LAYOUT_UNDEFINED || layout < 0 || x->sim == layout)
		return;
	for (uint32_t i = 0; i < o->nbar; i++)
		if (o->bar[i].image == (VkImage)(uintptr_t)x->handle)
			return;
	if (o->nbar == o->capbar) {
		o->capbar = o->capbar ? 2 * o->capbar : 8;
		o->bar = realloc(o->bar, o->capbar * sizeof(*o->bar));
		if (!o->bar)
			abort();
	}
	o->bar[o->nbar++] = (VkImageMemoryBarrier){
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
		.oldLayout = (VkImageLayout)x->sim,
		.newLayout = (VkImageLayout)layout,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = (VkImage)(uintptr_t)x->handle,
		.subresourceRange = {x->aspect, 0, VK_REMAINING_MIP_LEVELS, 0,
				     VK_REMAINING_ARRAY_LAYERS},
	};
	x->sim = layout;
}

/* The layout changes wanted, as a command buffer of the setup's own on
 * QUEUE: what the submits the setup leaves out did to layouts. */
static int put_layouts(out *o, obj *queue)
{
	if (!o->nbar || !queue)
		return 0;
	trim *t = o->t;
	VkDevice dev = (VkDevice)(uintptr_t)queue->device;
	VkQueue q = (VkQueue)(uintptr_t)queue->handle;
	VkCommandPool pool = (VkCommandPool)(uintptr_t)(0x7ace000000000000ull + 2 * ++t->fake);
	VkCommandBuffer cb = (VkCommandBuffer)(uintptr_t)(0x7ace000000000001ull + 2 * t->fake);
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .queueFamilyIndex = queue->family};
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					  .commandPool = pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					  .commandBufferCount = 1};
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
			   .pCommandBuffers = &cb};
	vk_args_vkCreateCommandPool a1 = {dev, &pci, NULL, &pool, VK_SUCCESS};
	vk_args_vkAllocateCommandBuffers a2 = {dev, &ai, &cb, VK_SUCCESS};
	vk_args_vkBeginCommandBuffer a3 = {cb, &bi, VK_SUCCESS};
	vk_args_vkCmdPipelineBarrier a4 = {cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
					   VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 0, NULL,
					   o->nbar, o->bar};
	vk_args_vkEndCommandBuffer a5 = {cb, VK_SUCCESS};
	vk_args_vkQueueSubmit a6 = {q, 1, &si, VK_NULL_HANDLE, VK_SUCCESS};
	vk_args_vkQueueWaitIdle a7 = {q, VK_SUCCESS};
	vk_args_vkDestroyCommandPool a8 = {dev, pool, NULL};
	o->nbar = 0;
	int rc = put_encoded(o, &vk_cmd_vkCreateCommandPool, &a1);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkAllocateCommandBuffers, &a2);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkBeginCommandBuffer, &a3);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkCmdPipelineBarrier, &a4);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkEndCommandBuffer, &a5);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkQueueSubmit, &a6);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkQueueWaitIdle, &a7);
	if (!rc) rc = put_encoded(o, &vk_cmd_vkDestroyCommandPool, &a8);
	return rc;
}

/* A setup submit runs alone: no semaphores to wait for or signal (their
 * partners are not in the setup), no fence (fences start in the state
 * the range expects), and the queue idle after it. */
static int put_submit(out *o, rec *r)
{
	trim *t = o->t;
	const vk_command_info *cmd;
	enum kind k = kind_of(t, &r->c, &cmd);
	trace_arena_reset(&o->arena);
	void *args = trace_arena_alloc(&o->arena, cmd->args_size);
	if (vk_decode_args(cmd, &r->c, &o->arena, args, o->err) < 0)
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
	c.thread = r->c.thread;
	int rc = put(o, &c);
	if (rc == 0) {
		trace_call_reset(&c);
		vk_args_vkQueueWaitIdle wa = {queue, VK_SUCCESS};
		vk_encode_call(&vk_cmd_vkQueueWaitIdle, &c, &wa);
		c.thread = r->c.thread;
		rc = put(o, &c);
	}
	trace_call_free(&c);
	o->st->submits++;
	return rc;
}

/* A fence or timeline semaphore created in the state it had when the
 * range began. */
static int put_fixup(out *o, rec *r)
{
	obj *x = r->fixup;
	const vk_command_info *cmd;
	kind_of(o->t, &r->c, &cmd);
	trace_arena_reset(&o->arena);
	void *args = trace_arena_alloc(&o->arena, cmd->args_size);
	if (vk_decode_args(cmd, &r->c, &o->arena, args, o->err) < 0)
		return -1;
	if (x->h == H.fence) {
		VkFenceCreateInfo *ci = (VkFenceCreateInfo *)((vk_args_vkCreateFence *)args)->pCreateInfo;
		if (x->fence == 1)
			ci->flags |= VK_FENCE_CREATE_SIGNALED_BIT;
		else if (x->fence == 2)
			ci->flags &= ~(VkFenceCreateFlags)VK_FENCE_CREATE_SIGNALED_BIT;
	} else {
		const VkSemaphoreCreateInfo *ci = ((vk_args_vkCreateSemaphore *)args)->pCreateInfo;
		for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext)
			if (p->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO)
				((VkSemaphoreTypeCreateInfo *)p)->initialValue = x->value;
	}
	trace_call c;
	trace_call_init(&c);
	vk_encode_call(cmd, &c, args);
	c.thread = r->c.thread;
	int rc = put(o, &c);
	trace_call_free(&c);
	return rc;
}

static void collect(trim *t, vec *recs, rec *r)
{
	if (r && r->stamp != t->stamp) {
		r->stamp = t->stamp;
		vpush(recs, r);
	}
}

static int by_no(const void *a, const void *b)
{
	const rec *x = *(rec *const *)a, *y = *(rec *const *)b;
	return x->c.no < y->c.no ? -1 : x->c.no > y->c.no;
}

int trim_write_setup(trim *t, trace_writer *w, uint64_t *no, trim_stats *stats,
		     trace_error *err)
{
	trim_stats dummy;
	out o = {t, w, no, stats ? stats : &dummy, err, {0}};
	memset(o.st, 0, sizeof(*o.st));
	trace_arena_init(&o.arena);
	o.st->live_objects = t->objs.n;
	o.st->live_records = t->live_records;

	/* what the range needs: what it names, the instance, devices and
	 * queues whatever it names, and everything those need */
	closure cl = {0};
	t->stamp++;
	for (size_t i = 0; i < t->objs.cap; i++) {
		obj *x = t->objs.slot[i];
		if (x && x->h && x->h->dispatchable)
			close_obj(t, &cl, x);
	}
	for (uint32_t i = 0; i < t->roots.n; i++)
		close_obj(t, &cl, t->roots.v[i]);

	vec recs = {0};
	t->stamp++;
	for (uint32_t i = 0; i < t->globals.n; i++)
		collect(t, &recs, t->globals.v[i]);
	for (uint32_t i = 0; i < cl.objs.n; i++) {
		obj *x = cl.objs.v[i];
		for (uint32_t k = 0; k < x->recs.n; k++)
			collect(t, &recs, x->recs.v[k]);
		collect(t, &recs, x->destroy);
		x->emitted = NULL;
		x->sim = x->initial;
	}
	for (uint32_t i = 0; i < cl.recordings.n; i++) {
		recording *r = cl.recordings.v[i];
		collect(t, &recs, r->reset);
		for (uint32_t k = 0; k < r->recs.n; k++)
			collect(t, &recs, r->recs.v[k]);
	}
	for (uint32_t i = 0; i < cl.submits.n; i++)
		collect(t, &recs, ((submit *)cl.submits.v[i])->r);
	qsort(recs.v, recs.n, sizeof(*recs.v), by_no);
	o.st->objects = cl.objs.n;

	/* the closure's objects carry stamp t->stamp - 1 */
	uint32_t in_closure = t->stamp - 1;
	int rc = put_pseudo(&o, TRIM_SETUP_BEGIN);
	for (uint32_t i = 0; rc == 0 && i < recs.n; i++) {
		rec *r = recs.v[i];
		if (r->sub) {
			submit *s = r->sub;
			for (uint32_t k = 0; rc == 0 && k < s->nsnaps; k++) {
				obj *x = s->snaps[k].o;
				if (x->stamp != in_closure)
					continue;
				rc = put_contents(&o, x, s->snaps[k].c, x->emitted);
				x->emitted = s->snaps[k].c;
			}
			o.thread = r->c.thread;
			for (uint32_t k = 0; k < s->nbefore; k++)
				if (s->before[k].o->stamp == in_closure)
					want_layout(&o, s->before[k].o, s->before[k].expect);
			for (uint32_t k = 0; k < s->recordings.n; k++) {
				recording *rcd = s->recordings.v[k];
				for (uint32_t m = 0; m < rcd->nlays; m++)
					if (rcd->lays[m].o->stamp == in_closure)
						want_layout(&o, rcd->lays[m].o, rcd->lays[m].expect);
			}
			if (rc == 0)
				rc = put_layouts(&o, s->queue);
			if (rc == 0)
				rc = put_submit(&o, r);
			for (uint32_t k = 0; k < s->recordings.n; k++) {
				recording *rcd = s->recordings.v[k];
				for (uint32_t m = 0; m < rcd->nlays; m++)
					rcd->lays[m].o->sim = rcd->lays[m].final;
			}
			if (s->queue)
				o.queue = s->queue;
		} else if (r->fixup) {
			rc = put_fixup(&o, r);
		} else {
			trace_call c = r->c;
			rc = put(&o, &c);
		}
	}
	/* the contents and layouts as the range found them */
	for (uint32_t i = 0; rc == 0 && i < cl.objs.n; i++) {
		obj *x = cl.objs.v[i];
		if (x->alive && x->cont)
			rc = put_contents(&o, x, x->cont, x->emitted);
		if (x->alive && !o.queue && x->h == H.queue)
			o.queue = x;
		if (x->alive && x->layout >= 0)
			want_layout(&o, x, x->layout);
	}
	if (rc == 0)
		rc = put_layouts(&o, o.queue);
	if (rc == 0 && t->last_time) {
		trace_call c = t->last_time->c;
		rc = put(&o, &c);
	}
	if (rc == 0)
		rc = put_pseudo(&o, TRIM_SETUP_END);
	vfree(&recs);
	vfree(&cl.objs);
	vfree(&cl.recordings);
	vfree(&cl.submits);
	free(o.bar);
	trace_arena_free(&o.arena);
	return rc;
}

/* ------------------------------------------------------------------ */

trim *trim_new(trim_api api, trace_sigtab *sigs)
{
	trim *t = xcalloc(1, sizeof(*t));
	handles_init();
	t->api = api;
	t->sigs = sigs;
	trace_arena_init(&t->scratch);
	return t;
}

void trim_free(trim *t)
{
	if (!t)
		return;
	/* the roots were looked up, not referenced */
	vfree(&t->roots);
	tmap_free(&t->rooted);
	vec all = {0};
	for (size_t i = 0; i < t->objs.cap; i++)
		if (t->objs.slot[i])
			vpush(&all, t->objs.slot[i]);
	/* kill first (dropping writers and recordings), then let go */
	for (uint32_t i = 0; i < all.n; i++) {
		obj *o = all.v[i];
		o->refs++;
		obj_kill(t, o, NULL);
	}
	for (uint32_t i = 0; i < all.n; i++)
		obj_unref(all.v[i]);
	vfree(&all);
	free(t->objs.slot);
	for (uint32_t i = 0; i < t->globals.n; i++)
		rec_unref(t->globals.v[i]);
	vfree(&t->globals);
	rec_unref(t->last_time);
	tmap_free(&t->kinds);
	tmap_free(&t->cmds);
	trace_arena_free(&t->scratch);
	free(t);
}
