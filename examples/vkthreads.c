/*
 * vkthreads: a headless Vulkan program whose threads record and submit at
 * the same time, for tracekit's capture of multithreaded programs.
 *
 * Each of --threads N threads (default 2) has its own command pool,
 * command buffer, fence, and slice of one buffer that stays mapped for the
 * whole run.  For each of --frames F frames, a thread
 *   - writes its slice on the host (a pattern from the thread and frame),
 *   - records a copy of that slice into a device buffer of its own, a fill
 *     of one word of it, and a copy back into a readback buffer of its own,
 *   - submits on the one queue (under a mutex: a queue is externally
 *     synchronized) with its fence, and waits for it,
 *   - and checks the readback bytes against what it wrote.
 * All threads start each frame together (a barrier), so their recording
 * and submits interleave.  Frames are deterministic.
 *
 *   vkthreads [--threads N] [--frames F] [--gpu N]
 *
 * Prints "vkthreads: N threads x F frames, every readback as written" and
 * exits 0; a wrong readback or a Vulkan error prints one line and exits 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#define SLICE 4096u /* bytes a thread writes a frame */
#define MAX_THREADS 16

static VkDevice dev;
static VkQueue queue;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t frame_start;
static uint32_t nthreads = 2, nframes = 30;
static VkPhysicalDeviceMemoryProperties memprops;
static uint32_t queue_family;
static uint8_t *shared_map;  /* every thread's slice of the shared buffer */
static VkBuffer shared_buf;

static void check(VkResult r, const char *what)
{
	if (r != VK_SUCCESS) {
		fprintf(stderr, "vkthreads: %s failed: %d\n", what, r);
		exit(1);
	}
}

static uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want)
{
	for (uint32_t i = 0; i < memprops.memoryTypeCount; i++)
		if ((bits & (1u << i)) && (memprops.memoryTypes[i].propertyFlags & want) == want)
			return i;
	fprintf(stderr, "vkthreads: no memory type with flags 0x%x\n", want);
	exit(1);
}

/* A buffer of SIZE bytes with memory of its own of the flags WANT. */
static VkBuffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage,
			    VkMemoryPropertyFlags want, VkDeviceMemory *mem)
{
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = usage,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkBuffer b;
	check(vkCreateBuffer(dev, &bi, NULL, &b), "vkCreateBuffer");
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, b, &req);
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = memory_type(req.memoryTypeBits, want),
	};
	check(vkAllocateMemory(dev, &ai, NULL, mem), "vkAllocateMemory");
	check(vkBindBufferMemory(dev, b, *mem, 0), "vkBindBufferMemory");
	return b;
}

static uint32_t pattern(uint32_t thread, uint32_t frame, uint32_t word)
{
	return (thread + 1) * 0x01000193u ^ frame * 0x9e3779b9u ^ word * 2654435761u;
}

/* The word vkCmdFillBuffer writes over word 7 of the copy. */
static uint32_t fill_word(uint32_t thread, uint32_t frame)
{
	return 0xf111ed00u | (thread << 4) | (frame & 0xf);
}

static void *worker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	VkCommandPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = queue_family,
	};
	VkCommandPool pool;
	check(vkCreateCommandPool(dev, &pi, NULL, &pool), "vkCreateCommandPool");
	VkCommandBufferAllocateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkCommandBuffer cb;
	check(vkAllocateCommandBuffers(dev, &ci, &cb), "vkAllocateCommandBuffers");
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkFence fence;
	check(vkCreateFence(dev, &fi, NULL, &fence), "vkCreateFence");
	VkDeviceMemory dmem, rmem;
	VkBuffer device = make_buffer(SLICE, VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
				      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &dmem);
	VkBuffer readback = make_buffer(SLICE, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
					VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, &rmem);
	uint32_t *back;
	check(vkMapMemory(dev, rmem, 0, VK_WHOLE_SIZE, 0, (void **)&back), "vkMapMemory");
	uint32_t *mine = (uint32_t *)(shared_map + (size_t)t * SLICE);

	for (uint32_t f = 0; f < nframes; f++) {
		pthread_barrier_wait(&frame_start);
		for (uint32_t w = 0; w < SLICE / 4; w++)
			mine[w] = pattern(t, f, w);
		VkCommandBufferBeginInfo bi = {
			.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
			.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
		};
		check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
		VkBufferCopy in = { (VkDeviceSize)t * SLICE, 0, SLICE };
		vkCmdCopyBuffer(cb, shared_buf, device, 1, &in);
		VkMemoryBarrier mb = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		};
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     0, 1, &mb, 0, NULL, 0, NULL);
		vkCmdFillBuffer(cb, device, 7 * 4, 4, fill_word(t, f));
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     0, 1, &mb, 0, NULL, 0, NULL);
		VkBufferCopy out = { 0, 0, SLICE };
		vkCmdCopyBuffer(cb, device, readback, 1, &out);
		mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
				     0, 1, &mb, 0, NULL, 0, NULL);
		check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
		VkSubmitInfo si = {
			.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			.commandBufferCount = 1,
			.pCommandBuffers = &cb,
		};
		pthread_mutex_lock(&queue_lock);
		VkResult r = vkQueueSubmit(queue, 1, &si, fence);
		pthread_mutex_unlock(&queue_lock);
		check(r, "vkQueueSubmit");
		check(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
		check(vkResetFences(dev, 1, &fence), "vkResetFences");
		for (uint32_t w = 0; w < SLICE / 4; w++) {
			uint32_t want = w == 7 ? fill_word(t, f) : pattern(t, f, w);
			if (back[w] != want) {
				fprintf(stderr, "vkthreads: thread %u frame %u word %u: read 0x%08x, "
					"wrote 0x%08x\n", t, f, w, back[w], want);
				exit(1);
			}
		}
	}
	vkUnmapMemory(dev, rmem);
	vkDestroyBuffer(dev, device, NULL);
	vkDestroyBuffer(dev, readback, NULL);
	vkFreeMemory(dev, dmem, NULL);
	vkFreeMemory(dev, rmem, NULL);
	vkDestroyFence(dev, fence, NULL);
	vkDestroyCommandPool(dev, pool, NULL);
	return NULL;
}

static uint32_t number(const char *opt, const char *s, uint32_t lo, uint32_t hi)
{
	char *end;
	unsigned long v = s ? strtoul(s, &end, 10) : 0;
	if (!s || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "vkthreads: %s wants a number from %u to %u\n", opt, lo, hi);
		exit(2);
	}
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	uint32_t gpu = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			nthreads = number("--threads", argv[++i], 1, MAX_THREADS);
		else if (!strcmp(argv[i], "--frames"))
			nframes = number("--frames", argv[++i], 1, 1000000);
		else if (!strcmp(argv[i], "--gpu"))
			gpu = number("--gpu", argv[++i], 0, 63);
		else {
			fprintf(stderr, "usage: vkthreads [--threads N] [--frames F] [--gpu N]\n");
			return 2;
		}
	}
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "vkthreads",
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo ii = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	VkInstance inst;
	check(vkCreateInstance(&ii, NULL, &inst), "vkCreateInstance");
	VkPhysicalDevice phys[64];
	uint32_t nphys = 64;
	check(vkEnumeratePhysicalDevices(inst, &nphys, phys), "vkEnumeratePhysicalDevices");
	if (gpu >= nphys) {
		fprintf(stderr, "vkthreads: --gpu %u: there are %u devices\n", gpu, nphys);
		return 1;
	}
	vkGetPhysicalDeviceMemoryProperties(phys[gpu], &memprops);
	VkQueueFamilyProperties qf[16];
	uint32_t nqf = 16;
	vkGetPhysicalDeviceQueueFamilyProperties(phys[gpu], &nqf, qf);
	for (queue_family = 0; queue_family < nqf; queue_family++)
		if (qf[queue_family].queueFlags & VK_QUEUE_TRANSFER_BIT ||
		    qf[queue_family].queueFlags & VK_QUEUE_GRAPHICS_BIT)
			break;
	if (queue_family == nqf) {
		fprintf(stderr, "vkthreads: no queue family does transfers\n");
		return 1;
	}
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qi = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = queue_family,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	VkDeviceCreateInfo di = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qi,
	};
	check(vkCreateDevice(phys[gpu], &di, NULL, &dev), "vkCreateDevice");
	vkGetDeviceQueue(dev, queue_family, 0, &queue);
	VkDeviceMemory smem;
	shared_buf = make_buffer((VkDeviceSize)nthreads * SLICE, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
				 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, &smem);
	check(vkMapMemory(dev, smem, 0, VK_WHOLE_SIZE, 0, (void **)&shared_map), "vkMapMemory");

	pthread_t th[MAX_THREADS];
	pthread_barrier_init(&frame_start, NULL, nthreads);
	for (uint32_t t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t)) {
			fprintf(stderr, "vkthreads: cannot start thread %u\n", t);
			return 1;
		}
	for (uint32_t t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&frame_start);

	vkUnmapMemory(dev, smem);
	vkDestroyBuffer(dev, shared_buf, NULL);
	vkFreeMemory(dev, smem, NULL);
	vkDestroyDevice(dev, NULL);
	vkDestroyInstance(inst, NULL);
	printf("vkthreads: %u threads x %u frames, every readback as written\n", nthreads, nframes);
	return 0;
}
