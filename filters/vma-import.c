/*
 * vma-import: a Vulkan Memory Allocator call recording (VMA's CSV, format
 * 1,0 to 1,8) to a tracekit stream, losslessly.  See vma-import(1).
 */
#include "cli.h"
#include "vma.h"

#include <string.h>

static const char usage[] =
	"usage: vma-import [-f binary|text] [-z snappy|zstd|brotli|none] [-o FILE] [--quiet] "
	"[RECORDING]";


typedef struct options {
	trace_writer_options w;
	bool text, compression;
} options;

/* -f and -z */
static void option(int c, const char *arg, void *ctx)
{
	options *o = ctx;
	if (c == 'f') {
		if (!strcmp(arg, "text"))
			o->text = true;
		else if (!strcmp(arg, "binary"))
			o->text = false;
		else
			trace_cli_usage_error("unknown format '%s' (binary, text)", arg);
	} else {
		o->w.format = trace_cli_compression(arg);
		o->compression = true;
	}
}

/* The recording as trace_cli_copy's source. */
static int next(void *r, trace_call **c, trace_error *err)
{
	return vma_reader_next(r, c, err);
}

static uint64_t position(void *r)
{
	return vma_reader_position(r);
}

int main(int argc, char **argv)
{
	static const trace_cli_option opts[] = {
		{"format", 'f', required_argument, "  -f, --format F       binary (default) or text\n"},
		{"compression", 'z', required_argument,
		 "  -z, --compression C  snappy (default), zstd, brotli or none, for binary\n"},
		{NULL},
	};
	options o = {.w = {.format = TRACE_FMT_SNAPPY, .quality = -1}};
	const char *out;

	trace_cli_init("vma-import", usage);
	const char *in = trace_cli_parse(argc, argv, opts, option, &o,
					 "Writes the VMA call recording RECORDING (default: standard "
					 "input) as a tracekit stream.\n\n", &out);
	if (o.text && o.compression)
		trace_cli_usage_error("-z is for binary output, not -f text");
	trace_writer_options opt = o.w;
	if (o.text)
		opt.format = TRACE_FMT_TEXT;

	trace_error err;
	trace_error_clear(&err);
	vma_reader *r = vma_reader_open(in, &err);
	if (!r)
		trace_cli_fail(&err);
	trace_writer *w = trace_writer_open(out, &opt, &err);
	if (!w)
		trace_cli_fail(&err);
	if (trace_writer_header(w, vma_reader_header(r), &err) < 0)
		goto fail;
	trace_cli_source src = {r, next, position, "records"};
	if (trace_cli_copy(&src, trace_cli_trace_put, w, &err) < 0)
		goto fail;
	vma_reader_close(r);
	if (trace_writer_close(w, &err) < 0)
		trace_cli_fail(&err);
	return 0;

fail:
	trace_writer_abort(w);
	vma_reader_close(r);
	trace_cli_fail(&err);
}
