/*
 * trace-decode: any trace (binary in any container, or text) to the text
 * form, one record per line.  See trace-decode(1) and trace-format(5).
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char usage[] = "usage: trace-decode [-o FILE] [--quiet] [TRACE]";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'Q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *out = "-";
	int c;

	trace_cli_init("trace-decode", usage);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'Q': trace_cli_self.quiet = true; break;
		case 'h':
			printf("%s\n\nWrites TRACE (default: standard input) as text, one record "
			       "a line.\n\n"
			       "  -o, --output FILE  write to FILE (default: standard output)\n"
			       "      --quiet        no progress line\n"
			       "  -h, --help         this help\n"
			       "      --version      the version\n",
			       usage);
			return 0;
		case 'V': trace_cli_version();
		default: trace_cli_bad_option(c, argv);
		}
	}
	if (argc - optind > 1)
		trace_cli_usage_error("one input at a time");

	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open(optind < argc ? argv[optind] : "-", &err);
	if (!r)
		trace_cli_fail(&err);
	trace_writer_options opt = {.format = TRACE_FMT_TEXT, .quality = -1};
	trace_cli_convert(r, out, &opt);
	return 0;
}
