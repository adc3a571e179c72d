/*
 * vkschema_internal.h: what the schema's encoder and decoder (vkschema.c)
 * and its walkers (vkwalk.c) share: the head of an extensible struct and
 * fields read and written by their size.  Not for use outside lib/vulkan.
 */
#ifndef VKSCHEMA_INTERNAL_H
#define VKSCHEMA_INTERNAL_H

#include "vkschema.h"

#include <string.h>

/* The head of every extensible struct (VkBaseInStructure). */
typedef struct base_in {
	int32_t sType;
	const struct base_in *pNext;
} base_in;

/* The loader's link structs in the create infos: its own, not the app's. */
enum { STYPE_LOADER_INSTANCE = 47, STYPE_LOADER_DEVICE = 48 };


static inline uint64_t read_uint(const void *p, uint32_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

/* The field's bits, sign-extended from its size. */
static inline int64_t read_sint(const void *p, uint32_t size)
{
	uint64_t v = read_uint(p, size);
	unsigned shift = 64 - 8 * (size == 1 || size == 2 || size == 4 ? size : 8);
	return (int64_t)(v << shift) >> shift;
}

static inline void write_uint(void *p, uint32_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

static inline const void *read_ptr(const uint8_t *p)
{
	const void *q;
	memcpy(&q, p, sizeof(q));
	return q;
}

static inline void write_ptr(uint8_t *p, const void *q)
{
	memcpy(p, &q, sizeof(q));
}

#endif
