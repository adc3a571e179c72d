/*
 * vma-export: a VMA stream (what vma-import wrote, in any encoding, edited
 * or not) back to VMA's CSV call recording.  See vma-export(1).
 */
#include "cli.h"
#include "vma.h"

#include <string.h>

static const char usage[] = "usage: vma-export [-o FILE] [--quiet] [TRACE]";

/* The likely mistake behind an input that does not read: the recording
 * itself given where its stream belongs. */
static bool is_recording(const char *path)
{
	static const char magic[] = VMA_MAGIC_LINE;
	char head[sizeof(magic) - 1];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
	if (!f)
		return false;
	bool yes = fread(head, 1, sizeof(head), f) == sizeof(head) &&
		   !memcmp(head, magic, sizeof(head));
	fclose(f);
	return yes;
}

/* trace_cli_copy's writer: a record we cannot write says where it was
 * read. */
static int put(void *w, const trace_call *call, trace_error *err)
{
	if (vma_writer_call(w, call, err) >= 0)
		return 0;
	if (call->offset >= 0)
		err->offset = call->offset;
	return -1;
}

int main(int argc, char **argv)
{
	const char *out;

	const char *in = trace_cli_start(argc, argv, "vma-export", usage,
					 "Writes the VMA stream TRACE (default: standard input) as a "
					 "VMA call recording (CSV).\n\n", &out);
	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open(in, &err);
	if (!r) {
		if (is_recording(in)) {
			trace_error_clear(&err);
			snprintf(err.file, sizeof(err.file), "%s", in);
			trace_error_set(&err, "this is a VMA recording, not a stream: "
					"vma-import makes the stream vma-export reads");
		}
		trace_cli_fail(&err);
	}
	vma_writer *w = vma_writer_open(out, &err);
	if (!w)
		trace_cli_fail(&err);
	if (vma_writer_header(w, trace_reader_header(r), &err) < 0)
		goto fail;
	trace_cli_source src = trace_cli_trace_source(r);
	if (trace_cli_copy(&src, put, w, &err) < 0)
		goto fail;
	trace_cli_warn_cut(r);
	trace_reader_close(r);
	if (vma_writer_close(w, &err) < 0)
		trace_cli_fail(&err);
	return 0;

fail:
	/* the writer's messages name the record, not the file it came from */
	if (!err.file[0])
		snprintf(err.file, sizeof(err.file), "%s", in);
	vma_writer_abort(w);
	trace_reader_close(r);
	trace_cli_fail(&err);
}
