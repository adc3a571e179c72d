/*
 * vkexample_probe.c: what a program measures of its frames.
 *
 * --read-pixel, a texel of each frame read back by a submit of its own
 * once the frame's is sent, and waited for, as a GL program's
 * glReadPixels goes through zink (GL-117 reads its depth buffer each
 * frame for its lens flare).  The next frame's pass clears the colour
 * image again: each frame's submit wrote what a later submit read, then
 * lost it, and a trim must not hold on to every one of them.
 *
 * --timestamps, each frame's GPU time as a renderer's timers take it
 * (libplacebo, which mpv draws with, writes 8 timestamps a frame): the
 * slot's two queries reset and written at the start and end of its
 * command buffer, copied there into a buffer (vkCmdCopyQueryPoolResults,
 * 64-bit, waited for, with availability), and read by the host
 * (vkGetQueryPoolResults) once the slot's fence is waited for.
 */
#include "vkexample.h"

#include <string.h>

static int on;
static struct buffer texel;
static VkCommandBuffer cbs[FRAMES_IN_FLIGHT];
static VkFence done;
static uint32_t last;

void probe_create(void)
{
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };

	on = 1;
	texel = ex_create_buffer(4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	ex_command_buffers(g.pool, FRAMES_IN_FLIGHT, cbs);
	VK(vkCreateFence(ex.dev, &fi, NULL, &done));
}

/* The texel at the middle of the frame just submitted (its pass leaves
 * the colour image in TRANSFER_SRC_OPTIMAL), read once the copy is done. */
void probe_frame(unsigned slot)
{
	VkCommandBuffer cb = cbs[slot];
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &cb,
	};
	void *p;

	if (!on)
		return;
	VK(vkBeginCommandBuffer(cb, &bi));
	copy_color_to_host(cb, texel.buf, WIDTH / 2, HEIGHT / 2, 1, 1);
	VK(vkEndCommandBuffer(cb));
	VK(vkQueueSubmit(ex.queue, 1, &si, done));
	VK(vkWaitForFences(ex.dev, 1, &done, VK_TRUE, UINT64_MAX));
	VK(vkResetFences(ex.dev, 1, &done));
	VK(vkMapMemory(ex.dev, texel.mem, 0, VK_WHOLE_SIZE, 0, &p));
	memcpy(&last, p, sizeof(last));
	vkUnmapMemory(ex.dev, texel.mem);
}

/* --timestamps */
static VkQueryPool stamps;
static struct buffer copied;
static uint64_t stamp_ns, stamp_frames;
static float stamp_period;

void stamps_create(void)
{
	VkQueryPoolCreateInfo qi = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		.queryCount = 2 * FRAMES_IN_FLIGHT,
	};
	VkQueueFamilyProperties qf[16];
	VkPhysicalDeviceProperties props;
	uint32_t n = 16;

	vkGetPhysicalDeviceQueueFamilyProperties(ex.gpu, &n, qf);
	if (ex.qfamily >= n || !qf[ex.qfamily].timestampValidBits)
		die("--timestamps: queue family %u writes no timestamps", ex.qfamily);
	vkGetPhysicalDeviceProperties(ex.gpu, &props);
	stamp_period = props.limits.timestampPeriod;
	VK(vkCreateQueryPool(ex.dev, &qi, NULL, &stamps));
	copied = ex_create_buffer(FRAMES_IN_FLIGHT * 2 * 16, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
}

void stamps_begin(VkCommandBuffer cb, unsigned slot)
{
	if (!stamps)
		return;
	vkCmdResetQueryPool(cb, stamps, 2 * slot, 2);
	vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, stamps, 2 * slot);
}

/* (outside a render pass: the copy) */
void stamps_end(VkCommandBuffer cb, unsigned slot)
{
	if (!stamps)
		return;
	vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, 2 * slot + 1);
	vkCmdCopyQueryPoolResults(cb, stamps, 2 * slot, 2, copied.buf, slot * 32, 16,
				  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
				  VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
}

/* The slot's last frame, done (its fence waited for): its GPU time. */
void stamps_frame(unsigned slot, unsigned frame)
{
	uint64_t t[2];

	if (!stamps || frame < FRAMES_IN_FLIGHT)
		return;
	VK(vkGetQueryPoolResults(ex.dev, stamps, 2 * slot, 2, sizeof(t), t, sizeof(t[0]),
				 VK_QUERY_RESULT_64_BIT));
	stamp_ns += (uint64_t)((double)(t[1] - t[0]) * stamp_period);
	stamp_frames++;
}

void stamps_destroy(void)
{
	if (!stamps)
		return;
	if (stamp_frames)
		logv("GPU time a frame: %.1f us (%llu frames, timestamps)",
		     (double)stamp_ns / 1e3 / (double)stamp_frames, (unsigned long long)stamp_frames);
	vkDestroyQueryPool(ex.dev, stamps, NULL);
	ex_destroy_buffer(&copied);
}

void probe_destroy(void)
{
	if (!on)
		return;
	vkDestroyFence(ex.dev, done, NULL);
	vkFreeCommandBuffers(ex.dev, g.pool, FRAMES_IN_FLIGHT, cbs);
	ex_destroy_buffer(&texel);
}
