/*
 * What the standalone Vulkan benchmarks (bench-calls.c, bench-gaps.c)
 * share: a failed call ends the program with its name, the first device,
 * a buffer bound to memory of the first type with the properties asked,
 * command buffers.  BENCH_NAME names the program in messages.
 */
#ifndef TRACEKIT_BENCH_VK_H
#define TRACEKIT_BENCH_VK_H

#include <vulkan/vulkan.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                  \
	do {                                                                      \
		VkResult r_ = (x);                                                \
		if (r_ != VK_SUCCESS) {                                           \
			fprintf(stderr, BENCH_NAME ": %s: VkResult %d\n", #x, r_); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

/* An instance asking API, and its first device. */
static inline VkPhysicalDevice bench_first_device(uint32_t api, VkInstance *inst)
{
	VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				.pApplicationName = BENCH_NAME, .apiVersion = api};
	VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				    .pApplicationInfo = &ai};
	CHECK(vkCreateInstance(&ici, NULL, inst));
	uint32_t n = 1;
	VkPhysicalDevice pd;
	VkResult res = vkEnumeratePhysicalDevices(*inst, &n, &pd);
	if ((res != VK_SUCCESS && res != VK_INCOMPLETE) || !n) {
		fprintf(stderr, BENCH_NAME ": no Vulkan device\n");
		exit(1);
	}
	return pd;
}

/* A buffer of SIZE bytes for USAGE in memory of the first type with the
 * properties WANT, in *MEM. */
static inline VkBuffer bench_buffer(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size,
				    VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
				    VkDeviceMemory *mem)
{
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
				  .usage = usage};
	VkBuffer buf;
	CHECK(vkCreateBuffer(dev, &bci, NULL, &buf));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, buf, &req);
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(pd, &mp);
	uint32_t type = 0;
	while (type < mp.memoryTypeCount && (!(req.memoryTypeBits >> type & 1) ||
					      (mp.memoryTypes[type].propertyFlags & want) != want))
		type++;
	if (type == mp.memoryTypeCount) {
		fprintf(stderr, BENCH_NAME ": no memory type with properties 0x%x for the buffer\n",
			want);
		exit(1);
	}
	VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				    .allocationSize = req.size, .memoryTypeIndex = type};
	CHECK(vkAllocateMemory(dev, &mai, NULL, mem));
	CHECK(vkBindBufferMemory(dev, buf, *mem, 0));
	return buf;
}

/* A command pool on DEV's family 0, and N primary command buffers of it
 * in CBS. */
static inline VkCommandPool bench_command_buffers(VkDevice dev, uint32_t n, VkCommandBuffer *cbs)
{
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	VkCommandPool pool;
	CHECK(vkCreateCommandPool(dev, &pci, NULL, &pool));
	VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					   .commandPool = pool,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					   .commandBufferCount = n};
	CHECK(vkAllocateCommandBuffers(dev, &cai, cbs));
	return pool;
}

#endif
