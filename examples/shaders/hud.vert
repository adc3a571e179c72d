#version 450
// tracekit example (vkexample --depth-read-only): a flat rectangle at one
// depth, its corners from the vertex index (a strip of 4, no vertex
// buffer), as a game's HUD draws over its scene.

layout(push_constant) uniform Hud {
	vec4 rect;      // x0, y0, x1, y1 in clip space
	vec4 color;
	float depth;
} hud;

void main()
{
	vec2 c = vec2(gl_VertexIndex & 1, gl_VertexIndex >> 1);
	gl_Position = vec4(mix(hud.rect.xy, hud.rect.zw, c), hud.depth, 1.0);
}
