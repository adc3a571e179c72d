/*
 * Queues: submits, the GPU time of their batches (--stats), and binary
 * semaphores' and fences' pending signals.
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

/* Reads the slots in flight from the oldest, up to MAX of them, in one
 * call: those done, or all of them waiting, with WAIT.  How many were
 * read.  (One call a run: llvmpipe drains its queue at each read; read
 * slot by slot at each present, mpv's 600 frames replayed with --stats
 * in 0.68-0.73 s against 0.66-0.67 s, its device idle between batches
 * 0.20-0.25 s against 0.15 s.) */
static uint32_t gpu_read(vkr *r, gpu_timer *t, uint32_t max, bool wait)
{
	uint32_t s = t->head, n = max < GPU_SLOTS - s ? max : GPU_SLOTS - s;
	if (!n)
		return 0;
	/* per query: its value, then its availability */
	uint64_t ts[GPU_SLOTS][2][2];
	VkResult res = vkGetQueryPoolResults(r->d->vk.device, t->queries, 2 * s, 2 * n,
					     n * sizeof(ts[0]), ts, sizeof(ts[0][0]),
					     VK_QUERY_RESULT_64_BIT |
					     VK_QUERY_RESULT_WITH_AVAILABILITY_BIT |
					     (wait ? VK_QUERY_RESULT_WAIT_BIT : 0));
	if (res != VK_SUCCESS && res != VK_NOT_READY)
		vkr_fatal(r, "GPU time: vkGetQueryPoolResults failed: %s", vkr_result_name(res));
	uint32_t done = 0;
	for (; done < n && ts[done][0][1] && ts[done][1][1]; done++, s++) {
		uint64_t start = ts[done][0][0], end = ts[done][1][0];
		/* a span longer than the time since the batch went out is
		 * none (llvmpipe wrote a start of 0 for a batch of Qt's
		 * hellovulkancubes as its window was resized: 19,915 s of GPU
		 * time in a frame): its end still counts where the device
		 * went idle */
		uint64_t len = (end - start) & t->mask;
		if (len <= t->mask / 2 && (double)len * t->period * 1e-9 > vkr_now_s() - t->taken[s] + 1e-3) {
			r->gpu_dropped++;
			start = end;
		}
		gpu_account(r, t, t->frame[s], start, end);
	}
	if (wait && done < n)
		vkr_fatal(r, "GPU time: vkGetQueryPoolResults waited, and %u of %u batches' times "
			  "are not available", n - done, n);
	t->head = (t->head + done) % GPU_SLOTS;
	t->n -= done;
	return done;
}

/* Reads what is done (everything, waiting, with WAIT); without WAIT, only
 * once half the ring is in flight: a device keeps the times till then. */
void vkr_gpu_poll(vkr *r, bool wait)
{
	if (wait)
		vkr_send_held(r);
	for (uint32_t f = 0; f < r->d->nfamilies; f++) {
		gpu_timer *t = r->d->timers[f];
		if (!t || (!wait && t->n < GPU_SLOTS / 2))
			continue;
		uint32_t k;
		while ((k = t->n - (wait ? 0 : t->held)) && gpu_read(r, t, k, wait))
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
		gpu_read(r, t, t->n < GPU_SLOTS / 2 ? t->n : GPU_SLOTS / 2, true);
	}
	if (t->n + k == GPU_SLOTS)
		return UINT32_MAX;
	uint32_t s = (t->head + t->n + k) % GPU_SLOTS;
	t->frame[s] = r->nframe_times;
	t->taken[s] = vkr_now_s();
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
	uint64_t t = r->timing ? vkr_ticks() : 0;
	VkResult res = submit(h->queue, n, si, fence);
	if (r->timing)
		r->driver_ticks += vkr_ticks() - t;
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
	a->pSubmits = vkr_uniforms_submit(r, a->queue, a->pSubmits, a->submitCount);
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
	a->pSubmits = vkr_uniforms_submit2(r, a->queue, a->pSubmits, a->submitCount);
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
		/* a fence signalled again unreset: llvmpipe's queue thread
		 * read freed memory on such a submit (hostile.bats' mutants) */
		if (u->op == VK_SYNC_SIGNAL && *f == FENCE_SIGNALLED && !n->acquire)
			vkr_fatal(r, "VkFence 0x%llx: given to be signalled, but it is signalled "
				  "already: no replayed call resets it since its last signal (a "
				  "vkResetFences cut out or edited?)", (unsigned long long)u->handle);
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
