/*
 * scene: what vkexample draws, apart from Vulkan: the cube's vertices and
 * indices, its texture, and each frame's uniform block.  Frames are
 * deterministic: the same frame number gives the same values.
 */
#ifndef EXAMPLES_SCENE_H
#define EXAMPLES_SCENE_H

#include <stdint.h>

#define TEX_SIZE 64

/* the uniform block of the shaders (std140) */
struct frame_ubo {
	float mvp[16];
	float tint[4];
};

/* Frame FRAME's block: the cube turned by the frame number (not with
 * STILL), seen at ASPECT (width / height); tint's w is the frame number. */
void frame_ubo_fill(struct frame_ubo *u, unsigned frame, int still, float aspect);

struct vertex {
	float pos[3];
	float uv[2];
	float normal[3];
};

#define CUBE_VERTICES 24
#define CUBE_INDICES 36

/* The cube's CUBE_VERTICES vertices into V and CUBE_INDICES indices into IDX. */
void cube(struct vertex *v, uint16_t *idx);
/* The static texture, TEX_SIZE x TEX_SIZE RGBA, into P. */
void texture_pattern(unsigned char *p);

#endif
