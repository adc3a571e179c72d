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
 *   - a submit gets a command buffer of ours first (in its first batch
 *     where it can: queue.c's with_pre), a full pipeline barrier, so its
 *     work still starts after all the work the wait covered ended;
 *   - vkBeginCommandBuffer or vkResetCommandBuffer of a primary command
 *     buffer still pending takes another command buffer of the same pool
 *     (renamed; the old one is kept for the next rename; a secondary's
 *     pays, since no submit names it), and command buffers are begun
 *     with SIMULTANEOUS_USE (secondaries too: a primary that executes
 *     one without it counts as begun without), so one submitted again
 *     pending is no error (vkd3d-gears submits its recorded ones each
 *     frame);
 *   - vkResetFences of a fence still pending takes another fence;
 *   - vkDestroySemaphore and vkDestroyFence are made once the submits
 *     sent before them are done;
 *   - memory the trace writes (tracekit.update) while work is in flight
 *     that the program's waits said was over goes through a staging
 *     buffer and a copy in that command buffer, ordered on the queue
 *     (vkr_ahead_stage, stage.c), not written under the device's feet;
 *     an update of many runs pays instead (memory.c's STAGE_RUNS_MOST).
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
#include "ahead.h"

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
		{"vkGetQueryPoolResults", AK_FREE},  /* not asked (replay.c) */
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
void ahead_poll(vkr *r, vkr_ahead *a)
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
void ahead_wait_for(vkr *r, vkr_ahead *a, uint64_t serial)
{
	ahead_poll(r, a);
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
void ahead_pay(vkr *r, vkr_ahead *a)
{
	if (a->owed <= a->done)
		return;
	ahead_poll(r, a);
	if (a->owed <= a->done)
		return;
	r->ahead_paid++;
	double t = vkr_now_s();
	vkr_send_held(r);
	ahead_wait_for(r, a, a->owed);
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
void ahead_open_batch(vkr *r, vkr_ahead *a)
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
	ahead_free_staging(dev, a);
	free(a->ring);
	free(a->spare_fences);
	free(a->ret);
	free(a->spares);
	free(a->own);
	free(a->stg);
	free(a->open_groups);
	free(a->aliased);
	tmap_free(&a->fences);
	tmap_free(&a->cbs);
	free(a);
	d->ahead = NULL;
	r->d = cur;
}

/* Pays everything, and follows the program's waits from now on: the
 * fences a held call went out without are signalled as it ends. */
static void ahead_end(vkr *r)
{
	vkr_ahead_settle(r);
	vkr_ahead *a = r->d->ahead;
	for (size_t i = 0; i < a->naliased; i++)
		if (vkQueueSubmit(a->queue, 0, NULL, a->aliased[i]) != VK_SUCCESS)
			vkr_fatal(r, "running ahead: a fence's submit failed");
	a->naliased = 0;
	r->ahead_ended++;
	vkr_ahead_free(r, r->d);
	r->d->ahead_off = true;
}

/* ------------------------------------------------------------------ */
/* Submits. */

/* The call about to go out with FENCE (live, or null) in the ring: the
 * fence to give it; the batches of ours, copies and staging bytes not
 * sent yet go with it. */
static VkFence call_slot(vkr *r, vkr_ahead *a, VkFence fence)
{
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
	for (size_t i = 0; i < a->nown; i++)
		if (a->own[i].serial == UINT64_MAX && a->own[i].cb != a->open)
			a->own[i].serial = serial;
	for (size_t i = 0; i < a->nopen_groups; i++)
		a->open_groups[i]->staged_serial = serial;
	a->nopen_groups = 0;
	for (size_t i = 0; i < a->stg_n; i++) {
		staged *g = &a->stg[(a->stg_head + i) % a->stg_cap];
		if (!g->serial)
			g->serial = serial;
	}
	return s->fence;
}

/* The running ahead of device R->d for a call to QUEUE: null where it
 * does not follow that queue (a second queue ends it). */
static vkr_ahead *ahead_for(vkr *r, VkQueue queue)
{
	if (!r->ahead_on || r->d->ahead_off)
		return NULL;
	if (!r->d->ahead)
		ahead_start(r, queue);
	vkr_ahead *a = r->d->ahead;
	if (a && queue != a->queue) {
		ahead_end(r);
		return NULL;
	}
	return a;
}

VkFence vkr_ahead_call(vkr *r, VkQueue queue, VkFence fence, VkCommandBuffer *pre)
{
	*pre = VK_NULL_HANDLE;
	vkr_ahead *a = ahead_for(r, queue);
	if (!a)
		return fence;
	ahead_poll(r, a);
	/* a barrier where the work a skipped wait stood for may still run */
	if (a->owed > a->done && a->owed > a->ordered)
		ahead_open_batch(r, a);
	if (a->open) {
		a->ordered = a->sent;
		*pre = close_batch(r, a);
	}
	return call_slot(r, a, fence);
}

bool vkr_ahead_follows(vkr *r, VkQueue queue)
{
	vkr_ahead *a = r->d->ahead;
	return r->ahead_on && a && !r->d->ahead_off && a->queue == queue;
}

/* Held submits (queue.c's vkr_held_ahead) are the call after a->sent.
 * Their barriers go in place as they are held: a submit with work after
 * a wait that covered work sent, or batches held before it, gets one
 * first. */
VkCommandBuffer vkr_ahead_pre(vkr *r, VkQueue queue, uint32_t held, bool work)
{
	vkr_ahead *a = r->d->ahead;
	if (!a || queue != a->queue)
		return VK_NULL_HANDLE;
	ahead_poll(r, a);
	/* (a submit of no command buffers needs none: its signals wait for
	 * all the work before them) */
	uint64_t owed = a->owed < a->sent ? a->owed : a->sent;
	if (work && ((owed > a->done && owed > a->ordered) || a->owed_held > a->ordered_held))
		ahead_open_batch(r, a);
	if (!a->open)
		return VK_NULL_HANDLE;
	a->ordered = a->sent;
	a->ordered_held = held;
	return close_batch(r, a);
}

void vkr_ahead_hold_fence(vkr *r, VkFence fence, VkFence old)
{
	vkr_ahead *a = r->d->ahead;
	tmap_set(&a->fences, H(fence), TAG_AHEAD, a->sent + 1);
	if (!old || old == fence)
		return;
	/* one renamed or destroyed since it went with the call is the
	 * program's no more: it is recycled once the call is done */
	for (size_t i = 0; i < a->nret; i++)
		if (a->ret[i].type == VK_OBJECT_TYPE_FENCE && a->ret[i].handle == H(old))
			return;
	if (a->naliased == a->capaliased) {
		a->capaliased = a->capaliased ? 2 * a->capaliased : 8;
		a->aliased = trace_xrealloc(a->aliased, a->capaliased * sizeof(VkFence));
	}
	a->aliased[a->naliased++] = old;
}

/* Fence F (live) is no longer the program's to wait on: renamed or destroyed. */
static void unalias(vkr_ahead *a, VkFence f)
{
	for (size_t i = 0; i < a->naliased; i++)
		if (a->aliased[i] == f) {
			a->aliased[i] = a->aliased[--a->naliased];
			return;
		}
}

bool vkr_ahead_held_waited(const vkr *r)
{
	return vkr_held_ahead(r, NULL) && r->held.dev->ahead && r->held.dev->ahead->owed_held;
}

VkFence vkr_ahead_held_call(vkr *r, VkFence fence, VkCommandBuffer *post)
{
	vkr_ahead *a = r->d->ahead;
	ahead_poll(r, a);
	*post = close_batch(r, a);
	a->owed_held = a->ordered_held = 0;
	return call_slot(r, a, fence);
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

void vkr_ahead_note_cbs(vkr *r, const VkCommandBuffer *cbs, uint32_t n, bool held)
{
	vkr_ahead *a = r->d->ahead;
	for (uint32_t i = 0; a && cbs && i < n; i++)
		tmap_set(&a->cbs, H(cbs[i]), TAG_AHEAD, a->sent + held);
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
		ahead_pay(r, a);
		return;
	}
	ahead_poll(r, a);
	if (!pending_serial(a, &a->cbs, live, &serial))
		return;
	uint64_t *cap_pool = tmap_at(&r->cbs, cap, TAG_CBPOOL);
	uint64_t pool = 0;
	if (!cap_pool || !vkr_map_get(r, r->h_command_pool, *cap_pool, &pool) || !pool) {
		vkr_send_held(r);
		ahead_wait_for(r, a, serial);
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
			ahead_wait_for(r, a, serial);
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
	if (serial > a->sent)
		vkr_held_forget_cb(r, cap);
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
		if (s->serial > a->sent)
			vkr_send_held(r);  /* (one renamed away while held) */
		if (s->serial > a->done)
			ahead_wait_for(r, a, s->serial);
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
			ahead_wait_for(r, a, ours ? serial : a->sent);
			continue;
		}
		ring_slot *s = ours ? slot_of(a, serial) : NULL;
		if (s && s->fence == old) {
			s->destroy = true;
		} else if (ours) {
			/* a held call's (queue.c), or one it went out without */
			retire(a, serial, VK_OBJECT_TYPE_FENCE, live);
		} else {
			/* an acquire's, on a submit of replay's own after call
			 * a->sent, to the same queue or not (then kept to the end) */
			retire(a, r->d->vk.queue == a->queue ? a->sent + 1 : UINT64_MAX,
			       VK_OBJECT_TYPE_FENCE, live);
		}
		unalias(a, old);
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
	ahead_poll(r, a);
	if (e->cmd->params[1].ref == r->h_fence) {
		VkFence f = (VkFence)(uintptr_t)live;
		if (f == r->held.fence && vkr_held_ahead(r, r->d))
			vkr_send_held(r);  /* (the held call's own) */
		unalias(a, f);
		if (pending_serial(a, &a->fences, live, &serial)) {
			ring_slot *sl = slot_of(a, serial);
			if (sl && sl->fence == f)
				sl->destroy = true;
			else  /* one a call went out without */
				retire(a, serial, VK_OBJECT_TYPE_FENCE, live);
			tmap_del(&a->fences, live, TAG_AHEAD, NULL);
		} else if (vkGetFenceStatus(r->d->vk.device, f) != VK_SUCCESS) {
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
	uint32_t n;
	const VkFence *fences;
	if (!vkr_record_fences(e, args, &fences, &n))
		return a->sent;  /* semaphores, a queue or the device */
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

/* The serial of the last submit the program made: the call held, where
 * submits are (queue.c), else the last sent.  A wait for a fence of an
 * earlier one is a wait for older work (vkcube waits for the frame before
 * last while the last is held). */
static uint64_t last_submitted(const vkr *r, const vkr_ahead *a)
{
	return a->sent + (vkr_held_ahead(r, r->d) ? 1 : 0);
}

/* The wait for older work put off at the record before, made. */
static void lazy_wait(vkr *r)
{
	vkr_device *cur = r->d;
	r->d = r->ahead_lazy_dev;
	vkr_ahead *a = r->d->ahead;
	uint64_t t = r->opt->stats ? vkr_ticks() : 0;
	if (a && !a->slow) {
		/* the submits held go first: the device works on them while
		 * the host waits (vkcube waits for the frame before last
		 * while the last is held; an H100 ran it at 11,300-13,300
		 * frames/s holding it, 86 us a wait, against 20,800) */
		ahead_poll(r, a);
		if (a->done < r->ahead_lazy && vkr_held_ahead(r, r->d))
			vkr_send_held(r);
		ahead_wait_for(r, a, r->ahead_lazy);
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
		r->ahead_lazy_ticks += vkr_ticks() - t;
	r->ahead_lazy_dev = NULL;
	r->ahead_lazy = 0;
	r->d = cur;
}

bool vkr_ahead_record(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	if (r->ahead_end_at == r->call->no + 1 && r->d->ahead)
		ahead_end(r);
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
				keep = known || s >= last_submitted(r, a);
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
		if (s < last_submitted(r, a)) {
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
		/* a fence of the call held: its batches so far covered */
		if (s > a->sent && vkr_held_ahead(r, r->d))
			a->owed_held = r->held.n;
		r->ahead_waits++;
		/* its handles as the call would check them */
		vkr_remap_args(r, e->cmd, args);
		return false;
	case AK_BEGIN:
		/* a primary submitted again while pending is no error; so are
		 * the secondaries it executes, or the validation layer warns
		 * that the primary is taken as begun without the flag (Qt
		 * Quick's scene graph records its passes in secondaries) */
		if (!r->d->ahead_off && !strcmp(e->cmd->sig.name, "vkBeginCommandBuffer")) {
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
			ahead_pay(r, a);
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
		ahead_pay(r, a);
		return true;
	}
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
		/* frames whose submits go out as one call (queue.c's
		 * r->merge_frames) count as one: the serial a frame's work
		 * will have, counted where it changes */
		uint64_t fs = a->sent + (vkr_held_ahead(r, d) && r->held.frames > 1);
		if (a->frames && a->frame_serial[(a->frames - 1) % (AHEAD_FRAMES + 1)] == fs)
			continue;
		vkr_device *cur = r->d;
		r->d = d;
		a->frame_serial[a->frames % (AHEAD_FRAMES + 1)] = fs;
		a->frames++;
		if (a->frames > AHEAD_FRAMES) {
			uint64_t s = a->frame_serial[(a->frames - AHEAD_FRAMES - 1) % (AHEAD_FRAMES + 1)];
			if (s > a->done) {
				/* (what is held is this frame's: it waits for the
				 * next frame's first submit, sent behind an older
				 * frame's work the device still has) */
				double t = vkr_now_s();
				ahead_wait_for(r, a, s);
				r->ahead_held_s += vkr_now_s() - t;
			}
		}
		r->d = cur;
	}
}
