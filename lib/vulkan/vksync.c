/*
 * vksync: see vksync.h.
 */
#include "vkschema_cmds.h"
#include "vksync.h"

#include <string.h>

vk_sync_cmd vk_sync_command(const vk_command_info *cmd)
{
	static const vk_named table[] = {
		{"vkQueueSubmit", VK_SYNC_QUEUE_SUBMIT},
		{"vkQueueSubmit2", VK_SYNC_QUEUE_SUBMIT2},
		{"vkQueueBindSparse", VK_SYNC_BIND_SPARSE},
		{"vkQueuePresentKHR", VK_SYNC_PRESENT},
		{"vkAcquireNextImageKHR", VK_SYNC_ACQUIRE},
		{"vkAcquireNextImage2KHR", VK_SYNC_ACQUIRE2},
		{"vkSignalSemaphore", VK_SYNC_SIGNAL_SEMAPHORE},
		{"vkWaitSemaphores", VK_SYNC_WAIT_SEMAPHORES},
		{"vkGetSemaphoreCounterValue", VK_SYNC_SEMAPHORE_VALUE},
		{"vkWaitForFences", VK_SYNC_WAIT_FENCES},
		{"vkGetFenceStatus", VK_SYNC_FENCE_STATUS},
		{"vkResetFences", VK_SYNC_RESET_FENCES},
	};
	for (int k = 0; k < 2; k++) {
		const char *name = k ? cmd->alias_of : cmd->sig.name;
		int kind = name ? VK_BY_NAME(table, name, VK_SYNC_NONE) : VK_SYNC_NONE;
		if (kind != VK_SYNC_NONE)
			return (vk_sync_cmd)kind;
	}
	return VK_SYNC_NONE;
}

typedef struct walk {
	vk_sync_fn fn;
	void *ctx;
	uint64_t queue;
} walk;

static void use(const walk *w, uint64_t handle, bool fence, vk_sync_op op, vk_sync_type type,
		const uint64_t *value)
{
	if (!handle)
		return;
	vk_sync_use u = {handle, fence, (uint8_t)op, (uint8_t)type, (uint64_t *)value, w->queue};
	w->fn(w->ctx, &u);
}

static const void *chained(const void *pnext, VkStructureType type)
{
	for (const VkBaseInStructure *b = pnext; b; b = b->pNext)
		if (b->sType == type)
			return b;
	return NULL;
}

/* The semaphores of a VkSubmitInfo or VkBindSparseInfo: their values,
 * where any, in a VkTimelineSemaphoreSubmitInfo of its chain. */
static void batch(const walk *w, const void *pnext, uint32_t nwait, const VkSemaphore *wait,
		  uint32_t nsignal, const VkSemaphore *signal)
{
	const VkTimelineSemaphoreSubmitInfo *t =
		chained(pnext, VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
	vk_sync_type type = t ? VK_SYNC_EITHER : VK_SYNC_BINARY;
	for (uint32_t j = 0; wait && j < nwait; j++)
		use(w, (uint64_t)(uintptr_t)wait[j], false, VK_SYNC_WAIT, type,
		    t && t->pWaitSemaphoreValues && j < t->waitSemaphoreValueCount
		    ? &t->pWaitSemaphoreValues[j] : NULL);
	for (uint32_t j = 0; signal && j < nsignal; j++)
		use(w, (uint64_t)(uintptr_t)signal[j], false, VK_SYNC_SIGNAL, type,
		    t && t->pSignalSemaphoreValues && j < t->signalSemaphoreValueCount
		    ? &t->pSignalSemaphoreValues[j] : NULL);
}

static void infos(const walk *w, vk_sync_op op, uint32_t n, const VkSemaphoreSubmitInfo *s)
{
	for (uint32_t j = 0; s && j < n; j++)
		use(w, (uint64_t)(uintptr_t)s[j].semaphore, false, op, VK_SYNC_EITHER, &s[j].value);
}

static void fences(const walk *w, vk_sync_op op, uint32_t n, const VkFence *f)
{
	for (uint32_t j = 0; f && j < n; j++)
		use(w, (uint64_t)(uintptr_t)f[j], true, op, VK_SYNC_BINARY, NULL);
}

/* Whether RESULT says the command of kind KIND did what it asks. */
static bool happened(vk_sync_cmd kind, VkResult result)
{
	switch (kind) {
	case VK_SYNC_ACQUIRE:
	case VK_SYNC_ACQUIRE2:
	case VK_SYNC_WAIT_SEMAPHORES:
	case VK_SYNC_WAIT_FENCES:
		return result >= 0 && result != VK_TIMEOUT && result != VK_NOT_READY;
	case VK_SYNC_SEMAPHORE_VALUE:
	case VK_SYNC_FENCE_STATUS:
		return result == VK_SUCCESS;
	default:
		return true;
	}
}

void vk_sync_walk(vk_sync_cmd kind, void *args, VkResult result, vk_sync_fn fn, void *ctx)
{
	walk w = {fn, ctx, 0};
	uint64_t fence = 0;  /* signalled last, once the rest is */
	if (!happened(kind, result))
		return;
	switch (kind) {
	case VK_SYNC_NONE:
		return;
	case VK_SYNC_QUEUE_SUBMIT: {
		const vk_args_vkQueueSubmit *a = args;
		w.queue = (uint64_t)(uintptr_t)a->queue;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo *si = &a->pSubmits[i];
			batch(&w, si->pNext, si->waitSemaphoreCount, si->pWaitSemaphores,
			      si->signalSemaphoreCount, si->pSignalSemaphores);
		}
		fence = (uint64_t)(uintptr_t)a->fence;
		break;
	}
	case VK_SYNC_QUEUE_SUBMIT2: {
		const vk_args_vkQueueSubmit2 *a = args;
		w.queue = (uint64_t)(uintptr_t)a->queue;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo2 *si = &a->pSubmits[i];
			infos(&w, VK_SYNC_WAIT, si->waitSemaphoreInfoCount, si->pWaitSemaphoreInfos);
			infos(&w, VK_SYNC_SIGNAL, si->signalSemaphoreInfoCount, si->pSignalSemaphoreInfos);
		}
		fence = (uint64_t)(uintptr_t)a->fence;
		break;
	}
	case VK_SYNC_BIND_SPARSE: {
		const vk_args_vkQueueBindSparse *a = args;
		w.queue = (uint64_t)(uintptr_t)a->queue;
		for (uint32_t i = 0; a->pBindInfo && i < a->bindInfoCount; i++) {
			const VkBindSparseInfo *bi = &a->pBindInfo[i];
			batch(&w, bi->pNext, bi->waitSemaphoreCount, bi->pWaitSemaphores,
			      bi->signalSemaphoreCount, bi->pSignalSemaphores);
		}
		fence = (uint64_t)(uintptr_t)a->fence;
		break;
	}
	case VK_SYNC_PRESENT: {
		const vk_args_vkQueuePresentKHR *a = args;
		const VkPresentInfoKHR *pi = a->pPresentInfo;
		w.queue = (uint64_t)(uintptr_t)a->queue;
		if (!pi)
			return;
		for (uint32_t j = 0; pi->pWaitSemaphores && j < pi->waitSemaphoreCount; j++)
			use(&w, (uint64_t)(uintptr_t)pi->pWaitSemaphores[j], false, VK_SYNC_WAIT,
			    VK_SYNC_BINARY, NULL);
		const VkSwapchainPresentFenceInfoEXT *f =
			chained(pi->pNext, VK_STRUCTURE_TYPE_SWAPCHAIN_PRESENT_FENCE_INFO_EXT);
		if (f)
			fences(&w, VK_SYNC_SIGNAL, f->swapchainCount, f->pFences);
		return;
	}
	case VK_SYNC_ACQUIRE: {
		const vk_args_vkAcquireNextImageKHR *a = args;
		use(&w, (uint64_t)(uintptr_t)a->semaphore, false, VK_SYNC_SIGNAL, VK_SYNC_BINARY, NULL);
		fence = (uint64_t)(uintptr_t)a->fence;
		break;
	}
	case VK_SYNC_ACQUIRE2: {
		const VkAcquireNextImageInfoKHR *ai =
			((const vk_args_vkAcquireNextImage2KHR *)args)->pAcquireInfo;
		if (!ai)
			return;
		use(&w, (uint64_t)(uintptr_t)ai->semaphore, false, VK_SYNC_SIGNAL, VK_SYNC_BINARY, NULL);
		fence = (uint64_t)(uintptr_t)ai->fence;
		break;
	}
	case VK_SYNC_SIGNAL_SEMAPHORE: {
		const VkSemaphoreSignalInfo *si = ((const vk_args_vkSignalSemaphore *)args)->pSignalInfo;
		if (si)
			use(&w, (uint64_t)(uintptr_t)si->semaphore, false, VK_SYNC_SIGNAL,
			    VK_SYNC_TIMELINE, &si->value);
		return;
	}
	case VK_SYNC_WAIT_SEMAPHORES: {
		const VkSemaphoreWaitInfo *wi = ((const vk_args_vkWaitSemaphores *)args)->pWaitInfo;
		for (uint32_t j = 0; wi && wi->pSemaphores && j < wi->semaphoreCount; j++)
			use(&w, (uint64_t)(uintptr_t)wi->pSemaphores[j], false, VK_SYNC_WAIT,
			    VK_SYNC_TIMELINE, wi->pValues ? &wi->pValues[j] : NULL);
		return;
	}
	case VK_SYNC_SEMAPHORE_VALUE: {
		const vk_args_vkGetSemaphoreCounterValue *a = args;
		use(&w, (uint64_t)(uintptr_t)a->semaphore, false, VK_SYNC_WAIT, VK_SYNC_TIMELINE,
		    a->pValue);
		return;
	}
	case VK_SYNC_WAIT_FENCES: {
		const vk_args_vkWaitForFences *a = args;
		fences(&w, VK_SYNC_WAIT, a->fenceCount, a->pFences);
		return;
	}
	case VK_SYNC_FENCE_STATUS:
		use(&w, (uint64_t)(uintptr_t)((const vk_args_vkGetFenceStatus *)args)->fence, true,
		    VK_SYNC_WAIT, VK_SYNC_BINARY, NULL);
		return;
	case VK_SYNC_RESET_FENCES: {
		const vk_args_vkResetFences *a = args;
		fences(&w, VK_SYNC_RESET, a->fenceCount, a->pFences);
		return;
	}
	}
	use(&w, fence, true, VK_SYNC_SIGNAL, VK_SYNC_BINARY, NULL);
}
