/*
 * Selecting calls: see select.h.
 */
#include "select.h"
#include "frames.h"
#include "internal.h"
#include "tally.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>

void trace_select_init(trace_select *s)
{
	memset(s, 0, sizeof(*s));
	trace_callset_init(&s->calls);
	trace_callset_init(&s->frames);
}

void trace_select_free(trace_select *s)
{
	tmap_free(&s->verdicts);
	trace_callset_free(&s->calls);
	trace_callset_free(&s->frames);
	free(s->rules);
	free(s->threads);
	free(s->handles);
}

void trace_select_add_rule(trace_select *s, const char *pattern, bool keep)
{
	s->rules = trace_xrealloc(s->rules, (s->nrules + 1) * sizeof(*s->rules));
	s->rules[s->nrules++] = (trace_select_rule){pattern, keep};
}

void trace_select_add_thread(trace_select *s, uint32_t thread)
{
	s->threads = trace_xrealloc(s->threads, (s->nthreads + 1) * sizeof(*s->threads));
	s->threads[s->nthreads++] = thread;
}

void trace_select_add_handle(trace_select *s, uint64_t handle)
{
	s->handles = trace_xrealloc(s->handles, (s->nhandles + 1) * sizeof(*s->handles));
	s->handles[s->nhandles++] = handle;
}

/* The rules' verdict on SIG's name, made once a signature. */
static bool name_kept(trace_select *s, const trace_func_sig *sig)
{
	if (!s->nrules)
		return true;
	uint64_t v;
	if (!tmap_get(&s->verdicts, sig, &v)) {
		bool keep = !s->rules[0].keep;
		for (size_t i = s->nrules; i-- > 0;) {
			if (!fnmatch(s->rules[i].pattern, sig->name, 0)) {
				keep = s->rules[i].keep;
				break;
			}
		}
		v = keep ? 2 : 1;
		tmap_put(&s->verdicts, sig, v);
	}
	return v == 2;
}

static bool value_names(const trace_select *s, const trace_value *v)
{
	switch (v->kind) {
	case TRACE_POINTER:
		for (size_t i = 0; i < s->nhandles; i++)
			if (v->u == s->handles[i])
				return true;
		return false;
	case TRACE_ARRAY:
	case TRACE_REPR:
		for (uint32_t i = 0; i < (v->kind == TRACE_REPR ? 2 : v->len); i++)
			if (value_names(s, &v->items[i]))
				return true;
		return false;
	case TRACE_STRUCT:
		for (uint32_t i = 0; i < v->st.sig->nmembers; i++)
			if (value_names(s, &v->st.members[i]))
				return true;
		return false;
	default:
		return false;
	}
}

static bool call_names(const trace_select *s, const trace_call *c)
{
	for (uint32_t i = 0; i < c->sig->nargs; i++)
		if (value_names(s, &c->args[i]))
			return true;
	return c->ret && value_names(s, c->ret);
}

/* The cheap criteria are asked first. */
bool trace_select_call(trace_select *s, const trace_call *c, int64_t frame, bool ends_frame)
{
	if (s->nthreads) {
		size_t i = 0;
		while (i < s->nthreads && s->threads[i] != c->thread)
			i++;
		if (i == s->nthreads)
			return false;
	}
	if (!trace_callset_empty(&s->calls) &&
	    !trace_callset_contains(&s->calls, c->no,
				    ends_frame ? TRACE_CALLSET_END_FRAME : TRACE_CALLSET_ANY))
		return false;
	if (!trace_callset_empty(&s->frames) &&
	    !trace_callset_contains(&s->frames, (uint64_t)frame, TRACE_CALLSET_ANY))
		return false;
	if (!name_kept(s, c->sig))
		return false;
	return !s->nhandles || call_names(s, c);
}

/* ------------------------------------------------------------------ */
/* The pass: its output, a trace or a count report, never left
 * half-written. */

typedef struct output {
	const char *path;
	trace_writer *w;
	FILE *report;
	char *tmp;      /* the report's temporary name, for a file */
} output;

static void output_abort(output *o)
{
	if (o->w)
		trace_writer_abort(o->w);
	trace_error ignored;
	if (o->report && o->report != stdout)
		trace_output_close(o->report, o->path, o->tmp, false, &ignored);
	o->w = NULL;
	o->report = NULL;
}

static int report_open(output *o, trace_error *err)
{
	if (!strcmp(o->path, "-")) {
		o->report = stdout;
		return 0;
	}
	o->report = trace_output_open(o->path, &o->tmp, err);
	return o->report ? 0 : -1;
}

static int report_close(output *o, trace_error *err)
{
	bool ok = fflush(o->report) == 0 && !ferror(o->report);
	if (!ok)
		trace_error_errno(err, o->path, "write error");
	if (o->report != stdout) {
		int r = trace_output_close(o->report, o->path, o->tmp, ok, err);
		o->report = NULL;
		o->tmp = NULL;
		ok = r == 0;
	}
	return ok ? 0 : -1;
}

static int output_open(output *o, trace_reader *r, const trace_select_options *opt,
		       trace_error *err)
{
	if (opt->count)
		return report_open(o, err);
	/* the encoding read, but gzip is read-only: Snappy in its place */
	trace_format format = opt->format;
	if (format == TRACE_FMT_AUTO)
		format = trace_reader_format(r);
	if (format == TRACE_FMT_GZIP)
		format = TRACE_FMT_SNAPPY;
	trace_writer_options wo = {.format = format, .quality = -1};
	o->w = trace_writer_open(o->path, &wo, err);
	if (!o->w)
		return -1;
	if (trace_writer_header(o->w, trace_reader_header(r), err) < 0) {
		output_abort(o);
		return -1;
	}
	return 0;
}

/* One frame's table, then the tally starts again for the next frame. */
static void frame_print(FILE *out, trace_tally *t, int64_t frame)
{
	if (!t->total)
		return;
	fprintf(out, "frame %lld\n", (long long)frame);
	trace_tally_print(out, t);
	fputc('\n', out);
	trace_tally_clear(t);
}

/* Records that cannot be selected are passed over with the seek index,
 * where the file has one: at the start, and again every this many such
 * records in a row. */
#define SKIP_EVERY 4096

/* Jumps past records S cannot select, the next unread being a call
 * numbered from CALL on, in frame FRAME or after. */
static int skip_ahead(trace_select *s, trace_reader *r, uint64_t call, uint64_t frame,
		      trace_frames *frames, output *o, const trace_select_options *opt,
		      trace_error *err)
{
	uint64_t first_call = trace_callset_empty(&s->calls) ? 0 :
			      trace_callset_next(&s->calls, call);
	uint64_t first_frame = trace_callset_empty(&s->frames) ? 0 :
			       trace_callset_next(&s->frames, frame);
	if (!first_call && !first_frame)
		return 0;
	trace_skip_point at;
	int k = trace_reader_skip(r, first_call, first_frame, &at, err);
	if (k <= 0)
		return k;
	frames->frame = at.frame;
	if (!opt->count)
		trace_writer_skip_to(o->w, at.call);
	return 0;
}

/* The records of R up to the last frame S can select: each one selected
 * written to O, or counted into ALL (and ONE, a frame's, with by_frame). */
static int select_all(trace_select *s, trace_reader *r, const char *in, output *o,
		      const trace_select_options *opt, trace_tally *all, trace_tally *one,
		      trace_error *err)
{
	trace_frames frames;
	trace_frames_init(&frames);
	uint64_t last_frame = trace_callset_empty(&s->frames) ? UINT64_MAX :
							       trace_callset_last(&s->frames);
	int64_t one_frame = -1;
	uint64_t n = 0, passed = 0;
	trace_call *call;
	int k;
	if (skip_ahead(s, r, 0, 0, &frames, o, opt, err) < 0)
		return -1;
	while ((k = trace_reader_next(r, &call, err)) > 0) {
		int64_t frame = trace_frames_next(&frames, call, err);
		if (frame < 0) {
			snprintf(err->file, sizeof(err->file), "%s", in);
			return -1;
		}
		if (opt->progress)
			opt->progress(r, ++n);
		/* frames only grow: past the last one asked for, nothing more
		 * can be selected, and the rest need not be read */
		if ((uint64_t)frame > last_frame)
			break;
		if (!trace_select_call(s, call, frame, frames.ended)) {
			/* the binary writer numbers the calls it keeps densely;
			 * it need not wait for this one */
			if (!opt->count)
				trace_writer_skip(o->w, call->no);
			if (++passed % SKIP_EVERY == 0 &&
			    skip_ahead(s, r, call->no + 1, (uint64_t)frame, &frames, o, opt, err) < 0)
				return -1;
			continue;
		}
		passed = 0;
		if (!opt->count) {
			if (trace_writer_call(o->w, call, err) < 0)
				return -1;
			continue;
		}
		trace_tally_add(all, call->sig);
		if (!opt->by_frame)
			continue;
		if (frame != one_frame)
			frame_print(o->report, one, one_frame);
		one_frame = frame;
		trace_tally_add(one, call->sig);
	}
	if (opt->progress_done)
		opt->progress_done();
	if (k < 0)
		return -1;
	if (k == 0 && opt->warn_cut)
		opt->warn_cut(r);
	if (opt->count && opt->by_frame) {
		frame_print(o->report, one, one_frame);
		fprintf(o->report, "all frames\n");
	}
	return 0;
}

int trace_select_run(trace_select *s, const char *in, const char *out,
		     const trace_select_options *opt, trace_error *err)
{
	trace_reader *r = trace_reader_open(in, err);
	if (!r)
		return -1;
	output o = {.path = out};
	trace_tally all = {0}, one = {0};
	int rc = output_open(&o, r, opt, err);
	if (rc == 0 && select_all(s, r, in, &o, opt, &all, &one, err) < 0) {
		output_abort(&o);
		rc = -1;
	}
	if (rc == 0 && opt->count) {
		trace_tally_print(o.report, &all);
		rc = report_close(&o, err);
	} else if (rc == 0) {
		rc = trace_writer_close(o.w, err);
	}
	trace_reader_close(r);
	trace_tally_free(&all);
	trace_tally_free(&one);
	return rc < 0 ? -1 : 0;
}
