/*
 * spans: byte ranges of an object, sorted and apart, and the buffer reads
 * (breads) made of them: what a command, a descriptor or the range may
 * read of a buffer, turned per setup into what of its contents is written.
 */
#include "trim_internal.h"

/* The end of LEN bytes from OFF, or the object's end past 64 bits. */
uint64_t span_upto(uint64_t off, uint64_t len)
{
	return len > UINT64_MAX - off ? UINT64_MAX : off + len;
}

void spans_add(spans *s, uint64_t off, uint64_t end)
{
	if (off >= end)
		return;
	uint32_t i = 0;
	while (i < s->n && s->v[i].end < off)
		i++;
	/* those it overlaps or touches become one */
	uint32_t j = i;
	for (; j < s->n && s->v[j].off <= end; j++) {
		if (s->v[j].off < off)
			off = s->v[j].off;
		if (s->v[j].end > end)
			end = s->v[j].end;
	}
	if (j == i) {
		s->v = array_grow(s->v, s->n, &s->cap, sizeof(*s->v), 4);
		memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
		s->n++;
	} else if (j > i + 1) {
		memmove(s->v + i + 1, s->v + j, (s->n - j) * sizeof(*s->v));
		s->n -= j - i - 1;
	}
	s->v[i] = (span){off, end};
}

void spans_sub(spans *s, uint64_t off, uint64_t end)
{
	spans out = {0};
	for (uint32_t i = 0; i < s->n; i++) {
		span x = s->v[i];
		if (x.end <= off || x.off >= end) {
			spans_add(&out, x.off, x.end);
			continue;
		}
		spans_add(&out, x.off, off);
		spans_add(&out, end, x.end);
	}
	free(s->v);
	*s = out;
}

void spans_free(spans *s)
{
	free(s->v);
	*s = (spans){0};
}

/* Reads of the same bytes come in runs (a vertex buffer bound per draw):
 * the last few are enough to find a repeat. */
void breads_add(breads *b, obj *o, uint64_t off, uint64_t end)
{
	if (!o || off >= end)
		return;
	for (uint32_t i = b->n, k = 0; i-- > 0 && k < 16; k++)
		if (b->v[i].o == o && b->v[i].off <= off && b->v[i].end >= end)
			return;
	b->v = array_grow(b->v, b->n, &b->cap, sizeof(*b->v), 4);
	b->v[b->n++] = (bread){o, off, end};
}

void breads_free(breads *b)
{
	free(b->v);
	*b = (breads){0};
}
