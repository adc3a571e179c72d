/*
 * What every tracekit program shares: usage errors (exit 2), the one
 * error message (exit 1), the progress line, and the copy loop.
 */
#ifndef TRACE_CLI_H
#define TRACE_CLI_H

#include "trace.h"

#include <getopt.h>
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
/*
 * One option of a program, listed once: what getopt_long matches and the
 * lines --help prints for it.  ID is the short letter ('f'), or a number
 * from 256 for a long option alone; ARG is no_argument, required_argument
 * or optional_argument; HELP is NULL where another option's lines tell of
 * this one too (--drop in --keep's).  A table ends with a zeroed entry.
 */
typedef struct trace_cli_option {
	const char *name;
	int id;
	int arg;
	const char *help;
} trace_cli_option;

/* The ids of the common options that have no short letter. */
enum { TRACE_CLI_QUIET = 0x10000, TRACE_CLI_VERSION };

/*
 * The options of a stream program: its own (OPTS, each handed to ONE with
 * CTX) and the ones every program takes: -o/--output FILE (into *out, "-"
 * if absent), --quiet, -h/--help (the usage line, then INTRO, then each
 * option's lines in order), --version.  A program whose table names one
 * of these has it instead (trace-replay's -o is its screenshot's, its
 * --quiet is -q too): its -o and --quiet go to ONE, its --help and
 * --version lines are its own.  One input at most; returns it, "-" for
 * standard input.  Usage errors exit 2.
 */
typedef void trace_cli_option_fn(int c, const char *arg, void *ctx);
const char *trace_cli_parse(int argc, char **argv, const trace_cli_option *opts,
			    trace_cli_option_fn *one, void *ctx, const char *intro,
			    const char **out);
/* trace_cli_init and trace_cli_parse for a program with no options of
 * its own. */
const char *trace_cli_start(int argc, char **argv, const char *prog, const char *usage,
			    const char *intro, const char **out);

/* Prints err once and exits 1. */
noreturn void trace_cli_fail(const trace_error *err);

/* After reading R to its end: the one warning of a trace cut off
 * (trace_reader_cut), "PROG: FILE: warning: ...", if it was. */
void trace_cli_warn_cut(trace_reader *r);

/* Progress on stderr while stderr is a terminal, at most 4 times a second. */
void trace_cli_progress(trace_reader *r, uint64_t calls);
/* The same for any input: N WHAT so far, BYTES of input read. */
void trace_cli_progress_count(uint64_t n, const char *what, uint64_t bytes);
void trace_cli_progress_done(void);

/* Parses "snappy", "brotli", "none", "text"; TRACE_FMT_AUTO if unknown. */
trace_format trace_cli_format(const char *name);
/* -z's argument: "snappy", "brotli" or "none"; anything else is a usage
 * error. */
trace_format trace_cli_compression(const char *name);

/* Opens PATH ("-": standard input) as a trace, or exits 1 with the
 * message. */
trace_reader *trace_cli_open(const char *path);
/* -f's value (snappy, zstd, brotli, none, text); another is a usage error. */
trace_format trace_cli_format_arg(const char *arg);

/*
 * The copy loop of the converting programs, over any reader and writer:
 * SRC's records, read by NEXT (1, 0 at the end, -1 on an error), each to
 * PUT with W, and the progress line counting WHAT by POSITION's bytes.
 * Returns 0 at the end of SRC, -1 with ERR set; the progress line is gone
 * after it either way.  The headers are the caller's.
 */
typedef struct trace_cli_source {
	void *r;
	int (*next)(void *r, trace_call **c, trace_error *err);
	uint64_t (*position)(void *r);
	const char *what;
} trace_cli_source;
typedef int trace_cli_put_fn(void *w, const trace_call *c, trace_error *err);
int trace_cli_copy(const trace_cli_source *src, trace_cli_put_fn *put, void *w,
		   trace_error *err);
/* A trace_reader as a source ("calls"), a trace_writer as a PUT. */
trace_cli_source trace_cli_trace_source(trace_reader *r);
int trace_cli_trace_put(void *w, const trace_call *c, trace_error *err);

/* Writes every record of R (header included) to OUT, a path or "-" for
 * standard output, with OPT, and closes both; on an error, the output
 * goes (trace_writer_abort) and the program exits 1 with the message. */
void trace_cli_convert(trace_reader *r, const char *out, const trace_writer_options *opt);

#endif
