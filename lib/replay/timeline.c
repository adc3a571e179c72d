/*
 * Timeline semaphores, recycled.  Making one cost 0.23 ms on NVIDIA's
 * driver and destroying it as much again, and mpv (libplacebo) makes and
 * destroys one a frame: half its replay on an H200.  So a timeline
 * semaphore the program destroys goes to a pool of its device instead, and
 * the next one the program makes is taken from there once every signal
 * the old one had is done: its counter is at the highest value replay
 * signalled on it, TOP.  The capture's values of the new one are then
 * replayed BASE = TOP - initialValue higher, in every wait, signal and
 * read (vkr_timeline_shift), so that initialValue is where the counter
 * stands.
 *
 * Only a semaphore made with nothing in its create info's pNext chain but
 * its type (not exportable, not imported into) is recycled.  Under
 * --loop too: the passes raise the values of the semaphores made before
 * the range (loop.c), this those of semaphores made in it, the only ones
 * it recycles (the others' destroys are parked, not made).  mpv's 590
 * frames looped 20 times on an H100 ran at 973 frames/s making and
 * destroying one a frame, 78% of the time in NVIDIA's kernel module.
 */
#include "replay_internal.h"
#include "ahead.h"
#include "vksync.h"

#define POOL_MAX 64  /* kept per device; past that, destroyed */

/* Whether CI (a vkCreateSemaphore's) makes a timeline semaphore with its
 * type alone in its chain; *INITIAL then its first value. */
static bool recyclable(const VkSemaphoreCreateInfo *ci, uint64_t *initial)
{
	const VkBaseInStructure *b = ci ? ci->pNext : NULL;
	if (!b || b->pNext || b->sType != VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO)
		return false;
	const VkSemaphoreTypeCreateInfo *t = (const VkSemaphoreTypeCreateInfo *)b;
	*initial = t->initialValue;
	return t->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE && !ci->flags;
}

static void take(vkr_device *d, uint32_t i, VkSemaphore *sem, uint64_t *top)
{
	*sem = d->pooled[i].sem;
	*top = d->pooled[i].top;
	d->pooled[i] = d->pooled[--d->npooled];
}

/* A pooled semaphore of the record's device whose signals are all done,
 * taken out of the pool; false if none.  INITIAL is the new one's first
 * value. */
static bool pool_take(vkr *r, uint64_t initial, VkSemaphore *sem, uint64_t *top)
{
	vkr_device *d = r->d;
	PFN_vkGetSemaphoreCounterValue value = (PFN_vkGetSemaphoreCounterValue)vkr_device_fn(
		r, "vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR");
	/* TRACE_REPLAY_SLOW_DEVICE: polls see nothing done */
	bool slow = d->ahead && d->ahead->slow;
	for (uint32_t i = 0; value && !slow && i < d->npooled; i++) {
		uint64_t now;
		if (value(d->vk.device, d->pooled[i].sem, &now) != VK_SUCCESS || now != d->pooled[i].top)
			continue;
		take(d, i, sem, top);
		return true;
	}
	/* running ahead, the signals of every one may still be in flight
	 * (mpv's replay made one a frame, 106 us each on an H200): one is
	 * taken all the same.  A wait for its first value then waits for
	 * them too, work already submitted; its signals are above theirs.
	 * Only one whose top is at INITIAL or above: raising the counter
	 * from the host past signals still pending is invalid
	 * (VUID-VkSemaphoreSignalInfo-value-03259). */
	for (uint32_t i = 0; d->ahead && i < d->npooled; i++) {
		if (d->pooled[i].top < initial)
			continue;
		take(d, i, sem, top);
		return true;
	}
	return false;
}

bool vkr_timeline_create(vkr *r, const VkSemaphoreCreateInfo *ci, uint64_t cap, VkResult capres)
{
	uint64_t initial, top;
	VkSemaphore sem;
	/* what a semaphore of the same handle left (one the trace never
	 * destroyed, on a device ended since) */
	tmap_del(&r->timelines, cap, TAG_TLBASE, NULL);
	tmap_del(&r->timelines, cap, TAG_TLTOP, NULL);
	if (r->checking || vkr_failed(capres) || !cap || !recyclable(ci, &initial) ||
	    !pool_take(r, initial, &sem, &top))
		return false;
	if (top < initial) {
		/* the counter up to initialValue, from the host (its signals
		 * all done: pool_take) */
		PFN_vkSignalSemaphore signal = (PFN_vkSignalSemaphore)vkr_device_fn(
			r, "vkSignalSemaphore", "vkSignalSemaphoreKHR");
		VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
					    .semaphore = sem, .value = initial};
		if (!signal || signal(r->d->vk.device, &si) != VK_SUCCESS) {
			vkDestroySemaphore(r->d->vk.device, sem, NULL);
			return false;
		}
		top = initial;
	}
	vkr_map_put(r, r->h_semaphore, cap, (uint64_t)(uintptr_t)sem);
	vkr_owner_put(r, r->h_semaphore, cap);
	tmap_set(&r->timelines, cap, TAG_TLBASE, top - initial);
	tmap_set(&r->timelines, cap, TAG_TLTOP, top);
	r->calls++;
	r->timelines_reused++;
	return true;
}

void vkr_timeline_made(vkr *r, const VkSemaphoreCreateInfo *ci, uint64_t cap)
{
	uint64_t initial;
	if (r->checking || !cap || !recyclable(ci, &initial))
		return;
	tmap_set(&r->timelines, cap, TAG_TLBASE, 0);
	tmap_set(&r->timelines, cap, TAG_TLTOP, initial);
}

static void shift_use(void *ctx, const vk_sync_use *u)
{
	vkr *r = ctx;
	if (u->fence || !u->value)
		return;
	uint64_t *base = tmap_at(&r->timelines, u->handle, TAG_TLBASE);
	if (!base)
		return;
	*u->value += *base;
	if (u->op == VK_SYNC_SIGNAL) {
		uint64_t *top = tmap_at(&r->timelines, u->handle, TAG_TLTOP);
		if (top && *u->value > *top)
			*top = *u->value;
	}
}

void vkr_timeline_shift(vkr *r, const cmd_entry *e, void *args)
{
	if (e->sync && r->timelines.n && !r->checking)
		vk_sync_walk(e->sync, args, VK_SUCCESS, shift_use, r);
}

bool vkr_timeline_destroy(vkr *r, uint64_t cap)
{
	uint64_t top, live;
	vkr_device *d = r->d;
	if (!cap || !tmap_del(&r->timelines, cap, TAG_TLTOP, &top))
		return false;
	tmap_del(&r->timelines, cap, TAG_TLBASE, NULL);
	if (d->npooled == POOL_MAX || !vkr_map_get(r, r->h_semaphore, cap, &live) || !live)
		return false;
	if (d->npooled == d->cappooled) {
		d->cappooled = d->cappooled ? 2 * d->cappooled : 8;
		d->pooled = trace_xrealloc(d->pooled, d->cappooled * sizeof(*d->pooled));
	}
	d->pooled[d->npooled++] = (pooled_sem){(VkSemaphore)(uintptr_t)live, top};
	vkr_map_del(r, r->h_semaphore, cap);
	r->calls++;
	return true;
}

void vkr_timelines_free(vkr *r, vkr_device *d)
{
	for (uint32_t i = 0; i < d->npooled; i++)
		vkDestroySemaphore(d->vk.device, d->pooled[i].sem, NULL);
	free(d->pooled);
	d->pooled = NULL;
	d->npooled = d->cappooled = 0;
	if (!r->ndevs || (r->ndevs == 1 && r->devs[0] == d))
		tmap_free(&r->timelines);
}
