/*
 * vma-import: a Vulkan Memory Allocator call recording (VMA's CSV, format
 * 1,0 to 1,8) to a tracekit stream, losslessly.  See vma-import(1).
 */
#include "cli.h"
#include "vma.h"

#include <getopt.h>
#include <string.h>

static const char usage[] =
	"usage: vma-import [-f binary|text] [-z snappy|brotli|none] [-o FILE] [--quiet] "
	"[RECORDING]";


int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"compression", required_argument, NULL, 'z'},
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'Q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	trace_writer_options opt = {.format = TRACE_FMT_SNAPPY, .quality = -1};
	const char *out = "-";
	bool text = false, compression = false;
	int c;

	trace_cli_init("vma-import", usage);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:z:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text"))
				text = true;
			else if (!strcmp(optarg, "binary"))
				text = false;
			else
				trace_cli_usage_error("unknown format '%s' (binary, text)", optarg);
			break;
		case 'z':
			opt.format = trace_cli_format(optarg);
			if (opt.format == TRACE_FMT_AUTO || opt.format == TRACE_FMT_TEXT)
				trace_cli_usage_error("unknown compression '%s' (snappy, brotli, none)",
						      optarg);
			compression = true;
			break;
		case 'o': out = optarg; break;
		case 'Q': trace_cli_self.quiet = true; break;
		case 'h':
			printf("%s\n\nWrites the VMA call recording RECORDING (default: standard "
			       "input) as a tracekit stream.\n\n"
			       "  -f, --format F       binary (default) or text\n"
			       "  -z, --compression C  snappy (default), brotli or none, for binary\n"
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
	if (text && compression)
		trace_cli_usage_error("-z is for binary output, not -f text");
	if (text)
		opt.format = TRACE_FMT_TEXT;

	trace_error err;
	trace_error_clear(&err);
	vma_reader *r = vma_reader_open(optind < argc ? argv[optind] : "-", &err);
	if (!r)
		trace_cli_fail(&err);
	trace_writer *w = trace_writer_open(out, &opt, &err);
	if (!w)
		trace_cli_fail(&err);
	if (trace_writer_header(w, vma_reader_header(r), &err) < 0)
		goto fail;
	uint64_t n = 0;
	trace_call *call;
	int k;
	while ((k = vma_reader_next(r, &call, &err)) > 0) {
		if (trace_writer_call(w, call, &err) < 0)
			goto fail;
		if (!(++n & 0xfff))
			trace_cli_progress_count(n, "records", vma_reader_position(r));
	}
	if (k < 0)
		goto fail;
	trace_cli_progress_done();
	vma_reader_close(r);
	if (trace_writer_close(w, &err) < 0)
		trace_cli_fail(&err);
	return 0;

fail:
	trace_cli_progress_done();
	trace_writer_abort(w);
	vma_reader_close(r);
	trace_cli_fail(&err);
}
