#version 450
// tracekit example: a textured cube, rotated by the matrix the program
// writes into the persistently mapped uniform buffer every frame.

// (built again with FRAME_STORAGE_RO and _RW: vkexample --uniform-storage)
#if defined(FRAME_STORAGE_RO)
layout(set = 0, binding = 0) readonly buffer Frame {
#elif defined(FRAME_STORAGE_RW)
layout(set = 0, binding = 0) buffer Frame {
#else
layout(set = 0, binding = 0) uniform Frame {
#endif
	mat4 mvp;
	vec4 tint;      // rgb multiplier, w: frame number (as float)
} ubo;

layout(location = 0) in vec3 in_pos;
layout(location = 1) in vec2 in_uv;
layout(location = 2) in vec3 in_normal;

layout(location = 0) out vec2 out_uv;
layout(location = 1) out float out_shade;

void main()
{
	gl_Position = ubo.mvp * vec4(in_pos, 1.0);
	out_uv = in_uv;
	// Fixed per-face shade so the faces are told apart (no lighting model).
	out_shade = 0.6 + 0.4 * abs(dot(in_normal, vec3(0.267, 0.534, 0.802)));
}
