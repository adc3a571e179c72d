/*
 * Opening a stream: the container from the first bytes of the input,
 * then the encoding from the first byte inside it ('{' is text, anything
 * else the binary format), so even a gzip-compressed text trace reads.
 *
 * A trace cut off (the capture killed, the disk full) reads to its last
 * whole record; the reader then holds the one warning that says so.
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
	int64_t last_no;   /* the last complete call returned, or -1 */
	bool end_due;      /* the header promises a TRACE_END record */
	bool end_seen;     /* and it came */
	trace_error cut;   /* the warning, once the end of a cut trace is read */
	int index;         /* the seek index: 0 not looked for, 1 loaded, -1 none */
	trace_seekindex ix;
	int64_t jumped;    /* the stream offset of the last jump, or -1 */
};

static trace_reader *open_source(trace_reader *r, trace_error *err)
{
	r->src.name = r->name;
	r->last_no = -1;
	r->jumped = -1;
	trace_error_clear(&r->cut);
	r->sigs = trace_sigtab_new();
	trace_arena_init(&r->header_arena);
	if (trace_source_open(&r->src, err) < 0)
		goto fail;
	if (trace_source_need(&r->src, 1, err) < 0)
		goto fail;
	if (r->src.p == r->src.end) {
		trace_error_clear(err);
		trace_source_locate(&r->src, err, 0);
		if (r->src.cut)
			trace_error_set(err, "truncated %s stream: it ends before the trace's "
					"header (the capture was cut off)",
					trace_format_name(r->src.container));
		else
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
	r->end_due = trace_header_get(&r->header, TRACE_END) != NULL;
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

/* The warning of a trace cut off, read to its end. */
static void describe_cut(trace_reader *r)
{
	trace_error *w = &r->cut;
	/* all of the input was read: where it ends (a memory block is the
	 * window itself, not read through) */
	uint64_t end = r->src.mem ? r->src.memsize : r->src.inpos;
	snprintf(w->file, sizeof(w->file), "%s", r->name);
	w->file_offset = (int64_t)end;
	w->call = r->last_no;
	char after[48] = "before its first call";
	if (r->last_no >= 0)
		snprintf(after, sizeof(after), "after call %lld", (long long)r->last_no);
	trace_error_set(w, "trace ends mid-record at byte %llu %s: the capture was cut off",
			(unsigned long long)end, after);
}

static int next_record(trace_reader *r, trace_call **call, trace_error *err)
{
	return r->text ? trace_textreader_next(r->text, call, err)
		       : trace_binreader_next(r->bin, call, err);
}

/* A record that does not read after a jump may be the index's doing (a
 * point that is not a record's start): the message says where it went. */
static void after_jump(trace_reader *r, trace_error *err)
{
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, " (read from stream byte %lld, where the "
		 "seek index sent it; TRACE_SEEK=0 reads from the start)", (long long)r->jumped);
}

int trace_reader_next(trace_reader *r, trace_call **call, trace_error *err)
{
	int k = next_record(r, call, err);
	/* (the first letter first: this runs for every record) */
	if (k > 0 && r->end_due && (*call)->sig->name[0] == TRACE_END[0] &&
	    !strcmp((*call)->sig->name, TRACE_END)) {
		r->end_seen = true;
		k = next_record(r, call, err);
	}
	if (k > 0 && !((*call)->flags & TRACE_CALL_INCOMPLETE))
		r->last_no = (int64_t)(*call)->no;
	else if (k == 0 && (r->src.cut || (r->end_due && !r->end_seen)) && !r->cut.msg[0])
		describe_cut(r);
	else if (k < 0 && r->jumped >= 0)
		after_jump(r, err);
	return k;
}

/* How many points lie before the first one a record selected may
 * precede: calls numbered from FIRST_CALL, frames from FIRST_FRAME. */
static size_t points_before(const trace_seekindex *ix, uint64_t first_call,
			    uint64_t first_frame)
{
	size_t lo = 0, hi = ix->nsyncs;
	while (lo < hi) {
		size_t i = (lo + hi) / 2;
		if (ix->syncs[i].call <= first_call || ix->syncs[i].frame < first_frame)
			lo = i + 1;
		else
			hi = i;
	}
	return lo;
}

/* The zstd frame that holds stream byte POS. */
static size_t frame_of(const trace_seekindex *ix, uint64_t pos)
{
	size_t lo = 0, hi = ix->nframes;
	while (lo + 1 < hi) {
		size_t i = (lo + hi) / 2;
		if (ix->out[i] <= pos)
			lo = i;
		else
			hi = i;
	}
	return lo;
}

int trace_reader_skip(trace_reader *r, uint64_t first_call, uint64_t first_frame,
		      trace_skip_point *at, trace_error *err)
{
	if (!r->bin || r->src.container != TRACE_FMT_ZSTD || !r->src.file || r->src.mem)
		return 0;
	if (!r->index) {
		/* looked for once: TRACE_SEEK=0 reads from the start */
		const char *env = getenv("TRACE_SEEK");
		int k = env && !strcmp(env, "0") ? 0 :
			trace_seekindex_load(fileno(r->src.file), r->name, &r->ix, err);
		if (k < 0)
			return -1;
		r->index = k ? 1 : -1;
	}
	if (r->index < 0 || !trace_binreader_settled(r->bin))
		return 0;
	/* both tests hold on a first run of the points, as calls and frames
	 * only grow: their union is the run of the longer */
	size_t n = points_before(&r->ix, first_call, first_frame);
	if (!n)
		return 0;
	const trace_sync *y = &r->ix.syncs[n - 1];
	size_t f = frame_of(&r->ix, y->pos);
	/* past one zstd frame not begun at least, or reading on is as quick */
	if (r->ix.out[f] <= trace_source_offset(&r->src))
		return 0;
	if (trace_source_jump(&r->src, r->ix.in[f], r->ix.out[f], y->pos - r->ix.out[f],
			      err) < 0)
		return -1;
	if (trace_binreader_jump(r->bin, y->call, r->ix.defs, (size_t)y->defs, err) < 0) {
		char what[sizeof(err->msg)];
		memcpy(what, err->msg, sizeof(what));
		trace_error_set(err, "seek index at file byte %llu, byte %llu of its log of "
				"definitions: %.400s", (unsigned long long)r->ix.defs_at,
				(unsigned long long)err->offset, what);
		err->offset = err->file_offset = err->call = -1;
		return -1;
	}
	r->last_no = (int64_t)y->call - 1;
	r->jumped = (int64_t)y->pos;
	at->call = y->call;
	at->frame = y->frame;
	return 1;
}

const trace_error *trace_reader_cut(trace_reader *r)
{
	return r->cut.msg[0] ? &r->cut : NULL;
}

void trace_reader_close(trace_reader *r)
{
	if (!r)
		return;
	trace_binreader_free(r->bin);
	trace_seekindex_free(&r->ix);
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
