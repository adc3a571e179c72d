/*
 * vktrim: the live state of a Vulkan capture or a VMA stream, kept while
 * trace-trim reads it, and the setup prefix that recreates the part of it
 * a range of calls uses.
 *
 * Fed every record before the range (trim_before), the state holds what
 * is alive and how it came to be: each object's creating record and the
 * records that changed it since (binds, descriptor updates), command
 * buffers' current recordings, the submits whose commands last wrote each
 * buffer and image (with the host-written bytes they read, as they were
 * then), and the bytes the host last wrote into each buffer and image
 * (tracekit.update, merged).  What dies is forgotten, so memory follows
 * the state, not the trace's length.
 *
 * Fed the range's records (trim_range), it notes which objects the range
 * names, which buffer bytes it may read, which images it clears before
 * it reads them, and what the host writes before its first submit.
 * trim_write_setup() then writes what those objects need, transitively,
 * in the order the trace had it: creation, state, the submits that wrote
 * their contents (run one at a time, their semaphores and fences left
 * out), and their contents at the range's start, of buffers only the
 * bytes the range and those submits may read; fences and timeline
 * semaphores are created in the state they had then, and the binary
 * semaphores left signaled (a submit's or an acquire's signal nothing
 * waited for before the range) are signaled by a submit of its own.
 *
 * Like lib/replay/ it reads the generated argument structs
 * (build/gen/vkschema_cmds.h), so only trace-trim links lib/trim/ (whose
 * files trim_internal.h lists).  See trace-trim(1).
 */
#ifndef TRACE_VKTRIM_H
#define TRACE_VKTRIM_H

#include "trace.h"

typedef enum trim_api { TRIM_VULKAN, TRIM_VMA } trim_api;

typedef struct trim trim;

/* SIGS: the input's signature table (it outlives the state). */
trim *trim_new(trim_api api, trace_sigtab *sigs);
/* A record before the range; -1 with err (call and offset) if malformed. */
int trim_before(trim *t, const trace_call *c, trace_error *err);
/* A record of the range. */
int trim_range(trim *t, const trace_call *c, trace_error *err);
/*
 * Writes the setup: every record the range needs from before it, between
 * tracekit.setup.begin and tracekit.setup.end, numbered from *no on (*no
 * is left at the next number).  STATS (may be NULL) gets the objects and
 * records written.
 */
typedef struct trim_lost {
	uint64_t n, by, handle;
	const char *type;
} trim_lost;
typedef struct trim_stats {
	uint64_t objects, records, submits, updates, update_bytes;
	uint64_t live_objects, live_records;
	/* reads by setup submits of what the GPU wrote into an object the
	 * program destroyed before the range, not restored: how many, and
	 * the first one's (the call of its submit, the object) */
	trim_lost lost;
	uint64_t pruned;  /* transfers of those submits left out (their results unread) */
} trim_stats;
int trim_write_setup(trim *t, trace_writer *w, uint64_t *no, trim_stats *stats,
		     trace_error *err);
/* Before trim_write_setup: a line on F for each submit the setup runs
 * again, saying why (the object it wrote that the range or another of
 * them may read) and the bytes of memory contents written before it. */
void trim_explain(trim *t, FILE *f);
void trim_free(trim *t);

/* The pseudo-calls that bracket a setup prefix. */
#define TRIM_SETUP_BEGIN "tracekit.setup.begin"
#define TRIM_SETUP_END "tracekit.setup.end"

#endif
