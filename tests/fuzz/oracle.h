/*
 * Shared by the fuzz targets: read a stream from memory to the end; if it
 * reads, its text must read back and print the same (the round trip the
 * format page promises).  Any crash, leak or broken promise is a finding.
 */
#ifndef FUZZ_ORACLE_H
#define FUZZ_ORACLE_H

#include "internal.h"

#include <stdlib.h>

/* The whole stream as text, or NULL if it does not read. */
static char *fuzz_to_text(const void *data, size_t size, size_t *len)
{
	trace_error err;
	trace_reader *r = trace_reader_open_memory(data, size, "fuzz", &err);
	if (!r)
		return NULL;
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	trace_writer_options opt = {.format = TRACE_FMT_TEXT, .quality = -1};
	trace_writer *w = trace_writer_open_file(f, "fuzz-out", &opt, &err);
	int k = trace_writer_header(w, trace_reader_header(r), &err);
	trace_call *c;
	while (k == 0 && (k = trace_reader_next(r, &c, &err)) > 0)
		k = trace_writer_call(w, c, &err);
	if (k < 0) {
		trace_writer_abort(w);
		trace_reader_close(r);
		fclose(f);
		free(out);
		return NULL;
	}
	trace_writer_close(w, &err);
	trace_reader_close(r);
	fclose(f);
	return out;
}

static void fuzz_check_round_trip(const uint8_t *data, size_t size)
{
	size_t n1, n2;
	char *t1 = fuzz_to_text(data, size, &n1);
	if (!t1)
		return;
	char *t2 = fuzz_to_text(t1, n1, &n2);
	if (!t2 || n1 != n2 || memcmp(t1, t2, n1)) {
		fprintf(stderr, "round trip broken:\n%.*s\n---\n%.*s\n", (int)(n1 < 4000 ? n1 : 4000),
			t1, t2 ? (int)(n2 < 4000 ? n2 : 4000) : 6, t2 ? t2 : "(null)");
		abort();
	}
	free(t1);
	free(t2);
}

#endif
