/*
 * Shared by the fuzz targets: read a stream from memory to the end; if it
 * reads, its text must read back and print the same (the round trip the
 * format page promises).  Any crash, leak or broken promise is a finding.
 */
#ifndef FUZZ_ORACLE_H
#define FUZZ_ORACLE_H

#include "internal.h"

#include <stdlib.h>

/* The whole stream as text, or NULL if it does not read (ERR then says
 * why); its records decoded on a thread of their own where AHEAD; CUT:
 * the warning of a trace cut off, if any. */
static char *fuzz_read_text(const void *data, size_t size, size_t *len, bool ahead,
			    trace_error *err, trace_error *cut)
{
	trace_error_clear(err);
	trace_error_clear(cut);
	trace_reader *r = trace_reader_open_memory(data, size, "fuzz", err);
	if (!r)
		return NULL;
	if (ahead)
		trace_reader_decode_ahead(r, NULL, NULL);
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	trace_writer_options opt = {.format = TRACE_FMT_TEXT, .quality = -1};
	trace_writer *w = trace_writer_open_file(f, "fuzz-out", &opt, err);
	int k = trace_writer_header(w, trace_reader_header(r), err);
	trace_call *c;
	while (k == 0 && (k = trace_reader_next(r, &c, err)) > 0)
		k = trace_writer_call(w, c, err);
	if (k < 0) {
		trace_writer_abort(w);
		trace_reader_close(r);
		fclose(f);
		free(out);
		return NULL;
	}
	if (trace_reader_cut(r))
		*cut = *trace_reader_cut(r);
	trace_writer_close(w, err);
	trace_reader_close(r);
	fclose(f);
	return out;
}

static char *fuzz_to_text(const void *data, size_t size, size_t *len)
{
	trace_error err, cut;
	return fuzz_read_text(data, size, len, false, &err, &cut);
}

static bool same_error(const trace_error *a, const trace_error *b)
{
	return !strcmp(a->msg, b->msg) && a->call == b->call && a->offset == b->offset &&
	       a->file_offset == b->file_offset;
}

/* Read with the records decoded on a thread of their own, the stream
 * reads as in place: the same text, or the same error; the same cut. */
static TRACE_UNUSED void fuzz_check_ahead(const uint8_t *data, size_t size)
{
	setenv("TRACE_DECODE_AHEAD", "1", 1);
	size_t n1 = 0, n2 = 0;
	trace_error e1, e2, c1, c2;
	char *t1 = fuzz_read_text(data, size, &n1, false, &e1, &c1);
	char *t2 = fuzz_read_text(data, size, &n2, true, &e2, &c2);
	if (!t1 != !t2 || (t1 && (n1 != n2 || memcmp(t1, t2, n1))) || (!t1 && !same_error(&e1, &e2)) ||
	    !same_error(&c1, &c2)) {
		fprintf(stderr, "decoded ahead, read otherwise: %s | %s; cut: %s | %s\n",
			t1 ? "read" : e1.msg, t2 ? "read" : e2.msg, c1.msg, c2.msg);
		abort();
	}
	free(t1);
	free(t2);
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
