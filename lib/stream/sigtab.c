/*
 * Signature tables: every function, struct, enum and bitmask signature and
 * backtrace frame of a stream, interned by content.  Interning lets the
 * writer give each distinct signature one id by pointer, whatever the
 * reader it came from, and keeps the text reader from making one
 * signature per line.
 */
#include "internal.h"

#include <stdlib.h>

typedef struct entry {
	char *key;
	size_t klen;
	uint64_t hash;
	const void *sig;
} entry;

struct trace_sigtab {
	trace_arena arena;   /* signatures and their strings, never reset */
	entry *slots;
	size_t cap, n;
	tbuf key;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

trace_sigtab *trace_sigtab_new(void)
{
	trace_sigtab *t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	trace_arena_init(&t->arena);
	return t;
}

void trace_sigtab_free(trace_sigtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
	tbuf_free(&t->key);
	trace_arena_free(&t->arena);
	free(t);
}

static entry *lookup(trace_sigtab *t, const char *key, size_t klen, uint64_t h)
{
	size_t i = (size_t)h & (t->cap - 1);
	for (;;) {
		entry *e = &t->slots[i];
		if (!e->key)
			return e;
		if (e->hash == h && e->klen == klen && !memcmp(e->key, key, klen))
			return e;
		i = (i + 1) & (t->cap - 1);
	}
}

static void grow(trace_sigtab *t)
{
	entry *old = t->slots;
	size_t ocap = t->cap;
	t->cap = ocap ? ocap * 2 : 256;
	t->slots = calloc(t->cap, sizeof(entry));
	if (!t->slots)
		abort();
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key)
			*lookup(t, old[i].key, old[i].klen, old[i].hash) = old[i];
	free(old);
}

/* Finds the signature under t->key, or NULL with *slot where it goes. */
static const void *find(trace_sigtab *t, entry **slot)
{
	if ((t->n + 1) * 2 > t->cap)
		grow(t);
	uint64_t h = hash_bytes(t->key.data, t->key.len);
	entry *e = lookup(t, t->key.data, t->key.len, h);
	if (e->key)
		return e->sig;
	*slot = e;
	return NULL;
}

static void insert(trace_sigtab *t, entry *e, const void *sig)
{
	e->key = trace_xmalloc(t->key.len);
	memcpy(e->key, t->key.data, t->key.len);
	e->klen = t->key.len;
	e->hash = hash_bytes(t->key.data, t->key.len);
	e->sig = sig;
	t->n++;
}

/* Inserts under t->key, looking the slot up again: interning the
 * signature's strings may have grown the table since find(). */
static void insert_key(trace_sigtab *t, const void *sig)
{
	entry *slot = NULL;
	find(t, &slot);
	insert(t, slot, sig);
}

static void key_str(tbuf *k, const char *s)
{
	tbuf_add(k, s ? s : "", (s ? strlen(s) : 0) + 1);
}

static void key_u64(tbuf *k, uint64_t v)
{
	tbuf_add(k, &v, sizeof(v));
}

const char *trace_sigtab_string(trace_sigtab *t, const char *s, size_t n)
{
	t->key.len = 0;
	tbuf_addc(&t->key, 's');
	tbuf_add(&t->key, s, n);
	entry *slot;
	const char *found = find(t, &slot);
	if (found)
		return found;
	char *copy = trace_arena_strndup(&t->arena, s, n);
	insert_key(t, copy);
	return copy;
}

static const char *intern(trace_sigtab *t, const char *s)
{
	if (!s)
		return NULL;
	tbuf save = t->key;
	t->key = (tbuf){0};
	const char *r = trace_sigtab_string(t, s, strlen(s));
	tbuf_free(&t->key);
	t->key = save;
	return r;
}

/* The key of a function or struct signature: TAG, its name and its
 * argument or member names. */
static void named_key(trace_sigtab *t, char tag, const char *name, uint32_t n,
		      const char *const *names)
{
	t->key.len = 0;
	tbuf_addc(&t->key, tag);
	key_str(&t->key, name);
	key_u64(&t->key, n);
	for (uint32_t i = 0; i < n; i++)
		key_str(&t->key, names[i]);
}

/* N names interned, a missing one as "" */
static const char **intern_names(trace_sigtab *t, uint32_t n, const char *const *names)
{
	const char **v = trace_arena_alloc(&t->arena, sizeof(char *) * n);
	for (uint32_t i = 0; i < n; i++)
		v[i] = intern(t, names[i] ? names[i] : "");
	return v;
}

/*
 * Function and struct signatures are one shape: a name and a count of
 * argument or member names.  The body both functions share; SIG is the
 * signature's type, TAG its key letter, NAME, N and NAMES the caller's,
 * COUNT and LIST the signature's fields for N and NAMES.
 */
#define NAMED_SIG(SIG, TAG, NAME, N, NAMES, COUNT, LIST)                          \
	named_key(t, TAG, NAME, N, NAMES);                                        \
	entry *slot;                                                              \
	const SIG *found = find(t, &slot);                                        \
	if (found)                                                                \
		return found;                                                     \
	SIG *sig = trace_arena_alloc(&t->arena, sizeof(*sig));                    \
	sig->name = intern(t, NAME);                                              \
	sig->COUNT = N;                                                           \
	sig->LIST = intern_names(t, N, NAMES);                                    \
	insert_key(t, sig);                                                       \
	return sig

const trace_func_sig *trace_sigtab_func(trace_sigtab *t, const char *name,
					uint32_t nargs, const char *const *arg_names)
{
	NAMED_SIG(trace_func_sig, 'f', name, nargs, arg_names, nargs, arg_names);
}

const trace_struct_sig *trace_sigtab_struct(trace_sigtab *t, const char *name,
					    uint32_t nmembers,
					    const char *const *member_names)
{
	NAMED_SIG(trace_struct_sig, 'S', name, nmembers, member_names, nmembers, member_names);
}

#undef NAMED_SIG

/*
 * Enums and bitmasks are one table: a count and, per entry, a name and a
 * 64-bit value, signed in an enum and unsigned in a bitmask (the key
 * holds the bits).  The body both functions share; SIG is the
 * signature's type, TAG its key letter, N and IN the caller's entries,
 * COUNT and LIST the signature's fields for them.
 */
#define NAMED_VALUES_SIG(SIG, TAG, N, IN, COUNT, LIST)                            \
	t->key.len = 0;                                                           \
	tbuf_addc(&t->key, TAG);                                                  \
	key_u64(&t->key, N);                                                      \
	for (uint32_t i = 0; i < N; i++) {                                        \
		key_str(&t->key, IN[i].name);                                     \
		key_u64(&t->key, (uint64_t)IN[i].value);                          \
	}                                                                         \
	entry *slot;                                                              \
	const SIG *found = find(t, &slot);                                        \
	if (found)                                                                \
		return found;                                                     \
	SIG *sig = trace_arena_alloc(&t->arena, sizeof(*sig));                    \
	sig->COUNT = N;                                                           \
	sig->LIST = trace_arena_alloc(&t->arena, sizeof(*sig->LIST) * N);         \
	for (uint32_t i = 0; i < N; i++) {                                        \
		sig->LIST[i].name = intern(t, IN[i].name ? IN[i].name : "");      \
		sig->LIST[i].value = IN[i].value;                                 \
	}                                                                         \
	insert_key(t, sig);                                                       \
	return sig

const trace_enum_sig *trace_sigtab_enum(trace_sigtab *t, uint32_t nvalues,
					const trace_enum_entry *values)
{
	NAMED_VALUES_SIG(trace_enum_sig, 'e', nvalues, values, nvalues, values);
}

const trace_bitmask_sig *trace_sigtab_bitmask(trace_sigtab *t, uint32_t nflags,
					      const trace_bitmask_flag *flags)
{
	NAMED_VALUES_SIG(trace_bitmask_sig, 'b', nflags, flags, nflags, flags);
}

#undef NAMED_VALUES_SIG

const trace_frame *trace_sigtab_frame(trace_sigtab *t, const trace_frame *f)
{
	t->key.len = 0;
	tbuf_addc(&t->key, 'F');
	/* absent strings and present empty ones differ: mark each */
	const char *s[3] = {f->module, f->function, f->filename};
	for (int i = 0; i < 3; i++) {
		tbuf_addc(&t->key, s[i] ? 1 : 0);
		key_str(&t->key, s[i]);
	}
	key_u64(&t->key, (uint64_t)f->line);
	key_u64(&t->key, (uint64_t)f->offset);
	entry *slot;
	const trace_frame *found = find(t, &slot);
	if (found)
		return found;
	trace_frame *fr = trace_arena_alloc(&t->arena, sizeof(*fr));
	fr->module = intern(t, f->module);
	fr->function = intern(t, f->function);
	fr->filename = intern(t, f->filename);
	fr->line = f->line;
	fr->offset = f->offset;
	insert_key(t, fr);
	return fr;
}

/* ------------------------------------------------------------------ */

const char *trace_enum_name(const trace_enum_sig *sig, int64_t value)
{
	for (uint32_t i = 0; i < sig->nvalues; i++)
		if (sig->values[i].value == value)
			return sig->values[i].name;
	return NULL;
}

const char *trace_value_kind_name(trace_value_kind k)
{
	static const char *const names[] = {
		"missing", "null", "bool", "sint", "uint", "float", "double",
		"string", "wstring", "blob", "enum", "bitmask", "array",
		"struct", "pointer", "repr",
	};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

void trace_header_add(trace_header *h, trace_arena *a, size_t *cap, const char *name,
		      const char *value)
{
	if (h->nprops == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		trace_property *n = trace_arena_alloc(a, sizeof(*n) * *cap);
		if (h->nprops)
			memcpy(n, h->props, sizeof(*n) * h->nprops);
		h->props = n;
	}
	h->props[h->nprops].name = name;
	h->props[h->nprops].value = value;
	h->nprops++;
}

const char *trace_header_get(const trace_header *h, const char *name)
{
	for (uint32_t i = 0; i < h->nprops; i++)
		if (!strcmp(h->props[i].name, name))
			return h->props[i].value;
	return NULL;
}

void trace_call_init(trace_call *c)
{
	memset(c, 0, sizeof(*c));
	trace_arena_init(&c->arena);
}

void trace_call_reset(trace_call *c)
{
	trace_arena a = c->arena;
	trace_arena_reset(&a);
	memset(c, 0, sizeof(*c));
	c->arena = a;
}

void trace_call_free(trace_call *c)
{
	trace_arena_free(&c->arena);
}

trace_value *trace_call_values(trace_call *c, uint32_t n)
{
	return trace_arena_alloc(&c->arena, sizeof(trace_value) * n);
}
