/*
 * Reader of apitrace's trace binary format, versions 0 to 6.
 *
 * Calls come out in the order apitrace's own parser returns them: when
 * their leave event is read, and calls still entered at the end of the
 * stream last, in enter order, flagged incomplete.  A stream that ends
 * inside an event was cut off (the capture was killed, the disk was
 * full): it ends at the last whole event, as apitrace's parser drops the
 * call it was in, and the source says it was cut (the reader warns once).
 * Inside the header it is an error: there is no stream to salvage.
 */
#include "binformat.h"
#include "internal.h"

#include <stdarg.h>
#include <stdlib.h>

#define MAX_SIG_ID (1u << 24)
#define MAX_PENDING (1u << 16)
#define MAX_BYTES (1u << 30)


typedef struct idtab {
	const void **v;
	size_t n;
} idtab;

struct trace_binreader {
	trace_source *s;
	trace_sigtab *t;
	uint32_t version;
	uint64_t next_no;
	idtab funcs, structs, enums, bitmasks, frames;
	trace_call **pending;
	size_t npending, cpending;
	trace_call **free;
	size_t nfree, cfree;
	trace_call *current;    /* returned last time, recycled next time */
	int64_t err_call;       /* the call being read, for messages */
	tbuf scratch;
	tbuf staged;            /* a leave's values, set on its call once whole */
	bool cut;               /* the stream ended inside an event */
	bool ended;             /* no event follows: only pending calls remain */
};

#define TRY(x)                   \
	do {                     \
		if ((x) < 0)     \
			return -1; \
	} while (0)

static int fail(trace_binreader *b, trace_error *err, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(trace_binreader *b, trace_error *err, uint64_t at, const char *fmt, ...)
{
	trace_error_clear(err);
	trace_source_locate(b->s, err, at);
	err->call = b->err_call;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* The stream ends inside WHAT.  Only the end of the input is short, so
 * this is a cut, which the caller may salvage (b->cut). */
static int truncated(trace_binreader *b, trace_error *err, const char *what)
{
	b->cut = true;
	b->s->cut = true;
	return fail(b, err, trace_source_offset(b->s),
		    "truncated trace: the stream ends inside %s", what);
}

static inline int rd_byte(trace_binreader *b, uint8_t *out, const char *what,
			  trace_error *err)
{
	trace_source *s = b->s;
	*out = 0;
	if (TRACE_UNLIKELY(s->p == s->end)) {
		TRY(trace_source_need_slow(s, 1, err));
		if (s->p == s->end)
			return truncated(b, err, what);
	}
	*out = *s->p++;
	return 0;
}

static int rd_uint_slow(trace_binreader *b, uint64_t *out, const char *what,
			trace_error *err)
{
	uint64_t v = 0;
	uint64_t at = trace_source_offset(b->s);
	for (unsigned shift = 0;; shift += 7) {
		uint8_t c;
		TRY(rd_byte(b, &c, what, err));
		if (shift >= 64 || (shift == 63 && (c & 0x7f) > 1))
			return fail(b, err, at, "integer in %s does not fit 64 bits", what);
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	*out = v;
	return 0;
}

static inline int rd_uint(trace_binreader *b, uint64_t *out, const char *what,
			  trace_error *err)
{
	trace_source *s = b->s;
	if (TRACE_LIKELY(s->end - s->p >= 10)) {
		const uint8_t *p = s->p;
		uint64_t v = p[0] & 0x7f;
		if (TRACE_LIKELY(!(p[0] & 0x80))) {
			s->p = p + 1;
			*out = v;
			return 0;
		}
		for (unsigned i = 1; i < 9; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				s->p = p + i + 1;
				*out = v;
				return 0;
			}
		}
	}
	return rd_uint_slow(b, out, what, err);
}

/* N bytes at the read position, consumed: *P points at them until the
 * next read. */
static int rd_span(trace_binreader *b, uint64_t n, const char *what, const uint8_t **p,
		   trace_error *err)
{
	if (n > MAX_BYTES)
		return fail(b, err, trace_source_offset(b->s),
			    "%s of %llu bytes is larger than 1 GiB", what,
			    (unsigned long long)n);
	TRY(trace_source_need(b->s, (size_t)n, err));
	if ((uint64_t)(b->s->end - b->s->p) < n)
		return truncated(b, err, what);
	*p = b->s->p;
	b->s->p += n;
	return 0;
}

static int rd_bytes(trace_binreader *b, trace_arena *a, const char **out, uint64_t n,
		    const char *what, trace_error *err)
{
	const uint8_t *p;
	TRY(rd_span(b, n, what, &p, err));
	*out = trace_arena_strndup(a, (const char *)p, (size_t)n);
	return 0;
}

static int rd_string(trace_binreader *b, trace_arena *a, const char **out, uint32_t *len,
		     const char *what, trace_error *err)
{
	uint64_t n;
	TRY(rd_uint(b, &n, what, err));
	TRY(rd_bytes(b, a, out, n, what, err));
	if (len)
		*len = (uint32_t)n;
	return 0;
}

/* A string that lives as long as the signature table. */
static int rd_sig_string(trace_binreader *b, const char **out, const char *what,
			 trace_error *err)
{
	uint64_t n;
	const uint8_t *p;
	TRY(rd_uint(b, &n, what, err));
	TRY(rd_span(b, n, what, &p, err));
	*out = trace_sigtab_string(b->t, (const char *)p, (size_t)n);
	return 0;
}

/* A function's name: printable ASCII (trace_name_ok); a byte
 * outside that is an error at its offset, not a message of two lines. */
static int rd_func_name(trace_binreader *b, const char **out, trace_error *err)
{
	uint64_t n;
	const uint8_t *p;
	TRY(rd_uint(b, &n, "function name", err));
	uint64_t at = trace_source_offset(b->s);
	TRY(rd_span(b, n, "function name", &p, err));
	size_t i;
	char why[64];
	if (!trace_name_ok(p, (size_t)n, &i, why, sizeof(why)))
		return fail(b, err, at + i, "%s", why);
	*out = trace_sigtab_string(b->t, (const char *)p, (size_t)n);
	return 0;
}

/* The signature with this id, or NULL when it is new (then *slot is set). */
static int lookup_id(trace_binreader *b, idtab *tab, uint64_t id, const void **found,
		     const char *what, trace_error *err)
{
	if (id >= MAX_SIG_ID)
		return fail(b, err, trace_source_offset(b->s),
			    "%s id %llu is out of range", what, (unsigned long long)id);
	if (id >= tab->n) {
		size_t n = tab->n ? tab->n : 64;
		while (n <= id)
			n *= 2;
		tab->v = trace_xrealloc(tab->v, n * sizeof(*tab->v));
		memset(tab->v + tab->n, 0, (n - tab->n) * sizeof(*tab->v));
		tab->n = n;
	}
	*found = tab->v[id];
	return 0;
}

/* A signature's id, and what it names when it was read before. */
static int rd_sig_id(trace_binreader *b, idtab *tab, uint64_t *id, const void **found,
		     const char *what, trace_error *err)
{
	TRY(rd_uint(b, id, what, err));
	return lookup_id(b, tab, *id, found, what, err);
}

/* A signature's count of values or flags: bounded, since each costs
 * memory before the next byte is read. */
static int rd_sig_count(trace_binreader *b, uint64_t *n, const char *what, const char *items,
			trace_error *err)
{
	TRY(rd_uint(b, n, what, err));
	if (*n > 1u << 20)
		return fail(b, err, trace_source_offset(b->s), "%s has %llu %s", what,
			    (unsigned long long)*n, items);
	return 0;
}

/* Names of a signature being read, in scratch storage. */
static int rd_names(trace_binreader *b, uint64_t n, const char ***names, const char *what,
		    trace_error *err)
{
	if (n > 1u << 20)
		return fail(b, err, trace_source_offset(b->s),
			    "%s has %llu entries", what, (unsigned long long)n);
	b->scratch.len = 0;
	for (uint64_t i = 0; i < n; i++) {
		const char *s;
		TRY(rd_sig_string(b, &s, what, err));
		tbuf_add(&b->scratch, &s, sizeof(s));
	}
	*names = (const char **)b->scratch.data;
	return 0;
}

static int rd_func_sig(trace_binreader *b, const trace_func_sig **out, trace_error *err)
{
	uint64_t id;
	const void *found;
	TRY(rd_sig_id(b, &b->funcs, &id, &found, "function signature", err));
	if (found) {
		*out = found;
		return 0;
	}
	const char *name = NULL, **names = NULL;
	uint64_t n;
	TRY(rd_func_name(b, &name, err));
	TRY(rd_uint(b, &n, "function signature", err));
	TRY(rd_names(b, n, &names, "function signature", err));
	*out = trace_sigtab_func(b->t, name, (uint32_t)n, names);
	b->funcs.v[id] = *out;
	return 0;
}

static int rd_value(trace_binreader *b, trace_arena *a, trace_value *v, int depth,
		    trace_error *err);

/* Enum signature entries and enum values are tagged integers. */
static int rd_tagged_int(trace_binreader *b, trace_arena *a, int64_t *out, int depth,
			 const char *what, trace_error *err)
{
	uint64_t at = trace_source_offset(b->s);
	trace_value v;
	TRY(rd_value(b, a, &v, depth + 1, err));
	switch (v.kind) {
	case TRACE_SINT: *out = v.i; return 0;
	case TRACE_UINT: *out = (int64_t)v.u; return 0;
	case TRACE_BOOL: *out = v.b; return 0;
	case TRACE_NULL: *out = 0; return 0;
	default:
		return fail(b, err, at, "%s is a %s, not an integer", what,
			    trace_value_kind_name(v.kind));
	}
}

/* An enum's value or a bitmask's flag: a name and 64 bits either way. */
typedef union named_value {
	trace_enum_entry en;
	trace_bitmask_flag bm;
} named_value;
_Static_assert(sizeof(named_value) == sizeof(trace_enum_entry) &&
	       sizeof(named_value) == sizeof(trace_bitmask_flag),
	       "an array of named_value is one of either");

/* An enum or a bitmask signature: the same list of names with values, an
 * enum's tagged integers and a bitmask's plain ones.  *OUT is the
 * trace_enum_sig or the trace_bitmask_sig. */
static int rd_named_values_sig(trace_binreader *b, trace_arena *a, bool is_enum,
			       const void **out, int depth, trace_error *err)
{
	const char *what = is_enum ? "enum signature" : "bitmask signature";
	idtab *tab = is_enum ? &b->enums : &b->bitmasks;
	uint64_t id, n;
	TRY(rd_sig_id(b, tab, &id, out, what, err));
	if (*out)
		return 0;
	TRY(rd_sig_count(b, &n, what, is_enum ? "values" : "flags", err));
	named_value *vals = trace_xmalloc(sizeof(*vals) * (n ? n : 1));
	for (uint64_t i = 0; i < n; i++) {
		int k = rd_sig_string(b, &vals[i].en.name, what, err);
		if (k == 0 && is_enum)
			k = rd_tagged_int(b, a, &vals[i].en.value, depth, "enum signature value", err);
		else if (k == 0)
			k = rd_uint(b, &vals[i].bm.value, what, err);
		if (k < 0) {
			free(vals);
			return -1;
		}
	}
	if (is_enum)
		*out = trace_sigtab_enum(b->t, (uint32_t)n, &vals->en);
	else
		*out = trace_sigtab_bitmask(b->t, (uint32_t)n, &vals->bm);
	free(vals);
	tab->v[id] = *out;
	return 0;
}

static int rd_struct_sig(trace_binreader *b, const trace_struct_sig **out,
			 trace_error *err)
{
	uint64_t id, n;
	const void *found;
	TRY(rd_sig_id(b, &b->structs, &id, &found, "struct signature", err));
	if (found) {
		*out = found;
		return 0;
	}
	const char *name, **names = NULL;
	TRY(rd_sig_string(b, &name, "struct name", err));
	TRY(rd_uint(b, &n, "struct signature", err));
	TRY(rd_names(b, n, &names, "struct signature", err));
	*out = trace_sigtab_struct(b->t, name, (uint32_t)n, names);
	b->structs.v[id] = *out;
	return 0;
}

/* Reads COUNT values into a growing array: a hostile count costs memory
 * only as values actually arrive. */
static int rd_values(trace_binreader *b, trace_arena *a, uint64_t count,
		     trace_value **out, int depth, trace_error *err)
{
	if (count > UINT32_MAX)
		return fail(b, err, trace_source_offset(b->s), "array of %llu values",
			    (unsigned long long)count);
	uint64_t cap = count < 1024 ? count : 1024;
	trace_value *items = trace_arena_alloc(a, sizeof(*items) * cap);
	for (uint64_t i = 0; i < count; i++) {
		if (i == cap) {
			uint64_t ncap = cap * 2 < count ? cap * 2 : count;
			trace_value *n = trace_arena_alloc(a, sizeof(*n) * ncap);
			memcpy(n, items, sizeof(*n) * cap);
			items = n;
			cap = ncap;
		}
		TRY(rd_value(b, a, &items[i], depth + 1, err));
	}
	*out = items;
	return 0;
}

static int rd_value(trace_binreader *b, trace_arena *a, trace_value *v, int depth,
		    trace_error *err)
{
	if (depth > TRACE_MAX_DEPTH)
		return fail(b, err, trace_source_offset(b->s),
			    "values nested deeper than %d levels", TRACE_MAX_DEPTH);
	uint64_t at = trace_source_offset(b->s);
	uint8_t tag = 0;
	uint64_t u;
	const uint8_t *p;
	TRY(rd_byte(b, &tag, "a value", err));
	memset(v, 0, sizeof(*v));
	switch (tag) {
	case V_NULL:
		v->kind = TRACE_NULL;
		return 0;
	case V_FALSE:
	case V_TRUE:
		v->kind = TRACE_BOOL;
		v->b = tag == V_TRUE;
		return 0;
	case V_SINT:
		TRY(rd_uint(b, &u, "an integer", err));
		v->kind = TRACE_SINT;
		v->i = (int64_t)(0 - u); /* 2^63 is INT64_MIN, not an overflow */
		return 0;
	case V_UINT:
		TRY(rd_uint(b, &u, "an integer", err));
		v->kind = TRACE_UINT;
		v->u = u;
		return 0;
	case V_FLOAT:
		TRY(rd_span(b, 4, "a float", &p, err));
		v->kind = TRACE_FLOAT;
		memcpy(&v->f, p, 4);
		return 0;
	case V_DOUBLE:
		TRY(rd_span(b, 8, "a double", &p, err));
		v->kind = TRACE_DOUBLE;
		memcpy(&v->d, p, 8);
		return 0;
	case V_STRING:
		v->kind = TRACE_STRING;
		return rd_string(b, a, &v->str, &v->len, "a string", err);
	case V_BLOB:
		v->kind = TRACE_BLOB;
		return rd_string(b, a, (const char **)&v->blob, &v->len, "a blob", err);
	case V_WSTRING: {
		TRY(rd_uint(b, &u, "a wide string", err));
		if (u > MAX_BYTES / 4)
			return fail(b, err, at, "wide string of %llu characters",
				    (unsigned long long)u);
		uint64_t cap = u < 4096 ? u : 4096;
		uint32_t *w = trace_arena_alloc(a, sizeof(*w) * (cap + 1));
		for (uint64_t i = 0; i < u; i++) {
			if (i == cap) {
				uint64_t ncap = cap * 2 < u ? cap * 2 : u;
				uint32_t *n = trace_arena_alloc(a, sizeof(*n) * (ncap + 1));
				memcpy(n, w, sizeof(*n) * cap);
				w = n;
				cap = ncap;
			}
			uint64_t c;
			TRY(rd_uint(b, &c, "a wide string", err));
			w[i] = (uint32_t)c;
		}
		v->kind = TRACE_WSTRING;
		v->wstr = w;
		v->len = (uint32_t)u;
		return 0;
	}
	case V_ENUM:
		v->kind = TRACE_ENUM;
		if (b->version >= 3) {
			const void *sig;
			TRY(rd_named_values_sig(b, a, true, &sig, depth, err));
			v->en.sig = sig;
		} else {
			/* before version 3: the name, then the value */
			trace_enum_entry e;
			TRY(rd_sig_string(b, &e.name, "an enum name", err));
			TRY(rd_tagged_int(b, a, &e.value, depth, "an enum value", err));
			v->en.sig = trace_sigtab_enum(b->t, 1, &e);
			v->en.value = e.value;
			return 0;
		}
		return rd_tagged_int(b, a, &v->en.value, depth, "an enum value", err);
	case V_BITMASK: {
		const void *sig;
		v->kind = TRACE_BITMASK;
		TRY(rd_named_values_sig(b, a, false, &sig, depth, err));
		v->bm.sig = sig;
		return rd_uint(b, &v->bm.value, "a bitmask", err);
	}
	case V_ARRAY:
		TRY(rd_uint(b, &u, "an array", err));
		v->kind = TRACE_ARRAY;
		v->len = (uint32_t)u;
		return rd_values(b, a, u, &v->items, depth, err);
	case V_STRUCT:
		v->kind = TRACE_STRUCT;
		TRY(rd_struct_sig(b, &v->st.sig, err));
		return rd_values(b, a, v->st.sig->nmembers, &v->st.members, depth, err);
	case V_OPAQUE:
		v->kind = TRACE_POINTER;
		return rd_uint(b, &v->u, "a pointer", err);
	case V_REPR:
		v->kind = TRACE_REPR;
		v->len = 2;
		return rd_values(b, a, 2, &v->items, depth, err);
	default:
		return fail(b, err, at, "unknown value type 0x%02x", tag);
	}
}

static int rd_frame(trace_binreader *b, const trace_frame **out, trace_error *err)
{
	uint64_t id;
	const void *found;
	TRY(rd_uint(b, &id, "a backtrace frame", err));
	TRY(lookup_id(b, &b->frames, id, &found, "backtrace frame", err));
	if (found) {
		*out = found;
		return 0;
	}
	trace_frame f = {NULL, NULL, NULL, -1, -1};
	for (;;) {
		uint8_t d = 0;
		uint64_t u;
		uint64_t at = trace_source_offset(b->s);
		TRY(rd_byte(b, &d, "a backtrace frame", err));
		switch (d) {
		case 0:
			*out = trace_sigtab_frame(b->t, &f);
			b->frames.v[id] = *out;
			return 0;
		case 1: TRY(rd_sig_string(b, &f.module, "a backtrace frame", err)); break;
		case 2: TRY(rd_sig_string(b, &f.function, "a backtrace frame", err)); break;
		case 3: TRY(rd_sig_string(b, &f.filename, "a backtrace frame", err)); break;
		case 4:
			TRY(rd_uint(b, &u, "a backtrace frame", err));
			f.line = (int64_t)(u & INT64_MAX);
			break;
		case 5:
			TRY(rd_uint(b, &u, "a backtrace frame", err));
			f.offset = (int64_t)(u & INT64_MAX);
			break;
		default:
			return fail(b, err, at, "unknown backtrace frame detail 0x%02x", d);
		}
	}
}

/* A leave's argument or return value (ARG UINT32_MAX), set on its call at
 * the leave's end: a leave cut off leaves the call as it was entered. */
typedef struct staged_value {
	uint32_t arg;
	trace_value v;
} staged_value;

static int rd_staged(trace_binreader *b, trace_call *c, uint32_t arg, trace_error *err)
{
	staged_value sv = {.arg = arg};
	TRY(rd_value(b, &c->arena, &sv.v, 0, err));
	tbuf_add(&b->staged, &sv, sizeof(sv));
	return 0;
}

static void commit_staged(trace_binreader *b, trace_call *c)
{
	const staged_value *sv = (const staged_value *)b->staged.data;
	for (size_t i = 0, n = b->staged.len / sizeof(*sv); i < n; i++) {
		if (sv[i].arg != UINT32_MAX) {
			c->args[sv[i].arg] = sv[i].v;
			continue;
		}
		c->ret = trace_arena_alloc(&c->arena, sizeof(*c->ret));
		*c->ret = sv[i].v;
	}
	b->staged.len = 0;
}

/* The details of an enter, set on C as they are read, or (LEAVE) of a
 * leave, set once it is whole. */
static int rd_details(trace_binreader *b, trace_call *c, bool leave, trace_error *err)
{
	b->staged.len = 0;
	for (;;) {
		uint64_t at = trace_source_offset(b->s);
		uint8_t d = 0;
		uint64_t u;
		TRY(rd_byte(b, &d, "a call", err));
		switch (d) {
		case D_END:
			commit_staged(b, c);
			return 0;
		case D_ARG:
			TRY(rd_uint(b, &u, "an argument number", err));
			if (u >= c->sig->nargs)
				return fail(b, err, at,
					    "argument %llu of %s, which has %u arguments",
					    (unsigned long long)u, c->sig->name, c->sig->nargs);
			if (leave)
				TRY(rd_staged(b, c, (uint32_t)u, err));
			else
				TRY(rd_value(b, &c->arena, &c->args[u], 0, err));
			break;
		case D_RET:
			if (leave) {
				TRY(rd_staged(b, c, UINT32_MAX, err));
				break;
			}
			c->ret = trace_arena_alloc(&c->arena, sizeof(*c->ret));
			TRY(rd_value(b, &c->arena, c->ret, 0, err));
			break;
		case D_THREAD:
			TRY(rd_uint(b, &u, "a thread number", err));
			c->thread = (uint32_t)u;
			break;
		case D_BACKTRACE: {
			TRY(rd_uint(b, &u, "a backtrace", err));
			if (u > 4096)
				return fail(b, err, at, "backtrace of %llu frames",
					    (unsigned long long)u);
			/* counted as they read: a cut leaves the call no NULL frame */
			c->backtrace = trace_arena_alloc(&c->arena, sizeof(*c->backtrace) * u);
			c->nframes = 0;
			for (uint64_t i = 0; i < u; i++, c->nframes++)
				TRY(rd_frame(b, &c->backtrace[i], err));
			break;
		}
		case D_FLAGS:
			TRY(rd_uint(b, &u, "call flags", err));
			c->flags |= (uint32_t)u & TRACE_CALL_FAKE;
			break;
		default:
			return fail(b, err, at, "unknown call detail 0x%02x", d);
		}
	}
}

static trace_call *new_call(trace_binreader *b)
{
	trace_call *c;
	if (b->nfree) {
		c = b->free[--b->nfree];
		trace_call_reset(c);
	} else {
		c = trace_xmalloc(sizeof(*c));
		trace_call_init(c);
	}
	return c;
}

static void recycle(trace_binreader *b, trace_call *c)
{
	if (b->nfree == b->cfree) {
		b->cfree = b->cfree ? b->cfree * 2 : 8;
		b->free = trace_xrealloc(b->free, b->cfree * sizeof(*b->free));
	}
	b->free[b->nfree++] = c;
}

static int rd_enter(trace_binreader *b, uint64_t at, trace_error *err)
{
	b->err_call = (int64_t)b->next_no;
	trace_call *c = new_call(b);
	c->no = b->next_no++;
	c->offset = (int64_t)at;
	uint64_t u;
	if (b->version >= 4) {
		if (rd_uint(b, &u, "a thread number", err) < 0)
			goto fail;
		c->thread = (uint32_t)u;
	}
	if (rd_func_sig(b, &c->sig, err) < 0)
		goto fail;
	c->args = trace_call_values(c, c->sig->nargs);
	if (rd_details(b, c, false, err) < 0)
		goto fail;
	if (b->npending == MAX_PENDING) {
		fail(b, err, at, "more than %u calls entered and not left", MAX_PENDING);
		goto fail;
	}
	if (b->npending == b->cpending) {
		b->cpending = b->cpending ? b->cpending * 2 : 8;
		b->pending = trace_xrealloc(b->pending, b->cpending * sizeof(*b->pending));
	}
	b->pending[b->npending++] = c;
	return 0;
fail:
	recycle(b, c);
	return -1;
}

static int rd_leave(trace_binreader *b, uint64_t at, trace_call **out, trace_error *err)
{
	uint64_t no;
	b->err_call = -1;
	TRY(rd_uint(b, &no, "a call number", err));
	b->err_call = (int64_t)no;
	size_t i;
	for (i = 0; i < b->npending; i++)
		if (b->pending[i]->no == no)
			break;
	if (i == b->npending)
		return fail(b, err, at, "leave event for call %llu, which is not entered",
			    (unsigned long long)no);
	trace_call *c = b->pending[i];
	int rc = rd_details(b, c, true, err);
	/* a leave cut off leaves its call pending: entered, never left */
	if (rc < 0 && b->cut)
		return -1;
	memmove(b->pending + i, b->pending + i + 1, (b->npending - i - 1) * sizeof(*b->pending));
	b->npending--;
	if (rc < 0) {
		recycle(b, c);
		return -1;
	}
	*out = c;
	return 0;
}

/* After a failed event: when the stream was cut inside it, the stream
 * ends before it (true, err cleared); otherwise the failure stands. */
static bool salvage(trace_binreader *b, trace_error *err)
{
	if (!b->cut)
		return false;
	b->ended = true;
	trace_error_clear(err);
	return true;
}

int trace_binreader_next(trace_binreader *b, trace_call **call, trace_error *err)
{
	if (b->current) {
		recycle(b, b->current);
		b->current = NULL;
	}
	for (;;) {
		trace_source *s = b->s;
		if (!b->ended) {
			TRY(trace_source_need(s, 1, err));
			b->ended = s->p == s->end;
		}
		if (b->ended) {
			if (!b->npending)
				return 0;
			/* calls never left: the application died inside them, or
			 * their leave was cut off */
			trace_call *c = b->pending[0];
			memmove(b->pending, b->pending + 1, --b->npending * sizeof(*b->pending));
			c->flags |= TRACE_CALL_INCOMPLETE;
			*call = b->current = c;
			return 1;
		}
		uint64_t at = trace_source_offset(s);
		uint8_t ev = *s->p++;
		/* A container error (a corrupt chunk) met inside an event
		 * carries no call: name the one being read. */
		if (ev == EV_ENTER) {
			if (rd_enter(b, at, err) < 0) {
				if (salvage(b, err))
					continue;
				err->call = b->err_call;
				return -1;
			}
		} else if (ev == EV_LEAVE) {
			trace_call *c = NULL;
			if (rd_leave(b, at, &c, err) < 0) {
				if (salvage(b, err))
					continue;
				err->call = b->err_call;
				return -1;
			}
			*call = b->current = c;
			return 1;
		} else {
			b->err_call = -1;
			return fail(b, err, at, "unknown event 0x%02x (expected a call's enter or "
				    "leave)", ev);
		}
	}
}

int trace_binreader_header(trace_binreader *b, trace_header *h, trace_arena *a,
			   trace_error *err)
{
	uint64_t v;
	TRY(rd_uint(b, &v, "the header", err));
	if (v > TRACE_FORMAT_VERSION)
		return fail(b, err, 0, "unsupported trace format version %llu (this reads 0 "
			    "to %d)", (unsigned long long)v, TRACE_FORMAT_VERSION);
	b->version = h->version = (uint32_t)v;
	h->semantic_version = (uint32_t)v;
	h->nprops = 0;
	h->props = NULL;
	if (v < 6)
		return 0;
	TRY(rd_uint(b, &v, "the header", err));
	if (v > h->version)
		return fail(b, err, trace_source_offset(b->s),
			    "semantic version %llu is above the format version %u",
			    (unsigned long long)v, h->version);
	h->semantic_version = (uint32_t)v;
	size_t cap = 0;
	for (;;) {
		const char *name, *value;
		uint32_t len;
		TRY(rd_string(b, a, &name, &len, "the header's properties", err));
		if (!len)
			return 0;
		TRY(rd_string(b, a, &value, NULL, "the header's properties", err));
		trace_header_add(h, a, &cap, name, value);
	}
}

bool trace_binreader_settled(const trace_binreader *b)
{
	return !b->npending && !b->ended && !b->cut;
}

/* The log's entries are read as the stream's definitions are, from a
 * source over the log, into tables emptied first: an id the log defines
 * twice, or a definition cut short, is an error at its byte of the log. */
int trace_binreader_jump(trace_binreader *b, uint64_t next_no, const uint8_t *defs, size_t len,
			 trace_error *err)
{
	idtab *tabs[] = {[SK_FUNC] = &b->funcs, [SK_STRUCT] = &b->structs,
			 [SK_ENUM] = &b->enums, [SK_BITMASK] = &b->bitmasks,
			 [SK_FRAME] = &b->frames};
	for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++)
		if (tabs[i]->v)
			memset(tabs[i]->v, 0, tabs[i]->n * sizeof(*tabs[i]->v));
	trace_source log = {.p = defs, .end = defs + len, .win = defs, .eof = true,
			    .container = TRACE_FMT_RAW, .mem = defs, .memsize = len,
			    .mempos = len, .name = b->s->name};
	trace_source *stream = b->s;
	b->s = &log;
	b->err_call = -1;
	trace_arena a;
	trace_arena_init(&a);
	int rc = 0;
	while (rc == 0 && log.p < log.end) {
		uint64_t at = trace_source_offset(&log), id;
		uint8_t kind = *log.p++;
		const uint8_t *def = log.p;
		const void *found = NULL, *out;
		if (kind > SK_FRAME) {
			rc = fail(b, err, at, "a definition of kind %u, which is none", kind);
			break;
		}
		rc = rd_sig_id(b, tabs[kind], &id, &found, "a definition's id", err);
		if (rc == 0 && found)
			rc = fail(b, err, at, "signature %llu of kind %u defined twice",
				  (unsigned long long)id, kind);
		log.p = def;
		if (rc < 0)
			break;
		switch (kind) {
		case SK_FUNC: rc = rd_func_sig(b, (const trace_func_sig **)&out, err); break;
		case SK_STRUCT: rc = rd_struct_sig(b, (const trace_struct_sig **)&out, err); break;
		case SK_ENUM: rc = rd_named_values_sig(b, &a, true, &out, 0, err); break;
		case SK_BITMASK: rc = rd_named_values_sig(b, &a, false, &out, 0, err); break;
		default: rc = rd_frame(b, (const trace_frame **)&out, err); break;
		}
	}
	trace_arena_free(&a);
	b->s = stream;
	b->cut = false;
	if (rc < 0)
		return -1;
	b->next_no = next_no;
	return 0;
}

trace_binreader *trace_binreader_new(trace_source *s, trace_sigtab *t)
{
	trace_binreader *b = trace_xcalloc(1, sizeof(*b));
	b->s = s;
	b->t = t;
	b->err_call = -1;
	return b;
}

trace_call *trace_binreader_keep(trace_binreader *b)
{
	trace_call *c = b->current;
	b->current = NULL;
	return c;
}

void trace_binreader_give_back(trace_binreader *b, trace_call *c)
{
	recycle(b, c);
}

void trace_binreader_free(trace_binreader *b)
{
	if (!b)
		return;
	if (b->current)
		recycle(b, b->current);
	for (size_t i = 0; i < b->npending; i++)
		recycle(b, b->pending[i]);
	for (size_t i = 0; i < b->nfree; i++) {
		trace_call_free(b->free[i]);
		free(b->free[i]);
	}
	free(b->free);
	free(b->pending);
	free(b->funcs.v);
	free(b->structs.v);
	free(b->enums.v);
	free(b->bitmasks.v);
	free(b->frames.v);
	tbuf_free(&b->scratch);
	tbuf_free(&b->staged);
	free(b);
}
