#version 450
// tests/unit/test_spirv.c: an array sized by a specialisation constant,
// and no push constants.
layout(local_size_x = 1) in;
layout(constant_id = 0) const int N = 3;
layout(set = 0, binding = 0) uniform sampler2D arr[N];
layout(set = 0, binding = 1) buffer Out { vec4 v; } outp;

void main()
{
	outp.v = texture(arr[N - 1], vec2(0));
}
