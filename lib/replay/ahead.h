/*
 * Running ahead of the device, between its two files: ahead.c (the
 * program's waits, the ring of calls in flight, the batch of ours,
 * frames) and stage.c (memory the trace writes, ordered on the queue).
 */
#ifndef TRACE_REPLAY_AHEAD_H
#define TRACE_REPLAY_AHEAD_H

#include "replay_internal.h"

#define AHEAD_FRAMES 2
#define STAGING_MIN (1u << 20)
#define STAGING_MAX ((VkDeviceSize)64 << 20)

typedef struct ring_slot {
	VkFence fence;      /* null: the call failed, or is not watched */
	bool own;           /* one of ours: back to the spares when done */
	bool destroy;       /* the program's, destroyed or renamed: destroyed when done */
	bool signalled;     /* seen signalled before a reset */
} ring_slot;

typedef struct retired {
	uint64_t serial;    /* destroyed once this is done */
	VkObjectType type;  /* VK_OBJECT_TYPE_SEMAPHORE, _FENCE */
	uint64_t handle;
} retired;

/* a command buffer of the program's pool, renamed away from, free again
 * once its serial is done */
typedef struct spare_cb {
	VkCommandBuffer cb;
	VkCommandPool pool;
	uint64_t serial;
} spare_cb;

/* a batch of ours: its command buffer, free again once its serial is done */
typedef struct own_cb {
	VkCommandBuffer cb;
	uint64_t serial;
} own_cb;

/* bytes of the staging buffer a copy still reads */
typedef struct staged {
	VkDeviceSize begin, end;
	uint64_t serial;    /* 0: in the batch of ours not sent yet */
} staged;

struct vkr_ahead {
	VkQueue queue;
	uint32_t family;
	uint64_t sent, done;       /* serials: the last call sent, the last known done */
	uint64_t owed;             /* what the skipped waits stood for */
	uint64_t ordered;          /* a barrier of ours went after this serial */
	/* the submits held (queue.c): a skipped wait covered their first
	 * OWED_HELD batches, a barrier of ours went after ORDERED_HELD */
	uint32_t owed_held, ordered_held;
	/* the program's fences a held call went out without, a later one of
	 * that call in their place: signalled if running ahead ends */
	VkFence *aliased;
	size_t naliased, capaliased;
	/* the calls sent and not known done: serial base + i is ring[(head + i) % cap] */
	ring_slot *ring;
	size_t head, n, cap;
	uint64_t base;
	tmap fences;               /* (live fence, TAG_AHEAD) -> serial of the call it went with */
	tmap cbs;                  /* (live command buffer, TAG_AHEAD) -> serial of its last call */
	VkFence *spare_fences;
	size_t nspare_fences, capspare_fences;
	retired *ret;
	size_t nret, capret;
	spare_cb *spares;
	size_t nspares, capspares;
	/* the batch of ours for the next call */
	VkCommandPool pool;
	own_cb *own;
	size_t nown, capown;
	VkCommandBuffer open;      /* recording: a barrier, then copies */
	bool copies;
	group **open_groups;       /* the groups its copies write */
	size_t nopen_groups, capopen_groups;
	/* staging: a ring of bytes, copies in order */
	VkBuffer staging;
	VkDeviceMemory staging_mem;
	uint8_t *staging_map;
	VkDeviceSize staging_size;
	staged *stg;               /* the bytes copies still read, oldest first */
	size_t stg_head, stg_n, stg_cap;
	uint64_t frame_serial[AHEAD_FRAMES + 1];
	uint64_t frames;
	bool slow;                 /* TRACE_REPLAY_SLOW_DEVICE: polls see nothing done */
};

enum { TAG_AHEAD = 0x4148 };

/* ahead.c */
void ahead_poll(vkr *r, vkr_ahead *a);                     /* what is done, not waiting */
void ahead_wait_for(vkr *r, vkr_ahead *a, uint64_t serial); /* until SERIAL is done */
void ahead_pay(vkr *r, vkr_ahead *a);                      /* the skipped waits' work, done */
void ahead_open_batch(vkr *r, vkr_ahead *a);               /* the batch of ours, begun */

/* stage.c */
void ahead_free_staging(VkDevice dev, vkr_ahead *a);

#endif
