/*
 * Call sets: apitrace's syntax for choosing calls (or frames) by number,
 * as `apitrace dump --calls` and `apitrace trim --calls` read it.
 *
 *     SET      = '@' FILE | RANGE ( [','] RANGE )*
 *     RANGE    = INTERVAL [ '/' ( STEP | "frame" ) ] | "frame"
 *     INTERVAL = '*' | N | N '-' | N '-' M
 *
 * N-M is inclusive, N- runs to the end, '*' is everything; /STEP keeps
 * every STEP-th number from the start of the interval; /frame keeps only
 * the calls that end a frame.  Ranges are separated by commas or blanks;
 * '@FILE', in place of a comma-separated element, reads ranges from FILE.
 * apitrace's other frequencies (draw, fbo, ...) need to know what draws,
 * which a stream does not say, so they are refused.
 *
 * Where apitrace prints a message and carries on (exit status 0), we
 * refuse: a malformed set is an error that names what was expected.
 */
#ifndef TRACE_CALLSET_H
#define TRACE_CALLSET_H

#include "trace.h"

/* What a range asks of a call besides its number. */
enum {
	TRACE_CALLSET_ANY = 0,            /* every call in the interval */
	TRACE_CALLSET_END_FRAME = 1u << 0, /* only calls that end a frame */
};

typedef struct trace_callset_range {
	uint64_t start, stop, step; /* inclusive; step >= 1 */
	uint32_t freq;              /* TRACE_CALLSET_ANY or _END_FRAME */
	uint64_t reach;             /* the largest stop of this range and all before */
} trace_callset_range;

typedef struct trace_callset {
	trace_callset_range *ranges; /* sorted by start */
	size_t n, cap;
	bool has_freq;               /* some range has a /frame frequency */
} trace_callset;

void trace_callset_init(trace_callset *s);
void trace_callset_free(trace_callset *s);

/*
 * Adds the ranges SPEC names to s (so a repeated option unites).
 * 0, or -1 with err's message saying what was expected where; s is then
 * as it was before.
 */
int trace_callset_parse(trace_callset *s, const char *spec, trace_error *err);

bool trace_callset_empty(const trace_callset *s);

/*
 * Whether the call numbered NO is in s; FLAGS says what else is known of
 * it (TRACE_CALLSET_END_FRAME when it ends a frame).
 */
bool trace_callset_contains(const trace_callset *s, uint64_t no, uint32_t flags);

/* The largest number s can contain (UINT64_MAX for an open range). */
uint64_t trace_callset_last(const trace_callset *s);
/* The smallest number from FROM on that s may contain (a /frame range's
 * every number), UINT64_MAX when none. */
uint64_t trace_callset_next(const trace_callset *s, uint64_t from);

#endif
