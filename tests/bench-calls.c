/*
 * bench-calls: what recording a command costs, for the capture layers'
 * per-call figure (tests/bench-layer.sh).  Records ROUNDS command buffers
 * of 250 commands of one KIND on the first device (the bench makes that
 * llvmpipe), each begun, ended and its pool reset, and prints the calling
 * thread's CPU time per command, the 250 timed alone: run it without a
 * layer and with one, and the difference is what the layer adds to a
 * call on the calling thread.  A layer's own threads (our writer and
 * compressor) are not counted: what an application's thread waits for
 * is the point, and a busy machine moves thread time less than wall
 * time.  The barrier is a global memory barrier, no buffer or image.
 *
 * KIND submit is what dominates heavy scenes instead: a host-visible
 * 16 MiB vertex buffer and 4 MiB index buffer, mapped; each round writes
 * one float of every 32-byte vertex in an eighth of the vertex buffer
 * (sparse, as glmark2's buffer scene) and 64 KiB of indices, records a
 * command buffer that binds both, submits it and waits: the CPU time on
 * the calling thread of the writes and the submit is timed, in ns per
 * round: a layer compares mapped memory at the submit (ours, only the
 * pages written where the kernel watches them, which it does where a
 * fault costs less than the compares it spares) or copies the pages its
 * SIGSEGV handler saw written (GFXReconstruct), and a watched page costs
 * a fault at its first write (both).
 *
 *   bench-calls [ROUNDS [KIND]]   KIND: set, barrier, bind, draw, mix or submit
 *   prints: KIND CALLS calls NS ns/call
 */
#define BENCH_NAME "bench-calls"
#include "bench-vk.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

enum { PER_BUFFER = 250 };

static double thread_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A buffer of SIZE bytes and USAGE in host-visible, coherent memory,
 * mapped into *P. */
static VkBuffer mapped_buffer(VkPhysicalDevice phys, VkDevice dev, VkDeviceSize size,
			      VkBufferUsageFlags usage, VkDeviceMemory *mem, void **p)
{
	VkBuffer buf = bench_buffer(phys, dev, size, usage,
				    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, mem);
	CHECK(vkMapMemory(dev, *mem, 0, VK_WHOLE_SIZE, 0, p));
	return buf;
}

/* KIND submit: ROUNDS rounds; the seconds the submits took on this thread. */
static double submits(VkPhysicalDevice phys, VkDevice dev, VkCommandPool pool, VkCommandBuffer cb,
		      int rounds)
{
	enum { VERTICES = 16 << 20, INDICES = 4 << 20, STRIDE = 32 };
	VkDeviceMemory vmem, imem;
	void *vp, *ip;
	VkBuffer vbuf = mapped_buffer(phys, dev, VERTICES, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, &vmem, &vp);
	VkBuffer ibuf = mapped_buffer(phys, dev, INDICES, VK_BUFFER_USAGE_INDEX_BUFFER_BIT, &imem, &ip);
	memset(vp, 0, VERTICES);
	memset(ip, 0, INDICES);
	VkQueue queue;
	vkGetDeviceQueue(dev, 0, 0, &queue);
	VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkFence fence;
	CHECK(vkCreateFence(dev, &fci, NULL, &fence));
	VkCommandBufferBeginInfo begin = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			    .commandBufferCount = 1, .pCommandBuffers = &cb };
	VkDeviceSize offset = 0;
	double t = 0;
	for (int i = 0; i < rounds; i++) {
		double t0 = thread_seconds();
		size_t eighth = VERTICES / 8, from = (size_t)(i % 8) * eighth;
		for (size_t at = from; at < from + eighth; at += STRIDE)
			*(float *)((char *)vp + at) = (float)i;
		memset((char *)ip + (size_t)(i % 64) * 65536, i & 0xff, 65536);
		CHECK(vkBeginCommandBuffer(cb, &begin));
		vkCmdBindVertexBuffers(cb, 0, 1, &vbuf, &offset);
		vkCmdBindIndexBuffer(cb, ibuf, 0, VK_INDEX_TYPE_UINT32);
		CHECK(vkEndCommandBuffer(cb));
		CHECK(vkQueueSubmit(queue, 1, &si, fence));
		t += thread_seconds() - t0;
		CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(dev, 1, &fence));
		CHECK(vkResetCommandPool(dev, pool, 0));
	}
	vkDestroyFence(dev, fence, NULL);
	vkDestroyBuffer(dev, vbuf, NULL);
	vkDestroyBuffer(dev, ibuf, NULL);
	vkFreeMemory(dev, vmem, NULL);
	vkFreeMemory(dev, imem, NULL);
	return t;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	const char *kind = argc > 2 ? argv[2] : "mix";
	bool mix = !strcmp(kind, "mix");
	bool set = mix || !strcmp(kind, "set"), barrier = mix || !strcmp(kind, "barrier");
	bool bind = mix || !strcmp(kind, "bind"), draw = mix || !strcmp(kind, "draw");
	bool submit = !strcmp(kind, "submit");
	if (rounds <= 0 || !(set || barrier || bind || draw || submit)) {
		fprintf(stderr, "usage: bench-calls [ROUNDS [set|barrier|bind|draw|mix|submit]]\n");
		return 2;
	}

	VkInstance instance;
	VkPhysicalDevice phys = bench_first_device(VK_API_VERSION_1_3, &instance);
	float priority = 1;
	VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					.queueCount = 1,
					.pQueuePriorities = &priority };
	VkPhysicalDeviceVulkan13Features f13 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
		.synchronization2 = VK_TRUE,
	};
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				   .pNext = &f13,
				   .queueCreateInfoCount = 1,
				   .pQueueCreateInfos = &qci };
	VkDevice dev;
	CHECK(vkCreateDevice(phys, &dci, NULL, &dev));

	/* a vertex buffer to bind, bound to memory of the first type that
	 * takes it */
	VkDeviceMemory mem;
	VkBuffer buf = bench_buffer(phys, dev, 65536, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, 0, &mem);
	VkCommandBuffer cb;
	VkCommandPool pool = bench_command_buffers(dev, 1, &cb);

	VkMemoryBarrier2 mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
				.srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT,
				.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
				.dstStageMask = VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT,
				.dstAccessMask = VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT };
	VkDependencyInfo dep = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
				 .memoryBarrierCount = 1,
				 .pMemoryBarriers = &mb };
	VkDeviceSize offset = 0;
	VkCommandBufferBeginInfo begin = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };

	long calls = 0;
	double t = 0;
	if (submit) {
		t = submits(phys, dev, pool, cb, rounds);
		calls = rounds;
		rounds = 0;
	}
	for (int i = 0; i < rounds; i++) {
		CHECK(vkBeginCommandBuffer(cb, &begin));
		double t0 = thread_seconds();
		for (int k = 0; k < PER_BUFFER; k++) {
			/* only recorded, never submitted; the draw outside a
			 * render pass and with no pipeline is invalid usage
			 * that llvmpipe records all the same */
			if (set)
				vkCmdSetDepthWriteEnable(cb, k & 1);
			if (barrier)
				vkCmdPipelineBarrier2(cb, &dep);
			if (bind)
				vkCmdBindVertexBuffers(cb, 0, 1, &buf, &offset);
			if (draw)
				vkCmdDraw(cb, 3, 1, 0, 0);
		}
		t += thread_seconds() - t0;
		calls += PER_BUFFER * (set + barrier + bind + draw);
		CHECK(vkEndCommandBuffer(cb));
		CHECK(vkResetCommandPool(dev, pool, 0));
	}
	printf("%s %ld calls %.1f ns/call\n", kind, calls, t * 1e9 / (double)calls);

	vkDestroyCommandPool(dev, pool, NULL);
	vkDestroyBuffer(dev, buf, NULL);
	vkFreeMemory(dev, mem, NULL);
	vkDestroyDevice(dev, NULL);
	vkDestroyInstance(instance, NULL);
	return 0;
}
