/*
 * common: see common.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ex_vk ex;

/* ------------------------------------------------------------------ */
/* errors */

static const char *result_name(VkResult r)
{
	switch (r) {
#define R(x) case x: return #x;
	R(VK_SUCCESS)
	R(VK_NOT_READY)
	R(VK_TIMEOUT)
	R(VK_EVENT_SET)
	R(VK_EVENT_RESET)
	R(VK_INCOMPLETE)
	R(VK_ERROR_OUT_OF_HOST_MEMORY)
	R(VK_ERROR_OUT_OF_DEVICE_MEMORY)
	R(VK_ERROR_INITIALIZATION_FAILED)
	R(VK_ERROR_DEVICE_LOST)
	R(VK_ERROR_MEMORY_MAP_FAILED)
	R(VK_ERROR_LAYER_NOT_PRESENT)
	R(VK_ERROR_EXTENSION_NOT_PRESENT)
	R(VK_ERROR_FEATURE_NOT_PRESENT)
	R(VK_ERROR_INCOMPATIBLE_DRIVER)
	R(VK_ERROR_TOO_MANY_OBJECTS)
	R(VK_ERROR_FORMAT_NOT_SUPPORTED)
	R(VK_ERROR_FRAGMENTED_POOL)
	R(VK_ERROR_UNKNOWN)
	R(VK_ERROR_OUT_OF_POOL_MEMORY)
	R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
	R(VK_ERROR_FRAGMENTATION)
	R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
	R(VK_PIPELINE_COMPILE_REQUIRED)
	R(VK_ERROR_VALIDATION_FAILED_EXT)
	R(VK_ERROR_INVALID_SHADER_NV)
	R(VK_ERROR_NOT_PERMITTED_KHR)
	R(VK_SUBOPTIMAL_KHR)
	R(VK_ERROR_OUT_OF_DATE_KHR)
	R(VK_ERROR_SURFACE_LOST_KHR)
	R(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
#undef R
	default: return "unknown VkResult";
	}
}

void die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one write: vkthreads' threads may fail at once */
	fprintf(stderr, "%s: %s\n", ex.prog, msg);
	exit(1);
}

void vk_check(VkResult r, const char *expr, int line)
{
	if (r == VK_SUCCESS)
		return;
	fflush(stdout);
	fprintf(stderr, "%s: %.*s failed: %s (%d) at line %d\n", ex.prog,
		(int)strcspn(expr, "("), expr, result_name(r), (int)r, line);
	exit(1);
}

void logv(const char *fmt, ...)
{
	va_list ap;
	if (!ex.log)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* the instance and the device */

void ex_create_instance(const char *const *layers, uint32_t nlayers, const char *const *exts,
			uint32_t nexts, const void *pnext)
{
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = ex.prog,
		.applicationVersion = 1,
		.pEngineName = "tracekit",
		.engineVersion = 1,
		.apiVersion = ex.api ? ex.api : VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pNext = pnext,
		.pApplicationInfo = &app,
		.enabledLayerCount = nlayers,
		.ppEnabledLayerNames = nlayers ? layers : NULL,
		.enabledExtensionCount = nexts,
		.ppEnabledExtensionNames = nexts ? exts : NULL,
	};

	logv("vkCreateInstance apiVersion=%u enabledLayerCount=%u enabledExtensionCount=%u",
	     app.apiVersion, ci.enabledLayerCount, ci.enabledExtensionCount);
	VK(vkCreateInstance(&ci, NULL, &ex.instance));
}

void ex_pick_gpu(unsigned n)
{
	uint32_t count = 0;
	VkPhysicalDevice *gpus;

	VK(vkEnumeratePhysicalDevices(ex.instance, &count, NULL));
	if (count == 0)
		die("no Vulkan device (is mesa-vulkan-drivers installed?)");
	if (n >= count)
		die("--gpu %u: there are only %u Vulkan devices", n, count);
	gpus = calloc(count, sizeof(*gpus));
	if (!gpus)
		die("out of memory");
	VK(vkEnumeratePhysicalDevices(ex.instance, &count, gpus));
	ex.gpu = gpus[n];
	free(gpus);
	vkGetPhysicalDeviceProperties(ex.gpu, &ex.props);
	vkGetPhysicalDeviceMemoryProperties(ex.gpu, &ex.memprops);
}

uint32_t ex_queue_family(int (*fits)(uint32_t family, const VkQueueFamilyProperties *props))
{
	uint32_t n = 0, i;
	VkQueueFamilyProperties *qf;

	vkGetPhysicalDeviceQueueFamilyProperties(ex.gpu, &n, NULL);
	qf = calloc(n ? n : 1, sizeof(*qf));
	if (!qf)
		die("out of memory");
	vkGetPhysicalDeviceQueueFamilyProperties(ex.gpu, &n, qf);
	for (i = 0; i < n; i++)
		if (fits(i, &qf[i]))
			break;
	free(qf);
	return i < n ? i : UINT32_MAX;
}

void ex_create_device(uint32_t family, const char *const *exts, uint32_t nexts,
		      const void *pnext)
{
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qi = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = family,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	VkDeviceCreateInfo di = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = pnext,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qi,
		.enabledExtensionCount = nexts,
		.ppEnabledExtensionNames = nexts ? exts : NULL,
	};

	logv("vkCreateDevice queueFamilyIndex=%u queueCount=%u enabledExtensionCount=%u",
	     qi.queueFamilyIndex, qi.queueCount, di.enabledExtensionCount);
	VK(vkCreateDevice(ex.gpu, &di, NULL, &ex.dev));
	ex.qfamily = family;
	vkGetDeviceQueue(ex.dev, family, 0, &ex.queue);
}

/* ------------------------------------------------------------------ */
/* memory, buffers, command buffers */

uint32_t ex_find_memory(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer)
{
	uint32_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		VkMemoryPropertyFlags need = pass == 0 ? want | prefer : want;
		for (i = 0; i < ex.memprops.memoryTypeCount; i++)
			if ((bits & (1u << i)) &&
			    (ex.memprops.memoryTypes[i].propertyFlags & need) == need)
				return i;
	}
	die("no memory type with properties 0x%x for type bits 0x%x", want, bits);
	return 0;
}

VkDeviceMemory ex_allocate(VkMemoryRequirements req, VkMemoryPropertyFlags want,
			   VkMemoryPropertyFlags prefer, int *coherent)
{
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = ex_find_memory(req.memoryTypeBits, want, prefer),
	};
	VkDeviceMemory mem;

	logv("vkAllocateMemory allocationSize=%llu memoryTypeIndex=%u",
	     (unsigned long long)ai.allocationSize, ai.memoryTypeIndex);
	VK(vkAllocateMemory(ex.dev, &ai, NULL, &mem));
	if (coherent)
		*coherent = !!(ex.memprops.memoryTypes[ai.memoryTypeIndex].propertyFlags &
			       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	return mem;
}

struct buffer ex_create_buffer(VkDeviceSize size, VkBufferUsageFlags usage,
			       VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer)
{
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = usage,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryRequirements req;
	struct buffer b = { .size = size };

	logv("vkCreateBuffer size=%llu usage=0x%x", (unsigned long long)bi.size, bi.usage);
	VK(vkCreateBuffer(ex.dev, &bi, NULL, &b.buf));
	vkGetBufferMemoryRequirements(ex.dev, b.buf, &req);
	b.mem = ex_allocate(req, want, prefer, &b.coherent);
	VK(vkBindBufferMemory(ex.dev, b.buf, b.mem, 0));
	return b;
}

void ex_destroy_buffer(struct buffer *b)
{
	vkDestroyBuffer(ex.dev, b->buf, NULL);
	vkFreeMemory(ex.dev, b->mem, NULL);
	memset(b, 0, sizeof(*b));
}

void ex_flush_buffer(const struct buffer *b)
{
	VkMappedMemoryRange r = {
		.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
		.memory = b->mem,
		.size = VK_WHOLE_SIZE,
	};

	if (!b->coherent)
		VK(vkFlushMappedMemoryRanges(ex.dev, 1, &r));
}

VkCommandPool ex_create_command_pool(void)
{
	VkCommandPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = ex.qfamily,
	};
	VkCommandPool pool;

	VK(vkCreateCommandPool(ex.dev, &pi, NULL, &pool));
	return pool;
}

void ex_command_buffers_of(VkCommandPool pool, VkCommandBufferLevel level, uint32_t n,
			   VkCommandBuffer *out)
{
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = pool,
		.level = level,
		.commandBufferCount = n,
	};

	VK(vkAllocateCommandBuffers(ex.dev, &ai, out));
}

void ex_command_buffers(VkCommandPool pool, uint32_t n, VkCommandBuffer *out)
{
	ex_command_buffers_of(pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, n, out);
}
