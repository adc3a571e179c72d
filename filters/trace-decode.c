/*
 * trace-decode: any trace (binary in any container, or text) to the text
 * form, one record per line.  See trace-decode(1) and trace-format(5).
 */
#include "cli.h"


static const char usage[] = "usage: trace-decode [-o FILE] [--quiet] [TRACE]";

int main(int argc, char **argv)
{
	const char *out;

	const char *in = trace_cli_start(argc, argv, "trace-decode", usage,
					 "Writes TRACE (default: standard input) as text, one record "
					 "a line.\n\n", &out);
	trace_writer_options opt = {.format = TRACE_FMT_TEXT, .quality = -1};
	trace_cli_convert(trace_cli_open(in), out, &opt);
	return 0;
}
