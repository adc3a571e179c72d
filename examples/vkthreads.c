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
 * --present gives each thread an X window (window.c) of its own: each
 * frame, the same submit clears the acquired image to a colour of the
 * thread and frame (present_color), and the thread presents it once the
 * readback is checked.  With a device each, threads present at once on
 * queues of their own, as Qt Quick's windows do.
 *
 * --idle-before-device MS sleeps that long between the instance and the
 * first device (a program that makes its instance, then loads);
 * --wait-for FILE waits there until FILE exists instead (the tests order
 * two processes so, whatever the machine's load).
 *
 *   vkthreads [--threads N] [--frames F] [--devices D] [--present]
 *             [--idle-before-device MS] [--wait-for FILE] [--gpu N]
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
#include <time.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "common.h"
#include "window.h"

#define SLICE 4096u /* bytes a thread writes a frame */
#define MAX_THREADS 16
#define MAX_DEVICES 4

static pthread_barrier_t frame_start;
static uint32_t nthreads = 2, nframes = 30, ndevices = 1;
static int present;

/* A device, its queue (externally synchronized: under lock), and the
 * shared buffer of the threads on it. */
struct device {
	VkDevice dev;
	VkQueue queue;
	pthread_mutex_t lock;
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

/* --present: thread T's colour in frame F, one of its own for each of 256
 * frames (a screenshot of one frame shows which thread's frame it is). */
static VkClearColorValue present_color(uint32_t t, uint32_t f)
{
	VkClearColorValue c = { .float32 = { (float)(t % 4 + 1) / 4.0f, (float)(f % 16) / 15.0f,
					     (float)(f / 16 % 16) / 15.0f, 1.0f } };
	return c;
}

/* The acquired image INDEX moved to TRANSFER_DST, cleared to COLOR, and
 * moved to PRESENT_SRC, into CB. */
static void record_clear(VkCommandBuffer cb, uint32_t index, VkClearColorValue color)
{
	VkImageSubresourceRange all = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
	VkImageMemoryBarrier ib = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
		.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
		.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = win.images[index],
		.subresourceRange = all,
	};
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
			     0, NULL, 0, NULL, 1, &ib);
	vkCmdClearColorImage(cb, ib.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1, &all);
	ib.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
	ib.dstAccessMask = 0;
	ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
	ib.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
			     0, 0, NULL, 0, NULL, 1, &ib);
}

static void *worker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	struct device *d = &devices[t % ndevices];
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
	if (present) {
		char title[32];
		snprintf(title, sizeof(title), "vkthreads %u", t);
		win_open((VkExtent2D){ 64, 48 }, title);
		win_create_surface();
		if (!win_can_present(ex.qfamily))
			die("thread %u: the queue family cannot present to its window", t);
		win_create_swapchain(1);
	}
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
		uint32_t index = 0;
		if (present) {
			index = win_acquire(dev, 0);
			record_clear(cb, index, present_color(t, f));
		}
		VK(vkEndCommandBuffer(cb));
		VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
		VkSubmitInfo si = {
			.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			.waitSemaphoreCount = present ? 1 : 0,
			.pWaitSemaphores = win.acquired,
			.pWaitDstStageMask = &stage,
			.commandBufferCount = 1,
			.pCommandBuffers = &cb,
			.signalSemaphoreCount = present ? 1 : 0,
			.pSignalSemaphores = present ? &win.rendered[index] : NULL,
		};
		pthread_mutex_lock(&d->lock);
		VkResult r = vkQueueSubmit(d->queue, 1, &si, fence);
		pthread_mutex_unlock(&d->lock);
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
		if (present) {
			pthread_mutex_lock(&d->lock);
			win_present(d->queue, index);
			pthread_mutex_unlock(&d->lock);
		}
	}
	setup_on(d);
	if (present) {
		VK(vkQueueWaitIdle(d->queue));
		win_destroy_swapchain();
		win_destroy_surface();
		win_close();
	}
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
	uint32_t gpu = 0, idle_ms = 0;
	const char *wait_for = NULL;

	ex.prog = "vkthreads";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			nthreads = number("--threads", argv[++i], 1, MAX_THREADS);
		else if (!strcmp(argv[i], "--frames"))
			nframes = number("--frames", argv[++i], 1, 1000000);
		else if (!strcmp(argv[i], "--devices"))
			ndevices = number("--devices", argv[++i], 1, MAX_DEVICES);
		else if (!strcmp(argv[i], "--present"))
			present = 1;
		else if (!strcmp(argv[i], "--idle-before-device"))
			idle_ms = number("--idle-before-device", argv[++i], 0, 600000);
		else if (!strcmp(argv[i], "--wait-for") && i + 1 < argc)
			wait_for = argv[++i];
		else if (!strcmp(argv[i], "--gpu"))
			gpu = number("--gpu", argv[++i], 0, 63);
		else {
			fprintf(stderr, "usage: vkthreads [--threads N] [--frames F] [--devices D] "
				"[--present] [--idle-before-device MS] [--wait-for FILE] [--gpu N]\n");
			return 2;
		}
	}
	const char *iexts[2], *dexts[] = { VK_KHR_SWAPCHAIN_EXTENSION_NAME };
	ex_create_instance(NULL, 0, iexts, present ? win_instance_extensions(iexts) : 0, NULL);
	ex_pick_gpu(gpu);
	uint32_t family = ex_queue_family(transfers);
	if (family == UINT32_MAX)
		die("no queue family does transfers");
	struct timespec idle = { idle_ms / 1000, (long)(idle_ms % 1000) * 1000000 };
	while (nanosleep(&idle, &idle) != 0)
		;
	for (struct timespec tick = { 0, 20000000 }; wait_for && access(wait_for, F_OK) != 0;)
		nanosleep(&tick, NULL);
	for (uint32_t i = 0; i < ndevices; i++) {
		struct device *d = &devices[i];
		ex_create_device(family, dexts, present ? 1 : 0, NULL);
		d->dev = ex.dev;
		d->queue = ex.queue;
		pthread_mutex_init(&d->lock, NULL);
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
