/*
 * Opening a stream: the container from the first bytes of the input,
 * then the encoding from the first byte inside it ('{' is text, anything
 * else the binary format), so even a gzip-compressed text trace reads.
 */
#include "internal.h"

#include <stdlib.h>

struct trace_reader {
	trace_source src;
	trace_sigtab *sigs;
	trace_header header;
	trace_arena header_arena;
	trace_format format;
	trace_binreader *bin;
	trace_textreader *text;
	char *name;
};

static trace_reader *open_source(trace_reader *r, trace_error *err)
{
	r->src.name = r->name;
	r->sigs = trace_sigtab_new();
	trace_arena_init(&r->header_arena);
	if (trace_source_open(&r->src, err) < 0)
		goto fail;
	if (trace_source_need(&r->src, 1, err) < 0)
		goto fail;
	if (r->src.p == r->src.end) {
		trace_error_clear(err);
		trace_source_locate(&r->src, err, 0);
		trace_error_set(err, "empty %s stream: not a trace",
				trace_format_name(r->src.container));
		goto fail;
	}
	const uint8_t *p = r->src.p;
	if (r->src.end - p >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		r->src.p += 3; /* a byte order mark an editor left */
	if (*p == '{' || *p == '#' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' ||
	    *p == 0xef) {
		r->format = TRACE_FMT_TEXT;
		r->text = trace_textreader_new(&r->src, r->sigs);
		if (trace_textreader_header(r->text, &r->header, &r->header_arena, err) < 0)
			goto fail;
	} else {
		r->format = r->src.container == TRACE_FMT_TEXT ? TRACE_FMT_RAW : r->src.container;
		r->bin = trace_binreader_new(&r->src, r->sigs);
		if (trace_binreader_header(r->bin, &r->header, &r->header_arena, err) < 0)
			goto fail;
	}
	return r;
fail:
	trace_reader_close(r);
	return NULL;
}

trace_reader *trace_reader_open_file(FILE *f, const char *name, trace_error *err)
{
	trace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->name = trace_xstrdup(name ? name : "-");
	r->src.file = f;
	return open_source(r, err);
}

trace_reader *trace_reader_open(const char *path, trace_error *err)
{
	const char *name;
	FILE *f = trace_open_input(path, &name, err);
	if (!f)
		return NULL;
	trace_reader *r = trace_reader_open_file(f, name, err);
	if (f == stdin)
		return r;
	if (r)
		r->src.own_file = true;
	else
		fclose(f);
	return r;
}

trace_reader *trace_reader_open_memory(const void *data, size_t size, const char *name,
				       trace_error *err)
{
	trace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->name = trace_xstrdup(name ? name : "memory");
	r->src.mem = data;
	r->src.memsize = size;
	return open_source(r, err);
}

const trace_header *trace_reader_header(trace_reader *r) { return &r->header; }
trace_format trace_reader_format(trace_reader *r) { return r->format; }
trace_sigtab *trace_reader_sigtab(trace_reader *r) { return r->sigs; }
uint64_t trace_reader_position(trace_reader *r) { return r->src.inpos; }

int trace_reader_next(trace_reader *r, trace_call **call, trace_error *err)
{
	if (r->text)
		return trace_textreader_next(r->text, call, err);
	return trace_binreader_next(r->bin, call, err);
}

void trace_reader_close(trace_reader *r)
{
	if (!r)
		return;
	trace_binreader_free(r->bin);
	trace_textreader_free(r->text);
	bool own = r->src.own_file;
	FILE *f = r->src.file;
	r->src.own_file = false;
	trace_source_close(&r->src);
	if (own && f)
		fclose(f);
	trace_sigtab_free(r->sigs);
	trace_arena_free(&r->header_arena);
	free(r->name);
	free(r);
}
