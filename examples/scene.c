/*
 * scene: what vkexample draws, apart from Vulkan (scene.h): the cube, its
 * texture, and each frame's uniform block.
 */
#include <math.h>
#include <string.h>

#include "scene.h"

/* ------------------------------------------------------------------ */
/* matrices, column-major as GLSL wants them */

typedef struct {
	float m[16];
} mat4;

static mat4 mat_identity(void)
{
	mat4 r = { { 0 } };
	r.m[0] = r.m[5] = r.m[10] = r.m[15] = 1.0f;
	return r;
}

static mat4 mat_mul(mat4 a, mat4 b)
{
	mat4 r;
	int c, row, k;

	for (c = 0; c < 4; c++)
		for (row = 0; row < 4; row++) {
			float s = 0.0f;
			for (k = 0; k < 4; k++)
				s += a.m[k * 4 + row] * b.m[c * 4 + k];
			r.m[c * 4 + row] = s;
		}
	return r;
}

static mat4 mat_rot_x(float a)
{
	mat4 r = mat_identity();
	float c = cosf(a), s = sinf(a);
	r.m[5] = c;
	r.m[6] = s;
	r.m[9] = -s;
	r.m[10] = c;
	return r;
}

static mat4 mat_rot_y(float a)
{
	mat4 r = mat_identity();
	float c = cosf(a), s = sinf(a);
	r.m[0] = c;
	r.m[2] = -s;
	r.m[8] = s;
	r.m[10] = c;
	return r;
}

static mat4 mat_translate(float x, float y, float z)
{
	mat4 r = mat_identity();
	r.m[12] = x;
	r.m[13] = y;
	r.m[14] = z;
	return r;
}

/* right-handed view space, Vulkan clip space: y down, depth 0..1 */
static mat4 mat_perspective(float fovy, float aspect, float zn, float zf)
{
	mat4 r = { { 0 } };
	float f = 1.0f / tanf(fovy / 2.0f);
	r.m[0] = f / aspect;
	r.m[5] = -f;
	r.m[10] = zf / (zn - zf);
	r.m[11] = -1.0f;
	r.m[14] = zn * zf / (zn - zf);
	return r;
}

void frame_ubo_fill(struct frame_ubo *u, unsigned frame, int still, float aspect)
{
	float t = (float)frame, a = still ? 0.0f : t;
	mat4 model = mat_mul(mat_rot_y(0.35f * a + 0.6f), mat_rot_x(0.23f * a + 0.45f));
	mat4 view = mat_translate(0.0f, 0.0f, -4.2f);
	mat4 proj = mat_perspective(1.0471976f, aspect, 0.1f, 20.0f);
	mat4 mvp = mat_mul(proj, mat_mul(view, model));

	memcpy(u->mvp, mvp.m, sizeof(u->mvp));
	u->tint[0] = 1.0f;
	u->tint[1] = 1.0f;
	u->tint[2] = 1.0f;
	u->tint[3] = t;
}

/* ------------------------------------------------------------------ */
/* geometry: a cube, 4 vertices per face */

void cube(struct vertex *v, uint16_t *idx)
{
	/* per face: normal, then the axes along u and v */
	static const float faces[6][3][3] = {
		{ { 1, 0, 0 }, { 0, 0, -1 }, { 0, -1, 0 } },
		{ { -1, 0, 0 }, { 0, 0, 1 }, { 0, -1, 0 } },
		{ { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } },
		{ { 0, -1, 0 }, { 1, 0, 0 }, { 0, 0, -1 } },
		{ { 0, 0, 1 }, { 1, 0, 0 }, { 0, -1, 0 } },
		{ { 0, 0, -1 }, { -1, 0, 0 }, { 0, -1, 0 } },
	};
	static const float corner[4][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 0, 1 } };
	int f, c, k;

	for (f = 0; f < 6; f++) {
		for (c = 0; c < 4; c++) {
			struct vertex *o = &v[f * 4 + c];
			float su = corner[c][0] * 2.0f - 1.0f, sv = corner[c][1] * 2.0f - 1.0f;
			for (k = 0; k < 3; k++) {
				o->pos[k] = faces[f][0][k] + su * faces[f][1][k] + sv * faces[f][2][k];
				o->normal[k] = faces[f][0][k];
			}
			o->uv[0] = corner[c][0];
			o->uv[1] = corner[c][1];
		}
		idx[f * 6 + 0] = (uint16_t)(f * 4 + 0);
		idx[f * 6 + 1] = (uint16_t)(f * 4 + 1);
		idx[f * 6 + 2] = (uint16_t)(f * 4 + 2);
		idx[f * 6 + 3] = (uint16_t)(f * 4 + 2);
		idx[f * 6 + 4] = (uint16_t)(f * 4 + 3);
		idx[f * 6 + 5] = (uint16_t)(f * 4 + 0);
	}
}

/* the static texture: a coloured checkerboard with a light frame */
void texture_pattern(unsigned char *p)
{
	int x, y;

	for (y = 0; y < TEX_SIZE; y++)
		for (x = 0; x < TEX_SIZE; x++) {
			unsigned char *o = p + (y * TEX_SIZE + x) * 4;
			int border = x < 3 || y < 3 || x >= TEX_SIZE - 3 || y >= TEX_SIZE - 3;
			int on = ((x / 8) ^ (y / 8)) & 1;
			if (border) {
				o[0] = 250; o[1] = 240; o[2] = 200;
			} else if (on) {
				o[0] = (unsigned char)(60 + x * 3);
				o[1] = (unsigned char)(40 + y * 3);
				o[2] = 220;
			} else {
				o[0] = 235; o[1] = 235; o[2] = 235;
			}
			o[3] = 255;
		}
}
