#version 450
// tracekit example: the static texture (uploaded once through a staging
// buffer) modulated by the image the compute pass writes every frame.

// (built again with FRAME_STORAGE_RO and _RW: vkexample --uniform-storage)
#if defined(FRAME_STORAGE_RO)
layout(set = 0, binding = 0) readonly buffer Frame {
#elif defined(FRAME_STORAGE_RW)
layout(set = 0, binding = 0) buffer Frame {
#else
layout(set = 0, binding = 0) uniform Frame {
#endif
	mat4 mvp;
	vec4 tint;
} ubo;
layout(set = 0, binding = 1) uniform sampler2D tex;
layout(set = 0, binding = 2) uniform sampler2D anim;

// (built again with ANIM_UNSAMPLED: vkexample --anim-unsampled, anim
// declared and not used)

layout(location = 0) in vec2 in_uv;
layout(location = 1) in float in_shade;

layout(location = 0) out vec4 out_color;

void main()
{
	vec3 t = texture(tex, in_uv).rgb;
#if defined(ANIM_UNSAMPLED)
	vec3 a = vec3(1.0);
#else
	vec3 a = texture(anim, in_uv).rgb;
#endif
	out_color = vec4(t * (0.35 + 0.65 * a) * ubo.tint.rgb * in_shade, 1.0);
}
