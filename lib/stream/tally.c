/*
 * Tally: see tally.h.
 */
#include "tally.h"
#include "internal.h"

#include <stdlib.h>

typedef struct row {
	const char *name;
	uint64_t count;
} row;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const row *)a)->name, ((const row *)b)->name);
}

static int by_count(const void *a, const void *b)
{
	const row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

void trace_tally_add(trace_tally *t, const trace_func_sig *sig)
{
	uint64_t *v = tmap_at(&t->counts, (uint64_t)(uintptr_t)sig, 0);
	if (v)
		++*v;
	else
		tmap_put(&t->counts, sig, 1);
	t->total++;
}

/*
 * Counts right aligned.  Two signatures can share a name (a function
 * recorded with different arguments), so rows are merged by name first.
 */
void trace_tally_print(FILE *out, const trace_tally *t)
{
	const tmap *m = &t->counts;
	row *rows = trace_xcalloc(m->n ? m->n : 1, sizeof(*rows));
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] && m->vals[i])
			rows[n++] = (row){((const trace_func_sig *)(uintptr_t)m->keys[i])->name,
					  m->vals[i]};
	qsort(rows, n, sizeof(*rows), by_name);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(rows[k - 1].name, rows[i].name))
			rows[k - 1].count += rows[i].count;
		else
			rows[k++] = rows[i];
	}
	qsort(rows, k, sizeof(*rows), by_count);
	int width = snprintf(NULL, 0, "%llu", (unsigned long long)t->total);
	for (size_t i = 0; i < k; i++)
		fprintf(out, "%*llu  %s\n", width, (unsigned long long)rows[i].count, rows[i].name);
	fprintf(out, "%*llu  total\n", width, (unsigned long long)t->total);
	free(rows);
}

void trace_tally_clear(trace_tally *t)
{
	for (size_t i = 0; i < t->counts.cap; i++)
		t->counts.vals[i] = 0;
	t->total = 0;
}

void trace_tally_free(trace_tally *t)
{
	tmap_free(&t->counts);
	t->total = 0;
}
