/*
 * Shared command-line plumbing.  Programs stay thin mains: options, open,
 * loop, close; the messages and exit statuses are the same everywhere.
 */
#include "cli.h"
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

trace_cli trace_cli_self;

static bool progress_shown;
static double progress_last;

void trace_cli_init(const char *prog, const char *usage)
{
	trace_cli_self.prog = prog;
	trace_cli_self.usage = usage;
	trace_cli_self.quiet = !isatty(2);
}

void trace_cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", trace_cli_self.prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s\n", trace_cli_self.usage);
	exit(2);
}

void trace_cli_bad_option(int c, char **argv)
{
	extern int optind, optopt;
	const char *arg = argv[optind - 1];
	if (c == ':')
		trace_cli_usage_error("option '%s' needs a value", arg);
	if (optopt)
		trace_cli_usage_error("unknown option '-%c'", optopt);
	trace_cli_usage_error("unknown option '%s'", arg);
}

void trace_cli_version(void)
{
	printf("%s (tracekit) %s\n", trace_cli_self.prog, TRACE_TOOL_VERSION);
	exit(0);
}

void trace_cli_fail(const trace_error *err)
{
	trace_cli_progress_done();
	trace_error_print(err, trace_cli_self.prog, stderr);
	exit(1);
}

const char *trace_cli_start(int argc, char **argv, const char *prog, const char *usage,
			    const char *intro, const char **out)
{
	trace_cli_init(prog, usage);
	return trace_cli_parse(argc, argv, NULL, NULL, NULL, intro, out);
}

void trace_cli_warn_cut(trace_reader *r)
{
	const trace_error *w = trace_reader_cut(r);
	if (!w)
		return;
	trace_cli_progress_done();
	fprintf(stderr, "%s: %s: warning: %s\n", trace_cli_self.prog, w->file, w->msg);
}

/* Whether OPTS names the option NAME. */
static bool names(const trace_cli_option *opts, const char *name)
{
	for (; opts && opts->name; opts++)
		if (!strcmp(opts->name, name))
			return true;
	return false;
}

const char *trace_cli_parse(int argc, char **argv, const trace_cli_option *opts,
			    trace_cli_option_fn *one, void *ctx, const char *intro,
			    const char **out)
{
	static const trace_cli_option common[] = {
		{"output", 'o', required_argument,
		 "  -o, --output FILE    write to FILE (default: standard output)\n"},
		{"quiet", TRACE_CLI_QUIET, no_argument, "      --quiet          no progress line\n"},
		{"help", 'h', no_argument, "  -h, --help           this help\n"},
		{"version", TRACE_CLI_VERSION, no_argument, "      --version        the version\n"},
	};
	size_t ncommon = sizeof(common) / sizeof(common[0]), n = 0;
	while (opts && opts[n].name)
		n++;
	/* the program's options, then the common ones it does not name */
	const trace_cli_option **all = trace_xcalloc(n + ncommon, sizeof(*all));
	for (size_t i = 0; i < n; i++)
		all[i] = &opts[i];
	for (size_t i = 0; i < ncommon; i++)
		if (!names(opts, common[i].name))
			all[n++] = &common[i];
	struct option *longs = trace_xcalloc(n + 1, sizeof(*longs));
	char *shorts = trace_xcalloc(3 * n + 2, 1), *s = shorts;
	*s++ = ':';
	for (size_t i = 0; i < n; i++) {
		longs[i] = (struct option){all[i]->name, all[i]->arg, NULL, all[i]->id};
		if (all[i]->id >= 256)
			continue;
		*s++ = (char)all[i]->id;
		for (int k = 0; k < all[i]->arg; k++)
			*s++ = ':';
	}
	bool own_output = names(opts, "output");

	int c;
	if (out)
		*out = "-";
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (c) {
		case TRACE_CLI_QUIET: trace_cli_self.quiet = true; break;
		case 'h':
			printf("%s\n\n%s", trace_cli_self.usage, intro);
			for (size_t i = 0; i < n; i++)
				if (all[i]->help)
					fputs(all[i]->help, stdout);
			exit(0);
		case TRACE_CLI_VERSION: trace_cli_version();
		case ':':
		case '?': trace_cli_bad_option(c, argv);
		case 'o':
			if (!own_output) {
				*out = optarg;
				break;
			}
			/* fall through */
		default: one(c, optarg, ctx);
		}
	}
	free(shorts);
	free(longs);
	free(all);
	if (argc - optind > 1)
		trace_cli_usage_error("one input at a time");
	return optind < argc ? argv[optind] : "-";
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void trace_cli_progress_count(uint64_t n, const char *what, uint64_t bytes)
{
	if (trace_cli_self.quiet || (n & 0xfff))
		return;
	double t = now();
	if (t - progress_last < 0.25)
		return;
	progress_last = t;
	progress_shown = true;
	fprintf(stderr, "\r%s: %llu %s, %.1f MB read", trace_cli_self.prog,
		(unsigned long long)n, what, (double)bytes / 1e6);
}

void trace_cli_progress(trace_reader *r, uint64_t calls)
{
	if (!(calls & 0xfff))
		trace_cli_progress_count(calls, "calls", trace_reader_position(r));
}

void trace_cli_progress_done(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = false;
}

trace_format trace_cli_format(const char *name)
{
	if (!strcmp(name, "snappy"))
		return TRACE_FMT_SNAPPY;
	if (!strcmp(name, "brotli"))
		return TRACE_FMT_BROTLI;
	if (!strcmp(name, "zstd"))
		return TRACE_FMT_ZSTD;
	if (!strcmp(name, "none") || !strcmp(name, "raw"))
		return TRACE_FMT_RAW;
	if (!strcmp(name, "text"))
		return TRACE_FMT_TEXT;
	return TRACE_FMT_AUTO;
}

trace_format trace_cli_compression(const char *name)
{
	trace_format f = trace_cli_format(name);
	if (f == TRACE_FMT_AUTO || f == TRACE_FMT_TEXT)
		trace_cli_usage_error("unknown compression '%s' (snappy, zstd, brotli, none)", name);
	return f;
}

trace_reader *trace_cli_open(const char *path)
{
	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open(path, &err);
	if (!r)
		trace_cli_fail(&err);
	return r;
}

trace_format trace_cli_format_arg(const char *arg)
{
	trace_format f = trace_cli_format(arg);
	if (f == TRACE_FMT_AUTO)
		trace_cli_usage_error("unknown format '%s' (snappy, zstd, brotli, none, text)", arg);
	return f;
}

int trace_cli_copy(const trace_cli_source *src, trace_cli_put_fn *put, void *w,
		   trace_error *err)
{
	uint64_t n = 0;
	trace_call *c;
	int k;
	while ((k = src->next(src->r, &c, err)) > 0) {
		if (put(w, c, err) < 0)
			break;
		if (!(++n & 0xfff))
			trace_cli_progress_count(n, src->what, src->position(src->r));
	}
	trace_cli_progress_done();
	return k > 0 ? -1 : k;
}

static int trace_next(void *r, trace_call **c, trace_error *err)
{
	return trace_reader_next(r, c, err);
}

static uint64_t trace_position(void *r)
{
	return trace_reader_position(r);
}

trace_cli_source trace_cli_trace_source(trace_reader *r)
{
	return (trace_cli_source){r, trace_next, trace_position, "calls"};
}

int trace_cli_trace_put(void *w, const trace_call *c, trace_error *err)
{
	return trace_writer_call(w, c, err);
}

static int copy(trace_reader *r, trace_writer *w, trace_error *err)
{
	if (trace_writer_header(w, trace_reader_header(r), err) < 0)
		return -1;
	trace_cli_source src = trace_cli_trace_source(r);
	int k = trace_cli_copy(&src, trace_cli_trace_put, w, err);
	if (k == 0)
		trace_cli_warn_cut(r);
	return k;
}

void trace_cli_convert(trace_reader *r, const char *out, const trace_writer_options *opt)
{
	trace_error err;
	trace_error_clear(&err);
	trace_writer *w = trace_writer_open(out, opt, &err);
	if (!w)
		trace_cli_fail(&err);
	if (copy(r, w, &err) < 0) {
		trace_writer_abort(w);
		trace_cli_fail(&err);
	}
	if (trace_writer_close(w, &err) < 0)
		trace_cli_fail(&err);
	trace_reader_close(r);
}
