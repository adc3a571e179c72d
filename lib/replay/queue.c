/*
 * Queues: submits, the GPU time of their batches (--stats), and the
 * statistics printed at the end.
 */
#include "replay_internal.h"
#include "vksync.h"

/* Spans of one frame on one queue family, read in submit order, count
 * once where they overlap: the time the family was busy with the frame. */
static void gpu_account(vkr *r, gpu_timer *t, size_t frame, uint64_t start, uint64_t end)
{
	uint64_t m = t->mask, len = (end - start) & m;
	/* an end before its start (an H200 gave one in 11,259 frames of
	 * vkd3d-gears: a frame of 1.7e16 ms) is no span */
	if (len > m / 2)
		len = 0, end = start;
	/* the family's span, and the time it sat idle after the latest end
	 * read before this batch began (differences past half the clock's
	 * range are the other way round) */
	uint64_t gap = (start - t->last) & m, on = (end - t->last) & m;
	if (!t->any) {
		t->any = true;
		r->gpu_span += (double)len * t->period * 1e-9;
		t->last = end;
	} else if (on && on <= m / 2) {
		if (gap && gap < on) {
			double s = (double)gap * t->period * 1e-9;
			r->gpu_idle += s;
			r->gpu_gaps++;
			if (s > r->gpu_gap_max)
				r->gpu_gap_max = s;
		}
		r->gpu_span += (double)on * t->period * 1e-9;
		t->last = end;
	}
	if (t->busy && t->busy_frame == frame) {
		uint64_t over = (t->busy_end - start) & m;  /* the last span past this start */
		if (over <= m / 2)
			len = over >= len ? 0 : len - over;
		if (((end - t->busy_end) & m) > m / 2)
			end = t->busy_end;  /* this one ended first */
	}
	t->busy = true;
	t->busy_frame = frame;
	t->busy_end = end;
	if (frame >= r->cap_frame_gpu) {
		size_t cap = r->cap_frame_gpu ? r->cap_frame_gpu : 256;
		while (cap <= frame)
			cap *= 2;
		r->frame_gpu = trace_xrealloc(r->frame_gpu, cap * sizeof(double));
		memset(r->frame_gpu + r->cap_frame_gpu, 0, (cap - r->cap_frame_gpu) * sizeof(double));
		r->cap_frame_gpu = cap;
	}
	r->frame_gpu[frame] += (double)len * t->period * 1e-9;
}

/* Reads the oldest slot in flight; false where its batch is not done
 * and WAIT is not set. */
static bool gpu_read(vkr *r, gpu_timer *t, bool wait)
{
	uint64_t ts[2];
	uint32_t s = t->head;
	VkResult res = vkGetQueryPoolResults(r->d->vk.device, t->queries, 2 * s, 2, sizeof(ts), ts,
					     sizeof(ts[0]), VK_QUERY_RESULT_64_BIT |
					     (wait ? VK_QUERY_RESULT_WAIT_BIT : 0));
	if (res == VK_NOT_READY)
		return false;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "GPU time: vkGetQueryPoolResults failed: %s", vkr_result_name(res));
	gpu_account(r, t, t->frame[s], ts[0], ts[1]);
	t->head = (s + 1) % GPU_SLOTS;
	t->n--;
	return true;
}

/* Reads what is done (everything, waiting, with WAIT). */
void vkr_gpu_poll(vkr *r, bool wait)
{
	if (wait)
		vkr_send_held(r);
	for (uint32_t f = 0; f < r->d->nfamilies; f++) {
		gpu_timer *t = r->d->timers[f];
		while (t && t->n > (wait ? 0 : t->held) && gpu_read(r, t, wait))
			;
	}
}

/* The timer of FAMILY, made at its first batch: the query pool and the
 * command buffers of every slot, recorded once (they are submitted again
 * only once their slot is read, so the batch that used them is done). */
static gpu_timer *gpu_timer_of(vkr *r, uint32_t family)
{
	if (family >= r->d->nfamilies)
		return NULL;
	if (r->d->timers[family])
		return r->d->timers[family];
	gpu_timer *t = trace_xcalloc(1, sizeof(*t));
	r->d->timers[family] = t;
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(r->d->vk.physical, &nq, NULL);
	VkQueueFamilyProperties *qf = trace_xcalloc(nq, sizeof(*qf));
	vkGetPhysicalDeviceQueueFamilyProperties(r->d->vk.physical, &nq, qf);
	uint32_t bits = family < nq ? qf[family].timestampValidBits : 0;
	free(qf);
	if (!bits || r->d->vk.props.limits.timestampPeriod <= 0)
		return t;
	t->mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	t->period = r->d->vk.props.limits.timestampPeriod;
	VkDevice dev = r->d->vk.device;
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .queueFamilyIndex = family};
	VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
				     .queryType = VK_QUERY_TYPE_TIMESTAMP,
				     .queryCount = 2 * GPU_SLOTS};
	VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					   .commandBufferCount = 2 * GPU_SLOTS};
	if (vkCreateCommandPool(dev, &pci, NULL, &t->pool) != VK_SUCCESS ||
	    vkCreateQueryPool(dev, &qci, NULL, &t->queries) != VK_SUCCESS ||
	    (cai.commandPool = t->pool, vkAllocateCommandBuffers(dev, &cai, t->cb)) != VK_SUCCESS)
		vkr_fatal(r, "GPU time: cannot make the query pool and command buffers");
	/* simultaneous use: the end of a batch's work is seen (its timestamp)
	 * before the batch itself is known done */
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
	for (uint32_t i = 0; i < GPU_SLOTS; i++) {
		vkBeginCommandBuffer(t->cb[2 * i], &bi);
		vkCmdResetQueryPool(t->cb[2 * i], t->queries, 2 * i, 2);
		vkCmdWriteTimestamp(t->cb[2 * i], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, t->queries, 2 * i);
		vkEndCommandBuffer(t->cb[2 * i]);
		vkBeginCommandBuffer(t->cb[2 * i + 1], &bi);
		vkCmdWriteTimestamp(t->cb[2 * i + 1], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->queries,
				    2 * i + 1);
		vkEndCommandBuffer(t->cb[2 * i + 1]);
	}
	t->usable = true;
	return t;
}

void vkr_gpu_timers_free(vkr *r)
{
	for (uint32_t f = 0; f < r->d->nfamilies; f++) {
		gpu_timer *t = r->d->timers[f];
		if (t && t->usable) {
			vkDestroyQueryPool(r->d->vk.device, t->queries, NULL);
			vkDestroyCommandPool(r->d->vk.device, t->pool, NULL);
		}
		free(t);
	}
	free(r->d->timers);
	r->d->timers = NULL;
	r->d->nfamilies = 0;
}

/* The timer for a submit to QUEUE (live) now, or NULL: --stats, a frame
 * it counts, a queue family with timestamps. */
static gpu_timer *gpu_timer_for(vkr *r, VkQueue queue)
{
	if (!r->opt->stats || r->opt->no_gpu_time || r->frame < r->opt->first_frame ||
	    !r->d->nfamilies)
		return NULL;
	uint64_t *h = tmap_at(&r->d->queues, (uint64_t)(uintptr_t)queue, TAG_QUEUE);
	gpu_timer *t = h ? gpu_timer_of(r, (uint32_t)*h) : NULL;
	if (!t || !t->usable)
		r->gpu_unmeasured = true;
	return t && t->usable ? t : NULL;
}

/* A slot for the next batch, after the K taken for this submit: the
 * oldest slot is waited for where the ring is full; UINT32_MAX where the
 * submit took every slot. */
static uint32_t gpu_slot(vkr *r, gpu_timer *t, uint32_t k)
{
	if (t->n && t->n + k == GPU_SLOTS) {
		vkr_send_held(r);  /* (its batches may hold the slot) */
		gpu_read(r, t, true);
	}
	if (t->n + k == GPU_SLOTS)
		return UINT32_MAX;
	uint32_t s = (t->head + t->n + k) % GPU_SLOTS;
	t->frame[s] = r->nframe_times;
	return s;
}

/* A batch that can take our command buffers: not protected, not for a
 * device group (its masks count the command buffers). */
static bool gpu_timeable(const void *pnext)
{
	return !vk_chain_find(pnext, VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO) &&
	       !vk_chain_find(pnext, VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO);
}

/* The slot for a batch of a submit that took *K so far, or UINT32_MAX
 * where it is not TIMEABLE or no slot is left; *K counts the slots taken. */
static uint32_t gpu_batch_slot(vkr *r, gpu_timer *t, bool timeable, uint32_t *k)
{
	uint32_t s = timeable ? gpu_slot(r, t, *k) : UINT32_MAX;
	if (s != UINT32_MAX)
		(*k)++;
	return s;
}

void vkr_queues_made(vkr *r, const VkDeviceCreateInfo *ci)
{
	for (uint32_t i = 0; ci->pQueueCreateInfos && i < ci->queueCreateInfoCount; i++) {
		const VkDeviceQueueCreateInfo *q = &ci->pQueueCreateInfos[i];
		uint64_t *n = tmap_at(&r->d->queues, q->queueFamilyIndex, TAG_QFAMILY);
		tmap_set(&r->d->queues, q->queueFamilyIndex, TAG_QFAMILY, (n ? *n : 0) + q->queueCount);
	}
}

void vkr_queue_check(vkr *r, uint32_t family, uint32_t index)
{
	uint64_t *n = tmap_at(&r->d->queues, family, TAG_QFAMILY);
	if (!n)
		vkr_fatal(r, "queueFamilyIndex: %u: the device made no queue of that family", family);
	if (index >= *n)
		vkr_fatal(r, "queueIndex: %u, but the device made %llu of family %u", index,
			  (unsigned long long)*n, family);
}

/* ------------------------------------------------------------------ */
/* Submits merged.  A vkQueueSubmit is held, not made, until a record
 * that could tell: one that waits, asks a status, resets, frees or
 * destroys, writes memory, submits to another queue, records into a
 * command buffer it holds (merge_kind).  A present, an acquire and an
 * acquire's fences tell nothing: past a present (no screenshot of its
 * frame), what is held waits HOLD_PAST_FRAME records for the next
 * frame's first submit.  The submits to the same
 * queue before that go out with it as one call, their batches in order
 * (submission order is the same).  One that waits on a semaphore is
 * merged only first, so the call's fence is never held back by a wait
 * the capture had not reached when it waited on that fence; a call takes
 * one fence, so a second one sends what is held first.  Only plain
 * batches, or batches with timeline values, are held.  zink submits
 * twice a frame, vkd3d-gears twice: an H200 idles 11.5 us between two
 * calls, 4 us between two batches of one (tests/bench-gaps.c).  Going
 * out, a batch that waits on nothing joins the one before it
 * (coalesce).
 *
 * Running ahead of the device (ahead.c) on their queue, submits are held
 * over up to r->merge_frames presents: the waits, statuses and resets of
 * fences that running ahead skips or renames leave them held (a wait on
 * a held fence is a wait for the call they will make), a second fence
 * goes with the call in place of the first (ahead.c: the first's waits
 * are the call's), an update of memory is staged behind them (stage.c),
 * and the barrier and copies of ours go before the submit that follows
 * them.  vkd3d-gears signals a semaphore and a fence in an empty batch
 * each frame, then its work: four frames go out as one batch of a call. */

/* The most records a submit is held past a present, for the next
 * frame's first submit to go with it: vkd3d-gears' comes 5 records later
 * (an H200 idles 11.5 us between two calls, 4 us between two batches of
 * one: tests/bench-gaps.c); a program that records its next frame first
 * would keep the device without the last frame's work. */
#define HOLD_PAST_FRAME 8

bool vkr_held_ahead(const vkr *r, const vkr_device *d)
{
	return r->held.n && r->held.ahead && (!d || r->held.dev == d);
}

void vkr_merge_entry(cmd_entry *e)
{
	const char *n = e->cmd->sig.name;
	if (!strcmp(n, "vkQueueSubmit"))
		e->merge = MK_SUBMIT;
	else if (!strcmp(n, "vkBeginCommandBuffer"))
		e->merge = MK_BEGIN;
	else if (!strncmp(n, "vkCmd", 5) || !strcmp(n, "vkEndCommandBuffer"))
		e->merge = MK_RECORD;
	else if (!strcmp(n, "vkAllocateCommandBuffers"))
		e->merge = MK_ALLOC;
	else if (!strcmp(n, "vkQueuePresentKHR"))
		e->merge = MK_PRESENT;
	else if (!strcmp(n, "vkWaitForFences") || !strcmp(n, "vkResetFences") ||
		 !strcmp(n, "vkGetFenceStatus"))
		e->merge = MK_FENCES;
	else if (!strcmp(n, "vkDestroySemaphore"))
		e->merge = MK_SEMAPHORE;
	else if (!strcmp(n, "vkResetCommandPool") || !strcmp(n, "vkDestroyCommandPool") ||
		 !strcmp(n, "vkFreeCommandBuffers"))
		e->merge = MK_POOL;
	else if ((!strncmp(n, "vkCreate", 8) && !strstr(n, "Swapchain") &&
		  strcmp(n, "vkCreateDevice") && strcmp(n, "vkCreateInstance")) ||
		 !strcmp(n, "vkAllocateDescriptorSets") ||
		 !strncmp(n, "vkGetPhysicalDevice", 19) ||
		 !strcmp(n, "vkAcquireNextImageKHR") || !strcmp(n, "vkAcquireNextImage2KHR") ||
		 /* names and tags; query results, which the replay does not
		  * ask (replay.c) */
		 !strncmp(n, "vkSetDebugUtils", 15) || !strncmp(n, "vkDebugMarkerSetObject", 22) ||
		 !strcmp(n, "vkGetQueryPoolResults"))
		e->merge = MK_LEAVE;
	else
		e->merge = MK_SEND;
}

bool vkr_merge_breaks(vkr *r, const cmd_entry *e, void *args)
{
	held_submits *h = &r->held;
	if (e->merge == MK_ALLOC) {
		vk_args_vkAllocateCommandBuffers *a = args;
		for (uint32_t i = 0; (r->merge || r->ahead_on) && a->pAllocateInfo && a->pCommandBuffers &&
		     i < a->pAllocateInfo->commandBufferCount; i++)
			tmap_set(&r->cbs, (uint64_t)(uintptr_t)a->pCommandBuffers[i], TAG_CBPOOL,
				 (uint64_t)(uintptr_t)a->pAllocateInfo->commandPool);
		return false;
	}
	if (!h->n)
		return false;
	/* held past a frame's end, for the next frame's first submit: not
	 * while the next frame's records keep the device without them */
	if (h->past_frame && h->past_frame++ > HOLD_PAST_FRAME)
		return true;
	switch ((enum merge_kind)e->merge) {
	case MK_LEAVE:
	case MK_SUBMIT:  /* (vkr_submit sends them where it must) */
		return false;
	case MK_POOL: {  /* (device, commandPool, ...) */
		uint64_t pool = vkr_handle_at(args, &e->cmd->params[1]);
		for (uint32_t i = 0; i < h->ncbs; i++) {
			uint64_t *p = tmap_at(&r->cbs, h->cbs[i], TAG_CBPOOL);
			if (!p || *p == pool)
				return true;
		}
		return false;
	}
	case MK_PRESENT: {
		/* nothing shows the image: what is held goes on with the next
		 * frame's first submit, unless this frame's screenshot reads it */
		const vkr_options *o = r->opt;
		if (r->next_shot < o->nscreenshots && o->screenshots[r->next_shot] == (uint64_t)r->frame)
			return true;
		/* running ahead: the frame's work goes with the next ones' */
		if (h->ahead && ++h->frames >= r->merge_frames)
			return true;
		if (!h->past_frame)
			h->past_frame = 1;
		return false;
	}
	case MK_FENCES: {
		/* running ahead, skipped or renamed (ahead.c), unless it is a
		 * wait made as captured (not over then) that waits a while: it
		 * would wait on a fence held (mpv polls with no timeout) */
		if (h->ahead && (strcmp(e->cmd->sig.name, "vkWaitForFences") ||
				 vkr_cap_result(r->call) == VK_SUCCESS ||
				 !((vk_args_vkWaitForFences *)args)->timeout))
			return false;
		/* an acquire's fences alone: no submit of the program's signals
		 * them (vkr_acquire) */
		uint32_t n;
		const VkFence *f;
		vkr_record_fences(e, args, &f, &n);
		for (uint32_t i = 0; i < n; i++)
			if (!f || !vkr_acquired_fence(r, (uint64_t)(uintptr_t)f[i]))
				return true;
		return !n;
	}
	case MK_SEMAPHORE:
		/* running ahead, a binary semaphore's destroy is put off until
		 * the call is done (ahead.c); a timeline one goes to a pool
		 * (timeline.c), and the values it is taken with next follow
		 * the signals sent */
		return !h->ahead ||
		       tmap_at(&r->timelines, vkr_handle_at(args, &e->cmd->params[1]), TAG_TLTOP);
	case MK_BEGIN:
	case MK_RECORD: {
		uint64_t cb = vkr_handle_at(args, &e->cmd->params[0]);
		/* running ahead, a primary held is begun as another (ahead.c);
		 * mpv records its next batch into the one it just submitted */
		if (e->merge == MK_BEGIN && h->ahead && tmap_at(&r->cbs, cb, TAG_CBSTATE))
			return false;
		for (uint32_t i = 0; i < h->ncbs; i++)
			if (h->cbs[i] == cb)
				return true;
		return false;
	}
	default:
		return true;
	}
}

/* Whether the batches SI (N) may be held: no pNext but timeline values. */
static bool holdable(const VkSubmitInfo *si, uint32_t n)
{
	for (uint32_t i = 0; si && i < n; i++) {
		const VkBaseInStructure *p = si[i].pNext;
		if (p && (p->sType != VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO || p->pNext))
			return false;
	}
	return si != NULL;
}

/*
 * Batches SI (N) with CB, of ours, run first: in the arena.  CB goes
 * first in the first batch where that batch takes one more command
 * buffer as it is (no pNext but timeline values), else in a batch of its
 * own: a batch boundary left an H200 idle 4 us (tests/bench-gaps.c), a
 * frame's worth for vkd3d-gears, whose every submit follows a skipped
 * wait.  Its barriers order it the same way either way.
 */
static const VkSubmitInfo *with_pre(vkr *r, const VkSubmitInfo *si, uint32_t *n, VkCommandBuffer cb)
{
	if (*n && holdable(si, 1)) {
		VkSubmitInfo *s = trace_arena_alloc(&r->arena, sizeof(*s) * *n);
		memcpy(s, si, sizeof(*s) * *n);
		VkCommandBuffer *c = trace_arena_alloc(&r->arena, sizeof(*c) * (s[0].commandBufferCount + 1));
		c[0] = cb;
		if (s[0].commandBufferCount)
			memcpy(c + 1, s[0].pCommandBuffers, sizeof(*c) * s[0].commandBufferCount);
		s[0].pCommandBuffers = c;
		s[0].commandBufferCount++;
		return s;
	}
	VkSubmitInfo *s = trace_arena_alloc(&r->arena, sizeof(*s) * (*n + 1));
	VkCommandBuffer *c = trace_arena_alloc(&r->arena, sizeof(*c));
	*c = cb;
	s[0] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			      .commandBufferCount = 1, .pCommandBuffers = c};
	if (*n)
		memcpy(s + 1, si, sizeof(*s) * *n);
	(*n)++;
	return s;
}

static void note_batches(vkr *r, const VkSubmitInfo *si, uint32_t n)
{
	for (uint32_t i = 0; si && i < n; i++)
		vkr_ahead_note_cbs(r, si[i].pCommandBuffers, si[i].commandBufferCount, false);
}

/* Handles A (NA) then B (NB), in the arena where both are some. */
static const void *concat(vkr *r, const void *a, uint32_t na, const void *b, uint32_t nb,
				  size_t size)
{
	if (!nb)
		return a;
	if (!na)
		return b;
	uint8_t *c = trace_arena_alloc(&r->arena, size * (na + nb));
	memcpy(c, a, size * na);
	memcpy(c + size * na, b, size * nb);
	return c;
}

/* Batches SI (*N) with each and the next that waits on nothing made one
 * (the same command buffers in the same order): a boundary left an H200
 * idle 4 us.  Only binary semaphores (no pNext): a signal moved to the
 * end of a later batch of the call holds back no work, since nothing
 * waits on it in the call (a batch that waits goes first: vkr_submit). */
static void coalesce(vkr *r, VkSubmitInfo *si, uint32_t *n)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < *n; i++) {
		VkSubmitInfo *p = k ? &si[k - 1] : NULL;
		if (!p || p->pNext || si[i].pNext || si[i].waitSemaphoreCount) {
			si[k++] = si[i];
			continue;
		}
		p->pCommandBuffers = concat(r, p->pCommandBuffers, p->commandBufferCount,
					    si[i].pCommandBuffers, si[i].commandBufferCount,
					    sizeof(VkCommandBuffer));
		p->commandBufferCount += si[i].commandBufferCount;
		p->pSignalSemaphores = concat(r, p->pSignalSemaphores, p->signalSemaphoreCount,
					      si[i].pSignalSemaphores, si[i].signalSemaphoreCount,
					      sizeof(VkSemaphore));
		p->signalSemaphoreCount += si[i].signalSemaphoreCount;
	}
	*n = k;
}

void vkr_send_held(vkr *r)
{
	held_submits *h = &r->held;
	if (!h->n)
		return;
	vkr_device *cur = r->d;
	r->d = h->dev;
	PFN_vkQueueSubmit submit = (PFN_vkQueueSubmit)r->d->fns[h->e->index];
	/* (taken off first: running ahead may send what is held itself) */
	uint32_t n = h->n;
	const VkSubmitInfo *si = h->si;
	h->n = h->ncbs = 0;
	VkCommandBuffer pre = VK_NULL_HANDLE, post = VK_NULL_HANDLE;
	VkFence fence;
	if (h->ahead) {
		/* the barriers and copies of ours are in place: what was staged
		 * after the last submit goes after it */
		fence = vkr_ahead_held_call(r, h->fence, &post);
		if (post) {
			VkSubmitInfo *s = trace_arena_alloc(&r->arena, sizeof(*s) * (n + 1));
			memcpy(s, si, sizeof(*s) * n);
			VkCommandBuffer *c = trace_arena_alloc(&r->arena, sizeof(*c));
			*c = post;
			s[n++] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
						.commandBufferCount = 1, .pCommandBuffers = c};
			si = s;
		}
	} else {
		fence = vkr_ahead_call(r, h->queue, h->fence, &pre);
		if (pre)
			si = with_pre(r, si, &n, pre);
	}
	coalesce(r, (VkSubmitInfo *)si, &n);
	note_batches(r, si, n);
	VkResult res = submit(h->queue, n, si, fence);
	vkr_ahead_called(r, res == VK_SUCCESS);
	r->d = cur;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "vkQueueSubmit of calls %llu to %llu, merged: %s",
			  (unsigned long long)h->first, (unsigned long long)h->last,
			  vkr_result_name(res));
	h->fence = VK_NULL_HANDLE;
	h->past_frame = 0;
	h->frames = 0;
	h->fence_marked = false;
	trace_arena_reset(&h->arena);
	for (uint32_t f = 0; h->dev->timers && f < h->dev->nfamilies; f++)
		if (h->dev->timers[f])
			h->dev->timers[f]->held = 0;
}

void vkr_held_forget_cb(vkr *r, uint64_t cap)
{
	held_submits *h = &r->held;
	for (uint32_t i = 0; i < h->ncbs; i++)
		if (h->cbs[i] == cap)
			h->cbs[i--] = h->cbs[--h->ncbs];
}

void vkr_held_free(vkr *r)
{
	free(r->held.si);
	free(r->held.cbs);
	trace_arena_free(&r->held.arena);
	memset(&r->held, 0, sizeof(r->held));
}

static bool waits(const VkSubmitInfo *si, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (si[i].waitSemaphoreCount)
			return true;
	return false;
}

static void *held_copy(held_submits *h, const void *p, size_t size)
{
	if (!p || !size)
		return NULL;
	void *c = trace_arena_alloc(&h->arena, size);
	memcpy(c, p, size);
	return c;
}

/* Holds the batches of A (made live: CAP_CBS, N_CBS the capture's
 * command buffers) after those held. */
static void hold(vkr *r, const cmd_entry *e, const vk_args_vkQueueSubmit *a, const uint64_t *cap_cbs,
		 uint32_t n_cbs, bool marked)
{
	held_submits *h = &r->held;
	if (!h->n) {
		h->dev = r->d;
		h->queue = a->queue;
		h->e = e;
		h->first = r->call->no;
	}
	h->last = r->call->no;
	if (h->ahead) {
		/* past a present only until this submit (a frame's first) */
		h->past_frame = 0;
		for (uint32_t i = 0; i < a->submitCount; i++)
			vkr_ahead_note_cbs(r, a->pSubmits[i].pCommandBuffers,
					   a->pSubmits[i].commandBufferCount, true);
		if (a->fence)
			vkr_ahead_hold_fence(r, a->fence, h->fence);
	}
	if (a->fence) {
		h->fence = a->fence;
		h->fence_marked = marked;
	}
	if (h->n + a->submitCount > h->cap) {
		h->cap = 2 * (h->n + a->submitCount);
		h->si = trace_xrealloc(h->si, h->cap * sizeof(*h->si));
	}
	for (uint32_t i = 0; i < a->submitCount; i++) {
		const VkSubmitInfo *s = &a->pSubmits[i];
		VkSubmitInfo *d = &h->si[h->n++];
		*d = *s;
		d->pWaitSemaphores = held_copy(h, s->pWaitSemaphores,
					       s->waitSemaphoreCount * sizeof(VkSemaphore));
		d->pWaitDstStageMask = held_copy(h, s->pWaitDstStageMask,
						 s->waitSemaphoreCount * sizeof(VkPipelineStageFlags));
		d->pCommandBuffers = held_copy(h, s->pCommandBuffers,
					       s->commandBufferCount * sizeof(VkCommandBuffer));
		d->pSignalSemaphores = held_copy(h, s->pSignalSemaphores,
						 s->signalSemaphoreCount * sizeof(VkSemaphore));
		const VkTimelineSemaphoreSubmitInfo *t = s->pNext;
		if (t) {
			VkTimelineSemaphoreSubmitInfo *c = held_copy(h, t, sizeof(*t));
			c->pWaitSemaphoreValues = held_copy(h, t->pWaitSemaphoreValues,
							    t->waitSemaphoreValueCount * sizeof(uint64_t));
			c->pSignalSemaphoreValues = held_copy(h, t->pSignalSemaphoreValues,
							      t->signalSemaphoreValueCount * sizeof(uint64_t));
			d->pNext = c;
		}
	}
	if (!n_cbs)
		return;  /* (an empty batch: a fence, semaphores) */
	if (h->ncbs + n_cbs > h->capcbs) {
		h->capcbs = 2 * (h->ncbs + n_cbs);
		h->cbs = trace_xrealloc(h->cbs, h->capcbs * sizeof(*h->cbs));
	}
	memcpy(h->cbs + h->ncbs, cap_cbs, n_cbs * sizeof(*cap_cbs));
	h->ncbs += n_cbs;
}

/* vkQueueSubmit; under --stats each batch's command buffers between the
 * two of a slot; held to be merged where it may be. */
void vkr_submit(vkr *r, const cmd_entry *e, vk_args_vkQueueSubmit *a)
{
	uint64_t cap_fence = (uint64_t)(uintptr_t)a->fence;
	/* (the first of a device is made, not held: vkr_invoke looks its
	 * function up, which vkr_send_held then calls) */
	bool merge = r->merge && vkr_cap_result(r->call) == VK_SUCCESS &&
		     holdable(a->pSubmits, a->submitCount) && r->d->fns[e->index];
	uint64_t *cap_cbs = NULL;
	uint32_t n_cbs = 0;
	for (uint32_t i = 0; merge && i < a->submitCount; i++)
		n_cbs += a->pSubmits[i].pCommandBuffers ? a->pSubmits[i].commandBufferCount : 0;
	if (merge && n_cbs) {
		cap_cbs = trace_arena_alloc(&r->arena, n_cbs * sizeof(*cap_cbs));
		n_cbs = 0;
		for (uint32_t i = 0; i < a->submitCount; i++)
			for (uint32_t j = 0; a->pSubmits[i].pCommandBuffers &&
			     j < a->pSubmits[i].commandBufferCount; j++)
				cap_cbs[n_cbs++] = (uint64_t)(uintptr_t)a->pSubmits[i].pCommandBuffers[j];
	}
	vkr_remap_args(r, e->cmd, a);
	a->pSubmits = vkr_fold_submit(r, a->pSubmits, a->submitCount);
	bool marked = r->marking != 0;
	vkr_fold_mark(r, a->queue, &a->fence, cap_fence);
	merge = merge && holdable(a->pSubmits, a->submitCount);  /* (as folded) */
	held_submits *h = &r->held;
	/* (a second fence: running ahead, the first's waits are the call's,
	 * unless a mark waits on it) */
	if (h->n && (!merge || h->dev != r->d || h->queue != a->queue ||
		     (h->fence && a->fence && (!h->ahead || h->fence_marked)) ||
		     waits(a->pSubmits, a->submitCount)))
		vkr_send_held(r);
	gpu_timer *t = gpu_timer_for(r, a->queue);
	uint32_t k = 0;
	if (t && a->pSubmits) {
		VkSubmitInfo *si = trace_arena_alloc(&r->arena, sizeof(*si) * a->submitCount);
		memcpy(si, a->pSubmits, sizeof(*si) * a->submitCount);
		for (uint32_t i = 0; i < a->submitCount; i++) {
			uint32_t n = si[i].commandBufferCount;
			uint32_t s = gpu_batch_slot(r, t, n && gpu_timeable(si[i].pNext), &k);
			if (s == UINT32_MAX)
				continue;
			VkCommandBuffer *cb = trace_arena_alloc(&r->arena, sizeof(*cb) * (n + 2));
			cb[0] = t->cb[2 * s];
			memcpy(cb + 1, si[i].pCommandBuffers, sizeof(*cb) * n);
			cb[n + 1] = t->cb[2 * s + 1];
			si[i].pCommandBuffers = cb;
			si[i].commandBufferCount = n + 2;
		}
		a->pSubmits = si;
	}
	if (merge) {
		if (!h->n)
			h->ahead = vkr_ahead_follows(r, a->queue);
		if (h->ahead) {
			bool work = false;
			for (uint32_t i = 0; i < a->submitCount; i++)
				work |= a->pSubmits[i].commandBufferCount > 0;
			VkCommandBuffer pre = vkr_ahead_pre(r, a->queue, h->n, work);
			if (pre)
				a->pSubmits = with_pre(r, a->pSubmits, &a->submitCount, pre);
		}
		hold(r, e, a, cap_cbs, n_cbs, marked);
		r->calls++;
		if (t) {
			t->n += k;
			t->held += k;
		}
		return;
	}
	VkCommandBuffer pre;
	a->fence = vkr_ahead_call(r, a->queue, a->fence, &pre);
	if (pre)
		a->pSubmits = with_pre(r, a->pSubmits, &a->submitCount, pre);
	note_batches(r, a->pSubmits, a->submitCount);
	VkResult res = vkr_invoke(r, e, a);
	vkr_ahead_called(r, res == VK_SUCCESS);
	if (res == VK_SUCCESS && t)
		t->n += k;
}

/* with_pre for vkQueueSubmit2: first in a first batch that has no pNext
 * and is not protected (a protected batch takes protected command
 * buffers alone). */
static const VkSubmitInfo2 *with_pre2(vkr *r, const VkSubmitInfo2 *si, uint32_t *n,
				      VkCommandBuffer cb)
{
	VkCommandBufferSubmitInfo one = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
					 .commandBuffer = cb};
	if (*n && si && !si[0].pNext && !(si[0].flags & VK_SUBMIT_PROTECTED_BIT)) {
		VkSubmitInfo2 *s = trace_arena_alloc(&r->arena, sizeof(*s) * *n);
		memcpy(s, si, sizeof(*s) * *n);
		uint32_t k = s[0].commandBufferInfoCount;
		VkCommandBufferSubmitInfo *c = trace_arena_alloc(&r->arena, sizeof(*c) * (k + 1));
		c[0] = one;
		if (k)
			memcpy(c + 1, s[0].pCommandBufferInfos, sizeof(*c) * k);
		s[0].pCommandBufferInfos = c;
		s[0].commandBufferInfoCount = k + 1;
		return s;
	}
	VkSubmitInfo2 *s = trace_arena_alloc(&r->arena, sizeof(*s) * (*n + 1));
	VkCommandBufferSubmitInfo *c = trace_arena_alloc(&r->arena, sizeof(*c));
	*c = one;
	s[0] = (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
			       .commandBufferInfoCount = 1, .pCommandBufferInfos = c};
	if (*n)
		memcpy(s + 1, si, sizeof(*s) * *n);
	(*n)++;
	return s;
}

void vkr_submit2(vkr *r, const cmd_entry *e, vk_args_vkQueueSubmit2 *a)
{
	uint64_t cap_fence = (uint64_t)(uintptr_t)a->fence;
	vkr_remap_args(r, e->cmd, a);
	a->pSubmits = vkr_fold_submit2(r, a->pSubmits, a->submitCount);
	vkr_fold_mark(r, a->queue, &a->fence, cap_fence);
	gpu_timer *t = gpu_timer_for(r, a->queue);
	uint32_t k = 0;
	if (t && a->pSubmits) {
		VkSubmitInfo2 *si = trace_arena_alloc(&r->arena, sizeof(*si) * a->submitCount);
		memcpy(si, a->pSubmits, sizeof(*si) * a->submitCount);
		for (uint32_t i = 0; i < a->submitCount; i++) {
			uint32_t n = si[i].commandBufferInfoCount;
			uint32_t s = gpu_batch_slot(r, t, n && !(si[i].flags & VK_SUBMIT_PROTECTED_BIT) &&
							  gpu_timeable(si[i].pNext), &k);
			if (s == UINT32_MAX)
				continue;
			VkCommandBufferSubmitInfo *cb = trace_arena_alloc(&r->arena, sizeof(*cb) * (n + 2));
			cb[0] = (VkCommandBufferSubmitInfo){
				.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
				.commandBuffer = t->cb[2 * s]};
			memcpy(cb + 1, si[i].pCommandBufferInfos, sizeof(*cb) * n);
			cb[n + 1] = cb[0];
			cb[n + 1].commandBuffer = t->cb[2 * s + 1];
			si[i].pCommandBufferInfos = cb;
			si[i].commandBufferInfoCount = n + 2;
		}
		a->pSubmits = si;
	}
	VkCommandBuffer pre;
	a->fence = vkr_ahead_call(r, a->queue, a->fence, &pre);
	if (pre)
		a->pSubmits = with_pre2(r, a->pSubmits, &a->submitCount, pre);
	for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++)
		for (uint32_t j = 0; a->pSubmits[i].pCommandBufferInfos &&
		     j < a->pSubmits[i].commandBufferInfoCount; j++)
			vkr_ahead_note_cbs(r, &a->pSubmits[i].pCommandBufferInfos[j].commandBuffer, 1, false);
	VkResult res = vkr_invoke(r, e, a);
	vkr_ahead_called(r, res == VK_SUCCESS);
	if (res == VK_SUCCESS && t)
		t->n += k;
}

/* ------------------------------------------------------------------ */
/* Statistics (--stats). */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median, 99th percentile and maximum of N values, in milliseconds;
 * the sum in seconds. */
typedef struct spread {
	double med, p99, max, sum;
} spread;

static spread spread_of(const double *v, size_t n)
{
	spread sp = {0};
	if (!n)
		return sp;
	double *s = trace_xcalloc(n, sizeof(double));
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	for (size_t i = 0; i < n; i++)
		sp.sum += s[i];
	sp.med = s[n / 2] * 1e3;
	sp.p99 = s[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] * 1e3;
	sp.max = s[n - 1] * 1e3;
	free(s);
	return sp;
}

typedef struct fn_time {
	const char *name;
	uint64_t ticks;  /* vkr_ticks */
	double seconds;  /* at the end */
	uint64_t calls;
} fn_time;

static fn_time *time_of(vkr *r, const trace_func_sig *sig)
{
	size_t slot = trace_ptr_slot(sig, SIG_CACHE_BITS);
	if (r->sig_cache.time_sig[slot] == sig)
		return &r->times[r->sig_cache.time[slot]];
	uint64_t *at = tmap_at(&r->time_of, (uint64_t)(uintptr_t)sig, TAG_TIME);
	size_t i;
	r->sig_cache.time_sig[slot] = sig;
	if (at) {
		i = *at;
	} else {
		/* a name seen under another signature (a trace may define a
		 * function twice) shares its entry */
		for (i = 0; i < r->ntimes && strcmp(r->times[i].name, sig->name); i++)
			;
		if (i == r->ntimes) {
			if (r->ntimes == r->captimes) {
				r->captimes = r->captimes ? 2 * r->captimes : 64;
				r->times = trace_xrealloc(r->times, r->captimes * sizeof(*r->times));
			}
			r->times[r->ntimes++] = (fn_time){.name = sig->name};
		}
		tmap_set(&r->time_of, (uint64_t)(uintptr_t)sig, TAG_TIME, i);
	}
	r->sig_cache.time[slot] = (uint32_t)i;
	return &r->times[i];
}

void vkr_time_note(vkr *r, const trace_func_sig *sig, uint64_t ticks)
{
	r->records_ticks += ticks;
	/* a wait put off to this record (ahead.c) counts as its own */
	if (r->ahead_lazy_ticks && r->ahead_lazy_sig) {
		uint64_t lazy = r->ahead_lazy_ticks < ticks ? r->ahead_lazy_ticks : ticks;
		time_of(r, r->ahead_lazy_sig)->ticks += lazy;
		ticks -= lazy;
		r->ahead_lazy_ticks = 0;
	}
	fn_time *t = time_of(r, sig);
	t->ticks += ticks;
	t->calls++;
}

void vkr_times_free(vkr *r)
{
	free(r->times);
	r->times = NULL;
	r->ntimes = r->captimes = 0;
	tmap_free(&r->time_of);
	memset(r->sig_cache.time_sig, 0, sizeof(r->sig_cache.time_sig));
}

static int by_seconds(const void *a, const void *b)
{
	double x = ((const fn_time *)a)->seconds, y = ((const fn_time *)b)->seconds;
	return x > y ? -1 : x < y;
}

/* The functions whose records took the most time, at most TOP_TIMES of
 * them: where a replay's time goes (a driver's pipeline compiles, waits
 * on fences the capture waited on, memory updates). */
#define TOP_TIMES 10

static void print_times(vkr *r, FILE *o, bool json, double span)
{
	for (size_t i = 0; i < r->ntimes; i++)
		r->times[i].seconds = vkr_ticks_s(r, r->times[i].ticks);
	double frames_records_s = vkr_ticks_s(r, r->frames_records_ticks);
	qsort(r->times, r->ntimes, sizeof(*r->times), by_seconds);
	size_t n = r->ntimes < TOP_TIMES ? r->ntimes : TOP_TIMES;
	double all = 0;
	for (size_t i = 0; i < r->ntimes; i++)
		all += r->times[i].seconds;
	if (json) {
		/* every function: a tool reading it picks its own */
		fprintf(o, "\"records_seconds\": %.6f, \"frames_records_seconds\": %.6f, "
			"\"frames_seconds\": %.6f, \"by_function\": [", all, frames_records_s, span);
		for (size_t i = 0; i < r->ntimes; i++)
			fprintf(o, "%s{\"function\": \"%s\", \"ms\": %.3f, \"calls\": %llu}",
				i ? ", " : "", r->times[i].name, r->times[i].seconds * 1e3,
				(unsigned long long)r->times[i].calls);
		fprintf(o, "], ");
		return;
	}
	fprintf(o, "time in records:   %.3f s of the frames' %.3f s (the rest: reading the trace, "
		"frame ends)\n", frames_records_s, span);
	fprintf(o, "time by function (the %zu longest, the records after the last frame too; "
		"checks, decoding and the driver's work):\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "  %-40s %10.3f ms %8llu calls %10.2f us each\n", r->times[i].name,
			r->times[i].seconds * 1e3, (unsigned long long)r->times[i].calls,
			r->times[i].seconds * 1e6 / (double)r->times[i].calls);
}

void vkr_print_stats(vkr *r, double total)
{
	double span = r->frames_done ? r->t_last_frame - r->t_first_frame : 0;
	double fps = span > 0 ? (double)r->frames_done / span : 0;
	spread cpu = spread_of(r->frame_times, r->nframe_times);
	/* frames whose batches were never timed (none, or a family without
	 * timestamps alone) count 0 */
	bool gpu = r->frame_gpu && !r->gpu_unmeasured;
	double *g = trace_xcalloc(r->nframe_times, sizeof(double));
	for (size_t i = 0; gpu && i < r->nframe_times && i < r->cap_frame_gpu; i++)
		g[i] = r->frame_gpu[i];
	spread gs = spread_of(g, r->nframe_times);
	free(g);
	/* the first device's name and heaps; each heap's peak over them all */
	const VkPhysicalDeviceProperties *props = &r->stats_props;
	const VkPhysicalDeviceMemoryProperties *mem = &r->stats_memory;
	uint64_t peak[VK_MAX_MEMORY_HEAPS];
	memcpy(peak, r->stats_peak, sizeof(peak));
	for (size_t i = 0; i < r->ndevs; i++) {
		const vkd_device *d = &r->devs[i]->vk;
		if (!props->deviceName[0]) {
			props = &d->props;
			mem = &d->memory;
		}
		for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; h++)
			if (d->heap_stats[h].memory_peak > peak[h])
				peak[h] = d->heap_stats[h].memory_peak;
	}
	FILE *o = stdout;
	if (r->opt->stats == 2) {
		fprintf(o, "{\"device\": \"%s\", \"frames\": %llu, \"seconds\": %.6f, "
			"\"fps\": %.3f, \"frame_ms\": {\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, ",
			props->deviceName, (unsigned long long)r->frames_done, total, fps,
			cpu.med, cpu.p99, cpu.max);
		if (gpu)
			fprintf(o, "\"frame_gpu_ms\": {\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
				"\"gpu_seconds\": %.6f, \"gpu_span_seconds\": %.6f, "
				"\"gpu_idle_seconds\": %.6f, \"gpu_gaps\": %llu, \"gpu_gap_max_ms\": %.3f, ",
				gs.med, gs.p99, gs.max, gs.sum, r->gpu_span, r->gpu_idle,
				(unsigned long long)r->gpu_gaps, r->gpu_gap_max * 1e3);
		else
			fprintf(o, "\"frame_gpu_ms\": null, \"gpu_seconds\": null, ");
		uint64_t jobs, taken;
		unsigned threads;
		uint64_t ahead = vkr_warm_made(r, &jobs, &taken, &threads), objs, objs_taken;
		vkr_warm_objects(r, &objs, &objs_taken);
		fprintf(o, "\"pipelines_ahead\": {\"calls\": %llu, \"pipelines\": %llu, \"taken\": %llu, "
			"\"threads\": %u, \"objects\": %llu, \"objects_taken\": %llu}, "
			"\"timelines_reused\": %llu, ", (unsigned long long)jobs,
			(unsigned long long)ahead, (unsigned long long)taken, threads,
			(unsigned long long)objs, (unsigned long long)objs_taken,
			(unsigned long long)r->timelines_reused);
		fprintf(o, "\"ahead\": {\"on\": %s, \"waits_skipped\": %llu, \"joined\": %llu, "
			"\"paid\": %llu, \"barriers\": %llu, \"renamed_command_buffers\": %llu, "
			"\"renamed_fences\": %llu, \"staged_bytes\": %llu, \"ended\": %llu, "
			"\"paid_seconds\": %.6f, \"held_seconds\": %.6f}, ",
			r->ahead_on ? "true" : "false", (unsigned long long)r->ahead_waits,
			(unsigned long long)r->ahead_joined, (unsigned long long)r->ahead_paid,
			(unsigned long long)r->ahead_barriers,
			(unsigned long long)r->ahead_renamed, (unsigned long long)r->ahead_fences,
			(unsigned long long)r->ahead_staged, (unsigned long long)r->ahead_ended,
			r->ahead_paid_s, r->ahead_held_s);
		const trace_ahead_waits *dw = &r->decode_waits;
		fprintf(o, "\"decode_ahead\": %s, \"decode_ahead_waits\": {\"replay\": %llu, "
			"\"replay_slept\": %llu, \"thread\": %llu, \"thread_slept\": %llu}, ",
			r->decode_ahead ? "true" : "false", (unsigned long long)dw->caller,
			(unsigned long long)dw->caller_slept, (unsigned long long)dw->thread,
			(unsigned long long)dw->thread_slept);
		fprintf(o, "\"preload\": {\"records\": %llu, \"decoded\": %llu, "
			"\"bytes\": %llu, \"seconds\": %.6f}, ",
			(unsigned long long)r->preload_records,
			(unsigned long long)r->preload_decoded, (unsigned long long)r->preload_bytes,
			r->preload_s);
		print_times(r, o, true, span);
		fprintf(o, "\"calls\": %llu, \"calls_per_second\": %.0f, \"warnings\": %llu, "
			"\"heaps\": [", (unsigned long long)r->calls,
			total > 0 ? (double)r->calls / total : 0, (unsigned long long)r->warnings);
		for (uint32_t h = 0; h < mem->memoryHeapCount; h++)
			fprintf(o, "%s{\"heap\": %u, \"peak_bytes\": %llu}", h ? ", " : "", h,
				(unsigned long long)peak[h]);
		fprintf(o, "]}\n");
		return;
	}
	fprintf(o, "device:            %s\n", props->deviceName);
	fprintf(o, "frames:            %llu\n", (unsigned long long)r->frames_done);
	fprintf(o, "replay time:       %.3f s\n", total);
	fprintf(o, "frames per second: %.1f\n", fps);
	fprintf(o, "frame CPU time:    median %.3f ms, p99 %.3f ms, max %.3f ms\n", cpu.med,
		cpu.p99, cpu.max);
	if (gpu) {
		fprintf(o, "frame GPU time:    median %.3f ms, p99 %.3f ms, max %.3f ms (busy)\n"
			"GPU time:          %.3f s\n", gs.med, gs.p99, gs.max, gs.sum);
		fprintf(o, "GPU idle:          %.3f s between batches (%llu gaps, %.3f ms on average, "
			"%.3f ms at most); %.3f s of the replay time before the first batch and "
			"after the last (start-up, teardown)\n", r->gpu_idle,
			(unsigned long long)r->gpu_gaps,
			r->gpu_gaps ? r->gpu_idle * 1e3 / (double)r->gpu_gaps : 0,
			r->gpu_gap_max * 1e3, total > r->gpu_span ? total - r->gpu_span : 0);
	}
	else
		fprintf(o, "frame GPU time:    not measured (%s)\n", r->opt->no_gpu_time
			? "--no-gpu-time" : r->gpu_unmeasured
			? "a queue without timestamps, or not from vkGetDeviceQueue"
			: "no command buffer submitted");
	fprintf(o, "calls:             %llu (%.0f per second)\n", (unsigned long long)r->calls,
		total > 0 ? (double)r->calls / total : 0);
	for (uint32_t h = 0; h < mem->memoryHeapCount; h++)
		fprintf(o, "heap %u peak:       %.1f MiB\n", h, (double)peak[h] / (1024.0 * 1024.0));
	uint64_t jobs, taken;
	unsigned threads;
	uint64_t ahead = vkr_warm_made(r, &jobs, &taken, &threads), objs, objs_taken;
	vkr_warm_objects(r, &objs, &objs_taken);
	if (threads)
		fprintf(o, "pipelines ahead:   %llu made from %llu calls, on %u threads; %llu taken; "
			"%llu descriptor pools and pipeline caches made ahead, %llu taken\n",
			(unsigned long long)ahead, (unsigned long long)jobs, threads,
			(unsigned long long)taken, (unsigned long long)objs,
			(unsigned long long)objs_taken);
	else
		fprintf(o, "pipelines ahead:   none (--pipeline-jobs 0, a CPU device or a stream)\n");
	fprintf(o, "timelines reused:  %llu (semaphores made again from those destroyed)\n",
		(unsigned long long)r->timelines_reused);
	if (r->ahead_on)
		fprintf(o, "running ahead:     %llu waits skipped (%llu with a wait for older work "
			"joined to them; %llu paid later, %.3f s), %.3f s "
			"waiting at frame ends for the device, %llu barriers, %llu command buffers and "
			"%llu fences renamed, %.1f KiB of updates staged%s\n",
			(unsigned long long)r->ahead_waits, (unsigned long long)r->ahead_joined,
			(unsigned long long)r->ahead_paid, r->ahead_paid_s, r->ahead_held_s,
			(unsigned long long)r->ahead_barriers, (unsigned long long)r->ahead_renamed,
			(unsigned long long)r->ahead_fences, (double)r->ahead_staged / 1024.0,
			r->ahead_ended ? "; ended at a second queue or a sparse bind" : "");
	else
		fprintf(o, "running ahead:     off (--waits-as-captured, --loop or --dump)\n");
	if (r->decode_ahead)
		fprintf(o, "records:           read and decoded ahead on a thread of their own; the "
			"replay waited for it %llu times (%llu asleep), it for room %llu times "
			"(%llu asleep)\n",
			(unsigned long long)r->decode_waits.caller,
			(unsigned long long)r->decode_waits.caller_slept,
			(unsigned long long)r->decode_waits.thread,
			(unsigned long long)r->decode_waits.thread_slept);
	if (r->preload_records)
		fprintf(o, "preloaded:         %llu records (%llu decoded), %.1f MiB, in %.3f s before "
			"they replayed\n", (unsigned long long)r->preload_records,
			(unsigned long long)r->preload_decoded,
			(double)r->preload_bytes / (1024.0 * 1024.0), r->preload_s);
	print_times(r, o, false, span);
}

/* ------------------------------------------------------------------ */
/* Binary semaphores and fences: whether a signal is pending. */

/* vk_sync_walk: a wait on a binary semaphore that nothing replayed
 * signals first (a submit cut out, its count edited to 0) is refused at
 * once: llvmpipe's vkQueueSubmit blocks on it for ever, past any bound.
 * So is a wait for all of some fences, one of which nothing replayed
 * signals since it was made or reset (the wait would only run out its
 * --wait-timeout; --check, without a device, sees it too).  Only what
 * this replay made is followed (not imported payloads, nor fences a
 * display event signals, which come from outside). */
typedef struct sync_note {
	vkr *r;
	bool any;      /* vkWaitForFences with waitAll false: one fence is enough */
	bool acquire;  /* vkAcquireNextImage*: its fence signals at once */
} sync_note;

/* A fence's value in r->binary: unsignalled (or never submitted), a
 * signal pending or done, or signalled by an acquire alone (never on the
 * device: vkr_acquire). */
enum { FENCE_UNSIGNALLED, FENCE_SIGNALLED, FENCE_ACQUIRED };

bool vkr_record_fences(const cmd_entry *e, void *args, const VkFence **f, uint32_t *n)
{
	const char *name = e->cmd->sig.name;
	if (!strcmp(name, "vkGetFenceStatus")) {
		*n = 1;
		*f = &((vk_args_vkGetFenceStatus *)args)->fence;
	} else if (!strcmp(name, "vkWaitForFences")) {
		*n = ((vk_args_vkWaitForFences *)args)->fenceCount;
		*f = ((vk_args_vkWaitForFences *)args)->pFences;
	} else if (!strcmp(name, "vkResetFences")) {
		*n = ((vk_args_vkResetFences *)args)->fenceCount;
		*f = ((vk_args_vkResetFences *)args)->pFences;
	} else {
		*n = 0;
		*f = NULL;
		return false;
	}
	return true;
}

bool vkr_acquired_fence(vkr *r, uint64_t cap)
{
	uint64_t *f = tmap_at(&r->binary, cap, TAG_FENCE);
	return f && *f == FENCE_ACQUIRED;
}

void vkr_acquire_submitted(vkr *r, uint64_t cap)
{
	uint64_t *f = tmap_at(&r->binary, cap, TAG_FENCE);
	if (f && *f == FENCE_ACQUIRED)
		*f = FENCE_SIGNALLED;
}

static void binary_use(void *ctx, const vk_sync_use *u)
{
	sync_note *n = ctx;
	vkr *r = n->r;
	if (u->fence) {
		uint64_t *f = tmap_at(&r->binary, u->handle, TAG_FENCE);
		if (!f)
			return;
		if (u->op == VK_SYNC_WAIT && !*f && !n->any)
			vkr_fatal(r, "VkFence 0x%llx: waited for, but no replayed call signals it "
				  "since it was made or reset (a submit cut out or edited?)",
				  (unsigned long long)u->handle);
		if (u->op != VK_SYNC_WAIT) {
			*f = u->op != VK_SYNC_SIGNAL ? FENCE_UNSIGNALLED
			     : n->acquire ? FENCE_ACQUIRED : FENCE_SIGNALLED;
			/* its signals and resets, counted (vkr_fold_mark) */
			uint64_t *epoch = tmap_at(&r->binary, u->handle, TAG_EPOCH);
			tmap_set(&r->binary, u->handle, TAG_EPOCH, epoch ? *epoch + 1 : 1);
		}
		return;
	}
	if (u->type == VK_SYNC_TIMELINE)
		return;
	uint64_t *s = tmap_at(&r->binary, u->handle, TAG_BINARY);
	if (!s)
		return;
	if (u->op == VK_SYNC_WAIT && !*s)
		vkr_fatal(r, "VkSemaphore 0x%llx: waited on, but no replayed call signals it "
			  "first (a submit cut out or edited?)", (unsigned long long)u->handle);
	*s = u->op == VK_SYNC_SIGNAL;
}

static void binary_forget(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			  const vk_field *f)
{
	(void)top;
	(void)f;
	vkr *r = ctx;
	if (h == r->h_semaphore && *value)
		tmap_del(&r->binary, *value, TAG_BINARY, NULL);
	if (h == r->h_fence && *value) {
		tmap_del(&r->binary, *value, TAG_FENCE, NULL);
		tmap_del(&r->binary, *value, TAG_EPOCH, NULL);
	}
}

void vkr_binary_note(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	sync_note sn = {r, false, e->special == SP_ACQUIRE || e->special == SP_ACQUIRE2};
	if (e->sync == VK_SYNC_WAIT_FENCES)
		sn.any = !((vk_args_vkWaitForFences *)args)->waitAll;
	if (e->sync)
		vk_sync_walk(e->sync, args, capres, binary_use, &sn);
	switch ((enum loop_kind)e->loop) {
	case LK_CREATE_SEMAPHORE: {
		vk_args_vkCreateSemaphore *a = args;
		if (!a->pSemaphore || !*a->pSemaphore || vkr_failed(capres) || !a->pCreateInfo)
			return;
		const VkSemaphoreTypeCreateInfo *ty = vk_chain_find(
			a->pCreateInfo->pNext, VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
		if (ty && ty->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE)
			return;
		tmap_set(&r->binary, (uint64_t)(uintptr_t)*a->pSemaphore, TAG_BINARY, 0);
		return;
	}
	case LK_CREATE_FENCE: {
		vk_args_vkCreateFence *a = args;
		if (!a->pFence || !*a->pFence || vkr_failed(capres) || !a->pCreateInfo)
			return;
		tmap_set(&r->binary, (uint64_t)(uintptr_t)*a->pFence, TAG_FENCE,
			 (a->pCreateInfo->flags & VK_FENCE_CREATE_SIGNALED_BIT) != 0);
		tmap_set(&r->binary, (uint64_t)(uintptr_t)*a->pFence, TAG_EPOCH, 0);
		return;
	}
	case LK_DESTROY_SYNC: {
		/* vkDestroy{Semaphore,Fence}(device, handle, pAllocator) */
		uint64_t h = vkr_handle_at(args, &e->cmd->params[1]);
		if (h && e->cmd->params[1].ref == r->h_fence) {
			tmap_del(&r->binary, h, TAG_FENCE, NULL);
			tmap_del(&r->binary, h, TAG_EPOCH, NULL);
		} else if (h) {
			tmap_del(&r->binary, h, TAG_BINARY, NULL);
		}
		return;
	}
	default:
		break;
	}
	if (e->imports_sync) {
		/* its payload comes from outside: no longer followed */
		vk_walk_handles(e->cmd, args, false, binary_forget, r);
	}
}
