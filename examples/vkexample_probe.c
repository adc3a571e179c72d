/*
 * vkexample_probe.c: --read-pixel, a texel of each frame read back by a
 * submit of its own once the frame's is sent, and waited for, as a GL
 * program's glReadPixels goes through zink (GL-117 reads its depth
 * buffer each frame for its lens flare).  The next frame's pass clears
 * the colour image again: each frame's submit wrote what a later submit
 * read, then lost it, and a trim must not hold on to every one of them.
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

void probe_destroy(void)
{
	if (!on)
		return;
	vkDestroyFence(ex.dev, done, NULL);
	vkFreeCommandBuffers(ex.dev, g.pool, FRAMES_IN_FLIGHT, cbs);
	ex_destroy_buffer(&texel);
}
