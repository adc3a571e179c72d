/*
 * Swapchains: offscreen images, acquires and presents folded into the
 * application's submits (as batches of our own under --loop), the
 * screenshots of presented frames, and what a frame's end does.
 */
#include "replay_internal.h"

#include "png.h"
#include "vktexel.h"

static swapchain *swapchain_get(vkr *r, uint64_t cap)
{
	uint64_t *e = tmap_at(&r->swapchains, cap, TAG_SWAPCHAIN);
	return e ? (swapchain *)(uintptr_t)*e : NULL;
}

/* The offscreen images a swapchain becomes within what the replay
 * device makes of their format (imageArrayLayers edited from 1 to
 * 4294967295 had llvmpipe ask for 67 GB: mutants.py seed 1076353409);
 * where the device cannot say, the create says what it says. */
static void swapchain_limits(vkr *r, const VkSwapchainCreateInfoKHR *ci, VkImageUsageFlags usage)
{
	VkImageFormatProperties p;
	if (r->checking || vkGetPhysicalDeviceImageFormatProperties(r->d->vk.physical,
			ci->imageFormat, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL, usage, 0,
			&p) != VK_SUCCESS)
		return;
	const struct { const char *name; uint32_t v, max; } lim[] = {
		{"imageArrayLayers", ci->imageArrayLayers, p.maxArrayLayers},
		{"imageExtent.width", ci->imageExtent.width, p.maxExtent.width},
		{"imageExtent.height", ci->imageExtent.height, p.maxExtent.height},
	};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if (lim[i].v > lim[i].max)
			vkr_fatal(r, "pCreateInfo: %s %u, but %s makes images of %u at most of "
				  "this format", lim[i].name, lim[i].v, r->d->vk.props.deviceName,
				  lim[i].max);
}

void vkr_create_swapchain(vkr *r, vk_args_vkCreateSwapchainKHR *a)
{
	const VkSwapchainCreateInfoKHR *ci = a->pCreateInfo;
	if (!ci || !a->pSwapchain || !*a->pSwapchain)
		return;
	swapchain_limits(r, ci, ci->imageUsage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
	swapchain *s = trace_xcalloc(1, sizeof(*s));
	s->cap = (uint64_t)(uintptr_t)*a->pSwapchain;
	s->dev = r->d;
	s->format = ci->imageFormat;
	s->extent = ci->imageExtent;
	s->layers = ci->imageArrayLayers ? ci->imageArrayLayers : 1;
	s->usage = ci->imageUsage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
	s->sharing = VK_SHARING_MODE_EXCLUSIVE;
	s->alpha = ci->compositeAlpha;
	tmap_set(&r->swapchains, s->cap, TAG_SWAPCHAIN, (uint64_t)(uintptr_t)s);
	vkr_map_put(r, r->h_swapchain, s->cap, s->cap);
	r->calls++;
}

/* (remembered by slot, forgotten when a swapchain's images change: a
 * barrier on a swapchain image searched every swapchain, 0.9% of mpv's
 * replay on an H100, sampled) */
uint32_t vkr_swapchain_image_layers(vkr *r, uint64_t cap_img)
{
	size_t slot = trace_ptr_slot((const void *)(uintptr_t)cap_img, SWAPCHAIN_MEMO_BITS);
	if (cap_img && r->swapchain_memo.img[slot] == cap_img)
		return r->swapchain_memo.layers[slot];
	uint32_t layers = 0;
	for (size_t i = 0; cap_img && !layers && i < r->swapchains.cap; i++) {
		if (!tmap_used(&r->swapchains, i) || r->swapchains.kinds[i] != TAG_SWAPCHAIN)
			continue;
		const swapchain *s = (const swapchain *)(uintptr_t)r->swapchains.vals[i];
		for (uint32_t k = 0; k < s->n; k++)
			if (s->cap_img[k] == cap_img)
				layers = s->layers;
	}
	r->swapchain_memo.img[slot] = cap_img;
	r->swapchain_memo.layers[slot] = layers;
	return layers;
}

void vkr_destroy_swapchain(vkr *r, swapchain *s)
{
	memset(&r->swapchain_memo, 0, sizeof(r->swapchain_memo));
	for (uint32_t i = 0; i < s->n; i++) {
		vkr_map_del(r, r->h_image, s->cap_img[i]);
		if (r->checking)
			continue;  /* --check: no images made */
		vkDestroyImage(r->d->vk.device, s->img[i], NULL);
		vkd_free(&r->d->vk, &s->mem[i]);
		vkDestroySemaphore(r->d->vk.device, s->presented[i], NULL);
	}
	vkr_map_del(r, r->h_swapchain, s->cap);
	free(s->img);
	free(s->cap_img);
	free(s->mem);
	free(s->presented);
	free(s->pending);
	free(s->waited);
	free(s);
}

void vkr_swapchain_images(vkr *r, vk_args_vkGetSwapchainImagesKHR *a)
{
	swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)a->swapchain);
	if (!s)
		vkr_fatal(r, "VkSwapchainKHR 0x%llx unknown", (unsigned long long)(uintptr_t)a->swapchain);
	if (!a->pSwapchainImages || !a->pSwapchainImageCount)
		return;
	uint32_t n = *a->pSwapchainImageCount;
	if (!s->n) {
		s->n = n;
		s->img = trace_xcalloc(n, sizeof(*s->img));
		s->cap_img = trace_xcalloc(n, sizeof(*s->cap_img));
		s->mem = trace_xcalloc(n, sizeof(*s->mem));
		s->presented = trace_xcalloc(n, sizeof(*s->presented));
		s->pending = trace_xcalloc(n, sizeof(*s->pending));
		s->waited = trace_xcalloc(n, sizeof(*s->waited));
		for (uint32_t i = 0; i < n && !r->checking; i++) {
			VkImageCreateInfo ici = {
				.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
				.imageType = VK_IMAGE_TYPE_2D,
				.format = s->format,
				.extent = {s->extent.width, s->extent.height, 1},
				.mipLevels = 1,
				.arrayLayers = s->layers,
				.samples = VK_SAMPLE_COUNT_1_BIT,
				.tiling = VK_IMAGE_TILING_OPTIMAL,
				.usage = s->usage,
				.sharingMode = s->sharing,
				.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
			};
			VkResult res = vkCreateImage(r->d->vk.device, &ici, NULL, &s->img[i]);
			if (res != VK_SUCCESS)
				vkr_fatal(r, "cannot make an offscreen image of %ux%u for the swapchain: %s",
					  s->extent.width, s->extent.height, vkr_result_name(res));
			VkMemoryRequirements req;
			vkGetImageMemoryRequirements(r->d->vk.device, s->img[i], &req);
			uint32_t type;
			if (vkd_find_memory_type(&r->d->vk, req.memoryTypeBits, 0,
						 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, 0, &type) < 0)
				vkr_fatal(r, "no memory type for the swapchain's images");
			vkd_request rq = {.size = req.size, .alignment = req.alignment,
					  .kind = VKD_KIND_OPTIMAL, .dedicated = true,
					  .dedicated_image = s->img[i]};
			if ((res = vkd_alloc(&r->d->vk, NULL, type, &rq, &s->mem[i])) != VK_SUCCESS ||
			    (res = vkBindImageMemory(r->d->vk.device, s->img[i], s->mem[i].memory,
						     s->mem[i].offset)) != VK_SUCCESS)
				vkr_fatal(r, "cannot place the swapchain's images: %s", vkr_result_name(res));
			VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
			if (vkCreateSemaphore(r->d->vk.device, &sci, NULL, &s->presented[i]) != VK_SUCCESS)
				vkr_fatal(r, "cannot make a semaphore");
		}
	}
	memset(&r->swapchain_memo, 0, sizeof(r->swapchain_memo));
	for (uint32_t i = 0; i < n && i < s->n; i++) {
		s->cap_img[i] = (uint64_t)(uintptr_t)a->pSwapchainImages[i];
		if (r->checking)
			s->img[i] = (VkImage)(uintptr_t)s->cap_img[i];
		vkr_map_put(r, r->h_image, s->cap_img[i], (uint64_t)(uintptr_t)s->img[i]);
	}
	if (n != s->n)
		vkr_warn(r, "vkGetSwapchainImagesKHR: %u images, the swapchain has %u", n, s->n);
}

/* Signals what an acquire of image INDEX signals, after the present that
 * showed it last is done with it. */
void vkr_acquire(vkr *r, uint64_t cap_swapchain, uint32_t index, uint64_t cap_sem,
		 uint64_t cap_fence, VkResult cap_res)
{
	if (vkr_failed(cap_res) || cap_res == VK_TIMEOUT || cap_res == VK_NOT_READY)
		return;
	swapchain *s = swapchain_get(r, cap_swapchain);
	if (!s)
		vkr_fatal(r, "VkSwapchainKHR 0x%llx unknown", (unsigned long long)cap_swapchain);
	if (index >= s->n)
		vkr_fatal(r, "image index %u of a swapchain of %u images", index, s->n);
	uint64_t sem = 0, fence = 0;
	if (!vkr_map_get(r, r->h_semaphore, cap_sem, &sem) || !vkr_map_get(r, r->h_fence, cap_fence, &fence))
		vkr_fatal(r, "the acquire's semaphore or fence is unknown");
	if (r->checking) {
		s->pending[index] = false;
		return;
	}
	/* the semaphore: the first submit that waits on it leaves the wait
	 * out instead */
	if (sem && !r->loop) {
		tmap_set(&r->d->fold_acquired, sem, TAG_ACQUIRED, 1);
		sem = 0;
		if (!fence) {
			r->calls++;
			return;
		}
	}
	/* the fence, where the image's last present waited on nothing: never
	 * signalled on the device here, and waits for it are left out
	 * (vkr_acquired_fence).  It says the image is free, and nothing else
	 * the program could know: an empty submit that signalled it came after
	 * the last frame's work, and the program's wait on it drained the
	 * queue each frame (vkd3d acquires with a fence, waits on it, and
	 * presents with no semaphore); a fresh fence made signalled cost
	 * 0.5 ms a frame on NVIDIA's driver.  Where the present waited on
	 * semaphores, the fence signalling says that work is done, which a
	 * program may count on: the empty submit below stays. */
	if (fence && !sem && !r->loop && !s->waited[index] && vkr_acquired_fence(r, cap_fence)) {
		r->calls++;
		return;
	}
	vkr_acquire_submitted(r, cap_fence);
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkSemaphore ssem = (VkSemaphore)(uintptr_t)sem;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = s->pending[index] ? 1 : 0,
		.pWaitSemaphores = &s->presented[index],
		.pWaitDstStageMask = &stage,
		.signalSemaphoreCount = sem ? 1 : 0,
		.pSignalSemaphores = &ssem,
	};
	s->pending[index] = false;
	VkResult res = vkQueueSubmit(r->d->vk.queue, 1, &si, (VkFence)(uintptr_t)fence);
	r->calls++;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "the acquire's submit failed: %s", vkr_result_name(res));
}

static void screenshot(vkr *r, swapchain *s, uint32_t index, int64_t frame);

/* Notes that QUEUE's batches wait on semaphore CAP (a capture handle). */
static void waited_by(vkr *r, uint64_t cap, VkQueue queue)
{
	tmap_set(&r->waited_by, cap, TAG_WAITED_BY, (uint64_t)(uintptr_t)queue);
}

/* ------------------------------------------------------------------ */
/* Marks (fold_mark): which submit a folded wait's semaphore went with. */

/* Whether mark K, which no semaphore names, can take a submit of the
 * record's device: with OWN, its fence is made there, and not in flight
 * (asked, not waited for: a mark freed by a semaphore waited on again
 * belongs to the last frame or so, and waiting on it made the replay
 * keep a frame behind the device). */
static bool mark_free(vkr *r, const fold_mark *k, bool own)
{
	if (k->refs)
		return false;
	if (!own || !k->own)
		return true;
	return k->own_dev == r->d &&
	       (!k->pending || vkGetFenceStatus(r->d->vk.device, k->own) == VK_SUCCESS);
}

/* A mark no semaphore names, for the device of the record; with its own
 * fence made there and unsignalled where OWN. */
static uint32_t mark_new(vkr *r, bool own)
{
	uint32_t m = 0;
	while (m < r->nmarks && !mark_free(r, &r->marks[m], own))
		m++;
	if (m == r->nmarks) {
		if (r->nmarks == r->capmarks) {
			r->capmarks = r->capmarks ? 2 * r->capmarks : 8;
			r->marks = trace_xrealloc(r->marks, r->capmarks * sizeof(*r->marks));
		}
		r->marks[r->nmarks++] = (fold_mark){0};
	}
	fold_mark *k = &r->marks[m];
	k->dev = r->d;
	if (!own)
		return m;
	VkDevice dev = r->d->vk.device;
	if (!k->own) {
		VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
		VkResult res = vkCreateFence(dev, &fci, NULL, &k->own);
		if (res != VK_SUCCESS)
			vkr_fatal(r, "a fence of replay's own: %s", vkr_result_name(res));
		k->own_dev = r->d;
	} else {
		vkr_ahead_fence_signalled(r, k->own);
		vkResetFences(dev, 1, &k->own);  /* signalled, or never submitted */
	}
	k->pending = false;
	return m;
}

/* Semaphore CAP goes with mark M, no longer with the one it had. */
static void mark_name(vkr *r, uint64_t cap, uint32_t m)
{
	uint64_t old;
	if (tmap_del(&r->waited_by, cap, TAG_MARKED, &old))
		r->marks[old].refs--;
	tmap_set(&r->waited_by, cap, TAG_MARKED, m);
	r->marks[m].refs++;
}

/* Waits until mark M's submit is done, where nothing says it is yet. */
static void mark_wait(vkr *r, uint32_t m)
{
	vkr_send_held(r);  /* (the mark's submit may be held) */
	fold_mark *k = &r->marks[m];
	if (!k->dev)
		return;  /* its device ended, and all it ran */
	if (k->cap_fence) {
		/* the fence reset, signalled again or destroyed since: the
		 * application saw it signal */
		uint64_t *epoch = tmap_at(&r->binary, k->cap_fence, TAG_EPOCH);
		if (!epoch || *epoch != k->epoch)
			return;
	} else if (!k->pending) {
		return;
	}
	vkr_bounded(r, vkWaitForFences(k->dev->vk.device, 1, &k->fence, VK_TRUE, vkr_wait_ns(r)),
		    "the batch that waits on the semaphore");
	if (!k->cap_fence)
		k->pending = false;
}

void vkr_fold_mark(vkr *r, VkQueue queue, VkFence *fence, uint64_t cap_fence)
{
	uint32_t n = r->marking;
	r->marking = 0;
	if (!n || r->checking)
		return;
	uint64_t *epoch = *fence ? tmap_at(&r->binary, cap_fence, TAG_EPOCH) : NULL;
	if (*fence && !epoch) {
		/* a fence the records do not follow (imported): its queue is
		 * waited for whole */
		for (uint32_t i = 0; i < n; i++)
			waited_by(r, r->d->fold_waits_cap[i], queue);
		return;
	}
	uint32_t m = mark_new(r, !*fence);
	fold_mark *k = &r->marks[m];
	if (*fence) {
		k->fence = *fence;
		k->cap_fence = cap_fence;
		k->epoch = *epoch;
	} else {
		*fence = k->fence = k->own;
		k->cap_fence = 0;
		k->pending = true;
	}
	for (uint32_t i = 0; i < n; i++)
		mark_name(r, r->d->fold_waits_cap[i], m);
}

static void fold_wait(vkr *r, VkSemaphore live, uint64_t cap)
{
	for (uint32_t i = 0; i < r->d->nfold_waits; i++)
		if (r->d->fold_waits[i] == live)
			return;
	if (r->d->nfold_waits == r->d->capfold_waits) {
		r->d->capfold_waits = r->d->capfold_waits ? 2 * r->d->capfold_waits : 8;
		r->d->fold_waits = trace_xrealloc(r->d->fold_waits, r->d->capfold_waits * sizeof(*r->d->fold_waits));
		r->d->fold_waits_cap = trace_xrealloc(r->d->fold_waits_cap,
						   r->d->capfold_waits * sizeof(*r->d->fold_waits_cap));
	}
	r->d->fold_waits[r->d->nfold_waits] = live;
	r->d->fold_waits_cap[r->d->nfold_waits++] = cap;
}

/* The semaphores a present waits on, into the folded waits. */
static void present_fold(void *ctx, const vk_sync_use *u)
{
	vkr *r = ctx;
	if (u->fence || u->op != VK_SYNC_WAIT)
		return;
	uint64_t live = vkr_need(r, r->h_semaphore, u->handle);
	/* a present of an image as acquired: the acquire signalled nothing */
	if (r->d->fold_acquired.n && tmap_del(&r->d->fold_acquired, live, TAG_ACQUIRED, NULL))
		return;
	fold_wait(r, (VkSemaphore)(uintptr_t)live, u->handle);
}

/* The semaphores a present waits on, live: a batch of ours waits on them. */
typedef struct present_waits {
	vkr *r;
	VkQueue queue;
	VkSemaphore *sem;
	VkPipelineStageFlags *stage;
	uint32_t n;
} present_waits;

static void present_wait(void *ctx, const vk_sync_use *u)
{
	present_waits *w = ctx;
	if (u->fence || u->op != VK_SYNC_WAIT)
		return;
	w->sem[w->n] = (VkSemaphore)(uintptr_t)vkr_need(w->r, w->r->h_semaphore, u->handle);
	w->stage[w->n++] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	waited_by(w->r, u->handle, w->queue);
}

/* --loop: a present as a batch of our own on QUEUE, which waits on what
 * the present waits on and signals each image's 'presented' semaphore,
 * which the next acquire of the image waits on (a pass replays the
 * range's presents and acquires again: folded into submits, what a pass
 * left pending would reach the next). */
static void present_batch(vkr *r, VkQueue queue, vk_args_vkQueuePresentKHR *a)
{
	const VkPresentInfoKHR *pi = a->pPresentInfo;
	present_waits w = {
		.r = r,
		.queue = queue,
		.sem = trace_arena_alloc(&r->arena, sizeof(VkSemaphore) * (pi->waitSemaphoreCount + 1)),
		.stage = trace_arena_alloc(&r->arena, sizeof(VkPipelineStageFlags) *
					   (pi->waitSemaphoreCount + 1)),
	};
	vk_sync_walk(VK_SYNC_PRESENT, a, VK_SUCCESS, present_wait, &w);
	VkSemaphore *signals = trace_arena_alloc(&r->arena, sizeof(VkSemaphore) * (pi->swapchainCount + 1));
	uint32_t nsignals = 0;
	for (uint32_t i = 0; i < pi->swapchainCount; i++) {
		swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)pi->pSwapchains[i]);
		uint32_t idx = pi->pImageIndices ? pi->pImageIndices[i] : 0;
		if (!s->pending[idx]) {
			signals[nsignals++] = s->presented[idx];
			s->pending[idx] = true;
		}
	}
	if (r->checking)
		return;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = w.n,
		.pWaitSemaphores = w.sem,
		.pWaitDstStageMask = w.stage,
		.signalSemaphoreCount = nsignals,
		.pSignalSemaphores = signals,
	};
	VkResult res = vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE);
	r->calls++;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "the present's submit failed: %s", vkr_result_name(res));
}


void vkr_fold_flush(vkr *r)
{
	if (!vkr_fold_pending(r))
		return;
	vkr_send_held(r);  /* (its batch goes after them) */
	uint32_t nsig = 0;
	VkSemaphore *sig = trace_arena_alloc(&r->arena, sizeof(*sig) * (r->d->fold_acquired.n + 1));
	for (size_t i = 0; i < r->d->fold_acquired.cap; i++)
		if (tmap_used(&r->d->fold_acquired, i))
			sig[nsig++] = (VkSemaphore)(uintptr_t)r->d->fold_acquired.keys[i];
	VkPipelineStageFlags *stage = trace_arena_alloc(&r->arena, sizeof(*stage) * (r->d->nfold_waits + 1));
	for (uint32_t i = 0; i < r->d->nfold_waits; i++)
		stage[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkFence fence = VK_NULL_HANDLE;
	r->marking = r->d->nfold_waits;
	vkr_fold_mark(r, r->d->vk.queue, &fence, 0);
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = r->d->nfold_waits,
		.pWaitSemaphores = r->d->fold_waits,
		.pWaitDstStageMask = stage,
		.signalSemaphoreCount = nsig,
		.pSignalSemaphores = sig,
	};
	VkResult res = vkQueueSubmit(r->d->vk.queue, 1, &si, fence);
	r->calls++;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "the presents' and acquires' batch failed: %s", vkr_result_name(res));
	r->d->nfold_waits = 0;
	tmap_free(&r->d->fold_acquired);
}

/* Whether the waits of a batch (N semaphores, live) hold an acquire's. */
static bool waits_acquired(vkr *r, const VkSemaphore *sem, uint32_t n)
{
	for (uint32_t i = 0; r->d->fold_acquired.n && i < n; i++)
		if (tmap_at(&r->d->fold_acquired, (uint64_t)(uintptr_t)sem[i], TAG_ACQUIRED))
			return true;
	return false;
}

/* The timeline values of a batch, where its chain has them (waits of
 * binary semaphores have a value there too, ignored); NULL if none. */
static const VkTimelineSemaphoreSubmitInfo *timeline_of(const void *next)
{
	return vk_chain_find(next, VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
}

/* A chain folding knows all of: nothing in it counts waits but the
 * timeline values (a device group's indices would). */
static bool foldable_chain(const void *next)
{
	for (const VkBaseInStructure *b = next; b; b = b->pNext)
		if (b->sType != VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
			return false;
	return true;
}

const VkSubmitInfo *vkr_fold_submit(vkr *r, const VkSubmitInfo *si, uint32_t n)
{
	if (!vkr_fold_pending(r) || !si || !n)
		return si;
	for (uint32_t b = 0; b < n; b++)
		if (!foldable_chain(si[b].pNext)) {
			vkr_fold_flush(r);
			return si;
		}
	VkSubmitInfo *out = trace_arena_alloc(&r->arena, sizeof(*out) * n);
	memcpy(out, si, sizeof(*out) * n);
	for (uint32_t b = 0; b < n; b++) {
		uint32_t extra = b ? 0 : r->d->nfold_waits;
		if (!extra && !waits_acquired(r, si[b].pWaitSemaphores, si[b].waitSemaphoreCount))
			continue;
		uint32_t cap = si[b].waitSemaphoreCount + extra, k = 0;
		VkSemaphore *sem = trace_arena_alloc(&r->arena, sizeof(*sem) * (cap + 1));
		VkPipelineStageFlags *stage = trace_arena_alloc(&r->arena, sizeof(*stage) * (cap + 1));
		uint64_t *val = trace_arena_alloc(&r->arena, sizeof(*val) * (cap + 1));
		const VkTimelineSemaphoreSubmitInfo *tl = timeline_of(si[b].pNext);
		for (uint32_t i = 0; i < extra; i++) {
			sem[k] = r->d->fold_waits[i];
			stage[k] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
			val[k++] = 0;
		}
		for (uint32_t i = 0; i < si[b].waitSemaphoreCount; i++) {
			uint64_t acquired;
			if (tmap_del(&r->d->fold_acquired, (uint64_t)(uintptr_t)si[b].pWaitSemaphores[i],
				     TAG_ACQUIRED, &acquired))
				continue;
			sem[k] = si[b].pWaitSemaphores[i];
			stage[k] = si[b].pWaitDstStageMask ? si[b].pWaitDstStageMask[i]
							   : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
			val[k++] = tl && tl->pWaitSemaphoreValues && i < tl->waitSemaphoreValueCount
					   ? tl->pWaitSemaphoreValues[i] : 0;
		}
		out[b].waitSemaphoreCount = k;
		out[b].pWaitSemaphores = sem;
		out[b].pWaitDstStageMask = stage;
		if (tl && tl->waitSemaphoreValueCount) {
			VkTimelineSemaphoreSubmitInfo *t2 = trace_arena_alloc(&r->arena, sizeof(*t2));
			*t2 = *tl;
			t2->waitSemaphoreValueCount = k;
			t2->pWaitSemaphoreValues = val;
			out[b].pNext = t2;  /* the chain held nothing else (foldable_chain) */
		}
	}
	r->marking = r->d->nfold_waits;
	r->d->nfold_waits = 0;
	return out;
}

const VkSubmitInfo2 *vkr_fold_submit2(vkr *r, const VkSubmitInfo2 *si, uint32_t n)
{
	if (!vkr_fold_pending(r) || !si || !n)
		return si;
	VkSubmitInfo2 *out = trace_arena_alloc(&r->arena, sizeof(*out) * n);
	memcpy(out, si, sizeof(*out) * n);
	for (uint32_t b = 0; b < n; b++) {
		uint32_t extra = b ? 0 : r->d->nfold_waits;
		uint32_t cap = si[b].waitSemaphoreInfoCount + extra, k = 0;
		VkSemaphoreSubmitInfo *w = trace_arena_alloc(&r->arena, sizeof(*w) * (cap + 1));
		for (uint32_t i = 0; i < extra; i++) {
			w[k++] = (VkSemaphoreSubmitInfo){
				.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
				.semaphore = r->d->fold_waits[i],
				.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
		}
		bool changed = extra;
		for (uint32_t i = 0; i < si[b].waitSemaphoreInfoCount; i++) {
			const VkSemaphoreSubmitInfo *x = &si[b].pWaitSemaphoreInfos[i];
			if (r->d->fold_acquired.n && tmap_del(&r->d->fold_acquired, (uint64_t)(uintptr_t)x->semaphore,
							   TAG_ACQUIRED, NULL)) {
				changed = true;
				continue;
			}
			w[k++] = *x;
		}
		if (changed) {
			out[b].waitSemaphoreInfoCount = k;
			out[b].pWaitSemaphoreInfos = w;
		}
	}
	r->marking = r->d->nfold_waits;
	r->d->nfold_waits = 0;
	return out;
}

void vkr_present_release(vkr *r, uint64_t cap)
{
	uint64_t live = 0, q;
	if (!cap)
		return;
	/* folded, never submitted: out of what is pending */
	if (vkr_map_get(r, r->h_semaphore, cap, &live) && live) {
		tmap_del(&r->d->fold_acquired, live, TAG_ACQUIRED, NULL);
		for (uint32_t i = 0; i < r->d->nfold_waits; i++)
			if (r->d->fold_waits[i] == (VkSemaphore)(uintptr_t)live) {
				r->d->fold_waits[i] = r->d->fold_waits[--r->d->nfold_waits];
				r->d->fold_waits_cap[i] = r->d->fold_waits_cap[r->d->nfold_waits];
				break;
			}
	}
	/* a batch waits on it that the application's fences say nothing of
	 * (libplacebo destroys its 'swapchain out' semaphores at teardown
	 * after its own fences only): that batch's submit is done first
	 * (--loop: its queue's work so far) */
	uint64_t m;
	if (tmap_del(&r->waited_by, cap, TAG_MARKED, &m)) {
		mark_wait(r, (uint32_t)m);
		r->marks[m].refs--;
	}
	if (!tmap_del(&r->waited_by, cap, TAG_WAITED_BY, &q) || !q)
		return;
	VkDevice dev = r->d->vk.device;
	VkResult res;
	vkResetFences(dev, 1, &r->d->fence);
	if ((res = vkQueueSubmit((VkQueue)(uintptr_t)q, 0, NULL, r->d->fence)) != VK_SUCCESS)
		vkr_fatal(r, "a fence after the batch that waits on the semaphore: %s",
			  vkr_result_name(res));
	vkr_bounded(r, vkWaitForFences(dev, 1, &r->d->fence, VK_TRUE, vkr_wait_ns(r)),
		    "the batch that waits on the semaphore");
}

void vkr_fold_free(vkr *r)
{
	free(r->d->fold_waits);
	free(r->d->fold_waits_cap);
	r->d->fold_waits = NULL;
	r->d->fold_waits_cap = NULL;
	r->d->nfold_waits = r->d->capfold_waits = 0;
	tmap_free(&r->d->fold_acquired);
	/* the device's marks end with it */
	for (uint32_t m = 0; m < r->nmarks; m++) {
		fold_mark *k = &r->marks[m];
		if (k->own_dev == r->d) {
			if (r->d->vk.device)
				vkDestroyFence(r->d->vk.device, k->own, NULL);
			k->own = VK_NULL_HANDLE;
			k->own_dev = NULL;
			k->pending = false;
		}
		if (k->dev == r->d)
			k->dev = NULL;
	}
	/* the semaphores our batches wait on, and the marks: of every device */
	if (r->ndevs <= 1) {
		tmap_free(&r->waited_by);
		free(r->marks);
		r->marks = NULL;
		r->nmarks = r->capmarks = r->marking = 0;
	}
}

void vkr_present(vkr *r, vk_args_vkQueuePresentKHR *a)
{
	const VkPresentInfoKHR *pi = a->pPresentInfo;
	if (!pi)
		vkr_fatal(r, "vkQueuePresentKHR without pPresentInfo");
	uint64_t queue = vkr_need(r, r->h_queue, (uint64_t)(uintptr_t)a->queue);
	for (uint32_t i = 0; i < pi->swapchainCount; i++) {
		swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)pi->pSwapchains[i]);
		uint32_t idx = pi->pImageIndices ? pi->pImageIndices[i] : 0;
		if (!s || idx >= s->n)
			vkr_fatal(r, "present of an unknown swapchain or image");
		s->waited[idx] = pi->waitSemaphoreCount > 0;
	}
	if (r->checking) {  /* --check: the waits' handles known, nothing submitted */
		vk_sync_walk(VK_SYNC_PRESENT, a, VK_SUCCESS, present_fold, r);
		r->d->nfold_waits = 0;
		return;
	}
	if (!r->loop) {
		/* nothing shows the image: what the present waits on, the next
		 * submit waits on (an acquire's semaphore, never signalled, is
		 * left out), and no batch of our own is submitted */
		vk_sync_walk(VK_SYNC_PRESENT, a, VK_SUCCESS, present_fold, r);
		r->calls++;
	} else {
		present_batch(r, (VkQueue)(uintptr_t)queue, a);
	}
	if (pi->pResults)
		for (uint32_t i = 0; i < pi->swapchainCount; i++)
			pi->pResults[i] = VK_SUCCESS;
	/* the screenshot of this frame: the first swapchain's image */
	const vkr_options *o = r->opt;
	if (r->next_shot < o->nscreenshots && o->screenshots[r->next_shot] == (uint64_t)r->frame &&
	    pi->swapchainCount) {
		swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)pi->pSwapchains[0]);
		screenshot(r, s, pi->pImageIndices ? pi->pImageIndices[0] : 0, r->frame);
	}
}

static void screenshot(vkr *r, swapchain *s, uint32_t index, int64_t frame)
{
	const vkr_options *o = r->opt;
	while (r->next_shot < o->nscreenshots && o->screenshots[r->next_shot] <= (uint64_t)frame)
		r->next_shot++;
	if (!vk_texels_known(s->format)) {
		vkr_warn(r, "frame %lld: screenshot of format %d not supported yet", (long long)frame,
			 s->format);
		return;
	}
	uint32_t w = s->extent.width, h = s->extent.height;
	VkDeviceSize size = (VkDeviceSize)w * h * 4;
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
	};
	VkBuffer buf;
	VkDevice dev = r->d->vk.device;
	if (vkCreateBuffer(dev, &bci, NULL, &buf) != VK_SUCCESS)
		vkr_fatal(r, "screenshot: cannot make a buffer");
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, buf, &req);
	uint32_t type;
	if (vkd_find_memory_type(&r->d->vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				 VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0, 0, &type) < 0)
		vkr_fatal(r, "screenshot: no host-visible memory");
	vkd_request rq = {.size = req.size, .alignment = req.alignment, .kind = VKD_KIND_LINEAR,
			  .dedicated = true, .dedicated_buffer = buf};
	vkd_allocation mem;
	VkResult res;
	if ((res = vkd_alloc(&r->d->vk, NULL, type, &rq, &mem)) != VK_SUCCESS ||
	    (res = vkBindBufferMemory(dev, buf, mem.memory, mem.offset)) != VK_SUCCESS)
		vkr_fatal(r, "screenshot: %s", vkr_result_name(res));
	vkDeviceWaitIdle(dev);
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	vkResetCommandBuffer(r->d->cb, 0);
	vkBeginCommandBuffer(r->d->cb, &bi);
	VkImageMemoryBarrier b = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
		.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
		.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = s->img[index],
		.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
	};
	vkCmdPipelineBarrier(r->d->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
			     VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &b);
	VkBufferImageCopy region = {
		.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
		.imageExtent = {w, h, 1},
	};
	vkCmdCopyImageToBuffer(r->d->cb, s->img[index], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf, 1,
			       &region);
	b.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
	b.dstAccessMask = 0;
	b.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
	b.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
	vkCmdPipelineBarrier(r->d->cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
			     VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, NULL, 0, NULL, 1, &b);
	vkEndCommandBuffer(r->d->cb);
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
			   .pCommandBuffers = &r->d->cb};
	vkResetFences(dev, 1, &r->d->fence);
	if ((res = vkQueueSubmit(r->d->vk.queue, 1, &si, r->d->fence)) != VK_SUCCESS ||
	    (vkr_bounded(r, res = vkWaitForFences(dev, 1, &r->d->fence, VK_TRUE, vkr_wait_ns(r)),
			 "the screenshot's copy"), res != VK_SUCCESS))
		vkr_fatal(r, "screenshot: %s", vkr_result_name(res));
	uint8_t *p = vkd_map(&r->d->vk, &mem, &res);
	if (!p)
		vkr_fatal(r, "screenshot: cannot map: %s", vkr_result_name(res));
	vkd_invalidate(&r->d->vk, &mem, 0, VK_WHOLE_SIZE);
	uint8_t *rgba = trace_xcalloc(size, 1);
	vk_texels_to_rgba(s->format, p, rgba, (size_t)w * h,
			  s->alpha != VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR);
	vkd_unmap(&r->d->vk, &mem);
	vkd_free(&r->d->vk, &mem);
	vkDestroyBuffer(dev, buf, NULL);
	char path[4096];
	if (o->screenshot_out)
		snprintf(path, sizeof(path), "%s", o->screenshot_out);
	else
		snprintf(path, sizeof(path), "%s/frame-%lld.png", o->screenshot_dir ? o->screenshot_dir : ".",
			 (long long)frame);
	/* as every output: whole or absent, and a FIFO or /dev/null as it is */
	char *tmp;
	trace_error err;
	FILE *f = trace_output_open(path, &tmp, &err);
	if (!f)
		vkr_fatal(r, "%s: %s", path, err.msg);
	bool ok = png_write_rgba_file(f, rgba, w, h) == 0;
	if (!ok)
		trace_error_errno(&err, path, "write error");
	if (trace_output_close(f, path, tmp, ok, &err) != 0)
		vkr_fatal(r, "%s: %s", path, err.msg);
	free(rgba);
	if (!o->quiet && o->stats)
		fprintf(stderr, "%s: frame %lld: %s\n", trace_cli_self.prog, (long long)frame, path);
}

/* A frame ended: running ahead kept to its frames, the frame's time,
 * the end of --frames, the GPU's timestamps read as far as they are. */
void vkr_frame_ended(vkr *r, int64_t frame)
{
	if (r->ahead_on)
		vkr_ahead_frame(r);
	double t = vkr_now_s(), dt = t - r->t_last_frame;
	r->t_last_frame = t;
	if (r->opt->last_frame >= 0 && frame >= r->opt->last_frame)
		r->stop = true;
	/* the replay's wait for its records, the frames' alone: from the
	 * present before the first frame counted to the last one's */
	trace_ahead_waits w = {0};
	if (r->opt->stats && r->in)
		trace_reader_ahead_waits(r->in, &w);
	double before = r->waited_at_present;
	r->waited_at_present = w.caller_seconds;
	if (frame < r->opt->first_frame)
		return;
	if (!r->frames_done++) {
		r->t_first_frame = t - dt;
		r->waited_before_frames = before;
	}
	r->waited_in_frames = w.caller_seconds - r->waited_before_frames;
	if (!r->opt->stats)
		return;
	if (r->nframe_times == r->cap_frame_times) {
		r->cap_frame_times = r->cap_frame_times ? r->cap_frame_times * 2 : 256;
		r->frame_times = trace_xrealloc(r->frame_times, r->cap_frame_times * sizeof(double));
	}
	r->frame_times[r->nframe_times++] = dt;
	r->frames_records_ticks = r->records_ticks;
	r->frames_driver_ticks = r->driver_ticks;
	vkr_device *cur = r->d;
	for (size_t i = 0; i < r->ndevs; i++) {
		r->d = r->devs[i];
		vkr_gpu_poll(r, false);
	}
	r->d = cur;
}
