/*
 * The text encoding, written: one YAML flow mapping per line.
 *
 * The lines are written directly rather than through libyaml's emitter:
 * the form is fixed and small, decoding speed is a figure we answer for,
 * and every line we write is read back by libyaml in the tests.  The
 * rules (what is plain, what is quoted, which tags) are the contract in
 * man/trace-format.5; trace_textreader reads exactly them.
 */
#include "internal.h"
#include "vkschema.h"

#include <math.h>
#include <stdlib.h>

static const char hexdig[] = "0123456789abcdef";

static void put_u64(tbuf *b, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (b->cap - b->len < (size_t)n)
		tbuf_grow(b, (size_t)n);
	while (n)
		b->data[b->len++] = tmp[--n];
}

static void put_i64(tbuf *b, int64_t v)
{
	if (v < 0) {
		tbuf_addc(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

static void put_hex(tbuf *b, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = hexdig[v & 15];
		v >>= 4;
	} while (v);
	tbuf_add(b, "0x", 2);
	while (n)
		tbuf_addc(b, tmp[--n]);
}

/* ------------------------------------------------------------------ */
/* Floats: the shortest decimal that reads back to the same bits. */

static size_t finish_float(char *out, size_t n)
{
	/* a float must not read back as an integer */
	for (size_t i = 0; i < n; i++)
		if (out[i] == '.' || out[i] == 'e' || out[i] == 'n' || out[i] == 'i')
			return n;
	out[n++] = '.';
	out[n++] = '0';
	out[n] = 0;
	return n;
}

static size_t special_float(char *out, double d)
{
	if (isnan(d)) /* the sign shows in apitrace dump; the payload does not */
		return (size_t)sprintf(out, signbit(d) ? "-.nan" : ".nan");
	if (isinf(d))
		return (size_t)sprintf(out, d < 0 ? "-.inf" : ".inf");
	return 0;
}

/* 10^-60 .. 10^60, correctly rounded by the compiler. */
static const double pow10_tab[121] = {
	1e-60, 1e-59, 1e-58, 1e-57, 1e-56, 1e-55, 1e-54, 1e-53, 1e-52, 1e-51,
	1e-50, 1e-49, 1e-48, 1e-47, 1e-46, 1e-45, 1e-44, 1e-43, 1e-42, 1e-41,
	1e-40, 1e-39, 1e-38, 1e-37, 1e-36, 1e-35, 1e-34, 1e-33, 1e-32, 1e-31,
	1e-30, 1e-29, 1e-28, 1e-27, 1e-26, 1e-25, 1e-24, 1e-23, 1e-22, 1e-21,
	1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11,
	1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1,
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
	1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29,
	1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39,
	1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47, 1e48, 1e49,
	1e50, 1e51, 1e52, 1e53, 1e54, 1e55, 1e56, 1e57, 1e58, 1e59,
	1e60,
};
#define POW10(e) pow10_tab[(e) + 60]

/* digits of n (ndig of them) times 10^e10 of the first digit, as %g would */
static size_t put_sci(char *out, bool neg, uint64_t n, int ndig, int e10)
{
	char dig[24];
	for (int i = ndig - 1; i >= 0; i--) {
		dig[i] = (char)('0' + n % 10);
		n /= 10;
	}
	while (ndig > 1 && dig[ndig - 1] == '0')
		ndig--;
	char *o = out;
	if (neg)
		*o++ = '-';
	if (e10 < -4 || e10 >= 17) {
		*o++ = dig[0];
		*o++ = '.';
		if (ndig > 1) {
			memcpy(o, dig + 1, (size_t)ndig - 1);
			o += ndig - 1;
		} else {
			*o++ = '0';
		}
		o += sprintf(o, "e%c%02d", e10 < 0 ? '-' : '+', e10 < 0 ? -e10 : e10);
	} else if (e10 < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = -1; i > e10; i--)
			*o++ = '0';
		memcpy(o, dig, (size_t)ndig);
		o += ndig;
	} else {
		for (int i = 0; i <= e10 || i < ndig; i++) {
			if (i == e10 + 1)
				*o++ = '.';
			*o++ = i < ndig ? dig[i] : '0';
		}
		if (ndig <= e10 + 1) {
			*o++ = '.';
			*o++ = '0';
		}
	}
	*o = 0;
	return (size_t)(o - out);
}

/*
 * The shortest decimal that reads back as f.  Every float, its neighbours
 * and the midpoints between them are exact in double, so a candidate of
 * p digits is tested against the rounding interval in double arithmetic;
 * only a candidate within rounding error of the interval's edge is
 * settled by strtof itself.
 */
size_t trace_fmt_float(char *out, float f)
{
	size_t n = special_float(out, f);
	if (n)
		return n;
	if (f == 0)
		return (size_t)sprintf(out, signbit(f) ? "-0.0" : "0.0");
	bool neg = f < 0;
	float af = neg ? -f : f;
	double d = af;
	double prev = nextafterf(af, 0.0f), next = nextafterf(af, INFINITY);
	if (isinf(next)) /* FLT_MAX: past its upper midpoint strtof gives inf */
		next = d + (d - prev);
	double lo = (d + prev) / 2;
	double hi = (d + next) / 2;
	uint32_t bits;
	memcpy(&bits, &af, 4);
	bool even = !(bits & 1); /* ties round to even: the edges are inside */
	int e10 = (int)floor(log10(d));
	if (d >= POW10(e10 + 1))
		e10++;
	else if (d < POW10(e10))
		e10--;
	for (int p = 1; p <= 9; p++) {
		int k = p - 1 - e10; /* d * 10^k has p digits before the point */
		double scaled = d * POW10(k);
		uint64_t m = (uint64_t)llround(scaled);
		int ee = e10, pp = p;
		if (m >= (uint64_t)POW10(p)) { /* rounded up to 10^p */
			m /= 10;
			ee++;
		}
		int x = ee - pp + 1;
		double v = x < 0 ? (double)m / POW10(-x) : (double)m * POW10(x);
		double margin = v * 4e-16;
		bool in = even ? (v >= lo && v <= hi) : (v > lo && v < hi);
		bool near = fabs(v - lo) <= margin || fabs(v - hi) <= margin;
		if (!in && !near)
			continue;
		n = put_sci(out, neg, m, pp, ee);
		if (near && strtof(out, NULL) != f)
			continue;
		return n;
	}
	n = (size_t)sprintf(out, "%.9g", (double)f);
	return finish_float(out, n);
}

size_t trace_fmt_double(char *out, double d)
{
	size_t n = special_float(out, d);
	if (n)
		return n;
	for (int prec = 15; prec < 17; prec++) {
		n = (size_t)sprintf(out, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			return finish_float(out, n);
	}
	n = (size_t)sprintf(out, "%.17g", d);
	return finish_float(out, n);
}

/* ------------------------------------------------------------------ */
/* Strings. */

/* Length of a valid UTF-8 sequence at s that libyaml accepts, or 0. */
static size_t utf8_char(const uint8_t *s, size_t n, uint32_t *cp)
{
	uint8_t c = s[0];
	size_t len;
	uint32_t v;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2;
		v = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		v = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		uint32_t cp;
		size_t l = utf8_char(s + i, n - i, &cp);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

/* Whether libyaml takes this code point as it is inside double quotes. */
static bool printable(uint32_t c)
{
	return (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff && c != 0x2028 &&
					     c != 0x2029) ||
	       (c >= 0xe000 && c <= 0xfffd && c != 0xfeff) || (c >= 0x10000 && c <= 0x10ffff);
}

static void put_escape(tbuf *b, uint32_t c)
{
	switch (c) {
	case '\0': tbuf_add(b, "\\0", 2); return;
	case '\t': tbuf_add(b, "\\t", 2); return;
	case '\n': tbuf_add(b, "\\n", 2); return;
	case '\r': tbuf_add(b, "\\r", 2); return;
	case '"': tbuf_add(b, "\\\"", 2); return;
	case '\\': tbuf_add(b, "\\\\", 2); return;
	}
	if (c <= 0xff) {
		char e[4] = {'\\', 'x', hexdig[c >> 4], hexdig[c & 15]};
		tbuf_add(b, e, 4);
	} else if (c <= 0xffff) {
		tbuf_addf(b, "\\u%04x", c);
	} else {
		tbuf_addf(b, "\\U%08x", c);
	}
}

/*
 * A double-quoted YAML string.  Text that is not UTF-8 is written byte
 * by byte as U+0000..U+00FF under the tag !latin1, so any bytes survive.
 */
static void put_quoted(tbuf *b, const char *str, size_t n)
{
	const uint8_t *s = (const uint8_t *)str;
	bool latin1 = !utf8_valid(s, n);
	if (latin1)
		tbuf_add(b, "!latin1 ", 8);
	tbuf_addc(b, '"');
	size_t i = 0;
	while (i < n) {
		/* runs of plain ASCII go out in one copy */
		size_t j = i;
		while (j < n && s[j] >= 0x20 && s[j] < 0x7f && s[j] != '"' && s[j] != '\\')
			j++;
		if (j > i) {
			tbuf_add(b, s + i, j - i);
			i = j;
			continue;
		}
		uint32_t cp;
		size_t l;
		if (latin1) {
			cp = s[i];
			l = 1;
		} else {
			l = utf8_char(s + i, n - i, &cp);
		}
		if (cp >= 0x80 && printable(cp) && !latin1)
			tbuf_add(b, s + i, l);
		else
			put_escape(b, cp);
		i += l;
	}
	tbuf_addc(b, '"');
}

static bool is_ident(const char *s, bool dots)
{
	if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || (dots && *s == '.')))
			return false;
	return true;
}

/* A name: plain when it is an identifier, quoted otherwise. */
static void put_name(tbuf *b, const char *s)
{
	if (is_ident(s, true))
		tbuf_adds(b, s);
	else
		put_quoted(b, s ? s : "", s ? strlen(s) : 0);
}

/*
 * A mapping key: an argument's, a member's or a property's name.  YAML
 * allows an implicit key of at most 1024 characters (libyaml enforces
 * it), so one written longer than YAML_KEY_MAX bytes (a binary trace may
 * name anything) goes as an explicit key, "? NAME".
 */
#define YAML_KEY_MAX 1000

static void put_key(tbuf *b, const char *s)
{
	size_t at = b->len;
	put_name(b, s);
	if (b->len - at > YAML_KEY_MAX) {
		tbuf_grow(b, 2);
		memmove(b->data + at + 2, b->data + at, b->len - at);
		memcpy(b->data + at, "? ", 2);
		b->len += 2;
	}
}

static void put_tag_byte(tbuf *b, uint8_t c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '_' || c == '.' || c == '-')
		tbuf_addc(b, (char)c);
	else
		tbuf_addf(b, "%%%02X", c);
}

/*
 * A struct tag: !struct:NAME, percent-encoding what a tag may not hold.
 * libyaml insists the decoded escapes be UTF-8, so a name that is not
 * goes as !latin1struct:, each byte as the character U+0000..U+00FF.
 */
static void put_struct_tag(tbuf *b, const char *name)
{
	const uint8_t *s = (const uint8_t *)name;
	size_t n = strlen(name);
	if (utf8_valid(s, n)) {
		tbuf_add(b, "!struct:", 8);
		for (size_t i = 0; i < n; i++)
			put_tag_byte(b, s[i]);
	} else {
		tbuf_add(b, "!latin1struct:", 14);
		for (size_t i = 0; i < n; i++) {
			if (s[i] < 0x80) {
				put_tag_byte(b, s[i]);
			} else {
				put_tag_byte(b, (uint8_t)(0xc0 | s[i] >> 6));
				put_tag_byte(b, (uint8_t)(0x80 | (s[i] & 0x3f)));
			}
		}
	}
	tbuf_addc(b, ' ');
}

/* ------------------------------------------------------------------ */

/*
 * What a signature prints as is the same on every line, and deciding
 * whether each name needs quotes costs more than printing it: a cache
 * keeps the rendered pieces per signature, for the life of the writer.
 */
typedef struct rendered {
	char *head;      /* ", fn: NAME" or "!struct:NAME {" */
	size_t headlen;
	char **keys;     /* per argument or member: separator, name, ": " */
	size_t *keylens;
	/* a Vulkan command's: the schema's type of each argument whose name
	 * is the command's parameter at that place (the text reader makes the
	 * same choice), and of the return value */
	const vk_field **fields;
	const vk_field *ret;
} rendered;

struct trace_textcache {
	tmap map;        /* signature -> rendered */
	tmap canon;      /* value signature -> the schema type it equals, or 1 */
	trace_arena arena;
	tbuf tmp;
};

trace_textcache *trace_textcache_new(void)
{
	trace_textcache *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	trace_arena_init(&c->arena);
	return c;
}

void trace_textcache_free(trace_textcache *c)
{
	if (!c)
		return;
	tmap_free(&c->map);
	tmap_free(&c->canon);
	trace_arena_free(&c->arena);
	tbuf_free(&c->tmp);
	free(c);
}

static void put_name(tbuf *b, const char *s);
static void put_struct_tag(tbuf *b, const char *name);

static char *keep(trace_textcache *c, size_t *len)
{
	*len = c->tmp.len;
	return trace_arena_strndup(&c->arena, c->tmp.data ? c->tmp.data : "", c->tmp.len);
}

static const rendered *render(trace_textcache *c, const void *sig, bool func)
{
	uint64_t v;
	if (tmap_get(&c->map, sig, &v))
		return (const rendered *)(uintptr_t)v;
	rendered *r = trace_arena_alloc(&c->arena, sizeof(*r));
	uint32_t n;
	const char *const *names;
	c->tmp.len = 0;
	if (func) {
		const trace_func_sig *f = sig;
		tbuf_add(&c->tmp, ", fn: ", 6);
		put_name(&c->tmp, f->name);
		n = f->nargs;
		names = f->arg_names;
	} else {
		const trace_struct_sig *st = sig;
		put_struct_tag(&c->tmp, st->name);
		tbuf_addc(&c->tmp, '{');
		n = st->nmembers;
		names = st->member_names;
	}
	r->head = keep(c, &r->headlen);
	r->fields = trace_arena_alloc(&c->arena, sizeof(*r->fields) * n);
	if (func) {
		const vk_command_info *cmd = trace_vk_command(((const trace_func_sig *)sig)->name);
		for (uint32_t i = 0; cmd && i < n; i++)
			if (i < cmd->nparams && !strcmp(names[i], cmd->params[i].name))
				r->fields[i] = &cmd->params[i];
		r->ret = cmd ? cmd->ret : NULL;
	}
	r->keys = trace_arena_alloc(&c->arena, sizeof(char *) * n);
	r->keylens = trace_arena_alloc(&c->arena, sizeof(size_t) * n);
	for (uint32_t i = 0; i < n; i++) {
		c->tmp.len = 0;
		if (i)
			tbuf_add(&c->tmp, ", ", 2);
		else if (func)
			tbuf_add(&c->tmp, ", args: {", 9);
		put_key(&c->tmp, names[i]);
		tbuf_add(&c->tmp, ": ", 2);
		r->keys[i] = keep(c, &r->keylens[i]);
	}
	tmap_put(&c->map, sig, (uint64_t)(uintptr_t)r);
	return r;
}

static void put_value(tbuf *b, const trace_value *v, trace_textcache *c);

static void put_enum(tbuf *b, const trace_value *v)
{
	const char *name = trace_enum_name(v->en.sig, v->en.value);
	tbuf_add(b, "!enum ", 6);
	if (!name) {
		put_i64(b, v->en.value);
	} else if (is_ident(name, false)) {
		tbuf_adds(b, name);
		tbuf_addc(b, '=');
		put_i64(b, v->en.value);
	} else {
		tbuf_addc(b, '[');
		put_quoted(b, name, strlen(name));
		tbuf_add(b, ", ", 2);
		put_i64(b, v->en.value);
		tbuf_addc(b, ']');
	}
}

/*
 * The flags apitrace's dump would print for VALUE, in SIG's order, and
 * the bits left over: a zero value stops at the first flag.
 */
static size_t bitmask_shown(const trace_bitmask_sig *sig, uint64_t value,
			    const trace_bitmask_flag *shown[64], uint64_t *rest)
{
	size_t n = 0;
	for (uint32_t i = 0; i < sig->nflags && n < 64; i++) {
		const trace_bitmask_flag *f = &sig->flags[i];
		if ((f->value && (value & f->value) == f->value) || (!f->value && !value)) {
			shown[n++] = f;
			value &= ~f->value;
		}
		if (!value)
			break;
	}
	*rest = value;
	return n;
}

/*
 * A bitmask prints the flags dump would print, each with its value, then
 * any bits left over: the text carries exactly the part of the
 * signature that the value shows.
 */
static void put_bitmask(tbuf *b, const trace_value *v)
{
	const trace_bitmask_flag *shown[64];
	uint64_t rest;
	size_t nshown = bitmask_shown(v->bm.sig, v->bm.value, shown, &rest);
	bool plain = true;
	for (size_t i = 0; i < nshown; i++)
		plain = plain && is_ident(shown[i]->name, false);
	tbuf_add(b, "!bitmask ", 9);
	if (plain) {
		for (size_t i = 0; i < nshown; i++) {
			if (i)
				tbuf_addc(b, '|');
			tbuf_adds(b, shown[i]->name);
			tbuf_addc(b, '=');
			put_hex(b, shown[i]->value);
		}
		if (rest || !nshown) {
			if (nshown)
				tbuf_addc(b, '|');
			put_hex(b, rest);
		}
		return;
	}
	tbuf_addc(b, '[');
	for (size_t i = 0; i < nshown; i++) {
		if (i)
			tbuf_add(b, ", ", 2);
		tbuf_addc(b, '[');
		put_quoted(b, shown[i]->name, strlen(shown[i]->name));
		tbuf_add(b, ", ", 2);
		put_hex(b, shown[i]->value);
		tbuf_addc(b, ']');
	}
	if (rest || !nshown) {
		if (nshown)
			tbuf_add(b, ", ", 2);
		put_hex(b, rest);
	}
	tbuf_addc(b, ']');
}

static void put_wstring(tbuf *b, const trace_value *v)
{
	bool ok = true;
	for (uint32_t i = 0; i < v->len && ok; i++)
		ok = v->wstr[i] <= 0x10ffff && !(v->wstr[i] >= 0xd800 && v->wstr[i] <= 0xdfff);
	tbuf_add(b, "!wstring ", 9);
	if (!ok) {
		/* not Unicode: the code units as numbers */
		tbuf_addc(b, '[');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				tbuf_add(b, ", ", 2);
			put_u64(b, v->wstr[i]);
		}
		tbuf_addc(b, ']');
		return;
	}
	tbuf_addc(b, '"');
	for (uint32_t i = 0; i < v->len; i++) {
		uint32_t c = v->wstr[i];
		if (c < 0x80 && c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
			tbuf_addc(b, (char)c);
		} else if (c >= 0x80 && printable(c)) {
			char u[4];
			tbuf_add(b, u, trace_utf8_encode(u, c));
		} else {
			put_escape(b, c);
		}
	}
	tbuf_addc(b, '"');
}

static void put_value(tbuf *b, const trace_value *v, trace_textcache *c)
{
	char num[40];
	switch ((trace_value_kind)v->kind) {
	case TRACE_MISSING:
		tbuf_add(b, "!missing ~", 10);
		return;
	case TRACE_NULL:
		tbuf_add(b, "null", 4);
		return;
	case TRACE_BOOL:
		if (v->b)
			tbuf_add(b, "true", 4);
		else
			tbuf_add(b, "false", 5);
		return;
	case TRACE_SINT:
		put_i64(b, v->i);
		return;
	case TRACE_UINT:
		put_u64(b, v->u);
		return;
	case TRACE_FLOAT:
		tbuf_add(b, num, trace_fmt_float(num, v->f));
		return;
	case TRACE_DOUBLE:
		tbuf_add(b, "!double ", 8);
		tbuf_add(b, num, trace_fmt_double(num, v->d));
		return;
	case TRACE_STRING:
		put_quoted(b, v->str, v->len);
		return;
	case TRACE_WSTRING:
		put_wstring(b, v);
		return;
	case TRACE_BLOB:
		tbuf_add(b, "!!binary \"", 10);
		trace_base64_encode(b, v->blob, v->len);
		tbuf_addc(b, '"');
		return;
	case TRACE_ENUM:
		put_enum(b, v);
		return;
	case TRACE_BITMASK:
		put_bitmask(b, v);
		return;
	case TRACE_ARRAY:
		tbuf_addc(b, '[');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				tbuf_add(b, ", ", 2);
			put_value(b, &v->items[i], c);
		}
		tbuf_addc(b, ']');
		return;
	case TRACE_STRUCT:
	{
		const rendered *r = render(c, v->st.sig, false);
		tbuf_add(b, r->head, r->headlen);
		for (uint32_t i = 0; i < v->st.sig->nmembers; i++) {
			tbuf_add(b, r->keys[i], r->keylens[i]);
			put_value(b, &v->st.members[i], c);
		}
		tbuf_addc(b, '}');
	}
		return;
	case TRACE_POINTER:
		put_hex(b, v->u);
		return;
	case TRACE_REPR:
		tbuf_add(b, "!repr [", 7);
		put_value(b, &v->items[0], c);
		tbuf_add(b, ", ", 2);
		put_value(b, &v->items[1], c);
		tbuf_addc(b, ']');
		return;
	}
	tbuf_add(b, "!missing ~", 10);
}

/* ------------------------------------------------------------------ */
/*
 * Vulkan calls print without tags where the schema already says the type:
 * `format: VK_FORMAT_R8G8B8A8_UNORM`, `usage: A_BIT|B_BIT`, `flags: 0`,
 * structs as plain mappings.  Only a value that is what the schema makes
 * of that type (an enum signature of the type's values by their names, a
 * bitmask that shows the flags the schema shows, the same struct) loses
 * its tag, so reading the line back with the schema gives the same value,
 * and for a capture the same signature; anything else (a trace from
 * another registry version, an edited value) keeps the tagged form, which
 * reads back everywhere.
 */

/* Whether every value of A is one of B's, by the same name: a capture's
 * signature names one value of its type (vk_enum_sig), an older one all
 * of them, in the same order. */
static bool enum_within(const trace_enum_sig *a, const trace_enum_sig *b)
{
	if (a == b)
		return true;
	for (uint32_t i = 0; i < a->nvalues; i++) {
		const trace_enum_entry *x = &a->values[i];
		const trace_enum_entry *y = i < b->nvalues ? &b->values[i] : NULL;
		if (y && y->value == x->value && !strcmp(y->name, x->name))
			continue;
		uint32_t k = 0;
		while (k < b->nvalues &&
		       (b->values[k].value != x->value || strcmp(b->values[k].name, x->name)))
			k++;
		if (k == b->nvalues)
			return false;
	}
	return true;
}

static bool same_struct(const trace_struct_sig *a, const trace_struct_sig *b)
{
	if (a == b)
		return true;
	if (a->nmembers != b->nmembers || strcmp(a->name, b->name))
		return false;
	for (uint32_t i = 0; i < a->nmembers; i++)
		if (strcmp(a->member_names[i], b->member_names[i]))
			return false;
	return true;
}

/* Whether SIG (a value's) is of the schema's TYPE, remembered per SIG. */
static bool canonical(trace_textcache *c, const void *sig, const void *type, int kind)
{
	uint64_t v;
	bool known = tmap_get(&c->canon, sig, &v);
	if (known && (const void *)(uintptr_t)v == type)
		return true;
	if (known && v == 1)
		return false;
	bool same = kind == TRACE_ENUM ? enum_within(sig, &((const vk_enum_info *)type)->sig)
				       : same_struct(sig, &((const vk_struct_info *)type)->sig);
	if (same)
		tmap_put(&c->canon, sig, (uint64_t)(uintptr_t)type);
	else if (!known)
		tmap_put(&c->canon, sig, 1);
	return same;
}

/* Whether enum value V reads back the same from its name alone: its
 * signature is the schema's TYPE, or (a signature with other entries the
 * text does not show) the schema gives its value that name. */
static bool shown_canonical(trace_textcache *c, const trace_value *v, const vk_enum_info *type)
{
	if (canonical(c, v->en.sig, type, TRACE_ENUM))
		return true;
	const char *name = trace_enum_name(v->en.sig, v->en.value);
	const char *ours = trace_enum_name(&type->sig, v->en.value);
	return name && ours && !strcmp(name, ours);
}

/* Array levels before the field's base type: pointers and T x[N]. */
static int field_levels(const vk_field *f)
{
	return f->ptr + (f->count ? 1 : 0);
}

static void put_typed(tbuf *b, const trace_value *v, const vk_field *f, int level,
		      trace_textcache *c);

/* A struct the schema knows, as a plain mapping. */
static void put_struct_plain(tbuf *b, const trace_value *v, const vk_struct_info *info,
			     trace_textcache *c)
{
	tbuf_addc(b, '{');
	for (uint32_t i = 0; i < v->st.sig->nmembers; i++) {
		if (i)
			tbuf_add(b, ", ", 2);
		put_key(b, v->st.sig->member_names[i]);
		tbuf_add(b, ": ", 2);
		put_typed(b, &v->st.members[i], i < info->nfields ? &info->fields[i] : NULL, 0, c);
	}
	tbuf_addc(b, '}');
}

/* The struct a pNext item is, by its first member (sType), or NULL. */
static const vk_struct_info *pnext_struct(const trace_value *v, trace_textcache *c)
{
	if (v->kind != TRACE_STRUCT || !v->st.sig->nmembers ||
	    strcmp(v->st.sig->member_names[0], "sType") || v->st.members[0].kind != TRACE_ENUM)
		return NULL;
	const vk_struct_info *info = vk_struct_by_stype((int32_t)v->st.members[0].en.value);
	if (!info || info->blob || !canonical(c, v->st.sig, info, TRACE_STRUCT))
		return NULL;
	const vk_field *st = &info->fields[0];
	if (st->base != VK_B_ENUM || !canonical(c, v->st.members[0].en.sig, st->ref, TRACE_ENUM))
		return NULL;
	return info;
}

/* The flags dump would print, names only, then leftover bits: A|B|0x10. */
static void put_bitmask_plain(tbuf *b, const trace_value *v)
{
	const trace_bitmask_flag *shown[64];
	uint64_t rest;
	size_t n = bitmask_shown(v->bm.sig, v->bm.value, shown, &rest);
	for (size_t i = 0; i < n; i++) {
		if (i)
			tbuf_addc(b, '|');
		tbuf_adds(b, shown[i]->name);
	}
	if (rest || !n) {
		if (n)
			tbuf_addc(b, '|');
		if (!rest)
			tbuf_addc(b, '0');
		else
			put_hex(b, rest);
	}
}

/*
 * Whether bitmask V prints by its flags' names alone: the schema's TYPE
 * shows the same flags for its value, so the names read back as the same
 * text.  A capture's signature is the schema's first flags; another
 * registry's, or an edited trace's, may differ in flags the value does
 * not show, or stop before flags it would.
 */
static bool bitmask_plain(const trace_value *v, const vk_bitmask_info *type)
{
	const trace_bitmask_flag *shown[64], *ours[64];
	uint64_t rest, our_rest;
	size_t n = bitmask_shown(v->bm.sig, v->bm.value, shown, &rest);
	for (size_t i = 0; i < n; i++)
		if (!is_ident(shown[i]->name, false))
			return false;
	/* the schema's own first flags, all of the value shown */
	if (v->bm.sig->flags == type->sig.flags && n && !rest)
		return true;
	if (bitmask_shown(&type->sig, v->bm.value, ours, &our_rest) != n || our_rest != rest)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ours[i]->value != shown[i]->value || strcmp(ours[i]->name, shown[i]->name))
			return false;
	return true;
}

static void put_typed(tbuf *b, const trace_value *v, const vk_field *f, int level,
		      trace_textcache *c)
{
	if (!f)
		return put_value(b, v, c);
	if (f->flags & VK_F_PNEXT) {
		if (level == 0 && v->kind == TRACE_ARRAY) {
			tbuf_addc(b, '[');
			for (uint32_t i = 0; i < v->len; i++) {
				if (i)
					tbuf_add(b, ", ", 2);
				const vk_struct_info *info = pnext_struct(&v->items[i], c);
				if (info)
					put_struct_plain(b, &v->items[i], info, c);
				else
					put_value(b, &v->items[i], c);
			}
			tbuf_addc(b, ']');
			return;
		}
		return put_value(b, v, c);
	}
	int want = field_levels(f);
	if (level < want && v->kind == TRACE_ARRAY) {
		tbuf_addc(b, '[');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				tbuf_add(b, ", ", 2);
			put_typed(b, &v->items[i], f, level + 1, c);
		}
		tbuf_addc(b, ']');
		return;
	}
	if (level != want)
		return put_value(b, v, c);
	switch ((vk_base)f->base) {
	case VK_B_ENUM:
		if (v->kind == TRACE_ENUM && shown_canonical(c, v, f->ref)) {
			const char *name = trace_enum_name(v->en.sig, v->en.value);
			if (name && is_ident(name, false) && strcmp(name, "null") &&
			    strcmp(name, "true") && strcmp(name, "false")) {
				tbuf_adds(b, name);
				return;
			}
		}
		break;
	case VK_B_BITMASK:
		if (v->kind == TRACE_BITMASK && bitmask_plain(v, f->ref)) {
			put_bitmask_plain(b, v);
			return;
		}
		/* a bare number here reads as a bitmask: other numbers say so */
		if (v->kind == TRACE_UINT) {
			tbuf_add(b, "!uint ", 6);
		} else if (v->kind == TRACE_SINT) {
			tbuf_add(b, "!sint ", 6);
		} else if (v->kind == TRACE_POINTER) {
			tbuf_add(b, "!pointer ", 9);
		}
		break;
	case VK_B_STRUCT: {
		const vk_struct_info *info = f->ref;
		if (v->kind == TRACE_STRUCT && !info->blob &&
		    canonical(c, v->st.sig, info, TRACE_STRUCT)) {
			put_struct_plain(b, v, info, c);
			return;
		}
		break;
	}
	default:
		break;
	}
	put_value(b, v, c);
}

void trace_text_header(tbuf *b, const trace_header *h)
{
	tbuf_add(b, "{tracekit: 1, semantic_version: ", 32);
	put_u64(b, h->semantic_version);
	tbuf_add(b, ", properties: {", 15);
	for (uint32_t i = 0; i < h->nprops; i++) {
		if (i)
			tbuf_add(b, ", ", 2);
		put_key(b, h->props[i].name);
		tbuf_add(b, ": ", 2);
		put_quoted(b, h->props[i].value, strlen(h->props[i].value));
	}
	tbuf_add(b, "}}", 2);
}

static void put_frame(tbuf *b, const trace_frame *f)
{
	const char *sep = "";
	tbuf_addc(b, '{');
	const char *keys[3] = {"module", "function", "file"};
	const char *vals[3] = {f->module, f->function, f->filename};
	for (int i = 0; i < 3; i++) {
		if (!vals[i])
			continue;
		tbuf_addf(b, "%s%s: ", sep, keys[i]);
		put_quoted(b, vals[i], strlen(vals[i]));
		sep = ", ";
	}
	if (f->line >= 0) {
		tbuf_addf(b, "%sline: ", sep);
		put_u64(b, (uint64_t)f->line);
		sep = ", ";
	}
	if (f->offset >= 0) {
		tbuf_addf(b, "%soffset: ", sep);
		put_hex(b, (uint64_t)f->offset);
	}
	tbuf_addc(b, '}');
}

void trace_text_call(tbuf *b, const trace_call *c, trace_textcache *cache)
{
	tbuf_add(b, "{call: ", 7);
	put_u64(b, c->no);
	tbuf_add(b, ", thread: ", 10);
	put_u64(b, c->thread);
	const rendered *r = render(cache, c->sig, true);
	tbuf_add(b, r->head, r->headlen);
	for (uint32_t i = 0; i < c->sig->nargs; i++) {
		tbuf_add(b, r->keys[i], r->keylens[i]);
		put_typed(b, &c->args[i], r->fields[i], 0, cache);
	}
	if (c->sig->nargs)
		tbuf_addc(b, '}');
	if (c->ret) {
		tbuf_add(b, ", ret: ", 7);
		put_typed(b, c->ret, r->ret, 0, cache);
	}
	if (c->flags) {
		tbuf_add(b, ", flags: [", 10);
		const char *sep = "";
		if (c->flags & TRACE_CALL_FAKE) {
			tbuf_add(b, "fake", 4);
			sep = ", ";
		}
		if (c->flags & TRACE_CALL_INCOMPLETE)
			tbuf_addf(b, "%sincomplete", sep);
		tbuf_addc(b, ']');
	}
	if (c->nframes) {
		tbuf_add(b, ", backtrace: [", 14);
		for (uint32_t i = 0; i < c->nframes; i++) {
			if (i)
				tbuf_add(b, ", ", 2);
			put_frame(b, c->backtrace[i]);
		}
		tbuf_addc(b, ']');
	}
	tbuf_addc(b, '}');
}

/* ------------------------------------------------------------------ */

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void trace_base64_encode(tbuf *b, const uint8_t *p, size_t n)
{
	size_t out = (n + 2) / 3 * 4;
	if (b->cap - b->len < out)
		tbuf_grow(b, out);
	char *o = b->data + b->len;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = b64[v >> 18];
		*o++ = b64[v >> 12 & 63];
		*o++ = b64[v >> 6 & 63];
		*o++ = b64[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		*o++ = b64[v >> 18];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	b->len += out;
}

long trace_base64_decode(uint8_t *out, const char *s, size_t n)
{
	static int8_t rev[256];
	static bool init;
	if (!init) {
		memset(rev, -1, sizeof(rev));
		for (int i = 0; i < 64; i++)
			rev[(uint8_t)b64[i]] = (int8_t)i;
		init = true;
	}
	long len = 0;
	uint32_t acc = 0;
	int bits = 0;
	size_t pad = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)s[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad || rev[c] < 0)
			return -1;
		acc = acc << 6 | (uint32_t)rev[c];
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (uint8_t)(acc >> bits);
		}
	}
	if (pad > 2 || bits >= 6 || (acc & ((1u << bits) - 1)))
		return -1;
	return len;
}
