/*
 * tmap: a map from a key of one or two words to a uint64_t, open
 * addressing, no tombstones (lib/base/tmap.c).
 *
 * Most users key by one pointer (signature ids in lib/stream, writer
 * bookkeeping, the VMA replayer's handles): tmap_get/put/take.  The
 * Vulkan replayer keys by a 64-bit capture value and the KIND of thing it
 * names (a handle type's info pointer, or a small tag), so that one value
 * can name a VkBuffer and a VkImage at once: tmap_at/set/del.  The
 * one-word forms are KIND 0; a map allocates its kinds only once a key
 * of another kind comes, so they cost those users nothing.  The pair
 * (0, 0) marks an empty slot and cannot be stored (nor a null pointer).
 *
 * The lookup is inline: it is the replayer's per-handle path.
 */
#ifndef TRACE_TMAP_H
#define TRACE_TMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zeroed: empty.  Slots 0..cap-1 may be walked (tmap_used; in a map of
 * one-word keys, keys[i] != 0) and a value written in place.  tmap_del of
 * the key at slot i moves a later one into i: a walk that deletes reads
 * slot i again. */
typedef struct tmap {
	uint64_t *keys;
	uint64_t *kinds;  /* NULL while every key is of kind 0 */
	uint64_t *vals;
	size_t cap, n;
} tmap;

static inline bool tmap_used(const tmap *m, size_t i)
{
	return m->keys[i] || (m->kinds && m->kinds[i]);
}

/* The slot of address P in a table of 2^BITS slots, one key each, for
 * what is looked up by address once and then again and again (a
 * signature's command, a struct's answer).  Fibonacci hashing: addresses
 * at a fixed stride, which a plain modulo folds onto a few slots, spread
 * over them all. */
static inline size_t trace_ptr_slot(const void *p, unsigned bits)
{
	return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static inline size_t tmap_home(const tmap *m, uint64_t key, uint64_t kind)
{
	uint64_t h = (key ^ kind * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (m->cap - 1);
}

/* The value of (KEY, KIND), where it may be read and written; NULL if
 * absent. */
static inline uint64_t *tmap_at(const tmap *m, uint64_t key, uint64_t kind)
{
	if (!m->n)
		return NULL;
	size_t i = tmap_home(m, key, kind), mask = m->cap - 1;
	if (!m->kinds) {
		if (kind)
			return NULL;
		for (; m->keys[i]; i = (i + 1) & mask)
			if (m->keys[i] == key)
				return &m->vals[i];
		return NULL;
	}
	for (; m->keys[i] || m->kinds[i]; i = (i + 1) & mask)
		if (m->keys[i] == key && m->kinds[i] == kind)
			return &m->vals[i];
	return NULL;
}

void tmap_set(tmap *m, uint64_t key, uint64_t kind, uint64_t val);
/* Removes (KEY, KIND) (its value into *val when val is not NULL); false
 * if absent.  What follows is shifted back, so a map that sees millions
 * of keys come and go stays as large as what it holds. */
bool tmap_del(tmap *m, uint64_t key, uint64_t kind, uint64_t *val);
/* Every entry of SRC put into DST. */
void tmap_copy(tmap *dst, const tmap *src);
void tmap_free(tmap *m);
/* Frees each of the maps named: TMAP_FREE(&a->x, &a->y, ...). */
void tmap_free_n(tmap *const *maps, size_t n);
#define TMAP_FREE(...) tmap_free_n((tmap *const[]){__VA_ARGS__}, \
				  sizeof((tmap *const[]){__VA_ARGS__}) / sizeof(tmap *))

/* KEY's value into *val (when val is not NULL); false if absent. */
static inline bool tmap_get(const tmap *m, const void *key, uint64_t *val)
{
	const uint64_t *v = tmap_at(m, (uint64_t)(uintptr_t)key, 0);
	if (v && val)
		*val = *v;
	return v != NULL;
}

static inline void tmap_put(tmap *m, const void *key, uint64_t val)
{
	tmap_set(m, (uint64_t)(uintptr_t)key, 0, val);
}

static inline bool tmap_take(tmap *m, const void *key, uint64_t *val)
{
	return tmap_del(m, (uint64_t)(uintptr_t)key, 0, val);
}

#endif
