/*
 * trace-encode: any trace (text, or binary in any container) to
 * apitrace's binary format, version 6.  See trace-encode(1).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: trace-encode [-z snappy|zstd|brotli|none] [-q LEVEL] [-o FILE] [--quiet] [TRACE]";

/* -z and -q */
static void option(int c, const char *arg, void *ctx)
{
	trace_writer_options *opt = ctx;
	if (c == 'z') {
		opt->format = trace_cli_compression(arg);
	} else {
		char *end;
		long q = strtol(arg, &end, 10);
		if (*end || end == arg || q < 0 || q > 19)
			trace_cli_usage_error("-q wants a level (Brotli 0 to 11, zstd 1 to 19), "
					      "not '%s'", arg);
		opt->quality = (int)q;
	}
}

int main(int argc, char **argv)
{
	static const trace_cli_option opts[] = {
		{"compression", 'z', required_argument,
		 "  -z, --compression C  snappy (default), zstd, brotli or none\n"},
		{"quality", 'q', required_argument,
		 "  -q, --quality N      zstd level, 1 to 19 (default 3), or\n"
		 "                       Brotli quality, 0 to 11 (default 11)\n"},
		{NULL},
	};
	trace_writer_options opt = {.format = TRACE_FMT_SNAPPY, .quality = -1};
	const char *out;

	trace_cli_init("trace-encode", usage);
	const char *in = trace_cli_parse(argc, argv, opts, option, &opt,
					 "Writes TRACE (default: standard input) in apitrace's binary "
					 "format.\n\n", &out);
	if (opt.quality >= 0 && opt.format != TRACE_FMT_BROTLI && opt.format != TRACE_FMT_ZSTD)
		trace_cli_usage_error("--quality is for -z zstd or brotli");
	if (opt.format == TRACE_FMT_BROTLI && opt.quality > 11)
		trace_cli_usage_error("-q %d: Brotli's quality is 0 to 11", opt.quality);
	if (opt.format == TRACE_FMT_ZSTD && opt.quality == 0)
		trace_cli_usage_error("-q 0: zstd's level is 1 to 19");

	trace_cli_convert(trace_cli_open(in), out, &opt);
	return 0;
}
