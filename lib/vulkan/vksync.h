/*
 * vksync: what a Vulkan command does to fences and semaphores, read from
 * its decoded arguments (vk_args_NAME, vkschema_cmds.h): each wait,
 * signal and reset, with the timeline value where the command gives one.
 * One walk for the replayer's --loop (the state of fences and semaphores,
 * the timeline values it shifts pass by pass, what it refuses) and the
 * trimmer.  Plain C over the Vulkan types: no libvulkan call.
 */
#ifndef TRACE_VKSYNC_H
#define TRACE_VKSYNC_H

#include "vkschema.h"

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

/* The commands that wait, signal or reset; 0 for every other. */
typedef enum vk_sync_cmd {
	VK_SYNC_NONE = 0,
	VK_SYNC_QUEUE_SUBMIT,      /* vkQueueSubmit */
	VK_SYNC_QUEUE_SUBMIT2,     /* vkQueueSubmit2(KHR) */
	VK_SYNC_BIND_SPARSE,       /* vkQueueBindSparse */
	VK_SYNC_PRESENT,           /* vkQueuePresentKHR */
	VK_SYNC_ACQUIRE,           /* vkAcquireNextImageKHR */
	VK_SYNC_ACQUIRE2,          /* vkAcquireNextImage2KHR */
	VK_SYNC_SIGNAL_SEMAPHORE,  /* vkSignalSemaphore(KHR) */
	VK_SYNC_WAIT_SEMAPHORES,   /* vkWaitSemaphores(KHR) */
	VK_SYNC_SEMAPHORE_VALUE,   /* vkGetSemaphoreCounterValue(KHR) */
	VK_SYNC_WAIT_FENCES,       /* vkWaitForFences */
	VK_SYNC_FENCE_STATUS,      /* vkGetFenceStatus */
	VK_SYNC_RESET_FENCES,      /* vkResetFences */
} vk_sync_cmd;

typedef enum vk_sync_op {
	/* a batch's wait, a present's, vkWaitSemaphores, vkWaitForFences; a
	 * read that found the state (vkGetSemaphoreCounterValue's value,
	 * vkGetFenceStatus's VK_SUCCESS) counts as a wait for it */
	VK_SYNC_WAIT,
	VK_SYNC_SIGNAL,  /* a batch's, an acquire's, vkSignalSemaphore */
	VK_SYNC_RESET,   /* vkResetFences */
} vk_sync_op;

/* A semaphore's type, as far as the command tells it. */
typedef enum vk_sync_type {
	VK_SYNC_EITHER,    /* a batch with values: the semaphore's type decides */
	VK_SYNC_BINARY,    /* an acquire, a present, a batch without values */
	VK_SYNC_TIMELINE,  /* vkSignalSemaphore, vkWaitSemaphores, ...CounterValue */
} vk_sync_type;

typedef struct vk_sync_use {
	uint64_t handle;   /* the VkSemaphore or VkFence as ARGS hold it (never 0) */
	bool fence;        /* a fence; else a semaphore */
	uint8_t op;        /* vk_sync_op */
	uint8_t type;      /* vk_sync_type; semaphores */
	uint64_t *value;   /* the timeline value the command gives for it, in
			    * ARGS (a caller may write it), or NULL */
	uint64_t queue;    /* the VkQueue of a submit's, a sparse bind's or a
			    * present's use; 0 for the host's and an acquire's */
} vk_sync_use;

typedef void (*vk_sync_fn)(void *ctx, const vk_sync_use *u);

/* CMD's kind (by its name, or the command it is an alias of). */
vk_sync_cmd vk_sync_command(const vk_command_info *cmd);

/*
 * Calls FN for each fence and semaphore the command of kind KIND uses,
 * in the order it uses them: batch by batch its waits, then its signals,
 * the fence last.  ARGS: its vk_args_NAME, decoded into writable memory
 * (vk_decode_args).  RESULT: what it returned; where that says nothing
 * happened (an acquire or a wait that failed, timed out or was not
 * ready; a read that did not return VK_SUCCESS), FN is not called.  A
 * caller that wants every use whatever the result passes VK_SUCCESS.
 */
void vk_sync_walk(vk_sync_cmd kind, void *args, VkResult result, vk_sync_fn fn, void *ctx);

#endif
