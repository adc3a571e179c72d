/*
 * trace-trim: cut a Vulkan capture (or a VMA stream) down to a range of
 * frames or calls that replays on its own: a setup prefix that recreates
 * what the range uses (lib/trim), then the range as it was.  See
 * trace-trim(1).
 *
 * One pass keeps the live state up to the range and notes what the range
 * names; the output is written after it: the header (with the range's
 * original numbers), the setup, a frame marker, and the range, read again
 * from the file, or kept in memory when the input is a pipe.
 */
#include "callset.h"
#include "cli.h"
#include "frames.h"
#include "vktrim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: trace-trim (--frames A[-B] | --calls A[-B]) [-f FORMAT] [-o FILE] "
	"[--verbose] [--quiet] [TRACE]";

enum { OPT_FRAMES = 256, OPT_CALLS, OPT_VERBOSE };

#define PROP_FRAMES "tracekit.trim.frames"
#define PROP_CALLS "tracekit.trim.calls"

/* A range A-B of numbers; B is UINT64_MAX for "to the end". */
typedef struct range {
	uint64_t a, b;
} range;

static range parse_range(const char *opt, const char *s)
{
	const char *arg = s;
	char *end;
	range r;
	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	r.a = strtoull(s, &end, 10);
	if (errno)
		goto bad;
	r.b = r.a;
	if (*end == '-') {
		s = end + 1;
		if (!*s) {
			r.b = UINT64_MAX;
		} else {
			if (*s < '0' || *s > '9')
				goto bad;
			r.b = strtoull(s, &end, 10);
			if (errno || *end)
				goto bad;
		}
	} else if (*end) {
		goto bad;
	}
	if (r.b < r.a)
		trace_cli_usage_error("%s %s: the range ends before it begins", opt, arg);
	return r;
bad:
	trace_cli_usage_error("%s takes A, A-B or A- (numbers), not '%s'", opt, arg);
}

/* The range's records when the input cannot be read twice. */
typedef struct held {
	trace_call **v;
	size_t n, cap;
} held;

static void hold(held *h, const trace_call *c)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->v = realloc(h->v, h->cap * sizeof(*h->v));
		if (!h->v)
			abort();
	}
	trace_call *x = malloc(sizeof(*x));
	if (!x)
		abort();
	trace_call_init(x);
	trace_call_copy(x, c);
	h->v[h->n++] = x;
}

static void held_free(held *h)
{
	for (size_t i = 0; i < h->n; i++) {
		trace_call_free(h->v[i]);
		free(h->v[i]);
	}
	free(h->v);
}

typedef struct job {
	const char *in;
	bool by_frames;
	range want;
	trace_format format;
	const char *out;
	bool verbose;
	/* found by the first pass */
	bool started;
	uint64_t first_index;     /* records before the range */
	uint64_t count;           /* records in it */
	uint64_t first_no, last_no;
	uint64_t first_frame, last_frame;
	uint32_t first_thread;
	bool skip_marker;         /* the range opens with the input's own marker */
	uint64_t setup_end;       /* the input's tracekit.setup.end, or 0 */
} job;

static noreturn void fail_in(const job *j, trace_error *err)
{
	if (!err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", j->in);
	trace_cli_fail(err);
}

/* A trace cut off inside frame CUT_FRAME has the frames before it whole:
 * a range that starts at the cut one or later is not there. */
static void need_whole_frames(const job *j, uint64_t cut_frame, trace_error *err)
{
	if (!j->by_frames || j->want.a < cut_frame)
		return;
	if (cut_frame)
		trace_error_set(err, "no frame %" PRIu64 " in the trace: the capture was cut off "
				"inside frame %" PRIu64 ", and frame %" PRIu64 " is its last "
				"complete one", j->want.a, cut_frame, cut_frame - 1);
	else
		trace_error_set(err, "no frame %" PRIu64 " in the trace: the capture was cut off "
				"inside frame 0, before any frame was complete", j->want.a);
	fail_in(j, err);
}

static bool is_marker(const trace_call *c)
{
	return !strcmp(c->sig->name, TRACE_FRAME_MARKER);
}

/* The header of the output: the input's, its old trim properties replaced
 * by this range's original numbers. */
static trace_header out_header(const trace_header *h, const job *j, char bufs[2][64])
{
	trace_header o = *h;
	o.props = calloc(h->nprops + 4, sizeof(*o.props));
	if (!o.props)
		abort();
	o.nprops = 0;
	uint64_t first = j->first_no, last = j->last_no;
	const char *calls = trace_header_get(h, PROP_CALLS);
	uint64_t c0, c1;
	/* a trim of a trim: numbers of the original, when the new range
	 * lies within the old one (which begins after its setup's end and
	 * the frame marker) */
	if (calls && j->setup_end && sscanf(calls, "%" SCNu64 "-%" SCNu64, &c0, &c1) == 2 &&
	    first >= j->setup_end + 2) {
		first = c0 + (first - (j->setup_end + 2));
		last = c0 + (last - (j->setup_end + 2));
	}
	for (uint32_t i = 0; i < h->nprops; i++)
		if (strncmp(h->props[i].name, "tracekit.trim.", 14))
			o.props[o.nprops++] = h->props[i];
	snprintf(bufs[0], 64, "%" PRIu64 "-%" PRIu64, j->first_frame, j->last_frame);
	snprintf(bufs[1], 64, "%" PRIu64 "-%" PRIu64, first, last);
	o.props[o.nprops++] = (trace_property){PROP_FRAMES, bufs[0]};
	o.props[o.nprops++] = (trace_property){PROP_CALLS, bufs[1]};
	return o;
}

static int put_marker(trace_writer *w, trace_sigtab *sigs, const job *j, uint64_t *no,
		      trace_error *err)
{
	static const char *const names[] = {"index"};
	trace_call c;
	trace_call_init(&c);
	c.sig = trace_sigtab_func(sigs, TRACE_FRAME_MARKER, 1, names);
	c.args = trace_call_values(&c, 1);
	c.args[0] = (trace_value){.kind = TRACE_UINT, .u = j->first_frame};
	c.thread = j->first_thread;
	c.no = (*no)++;
	int rc = trace_writer_call(w, &c, err);
	trace_call_free(&c);
	return rc;
}

static const char intro[] =
	"Writes the part of TRACE (default: standard input) that draws frames A to B\n"
	"(or makes calls A to B), with a setup prefix that recreates every object\n"
	"they use and its contents, so that the result replays on its own and frame\n"
	"N keeps its number.  For Vulkan captures and VMA streams.\n\n";

static const trace_cli_option opts[] = {
	{"frames", OPT_FRAMES, required_argument,
	 "  --frames A[-B]       frames A to B (A-: to the end)\n"},
	{"calls", OPT_CALLS, required_argument,
	 "  --calls A[-B]        calls A to B (A-: to the end)\n"},
	{"format", 'f', required_argument,
	 "  -f, --format F       write snappy, zstd, brotli, none or text (default: as read)\n"},
	{"verbose", OPT_VERBOSE, no_argument,
	 "      --verbose        say what the setup holds, and why it runs each of the\n"
	 "                       capture's submits again, on standard error\n"},
	{NULL},
};

typedef struct preamble {
	job *j;
	bool have_range;
} preamble;

static void option(int c, const char *arg, void *ctx)
{
	preamble *p = ctx;
	switch (c) {
	case OPT_FRAMES:
	case OPT_CALLS:
		if (p->have_range)
			trace_cli_usage_error("one range: --frames or --calls, once");
		p->have_range = true;
		p->j->by_frames = c == OPT_FRAMES;
		p->j->want = parse_range(p->j->by_frames ? "--frames" : "--calls", arg);
		break;
	case 'f': p->j->format = trace_cli_format_arg(arg); break;
	case OPT_VERBOSE: p->j->verbose = true; break;
	}
}

int main(int argc, char **argv)
{
	job j = {.format = TRACE_FMT_AUTO};
	preamble p = {&j, false};

	trace_cli_init("trace-trim", usage);
	j.in = trace_cli_parse(argc, argv, opts, option, &p, intro, &j.out);
	if (!p.have_range)
		trace_cli_usage_error("which part? --frames A[-B] or --calls A-B");

	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open(j.in, &err);
	if (!r)
		trace_cli_fail(&err);
	const trace_header *h = trace_reader_header(r);
	const char *api = trace_header_get(h, "api");
	trim_api kind;
	if (api && !strcmp(api, "Vulkan")) {
		kind = TRIM_VULKAN;
	} else if (trace_header_get(h, "vma.version")) {
		kind = TRIM_VMA;
	} else {
		trace_error_set(&err, "not a Vulkan capture or a VMA stream (its header has "
				"api: %s): trace-trim cuts those; trace-filter cuts any trace "
				"without a setup", api ? api : "none");
		fail_in(&j, &err);
	}
	if (j.format == TRACE_FMT_AUTO)
		j.format = trace_reader_format(r);
	if (j.format == TRACE_FMT_GZIP)
		j.format = TRACE_FMT_SNAPPY;
	/* a regular file can be read again; anything else is held */
	struct stat sb;
	bool reread = strcmp(j.in, "-") && stat(j.in, &sb) == 0 && S_ISREG(sb.st_mode);

	trim *t = trim_new(kind, trace_reader_sigtab(r));
	held keep = {0};
	trace_frames frames;
	trace_frames_init(&frames);
	trace_call *call;
	uint64_t index = 0, last_frame_seen = 0, last_no_seen = 0, last_whole = 0;
	int k;
	while ((k = trace_reader_next(r, &call, &err)) > 0) {
		/* left out of the range and of the count: both readings */
		if (trace_call_out_of_place(call, &last_whole))
			continue;
		int64_t frame = trace_frames_next(&frames, call, &err);
		if (frame < 0)
			fail_in(&j, &err);
		last_frame_seen = (uint64_t)frame;
		last_no_seen = call->no;
		trace_cli_progress(r, index + 1);
		uint64_t key = j.by_frames ? (uint64_t)frame : call->no;
		if (key > j.want.b)
			break;
		const char *n = call->sig->name;
		/* a capture numbers calls as they begin and reads them as
		 * they end: on several threads a lower number may follow the
		 * range's first record.  It is the range's, which runs on in
		 * the file's order (and is read again by count). */
		if (key < j.want.a && !j.started) {
			if (!strcmp(n, TRIM_SETUP_END))
				j.setup_end = call->no;
			if (trim_before(t, call, &err) < 0)
				fail_in(&j, &err);
			index++;
			continue;
		}
		if (!j.started) {
			j.started = true;
			j.first_index = index;
			j.first_no = call->no;
			j.first_frame = (uint64_t)frame;
			j.first_thread = call->thread;
			j.skip_marker = is_marker(call);
		}
		if (!strcmp(n, TRIM_SETUP_BEGIN) || !strcmp(n, TRIM_SETUP_END)) {
			trace_error_set(&err, "%s inside the range: cut a range after the setup", n);
			err.call = (int64_t)call->no;
			err.offset = call->offset;
			fail_in(&j, &err);
		}
		if (trim_range(t, call, &err) < 0)
			fail_in(&j, &err);
		j.last_no = call->no;
		j.last_frame = (uint64_t)frame;
		j.count++;
		index++;
		if (!reread)
			hold(&keep, call);
	}
	trace_cli_progress_done();
	if (k < 0)
		fail_in(&j, &err);
	bool cut = k == 0 && trace_reader_cut(r);
	if (cut)
		need_whole_frames(&j, frames.ended ? last_frame_seen + 1 : last_frame_seen, &err);
	if (!j.started) {
		trace_error_set(&err, "no %s %" PRIu64 " in the trace: it ends at %s %" PRIu64,
				j.by_frames ? "frame" : "call", j.want.a,
				j.by_frames ? "frame" : "call",
				j.by_frames ? last_frame_seen : last_no_seen);
		fail_in(&j, &err);
	}

	if (cut)
		trace_cli_warn_cut(r);

	/* the output: header, setup, marker, range */
	char bufs[2][64];
	trace_header oh = out_header(h, &j, bufs);
	trace_writer_options wo = {.format = j.format, .quality = -1};
	trace_writer *w = trace_writer_open(j.out, &wo, &err);
	if (!w)
		trace_cli_fail(&err);
	uint64_t no = 0;
	trim_stats st;
	trace_sigtab *sigs = trace_reader_sigtab(r);
	if (j.verbose)
		trim_explain(t, stderr);
	if (trace_writer_header(w, &oh, &err) < 0 || trim_write_setup(t, w, &no, &st, &err) < 0)
		goto fail;
	if (put_marker(w, sigs, &j, &no, &err) < 0)
		goto fail;
	if (reread) {
		trace_reader *r2 = trace_reader_open(j.in, &err);
		if (!r2)
			goto fail;
		/* what comes before the range is passed over with the seek
		 * index, where the file has one */
		trace_skip_point at;
		int jumped = trace_reader_skip(r2, j.first_index, 0, &at, &err);
		if (jumped < 0) {
			trace_reader_close(r2);
			goto fail;
		}
		uint64_t i = jumped ? at.call : 0, n = 0, whole = 0;
		while (n < j.count && (k = trace_reader_next(r2, &call, &err)) > 0) {
			if (trace_call_out_of_place(call, &whole))
				continue;
			if (i++ < j.first_index)
				continue;
			n++;
			if (n == 1 && j.skip_marker)
				continue;
			call->no = no++;
			if (trace_writer_call(w, call, &err) < 0) {
				trace_reader_close(r2);
				goto fail;
			}
		}
		trace_reader_close(r2);
		if (k < 0)
			goto fail;
	} else {
		for (size_t i = 0; i < keep.n; i++) {
			if (i == 0 && j.skip_marker)
				continue;
			keep.v[i]->no = no++;
			if (trace_writer_call(w, keep.v[i], &err) < 0)
				goto fail;
		}
	}
	if (trace_writer_close(w, &err) < 0)
		trace_cli_fail(&err);
	if (st.lost.n)
		fprintf(stderr,
			"%s: %s: warning: the setup runs the submit of call %" PRIu64 " again, which "
			"reads %s 0x%" PRIx64 ": the GPU wrote it and the program destroyed it before "
			"the range, and those writes are not followed, so the cut may draw differently "
			"(%" PRIu64 " such read%s)\n",
			trace_cli_self.prog, j.in, st.lost.by, st.lost.type, st.lost.handle, st.lost.n,
			st.lost.n == 1 ? "" : "s");
	if (j.verbose)
		fprintf(stderr,
			"trace-trim: %s %" PRIu64 "-%" PRIu64 ": setup of %" PRIu64 " records "
			"(%" PRIu64 " objects of %" PRIu64 " alive, %" PRIu64 " submits, %" PRIu64
			" transfers of them left out, %" PRIu64 " updates of %" PRIu64
			" bytes), then %" PRIu64 " records of the range\n",
			j.by_frames ? "frames" : "calls", j.by_frames ? j.first_frame : j.first_no,
			j.by_frames ? j.last_frame : j.last_no, st.records, st.objects,
			st.live_objects, st.submits, st.pruned, st.updates, st.update_bytes,
			j.count - (j.skip_marker ? 1 : 0));
	free(oh.props);
	held_free(&keep);
	trim_free(t);
	trace_reader_close(r);
	return 0;
fail:
	trace_writer_abort(w);
	if (!err.file[0])
		snprintf(err.file, sizeof(err.file), "%s", j.in);
	trace_cli_fail(&err);
}
