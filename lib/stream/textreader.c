/*
 * The text encoding, read: each line is one YAML document (a flow
 * mapping) read as libyaml's events: scanned by flowscan.c where the line
 * is in the form the writer writes, else parsed by libyaml's event
 * parser.  Values are typed by the
 * rules in man/trace-format.5: quoted scalars are strings, plain ones are
 * null, booleans, integers, hex pointers or floats, and tags say the rest.
 * Signatures are rebuilt from what the line shows and interned, so a
 * function keeps one signature however many lines name it.
 */
#include "flowscan.h"
#include "internal.h"
#include "vkschema.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <yaml.h>

#define TAG_BINARY "tag:yaml.org,2002:binary"
#define MAX_LINE (1u << 30)

struct trace_textreader {
	trace_source *s;
	trace_sigtab *t;
	yaml_parser_t parser;
	bool have_parser;
	yaml_event_t ev;
	bool have_ev;
	trace_flowscan fast;   /* the line's events, where flowscan.c read it */
	size_t fast_next;      /* the next of them, or SIZE_MAX: libyaml's */
	bool no_fast;          /* TRACE_TEXT_LIBYAML=1: every line libyaml's */
	uint64_t lineno;       /* of the line being read */
	uint64_t line_at;      /* its stream offset */
	int64_t call_no;       /* for messages */
	uint64_t next_no;
	trace_call *call;
	trace_error *err;
	tbuf names;            /* scratch: names of a signature being built */
	tbuf flags;            /* scratch: enum and bitmask entries */
	tbuf text;             /* scratch: a decoded !latin1 string */
	const vk_field *stype; /* the schema's sType member, for pNext items */
	bool unterminated;     /* the line read last ends the input, no newline */
	bool ended;            /* a cut last line was dropped: nothing follows */
};

#define TRY(x)                   \
	do {                     \
		if ((x) < 0)     \
			return -1; \
	} while (0)

static int failv(trace_textreader *x, size_t column, const char *fmt, va_list ap)
{
	trace_error *err = x->err;
	trace_error_clear(err);
	trace_source_locate(x->s, err, x->line_at + column);
	err->file_offset = -1;
	err->line = (int64_t)x->lineno;
	err->column = (int64_t)column + 1;
	err->call = x->call_no;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return -1;
}

static int fail_at(trace_textreader *x, size_t column, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(trace_textreader *x, size_t column, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(x, column, fmt, ap);
	va_end(ap);
	return -1;
}

/* An error at the current event. */
static int fail(trace_textreader *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(trace_textreader *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(x, x->have_ev ? x->ev.start_mark.column : 0, fmt, ap);
	va_end(ap);
	return -1;
}

static void event_delete(trace_textreader *x)
{
	if (x->have_ev && x->fast_next == SIZE_MAX)
		yaml_event_delete(&x->ev);
	x->have_ev = false;
}

static int next(trace_textreader *x)
{
	event_delete(x);
	if (x->fast_next != SIZE_MAX) {
		x->ev = x->fast.ev[x->fast_next];
		x->fast_next += x->fast_next + 1 < x->fast.nev;
		x->have_ev = true;
		return 0;
	}
	if (!yaml_parser_parse(&x->parser, &x->ev)) {
		const char *p = x->parser.problem ? x->parser.problem : "malformed YAML";
		return fail_at(x, x->parser.problem_mark.column, "not a YAML line: %s", p);
	}
	x->have_ev = true;
	return 0;
}

static const char *scalar(trace_textreader *x, size_t *len)
{
	*len = x->ev.data.scalar.length;
	return (const char *)x->ev.data.scalar.value;
}

static const char *tag_of(trace_textreader *x)
{
	const yaml_char_t *t = NULL;
	if (x->ev.type == YAML_SCALAR_EVENT)
		t = x->ev.data.scalar.tag;
	else if (x->ev.type == YAML_SEQUENCE_START_EVENT)
		t = x->ev.data.sequence_start.tag;
	else if (x->ev.type == YAML_MAPPING_START_EVENT)
		t = x->ev.data.mapping_start.tag;
	if (t && !strcmp((const char *)t, "!"))
		return NULL;
	return (const char *)t;
}

static bool plain(trace_textreader *x)
{
	return x->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* ------------------------------------------------------------------ */
/* Scalars. */

/* UTF-8 from libyaml (always valid) into code points. */
static uint32_t *decode_utf8(trace_arena *a, const char *str, size_t n, uint32_t *len)
{
	const uint8_t *s = (const uint8_t *)str;
	uint32_t *out = trace_arena_alloc(a, sizeof(*out) * (n + 1));
	uint32_t k = 0;
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		uint32_t cp;
		size_t l = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
		cp = l == 1 ? c : l == 2 ? c & 0x1fu : l == 3 ? c & 0x0fu : c & 0x07u;
		for (size_t j = 1; j < l && i + j < n; j++)
			cp = cp << 6 | (s[i + j] & 0x3fu);
		out[k++] = cp;
		i += l;
	}
	*len = k;
	return out;
}

static int plain_value(trace_textreader *x, trace_value *v)
{
	size_t n;
	const char *s = scalar(x, &n);
	int64_t i;
	if (!n || (n == 1 && s[0] == '~') || !strcmp(s, "null")) {
		v->kind = TRACE_NULL;
	} else if (!strcmp(s, "true") || !strcmp(s, "false")) {
		v->kind = TRACE_BOOL;
		v->b = s[0] == 't';
	} else if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		v->kind = TRACE_POINTER;
		if (!trace_text_u64(s + 2, n - 2, 16, &v->u))
			return fail(x, "bad pointer '%s'", s);
	} else if ((s[0] >= '0' && s[0] <= '9') && trace_text_u64(s, n, 10, &v->u)) {
		v->kind = TRACE_UINT;
	} else if (s[0] == '-' && trace_text_int(s, n, &i) && i < 0) {
		v->kind = TRACE_SINT;
		v->i = i;
	} else if (trace_text_is_float(s, n)) {
		v->kind = TRACE_FLOAT;
		v->f = trace_text_real_f(s);
	} else {
		return fail(x, "'%s' is not a value (strings are quoted; see trace-format(5))", s);
	}
	return 0;
}

static const trace_enum_sig *enum_sig(trace_textreader *x, const char *name, size_t nlen,
				      int64_t value)
{
	if (!name)
		return trace_sigtab_enum(x->t, 0, NULL);
	trace_enum_entry e = {trace_sigtab_string(x->t, name, nlen), value};
	return trace_sigtab_enum(x->t, 1, &e);
}

/* "NAME=VALUE" or "VALUE" */
static int enum_scalar(trace_textreader *x, trace_value *v)
{
	size_t n;
	const char *s = scalar(x, &n);
	const char *eq = memchr(s, '=', n);
	v->kind = TRACE_ENUM;
	if (!eq) {
		if (!trace_text_int(s, n, &v->en.value))
			return fail(x, "bad enum '%s' (NAME=VALUE or VALUE)", s);
		v->en.sig = enum_sig(x, NULL, 0, 0);
		return 0;
	}
	const char *last = eq;
	for (const char *p = eq; p; p = memchr(p + 1, '=', (size_t)(s + n - p - 1)))
		last = p;
	if (!trace_text_int(last + 1, (size_t)(s + n - last - 1), &v->en.value))
		return fail(x, "bad enum value in '%s'", s);
	v->en.sig = enum_sig(x, s, (size_t)(last - s), v->en.value);
	return 0;
}

static void add_flag(trace_textreader *x, const char *name, size_t n, uint64_t value)
{
	trace_bitmask_flag f = {trace_sigtab_string(x->t, name, n), value};
	tbuf_add(&x->flags, &f, sizeof(f));
}

static void finish_bitmask(trace_textreader *x, trace_value *v, uint64_t rest)
{
	trace_bitmask_flag *f = (trace_bitmask_flag *)x->flags.data;
	uint32_t nf = (uint32_t)(x->flags.len / sizeof(*f));
	v->kind = TRACE_BITMASK;
	v->bm.value = rest;
	for (uint32_t i = 0; i < nf; i++)
		v->bm.value |= f[i].value;
	v->bm.sig = trace_sigtab_bitmask(x->t, nf, f);
}

/* "A=0x1|B=0x4|0x10" or "0x0" */
static int bitmask_scalar(trace_textreader *x, trace_value *v)
{
	size_t n;
	const char *s = scalar(x, &n);
	uint64_t rest = 0;
	x->flags.len = 0;
	for (const char *p = s; p <= s + n;) {
		const char *bar = memchr(p, '|', (size_t)(s + n - p));
		const char *end = bar ? bar : s + n;
		const char *eq = memchr(p, '=', (size_t)(end - p));
		uint64_t val;
		if (!trace_text_uint(eq ? eq + 1 : p, (size_t)(end - (eq ? eq + 1 : p)), &val))
			return fail(x, "bad bitmask '%s' (NAME=0xVALUE|...)", s);
		if (eq)
			add_flag(x, p, (size_t)(eq - p), val);
		else
			rest |= val;
		if (!bar)
			break;
		p = bar + 1;
	}
	finish_bitmask(x, v, rest);
	return 0;
}

static int tagged_scalar(trace_textreader *x, const char *tag, trace_value *v)
{
	trace_arena *a = &x->call->arena;
	size_t n;
	const char *s = scalar(x, &n);
	if (!strcmp(tag, "!double")) {
		if (!trace_text_is_float(s, n) && !trace_text_int(s, n, &(int64_t){0}))
			return fail(x, "bad double '%s'", s);
		v->kind = TRACE_DOUBLE;
		v->d = trace_text_real(s, n);
	} else if (!strcmp(tag, "!float")) {
		if (!trace_text_is_float(s, n) && !trace_text_int(s, n, &(int64_t){0}))
			return fail(x, "bad float '%s'", s);
		v->kind = TRACE_FLOAT;
		v->f = trace_text_real_f(s);
	} else if (!strcmp(tag, "!latin1")) {
		uint32_t len;
		uint32_t *cp = decode_utf8(a, s, n, &len);
		char *out = trace_arena_alloc(a, len + 1);
		for (uint32_t i = 0; i < len; i++) {
			if (cp[i] > 0xff)
				return fail(x, "!latin1 string holds U+%04X, above U+00FF", cp[i]);
			out[i] = (char)cp[i];
		}
		v->kind = TRACE_STRING;
		v->str = out;
		v->len = len;
	} else if (!strcmp(tag, "!wstring")) {
		v->kind = TRACE_WSTRING;
		v->wstr = decode_utf8(a, s, n, &v->len);
	} else if (!strcmp(tag, TAG_BINARY)) {
		uint8_t *out = trace_arena_alloc(a, n / 4 * 3 + 4);
		long len = trace_base64_decode(out, s, n);
		if (len < 0)
			return fail(x, "bad base64 in !!binary");
		v->kind = TRACE_BLOB;
		v->blob = out;
		v->len = (uint32_t)len;
	} else if (!strcmp(tag, "!enum")) {
		return enum_scalar(x, v);
	} else if (!strcmp(tag, "!bitmask")) {
		return bitmask_scalar(x, v);
	} else if (!strcmp(tag, "!uint") || !strcmp(tag, "!pointer")) {
		/* where a bare number would read as the schema's bitmask */
		v->kind = tag[1] == 'u' ? TRACE_UINT : TRACE_POINTER;
		if (!trace_text_u64(s + 2, n - 2, 16, &v->u))
			return fail(x, "bad %s '%s'", tag, s);
	} else if (!strcmp(tag, "!sint")) {
		v->kind = TRACE_SINT;
		if (!trace_text_int(s, n, &v->i))
			return fail(x, "bad !sint '%s'", s);
	} else if (!strcmp(tag, "!missing")) {
		v->kind = TRACE_MISSING;
	} else {
		return fail(x, "unknown tag %s on a scalar", tag);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Collections. */

static int value(trace_textreader *x, trace_value *v, int depth, const vk_field *f, int level);

/* Values up to the end of a sequence, into a growing array; each in the
 * schema's type F at array level LEVEL (F NULL: no schema type). */
static int items_typed(trace_textreader *x, trace_value **out, uint32_t *len, int depth,
		       const vk_field *f, int level)
{
	trace_arena *a = &x->call->arena;
	uint32_t cap = 8, n = 0;
	trace_value *it = trace_arena_alloc(a, sizeof(*it) * cap);
	for (;;) {
		TRY(next(x));
		if (x->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (n == cap) {
			trace_value *bigger = trace_arena_alloc(a, sizeof(*it) * cap * 2);
			memcpy(bigger, it, sizeof(*it) * cap);
			it = bigger;
			cap *= 2;
		}
		TRY(value(x, &it[n++], depth + 1, f, level));
	}
	*out = it;
	*len = n;
	return 0;
}

static int items(trace_textreader *x, trace_value **out, uint32_t *len, int depth)
{
	return items_typed(x, out, len, depth, NULL, 0);
}

/* A plain integer item in WHAT: signed into *I, or, where I is NULL,
 * unsigned into *U (a bitmask's values use all 64 bits). */
static int int_item(trace_textreader *x, int64_t *i, uint64_t *u, const char *what)
{
	size_t n;
	if (x->ev.type != YAML_SCALAR_EVENT || !plain(x) ||
	    !(i ? trace_text_int(scalar(x, &n), x->ev.data.scalar.length, i)
		: trace_text_uint(scalar(x, &n), x->ev.data.scalar.length, u)))
		return fail(x, "expected an %sinteger in %s", i ? "" : "unsigned ", what);
	return 0;
}

/*
 * The bytes of a string scalar, wherever one stands (names, properties,
 * frames): a !latin1 tag maps each character U+0000..U+00FF to one byte.
 * The result lives until the next call.
 */
static int text_scalar(trace_textreader *x, const char **out, size_t *len)
{
	const char *tag = tag_of(x);
	const char *s = (const char *)x->ev.data.scalar.value;
	size_t n = x->ev.data.scalar.length;
	if (!tag) {
		*out = s;
		*len = n;
		return 0;
	}
	if (strcmp(tag, "!latin1"))
		return fail(x, "unknown tag %s on a string", tag);
	x->text.len = 0;
	const uint8_t *u = (const uint8_t *)s;
	for (size_t i = 0; i < n;) {
		uint32_t cp = u[i];
		size_t l = 1;
		if (cp >= 0x80) {
			if ((cp & 0xe0) != 0xc0 || i + 1 >= n)
				return fail(x, "!latin1 string holds a character above U+00FF");
			cp = (cp & 0x1f) << 6 | (u[i + 1] & 0x3f);
			l = 2;
		}
		if (cp > 0xff)
			return fail(x, "!latin1 string holds a character above U+00FF");
		tbuf_addc(&x->text, (char)cp);
		i += l;
	}
	tbuf_addc(&x->text, 0);
	*out = x->text.data;
	*len = x->text.len - 1;
	return 0;
}

/*
 * The NAME of a [NAME, VALUE] sequence, interned (text_scalar's result
 * lives only until the next call), and the VALUE's event read; NOT_NAME
 * is the message when the first item is no name.
 */
static int pair_name(trace_textreader *x, const char *not_name, const char **name, size_t *n)
{
	TRY(next(x));
	if (x->ev.type != YAML_SCALAR_EVENT)
		return fail(x, "%s", not_name);
	const char *s;
	TRY(text_scalar(x, &s, n));
	*name = trace_sigtab_string(x->t, s, *n);
	return next(x);
}

/* The end of a [NAME, VALUE] sequence; NOT_END is the message when more
 * follows. */
static int pair_end(trace_textreader *x, const char *not_end)
{
	TRY(next(x));
	if (x->ev.type != YAML_SEQUENCE_END_EVENT)
		return fail(x, "%s", not_end);
	return 0;
}

/* !enum ["name", value] */
static int enum_seq(trace_textreader *x, trace_value *v)
{
	size_t n;
	const char *iname;
	TRY(pair_name(x, "expected the name in !enum [NAME, VALUE]", &iname, &n));
	TRY(int_item(x, &v->en.value, NULL, "!enum [NAME, VALUE]"));
	TRY(pair_end(x, "expected the end of !enum [NAME, VALUE]"));
	v->kind = TRACE_ENUM;
	v->en.sig = enum_sig(x, iname, n, v->en.value);
	return 0;
}

/* !bitmask [["name", 0x1], ..., 0x10] */
static int bitmask_seq(trace_textreader *x, trace_value *v)
{
	uint64_t rest = 0;
	x->flags.len = 0;
	for (;;) {
		TRY(next(x));
		if (x->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		uint64_t val;
		if (x->ev.type == YAML_SCALAR_EVENT) {
			TRY(int_item(x, NULL, &val, "!bitmask"));
			rest |= val;
			continue;
		}
		if (x->ev.type != YAML_SEQUENCE_START_EVENT)
			return fail(x, "expected [NAME, VALUE] in !bitmask");
		size_t n;
		const char *name;
		TRY(pair_name(x, "expected a flag name in !bitmask", &name, &n));
		TRY(int_item(x, NULL, &val, "!bitmask"));
		TRY(pair_end(x, "expected the end of [NAME, VALUE] in !bitmask"));
		add_flag(x, name, n, val);
	}
	finish_bitmask(x, v, rest);
	return 0;
}

/*
 * Keys of a mapping and a value for each: struct members, arguments.  A
 * key that is FIELDS[i]'s name at place i gives its value the schema's
 * type (as the writer decides).  A pNext item (PNEXT) is typed by its
 * first member, sType: *INFO is the struct it names.
 */
static int members(trace_textreader *x, trace_value **vals, uint32_t *count, int depth,
		   const vk_field *fields, uint32_t nfields, bool pnext,
		   const vk_struct_info **info)
{
	trace_arena *a = &x->call->arena;
	uint32_t cap = 8, n = 0;
	trace_value *it = trace_arena_alloc(a, sizeof(*it) * cap);
	size_t names_at = x->names.len;
	for (;;) {
		TRY(next(x));
		if (x->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (x->ev.type != YAML_SCALAR_EVENT)
			return fail(x, "expected a name");
		size_t len;
		const char *k;
		TRY(text_scalar(x, &k, &len));
		const char *name = trace_sigtab_string(x->t, k, len);
		tbuf_add(&x->names, &name, sizeof(name));
		if (n == cap) {
			trace_value *bigger = trace_arena_alloc(a, sizeof(*it) * cap * 2);
			memcpy(bigger, it, sizeof(*it) * cap);
			it = bigger;
			cap *= 2;
		}
		const vk_field *f = NULL;
		if (pnext && n == 0 && !strcmp(name, "sType"))
			f = x->stype;
		else if (fields && n < nfields && !strcmp(name, fields[n].name))
			f = &fields[n];
		TRY(next(x));
		TRY(value(x, &it[n], depth + 1, f, 0));
		if (pnext && n == 0) {
			const vk_struct_info *s = NULL;
			if (f && it[0].kind == TRACE_ENUM)
				s = vk_struct_by_stype((int32_t)it[0].en.value);
			if (!s || s->blob)
				return fail(x, "a pNext item without a !struct: tag starts with "
					    "the sType of a struct the schema knows");
			*info = s;
			fields = s->fields;
			nfields = s->nfields;
		}
		n++;
	}
	(void)names_at;
	*vals = it;
	*count = n;
	return 0;
}

/* A struct the schema knows, written as a plain mapping. */
static int typed_struct(trace_textreader *x, trace_value *v, int depth,
			const vk_struct_info *info, bool pnext)
{
	size_t names_at = x->names.len;
	trace_value *m;
	uint32_t n;
	const vk_struct_info *chosen = info;
	TRY(members(x, &m, &n, depth, info ? info->fields : NULL, info ? info->nfields : 0, pnext,
		    &chosen));
	if (!chosen)
		return fail(x, "a pNext item without a !struct: tag starts with the sType of a "
			    "struct the schema knows");
	const char **names = (const char **)(x->names.data + names_at);
	bool same = n == chosen->sig.nmembers;
	for (uint32_t i = 0; same && i < n; i++)
		same = !strcmp(names[i], chosen->sig.member_names[i]);
	v->kind = TRACE_STRUCT;
	/* the schema's own signature, so the binary is what a capture writes */
	v->st.sig = same ? &chosen->sig
			 : trace_sigtab_struct(x->t, chosen->sig.name, n, names);
	v->st.members = m;
	x->names.len = names_at;
	return 0;
}

static bool is_word(const char *s, size_t n)
{
	if (!n || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return !(n == 4 && !memcmp(s, "null", 4)) && !(n == 4 && !memcmp(s, "true", 4)) &&
	       !(n == 5 && !memcmp(s, "false", 5));
}

/*
 * A plain scalar where the schema says an enum or a bitmask: a value's
 * name, or flags and numbers joined by '|'.  0 when it is one, 1 when it
 * is not (it is read as any plain scalar), -1 on error.
 */
static int typed_scalar(trace_textreader *x, trace_value *v, const vk_field *f)
{
	size_t n;
	const char *s = scalar(x, &n);
	if (f->base == VK_B_ENUM) {
		if (!is_word(s, n))
			return 1;
		const vk_enum_info *e = f->ref;
		for (uint32_t i = 0; i < e->sig.nvalues; i++) {
			if (!strcmp(e->sig.values[i].name, s)) {
				v->kind = TRACE_ENUM;
				v->en.value = e->sig.values[i].value;
				/* the signature a capture gives the value */
				v->en.sig = vk_enum_sig(e, v->en.value);
				return 0;
			}
		}
		return fail(x, "'%s' is not a value of %s", s, e->name);
	}
	if (f->base != VK_B_BITMASK)
		return 1;
	const vk_bitmask_info *bm = f->ref;
	uint64_t value = 0;
	for (const char *p = s; p <= s + n;) {
		const char *bar = memchr(p, '|', (size_t)(s + n - p));
		size_t len = (size_t)((bar ? bar : s + n) - p);
		uint64_t u;
		if (trace_text_uint(p, len, &u)) {
			value |= u;
		} else if (is_word(p, len)) {
			uint32_t i;
			for (i = 0; i < bm->sig.nflags; i++)
				if (strlen(bm->sig.flags[i].name) == len &&
				    !memcmp(bm->sig.flags[i].name, p, len))
					break;
			if (i == bm->sig.nflags)
				return fail(x, "'%.*s' is not a flag of %s", (int)len, p, bm->name);
			value |= bm->sig.flags[i].value;
		} else {
			return p == s && !bar ? 1 : fail(x, "bad flags '%s' for %s", s, bm->name);
		}
		if (!bar)
			break;
		p = bar + 1;
	}
	v->kind = TRACE_BITMASK;
	v->bm.value = value;
	v->bm.sig = vk_bitmask_sig(bm, value);
	return 0;
}

static int field_levels(const vk_field *f)
{
	return f->ptr + (f->count ? 1 : 0);
}

static int value(trace_textreader *x, trace_value *v, int depth, const vk_field *f, int level)
{
	memset(v, 0, sizeof(*v));
	if (depth > TRACE_MAX_DEPTH)
		return fail(x, "values nested deeper than %d levels", TRACE_MAX_DEPTH);
	const char *tag = tag_of(x);
	bool pnext = f && (f->flags & VK_F_PNEXT);
	/* the schema's type applies here: its base, not an array level */
	bool at_base = f && !pnext && level == field_levels(f);
	switch (x->ev.type) {
	case YAML_SCALAR_EVENT:
		if (tag)
			return tagged_scalar(x, tag, v);
		if (plain(x) && at_base) {
			int k = typed_scalar(x, v, f);
			if (k <= 0)
				return k;
		}
		if (plain(x))
			return plain_value(x, v);
		v->kind = TRACE_STRING;
		v->str = trace_arena_strndup(&x->call->arena, (const char *)x->ev.data.scalar.value,
					     x->ev.data.scalar.length);
		v->len = (uint32_t)x->ev.data.scalar.length;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
		if (!tag) {
			v->kind = TRACE_ARRAY;
			if (pnext && level == 0)
				return items_typed(x, &v->items, &v->len, depth, f, 1);
			if (f && !pnext && level < field_levels(f))
				return items_typed(x, &v->items, &v->len, depth, f, level + 1);
			return items(x, &v->items, &v->len, depth);
		}
		if (!strcmp(tag, "!repr")) {
			TRY(items(x, &v->items, &v->len, depth));
			if (v->len != 2)
				return fail(x, "!repr takes [HUMAN, MACHINE], not %u values", v->len);
			v->kind = TRACE_REPR;
			return 0;
		}
		if (!strcmp(tag, "!enum"))
			return enum_seq(x, v);
		if (!strcmp(tag, "!bitmask"))
			return bitmask_seq(x, v);
		if (!strcmp(tag, "!wstring")) {
			trace_value *cu;
			uint32_t n;
			TRY(items(x, &cu, &n, depth));
			uint32_t *w = trace_arena_alloc(&x->call->arena, sizeof(*w) * (n + 1));
			for (uint32_t i = 0; i < n; i++) {
				if (cu[i].kind != TRACE_UINT || cu[i].u > UINT32_MAX)
					return fail(x, "!wstring [...] holds code units 0 to 2^32-1");
				w[i] = (uint32_t)cu[i].u;
			}
			v->kind = TRACE_WSTRING;
			v->wstr = w;
			v->len = n;
			return 0;
		}
		return fail(x, "unknown tag %s on a sequence", tag);
	case YAML_MAPPING_START_EVENT: {
		const char *name;
		/* libyaml has already decoded the tag's %XX escapes */
		if (tag && !strncmp(tag, "!struct:", 8)) {
			name = trace_arena_strndup(&x->call->arena, tag + 8, strlen(tag + 8));
		} else if (tag && !strncmp(tag, "!latin1struct:", 14)) {
			const uint8_t *u = (const uint8_t *)tag + 14;
			char *o = trace_arena_alloc(&x->call->arena, strlen(tag + 14) + 1);
			name = o;
			while (*u) {
				if (*u < 0x80) {
					*o++ = (char)*u++;
				} else if ((*u & 0xe0) == 0xc0 && u[1] && *u <= 0xc3) {
					*o++ = (char)((*u & 0x1f) << 6 | (u[1] & 0x3f));
					u += 2;
				} else {
					return fail(x, "!latin1struct: name holds a character above U+00FF");
				}
			}
			*o = 0;
		} else if (!tag && pnext && level == 1) {
			return typed_struct(x, v, depth, NULL, true);
		} else if (!tag && at_base && f->base == VK_B_STRUCT &&
			   !((const vk_struct_info *)f->ref)->blob) {
			return typed_struct(x, v, depth, f->ref, false);
		} else {
			return fail(x, "a mapping value needs a !struct:NAME tag");
		}
		size_t names_at = x->names.len;
		trace_value *m;
		uint32_t n;
		TRY(members(x, &m, &n, depth, NULL, 0, false, NULL));
		const char **names = (const char **)(x->names.data + names_at);
		v->kind = TRACE_STRUCT;
		v->st.sig = trace_sigtab_struct(x->t, name, n, names);
		v->st.members = m;
		x->names.len = names_at;
		return 0;
	}
	case YAML_ALIAS_EVENT:
		return fail(x, "YAML aliases are not part of the text form");
	default:
		return fail(x, "expected a value");
	}
}

/* ------------------------------------------------------------------ */
/* Lines. */

/* The next line that is not blank or a comment; 0 at the end. */
static int read_line(trace_textreader *x, const char **line, size_t *len)
{
	trace_source *s = x->s;
	for (;;) {
		size_t scanned = 0;
		const uint8_t *nl;
		for (;;) {
			nl = memchr(s->p + scanned, '\n', (size_t)(s->end - s->p) - scanned);
			if (nl || s->eof)
				break;
			scanned = (size_t)(s->end - s->p);
			if (scanned > MAX_LINE) {
				x->line_at = trace_source_offset(s);
				x->lineno++;
				return fail_at(x, 0, "line longer than 1 GiB");
			}
			TRY(trace_source_need_slow(s, scanned + 1, x->err));
		}
		if (s->p == s->end)
			return 0;
		const uint8_t *end = nl ? nl : s->end;
		x->unterminated = !nl;
		x->line_at = trace_source_offset(s);
		x->lineno++;
		*line = (const char *)s->p;
		*len = (size_t)(end - s->p);
		s->p = nl ? nl + 1 : s->end;
		if (*len && (*line)[*len - 1] == '\r')
			(*len)--;
		size_t i = 0;
		while (i < *len && ((*line)[i] == ' ' || (*line)[i] == '\t'))
			i++;
		if (i == *len || (*line)[i] == '#')
			continue;
		if (memchr(*line, 0, *len))
			return fail_at(x, (size_t)((const char *)memchr(*line, 0, *len) - *line),
				       "NUL byte in a text trace");
		return 1;
	}
}

/* Starts parsing one line: returns at its top-level MAPPING_START. */
static int begin(trace_textreader *x, const char *line, size_t len)
{
	event_delete(x);
	x->fast_next = SIZE_MAX;
	if (!x->no_fast && trace_flowscan_line(&x->fast, line, len)) {
		x->fast_next = 0;
	} else {
		if (x->have_parser)
			yaml_parser_delete(&x->parser);
		yaml_parser_initialize(&x->parser);
		x->have_parser = true;
		yaml_parser_set_input_string(&x->parser, (const unsigned char *)line, len);
	}
	do
		TRY(next(x));
	while (x->ev.type == YAML_STREAM_START_EVENT || x->ev.type == YAML_DOCUMENT_START_EVENT);
	if (x->ev.type != YAML_MAPPING_START_EVENT)
		return fail(x, "expected a record: {call: N, ...} or the header");
	return 0;
}

/* After the top-level mapping: nothing else may follow on the line. */
static int end(trace_textreader *x)
{
	TRY(next(x));
	if (x->ev.type != YAML_DOCUMENT_END_EVENT)
		return fail(x, "more than one record on a line");
	TRY(next(x));
	if (x->ev.type != YAML_STREAM_END_EVENT)
		return fail(x, "more than one record on a line");
	return 0;
}

static int key(trace_textreader *x, const char **k)
{
	*k = NULL;
	TRY(next(x));
	if (x->ev.type == YAML_MAPPING_END_EVENT) {
		*k = NULL;
		return 0;
	}
	if (x->ev.type != YAML_SCALAR_EVENT)
		return fail(x, "expected a key");
	*k = (const char *)x->ev.data.scalar.value;
	return 0;
}

static int uint_field(trace_textreader *x, uint64_t *out, const char *what)
{
	TRY(next(x));
	size_t n;
	if (x->ev.type != YAML_SCALAR_EVENT || !plain(x) ||
	    !trace_text_u64(scalar(x, &n), x->ev.data.scalar.length, 10, out))
		return fail(x, "%s must be a non-negative integer", what);
	return 0;
}

int trace_textreader_header(trace_textreader *x, trace_header *h, trace_arena *a,
			    trace_error *err)
{
	x->err = err;
	const char *line;
	size_t len;
	int r = read_line(x, &line, &len);
	if (r <= 0)
		return r < 0 ? -1 : fail_at(x, 0, "no header line");
	TRY(begin(x, line, len));
	memset(h, 0, sizeof(*h));
	h->version = TRACE_FORMAT_VERSION;
	h->semantic_version = TRACE_FORMAT_VERSION;
	bool seen = false;
	size_t cap = 0;
	for (;;) {
		const char *k;
		TRY(key(x, &k));
		if (!k)
			break;
		if (!strcmp(k, "tracekit")) {
			uint64_t v;
			TRY(uint_field(x, &v, "tracekit"));
			if (v != 1)
				return fail(x, "text form version %llu; this reads version 1",
					    (unsigned long long)v);
			seen = true;
		} else if (!strcmp(k, "semantic_version")) {
			uint64_t v;
			TRY(uint_field(x, &v, "semantic_version"));
			if (v > TRACE_FORMAT_VERSION)
				return fail(x, "semantic_version %llu is above the format's %d",
					    (unsigned long long)v, TRACE_FORMAT_VERSION);
			h->semantic_version = (uint32_t)v;
		} else if (!strcmp(k, "properties")) {
			TRY(next(x));
			if (x->ev.type != YAML_MAPPING_START_EVENT)
				return fail(x, "properties must be a mapping");
			for (;;) {
				const char *pk;
				TRY(key(x, &pk));
				if (!pk)
					break;
				const char *ps;
				size_t pl;
				(void)pk;
				TRY(text_scalar(x, &ps, &pl));
				char *name = trace_arena_strndup(a, ps, pl);
				TRY(next(x));
				if (x->ev.type != YAML_SCALAR_EVENT || plain(x))
					return fail(x, "property %s must be a quoted string", name);
				TRY(text_scalar(x, &ps, &pl));
				trace_header_add(h, a, &cap, name, trace_arena_strndup(a, ps, pl));
			}
		} else {
			return fail(x, "unknown header key '%s'", k);
		}
	}
	if (!seen)
		return fail_at(x, 0, "the first line is not a tracekit header ({tracekit: 1, ...})");
	return end(x);
}

static int read_record(trace_textreader *x, trace_call **out, trace_error *err)
{
	x->err = err;
	const char *line;
	size_t len;
	x->call_no = (int64_t)x->next_no; /* read_line's errors are this record's */
	int r = read_line(x, &line, &len);
	if (r <= 0)
		return r;
	trace_call *c = x->call;
	trace_call_reset(c);
	c->offset = (int64_t)x->line_at;
	c->no = x->next_no;
	x->call_no = (int64_t)c->no;
	TRY(begin(x, line, len));
	const char *fn = NULL;
	size_t fnlen = 0;
	trace_value *args = NULL;
	uint32_t nargs = 0;
	x->names.len = 0;
	for (;;) {
		const char *k;
		TRY(key(x, &k));
		if (!k)
			break;
		if (!strcmp(k, "call")) {
			TRY(uint_field(x, &c->no, "call"));
			x->call_no = (int64_t)c->no;
		} else if (!strcmp(k, "thread")) {
			uint64_t t;
			TRY(uint_field(x, &t, "thread"));
			if (t > UINT32_MAX)
				return fail(x, "thread number %llu is too large",
					    (unsigned long long)t);
			c->thread = (uint32_t)t;
		} else if (!strcmp(k, "fn")) {
			TRY(next(x));
			if (x->ev.type != YAML_SCALAR_EVENT)
				return fail(x, "fn must be a function name");
			const char *s;
			TRY(text_scalar(x, &s, &fnlen));
			size_t at;
			char why[64];
			if (!trace_name_ok((const uint8_t *)s, fnlen, &at, why, sizeof(why)))
				return fail(x, "%s", why);
			fn = trace_sigtab_string(x->t, s, fnlen);
		} else if (!strcmp(k, "args")) {
			TRY(next(x));
			if (x->ev.type != YAML_MAPPING_START_EVENT)
				return fail(x, "args must be a mapping of name: value");
			x->names.len = 0;
			const vk_command_info *cmd = trace_vk_command(fn);
			TRY(members(x, &args, &nargs, 0, cmd ? cmd->params : NULL,
				    cmd ? cmd->nparams : 0, false, NULL));
		} else if (!strcmp(k, "ret")) {
			TRY(next(x));
			c->ret = trace_call_values(c, 1);
			const vk_command_info *cmd = trace_vk_command(fn);
			TRY(value(x, c->ret, 0, cmd ? cmd->ret : NULL, 0));
			if (c->ret->kind == TRACE_MISSING)
				c->ret = NULL; /* a missing return value is none */
		} else if (!strcmp(k, "flags")) {
			TRY(next(x));
			if (x->ev.type != YAML_SEQUENCE_START_EVENT)
				return fail(x, "flags must be a list: [fake, incomplete]");
			for (;;) {
				TRY(next(x));
				if (x->ev.type == YAML_SEQUENCE_END_EVENT)
					break;
				const char *f = x->ev.type == YAML_SCALAR_EVENT
							? (const char *)x->ev.data.scalar.value
							: "";
				if (!strcmp(f, "fake"))
					c->flags |= TRACE_CALL_FAKE;
				else if (!strcmp(f, "incomplete"))
					c->flags |= TRACE_CALL_INCOMPLETE;
				else
					return fail(x, "unknown flag '%s' (fake, incomplete)", f);
			}
		} else if (!strcmp(k, "backtrace")) {
			TRY(next(x));
			if (x->ev.type != YAML_SEQUENCE_START_EVENT)
				return fail(x, "backtrace must be a list of frames");
			tbuf frames = {0};
			for (;;) {
				if (next(x) < 0)
					goto bt_fail;
				if (x->ev.type == YAML_SEQUENCE_END_EVENT)
					break;
				if (x->ev.type != YAML_MAPPING_START_EVENT) {
					fail(x, "a backtrace frame is a mapping");
					goto bt_fail;
				}
				trace_frame f = {NULL, NULL, NULL, -1, -1};
				for (;;) {
					const char *fk;
					if (key(x, &fk) < 0)
						goto bt_fail;
					if (!fk)
						break;
					char kbuf[16];
					snprintf(kbuf, sizeof(kbuf), "%s", fk);
					if (next(x) < 0)
						goto bt_fail;
					if (x->ev.type != YAML_SCALAR_EVENT) {
						fail(x, "a frame's %s is a scalar", kbuf);
						goto bt_fail;
					}
					const char *sv;
					size_t sl;
					if (text_scalar(x, &sv, &sl) < 0)
						goto bt_fail;
					int64_t iv;
					if (!strcmp(kbuf, "module"))
						f.module = trace_sigtab_string(x->t, sv, sl);
					else if (!strcmp(kbuf, "function"))
						f.function = trace_sigtab_string(x->t, sv, sl);
					else if (!strcmp(kbuf, "file"))
						f.filename = trace_sigtab_string(x->t, sv, sl);
					else if (!strcmp(kbuf, "line") && trace_text_int(sv, sl, &iv) && iv >= 0)
						f.line = iv;
					else if (!strcmp(kbuf, "offset") && trace_text_int(sv, sl, &iv) && iv >= 0)
						f.offset = iv;
					else {
						fail(x, "bad frame entry %s: %s", kbuf, sv);
						goto bt_fail;
					}
				}
				const trace_frame *fr = trace_sigtab_frame(x->t, &f);
				tbuf_add(&frames, &fr, sizeof(fr));
			}
			c->nframes = (uint32_t)(frames.len / sizeof(trace_frame *));
			c->backtrace = trace_arena_alloc(&c->arena, frames.len ? frames.len : 1);
			if (frames.len)
				memcpy(c->backtrace, frames.data, frames.len);
			tbuf_free(&frames);
			continue;
bt_fail:
			tbuf_free(&frames);
			return -1;
		} else {
			return fail(x, "unknown record key '%s'", k);
		}
	}
	if (!fn)
		return fail_at(x, 0, "record without fn: the function name");
	c->sig = trace_sigtab_func(x->t, fn, nargs, (const char *const *)x->names.data);
	(void)fnlen;
	if (!args)
		args = trace_call_values(c, 0);
	c->args = args;
	TRY(end(x));
	x->next_no = c->no + 1;
	*out = c;
	return 1;
}

/*
 * A last line without its newline that does not read is a record cut off
 * (a capture killed, a full disk): the stream ends before it, and the
 * source says it was cut.  A bad line anywhere else is an error.
 */
int trace_textreader_next(trace_textreader *x, trace_call **out, trace_error *err)
{
	if (x->ended)
		return 0;
	int r = read_record(x, out, err);
	if (r < 0 && x->unterminated && x->s->eof && x->s->p == x->s->end) {
		x->ended = true;
		x->s->cut = true;
		trace_error_clear(err);
		return 0;
	}
	return r;
}

trace_textreader *trace_textreader_new(trace_source *s, trace_sigtab *t)
{
	trace_textreader *x = trace_xcalloc(1, sizeof(*x));
	x->s = s;
	x->t = t;
	x->call_no = -1;
	x->call = trace_xmalloc(sizeof(*x->call));
	trace_call_init(x->call);
	const vk_struct_info *base = vk_struct_lookup("VkBaseInStructure");
	x->stype = base && base->nfields ? &base->fields[0] : NULL;
	x->fast_next = SIZE_MAX;
	const char *e = getenv("TRACE_TEXT_LIBYAML");
	x->no_fast = e && !strcmp(e, "1");
	return x;
}

void trace_textreader_free(trace_textreader *x)
{
	if (!x)
		return;
	event_delete(x);
	trace_flowscan_free(&x->fast);
	if (x->have_parser)
		yaml_parser_delete(&x->parser);
	trace_call_free(x->call);
	free(x->call);
	tbuf_free(&x->names);
	tbuf_free(&x->flags);
	tbuf_free(&x->text);
	free(x);
}
