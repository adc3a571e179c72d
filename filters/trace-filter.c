/*
 * trace-filter: keep the records of a trace that match every criterion
 * given (function name rules, threads, frames, call numbers, handles),
 * or count them per function (lib/stream/select.c).  A plain cut:
 * nothing is added to make the result replay, which is trace-trim's job.
 * See trace-filter(1).
 */
#include "cli.h"
#include "select.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: trace-filter [--keep PAT] [--drop PAT] [--thread N] [--frames SET] "
	"[--calls SET] [--handle PTR] [--count [--by-frame]] [-f FORMAT] [-o FILE] "
	"[--quiet] [TRACE]";

static const char intro[] =
	"Writes the records of TRACE (default: standard input) that match every\n"
	"criterion given, in the encoding it was read in.  A plain cut: the result\n"
	"may not replay (trace-trim cuts so that it does).\n\n";

enum {
	OPT_KEEP = 256,
	OPT_DROP,
	OPT_THREAD,
	OPT_FRAMES,
	OPT_CALLS,
	OPT_HANDLE,
	OPT_COUNT,
	OPT_BY_FRAME,
};

static const trace_cli_option opts[] = {
	{"keep", OPT_KEEP, required_argument,
	 "  --keep PAT, --drop PAT\n"
	 "                       function name globs, in order: the last that\n"
	 "                       matches decides; names no rule matches are\n"
	 "                       dropped if the first rule is --keep, else kept\n"},
	{"drop", OPT_DROP, required_argument, NULL},
	{"thread", OPT_THREAD, required_argument,
	 "  --thread N           calls of thread N (repeatable: any of them)\n"},
	{"frames", OPT_FRAMES, required_argument,
	 "  --frames SET         calls in these frames (0-9, 5, 10-20,30, 7-)\n"},
	{"calls", OPT_CALLS, required_argument,
	 "  --calls SET          calls with these numbers (0-100/2, 10-20,30, *,\n"
	 "                       */frame, @FILE)\n"},
	{"handle", OPT_HANDLE, required_argument,
	 "  --handle PTR         calls with the pointer PTR in any value\n"
	 "                       (repeatable: any of them)\n"},
	{"count", OPT_COUNT, no_argument,
	 "  --count              print calls per function instead of a trace\n"},
	{"by-frame", OPT_BY_FRAME, no_argument,
	 "  --by-frame           with --count, also a table for each frame\n"},
	{"format", 'f', required_argument,
	 "  -f, --format F       write snappy, zstd, brotli, none or text\n"},
	{NULL},
};

typedef struct options {
	trace_select sel;
	trace_select_options run;
} options;

static uint32_t parse_thread(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v > UINT32_MAX)
		trace_cli_usage_error("--thread takes a thread number, not '%s'", s);
	return (uint32_t)v;
}

static uint64_t parse_handle(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (*s < '0' || *s > '9' || *end || errno)
		trace_cli_usage_error("--handle takes a pointer such as 0x55d0a1b2c3d0, not '%s'", s);
	if (!v)
		trace_cli_usage_error("--handle 0: a null pointer names no object");
	return v;
}

static void parse_set(trace_callset *set, const char *opt, const char *s)
{
	trace_error err;
	trace_error_clear(&err);
	if (trace_callset_parse(set, s, &err) < 0)
		trace_cli_usage_error("%s: %s", opt, err.msg);
}

static void option(int c, const char *arg, void *ctx)
{
	options *o = ctx;
	switch (c) {
	case OPT_KEEP:
	case OPT_DROP:
		if (!*arg)
			trace_cli_usage_error("%s needs a pattern", c == OPT_KEEP ? "--keep" : "--drop");
		trace_select_add_rule(&o->sel, arg, c == OPT_KEEP);
		break;
	case OPT_THREAD: trace_select_add_thread(&o->sel, parse_thread(arg)); break;
	case OPT_FRAMES:
		parse_set(&o->sel.frames, "--frames", arg);
		if (o->sel.frames.has_freq)
			trace_cli_usage_error("--frames takes frame numbers; "
					      "'/frame' belongs to --calls");
		break;
	case OPT_CALLS: parse_set(&o->sel.calls, "--calls", arg); break;
	case OPT_HANDLE: trace_select_add_handle(&o->sel, parse_handle(arg)); break;
	case OPT_COUNT: o->run.count = true; break;
	case OPT_BY_FRAME: o->run.by_frame = true; break;
	case 'f': o->run.format = trace_cli_format_arg(arg); break;
	}
}

int main(int argc, char **argv)
{
	options o = {.run = {.format = TRACE_FMT_AUTO, .progress = trace_cli_progress,
			     .progress_done = trace_cli_progress_done,
			     .warn_cut = trace_cli_warn_cut}};
	const char *out;

	trace_cli_init("trace-filter", usage);
	trace_select_init(&o.sel);
	const char *in = trace_cli_parse(argc, argv, opts, option, &o, intro, &out);
	if (o.run.by_frame && !o.run.count)
		trace_cli_usage_error("--by-frame goes with --count");
	if (o.run.count && o.run.format != TRACE_FMT_AUTO)
		trace_cli_usage_error("--count writes a table, not a trace: no -f");

	trace_error err;
	trace_error_clear(&err);
	if (trace_select_run(&o.sel, in, out, &o.run, &err) < 0)
		trace_cli_fail(&err);
	trace_select_free(&o.sel);
	return 0;
}
