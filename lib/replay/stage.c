/*
 * Memory the trace writes while running ahead of the device (ahead.c),
 * ordered on the queue: where copies into a group are in flight, or the
 * work a skipped wait covered may still run, an update goes into a ring
 * of staging memory and a copy in the batch of ours that goes before the
 * next submit, not under the device's feet.
 */
#include "ahead.h"

static void staging_retire(vkr_ahead *a);

/* (memory records name no device: the group's is the one that writes) */
static bool stages(vkr *r, const group *g)
{
	vkr_ahead *a = r->d->ahead;
	if (!a)
		return false;
	ahead_poll(r, a);
	staging_retire(a);
	/* copies into it still to land: what follows lands after them */
	if (g->staged_serial > a->done)
		return true;
	/* (submits held: only after a skipped wait for them, replay.c, so
	 * the update lands after them) */
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
	vkr_send_held(r);  /* (the submits held read what was there) */
	if (a && g->staged_serial > a->done)
		vkr_ahead_settle(r);
	else if (a)
		ahead_pay(r, a);
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
	ahead_free_staging(dev, a);
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
		ahead_free_staging(dev, a);
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
		ahead_wait_for(r, a, g->serial);
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

/* Whether the N runs (TOTAL bytes) into G go in the command buffer
 * itself (vkCmdUpdateBuffer: words, up to 64 KiB), not through the
 * staging ring and a copy: vkd3d-gears' constants, 60 bytes a frame. */
#define INLINE_MOST 65536
static bool inline_runs(const group *g, const stage_run *runs, size_t n, VkDeviceSize total)
{
	if (total > INLINE_MOST)
		return false;
	for (size_t i = 0; i < n; i++)
		if (((g->alias_lead + runs[i].off) | runs[i].len) & 3)
			return false;
	return true;
}

/* The batch of ours writes into G: its copies land with its call. */
static void staged_into(vkr_ahead *a, group *g)
{
	a->copies = true;
	if (g->staged_serial == UINT64_MAX)
		return;
	g->staged_serial = UINT64_MAX;
	if (a->nopen_groups == a->capopen_groups) {
		a->capopen_groups = a->capopen_groups ? 2 * a->capopen_groups : 16;
		a->open_groups = trace_xrealloc(a->open_groups, a->capopen_groups * sizeof(group *));
	}
	a->open_groups[a->nopen_groups++] = g;
}

/* The runs, packed one after another in one stretch of the staging ring
 * (one entry of it, whatever their number), and copied in calls of up to
 * 64 regions: mpv's sparse updates are 76 runs of a few words each
 * (median), and with a ring entry and a vkCmdCopyBuffer a run one took
 * 22-24 us staged on llvmpipe, 7-9 us so. */
static bool stage(vkr *r, group *g, const stage_run *runs, size_t n, VkDeviceSize total)
{
	vkr_ahead *a = r->d->ahead;
	VkDeviceSize at;
	if (!total)
		return true;
	if (!a || !alias_of(r, g))
		return false;
	if (inline_runs(g, runs, n, total)) {
		ahead_open_batch(r, a);
		for (size_t i = 0; i < n; i++)
			vkCmdUpdateBuffer(a->open, g->alias, g->alias_lead + runs[i].off, runs[i].len,
					  runs[i].data);
		staged_into(a, g);
		r->ahead_staged += total;
		return true;
	}
	if (!staging_take(r, a, total, &at))
		return false;
	ahead_open_batch(r, a);
	VkBufferCopy c[64];
	uint32_t k = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(a->staging_map + at, runs[i].data, runs[i].len);
		c[k++] = (VkBufferCopy){.srcOffset = at, .dstOffset = g->alias_lead + runs[i].off,
					.size = runs[i].len};
		at += runs[i].len;
		if (k == 64) {
			vkCmdCopyBuffer(a->open, a->staging, g->alias, k, c);
			k = 0;
		}
	}
	if (k)
		vkCmdCopyBuffer(a->open, a->staging, g->alias, k, c);
	staged_into(a, g);
	r->ahead_staged += total;
	return true;
}

bool vkr_ahead_stage(vkr *r, group *g, const stage_run *runs, size_t n, VkDeviceSize total)
{
	vkr_device *cur = r->d;
	r->d = g->dev;
	bool done = stage(r, g, runs, n, total);
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
	ahead_wait_for(r, a, a->sent);
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

void ahead_free_staging(VkDevice dev, vkr_ahead *a)
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
