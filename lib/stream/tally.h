/*
 * Tally: calls per function, printed as trace-filter --count's table
 * (lib/stream/tally.c).
 */
#ifndef TRACE_TALLY_H
#define TRACE_TALLY_H

#include "tmap.h"
#include "trace.h"

#include <stdio.h>

typedef struct trace_tally {
	tmap counts;    /* function signature -> calls */
	uint64_t total;
} trace_tally;

/* A zeroed trace_tally is empty. */
void trace_tally_add(trace_tally *t, const trace_func_sig *sig);
/* Rows by count, most first, then by name; a total line. */
void trace_tally_print(FILE *out, const trace_tally *t);
/* Counts back to 0 (the functions seen are kept, for the next frame). */
void trace_tally_clear(trace_tally *t);
void trace_tally_free(trace_tally *t);

#endif
