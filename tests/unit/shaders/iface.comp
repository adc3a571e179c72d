#version 450
// tests/unit/test_spirv.c: an array sized by a specialisation constant,
// no push constants, and storage a stage may write or not: readonly on
// the block, on the image, on one member of two, on an array of blocks;
// storage it may not read: writeonly on the image, on the block; and a
// binding declared that no instruction uses.
layout(local_size_x = 1) in;
layout(constant_id = 0) const int N = 3;
layout(set = 0, binding = 0) uniform sampler2D arr[N];
layout(set = 0, binding = 1) buffer Out { vec4 v; } outp;
layout(set = 0, binding = 2) readonly buffer In { vec4 v; } inp;
layout(set = 0, binding = 3, rgba8) uniform readonly image2D rimg;
layout(set = 0, binding = 4) buffer Half { readonly vec4 a; vec4 b; } half_;
layout(set = 0, binding = 5) readonly buffer Arr { vec4 v; } ins[2];
layout(set = 0, binding = 6) uniform U { vec4 u; } ubo;
layout(set = 0, binding = 7, r32f) uniform image2D wimg;
layout(set = 0, binding = 8, rgba8) uniform writeonly image2D woimg;
layout(set = 0, binding = 9) writeonly buffer Wo { vec4 a; vec4 b; } wo;
layout(set = 0, binding = 10) uniform sampler2D unused;

void main()
{
	vec4 x = texture(arr[N - 1], vec2(0)) + inp.v + imageLoad(rimg, ivec2(0)) + half_.a +
		 ins[1].v + ubo.u + imageLoad(wimg, ivec2(0));
	outp.v = x;
	imageStore(woimg, ivec2(0), x);
	wo.b = x;
}
