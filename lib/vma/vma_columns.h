/*
 * Columns of a VMA recording, as both the reader (vma_reader.c) and the
 * writer (vma_writer.c) spell them; not installed.
 */
#ifndef TRACE_VMA_COLUMNS_H
#define TRACE_VMA_COLUMNS_H

#include "internal.h"
#include "vma.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

extern const char vma_hex_upper[];

/* The functions a recording holds (vma.c), in the order of their ids. */
#define NFUNCTIONS 27
extern const vma_function vma_function_table[NFUNCTIONS];

enum { NUM_OK = 0, NUM_EMPTY, NUM_BAD, NUM_ZERO, NUM_RANGE };

/* A decimal as %u and %llu write it: digits, no sign, no leading zero. */
static inline int scan_uint(const char *p, const char *e, uint64_t max, uint64_t *out)
{
	size_t n = (size_t)(e - p);
	if (!n)
		return NUM_EMPTY;
	uint64_t v = 0;
	bool over = false;
	/* 19 digits cannot overflow 64 bits; the 20th is checked */
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)p[i] - '0';
		if (d > 9)
			return NUM_BAD;
		if (i >= 19 && (i > 19 || v > (UINT64_MAX - d) / 10))
			over = true;
		v = v * 10 + d;
	}
	if (*p == '0' && n > 1)
		return NUM_ZERO;
	if (over || v > max)
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

/* The longest decimal of a uint64. */
#define NUMBER_MAX 20

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal, written in place: count the digits, then fill from the end. */
static inline char *fmt_u64(char *o, uint64_t v)
{
	if (v < 10) {
		*o++ = (char)('0' + v);
		return o;
	}
	int n = 2;
	for (uint64_t p = 100; n < NUMBER_MAX && v >= p; p *= 10)
		n++;
	char *q = o + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		*--q = digit_pairs[2 * r + 1];
		*--q = digit_pairs[2 * r];
	}
	if (v >= 10) {
		*--q = digit_pairs[2 * v + 1];
		*--q = digit_pairs[2 * v];
	} else {
		*--q = (char)('0' + v);
	}
	return o + n;
}

/* Any decimal VmaReplay would take as a time: digits, then maybe a
 * fraction. */
static inline bool is_decimal(const char *p, const char *e)
{
	const char *q = p;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	if (q == p)
		return false;
	if (q == e)
		return true;
	if (*q++ != '.' || q == e)
		return false;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	return q == e;
}

static inline const char *trim_blanks(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return e;
}

/* Text for a message: the start of a column, control bytes as '?'. */
static inline const char *shown(char *out, size_t cap, const char *s, size_t n)
{
	size_t max = cap - 4, k = 0;
	for (size_t i = 0; i < n && k < max; i++) {
		unsigned char c = (unsigned char)s[i];
		out[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (n > max) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = 0;
	return out;
}

#endif
