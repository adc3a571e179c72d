/*
 * Selecting calls: trace-filter's criteria (function name rules,
 * threads, frames, call numbers, handles), of which every one given must
 * hold, and the pass that writes the calls selected as a trace or counts
 * them per function (lib/stream/select.c).  A plain cut: nothing is added
 * to make the result replay, which is trace-trim's job.
 */
#ifndef TRACE_SELECT_H
#define TRACE_SELECT_H

#include "callset.h"
#include "tmap.h"
#include "trace.h"

typedef struct trace_select_rule {
	const char *pattern;  /* a glob (fnmatch), kept by reference */
	bool keep;            /* --keep, else --drop */
} trace_select_rule;

typedef struct trace_select {
	trace_select_rule *rules;
	size_t nrules;
	uint32_t *threads;
	size_t nthreads;
	trace_callset calls, frames;
	uint64_t *handles;
	size_t nhandles;
	tmap verdicts; /* function signature -> 1 drop, 2 keep */
} trace_select;

void trace_select_init(trace_select *s);
void trace_select_free(trace_select *s);

/*
 * The last rule whose pattern matches a function's name decides.  A name
 * no rule matches gets the opposite of the first rule: "--keep 'glDraw*'"
 * keeps only draws, "--drop 'glGet*'" keeps everything else.
 */
void trace_select_add_rule(trace_select *s, const char *pattern, bool keep);
/* Calls of any of the threads added. */
void trace_select_add_thread(trace_select *s, uint32_t thread);
/* Calls with any of the pointers added in any value. */
void trace_select_add_handle(trace_select *s, uint64_t handle);

/* Whether call C, in frame FRAME (which it ends when ENDS_FRAME), meets
 * every criterion. */
bool trace_select_call(trace_select *s, const trace_call *c, int64_t frame, bool ends_frame);

typedef struct trace_select_options {
	trace_format format;  /* of the trace written; TRACE_FMT_AUTO: as read */
	bool count;           /* calls per function instead of a trace */
	bool by_frame;        /* with count: a table for each frame too */
	/* after each record read, and once the reading ends (a progress
	 * line: trace_cli_progress, trace_cli_progress_done); may be NULL */
	void (*progress)(trace_reader *r, uint64_t records);
	void (*progress_done)(void);
	/* once the whole trace is read: the warning of a trace cut off
	 * (trace_cli_warn_cut); may be NULL */
	void (*warn_cut)(trace_reader *r);
} trace_select_options;

/*
 * Reads IN (a path, "-" for standard input) and writes to OUT (the same)
 * the calls S selects, or their count.  0, or -1 with err, OUT then not
 * left half-written.
 */
int trace_select_run(trace_select *s, const char *in, const char *out,
		     const trace_select_options *opt, trace_error *err);

#endif
