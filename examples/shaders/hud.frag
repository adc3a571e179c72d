#version 450
// tracekit example (vkexample --depth-read-only): the rectangle's colour.

layout(push_constant) uniform Hud {
	vec4 rect;
	vec4 color;
	float depth;
} hud;

layout(location = 0) out vec4 out_color;

void main()
{
	out_color = hud.color;
}
