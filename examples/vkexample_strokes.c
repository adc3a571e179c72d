/*
 * vkexample_strokes.c: --strokes N, a canvas painted over and never
 * cleared.  After frame 0 the frame's pass loads the colour image, and N
 * submits follow each frame, each drawing one triangle whose three
 * vertices the host writes just before into the next 96 bytes of a
 * 1 MiB ring, as zink's stream uploads do.  Every submit writes the
 * picture and reads a fresh host write: the setup of a late frame's cut
 * runs them all (Pingus through zink makes 380 such submits a frame).
 */
#include "vkexample.h"

#include <stdlib.h>
#include <string.h>

#define RING_SIZE ((VkDeviceSize)1 << 20)
#define STROKE_BYTES (3 * sizeof(struct vertex))

static unsigned nstrokes;
static struct buffer ring;
static void *ring_ptr;
static VkDeviceSize ring_at;
static VkCommandBuffer *cbs;	/* nstrokes a slot */
static unsigned drawn;

void strokes_create(unsigned n)
{
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = g.pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = n * FRAMES_IN_FLIGHT,
	};

	/* two frames in flight may read 2 N strokes of the ring */
	if ((VkDeviceSize)2 * n * STROKE_BYTES >= RING_SIZE)
		die("--strokes: at most %u", (unsigned)(RING_SIZE / STROKE_BYTES / 2 - 1));
	nstrokes = n;
	ring = ex_create_buffer(RING_SIZE, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
				VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	VK(vkMapMemory(ex.dev, ring.mem, 0, ring.size, 0, &ring_ptr));
	cbs = calloc(ai.commandBufferCount, sizeof(*cbs));
	if (!cbs)
		die("out of memory");
	VK(vkAllocateCommandBuffers(ex.dev, &ai, cbs));
}

/* Stroke K's triangle: somewhere in the cube's space, small, its texture
 * coordinates and place its own (a hash of K), so that every stroke
 * writes bytes the one before did not. */
static void stroke_vertices(struct vertex *v, unsigned k)
{
	uint32_t h = k * 2654435761u;
	float x = (float)(h & 0xff) / 85.0f - 1.5f;
	float y = (float)((h >> 8) & 0xff) / 85.0f - 1.5f;
	float z = (float)((h >> 16) & 0xff) / 85.0f - 1.5f;
	float s = 0.12f + (float)((h >> 24) & 0x3f) / 256.0f;
	unsigned i;

	memset(v, 0, STROKE_BYTES);
	for (i = 0; i < 3; i++) {
		v[i].pos[0] = x + (i == 1 ? s : 0.0f);
		v[i].pos[1] = y + (i == 2 ? s : 0.0f);
		v[i].pos[2] = z;
		v[i].uv[0] = (float)((h >> (3 * i)) & 0x7f) / 127.0f;
		v[i].uv[1] = (float)((h >> (3 * i + 7)) & 0x7f) / 127.0f;
		v[i].normal[2] = 1.0f;
	}
}

/* Frame FRAME's strokes, after its own submit: the last signals FENCE. */
void strokes_frame(unsigned slot, VkFence fence)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	unsigned i;

	for (i = 0; i < nstrokes; i++) {
		VkCommandBuffer cb = cbs[slot * nstrokes + i];
		VkSubmitInfo si = {
			.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
			.commandBufferCount = 1,
			.pCommandBuffers = &cb,
		};
		VkDeviceSize at;

		if (ring_at + STROKE_BYTES > RING_SIZE)
			ring_at = 0;
		at = ring_at;
		ring_at += STROKE_BYTES;
		stroke_vertices((struct vertex *)((char *)ring_ptr + at), drawn++);
		ex_flush_buffer(&ring);

		VK(vkBeginCommandBuffer(cb, &bi));
		frame_pass_begin(cb, g.load_pass);
		bind_cube(cb);
		vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, g.gfx_layout, 0, 1,
					&g.gfx_set[slot], g.ubo_dynamic, &(uint32_t){0});
		vkCmdBindVertexBuffers(cb, 0, 1, &ring.buf, &at);
		vkCmdDraw(cb, 3, 1, 0, 0);
		vkCmdEndRenderPass(cb);
		VK(vkEndCommandBuffer(cb));
		VK(vkQueueSubmit(ex.queue, 1, &si, i + 1 == nstrokes ? fence : VK_NULL_HANDLE));
	}
}

void strokes_destroy(void)
{
	if (!nstrokes)
		return;
	vkFreeCommandBuffers(ex.dev, g.pool, nstrokes * FRAMES_IN_FLIGHT, cbs);
	free(cbs);
	vkUnmapMemory(ex.dev, ring.mem);
	ex_destroy_buffer(&ring);
}
