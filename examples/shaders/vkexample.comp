#version 450
// tracekit example: writes an animated pattern into a storage image every
// frame; the fragment shader samples it.  Integer arithmetic only, so the
// result is exact on every device.

layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D dst;
layout(push_constant) uniform Push {
	uint frame;
} pc;

void main()
{
	ivec2 size = imageSize(dst);
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (p.x >= size.x || p.y >= size.y)
		return;
	uint f = pc.frame;
	// diagonal stripes moving with the frame, and a band sweeping down
	uint stripe = ((uint(p.x + p.y) + f * 6u) / 16u) & 1u;
	uint band = (uint(p.y) + size.y - (f * 9u) % uint(size.y)) % uint(size.y);
	float r = stripe == 1u ? 1.0 : 0.45;
	float g = float((uint(p.x) * 2u + f * 13u) & 255u) / 255.0;
	float b = band < 24u ? 1.0 : 0.3;
	imageStore(dst, p, vec4(r, 0.4 + 0.6 * g, b, 1.0));
}
