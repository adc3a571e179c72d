/*
 * What every tracekit program shares: usage errors (exit 2), the one
 * error message (exit 1), the progress line, and the copy loop.
 */
#ifndef TRACE_CLI_H
#define TRACE_CLI_H

#include "trace.h"

#include <stdnoreturn.h>

typedef struct trace_cli {
	const char *prog;
	const char *usage;   /* one line: "usage: trace-decode [-o FILE] [TRACE]" */
	bool quiet;          /* no progress line */
} trace_cli;

extern trace_cli trace_cli_self;

void trace_cli_init(const char *prog, const char *usage);
noreturn void trace_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void trace_cli_version(void);
/* For getopt_long's ':' and '?' (with an optstring that starts with ':'). */
noreturn void trace_cli_bad_option(int c, char **argv);
/* Prints err once and exits 1. */
noreturn void trace_cli_fail(const trace_error *err);

/* Progress on stderr while stderr is a terminal, at most 4 times a second. */
void trace_cli_progress(trace_reader *r, uint64_t calls);
/* The same for any input: N WHAT so far, BYTES of input read. */
void trace_cli_progress_count(uint64_t n, const char *what, uint64_t bytes);
void trace_cli_progress_done(void);

/* Parses "snappy", "brotli", "none", "text"; TRACE_FMT_AUTO if unknown. */
trace_format trace_cli_format(const char *name);

/* Copies every record of r to w (header included); 0 or -1 with err. */
int trace_cli_copy(trace_reader *r, trace_writer *w, trace_error *err);

#endif
