/*
 * pack: a record's values as bytes, for a program that holds many
 * records at once (trace-trim keeps every record the state before its
 * range names).  A copy of a call is a tree of 24-byte values in an
 * arena of at least 1 KiB; packed, a barrier of zink's takes about a
 * tenth of that.  The bytes hold signatures and frames as pointers: they
 * are for this process only, never written out.
 *
 * Each value: its kind, its length (a varint), then by kind: nothing; a
 * byte; a varint (signed ones zigzagged); the float's or double's bytes;
 * the string's, wide string's or blob's bytes; an enum's or bitmask's
 * signature and value; an array's items; a struct's signature and
 * members; a repr's two values.
 */
#include "internal.h"

#include <string.h>

typedef struct packer {
	uint8_t *p;   /* NULL: counting */
	size_t n;
} packer;

static void put_bytes(packer *k, const void *v, size_t len)
{
	if (k->p && len)
		memcpy(k->p + k->n, v, len);
	k->n += len;
}

static void put_byte(packer *k, uint8_t b)
{
	if (k->p)
		k->p[k->n] = b;
	k->n++;
}

static void put_varint(packer *k, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(k, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_byte(k, (uint8_t)v);
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void put_ptr(packer *k, const void *p)
{
	put_bytes(k, &p, sizeof(p));
}

static void pack_value(packer *k, const trace_value *v)
{
	put_byte(k, v->kind);
	put_varint(k, v->len);
	switch ((trace_value_kind)v->kind) {
	case TRACE_MISSING:
	case TRACE_NULL:
		break;
	case TRACE_BOOL:
		put_byte(k, v->b);
		break;
	case TRACE_SINT:
		put_varint(k, zigzag(v->i));
		break;
	case TRACE_UINT:
	case TRACE_POINTER:
		put_varint(k, v->u);
		break;
	case TRACE_FLOAT:
		put_bytes(k, &v->f, sizeof(v->f));
		break;
	case TRACE_DOUBLE:
		put_bytes(k, &v->d, sizeof(v->d));
		break;
	case TRACE_STRING:
		put_bytes(k, v->str, v->len);
		break;
	case TRACE_WSTRING:
		put_bytes(k, v->wstr, sizeof(*v->wstr) * v->len);
		break;
	case TRACE_BLOB:
		put_bytes(k, v->blob, v->len);
		break;
	case TRACE_ENUM:
		put_ptr(k, v->en.sig);
		put_varint(k, zigzag(v->en.value));
		break;
	case TRACE_BITMASK:
		put_ptr(k, v->bm.sig);
		put_varint(k, v->bm.value);
		break;
	case TRACE_ARRAY:
		for (uint32_t i = 0; i < v->len; i++)
			pack_value(k, &v->items[i]);
		break;
	case TRACE_STRUCT:
		put_ptr(k, v->st.sig);
		for (uint32_t i = 0; i < v->st.sig->nmembers; i++)
			pack_value(k, &v->st.members[i]);
		break;
	case TRACE_REPR:
		pack_value(k, &v->items[0]);
		pack_value(k, &v->items[1]);
		break;
	}
}

size_t trace_call_pack(const trace_call *c, uint8_t *out)
{
	packer k = {out, 0};
	put_byte(&k, c->ret != NULL);
	put_varint(&k, c->nframes);
	for (uint32_t i = 0; i < c->nframes; i++)
		put_ptr(&k, c->backtrace[i]);
	for (uint32_t i = 0; i < c->sig->nargs; i++)
		pack_value(&k, &c->args[i]);
	if (c->ret)
		pack_value(&k, c->ret);
	return k.n;
}

typedef struct unpacker {
	const uint8_t *p;
	trace_arena *a;
} unpacker;

static uint64_t get_varint(unpacker *u)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = *u->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static const void *get_ptr(unpacker *u)
{
	const void *p;
	memcpy(&p, u->p, sizeof(p));
	u->p += sizeof(p);
	return p;
}

/* LEN bytes of the packed form, copied into the arena: the call's values
 * live as long as it does, not as long as the packed bytes. */
static void *get_copy(unpacker *u, size_t len, size_t extra)
{
	uint8_t *d = trace_arena_alloc(u->a, len + extra);
	if (len)
		memcpy(d, u->p, len);
	u->p += len;
	return d;
}

static void unpack_value(unpacker *u, trace_value *v)
{
	memset(v, 0, sizeof(*v));
	v->kind = *u->p++;
	v->len = (uint32_t)get_varint(u);
	switch ((trace_value_kind)v->kind) {
	case TRACE_MISSING:
	case TRACE_NULL:
		break;
	case TRACE_BOOL:
		v->b = *u->p++;
		break;
	case TRACE_SINT:
		v->i = unzigzag(get_varint(u));
		break;
	case TRACE_UINT:
	case TRACE_POINTER:
		v->u = get_varint(u);
		break;
	case TRACE_FLOAT:
		memcpy(&v->f, u->p, sizeof(v->f));
		u->p += sizeof(v->f);
		break;
	case TRACE_DOUBLE:
		memcpy(&v->d, u->p, sizeof(v->d));
		u->p += sizeof(v->d);
		break;
	case TRACE_STRING:
		v->str = get_copy(u, v->len, 1);  /* zeroed: NUL-terminated */
		break;
	case TRACE_WSTRING:
		v->wstr = get_copy(u, sizeof(*v->wstr) * v->len, sizeof(*v->wstr));
		break;
	case TRACE_BLOB:
		v->blob = get_copy(u, v->len, v->len ? 0 : 1);
		break;
	case TRACE_ENUM:
		v->en.sig = get_ptr(u);
		v->en.value = unzigzag(get_varint(u));
		break;
	case TRACE_BITMASK:
		v->bm.sig = get_ptr(u);
		v->bm.value = get_varint(u);
		break;
	case TRACE_ARRAY:
		v->items = trace_arena_alloc(u->a, sizeof(*v->items) * v->len);
		for (uint32_t i = 0; i < v->len; i++)
			unpack_value(u, &v->items[i]);
		break;
	case TRACE_STRUCT:
		v->st.sig = get_ptr(u);
		v->st.members = trace_arena_alloc(u->a, sizeof(*v->st.members) * v->st.sig->nmembers);
		for (uint32_t i = 0; i < v->st.sig->nmembers; i++)
			unpack_value(u, &v->st.members[i]);
		break;
	case TRACE_REPR:
		v->items = trace_arena_alloc(u->a, sizeof(*v->items) * 2);
		unpack_value(u, &v->items[0]);
		unpack_value(u, &v->items[1]);
		break;
	}
}

void trace_call_unpack(trace_call *c, const trace_func_sig *sig, const uint8_t *in)
{
	trace_call_reset(c);
	unpacker u = {in, &c->arena};
	c->sig = sig;
	bool ret = *u.p++;
	c->nframes = (uint32_t)get_varint(&u);
	if (c->nframes) {
		c->backtrace = trace_arena_alloc(&c->arena, sizeof(*c->backtrace) * c->nframes);
		for (uint32_t i = 0; i < c->nframes; i++)
			c->backtrace[i] = get_ptr(&u);
	}
	c->args = trace_arena_alloc(&c->arena, sizeof(*c->args) * sig->nargs);
	for (uint32_t i = 0; i < sig->nargs; i++)
		unpack_value(&u, &c->args[i]);
	if (ret) {
		c->ret = trace_arena_alloc(&c->arena, sizeof(*c->ret));
		unpack_value(&u, c->ret);
	}
}
