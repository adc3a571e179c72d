/*
 * The trimmer's private model, shared by the files of lib/trim/; the
 * public API is vktrim.h.  See vktrim.h for what the state is; the parts:
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
 *   spans      byte ranges: of a buffer, those a command, a descriptor
 *              or the range may read (breads, bdesc), worked out per
 *              setup into what of its contents is written
 *   touch      how the range's command buffers use an object, in submit
 *              order: an image cleared before it is read, or a buffer or
 *              image the range only copies into, needs no earlier writer
 *
 * References run one way: records and recordings name objects, objects
 * name their writers only while alive.  What nothing names is freed.
 *
 * The files, by concern:
 *
 *   trim.c      the entry points: each call classified and routed; the
 *               range's walk (what it names, reads, overwrites first)
 *   state.c     Vulkan calls before the range: objects made and
 *               destroyed, their records, recordings, submits, sync
 *   objects.c   the model's lifetimes: records, the object map,
 *               recordings, submits; the handles a call names
 *   access.c    what commands and descriptors access: the buffer bytes
 *               they may read, the images they write, their layouts
 *   contents.c  host-written bytes: extents, tracekit.update merged in
 *   alias.c     buffers and images bound over the same bytes of a
 *               memory: what one is written, the others hold too
 *   spans.c     byte ranges and the buffer reads made of them
 *   closure.c   what the range needs: how commands use earlier contents
 *               (touches), the closure of the roots, its readable bytes
 *   events.c    what sets and resets events before the range
 *   setup.c     writing the setup prefix: records, submits run alone,
 *               contents, layouts, fences and semaphores as they were
 *   vma_trim.c  the VMA path: pointers as objects, maps, globals
 *
 * Like lib/replay/ it reads the generated argument structs
 * (build/gen/vkschema_cmds.h), so only trace-trim links these files.
 */
#ifndef TRACE_TRIM_INTERNAL_H
#define TRACE_TRIM_INTERNAL_H

/* first: it includes <vulkan/vulkan.h> with the platforms it describes */
#include "internal.h"
#include "vkschema_cmds.h"

#include "vktrim.h"

#include "tmap.h"
#include "vkiface.h"
#include "vkschema.h"
#include "vma.h"

#include <stdlib.h>
#include <string.h>

/* Small containers. */

/* V, an array of N elements of SIZE bytes with room for *CAP, with room
 * for one more: doubled when full, FIRST to begin with. */
static inline void *array_grow(void *v, uint32_t n, uint32_t *cap, size_t size, uint32_t first)
{
	if (n == *cap) {
		*cap = *cap ? 2 * *cap : first;
		v = trace_xrealloc(v, *cap * size);
	}
	return v;
}

typedef struct vec {
	void **v;
	uint32_t n, cap;
} vec;

static inline void vec_push(vec *v, void *p)
{
	v->v = array_grow(v->v, v->n, &v->cap, sizeof(*v->v), 4);
	v->v[v->n++] = p;
}

static inline bool vec_has(const vec *v, const void *p)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (v->v[i] == p)
			return true;
	return false;
}

static inline void vec_free(vec *v)
{
	free(v->v);
	*v = (vec){0};
}

/* The model. */

typedef struct submit submit;
typedef struct recording recording;

/* A record kept: its number, thread and function, its values packed
 * (rec_call unpacks them: held whole, a zink capture's records took ten
 * times the memory, 1.7 GB for Pingus' first 60 frames). */
typedef struct rec {
	uint64_t no;
	int64_t offset;     /* where it began in its input */
	const trace_func_sig *sig;
	uint32_t thread, flags;
	uint32_t refs;
	uint32_t stamp;     /* collected for this setup */
	submit *sub;        /* a submit's record: written with its care */
	struct obj *fixup;  /* a fence's or semaphore's creation: its state */
	struct rec *time;   /* VMA: the tracekit.time it came after */
	uint8_t packed[];   /* trace_call_pack() */
} rec;

/* Bytes the host wrote, shared by the extents over them.  Bytes past
 * USED are free: a write just after the extent that ends there goes on
 * there (a ring of small updates, one after another, stays a few
 * extents), which no extent already over the block can see. */
typedef struct block {
	uint32_t refs;
	uint64_t used, cap;
	uint8_t data[];
} block;

typedef struct extent {
	uint64_t off, len;
	block *b;
	uint64_t boff;
} extent;

/* The extents over 64 KiB of an object's bytes (none crosses its edges),
 * sorted and apart, shared as a content's are. */
#define WIN_SHIFT 16
typedef struct win {
	uint32_t refs;
	uint32_t n, cap;
	uint64_t key;              /* its bytes' offsets >> WIN_SHIFT */
	extent *e;
} win;

/* An object's host-written bytes: its windows that hold any, by key.  A
 * write after a submit took a view copies the window list and the
 * windows it writes, not every extent: a buffer that sparse updates
 * leave in thousands of stretches cost Pingus' trim a copy of them all
 * each draw. */
typedef struct content {
	uint32_t refs;
	uint32_t n, cap;
	win **w;
} content;

/* Whether extent B goes on from A, in the same block: one extent (or
 * one that a window's edge cut in two). */
static inline bool extent_joins(const extent *a, const extent *b)
{
	return a->b == b->b && a->off + a->len == b->off && a->boff + a->len == b->boff;
}

/* A walk over a content's extents, in order. */
typedef struct ext_iter {
	const content *c;
	uint32_t w, i;
} ext_iter;

/* The extent the walk is at; NULL past the last. */
static inline const extent *ext_at(ext_iter *it)
{
	while (it->c && it->w < it->c->n && it->i >= it->c->w[it->w]->n) {
		it->w++;
		it->i = 0;
	}
	return it->c && it->w < it->c->n ? &it->c->w[it->w]->e[it->i] : NULL;
}

static inline void ext_next(ext_iter *it)
{
	if (ext_at(it))
		it->i++;
}

/* Byte ranges [off, end) of an object, sorted and apart; an end of
 * UINT64_MAX runs to the object's end. */
typedef struct span {
	uint64_t off, end;
} span;

typedef struct spans {
	span *v;
	uint32_t n, cap;
} spans;

typedef struct obj obj;

/* What a command does to an event: sets it (SET) or resets it, by CMD (a
 * vkCmd*; NULL: the host's vkSetEvent or vkResetEvent), with the stages
 * it names (a vkCmdSetEvent2: what its dependencies' barriers name, all
 * together). */
typedef struct evop {
	obj *ev;
	bool set, wait;   /* WAIT: a vkCmdWaitEvents* for it */
	const vk_command_info *cmd;
	uint64_t stage, dst_stage, src_access, dst_access;
} evop;

/* Bytes of buffer O a command may read. */
typedef struct bread {
	obj *o;
	uint64_t off, end;
} bread;

typedef struct breads {
	bread *v;
	uint32_t n, cap;
} breads;

/* A descriptor set's buffer descriptor (binding UINT32_MAX: copied in). */
typedef struct bdesc {
	uint32_t binding, elem;
	bread r;
} bdesc;

/* What a command does to an object's earlier contents: drops them
 * before anything reads them, may read them, or only writes over some of
 * them, a copy's destination: what comes next decides. */
enum use { USE_DISCARD, USE_READ, USE_WRITE };

/* Commands' first uses of an object's earlier contents, from the first
 * on, per subresource (masks: obj_subs()): those the first use that
 * decides drops, those it may read, those only written over so far.  A
 * subresource in none is not used yet. */
typedef struct firsts {
	uint64_t drop, read, write;
} firsts;

/* Commands' use of O, in the order they run. */
typedef struct touch {
	obj *o;
	firsts f;
} touch;

typedef struct showing showing;

/* A descriptor: the view or buffer it shows (NULL: none, a sampler), and
 * the update that wrote it;
 * BINDING UINT32_MAX, one written by a way this does not follow, or
 * copied in: shown for good. */
typedef struct slot {
	uint32_t binding, elem;
	obj *o;
	rec *by;        /* the update that wrote it (in the set's records) */
	uint32_t at;    /* the binding it is at (a write runs on into the next
			 * bindings: vk_iface_binding_at); UINT32_MAX: not known */
} slot;

/* An update of a set that later ones wrote over, and the call of the
 * one that wrote over the last of it: between them, it was shown. */
typedef struct past {
	rec *r;
	uint64_t until;
} past;

/* What a set showed, all its descriptors' objects and the binding each
 * was at (slot.at), shared by the recordings submitted while it did. */
typedef struct shown_slot {
	obj *o;
	uint32_t at;
} shown_slot;

typedef struct showing {
	uint32_t refs, n;
	shown_slot v[];
} showing;

/* A binding of set SET (UINT32_MAX: any) that a command of a recording
 * may read. */
typedef struct set_read {
	obj *set;
	uint32_t binding;
} set_read;

/* What set SET showed when a recording that binds it was submitted. */
typedef struct shown {
	obj *set;
	showing *w;
} shown;

typedef struct touches {
	touch *v;
	uint32_t n, cap;
} touches;

struct obj {
	uint64_t handle;
	const vk_handle_info *h;   /* NULL: a VMA object */
	uint32_t refs;             /* 1 while alive, + 1 per record set naming it */
	bool alive;
	bool lost;                 /* destroyed, and the submits whose GPU writes were its
				    * contents forgotten (past GRAVES_MOST) */
	uint32_t grave_refs;       /* destroyed, kept for its writers: the references
				    * to it that those writers hold (objects.c) */
	bool grave_weak;           /* ... and no kept submit reaches it (graves_collect) */
	uint32_t set_refs;         /* of refs, those of descriptor sets (deps, storage) */
	uint32_t stamp;            /* in the closure being built */
	vec recs;                  /* rec*: creation, then what changed it */
	vec deps;                  /* obj*: what those records name */
	obj *owner;                /* what it came from, and dies with: a pool, a swapchain */
	bool owns;                 /* objects came from it */
	rec *destroy;              /* a zombie's end */
	content *cont;             /* buffers, images: host-written bytes */
	const content *emitted;    /* while writing: what the setup has written */
	struct writer *writers;    /* the last submits to write it */
	uint32_t nwriters, capwriters;
	/* submits that wrote it before those, and what they held until
	 * their writes were dropped, where a writing submit named it in
	 * between: one the setup runs reads what they wrote (close_obj) */
	struct writer *former;
	uint32_t nformer, capformer;
	uint64_t named;            /* the call of the last writing submit that named it */
	recording *cur;            /* command buffers: the current recording */
	rec *reset;                /* command buffers: a reset since the last begin */
	uint64_t usage;
	obj *target;               /* views: the image or buffer */
	vec views;                 /* framebuffers: attachments (obj*, not referenced) */
	uint32_t discard;          /* render passes: attachments whose contents go */
	uint32_t read_only;        /* render passes: attachments only read (render_pass_read_only) */
	vec storage;               /* descriptor sets: storage images' views, buffers */
	uint32_t *storage_at;      /* ... the binding each is at (UINT32_MAX: not known) */
	/* descriptor sets: what each descriptor shows now (in deps, or in a
	 * set it was copied from); the last update, by t->set_updates */
	struct slot *slots;
	uint32_t nslots, capslots;
	uint64_t updated;
	struct showing *now;       /* ... as shown, since the last update (NULL: not yet) */
	uint64_t used;             /* ... the call of the last submit that bound it */
	uint64_t copied;           /* ... the call of the last copy from it */
	/* ... updates all of whose descriptors later ones wrote again, after
	 * a submit bound it: the setup runs one where it runs such a submit */
	struct past *past;
	uint32_t npast, cappast;
	int fence;                 /* fences: 0 as created, 1 signaled, 2 unsignaled */
	uint64_t value;            /* timeline semaphores: the last value signaled */
	bool timeline;             /* semaphores: a timeline one */
	/* binary semaphores: a signal submitted (or an acquire's) and no wait
	 * for it since, and the queue it was submitted to (0: an acquire);
	 * events: the queue of the last submit that set or reset it */
	bool pending;
	uint64_t signal_queue;
	/* events: 0 as created, else the last that set or reset it (events.c) */
	bool ev_changed;
	evop ev_last;
	uint64_t ev_submit;        /* ... the call of that submit (events.c) */
	/* images, per subresource (image_sub() numbers them): the layout the
	 * last submit left (-1 unknown), the one the setup has left so far,
	 * and while writing the setup, the one a layout change waiting to be
	 * written comes from (NO_CHANGE: none); nsub of each in one block, or
	 * in lay1 for the image of one level and one layer (most of them) */
	int32_t *layout, *sim, *from;
	int32_t lay1[3];
	uint32_t levels, layers, nsub;
	int32_t initial;
	VkImageAspectFlags aspect;  /* and what a barrier on them names */
	VkImageSubresourceRange sub;  /* image views: what of the image they show */
	/* render passes: each attachment's initial and final layout */
	uint32_t natt;
	int32_t *att_layout;       /* 2 per attachment */
	/* queues: their family; queues, semaphores and events: their device */
	uint32_t family;
	uint64_t device;
	int range_use;             /* command buffers: 0, 1 re-recorded first in the range, 2 used;
				    * sets the range allocates: 1 once a command named it */
	VkDescriptorUpdateTemplateEntry *tmpl;  /* update templates: their entries */
	uint32_t ntmpl;
	/* buffers: read anywhere (device addresses, storage); the bytes the
	 * setup's submits and the range may read, worked out per setup */
	bool whole;
	spans rd;
	uint64_t voff, vend;       /* buffer views: their bytes of the buffer */
	int32_t format;            /* images */
	VkExtent3D extent;         /* images: level 0's (0: not known) */
	int64_t index;             /* swapchain images: their index (-1: not one) */
	bdesc *bd;                 /* descriptor sets: buffer descriptors */
	uint32_t nbd, capbd;
	/* what the range does: the bytes it writes before its first submit,
	 * what its commands do to the contents, and for command buffers, the
	 * uses of what their commands name in the range (rstate 1: after the
	 * recording from before, 2: recorded afresh) */
	spans covered;
	firsts range_first;
	bool range_named;          /* a call of the range's host side names it, or shows it */
	touches rt;
	int rstate;
	uint64_t in;               /* in the closure: its subresources a setup submit may read */
	uint64_t in_upto;          /* ... the call of the last such submit */
	struct submit *in_last;    /* ... that submit (NULL: the range's own) */
	bool closing, again;       /* its writers walked now; asked for more meanwhile */
	/* buffers and images: the memory they are bound to (not referenced:
	 * the binding ends when either dies), at what offset, over how many
	 * bytes (a buffer's size, an image's memory requirements), and
	 * whether they take the bytes written through others bound there
	 * (buffers, linear images: an optimal image's bytes have no layout
	 * to share); memory: what is bound to it (obj*, not referenced) */
	obj *mem;
	uint64_t moff, msize;
	bool takes;
	bool overlaps;             /* bound over bytes another object was bound over at once */
	vec bound;
};

/* No layout change waiting (obj.from). */
enum { NO_CHANGE = -2 };

/* Subresource LEVEL, LAYER of image O, as its layouts number it. */
static inline uint32_t image_sub(const obj *o, uint32_t level, uint32_t layer)
{
	return layer * o->levels + level;
}

/* Contents are followed per subresource in masks of 64 bits: bit
 * image_sub() of an image of 64 subresources or fewer, of one of more
 * (an array of many layers) bit LEVEL for all its layers; any other
 * object has bit 0.  All of O's: */
static inline uint64_t obj_subs(const obj *o)
{
	uint32_t n = o->nsub <= 64 ? o->nsub : o->levels;
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* A submit that wrote an object, and what of it the submit holds: the
 * subresources it wrote that no later submit dropped.  A former writer
 * held SUBS until the submit of call UNTIL dropped them (or did again
 * all it wrote). */
typedef struct writer {
	submit *s;
	uint64_t subs;
	uint64_t until;
	/* a former one: whether the submit of UNTIL reads SUBS before it
	 * drops them (0 not known yet, 1 it may, 2 it does not), and the
	 * sweep that found a closure may need it (formers_sweep) */
	uint8_t until_reads;
	uint32_t kept;
} writer;

/* What a recording's commands write of O: the subresources, and those
 * of them whose earlier contents the first command to write them drops. */
typedef struct wrote {
	obj *o;
	uint64_t subs, dropped;
} wrote;

/* An image's layouts across one recording, per subresource: what its
 * first command there needs (UNDEFINED: anything) and what the last
 * leaves, -1 where none names it; o->nsub of each, in one (2 for one
 * subresource) or in v. */
typedef struct lay {
	obj *o;
	int32_t one[2];
	int32_t *v;
} lay;

static inline int32_t *lay_expect(lay *l)
{
	return l->v ? l->v : l->one;
}

static inline int32_t *lay_final(lay *l)
{
	return lay_expect(l) + l->o->nsub;
}

struct recording {
	uint32_t refs;
	uint32_t stamp;
	vec recs;
	vec deps;                  /* obj*, referenced */
	tmap seen;                 /* obj* -> 1 for deps, once they are many */
	wrote *writes;             /* what the commands write (in deps) */
	uint32_t nwrites, capwrites;
	rec *reset;                /* the reset before its begin */
	lay *lays;
	uint32_t nlays, caplays;
	breads reads;              /* buffer bytes its commands may read */
	vec execs;                 /* recording*, referenced: the secondaries'
				    * recordings its vkCmdExecuteCommands took,
				    * as they were (recording_exec) */
	uint32_t submits;          /* the writing submits that ran it so far */
	uint32_t istamp, cstamp;  /* walked as an input; as a secondary, in place */
	/* what its commands do to what they name, worked out when a setup
	 * runs it again (unknown: a record no longer decodes) */
	touches uses;
	bool used, unknown;
	/* what the sets it binds showed at its submits (set_updates then + 1;
	 * 0: not submitted) */
	shown *shown;
	uint32_t nshown, capshown;
	uint64_t snapped;
	/* the bindings of the sets it binds that its draws, dispatches and
	 * traces may read with the pipeline bound then (access.c), of a set
	 * bound by a command vk_iface does not follow, any; what it may
	 * read of a set once it ended, no binding missing */
	set_read *set_reads;
	uint32_t nset_reads, capset_reads;
	bool ended;
	/* what its commands do to events, in order, the secondaries' it
	 * executes in place (events.c) */
	evop *evs;
	uint32_t nevs, capevs;
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
	breads reads;              /* its descriptor sets' buffer bytes, then */
	/* why the setup runs it again (--verbose): the first object of the
	 * closure it last wrote, and the kept submit that may read that
	 * object (NULL: the range) */
	obj *why;
	submit *why_via;
	/* the events its recordings wait for that they do not set first, set
	 * before it, each as the last command that set it before left it */
	evop *evwaits;
	uint32_t nevwaits;
};

typedef struct omap {
	obj **slot;
	size_t cap, n;
} omap;

/* How a function changes the state; found once per signature. */
enum kind {
	K_UNSEEN = 0,
	K_OTHER,          /* attach to its subjects, or keep globally */
	K_DROP,           /* nothing the setup needs: waits, maps, queries */
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
	K_EVENT,          /* vkSetEvent, vkResetEvent */
	K_SYNC,           /* not kept, but signals or waits: acquires, presents, sparse binds */
	K_UPDATE_SETS,
	K_UPDATE,         /* tracekit.update, tracekit.update.sparse */
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
	/* former writers made since the last formers_sweep(), and those
	 * it left */
	uint64_t formers_made, formers_left;
	uint64_t fake;        /* handles of objects the setup makes itself */
	/* the range: buffer bytes it may read, whether it has submitted yet,
	 * the entries of the update templates it creates */
	breads range_reads;
	bool range_submitted;
	tmap range_tmpl;      /* handle -> obj* of its own (not in objs) */
	tmap range_made;      /* (handle, type) the range made: its own from
			       * there on, not what the handle named before */
	bool in_range;        /* in trim_range: obj_lookup leaves those out */
	tmap range_cb;        /* handle -> obj* of its own: a command buffer the
			       * range allocated, its uses in the range
			       * (range_cb_lookup); not in objs */
	vec range_cbs;
	vec range_tmpls;
	tmap range_set;       /* handle -> obj* of its own: a descriptor set the
			       * range allocated, what it shows (range_set_of);
			       * not in objs */
	vec range_sets;
	tmap known;           /* (handle, type): made by a record, alive */
	FILE *explain;        /* --verbose: why each submit is run again */
	trim_lost lost;       /* reads of GPU writes into objects destroyed since */
	const obj *lost_obj;  /* ... the first one's object */
	/* objects the GPU wrote, destroyed, their writers kept for the
	 * submits that read them before (objects.c), oldest first */
	vec graves;
	uint32_t graves_kept; /* by the last sweep */
	uint32_t graves_quiet; /* forced sweeps before the next collection */
	tmap pruned;          /* rec* -> 1: a transfer the setup leaves out (prune.c) */
	/* while set, a handle is the object this recording named when it
	 * was recorded, destroyed since or not (obj_lookup) */
	const recording *then;
	uint64_t set_updates;  /* descriptor set updates so far */
	bool descriptor_buffers;  /* the trace puts descriptors in buffers */
	/* pipelines' shaders and the sets bound: which storage descriptors a
	 * draw may write (lib/vulkan/vkiface.h) */
	vk_iface *iface;
	tmap cmd_class;       /* vk_command_info* -> trim_cmd_class() | 0x100 */
	/* touching a bind of the range's (range_effects): the sets it binds
	 * read none of what they show there; the draws read what they use
	 * (range_draw_reads) */
	bool binds_only;
};

/* A handle a Vulkan call names (call_handles() finds them): its type,
 * its value, the field it is in, whether that is a parameter. */
typedef struct found {
	const vk_handle_info *h;
	uint64_t value;
	const vk_field *f;
	bool top;
} found;

typedef struct finds {
	found *v;
	uint32_t n, cap;
	bool partial;  /* a template write whose pData's handles are not all found */
} finds;

/* The handle types the state looks at, found in the schema once. */
typedef struct trim_handle_types {
	const vk_handle_info *buffer, *image, *image_view, *buffer_view;
	const vk_handle_info *descriptor_set, *descriptor_update_template;
	const vk_handle_info *command_buffer, *render_pass, *framebuffer;
	const vk_handle_info *semaphore, *fence, *queue, *swapchain, *memory, *event;
} trim_handle_types;

/* Set by trim_types_init(), the same for every trim (read-only after). */
extern trim_handle_types trim_types;

/* Where descriptors' buffer bytes go: a set's descriptors, or a list of
 * reads. */
typedef struct bsink {
	obj *set;
	breads *out;
} bsink;

/* How a command uses an image's contents: not at all (a barrier that
 * keeps them), reads them and leaves them as they were (a depth or
 * stencil attachment in a read-only layout, loaded and stored), or may
 * write them. */
enum image_use { IMAGE_LAYOUT_ONLY, IMAGE_READ, IMAGE_WRITE };

/* What a command does to the subresources R of an image (NULL: all of
 * it): USE (writing, it may discard what was there), the layout it
 * expects and the one it leaves (-1: none). */
typedef void (*image_fn)(void *ctx, obj *img, const VkImageSubresourceRange *r,
			 enum image_use use, bool discard, int32_t expect, int32_t final);

/* What a setup needs (closure.c): objects, recordings, submits, in the
 * order they were reached. */
typedef struct closure {
	vec objs;
	vec recordings;
	vec submits;
	submit *via;          /* whose inputs are being closed: NULL, the range's */
} closure;

/* ------------------------------------------------------------------ */
/* Functions one file of lib/trim/ offers the others, by file. */

/* objects.c: records, the object map, recordings, submits; the handles a call
 * names, and its arguments decoded */
rec *rec_new(const trace_call *c);
/* R as a call, in C (an initialised call, reset first). */
void rec_call(const rec *r, trace_call *c);
rec *rec_ref(rec *r);
void rec_unref(rec *r);
void recs_release(vec *v);
void objs_release(vec *v);
void obj_dep(obj *o, obj *d);
obj *obj_new(trim *t, uint64_t handle, const vk_handle_info *h);
void obj_kill(trim *t, obj *o, rec *r);
void obj_graves_free(trim *t);
void obj_kill_children(trim *t, obj *pool, rec *r);
void showing_unref(showing *w);
void recording_unref(recording *r);
/* Whether recording R names O (in its deps). */
bool recording_names(const recording *r, const obj *o);
void recording_dep(recording *r, obj *o);
recording *recording_exec(const recording *r, const obj *cb);
void recording_write(recording *r, obj *o, uint64_t subs, uint64_t drops);
const wrote *recording_wrote(const recording *r, const obj *o);
void image_subresources(obj *o, uint32_t levels, uint32_t layers);
void image_range(const obj *o, const VkImageSubresourceRange *r, uint32_t *l0, uint32_t *l1,
		 uint32_t *a0, uint32_t *a1);
uint64_t image_subs_of(const obj *o, const VkImageSubresourceRange *r, bool all);
uint64_t image_subs(const obj *o, const VkImageSubresourceRange *r);
uint64_t image_layers_subs(const obj *o, const VkImageSubresourceLayers *l);
uint64_t view_subs(const obj *v);
bool image_laid(const obj *o);
lay *lay_new(lay **v, uint32_t *n, uint32_t *cap, obj *o);
void lay_free(lay *l);
void recording_layout(recording *r, obj *o, const VkImageSubresourceRange *sub, int32_t expect,
		      int32_t final);
void submit_unref(submit *s);
void finds_add(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
	       const vk_field *f);
void trim_types_init(void);
obj *obj_lookup(trim *t, const vk_handle_info *h, uint64_t v);
obj *range_cb_lookup(trim *t, uint64_t v);
void obj_template(obj *o, const VkDescriptorUpdateTemplateCreateInfo *ci);
const obj *template_of(trim *t, const trace_call *c, const vk_command_info *cmd,
		       const void *args, const trace_value **data);
void call_handles(trim *t, const trace_call *c, const vk_command_info *cmd, void *args,
		  finds *in);
int trim_decode(trace_arena *a, const vk_command_info *cmd, const trace_call *c, void **args,
		trace_error *err);

/* spans.c: byte ranges, and the buffer reads made of them */
uint64_t span_upto(uint64_t off, uint64_t len);
void spans_add(spans *s, uint64_t off, uint64_t end);
void spans_sub(spans *s, uint64_t off, uint64_t end);
void spans_free(spans *s);
void breads_add(breads *b, obj *o, uint64_t off, uint64_t end);
void breads_free(breads *b);

/* contents.c: host-written bytes */
void content_unref(content *c);
content *content_ref(content *c);
int content_update_read(trim *t, const trace_call *c, vk_update *u, obj **o);
int content_track(trim *t, const trace_call *c);
void content_copy(obj *to, uint64_t to_off, const obj *from, uint64_t from_off, uint64_t len);

/* alias.c: objects bound over the same memory */
void alias_call(trim *t, const char *n, const void *args);
void alias_spread(obj *o, uint64_t off, uint64_t end);
void alias_unbind(obj *o);

/* access.c: what commands and descriptors read and write */
void set_bdesc(obj *s, uint32_t binding, uint32_t elem, obj *o, uint64_t off, uint64_t end);
void write_reads(trim *t, bsink *k, const VkWriteDescriptorSet *w);
void template_reads(trim *t, bsink *k, const trace_call *c, const vk_command_info *cmd,
		    const void *args);
bool barrier_cmd(const char *n);
void cmd_reads(trim *t, const trace_call *c, const vk_command_info *cmd, const void *args,
	       const finds *in, breads *out);
void buffer_host_use(trim *t, const char *n, const finds *in);
obj *descriptor_shows(trim *t, const vk_descriptor *d, bool *known);
/* What storage descriptors let shaders write (an image view, a buffer),
 * each with the binding of its set it is at (UINT32_MAX: not known). */
typedef struct stargets {
	vec o;
	uint32_t *at;
} stargets;
void stargets_free(stargets *st);
/* Whether a descriptor at binding AT may be what a use of binding WANT
 * reaches (either UINT32_MAX: any, not known). */
static inline bool binding_reaches(uint32_t want, uint32_t at)
{
	return want == UINT32_MAX || at == UINT32_MAX || at == want;
}
void storage_targets(trim *t, uint64_t set, const VkWriteDescriptorSet *w, stargets *out);
void template_targets(trim *t, uint64_t set, const trace_call *c, const vk_command_info *cmd,
		      const void *args, stargets *out);
void storage_written(recording *rc, obj *o);
void shader_writes(trim *t, recording *rc, uint64_t cb, const char *name);
/* What trim asks vk_iface of command CMD, worked out once per command:
 * whether vk_iface_note follows it, whether it runs shaders. */
enum { TC_IFACE = 1, TC_SHADERS = 2 };
unsigned trim_cmd_class(trim *t, const vk_command_info *cmd);
bool bind_followed(const trim *t, const char *name, uint64_t cb, const finds *in);
void recording_set_reads_add(trim *t, recording *rc, const char *name, bool shaders,
			     uint64_t cb, const finds *in);
bool set_read_at(const recording *r, const obj *set, uint32_t at);
void range_draw_reads(trim *t, obj *cb, const char *name);
obj *range_set_of(trim *t, uint64_t handle);
void range_set_named(trim *t, obj *s);
bool load_op_discards(VkAttachmentLoadOp op);
/* Whether LAYOUT is read-only for the depth aspect (STENCIL false) or the
 * stencil aspect. */
bool layout_read_only(VkImageLayout layout, bool stencil);
/* Whether ops that load (LOAD, NONE) and store (STORE, NONE) keep what
 * an attachment held. */
bool ops_keep(VkAttachmentLoadOp load, VkAttachmentStoreOp store);
void command_images(trim *t, const char *n, const void *args, image_fn fn, void *ctx);
uint64_t transfer_dst_subs(const char *n, const void *args, const obj *img);
uint64_t transfer_dst_whole(trim *t, const char *n, const void *args, const obj *o);
uint64_t transfer_src_subs(const char *n, const void *args, const obj *img);

/* state.c: Vulkan calls before the range */
void obj_attach(obj *o, rec *r);
void trim_keep_global(trim *t, rec *r);
void range_set_update(trim *t, const trace_call *c, const vk_command_info *cmd,
		      const void *args, const finds *in);
obj *finds_command_buffer(trim *t, const finds *in);
void recording_set_reads(trim *t, const recording *rc, breads *out, bool secondaries);
int trim_vk_before(trim *t, const trace_call *c, enum kind k, const vk_command_info *cmd);

/* events.c: what sets and resets events before the range */
void event_record(trim *t, recording *rc, const vk_command_info *cmd, const void *args);
void event_submit(submit *s);
void event_host(trim *t, const vk_command_info *cmd, const void *args);

/* known.c: the handles records made.  -1 with ERR when ARGS (CMD's,
 * decoded) name one no earlier record made, or one destroyed; else what
 * the call makes and ends is noted. */
int trim_known(trim *t, const vk_command_info *cmd, void *args, trace_error *err);

/* closure.c: what the range needs */
typedef bool (*recording_fn)(trim *t, void *ctx, rec *rc, const trace_call *c,
			     const vk_command_info *cmd, void *args, const finds *in);
bool recording_each(trim *t, const recording *r, bool naming, recording_fn fn, void *ctx);
void use_then(firsts *at, enum use u, uint64_t subs);
void firsts_then(firsts *at, const firsts *f);
void touch_cmd(trim *t, obj *cb, touches *l, const vk_command_info *cmd,
	       const void *args, const finds *in, bool secondaries);
void touch_before(trim *t, obj *cb);
uint64_t range_needs(const trim *t, const obj *o);
void range_names(trim *t, const vk_command_info *cmd, const void *args, const finds *in);
void close_recording(trim *t, closure *cl, recording *r, bool inputs);
void close_obj(trim *t, closure *cl, obj *o, uint64_t in);
/* Let go of the former writers of live objects that no closure can need,
 * when enough were made since the last sweep. */
void formers_sweep(trim *t);
void closure_readable(trim *t, const closure *cl);
/* Whether F, a handle command N names, is what a transfer command writes
 * and does not read. */
bool transfer_dst(const char *n, const found *f);

/* prune.c: transfers whose results nothing reads, left out of the setup:
 * how many (marked in t->pruned) */
uint64_t trim_prune(trim *t, const closure *cl);
bool trim_pruned(const trim *t, const rec *r);
void close_dispatchable(trim *t, closure *cl);

/* trim.c: classifying calls; the range's roots */
bool trim_named(const char *n, const char *base);
enum kind trim_kind_of(trim *t, const trace_func_sig *sig, const vk_command_info **cmd);
void range_root(trim *t, obj *o);

/* vma_trim.c: the VMA path */
enum kind trim_vma_kind(const char *n);
int trim_vma_before(trim *t, const trace_call *c, enum kind k);
void trim_vma_range(trim *t, const trace_call *c, enum kind k);

#endif
