/*
 * libFuzzer target for the VMA recording reader and writer (lib/vma.c).
 *
 * Any input must be read without a crash; one that reads must write back
 * (export), and what is written must read again and write the same bytes:
 * export(import(x)) is a fixed point.  That is the round trip vma-import
 * and vma-export promise, checked on inputs nobody wrote by hand.
 */
#include "vma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A writer into memory, over *f; the target cannot go on without one. */
static vma_writer *memory_writer(FILE **f, char **out, size_t *out_size)
{
	trace_error err;
	*f = open_memstream(out, out_size);
	vma_writer *w = *f ? vma_writer_open_file(*f, "memory", &err) : NULL;
	if (!w)
		abort();
	return w;
}

/* Reads a recording from memory and writes it back; NULL if it does not
 * read.  The writer must take whatever the reader made. */
static char *round_trip(const uint8_t *data, size_t size, size_t *out_size)
{
	trace_error err;
	vma_reader *r = vma_reader_open_memory(data, size, "fuzz", &err);
	if (!r)
		return NULL;
	FILE *f;
	char *out = NULL;
	vma_writer *w = memory_writer(&f, &out, out_size);
	if (vma_writer_header(w, vma_reader_header(r), &err) < 0)
		abort();
	trace_call *c;
	int k;
	while ((k = vma_reader_next(r, &c, &err)) > 0)
		if (vma_writer_call(w, c, &err) < 0) {
			fprintf(stderr, "the writer refused a record the reader made: %s\n", err.msg);
			abort();
		}
	vma_reader_close(r);
	if (vma_writer_close(w, &err) < 0)
		abort();
	fclose(f);
	if (k < 0) {
		free(out);
		return NULL;
	}
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n1, n2;
	char *once = round_trip(data, size, &n1);
	if (!once)
		return 0;
	char *twice = round_trip((const uint8_t *)once, n1, &n2);
	if (!twice) {
		fprintf(stderr, "what the writer wrote does not read back\n");
		abort();
	}
	if (n1 != n2 || memcmp(once, twice, n1)) {
		fprintf(stderr, "writing what was read changed it\n");
		abort();
	}
	free(once);
	free(twice);
	return 0;
}
