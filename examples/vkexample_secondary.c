/*
 * vkexample_secondary.c: --secondary, the cube's draw recorded each frame
 * into a secondary command buffer of the frame's slot and executed in the
 * render pass, the primary begun without ONE_TIME_SUBMIT: the way Qt
 * Quick's scene graph records its passes.  A replay that begins the
 * primaries with SIMULTANEOUS_USE (running ahead, one may be submitted
 * again while pending) must begin the secondaries so too, or the
 * validation layer warns at each vkCmdExecuteCommands.
 */
#include "vkexample.h"

static VkCommandBuffer sec[FRAMES_IN_FLIGHT];
static int on;

void secondary_create(void)
{
	ex_command_buffers_of(g.pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, FRAMES_IN_FLIGHT, sec);
	on = 1;
}

int secondary_on(void)
{
	return on;
}

void secondary_draw(VkCommandBuffer cb, VkRenderPass pass, unsigned slot, int first)
{
	VkCommandBufferInheritanceInfo ii = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
		.renderPass = pass,
		.subpass = 0,
		.framebuffer = g.framebuffer,
	};
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
		.pInheritanceInfo = &ii,
	};

	VK(vkBeginCommandBuffer(sec[slot], &bi));
	draw_cube(sec[slot], slot, first);
	VK(vkEndCommandBuffer(sec[slot]));
	vkCmdExecuteCommands(cb, 1, &sec[slot]);
}

void secondary_destroy(void)
{
	if (on)
		vkFreeCommandBuffers(ex.dev, g.pool, FRAMES_IN_FLIGHT, sec);
	on = 0;
}
