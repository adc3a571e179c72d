/*
 * --dump and --dump-resource: what dump_track.c learns of the commands a
 * trace records (which images and buffers each writes, image layouts,
 * descriptor set contents) and what dump.c reads back after a call.
 * Shared by those two files only; the replayer sees replay_internal.h's
 * vkr_dump_* hooks, which cost nothing without --dump.
 *
 * Everything is keyed by capture handles: what a user greps for in
 * `trace-decode`, and what names the files.
 */
#ifndef TRACE_REPLAY_DUMP_H
#define TRACE_REPLAY_DUMP_H

#include "replay_internal.h"

/* Why a resource is dumped: its part in the name of its file. */
enum dump_role {
	ROLE_DST,      /* a transfer's destination */
	ROLE_COLOR,    /* color attachment INDEX */
	ROLE_DEPTH,    /* the depth/stencil attachment */
	ROLE_RESOLVE,  /* resolve attachment INDEX */
	ROLE_STORAGE,  /* a storage buffer, image or texel buffer of a draw or dispatch */
	ROLE_PRESENT,  /* the image a present showed */
	ROLE_NAMED,    /* --dump-resource, at a call that did not write it */
};

/* A region of an image that a command copied into a buffer: where a
 * buffer's pixels are (its sidecar says so). */
typedef struct dump_copy {
	uint64_t offset;
	uint32_t row_length, image_height, width, height, depth;
	int32_t format;   /* the source image's, or -1 */
} dump_copy;

enum dump_ev { EV_WRITE_IMAGE, EV_WRITE_BUFFER, EV_LAYOUT };

/* What one recorded command did to one resource, in recording order. */
typedef struct dump_event {
	uint64_t cap;      /* the image or buffer */
	uint64_t no;       /* the call that recorded it */
	int32_t layout;    /* the image's layout after it, or -1 */
	uint8_t kind;      /* enum dump_ev */
	uint8_t role, index;
	bool has_copy;
	dump_copy copy;
} dump_event;

/* The storage descriptors of a set (or of the pushes to a command
 * buffer): what a draw or dispatch that binds it may write. */
typedef struct dump_desc {
	uint32_t binding, element;
	uint64_t cap;      /* an image view, a buffer, a buffer view */
	uint8_t what;      /* 0 image view, 1 buffer, 2 buffer view */
	int32_t layout;
} dump_desc;

typedef struct dump_set {
	dump_desc *d;
	size_t n, cap;
} dump_set;

/* An item to read back: one image or buffer, and why. */
typedef struct dump_item {
	uint64_t cap;
	bool image;
	uint8_t role, index;
	int32_t layout;          /* images: the layout it is in, or -1 */
	bool opaque;             /* a present's, of an opaque swapchain: alpha 255 */
	dump_copy *copies;       /* buffers: what copies from images wrote */
	size_t ncopies;
} dump_item;

typedef struct dump_items {
	dump_item *v;
	size_t n, cap;
} dump_items;

/* A copy planned into a staging buffer: one buffer, or one mip, layer
 * and aspect of an image. */
typedef struct dump_region {
	size_t item;
	uint32_t mip, layer, aspect;     /* images */
	uint32_t width, height, depth;   /* of the mip */
	uint64_t at, size, row_pitch;    /* in the staging buffer */
} dump_region;

/* The read-back of a set of items: staging memory, the copies into it. */
typedef struct dump_plan {
	uint64_t no;              /* the call whose resources they are */
	dump_items items;
	dump_region *reg;
	size_t nreg;
	VkBuffer staging;
	vkd_allocation mem;
	uint64_t size;
	bool read;                /* written out already */
} dump_plan;

/* What a command buffer recorded since its vkBeginCommandBuffer. */
typedef struct dump_cb {
	dump_event *ev;
	size_t n, cap;
	uint64_t sets[3][32];     /* bound: graphics, compute, ray tracing */
	dump_set push[3];         /* push descriptors, by bind point */
	bool in_pass;
	size_t pass_first, pass_end;  /* the current pass's attachment events */
	uint64_t *deferred;       /* dumped commands inside the pass: their calls */
	size_t ndeferred, capdeferred;
	dump_plan **plans;        /* read-backs recorded into it, read at its submit */
	size_t nplans, capplans;
} dump_cb;

typedef struct dump_image {
	VkImageType type;
	VkFormat format;
	VkExtent3D extent;
	uint32_t mips, layers;
	VkSampleCountFlagBits samples;
	VkImageUsageFlags usage;
	VkImageCreateFlags flags;
	int32_t layout;           /* the last one known after the submits so far */
	VkFormat live;            /* the format it is made in here: format, or
				   * the one the device has in its place
				   * (formats.c) */
} dump_image;

struct dump_state {
	tmap codes;     /* (command info) -> its code + 1 */
	tmap images;    /* (image) -> dump_image* */
	tmap views;     /* (image view) -> its image */
	tmap bviews;    /* (buffer view) -> its buffer */
	tmap fbs;       /* (framebuffer) -> uint64_t[1 + n]: n, then its views */
	tmap passes;    /* (render pass) -> uint32_t[1 + 3n]: n, then role, index, final layout */
	tmap sets;      /* (descriptor set) -> dump_set* */
	tmap tmpls;     /* (update template) -> its bind point + 1 */
	tmap cbs;       /* (command buffer) -> dump_cb* */
	tmap chains;    /* (swapchain) -> dump_image* of its images */
	tmap warned;    /* (handle) -> 1: said once why it is not dumped */
	/* the record in progress */
	bool dumped;          /* in --dump */
	uint64_t queue;       /* a submit's or present's queue (capture) */
	dump_items items;     /* what it wrote */
	dump_cb **reads;      /* command buffers it submits that hold read-backs */
	size_t nreads, capreads;
	/* the read-back's own command buffer, on the queue's family */
	VkCommandPool pool;
	VkDevice own_dev;     /* the device they are of */
	uint32_t family;
	VkCommandBuffer cb;
	VkFence fence;
	uint64_t last_no;     /* the last call replayed */
	bool noted;           /* vkr_dump_note saw the call now ending: a call
			       * replay skips (a surface query) is not noted, and
			       * must not dump what the call before it wrote */
	uint64_t files;
};

/* dump_track.c */
dump_cb *vkr_dump_cb(dump_state *d, uint64_t cap);
dump_image *vkr_dump_image(dump_state *d, uint64_t cap);
void vkr_dump_track(vkr *r, const cmd_entry *e, void *args);
void vkr_dump_free_tracking(vkr *r);
/* the items of D's command buffer CB that call NO's command wrote
 * (every attachment of the pass for a command inside one) */
void vkr_dump_cmd_items(dump_state *d, dump_cb *cb, const uint64_t *nos, size_t nnos,
			dump_items *out);
void vkr_dump_add_item(dump_items *it, const dump_item *add);
/* the written resources of a submit's command buffer, its layouts applied */
void vkr_dump_apply(vkr *r, dump_cb *cb, dump_items *out);

/* dump.c */
bool vkr_dump_wanted(const vkr *r, uint64_t cap);

#endif
