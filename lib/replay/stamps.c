/*
 * The program's timestamps, left out (unless --timestamps-as-captured).
 *
 * Nothing the replay draws reads a timestamp query: the replay does not
 * ask vkGetQueryPoolResults (replay.c), and the times a device writes
 * are its own, not the capture's.  Yet each write costs the device: on
 * llvmpipe a write drains the queue (mpv's renderer writes 8 a frame and
 * replayed at half the rate with them), on a GPU it is a point the work
 * before it must reach.  So the writes into a pool of
 * VK_QUERY_TYPE_TIMESTAMP, and the resets of its queries, are not made;
 * the pool is still made, and named.
 *
 * A vkCmdCopyQueryPoolResults of such a pool writes a buffer the device
 * may read later: it is replaced by writes of what a copy of available
 * queries leaves there, 0 for each time and 1 for each availability,
 * in the copy's layout (the times of another device would mean nothing
 * either).
 */
#include "replay_internal.h"

void vkr_stamps_entry(cmd_entry *e)
{
	static const vk_named table[] = {
		{"vkCreateQueryPool", ST_CREATE},
		{"vkDestroyQueryPool", ST_DESTROY},
		{"vkCmdWriteTimestamp", ST_WRITE},
		{"vkCmdWriteTimestamp2", ST_WRITE},
		{"vkCmdWriteTimestamp2KHR", ST_WRITE},
		{"vkCmdResetQueryPool", ST_RESET},
		{"vkResetQueryPool", ST_RESET},
		{"vkResetQueryPoolEXT", ST_RESET},
		{"vkCmdCopyQueryPoolResults", ST_COPY},
	};
	e->stamp = (uint8_t)VK_BY_NAME(table, e->cmd->sig.name, ST_NONE);
	/* (each writes, resets or copies by its queryPool parameter) */
	if (e->stamp >= ST_WRITE && e->qpool < 0)
		e->stamp = ST_NONE;
}

/* Record E (ARGS, capture values; a stamp kind): query pools of
 * timestamps are noted as they are made, (capture value, TAG_TSPOOL) in
 * r->cbs, and kept past a destroy under --loop, whose passes make and
 * destroy again what the range does.  What replay makes of the record:
 * STAMP_AS_CAPTURED, STAMP_LEFT_OUT (a write or reset of such a pool) or
 * STAMP_COPY_WRITTEN (vkr_stamps_copy). */
enum stamp_use vkr_stamps_note(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	if (e->stamp == ST_CREATE) {
		vk_args_vkCreateQueryPool *a = args;
		if (a->pCreateInfo && a->pQueryPool && *a->pQueryPool && !vkr_failed(capres) &&
		    a->pCreateInfo->queryType == VK_QUERY_TYPE_TIMESTAMP)
			tmap_set(&r->cbs, (uint64_t)(uintptr_t)*a->pQueryPool, TAG_TSPOOL,
				 (uint64_t)a->pCreateInfo->queryCount + 1);
		return STAMP_AS_CAPTURED;
	}
	if (e->stamp == ST_DESTROY) {
		if (!r->loop)
			tmap_del(&r->cbs,
				 (uint64_t)(uintptr_t)((vk_args_vkDestroyQueryPool *)args)->queryPool,
				 TAG_TSPOOL, NULL);
		return STAMP_AS_CAPTURED;
	}
	uint64_t p = vkr_handle_at(args, &e->cmd->params[e->qpool]);
	if (r->opt->timestamps_as_captured || !p || !tmap_at(&r->cbs, p, TAG_TSPOOL))
		return STAMP_AS_CAPTURED;
	r->stamps_left_out++;
	return e->stamp == ST_COPY ? STAMP_COPY_WRITTEN : STAMP_LEFT_OUT;
}

/* The copy of vkCmdCopyQueryPoolResults ARGS (capture values), written
 * instead: per query, its time 0 and, where asked, its availability 1,
 * each 4 or 8 bytes; not the bytes between (the stride's).  Its queries
 * lie within the pool and its bytes within dstBuffer, or the replay
 * stops (under --loop, cmdbuf.c checks no query range). */
void vkr_stamps_copy(vkr *r, const cmd_entry *e, void *args)
{
	vk_args_vkCmdCopyQueryPoolResults *a = args;
	uint32_t word = (a->flags & VK_QUERY_RESULT_64_BIT) ? 8 : 4;
	uint32_t n = (a->flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT) ? 2 : 1;
	uint64_t *pool = tmap_at(&r->cbs, (uint64_t)(uintptr_t)a->queryPool, TAG_TSPOOL);
	if ((uint64_t)a->firstQuery + a->queryCount > *pool - 1)
		vkr_queries_past(r, (uint64_t)(uintptr_t)a->queryPool, a->firstQuery, a->queryCount,
				 *pool - 1);
	uint64_t cap_buf = (uint64_t)(uintptr_t)a->dstBuffer;
	vkr_remap_args(r, e->cmd, args);  /* (stops at a handle no record made) */
	const obj *o = vkr_obj_get(r, cap_buf);
	VkDeviceSize size = o && !o->image ? o->create_size : 0;
	uint64_t last = 0;
	bool over = a->queryCount && __builtin_mul_overflow(a->stride, a->queryCount - 1, &last);
	if (a->queryCount && (over || last > size || a->dstOffset > size - last ||
			      (uint64_t)word * n > size - last - a->dstOffset))
		vkr_fatal(r, "dstOffset: %llu, stride %llu: %u queries of %u bytes do not fit in "
			  "the %llu bytes of VkBuffer 0x%llx", (unsigned long long)a->dstOffset,
			  (unsigned long long)a->stride, a->queryCount, word * n,
			  (unsigned long long)size, (unsigned long long)cap_buf);
	uint64_t data[4] = {0};
	if (n == 2)
		memcpy((uint8_t *)data + word, &(uint32_t){1}, 4);
	for (uint32_t i = 0; i < a->queryCount; i++)
		vkCmdUpdateBuffer(a->commandBuffer, a->dstBuffer, a->dstOffset + i * a->stride,
				  (VkDeviceSize)word * n, data);
	r->calls += a->queryCount;
}
