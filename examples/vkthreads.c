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
 * --devices D makes D devices of the physical device, alive at once, each
 * with its queue and shared buffer; thread t works on device t % D.
 *
 *   vkthreads [--threads N] [--frames F] [--devices D] [--gpu N]
 *
 * Prints "vkthreads: N threads x F frames, every readback as written"
 * ("... on D devices, ..." with --devices) and exits 0; a wrong readback
 * or a Vulkan error prints one line and exits 1.
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

#include "common.h"

#define SLICE 4096u /* bytes a thread writes a frame */
#define MAX_THREADS 16
#define MAX_DEVICES 4

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t frame_start;
static uint32_t nthreads = 2, nframes = 30, ndevices = 1;

/* A device, its queue, and the shared buffer of the threads on it. */
struct device {
	VkDevice dev;
	VkQueue queue;
	struct buffer shared;
	uint8_t *shared_map;  /* every thread's slice of the shared buffer */
};
static struct device devices[MAX_DEVICES];

/* common.c's helpers work on ex.dev: a thread sets its objects up, and
 * takes them down, on its device under this lock. */
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

static void setup_on(const struct device *d)
{
	pthread_mutex_lock(&setup_lock);
	ex.dev = d->dev;
	ex.queue = d->queue;
}

static void setup_done(void)
{
	pthread_mutex_unlock(&setup_lock);
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
	const struct device *d = &devices[t % ndevices];
	VkDevice dev = d->dev;
	setup_on(d);
	VkCommandPool pool = ex_create_command_pool();
	VkCommandBuffer cb;
	ex_command_buffers(pool, 1, &cb);
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkFence fence;
	VK(vkCreateFence(dev, &fi, NULL, &fence));
	struct buffer device = ex_create_buffer(SLICE, VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
						VK_BUFFER_USAGE_TRANSFER_DST_BIT,
						VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
	struct buffer readback = ex_create_buffer(SLICE, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
						  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
						  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
	uint32_t *back;
	VK(vkMapMemory(dev, readback.mem, 0, VK_WHOLE_SIZE, 0, (void **)&back));
	setup_done();
	uint32_t *mine = (uint32_t *)(d->shared_map + (size_t)t * SLICE);

	for (uint32_t f = 0; f < nframes; f++) {
		pthread_barrier_wait(&frame_start);
		for (uint32_t w = 0; w < SLICE / 4; w++)
			mine[w] = pattern(t, f, w);
		VkCommandBufferBeginInfo bi = {
			.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
			.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
		};
		VK(vkBeginCommandBuffer(cb, &bi));
		VkBufferCopy in = { (VkDeviceSize)t * SLICE, 0, SLICE };
		vkCmdCopyBuffer(cb, d->shared.buf, device.buf, 1, &in);
		VkMemoryBarrier mb = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		};
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     0, 1, &mb, 0, NULL, 0, NULL);
		vkCmdFillBuffer(cb, device.buf, 7 * 4, 4, fill_word(t, f));
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     0, 1, &mb, 0, NULL, 0, NULL);
		VkBufferCopy out = { 0, 0, SLICE };
		vkCmdCopyBuffer(cb, device.buf, readback.buf, 1, &out);
		mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
				     0, 1, &mb, 0, NULL, 0, NULL);
		VK(vkEndCommandBuffer(cb));
		VkSubmitInfo si = {
			.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			.commandBufferCount = 1,
			.pCommandBuffers = &cb,
		};
		pthread_mutex_lock(&queue_lock);
		VkResult r = vkQueueSubmit(d->queue, 1, &si, fence);
		pthread_mutex_unlock(&queue_lock);
		vk_check(r, "vkQueueSubmit", __LINE__);
		VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
		VK(vkResetFences(dev, 1, &fence));
		for (uint32_t w = 0; w < SLICE / 4; w++) {
			uint32_t want = w == 7 ? fill_word(t, f) : pattern(t, f, w);
			if (back[w] != want) {
				fprintf(stderr, "vkthreads: thread %u frame %u word %u: read 0x%08x, "
					"wrote 0x%08x\n", t, f, w, back[w], want);
				exit(1);
			}
		}
	}
	setup_on(d);
	vkUnmapMemory(dev, readback.mem);
	ex_destroy_buffer(&device);
	ex_destroy_buffer(&readback);
	vkDestroyFence(dev, fence, NULL);
	vkDestroyCommandPool(dev, pool, NULL);
	setup_done();
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

/* A family that copies (graphics implies transfers). */
static int transfers(uint32_t family, const VkQueueFamilyProperties *qf)
{
	(void)family;
	return (qf->queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT)) != 0;
}

int main(int argc, char **argv)
{
	uint32_t gpu = 0;

	ex.prog = "vkthreads";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			nthreads = number("--threads", argv[++i], 1, MAX_THREADS);
		else if (!strcmp(argv[i], "--frames"))
			nframes = number("--frames", argv[++i], 1, 1000000);
		else if (!strcmp(argv[i], "--devices"))
			ndevices = number("--devices", argv[++i], 1, MAX_DEVICES);
		else if (!strcmp(argv[i], "--gpu"))
			gpu = number("--gpu", argv[++i], 0, 63);
		else {
			fprintf(stderr, "usage: vkthreads [--threads N] [--frames F] [--devices D] "
				"[--gpu N]\n");
			return 2;
		}
	}
	ex_create_instance(NULL, 0, NULL, 0, NULL);
	ex_pick_gpu(gpu);
	uint32_t family = ex_queue_family(transfers);
	if (family == UINT32_MAX)
		die("no queue family does transfers");
	for (uint32_t i = 0; i < ndevices; i++) {
		struct device *d = &devices[i];
		ex_create_device(family, NULL, 0, NULL);
		d->dev = ex.dev;
		d->queue = ex.queue;
		d->shared = ex_create_buffer((VkDeviceSize)nthreads * SLICE,
					     VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
					     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
		VK(vkMapMemory(d->dev, d->shared.mem, 0, VK_WHOLE_SIZE, 0, (void **)&d->shared_map));
	}

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

	for (uint32_t i = 0; i < ndevices; i++) {
		struct device *d = &devices[i];
		ex.dev = d->dev;
		vkUnmapMemory(d->dev, d->shared.mem);
		ex_destroy_buffer(&d->shared);
		vkDestroyDevice(d->dev, NULL);
	}
	vkDestroyInstance(ex.instance, NULL);
	if (ndevices > 1)
		printf("vkthreads: %u threads x %u frames on %u devices, every readback as written\n",
		       nthreads, nframes, ndevices);
	else
		printf("vkthreads: %u threads x %u frames, every readback as written\n", nthreads,
		       nframes);
	return 0;
}
