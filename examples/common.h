/*
 * common: what the example programs (vkexample, vkthreads) share: one
 * error path, the instance, a physical device, a device with one queue,
 * memory, buffers and command buffers.  The set-up state is the global
 * ex, as each program is one device for its whole run.
 */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H

#include <stdint.h>
#include <stdnoreturn.h>

#include <vulkan/vulkan.h>

struct ex_vk {
	const char *prog;	/* ahead of every message */
	int log;		/* logv() prints: the "exact values passed" log */
	uint32_t api;		/* the instance's apiVersion; 0: 1.1 */
	VkInstance instance;
	VkPhysicalDevice gpu;
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties memprops;
	VkDevice dev;
	uint32_t qfamily;
	VkQueue queue;
};
extern struct ex_vk ex;

/* "PROG: message" on stderr, then exit 1. */
noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* VK(vkCreateBuffer(...)): on failure prints "vkCreateBuffer failed:
 * VK_ERROR_... (code) at line N" and exits 1. */
void vk_check(VkResult r, const char *expr, int line);
#define VK(call) vk_check((call), #call, __LINE__)
/* One line of the "exact values passed" log on stdout, where ex.log asks. */
void logv(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ex.instance for API ex.api (1.1 unless set), with these layers and extensions and PNEXT on
 * its create info (a debug messenger's). */
void ex_create_instance(const char *const *layers, uint32_t nlayers, const char *const *exts,
			uint32_t nexts, const void *pnext);
/* ex.gpu: physical device N (dies naming how many there are), with its
 * properties and memory properties. */
void ex_pick_gpu(unsigned n);
/* The first queue family FITS takes, or UINT32_MAX. */
uint32_t ex_queue_family(int (*fits)(uint32_t family, const VkQueueFamilyProperties *props));
/* ex.dev with one queue of FAMILY (ex.queue), these extensions and PNEXT
 * on its create info (the features to enable). */
void ex_create_device(uint32_t family, const char *const *exts, uint32_t nexts,
		      const void *pnext);

/* A memory type in BITS with every flag of WANT, one with PREFER too where
 * there is one. */
uint32_t ex_find_memory(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer);
/* Memory for REQ; *coherent (unless NULL) says whether it is HOST_COHERENT. */
VkDeviceMemory ex_allocate(VkMemoryRequirements req, VkMemoryPropertyFlags want,
			   VkMemoryPropertyFlags prefer, int *coherent);

struct buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
	VkDeviceSize size;
	int coherent;
};

/* A buffer with memory of its own. */
struct buffer ex_create_buffer(VkDeviceSize size, VkBufferUsageFlags usage,
			       VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer);
void ex_destroy_buffer(struct buffer *b);
/* The host's writes to B's mapped memory, made visible to the device
 * (vkFlushMappedMemoryRanges) where it is not HOST_COHERENT. */
void ex_flush_buffer(const struct buffer *b);

/* A pool on ex.qfamily whose buffers reset one by one. */
VkCommandPool ex_create_command_pool(void);
/* N primary command buffers of POOL. */
void ex_command_buffers(VkCommandPool pool, uint32_t n, VkCommandBuffer *out);
void ex_command_buffers_of(VkCommandPool pool, VkCommandBufferLevel level, uint32_t n,
			   VkCommandBuffer *out);

#endif
