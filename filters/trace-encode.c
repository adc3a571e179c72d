/*
 * trace-encode: any trace (text, or binary in any container) to
 * apitrace's binary format, version 6.  See trace-encode(1).
 */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: trace-encode [-z snappy|brotli|none] [-q QUALITY] [-o FILE] [--quiet] [TRACE]";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"compression", required_argument, NULL, 'z'},
		{"quality", required_argument, NULL, 'q'},
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'Q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	trace_writer_options opt = {.format = TRACE_FMT_SNAPPY, .quality = -1};
	const char *out = "-";
	int c;

	trace_cli_init("trace-encode", usage);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":z:q:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'z':
			opt.format = trace_cli_format(optarg);
			if (opt.format == TRACE_FMT_AUTO || opt.format == TRACE_FMT_TEXT)
				trace_cli_usage_error("unknown compression '%s' (snappy, brotli, none)",
						      optarg);
			break;
		case 'q': {
			char *end;
			long q = strtol(optarg, &end, 10);
			if (*end || end == optarg || q < 0 || q > 11)
				trace_cli_usage_error("quality must be 0 to 11, not '%s'", optarg);
			opt.quality = (int)q;
			break;
		}
		case 'o': out = optarg; break;
		case 'Q': trace_cli_self.quiet = true; break;
		case 'h':
			printf("%s\n\nWrites TRACE (default: standard input) in apitrace's binary "
			       "format.\n\n"
			       "  -z, --compression C  snappy (default), brotli or none\n"
			       "  -q, --quality N      Brotli quality, 0 to 11 (default 11)\n"
			       "  -o, --output FILE    write to FILE (default: standard output)\n"
			       "      --quiet          no progress line\n"
			       "  -h, --help           this help\n"
			       "      --version        the version\n",
			       usage);
			return 0;
		case 'V': trace_cli_version();
		default: trace_cli_bad_option(c, argv);
		}
	}
	if (argc - optind > 1)
		trace_cli_usage_error("one input at a time");
	if (opt.quality >= 0 && opt.format != TRACE_FMT_BROTLI)
		trace_cli_usage_error("--quality is for -z brotli");

	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open(optind < argc ? argv[optind] : "-", &err);
	if (!r)
		trace_cli_fail(&err);
	trace_cli_convert(r, out, &opt);
	return 0;
}
