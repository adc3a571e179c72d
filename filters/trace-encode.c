/*
 * trace-encode: any trace (text, or binary in any container) to
 * apitrace's binary format, version 6.  See trace-encode(1).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: trace-encode [-z snappy|brotli|none] [-q QUALITY] [-o FILE] [--quiet] [TRACE]";

/* -z and -q */
static void option(int c, const char *arg, void *ctx)
{
	trace_writer_options *opt = ctx;
	if (c == 'z') {
		opt->format = trace_cli_compression(arg);
	} else {
		char *end;
		long q = strtol(arg, &end, 10);
		if (*end || end == arg || q < 0 || q > 11)
			trace_cli_usage_error("quality must be 0 to 11, not '%s'", arg);
		opt->quality = (int)q;
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"compression", required_argument, NULL, 'z'},
		{"quality", required_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	trace_writer_options opt = {.format = TRACE_FMT_SNAPPY, .quality = -1};
	const char *out;

	trace_cli_init("trace-encode", usage);
	const char *in = trace_cli_parse(argc, argv, "z:q:", longopts, option, &opt,
					 "Writes TRACE (default: standard input) in apitrace's binary "
					 "format.\n\n"
					 "  -z, --compression C  snappy (default), brotli or none\n"
					 "  -q, --quality N      Brotli quality, 0 to 11 (default 11)\n",
					 &out);
	if (opt.quality >= 0 && opt.format != TRACE_FMT_BROTLI)
		trace_cli_usage_error("--quality is for -z brotli");

	trace_cli_convert(trace_cli_open(in), out, &opt);
	return 0;
}
