#version 450
// tests/unit/test_spirv.c: one of each kind of resource a stage uses,
// one it declares and does not use, one used only in a called function.
#extension GL_EXT_nonuniform_qualifier : require

layout(set = 0, binding = 0) uniform U { vec4 a; } u;
layout(set = 0, binding = 1) uniform sampler2D tex[4];
layout(set = 1, binding = 0) buffer S { vec4 b[]; } s;
layout(set = 1, binding = 2, rgba8) uniform readonly image2D img;
layout(set = 2, binding = 0) uniform samplerBuffer tb;
layout(set = 2, binding = 1) uniform texture2D sep;
layout(set = 2, binding = 2) uniform sampler smp;
layout(set = 3, binding = 0) uniform Unused { vec4 c; } unused;
layout(set = 3, binding = 1) uniform sampler2D rt[];
layout(input_attachment_index = 0, set = 3, binding = 2) uniform subpassInput ia;
layout(set = 3, binding = 3, r32f) uniform imageBuffer stb;
layout(push_constant) uniform P { vec4 p; } pc;

layout(location = 0) out vec4 o;

vec4 helper()
{
	return s.b[0];
}

void main()
{
	o = u.a + texture(tex[1], vec2(0)) + helper() + imageLoad(img, ivec2(0)) +
	    texelFetch(tb, 0) + texture(sampler2D(sep, smp), vec2(0)) +
	    texture(rt[nonuniformEXT(int(u.a.x))], vec2(0)) + subpassLoad(ia) +
	    imageLoad(stb, 0) + pc.p;
}
