/*
 * Running ahead of the device (--waits-as-captured turns it off).
 *
 * A wait the program made on the host, and saw end at capture
 * (vkWaitForFences, vkGetFenceStatus, vkWaitSemaphores,
 * vkGetSemaphoreCounterValue, vkQueueWaitIdle, vkDeviceWaitIdle), is not
 * made.  What it stood for is kept as a debt: the serial of the last
 * submit it covered.  The debt is paid, by waiting, only at a record that
 * needs that work done on the host's side (a destroy, a free, a pool or
 * descriptor reset, anything not known to be safe: vkr_ahead_entry).  The
 * records that follow a skipped wait in most programs need no payment:
 *
 *   - a submit gets a batch of ours first, a full pipeline barrier, so
 *     its work still starts after all the work the wait covered ended;
 *   - vkBeginCommandBuffer or vkResetCommandBuffer of a primary command
 *     buffer still pending takes another command buffer of the same pool
 *     (renamed; the old one is kept for the next rename; a secondary's
 *     pays, since no submit names it), and primaries are begun with
 *     SIMULTANEOUS_USE, so one submitted again pending is no error
 *     (vkd3d-gears submits its recorded ones each frame);
 *   - vkResetFences of a fence still pending takes another fence;
 *   - vkDestroySemaphore and vkDestroyFence are made once the submits
 *     sent before them are done;
 *   - memory the trace writes (tracekit.update) while work is in flight
 *     that the program's waits said was over goes through a staging
 *     buffer and a copy in that first batch, ordered on the queue
 *     (vkr_ahead_stage), not written under the device's feet.
 *
 * Only a wait for everything submitted so far is skipped: a wait for
 * older work is made, at the next record, unless that record is a wait
 * for everything, which it then joins (vkr_ahead_record).
 *
 * Every call of ours to vkQueueSubmit carries a fence whose signal is
 * seen as a serial done: the program's (or a mark's), or one of ours
 * where it has none.  A fence of the program's reset while in the ring
 * is seen signalled first.  The replay keeps at most AHEAD_FRAMES frames
 * ahead of the device.
 *
 * It follows one queue: a submit to a second queue, or a sparse bind,
 * pays every debt and ends it for the device (the program's waits are
 * made from then on).  --loop, --dump and --check leave it off.
 *
 * Why: on an H200 vkd3d-gears took 70 us a frame for 32 us of GPU work,
 * waiting each frame for the frame before; mpv waited three times a
 * frame, 207 us for 44 us.  Running ahead, gears ran 17,700 frames/s
 * against 12,900.
 */
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

/* ------------------------------------------------------------------ */
/* Which records are safe ahead of the device. */

enum ahead_kind {
	AK_PAY = 0,        /* needs the work the skipped waits stood for done */
	AK_FREE,           /* safe: records, creates, queries, presents */
	AK_WAIT,           /* a wait: skipped */
	AK_BEGIN,          /* vkBeginCommandBuffer, vkResetCommandBuffer */
	AK_RESET_FENCES,
	AK_DESTROY_SYNC,   /* vkDestroyFence, vkDestroySemaphore */
	AK_SUBMIT,         /* vkQueueSubmit, vkQueueSubmit2: queue.c */
	AK_OFF,            /* vkQueueBindSparse: pays everything, ends it */
	AK_POOL,           /* vkResetCommandPool, vkDestroyCommandPool: pays, and
			    * the pool's spare command buffers done first */
};

void vkr_ahead_entry(cmd_entry *e)
{
	static const vk_named table[] = {
		{"vkWaitForFences", AK_WAIT},
		{"vkGetFenceStatus", AK_WAIT},
		{"vkWaitSemaphores", AK_WAIT},
		{"vkWaitSemaphoresKHR", AK_WAIT},
		{"vkGetSemaphoreCounterValue", AK_WAIT},
		{"vkGetSemaphoreCounterValueKHR", AK_WAIT},
		{"vkQueueWaitIdle", AK_WAIT},
		{"vkDeviceWaitIdle", AK_WAIT},
		{"vkBeginCommandBuffer", AK_BEGIN},
		{"vkResetCommandBuffer", AK_BEGIN},
		{"vkResetFences", AK_RESET_FENCES},
		{"vkDestroyFence", AK_DESTROY_SYNC},
		{"vkDestroySemaphore", AK_DESTROY_SYNC},
		{"vkQueueSubmit", AK_SUBMIT},
		{"vkQueueSubmit2", AK_SUBMIT},
		{"vkQueueSubmit2KHR", AK_SUBMIT},
		{"vkQueueBindSparse", AK_OFF},
		{"vkResetCommandPool", AK_POOL},
		{"vkDestroyCommandPool", AK_POOL},
		{"vkEndCommandBuffer", AK_FREE},
		{"vkQueuePresentKHR", AK_FREE},
		{"vkAcquireNextImageKHR", AK_FREE},
		{"vkAcquireNextImage2KHR", AK_FREE},
		{"vkGetQueryPoolResults", AK_FREE},  /* asked, never waited for */
		{"vkTrimCommandPool", AK_FREE},
		{"vkMapMemory", AK_FREE},
		{"vkMapMemory2KHR", AK_FREE},
		{"vkUnmapMemory", AK_FREE},
		{"vkUnmapMemory2KHR", AK_FREE},
		{"vkFlushMappedMemoryRanges", AK_FREE},
		{"vkInvalidateMappedMemoryRanges", AK_FREE},
		{"vkSignalSemaphore", AK_FREE},
		{"vkSignalSemaphoreKHR", AK_FREE},
		{"vkGetEventStatus", AK_PAY},
		{"vkGetSwapchainStatusKHR", AK_FREE},
	};
	const char *n = e->cmd->sig.name;
	int k = VK_BY_NAME(table, n, -1);
	if (k >= 0)
		e->ahead = (uint8_t)k;
	else if (!strncmp(n, "vkCmd", 5) || !strncmp(n, "vkGet", 5) ||
		 !strncmp(n, "vkEnumerate", 11) || !strncmp(n, "vkAllocate", 10) ||
		 !strncmp(n, "vkBind", 6) || !strncmp(n, "vkSetDebugUtils", 15) ||
		 !strncmp(n, "vkDebugMarker", 13) || !strncmp(n, "vkQueueBeginDebugUtils", 22) ||
		 !strncmp(n, "vkQueueEndDebugUtils", 20) || !strncmp(n, "vkQueueInsertDebugUtils", 23) ||
		 (!strncmp(n, "vkCreate", 8) && !strstr(n, "Swapchain") &&
		  strcmp(n, "vkCreateDevice") && strcmp(n, "vkCreateInstance")))
		e->ahead = AK_FREE;
	else
		e->ahead = AK_PAY;
}

/* ------------------------------------------------------------------ */
/* Serials: the ring of calls in flight. */

static ring_slot *slot_of(vkr_ahead *a, uint64_t serial)
{
	if (serial < a->base || serial - a->base >= a->n)
		return NULL;
	return &a->ring[(a->head + (serial - a->base)) % a->cap];
}

/* Fence F, signalled or never submitted, kept unsignalled for the next
 * that is needed: NVIDIA's driver took 280 us to make one and as long to
 * destroy it, more than a frame of vkd3d-gears. */
static void spare_fence(vkr *r, vkr_ahead *a, VkFence f)
{
	vkResetFences(r->d->vk.device, 1, &f);
	if (a->nspare_fences == a->capspare_fences) {
		a->capspare_fences = a->capspare_fences ? 2 * a->capspare_fences : 16;
		a->spare_fences = trace_xrealloc(a->spare_fences, a->capspare_fences * sizeof(VkFence));
	}
	a->spare_fences[a->nspare_fences++] = f;
}

static bool take_fence(vkr *r, vkr_ahead *a, VkFence *f)
{
	if (a->nspare_fences) {
		*f = a->spare_fences[--a->nspare_fences];
		return true;
	}
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	return vkCreateFence(r->d->vk.device, &fci, NULL, f) == VK_SUCCESS;
}

static void destroy_retired(vkr *r, vkr_ahead *a, bool all)
{
	VkDevice dev = r->d->vk.device;
	size_t k = 0;
	for (size_t i = 0; i < a->nret; i++) {
		retired *t = &a->ret[i];
		if (!all && t->serial > a->done) {
			a->ret[k++] = *t;
			continue;
		}
		if (t->type == VK_OBJECT_TYPE_FENCE && !all)
			spare_fence(r, a, (VkFence)(uintptr_t)t->handle);
		else if (t->type == VK_OBJECT_TYPE_FENCE)
			vkDestroyFence(dev, (VkFence)(uintptr_t)t->handle, NULL);
		else
			vkDestroySemaphore(dev, (VkSemaphore)(uintptr_t)t->handle, NULL);
	}
	a->nret = k;
}

static void retire(vkr_ahead *a, uint64_t serial, VkObjectType type, uint64_t handle)
{
	if (a->nret == a->capret) {
		a->capret = a->capret ? 2 * a->capret : 16;
		a->ret = trace_xrealloc(a->ret, a->capret * sizeof(*a->ret));
	}
	a->ret[a->nret++] = (retired){serial, type, handle};
}

/* The oldest call in flight is done. */
static void pop(vkr *r, vkr_ahead *a)
{
	ring_slot *s = &a->ring[a->head];
	if (s->fence) {
		/* (a fence of the program's may have gone with a later call
		 * since: that one is still in flight) */
		uint64_t *m = tmap_at(&a->fences, H(s->fence), TAG_AHEAD);
		if (m && *m == a->base)
			tmap_del(&a->fences, H(s->fence), TAG_AHEAD, NULL);
		/* ours, or the program's renamed away or destroyed */
		if (s->own || s->destroy)
			spare_fence(r, a, s->fence);
	}
	a->done = a->base;
	a->base++;
	a->head = (a->head + 1) % a->cap;
	a->n--;
}

/* What is done, asked without waiting. */
static void poll(vkr *r, vkr_ahead *a)
{
	if (a->slow)
		return;
	bool any = false;
	while (a->n) {
		ring_slot *s = &a->ring[a->head];
		if (s->fence && !s->signalled &&
		    vkGetFenceStatus(r->d->vk.device, s->fence) != VK_SUCCESS)
			break;
		pop(r, a);
		any = true;
	}
	if (any && a->nret)
		destroy_retired(r, a, false);
}

/* Waits until SERIAL is done. */
static void wait_for(vkr *r, vkr_ahead *a, uint64_t serial)
{
	poll(r, a);
	while (a->done < serial && a->n) {
		ring_slot *s = &a->ring[a->head];
		if (s->fence && !s->signalled)
			vkr_bounded(r, vkWaitForFences(r->d->vk.device, 1, &s->fence, VK_TRUE,
						       vkr_wait_ns(r)), "a submit the program waited for");
		pop(r, a);
	}
	if (a->nret)
		destroy_retired(r, a, false);
}

/* Pays the debt: the work the skipped waits stood for, done. */
static void pay(vkr *r, vkr_ahead *a)
{
	if (a->owed <= a->done)
		return;
	poll(r, a);
	if (a->owed <= a->done)
		return;
	r->ahead_paid++;
	double t = vkr_now_s();
	vkr_send_held(r);
	wait_for(r, a, a->owed);
	r->ahead_paid_s += vkr_now_s() - t;
}

/* ------------------------------------------------------------------ */
/* The batch of ours. */

static VkCommandBuffer own_take(vkr *r, vkr_ahead *a)
{
	VkDevice dev = r->d->vk.device;
	for (size_t i = 0; i < a->nown; i++)
		if (a->own[i].serial <= a->done) {
			a->own[i].serial = UINT64_MAX;
			vkResetCommandBuffer(a->own[i].cb, 0);
			return a->own[i].cb;
		}
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					  .commandPool = a->pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					  .commandBufferCount = 1};
	VkCommandBuffer cb;
	if (vkAllocateCommandBuffers(dev, &ai, &cb) != VK_SUCCESS)
		vkr_fatal(r, "running ahead: a command buffer of our own: out of memory");
	if (a->nown == a->capown) {
		a->capown = a->capown ? 2 * a->capown : 8;
		a->own = trace_xrealloc(a->own, a->capown * sizeof(*a->own));
	}
	a->own[a->nown++] = (own_cb){cb, UINT64_MAX};
	return cb;
}

/* Opens the batch of ours with a barrier: everything before it on the
 * queue ends, and its writes are seen, before anything after begins. */
static void open_batch(vkr *r, vkr_ahead *a)
{
	if (a->open)
		return;
	a->open = own_take(r, a);
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	vkBeginCommandBuffer(a->open, &bi);
	VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			      .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
			      .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
	vkCmdPipelineBarrier(a->open, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
			     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	a->copies = false;
	r->ahead_barriers++;
}

/* Ends the batch of ours: the copies' writes seen by what follows. */
static VkCommandBuffer close_batch(vkr *r, vkr_ahead *a)
{
	(void)r;
	VkCommandBuffer cb = a->open;
	if (!cb)
		return VK_NULL_HANDLE;
	if (a->copies) {
		VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
				      .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
				      .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT |
						       VK_ACCESS_MEMORY_WRITE_BIT};
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	}
	vkEndCommandBuffer(cb);
	a->open = VK_NULL_HANDLE;
	a->copies = false;
	return cb;
}

/* ------------------------------------------------------------------ */
/* Start and end. */

static void ahead_start(vkr *r, VkQueue queue)
{
	uint64_t *fam = tmap_at(&r->d->queues, H(queue), TAG_QUEUE);
	if (!fam) {
		r->d->ahead_off = true;  /* a queue of no known family */
		return;
	}
	vkr_ahead *a = trace_xcalloc(1, sizeof(*a));
	a->queue = queue;
	a->family = (uint32_t)*fam;
	a->cap = 64;
	a->ring = trace_xcalloc(a->cap, sizeof(*a->ring));
	/* for the tests: a device that never seems to catch up, so that
	 * every way of running ahead is taken whatever the device's speed */
	const char *slow = getenv("TRACE_REPLAY_SLOW_DEVICE");
	a->slow = slow && *slow && strcmp(slow, "0");
	a->base = 1;
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
				       .queueFamilyIndex = a->family};
	if (vkCreateCommandPool(r->d->vk.device, &pci, NULL, &a->pool) != VK_SUCCESS) {
		free(a->ring);
		free(a);
		r->d->ahead_off = true;
		return;
	}
	r->d->ahead = a;
}

static void free_staging(VkDevice dev, vkr_ahead *a)
{
	if (a->staging) {
		vkDestroyBuffer(dev, a->staging, NULL);
		vkFreeMemory(dev, a->staging_mem, NULL);
	}
	a->staging = VK_NULL_HANDLE;
	a->staging_mem = VK_NULL_HANDLE;
	a->staging_map = NULL;
	a->staging_size = 0;
	a->stg_n = 0;
}

void vkr_ahead_free(vkr *r, vkr_device *d)
{
	vkr_ahead *a = d->ahead;
	if (!a)
		return;
	vkr_device *cur = r->d;
	r->d = d;
	VkDevice dev = d->vk.device;
	vkDeviceWaitIdle(dev);
	if (a->open) {
		vkEndCommandBuffer(a->open);
		a->open = VK_NULL_HANDLE;
	}
	while (a->n) {
		a->ring[a->head].signalled = true;
		pop(r, a);
	}
	destroy_retired(r, a, true);
	for (size_t i = 0; i < a->nspare_fences; i++)
		vkDestroyFence(dev, a->spare_fences[i], NULL);
	/* the spare command buffers go with their pools */
	vkDestroyCommandPool(dev, a->pool, NULL);
	free_staging(dev, a);
	free(a->ring);
	free(a->spare_fences);
	free(a->ret);
	free(a->spares);
	free(a->own);
	free(a->stg);
	free(a->open_groups);
	tmap_free(&a->fences);
	tmap_free(&a->cbs);
	free(a);
	d->ahead = NULL;
	r->d = cur;
}

/* Pays everything, and follows the program's waits from now on. */
static void ahead_end(vkr *r)
{
	vkr_ahead_settle(r);
	r->ahead_ended++;
	vkr_ahead_free(r, r->d);
	r->d->ahead_off = true;
}

/* ------------------------------------------------------------------ */
/* Submits. */

VkFence vkr_ahead_call(vkr *r, VkQueue queue, VkFence fence, VkCommandBuffer *pre)
{
	*pre = VK_NULL_HANDLE;
	if (!r->ahead_on || r->d->ahead_off)
		return fence;
	if (!r->d->ahead)
		ahead_start(r, queue);
	vkr_ahead *a = r->d->ahead;
	if (!a)
		return fence;
	if (queue != a->queue) {
		ahead_end(r);
		return fence;
	}
	poll(r, a);
	/* a barrier where the work a skipped wait stood for may still run */
	if (a->owed > a->done && a->owed > a->ordered)
		open_batch(r, a);
	if (a->open) {
		a->ordered = a->sent;
		*pre = close_batch(r, a);
	}
	if (a->n == a->cap) {
		ring_slot *g = trace_xcalloc(2 * a->cap, sizeof(*g));
		for (size_t i = 0; i < a->n; i++)
			g[i] = a->ring[(a->head + i) % a->cap];
		free(a->ring);
		a->ring = g;
		a->head = 0;
		a->cap *= 2;
	}
	uint64_t serial = a->base + a->n;
	ring_slot *s = &a->ring[(a->head + a->n) % a->cap];
	*s = (ring_slot){.fence = fence};
	if (!fence) {
		if (!take_fence(r, a, &s->fence))
			vkr_fatal(r, "running ahead: a fence of our own: out of memory");
		s->own = true;
	}
	a->n++;
	a->sent = serial;
	tmap_set(&a->fences, H(s->fence), TAG_AHEAD, serial);
	/* the batch of ours and the staging bytes its copies read go with it */
	for (size_t i = 0; *pre && i < a->nown; i++)
		if (a->own[i].cb == *pre)
			a->own[i].serial = serial;
	for (size_t i = 0; *pre && i < a->nopen_groups; i++)
		a->open_groups[i]->staged_serial = serial;
	if (*pre)
		a->nopen_groups = 0;
	for (size_t i = 0; i < a->stg_n; i++) {
		staged *g = &a->stg[(a->stg_head + i) % a->stg_cap];
		if (!g->serial)
			g->serial = serial;
	}
	return s->fence;
}

void vkr_ahead_called(vkr *r, bool ok)
{
	vkr_ahead *a = r->d->ahead;
	if (!a || ok)
		return;
	/* a call that failed signals nothing: nothing waits on its slot */
	ring_slot *s = slot_of(a, a->sent);
	if (s && s->fence) {
		tmap_del(&a->fences, H(s->fence), TAG_AHEAD, NULL);
		if (s->own) {
			vkDestroyFence(r->d->vk.device, s->fence, NULL);
		}
		s->fence = VK_NULL_HANDLE;
	}
}

void vkr_ahead_note_cbs(vkr *r, const VkCommandBuffer *cbs, uint32_t n)
{
	vkr_ahead *a = r->d->ahead;
	for (uint32_t i = 0; a && cbs && i < n; i++)
		tmap_set(&a->cbs, H(cbs[i]), TAG_AHEAD, a->sent);
}

/* ------------------------------------------------------------------ */
/* The records. */

static bool pending_serial(vkr_ahead *a, tmap *m, uint64_t live, uint64_t *serial)
{
	uint64_t *s = tmap_at(m, live, TAG_AHEAD);
	if (!s || *s <= a->done)
		return false;
	*serial = *s;
	return true;
}

/* vkBeginCommandBuffer, vkResetCommandBuffer of CAP: another command
 * buffer of its pool where it is pending. */
static void begin(vkr *r, vkr_ahead *a, const cmd_entry *e, void *args)
{
	uint64_t cap = vkr_handle_at(args, &e->cmd->params[0]), live, serial;
	if (!vkr_map_get(r, r->h_command_buffer, cap, &live) || !live)
		return;
	if (!tmap_at(&r->cbs, cap, TAG_CBSTATE)) {
		/* a secondary is pending while a primary that runs it is, which
		 * no submit names: the program's own waits said when */
		pay(r, a);
		return;
	}
	poll(r, a);
	if (!pending_serial(a, &a->cbs, live, &serial))
		return;
	uint64_t *cap_pool = tmap_at(&r->cbs, cap, TAG_CBPOOL);
	uint64_t pool = 0;
	if (!cap_pool || !vkr_map_get(r, r->h_command_pool, *cap_pool, &pool) || !pool) {
		vkr_send_held(r);
		wait_for(r, a, serial);
		return;
	}
	VkCommandBuffer cb = VK_NULL_HANDLE;
	for (size_t i = 0; i < a->nspares; i++)
		if (a->spares[i].pool == (VkCommandPool)(uintptr_t)pool &&
		    a->spares[i].serial <= a->done) {
			cb = a->spares[i].cb;
			a->spares[i] = (spare_cb){(VkCommandBuffer)(uintptr_t)live,
						  (VkCommandPool)(uintptr_t)pool, serial};
			break;
		}
	if (!cb) {
		VkCommandBufferAllocateInfo ai = {
			.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
			.commandPool = (VkCommandPool)(uintptr_t)pool,
			.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
			.commandBufferCount = 1};
		if (vkAllocateCommandBuffers(r->d->vk.device, &ai, &cb) != VK_SUCCESS) {
			vkr_send_held(r);
			wait_for(r, a, serial);
			return;
		}
		if (a->nspares == a->capspares) {
			a->capspares = a->capspares ? 2 * a->capspares : 16;
			a->spares = trace_xrealloc(a->spares, a->capspares * sizeof(*a->spares));
		}
		a->spares[a->nspares++] = (spare_cb){(VkCommandBuffer)(uintptr_t)live,
						     (VkCommandPool)(uintptr_t)pool, serial};
	}
	tmap_del(&a->cbs, live, TAG_AHEAD, NULL);
	vkr_map_put(r, r->h_command_buffer, cap, H(cb));
	r->ahead_renamed++;
}

/* vkResetCommandPool, vkDestroyCommandPool: the pool's spares done
 * first; a destroyed pool's are gone with it. */
static void pool_op(vkr *r, vkr_ahead *a, const cmd_entry *e, void *args)
{
	uint64_t cap = vkr_handle_at(args, &e->cmd->params[1]), pool;
	if (!vkr_map_get(r, r->h_command_pool, cap, &pool) || !pool)
		return;
	bool gone = !strcmp(e->cmd->sig.name, "vkDestroyCommandPool");
	size_t k = 0;
	for (size_t i = 0; i < a->nspares; i++) {
		spare_cb *s = &a->spares[i];
		if (s->pool != (VkCommandPool)(uintptr_t)pool) {
			a->spares[k++] = *s;
			continue;
		}
		if (s->serial > a->done)
			wait_for(r, a, s->serial);
		if (!gone)
			a->spares[k++] = *s;
	}
	a->nspares = k;
}

/* vkResetFences: a fence still in flight is replaced by a new one. */
static void reset_fences(vkr *r, vkr_ahead *a, void *args)
{
	vk_args_vkResetFences *f = args;
	for (uint32_t i = 0; f->pFences && i < f->fenceCount; i++) {
		uint64_t cap = H(f->pFences[i]), live, serial;
		if (!vkr_map_get(r, r->h_fence, cap, &live) || !live)
			continue;
		VkFence old = (VkFence)(uintptr_t)live;
		bool ours = pending_serial(a, &a->fences, live, &serial);
		VkResult st = vkGetFenceStatus(r->d->vk.device, old);
		if (st == VK_SUCCESS && !(a->slow && ours)) {
			/* signalled: reset as the program does; its slot remembers */
			ring_slot *s = ours ? slot_of(a, serial) : NULL;
			if (s)
				s->signalled = true;
			tmap_del(&a->fences, live, TAG_AHEAD, NULL);
			continue;
		}
		/* not signalled: in flight, or never submitted (a new fence is
		 * as good) */
		VkFence nf;
		if (!take_fence(r, a, &nf)) {
			vkr_send_held(r);
			wait_for(r, a, ours ? serial : a->sent);
			continue;
		}
		ring_slot *s = ours ? slot_of(a, serial) : NULL;
		if (s) {
			s->destroy = true;
		} else {
			/* an acquire's, on a submit of replay's own after call
			 * a->sent, to the same queue or not (then kept to the end) */
			retire(a, r->d->vk.queue == a->queue ? a->sent + 1 : UINT64_MAX,
			       VK_OBJECT_TYPE_FENCE, live);
		}
		vkr_map_put(r, r->h_fence, cap, H(nf));
		r->ahead_fences++;
	}
}

bool vkr_ahead_defer_destroy(vkr *r, const cmd_entry *e, void *args)
{
	vkr_ahead *a = r->d->ahead;
	if (!a)
		return false;
	uint64_t cap = vkr_handle_at(args, &e->cmd->params[1]), live, serial;
	if (!cap || !vkr_map_get(r, e->cmd->params[1].ref, cap, &live) || !live)
		return false;
	/* a submit of replay's own (an acquire's) may follow the last call
	 * sent: on the same queue, the next call's end sees it done */
	uint64_t next = r->d->vk.queue == a->queue ? a->sent + 1 : UINT64_MAX;
	poll(r, a);
	if (e->cmd->params[1].ref == r->h_fence) {
		if (pending_serial(a, &a->fences, live, &serial)) {
			slot_of(a, serial)->destroy = true;
			tmap_del(&a->fences, live, TAG_AHEAD, NULL);
		} else if (vkGetFenceStatus(r->d->vk.device, (VkFence)(uintptr_t)live) != VK_SUCCESS) {
			retire(a, next, VK_OBJECT_TYPE_FENCE, live);
		} else {
			return false;
		}
	} else {
		retire(a, next, VK_OBJECT_TYPE_SEMAPHORE, live);
	}
	/* its handles as the call would check them (a device edited away) */
	vkr_remap_args(r, e->cmd, args);
	vkr_map_del(r, e->cmd->params[1].ref, cap);
	r->calls++;
	return true;
}

void vkr_ahead_fence_signalled(vkr *r, VkFence f)
{
	vkr_ahead *a = r->d->ahead;
	uint64_t *s = a ? tmap_at(&a->fences, H(f), TAG_AHEAD) : NULL;
	if (!s)
		return;
	ring_slot *sl = slot_of(a, *s);
	if (sl)
		sl->signalled = true;
	tmap_del(&a->fences, H(f), TAG_AHEAD, NULL);
}

/* The serial a skipped wait stood for: the latest call its fences went
 * with (all sent, where it names none of ours). */
static uint64_t waited_serial(vkr *r, vkr_ahead *a, const cmd_entry *e, void *args, bool *known)
{
	*known = false;
	const VkFence *fences = NULL;
	uint32_t n = 0;
	if (!strcmp(e->cmd->sig.name, "vkWaitForFences")) {
		fences = ((vk_args_vkWaitForFences *)args)->pFences;
		n = ((vk_args_vkWaitForFences *)args)->fenceCount;
	} else if (!strcmp(e->cmd->sig.name, "vkGetFenceStatus")) {
		fences = &((vk_args_vkGetFenceStatus *)args)->fence;
		n = 1;
	} else {
		return a->sent;
	}
	uint64_t top = 0;
	bool all = fences && n;
	for (uint32_t i = 0; fences && i < n; i++) {
		uint64_t cap = H(fences[i]), live, serial;
		if (vkr_acquired_fence(r, cap))
			continue;  /* an acquire's: nothing of the program's */
		if (!vkr_map_get(r, r->h_fence, cap, &live) || !live) {
			all = false;
			continue;
		}
		uint64_t *s = tmap_at(&a->fences, live, TAG_AHEAD);
		serial = s ? *s : 0;
		if (!s)
			all = false;
		if (serial > top)
			top = serial;
	}
	*known = all;
	return top;
}

/* The wait for older work put off at the record before, made. */
static void lazy_wait(vkr *r)
{
	vkr_device *cur = r->d;
	r->d = r->ahead_lazy_dev;
	vkr_ahead *a = r->d->ahead;
	double t = r->opt->stats ? vkr_now_s() : 0.0;
	if (a && !a->slow) {
		wait_for(r, a, r->ahead_lazy);
	} else if (a) {
		/* TRACE_REPLAY_SLOW_DEVICE: made as the program made it,
		 * the ring left as a wait of the program's leaves it */
		for (size_t i = 0; i < a->n && a->base + i <= r->ahead_lazy; i++) {
			ring_slot *sl = &a->ring[(a->head + i) % a->cap];
			if (sl->fence && !sl->signalled)
				vkr_bounded(r, vkWaitForFences(r->d->vk.device, 1, &sl->fence, VK_TRUE,
							       vkr_wait_ns(r)),
					    "a submit the program waited for");
		}
	}
	if (r->opt->stats)
		r->ahead_lazy_s += vkr_now_s() - t;
	r->ahead_lazy_dev = NULL;
	r->ahead_lazy = 0;
	r->d = cur;
}

bool vkr_ahead_record(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	vkr_ahead *a = r->d->ahead;
	bool known = false;
	uint64_t s = 0;
	if (r->ahead_lazy_dev) {
		/* a wait for older work put off: a record of the same
		 * device that is a wait seen over for everything submitted
		 * joins it to the debt; a poll seen not over leaves it put
		 * off; anything else finds it made first */
		bool keep = false;
		if (r->ahead_lazy_dev == r->d && a && e->ahead == AK_WAIT) {
			if (capres != VK_SUCCESS) {
				keep = true;
			} else {
				s = waited_serial(r, a, e, args, &known);
				keep = known || s >= a->sent;
			}
		}
		if (!keep)
			lazy_wait(r);
	}
	switch ((enum ahead_kind)e->ahead) {
	case AK_FREE:
	case AK_SUBMIT:
		return true;
	case AK_WAIT:
		/* one not over at capture is not waited for either way */
		if (!a || capres != VK_SUCCESS)
			return true;
		if (!r->ahead_lazy_dev)
			s = waited_serial(r, a, e, args, &known);
		/* a wait for work older than the last submit: the program
		 * keeps frames in flight itself, and a host wait for one
		 * costs less than the barrier and copies that would stand for
		 * it (vkcube on an H200: 15,700 frames/s running ahead,
		 * 20,900 waiting).  It is made at the next record, unless
		 * that is a wait for everything submitted: libplacebo polls
		 * the fence of its frame's second submit, then its third's,
		 * one after the other, and an H200 took 62-77 us to end the
		 * second while the third ran */
		if (s < a->sent) {
			if (!known)
				return true;
			if (!r->ahead_lazy_dev || s > r->ahead_lazy)
				r->ahead_lazy = s;
			r->ahead_lazy_dev = r->d;
			r->ahead_lazy_sig = &e->cmd->sig;
			vkr_remap_args(r, e->cmd, args);
			return false;
		}
		if (r->ahead_lazy_dev) {
			r->ahead_joined++;
			r->ahead_lazy_dev = NULL;
			r->ahead_lazy = 0;
		}
		if (s > a->owed)
			a->owed = s;
		r->ahead_waits++;
		/* its handles as the call would check them */
		vkr_remap_args(r, e->cmd, args);
		return false;
	case AK_BEGIN:
		/* a primary submitted again while pending is no error */
		if (!r->d->ahead_off && !strcmp(e->cmd->sig.name, "vkBeginCommandBuffer") &&
		    tmap_at(&r->cbs, vkr_handle_at(args, &e->cmd->params[0]), TAG_CBSTATE)) {
			VkCommandBufferBeginInfo *bi = (VkCommandBufferBeginInfo *)
				((vk_args_vkBeginCommandBuffer *)args)->pBeginInfo;
			if (bi && !(bi->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
				bi->flags |= VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
		}
		if (a)
			begin(r, a, e, args);
		return true;
	case AK_RESET_FENCES:
		if (a)
			reset_fences(r, a, args);
		return true;
	case AK_DESTROY_SYNC:
		/* a semaphore's: vkr_present_release and timeline.c first (replay.c) */
		return e->cmd->params[1].ref != r->h_fence || !vkr_ahead_defer_destroy(r, e, args);
	case AK_OFF:
		if (a)
			ahead_end(r);
		return true;
	case AK_POOL:
		if (a) {
			pay(r, a);
			pool_op(r, a, e, args);
		}
		return true;
	case AK_PAY:
	default:
		if (!a)
			return true;
		/* a destroy of a null handle ends nothing (mpv destroys a null
		 * buffer view each frame, after a wait it made for its submit) */
		if ((e->cmd->action == VK_ACTION_DESTROY || e->cmd->action == VK_ACTION_FREE) &&
		    e->cmd->nparams > 1 && e->cmd->params[1].base == VK_B_HANDLE &&
		    !e->cmd->params[1].ptr && !vkr_handle_at(args, &e->cmd->params[1]))
			return true;
		pay(r, a);
		return true;
	}
}

/* ------------------------------------------------------------------ */
/* Memory the trace writes, ordered on the queue. */

static void staging_retire(vkr_ahead *a);

/* (memory records name no device: the group's is the one that writes) */
static bool stages(vkr *r, const group *g)
{
	vkr_ahead *a = r->d->ahead;
	if (!a)
		return false;
	poll(r, a);
	staging_retire(a);
	/* copies into it still to land: what follows lands after them */
	if (g->staged_serial > a->done)
		return true;
	return a->owed > a->done;
}

bool vkr_ahead_stages(vkr *r, const group *g)
{
	vkr_device *cur = r->d;
	r->d = g->dev;
	bool yes = stages(r, g);
	r->d = cur;
	return yes;
}

void vkr_ahead_unstaged(vkr *r, const group *g)
{
	vkr_device *cur = r->d;
	r->d = g->dev;
	vkr_ahead *a = r->d->ahead;
	if (a && g->staged_serial > a->done)
		vkr_ahead_settle(r);
	else if (a)
		pay(r, a);
	r->d = cur;
}

/* The staged bytes whose copies are done, given back. */
static void staging_retire(vkr_ahead *a)
{
	while (a->stg_n) {
		staged *g = &a->stg[a->stg_head];
		if (!g->serial || g->serial > a->done)
			break;
		a->stg_head = (a->stg_head + 1) % a->stg_cap;
		a->stg_n--;
	}
}

/* Room for LEN bytes in the staging ring, at *OFF, between the newest
 * bytes in flight and the oldest. */
static bool staging_room(const vkr_ahead *a, VkDeviceSize len, VkDeviceSize *off)
{
	if (!a->staging || len > a->staging_size)
		return false;
	if (!a->stg_n) {
		*off = 0;
		return true;
	}
	VkDeviceSize tail = a->stg[a->stg_head].begin;
	VkDeviceSize head = a->stg[(a->stg_head + a->stg_n - 1) % a->stg_cap].end;
	if (head > tail) {  /* [tail, head) in flight */
		if (head + len <= a->staging_size)
			*off = head;
		else if (len <= tail)
			*off = 0;
		else
			return false;
		return true;
	}
	if (head + len > tail)  /* [tail, size) and [0, head) in flight */
		return false;
	*off = head;
	return true;
}

/* A staging buffer of SIZE bytes at least, host-visible and coherent. */
static bool staging_make(vkr *r, vkr_ahead *a, VkDeviceSize size)
{
	VkDevice dev = r->d->vk.device;
	free_staging(dev, a);
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
				  .size = size, .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT};
	if (vkCreateBuffer(dev, &bci, NULL, &a->staging) != VK_SUCCESS) {
		a->staging = VK_NULL_HANDLE;
		return false;
	}
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, a->staging, &req);
	const VkPhysicalDeviceMemoryProperties *mp = &r->d->vk.memory;
	VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	uint32_t type = UINT32_MAX;
	for (uint32_t i = 0; i < mp->memoryTypeCount && type == UINT32_MAX; i++)
		if ((req.memoryTypeBits & (1u << i)) &&
		    (mp->memoryTypes[i].propertyFlags & want) == want)
			type = i;
	VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				    .allocationSize = req.size, .memoryTypeIndex = type};
	void *map = NULL;
	if (type == UINT32_MAX || vkAllocateMemory(dev, &mai, NULL, &a->staging_mem) != VK_SUCCESS) {
		vkDestroyBuffer(dev, a->staging, NULL);
		a->staging = VK_NULL_HANDLE;
		a->staging_mem = VK_NULL_HANDLE;
		return false;
	}
	if (vkBindBufferMemory(dev, a->staging, a->staging_mem, 0) != VK_SUCCESS ||
	    vkMapMemory(dev, a->staging_mem, 0, VK_WHOLE_SIZE, 0, &map) != VK_SUCCESS) {
		free_staging(dev, a);
		return false;
	}
	a->staging_map = map;
	a->staging_size = size;
	return true;
}

/* LEN bytes of the staging ring, at *OFF; false where they cannot be had
 * (larger than STAGING_MAX, or held by copies not sent yet). */
static bool staging_take(vkr *r, vkr_ahead *a, VkDeviceSize len, VkDeviceSize *off)
{
	len = (len + 15) & ~(VkDeviceSize)15;
	if (len > STAGING_MAX)
		return false;
	for (;;) {
		staging_retire(a);
		if (staging_room(a, len, off))
			break;
		if (!a->stg_n) {
			/* none in flight: a larger buffer */
			VkDeviceSize size = a->staging_size ? 2 * a->staging_size : STAGING_MIN;
			while (size < len)
				size *= 2;
			if (!staging_make(r, a, size))
				return false;
			continue;
		}
		/* full: the oldest copies land first */
		staged *g = &a->stg[a->stg_head];
		if (!g->serial)
			return false;
		wait_for(r, a, g->serial);
	}
	if (a->stg_n == a->stg_cap) {
		size_t cap = a->stg_cap ? 2 * a->stg_cap : 64;
		staged *s = trace_xcalloc(cap, sizeof(*s));
		for (size_t i = 0; i < a->stg_n; i++)
			s[i] = a->stg[(a->stg_head + i) % a->stg_cap];
		free(a->stg);
		a->stg = s;
		a->stg_head = 0;
		a->stg_cap = cap;
	}
	a->stg[(a->stg_head + a->stg_n) % a->stg_cap] = (staged){*off, *off + len, 0};
	a->stg_n++;
	return true;
}

/* The buffer over group G's memory that copies write through: made at
 * its first staged update; false where the memory takes no such buffer. */
static bool alias_of(vkr *r, group *g)
{
	if (g->alias)
		return true;
	if (g->no_alias)
		return false;
	VkDevice dev = r->d->vk.device;
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
				  .size = g->alloc.size,
				  .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
	VkBuffer b;
	if (vkCreateBuffer(dev, &bci, NULL, &b) != VK_SUCCESS) {
		g->no_alias = true;
		return false;
	}
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, b, &req);
	VkDeviceSize at = g->alloc.offset & ~(req.alignment ? req.alignment - 1 : 0);
	VkDeviceSize lead = g->alloc.offset - at;
	if (lead) {
		/* made again, longer, from an offset it may be bound at */
		vkDestroyBuffer(dev, b, NULL);
		bci.size = g->alloc.size + lead;
		if (vkCreateBuffer(dev, &bci, NULL, &b) != VK_SUCCESS) {
			g->no_alias = true;
			return false;
		}
		vkGetBufferMemoryRequirements(dev, b, &req);
	}
	if (!(req.memoryTypeBits & (1u << g->alloc.type)) ||
	    vkBindBufferMemory(dev, b, g->alloc.memory, at) != VK_SUCCESS) {
		vkDestroyBuffer(dev, b, NULL);
		g->no_alias = true;
		return false;
	}
	g->alias = b;
	g->alias_lead = lead;
	return true;
}

static bool stage(vkr *r, group *g, VkDeviceSize off, const void *data, VkDeviceSize len)
{
	vkr_ahead *a = r->d->ahead;
	VkDeviceSize at;
	if (!len)
		return true;
	if (!a || !alias_of(r, g) || !staging_take(r, a, len, &at))
		return false;
	memcpy(a->staging_map + at, data, len);
	open_batch(r, a);
	VkBufferCopy c = {.srcOffset = at, .dstOffset = g->alias_lead + off, .size = len};
	vkCmdCopyBuffer(a->open, a->staging, g->alias, 1, &c);
	a->copies = true;
	if (g->staged_serial != UINT64_MAX) {
		g->staged_serial = UINT64_MAX;
		if (a->nopen_groups == a->capopen_groups) {
			a->capopen_groups = a->capopen_groups ? 2 * a->capopen_groups : 16;
			a->open_groups = trace_xrealloc(a->open_groups,
							a->capopen_groups * sizeof(group *));
		}
		a->open_groups[a->nopen_groups++] = g;
	}
	r->ahead_staged += len;
	return true;
}

bool vkr_ahead_stage(vkr *r, group *g, VkDeviceSize off, const void *data, VkDeviceSize len)
{
	vkr_device *cur = r->d;
	r->d = g->dev;
	bool done = stage(r, g, off, data, len);
	r->d = cur;
	return done;
}

/* Before a write to memory straight from the host where copies may be in
 * flight (a staged write refused): every copy landed, every debt paid. */
void vkr_ahead_settle(vkr *r)
{
	vkr_ahead *a = r->d->ahead;
	if (!a)
		return;
	vkr_send_held(r);
	if (a->copies) {
		VkCommandBuffer pre;
		VkFence f = vkr_ahead_call(r, a->queue, VK_NULL_HANDLE, &pre);
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
				   .commandBufferCount = 1, .pCommandBuffers = &pre};
		VkResult res = vkQueueSubmit(a->queue, 1, &si, f);
		r->calls++;
		if (res != VK_SUCCESS)
			vkr_fatal(r, "running ahead: the copies' submit failed: %s",
				  vkr_result_name(res));
	}
	wait_for(r, a, a->sent);
}

/* Before group G's memory is freed: copies into it landed. */
void vkr_ahead_group_gone(vkr *r, group *g)
{
	vkr_device *cur = r->d;
	r->d = g->dev;
	vkr_ahead *a = r->d->ahead;
	if (a && g->staged_serial > a->done)
		vkr_ahead_settle(r);
	if (g->alias)
		vkDestroyBuffer(g->dev->vk.device, g->alias, NULL);
	g->alias = VK_NULL_HANDLE;
	r->d = cur;
}

/* ------------------------------------------------------------------ */
/* Frames: at most AHEAD_FRAMES ahead of the device. */

void vkr_ahead_frame(vkr *r)
{
	for (size_t i = 0; i < r->ndevs; i++) {
		vkr_device *d = r->devs[i];
		vkr_ahead *a = d->ahead;
		if (!a)
			continue;
		vkr_device *cur = r->d;
		r->d = d;
		a->frame_serial[a->frames % (AHEAD_FRAMES + 1)] = a->sent;
		a->frames++;
		if (a->frames > AHEAD_FRAMES) {
			uint64_t s = a->frame_serial[(a->frames - AHEAD_FRAMES - 1) % (AHEAD_FRAMES + 1)];
			if (s > a->done) {
				/* (what is held is this frame's: it waits for the
				 * next frame's first submit, sent behind an older
				 * frame's work the device still has) */
				double t = vkr_now_s();
				wait_for(r, a, s);
				r->ahead_held_s += vkr_now_s() - t;
			}
		}
		r->d = cur;
	}
}
