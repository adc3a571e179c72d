/*
 * The text form's numbers, read (man/trace-format.5): decimal or 0x-hex
 * integers, YAML's reals with .inf and .nan.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

bool trace_text_u64(const char *s, size_t n, int base, uint64_t *out)
{
	if (!n)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return true;
}

/* Decimal or 0x-hex, with an optional minus sign. */
bool trace_text_int(const char *s, size_t n, int64_t *out)
{
	bool neg = n && s[0] == '-';
	if (neg) {
		s++;
		n--;
	}
	uint64_t u;
	bool ok = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
			  ? trace_text_u64(s + 2, n - 2, 16, &u)
			  : trace_text_u64(s, n, 10, &u);
	if (!ok || (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX))
		return false;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

/* An unsigned decimal or 0x-hex: bitmask values use all 64 bits. */
bool trace_text_uint(const char *s, size_t n, uint64_t *out)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return trace_text_u64(s + 2, n - 2, 16, out);
	return trace_text_u64(s, n, 10, out);
}

bool trace_text_is_float(const char *s, size_t n)
{
	size_t i = 0;
	bool digits = false, dot = false, exp = false;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	if (n - i == 4 && !memcmp(s + i, ".inf", 4))
		return true;
	if (n - i == 4 && !memcmp(s + i, ".nan", 4))
		return true;
	for (; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			digits = true;
		} else if (c == '.' && !dot && !exp) {
			dot = true;
		} else if ((c == 'e' || c == 'E') && digits && !exp) {
			exp = true;
			if (i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+'))
				i++;
			if (i + 1 >= n)
				return false;
		} else {
			return false;
		}
	}
	return digits && (dot || exp);
}

/* YAML's .inf and .nan, signed, which strtod does not spell that way */
static bool special_real(const char *s, double *v)
{
	const char *p = s;
	bool neg = false;
	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	if (!strncmp(p, ".inf", 4))
		*v = neg ? -INFINITY : INFINITY;
	else if (!strncmp(p, ".nan", 4))
		*v = neg ? -NAN : NAN;
	else
		return false;
	return true;
}

double trace_text_real(const char *s, size_t n)
{
	double v;
	(void)n;
	return special_real(s, &v) ? v : strtod(s, NULL);
}

/* a float read as float (strtof rounds once; a double then a float may
 * round twice) */
float trace_text_real_f(const char *s)
{
	double v;
	return special_real(s, &v) ? (float)v : strtof(s, NULL);
}
