/*
 * tmap: a map from a pointer-sized key (a pointer, or a handle value cast
 * to one) to a uint64_t, open addressing; the null key cannot be stored.
 * Used for signature ids, writer bookkeeping and a replayer's handles.
 */
#ifndef TRACE_TMAP_H
#define TRACE_TMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tmap {
	const void **keys;
	uint64_t *vals;
	size_t cap, n;
} tmap;

/* KEY's value into *val (when val is not NULL); false if absent. */
bool tmap_get(const tmap *m, const void *key, uint64_t *val);
void tmap_put(tmap *m, const void *key, uint64_t val);
/* Removes KEY (its value into *val when val is not NULL); false if absent.
 * No tombstones: what follows is shifted back, so a map that sees millions
 * of keys come and go stays as large as what it holds. */
bool tmap_take(tmap *m, const void *key, uint64_t *val);
void tmap_free(tmap *m);

#endif
