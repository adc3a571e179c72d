#version 450
// tracekit example (vkexample --compute-mips): level i of the texture from level
// i - 1, one texel from the mean of four, read through a view of level
// i - 1 and written through a storage view of level i (every texel of
// it: the dispatch covers the level).

layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 0, binding = 1, rgba8) uniform writeonly image2D dst;

void main()
{
	ivec2 size = imageSize(dst);
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (p.x >= size.x || p.y >= size.y)
		return;
	ivec2 s = 2 * p;
	vec4 sum = texelFetch(src, s, 0) + texelFetch(src, s + ivec2(1, 0), 0) +
		   texelFetch(src, s + ivec2(0, 1), 0) + texelFetch(src, s + ivec2(1, 1), 0);
	imageStore(dst, p, sum * 0.25);
}
