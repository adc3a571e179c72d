/*
 * tmap: see tmap.h.
 */
#include "internal.h"

#include <stdlib.h>

static uint64_t kind_at(const tmap *m, size_t i)
{
	return m->kinds ? m->kinds[i] : 0;
}

static size_t tmap_slot(const tmap *m, uint64_t key, uint64_t kind)
{
	size_t i = tmap_home(m, key, kind);
	while (tmap_used(m, i) && !(m->keys[i] == key && kind_at(m, i) == kind))
		i = (i + 1) & (m->cap - 1);
	return i;
}

void tmap_set(tmap *m, uint64_t key, uint64_t kind, uint64_t val)
{
	if ((m->n + 1) * 2 > m->cap || (kind && !m->kinds)) {
		tmap old = *m;
		m->cap = !old.cap ? 64 : (m->n + 1) * 2 > old.cap ? old.cap * 2 : old.cap;
		m->keys = trace_xcalloc(m->cap, sizeof(*m->keys));
		m->kinds = kind || old.kinds ? trace_xcalloc(m->cap, sizeof(*m->kinds)) : NULL;
		m->vals = trace_xmalloc(m->cap * sizeof(*m->vals));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (tmap_used(&old, i))
				tmap_set(m, old.keys[i], kind_at(&old, i), old.vals[i]);
		free(old.keys);
		free(old.kinds);
		free(old.vals);
	}
	size_t i = tmap_slot(m, key, kind);
	if (!tmap_used(m, i))
		m->n++;
	m->keys[i] = key;
	if (m->kinds)
		m->kinds[i] = kind;
	m->vals[i] = val;
}

bool tmap_del(tmap *m, uint64_t key, uint64_t kind, uint64_t *val)
{
	if (!m->n || !(key | kind))
		return false;
	size_t i = tmap_slot(m, key, kind);
	if (!tmap_used(m, i))
		return false;
	if (val)
		*val = m->vals[i];
	/* backward shift: move up each later entry of the run that may sit
	 * at i, i.e. whose home slot is not cyclically within (i, j] */
	for (size_t j = i;;) {
		m->keys[i] = 0;
		if (m->kinds)
			m->kinds[i] = 0;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (!tmap_used(m, j)) {
				m->n--;
				return true;
			}
			size_t h = tmap_home(m, m->keys[j], kind_at(m, j));
			if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
				break;
		}
		m->keys[i] = m->keys[j];
		if (m->kinds)
			m->kinds[i] = m->kinds[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
}

void tmap_copy(tmap *dst, const tmap *src)
{
	for (size_t i = 0; i < src->cap; i++)
		if (tmap_used(src, i))
			tmap_set(dst, src->keys[i], kind_at(src, i), src->vals[i]);
}

void tmap_free(tmap *m)
{
	free(m->keys);
	free(m->kinds);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void tmap_free_n(tmap *const *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tmap_free(maps[i]);
}
